/* The option tables of the verbs (cli/options.h): getopt_long's tables built
 * from them, the mistakes worded once, and the Options section of --help. */
#include "cli/options.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"

void ng_opt_begin_table(struct ng_opt_parser *p, const struct ng_cmd_entry *e,
                        const struct ng_opt *opts, int argc, char **argv)
{
	memset(p, 0, sizeof *p);
	p->e = e;
	p->opts = opts;
	p->argc = argc;
	p->argv = argv;
	p->next = -1; /* the tables are built on the first ng_opt_next */
}

void ng_opt_begin(struct ng_opt_parser *p, const struct ng_cmd_entry *e, int argc, char **argv)
{
	ng_opt_begin_table(p, e, e->opts, argc, argv);
}

const struct ng_opt *ng_opt_find(const struct ng_opt *opts, int key)
{
	for (const struct ng_opt *o = opts; o && (o->name || o->help); o++)
		if (o->name && o->key == key)
			return o;
	return NULL;
}

static bool is_letter(int key) { return key > ' ' && key < 127 && key != ':' && key != '?'; }

static void build(struct ng_opt_parser *p)
{
	size_t n = 0, s = 0;
	p->shorts[s++] = p->in_order ? '+' : ':';
	if (p->in_order)
		p->shorts[s++] = ':'; /* report a missing value as ':', never print */
	for (const struct ng_opt *o = p->opts; o && (o->name || o->help) && n < NG_OPT_MAX; o++) {
		if (!o->name)
			continue;
		p->longs[n++] = (struct option){o->name, o->arg ? required_argument : no_argument,
		                                NULL, o->key};
		if (is_letter(o->key) && s + 3 < sizeof p->shorts) {
			p->shorts[s++] = (char)o->key;
			if (o->arg)
				p->shorts[s++] = ':';
		}
	}
	p->longs[n] = (struct option){0};
	p->shorts[s] = '\0';
	/* Each verb parses from a fresh start, and getopt prints nothing: the
	 * one message is ours. */
	optind = 0;
	opterr = 0;
	p->next = 0;
}

static int mistake(struct ng_opt_parser *p, const char *fmt, const char *what)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, what);
	snprintf(p->why, sizeof p->why, "%s", msg);
	if (p->keep_errors)
		return NG_OPT_ERROR;
	p->status = ng_cmd_usage_error(p->e, "%s", msg);
	return NG_OPT_EXIT;
}

int ng_opt_next(struct ng_opt_parser *p)
{
	if (p->next < 0)
		build(p);
	p->arg = NULL;
	int c = getopt_long(p->argc, p->argv, p->shorts, p->longs, NULL);
	p->next = optind;
	const char *typed = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "";
	char name[96];
	if (c == -1)
		return NG_OPT_END;
	if (c == 'h' && ng_opt_find(p->opts, 'h')) {
		ng_cmd_print_help(p->e, stdout);
		p->status = NG_EXIT_OK;
		return NG_OPT_EXIT;
	}
	if (c == ':') {
		const struct ng_opt *o = ng_opt_find(p->opts, optopt);
		if (o && strncmp(typed, "--", 2) == 0)
			snprintf(name, sizeof name, "--%s", o->name);
		else
			snprintf(name, sizeof name, "-%c", optopt);
		return mistake(p, "%s needs a value", name);
	}
	if (c == '?') {
		const struct ng_opt *o = optopt ? ng_opt_find(p->opts, optopt) : NULL;
		if (o && strncmp(typed, "--", 2) == 0) {
			snprintf(name, sizeof name, "--%s", o->name);
			return mistake(p, "%s takes no value", name);
		}
		if (optopt)
			snprintf(name, sizeof name, "-%c", optopt);
		else
			snprintf(name, sizeof name, "%.*s", (int)strcspn(typed, "="), typed);
		char fmt[128];
		snprintf(fmt, sizeof fmt, "unknown option %%s (see nodegate %s --help)", p->e->name);
		return mistake(p, fmt, name);
	}
	if (p->only && is_letter(c) && !strchr(p->only, c)) {
		char msg[160];
		snprintf(msg, sizeof msg, "%s %s takes no --%s", p->e->name, p->argv[0],
		         ng_opt_find(p->opts, c)->name);
		return mistake(p, "%s", msg);
	}
	p->arg = optarg;
	return c;
}

/* "  -r, --reason TEXT" or "      --land slurm|none". */
static int label(const struct ng_opt *o, bool any_short, char *out, size_t cap)
{
	char letter[8] = "";
	if (is_letter(o->key))
		snprintf(letter, sizeof letter, "-%c, ", o->key);
	else if (any_short)
		snprintf(letter, sizeof letter, "    ");
	return snprintf(out, cap, "  %s--%s%s%s", letter, o->name, o->arg ? " " : "",
	                o->arg ? o->arg : "");
}

/* The widest label that sets the column; a longer one has its text after it. */
#define NG_OPT_LABEL_MAX 26

void ng_opt_print_help(const struct ng_opt *opts, FILE *out)
{
	bool any_short = false;
	int col = 0;
	char buf[160];
	for (const struct ng_opt *o = opts; o && (o->name || o->help); o++)
		any_short = any_short || (o->name && is_letter(o->key));
	for (const struct ng_opt *o = opts; o && (o->name || o->help); o++) {
		if (!o->name)
			continue;
		int w = label(o, any_short, buf, sizeof buf);
		if (w <= NG_OPT_LABEL_MAX && w > col)
			col = w;
	}
	col += 2;
	for (const struct ng_opt *o = opts; o && (o->name || o->help); o++) {
		if (!o->name) {
			fprintf(out, "%s\n", o->help);
			continue;
		}
		int w = label(o, any_short, buf, sizeof buf);
		fputs(buf, out);
		const char *h = o->help ? o->help : "";
		/* A label too long for the column has its text under it. */
		bool below = w + 2 > col;
		if (below)
			fputc('\n', out);
		for (bool first = true; first || *h; first = false) {
			size_t len = strcspn(h, "\n");
			fprintf(out, "%*s%.*s\n", first && !below ? col - w : col, "", (int)len, h);
			h += len;
			if (*h == '\n')
				h++;
		}
	}
}
