/* A broken configuration never drains a node (cli/config_error.h): the
 * line on standard error, and npd's answer on standard output. */
#include "cli/config_error.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/strbuf.h"

int ng_config_error(const ng_config_guard *g, const char *kind, const char *fmt, ...)
{
	char raw[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	ng_strbuf msg = {0};
	ng_strbuf_add_printable(&msg, raw);
	const char *m = msg.s ? msg.s : raw;

	char said[640];
	ng_config_error_keep(g, kind, m, said, sizeof said);
	ng_strbuf line = {0};
	ng_strbuf_printf(&line, "nodegate %s: CONFIGURATION ERROR, nothing checked and the node not "
	                        "drained: %s (%s error; ",
	                 g->verb, m, kind);
	ng_strbuf_add_printable(&line, said);
	ng_strbuf_adds(&line, ")");
	fprintf(stderr, "%s\n", line.s ? line.s : m);
	fflush(stderr);
	if (g->npd) {
		/* The plugin's one line, under 80 characters: the reason is on
		 * standard error and in the store. */
		printf("GPU health unknown: nodegate configuration error (%s)\n", kind);
		fflush(stdout);
	}
	ng_strbuf_free(&line);
	ng_strbuf_free(&msg);
	return g->npd ? 2 : NG_EXIT_OK;
}
