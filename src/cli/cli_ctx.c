/* The flow layer's context for a verb: the command line's policy, store,
 * landing options and actor, with the flow's notes on standard error. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "core/clock.h"

/* "nodegate VERB: note text", as the verbs have always said it. */
static void note_stderr(void *arg, const char *verb, const char *fmt, va_list ap)
{
	(void)arg;
	fprintf(stderr, "nodegate %s: ", verb);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ng_cli_ctx(const struct ng_cli *cli, ng_store *st, ng_ctx *out)
{
	*out = (ng_ctx){.policy = cli->policy, .store = st, .actor = ng_actor(),
	                .on_verdict = cli->on_verdict, .no_land = cli->no_land, .note = note_stderr};
}
