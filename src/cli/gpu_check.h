/* The command line's side of the GPU check that `nodegate epilog`, `prolog`
 * and `health` share: the options and the printing. The check itself is the
 * flow layer's (include/nodegate/gpu_check.h, src/flow/gpu_check.c). */
#ifndef NODEGATE_CLI_GPU_CHECK_H
#define NODEGATE_CLI_GPU_CHECK_H

#include "cli/cmd.h"
#include "nodegate/gpu_check.h"

/* Parses the verb's options (cli/gpu_check_opts.c), runs the check
 * (flow/gpu_check.c) and prints its result. Returns the exit status. */
int ng_gpu_check_main(struct ng_cli *cli, const struct ng_cmd_entry *e, ng_check_mode mode,
                      int argc, char **argv);

/* The result as text: one line per GPU, the notes, the verdict last
 * (cli/gpu_check_print.c). */
void ng_gpu_check_print_text(const ng_gpu_check_result *c);

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
