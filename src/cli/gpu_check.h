/* The GPU health check that `nodegate epilog`, `prolog` and `health` share:
 * which GPUs, a snapshot under a hard deadline, the kernel's Xids, the
 * rules, the report, and the exit status the mode calls for.
 *
 * Its two promises are the epilog seed's: never drain on ignorance (NVML
 * missing, failing, hanging or answering nonsense is `unknown` or `n/a` and
 * exit 0), and only the job's own GPUs (a neighbour's bad card never drains
 * a node for a job that did not touch it). */
#ifndef NODEGATE_CLI_GPU_CHECK_H
#define NODEGATE_CLI_GPU_CHECK_H

#include "cli/cmd.h"

typedef enum {
	NG_CHECK_EPILOG, /* after a job: its GPUs; exit 1 drains (Slurm's Epilog) */
	NG_CHECK_PROLOG, /* before a job: its GPUs; exit 1 drains and requeues the job */
	NG_CHECK_HEALTH, /* the whole node (HealthCheckProgram, cron, by hand) */
} ng_check_mode;

#define NG_CHECK_DEFAULT_DEADLINE_S 10.0
#define NG_CHECK_EPILOG_SINCE_S 3600.0 /* Xids this recent, when the job's run time is not known */

/* Parses the verb's options and runs the check. Returns the exit status. */
int ng_gpu_check_main(struct ng_cli *cli, const struct ng_cmd_entry *e, ng_check_mode mode,
                      int argc, char **argv);

/* The options of the checks (gpu_check_opts.c): epilog and prolog take --gpus,
 * health --from-nvidia-smi; each names the other's as belonging to it. */
enum {
	NG_CHECK_O_GPUS = NG_OPT_LONG, NG_CHECK_O_DEADLINE, NG_CHECK_O_KMSG, NG_CHECK_O_NO_KMSG,
	NG_CHECK_O_SINCE, NG_CHECK_O_LIBRARY, NG_CHECK_O_NO_STORE, NG_CHECK_O_SMI, NG_CHECK_O_LAND,
	NG_CHECK_O_SLURM_CONF, NG_CHECK_O_NODE, NG_CHECK_O_ROOT,
};
extern const struct ng_opt ng_check_job_opts[];
extern const struct ng_opt ng_check_health_opts[];

#endif
