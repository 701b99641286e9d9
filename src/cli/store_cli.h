/* What the verbs that use the store share: opening it from --store, the
 * clock, times on the command line, and who is acting. */
#ifndef NODEGATE_CLI_STORE_CLI_H
#define NODEGATE_CLI_STORE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cmd.h"
#include "core/clock.h"
#include "store/store.h"

/* The store the verb needs (cli->needs: its entry's, cli/cmd.h),
 * opened once and closed by main when the verb is done. It is the one spec
 * names (--store), else cli->store_spec (the global --store), else
 * $NODEGATE_STORE, else the default path; NG_CMD_NEEDS_EXISTING_STORE
 * refuses a SQLite store that does not exist rather than make a new, empty
 * one at a mistyped path. NULL when it cannot be opened (printed as
 * "nodegate VERB: store: ...": the verb exits NG_EXIT_STORE), or when the
 * verb needs none. */
ng_store *ng_cli_store(struct ng_cli *cli, const char *spec);
/* ng_cli_store and the flow's context around it (ng_cli_ctx), as most
 * verbs want them; false when the store cannot be opened (said). */
bool ng_cli_store_ctx(struct ng_cli *cli, const char *spec, ng_ctx *ctx);
/* Prints a store failure for the verb and returns NG_EXIT_STORE. */
int ng_cli_store_error(const struct ng_cmd_entry *e, const ng_err *err);

/* The node a NODE argument names, by its stable id or its scheduler name
 * (store.h: ng_store_resolve_node). Returns 0 with out set (a node the
 * store does not know by name keeps arg as its id); else prints why
 * ("nodegate VERB: ...": an ambiguous name lists the candidates) and
 * returns the exit status: NG_EXIT_USAGE when ambiguous, NG_EXIT_STORE. */
int ng_cli_resolve_node(ng_store *st, const struct ng_cmd_entry *e, const char *arg,
                        ng_store_node_ref *out);

/* A row's id on the command line (a baseline, a fleet event): a positive
 * whole number, nothing after it. */
bool ng_cli_parse_id(const char *s, int64_t *out);
/* The width of a table's column: w, or s's length when longer. */
int ng_cli_col_width(int w, const char *s);

/* ng_json_add_time: core/json.h. */
/* Prints a JSON document, indented, and a newline. */
void ng_print_json(const cJSON *doc);
#endif
