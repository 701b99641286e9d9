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

/* The options the three verbs share, for their --help. */
#define NG_CHECK_COMMON_HELP                                                                    \
	"      --deadline S        the whole run ends within S seconds; NVML that has not\n"       \
	"                          answered by then is unknown (default: policy\n"                 \
	"                          health.deadline_seconds, 10)\n"                                  \
	"      --kmsg FILE         read kernel Xids from FILE (a saved /dev/kmsg, dmesg or\n"       \
	"                          journal text) instead of /dev/kmsg (also NODEGATE_KMSG)\n"       \
	"      --since S           only Xids from the last S seconds (of the kernel clock, or\n"    \
	"                          before the newest line of a --kmsg FILE)\n"                      \
	"      --no-kmsg           do not read kernel Xids\n"                                       \
	"      --library PATH      the NVML library (also NODEGATE_NVML_LIBRARY; default\n"         \
	"                          libnvidia-ml.so.1)\n"                                            \
	"      --store S           also keep one gpu.health record per GPU in the store (also\n"    \
	"                          the global --store, NODEGATE_STORE); a store that cannot be\n"   \
	"                          opened, written or reached in time is a note, never a drain\n"  \
	"      --no-store          keep nothing, even when NODEGATE_STORE is set\n"                \
	"      --land slurm|none   slurm: also drain through scontrol, with the reason, and\n"  \
	"                          never over an operator's drain (default none: health\n"      \
	"                          reports, epilog and prolog drain by exit status;\n"          \
	"                          docs/landing.md). NODEGATE_SCONTROL names scontrol\n"        \
	"      --slurm-conf FILE   SLURM_CONF for scontrol (a health check has none)\n"         \
	"      --node NAME         the Slurm node (default SLURMD_NODENAME, else the short\n"   \
	"                          host name)\n"                                                  \
	"      --root DIR          the kernel's view of the GPUs (PCI bus, driver list, boot\n"  \
	"                          id) under DIR instead of / (also NODEGATE_ROOT)\n"          \
	"  -j, --json              print the result as JSON\n"                                      \
	"  -h, --help              this text\n"

#endif
