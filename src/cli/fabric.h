/* `nodegate fabric` on the command line (docs/fabric.md): its options
 * (fabric_opts.c), the printing of what the flows return (fabric_print.c);
 * the tests themselves are flow/fabric.h's. */
#ifndef NODEGATE_CLI_FABRIC_H
#define NODEGATE_CLI_FABRIC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli/cmd.h"
#include "flow/fabric.h"

/* What the command line reads beside the flow's options. */
struct fabric_cli {
	ng_fabric_opts o;
	bool json;
	const char *peers;         /* --peers A,B, or NULL */
	const char *topology_path; /* --topology FILE, or NULL */
	ng_topology topology;      /* read from it; o.topology points here */
};

/* The options of `nodegate fabric` (fabric_opts.c): one table for its --help
 * and every subcommand. */
extern const struct ng_opt ng_fabric_option_table[];
/* Reads the options every fabric subcommand shares into f (want_peers:
 * --peers is allowed). Returns -1 to go on with argv[*next..] the node
 * arguments, else an exit status (a usage error printed). */
int fabric_parse_opts(const struct ng_cmd_entry *e, struct ng_cli *cli, int argc, char **argv,
                      struct fabric_cli *f, bool want_peers, int *next);
void fabric_cli_free(struct fabric_cli *f);

/* fabric_print.c: the documents of ng_fabric_gang and ng_fabric_pair as text. */
void fabric_print_gang(const cJSON *doc);
void fabric_print_pair(const cJSON *doc);

#endif
