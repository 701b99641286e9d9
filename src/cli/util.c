#include "cli/cmd.h"
#include "core/json.h"
#include "core/strbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int ng_cmd_usage_error(const struct ng_cmd_entry *e, const char *fmt, ...)
{
	va_list ap;
	char msg[1024], prefix[64];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(prefix, sizeof prefix, "nodegate %s: ", e->name);
	ng_cli_print_line(stderr, prefix, msg);
	fprintf(stderr, "usage: nodegate %s %s\n(nodegate %s --help for more)\n", e->name, e->usage,
	        e->name);
	return NG_EXIT_USAGE;
}

int ng_cmd_dispatch(const struct ng_cmd_entry *e, const struct ng_subcmd *subs, size_t n,
                    struct ng_cli *cli, int argc, char **argv)
{
	char names[256] = "";
	size_t len = 0;
	for (size_t i = 0; i < n && len < sizeof names; i++)
		len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
		                        i == 0 ? "" : i + 1 == n ? " or " : ", ", subs[i].name);
	if (argc < 2)
		return ng_cmd_usage_error(e, "name what to do: %s", names);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		ng_cmd_print_help(e, stdout);
		return NG_EXIT_OK;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].fn(cli, argc - 1, argv + 1);
	return ng_cmd_usage_error(e, "unknown subcommand \"%s\" (%s)", argv[1], names);
}

void ng_cmd_print_help(const struct ng_cmd_entry *e, FILE *out)
{
	fprintf(out, "usage: nodegate %s %s\n\n%s\n\n%s", e->name, e->usage, e->summary,
	        e->help ? e->help : "");
	if (!e->opts)
		return;
	fprintf(out, "%sOptions:\n", e->help && *e->help ? "\n" : "");
	/* --policy is main's, after the verb as before it (src/cli/main.c),
	 * listed with the verb's own so the columns line up; `policy` has its
	 * own --policy (the proposed one). */
	size_t n = 0;
	while (e->opts[n].name || e->opts[n].help)
		n++;
	struct ng_opt *all = strcmp(e->name, "policy") != 0 ? calloc(n + 2, sizeof *all) : NULL;
	if (all) {
		size_t k = 0, at = n;
		for (size_t j = 0; j < n; j++) /* before --json and --help, which end every table */
			if (at == n && e->opts[j].name &&
			    (strcmp(e->opts[j].name, "json") == 0 || strcmp(e->opts[j].name, "help") == 0))
				at = j;
		for (size_t j = 0; j <= n; j++) {
			if (j == at)
				all[k++] = (struct ng_opt){"policy", NG_OPT_LONG + 1000, "FILE",
				                           "the policy file (as before the verb; else\n"
				                           "$NODEGATE_POLICY, else /etc/nodegate/policy.json)"};
			if (j < n)
				all[k++] = e->opts[j];
		}
	}
	ng_opt_print_help(all ? all : e->opts, out);
	free(all);
	if (e->help_tail)
		fprintf(out, "\n%s", e->help_tail);
}

int ng_cmd_json_option(const struct ng_cmd_entry *e, int argc, char **argv, bool *json)
{
	*json = false;
	struct ng_opt_parser op;
	ng_opt_begin(&op, e, argc, argv);
	op.in_order = true;
	int c;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT)
			return op.status;
		if (c == 'j')
			*json = true;
	}
	if (op.next < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[op.next]);
	return -1;
}

const char *ng_cli_shell_word(const char *s, char out[NG_SHELL_WORD_MAX])
{
	return ng_shell_word(s, out);
}

void ng_cli_print_line(FILE *out, const char *prefix, const char *s)
{
	ng_strbuf p = {0};
	ng_strbuf_adds(&p, prefix ? prefix : "");
	ng_strbuf_add_printable(&p, s);
	fprintf(out, "%s\n", p.s ? p.s : "");
	ng_strbuf_free(&p);
}
