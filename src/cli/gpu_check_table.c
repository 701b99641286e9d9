/* The options of the GPU checks (epilog, prolog, health): one table per kind
 * of check, for their parsing (gpu_check_opts.c) and their --help. */
#include "cli/gpu_check.h"

#define NG_CHECK_COMMON_OPTS                                                                  \
	{"deadline", NG_CHECK_O_DEADLINE, "S",                                                    \
	 "the whole run ends within S seconds; NVML that has not\n"                                \
	 "answered by then is unknown (default: policy\n"                                          \
	 "health.deadline_seconds, 10)"},                                                          \
	{"kmsg", NG_CHECK_O_KMSG, "FILE",                                                         \
	 "read kernel Xids from FILE (a saved /dev/kmsg, dmesg or\n"                               \
	 "journal text) instead of /dev/kmsg (also NODEGATE_KMSG)"},                               \
	{"since", NG_CHECK_O_SINCE, "S",                                                          \
	 "only Xids from the last S seconds (of the kernel clock, or\n"                            \
	 "before the newest line of a --kmsg FILE)"},                                              \
	{"no-kmsg", NG_CHECK_O_NO_KMSG, NULL, "do not read kernel Xids"},                         \
	{"library", NG_CHECK_O_LIBRARY, "PATH",                                                   \
	 "the NVML library (also NODEGATE_NVML_LIBRARY; default\n"                                 \
	 "libnvidia-ml.so.1)"},                                                                    \
	{"store", 's', "S",                                                                       \
	 "also keep one gpu.health record per GPU in the store (also\n"                            \
	 "the global --store, NODEGATE_STORE); a store that cannot be\n"                           \
	 "opened, written or reached in time is a note, never a drain"},                           \
	{"no-store", NG_CHECK_O_NO_STORE, NULL, "keep nothing, even when NODEGATE_STORE is set"}, \
	{"land", NG_CHECK_O_LAND, "slurm|none",                                                   \
	 "slurm: also drain through scontrol, with the reason, and\n"                              \
	 "never over an operator's drain (default none: health\n"                                  \
	 "reports, epilog and prolog drain by exit status;\n"                                      \
	 "docs/landing.md). NODEGATE_SCONTROL names scontrol"},                                    \
	{"slurm-conf", NG_CHECK_O_SLURM_CONF, "FILE", "SLURM_CONF for scontrol (a health check has none)"}, \
	{"node", NG_CHECK_O_NODE, "NAME",                                                         \
	 "the Slurm node (default SLURMD_NODENAME, else the short\n"                               \
	 "host name)"},                                                                            \
	{"root", NG_CHECK_O_ROOT, "DIR",                                                          \
	 "the kernel's view of the GPUs (PCI bus, driver list, boot\n"                             \
	 "id) under DIR instead of / (also NODEGATE_ROOT)"},                                       \
	NG_OPT_JSON("print the result as JSON"),                                                  \
	NG_OPT_HELP

const struct ng_opt ng_check_job_opts[] = {
	{"gpus", NG_CHECK_O_GPUS, "LIST", "the GPUs to check instead of SLURM_JOB_GPUS"},
	NG_CHECK_COMMON_OPTS,
	{0},
};

const struct ng_opt ng_check_health_opts[] = {
	{"from-nvidia-smi", NG_CHECK_O_SMI, "F", "judge this saved `nvidia-smi -q` instead of NVML"},
	NG_CHECK_COMMON_OPTS,
	{0},
};
