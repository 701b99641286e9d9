/* The exit status of a failure, from its class (core/error.h): one table for
 * every verb, so "2 usage or input error, 3 the store" means the same
 * everywhere. */
#ifndef NODEGATE_CLI_EXIT_H
#define NODEGATE_CLI_EXIT_H

#include "core/error.h"

/* usage, input: 2; store: 3; landing: 1 (what was asked of the scheduler did
 * not happen); internal (out of memory): 2; unclassified: as otherwise. */
int ng_exit_for_class(ng_err_class code, ng_err_class otherwise);
/* The same for an error: its class, or otherwise when it has none. */
int ng_exit_for(const ng_err *err, ng_err_class otherwise);

struct ng_cmd_entry;
/* A flow's failure, said for the verb and turned into its exit status: a
 * store failure as "nodegate VERB: store: ..." (exit 3), any other as
 * "nodegate VERB: ..." with its class's status (otherwise for none). */
int ng_cli_fail(const struct ng_cmd_entry *e, const ng_err *err, ng_err_class otherwise);

#endif
