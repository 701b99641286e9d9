/* One option table per verb: it drives getopt_long and writes the Options
 * section of the verb's --help, so the two cannot drift apart.
 *
 * A verb declares its table and hangs it on its command entry:
 *
 *   static const struct ng_opt opts[] = {
 *       {"reason", 'r', "TEXT", "why, up to 255 characters"},
 *       {"land", O_LAND, "slurm|none", "slurm: drain through scontrol;\ndefault none"},
 *       NG_OPT_STORE,
 *       NG_OPT_JSON("the override as JSON"),
 *       NG_OPT_HELP,
 *       {0},
 *   };
 *   const struct ng_cmd_entry ng_cmd_x_entry = {..., .help = "what it does\n",
 *       .opts = opts, .help_tail = "Exit status: ...\n"};
 *
 * and parses with it:
 *
 *   struct ng_opt_parser p;
 *   ng_opt_begin(&p, &ng_cmd_x_entry, argc, argv);
 *   int c;
 *   while ((c = ng_opt_next(&p)) != NG_OPT_END) {
 *       switch (c) {
 *       case NG_OPT_EXIT: return p.status; // --help printed, or a usage error
 *       case 'r': reason = p.arg; break;
 *       ...
 *       }
 *   }
 *   operands: argv[p.next] .. argv[argc - 1]
 *
 * --help, an unknown option and a missing value are handled here, the same on
 * every verb: "nodegate VERB: unknown option --bogus (see nodegate VERB
 * --help)" and "--store needs a value", then the usage. */
#ifndef NODEGATE_CLI_OPTIONS_H
#define NODEGATE_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

struct ng_cmd_entry;

struct ng_opt {
	/* The long name without "--"; NULL makes help a line of its own in the
	 * Options section (a heading, a note), printed as it is. */
	const char *name;
	/* What ng_opt_next returns for it: a letter is also its short option
	 * (-r); NG_OPT_LONG and above is a long option alone. */
	int key;
	const char *arg;  /* the value's name in --help ("FILE"); NULL: takes none */
	const char *help; /* what it does; a "\n" continues under the text */
};

/* Keys of long options without a letter start here. */
#define NG_OPT_LONG 256

/* The options that mean the same on every verb that takes them. */
#define NG_OPT_STORE                                                                       \
	{"store", 's', "S",                                                                    \
	 "the store: a SQLite file or postgresql://... (else the global\n"                     \
	 "--store, $NODEGATE_STORE, the default)"}
#define NG_OPT_JSON(what) {"json", 'j', NULL, what}
#define NG_OPT_HELP {"help", 'h', NULL, "this text"}

/* What ng_opt_next returns besides an option's key. */
enum { NG_OPT_END = -1, NG_OPT_EXIT = -2, NG_OPT_ERROR = -3 };

#define NG_OPT_MAX 40

struct ng_opt_parser {
	const struct ng_cmd_entry *e;
	const struct ng_opt *opts;
	int argc;
	char **argv;
	/* Stop at the first operand (what follows belongs to a tool or a
	 * subcommand); else options and operands may mix. */
	bool in_order;
	/* A mistake is returned as NG_OPT_ERROR with why, printing nothing (the
	 * GPU checks report it as a configuration error: cli/config_error.h);
	 * else it is printed with the usage and NG_OPT_EXIT returned. */
	bool keep_errors;
	/* A subcommand that takes only some of its verb's options: their letters
	 * (--help always); another one is refused as "VERB SUB takes no --X",
	 * SUB being argv[0]. NULL takes them all. */
	const char *only;
	const char *arg; /* the value of the option just returned, or NULL */
	int next;        /* after NG_OPT_END: the index of the first operand */
	int status;      /* after NG_OPT_EXIT: what the verb returns */
	char why[320];   /* after NG_OPT_ERROR: the one-line message */
	struct option longs[NG_OPT_MAX + 1];
	char shorts[4 + 3 * NG_OPT_MAX];
};

/* Starts parsing argv (argv[0] is the verb or subcommand) with e->opts. */
void ng_opt_begin(struct ng_opt_parser *p, const struct ng_cmd_entry *e, int argc, char **argv);
/* The same with a table other than the entry's (a subcommand's own). */
void ng_opt_begin_table(struct ng_opt_parser *p, const struct ng_cmd_entry *e,
                        const struct ng_opt *opts, int argc, char **argv);
/* The next option's key, NG_OPT_END after the last, NG_OPT_EXIT (status set)
 * after --help or a printed mistake, NG_OPT_ERROR (why set) with keep_errors. */
int ng_opt_next(struct ng_opt_parser *p);
/* The option of a table with this key (its long name for a message), or NULL. */
const struct ng_opt *ng_opt_find(const struct ng_opt *opts, int key);
/* Writes the Options section of a table: one line per option, its help
 * aligned in one column. */
void ng_opt_print_help(const struct ng_opt *opts, FILE *out);

#endif
