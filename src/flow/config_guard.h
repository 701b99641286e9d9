/* A broken configuration never drains a node.
 *
 * Slurm drains a node on any non-zero Epilog or Prolog status (and a Prolog
 * also requeues the job), so a policy file with one mistake, a misspelt
 * option or verb in the hook's command line would remove the fleet one job
 * at a time. For the GPU checks (epilog, prolog, health, npd), and for any
 * command Slurm runs as its Epilog or Prolog, a problem found before the
 * check can run is one loud line on standard error (cli/config_error.h), a
 * row in the store (where one is reachable) that `nodegate metrics` counts
 * as nodegate_config_errors and `nodegate report` shows, and exit 0 (npd: 2,
 * node-problem-detector's "unknown"). Nothing is checked, nothing drains.
 *
 * This is the guard's side that decides and keeps: whether an invocation is
 * guarded, and the error's row in the store. */
#ifndef NODEGATE_FLOW_CONFIG_GUARD_H
#define NODEGATE_FLOW_CONFIG_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Why the check could not run (the store's `kind` column). */
#define NG_CONFIG_POLICY "policy"   /* policy file missing, unreadable or invalid */
#define NG_CONFIG_OPTION "option"   /* an unknown option or a bad value on the command line */
#define NG_CONFIG_VERB "verb"       /* an unknown command */
#define NG_CONFIG_INPUT "input"     /* a file the check was told to read is unusable */

typedef struct {
	const char *verb;  /* "epilog", "prolog", "health", "npd", or the Slurm hook's context */
	bool npd;          /* answer in node-problem-detector's protocol (exit 2) */
	const char *store; /* where to keep the error: NULL for none */
} ng_config_guard;

/* Whether a configuration error in this invocation must not fail it, and
 * how to answer. argv is main's. The verb is argv[verb_at] when verb_at > 0
 * (main has found where the command is), else the first argument that names
 * one of verbs (so `nodegate --polcy x epilog` is still the epilog). Under
 * Slurm's Epilog or Prolog (SLURM_SCRIPT_CONTEXT) every command is guarded
 * before it runs, an unknown one included; where Slurm does not set that
 * (SLURM_JOB_ID with SLURMD_NODENAME) an unknown command is. */
bool ng_config_guard_of(int argc, char **argv, const char *const *verbs, int n_verbs, int verb_at,
                        ng_config_guard *g);

/* The guard of a GPU check whose own options failed: its store is the
 * check's --store, else the global one (global_store), else
 * $NODEGATE_STORE; none with no_store. */
void ng_config_guard_for_check(const char *global_store, const char *verb, bool npd,
                               const char *store, bool no_store, ng_config_guard *g);

/* Keeps the error (msg, already printable) in g's store, in a child so that
 * a store that hangs (a locked SQLite file, an unreachable PostgreSQL) costs
 * at most two seconds: the hook has its own deadline to keep. Writes what
 * happened into said ("recorded in the store ...", "not recorded: ..."). */
void ng_config_error_keep(const ng_config_guard *g, const char *kind, const char *msg, char *said,
                          size_t cap);

#endif
