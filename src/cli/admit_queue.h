/* `nodegate admit --queue` and `--prolog` (docs/slurm.md): the command
 * line's side of flow/admit_queue.h. */
#ifndef NODEGATE_CLI_ADMIT_QUEUE_H
#define NODEGATE_CLI_ADMIT_QUEUE_H

#include "cli/cmd.h"
#include "flow/admit.h"

/* --unscreen LIST: every node of the Slurm host list loses ng_admitted and
 * gains unscreened (the queue's way back in), one line each. 0 when every
 * node landed, 1 when one did not, 2 for a list that does not read. */
int ng_admit_unscreen(const struct ng_cli *cli, const char *list);

/* --prolog, before anything is measured: whether SLURM_JOB_ID's job asks
 * for its nodes to be screened. -1: it does, screen; otherwise the exit
 * status (0: not asked, or the job could not be read: a monitoring
 * failure never holds a job), after one line on standard output. */
int ng_admit_prolog_start(const struct ng_cli *cli, const char *node);

/* --prolog, after the run: 1 (Slurm drains the node and requeues the job)
 * only for a quarantined node; 0 for anything else, a store failure
 * included, with a line saying the job was not held. */
int ng_admit_prolog_exit(const struct ng_admit_run *r, int exit_code);

/* --prolog with a bad option: a configuration error (cli/config_error.h),
 * exit 0, when Slurm runs it; rc otherwise. */
int ng_admit_prolog_usage(int argc, char **argv, int rc);

#endif
