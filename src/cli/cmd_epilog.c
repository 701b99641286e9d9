/* nodegate epilog: after a job, check the GPUs it used; exit 1 drains. */
#include "cli/gpu_check.h"

static int epilog_main(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_epilog_entry = {
	.name = "epilog",
	.usage = "[--gpus LIST] [--deadline S] [--kmsg FILE | --no-kmsg] [--since S] [--json]",
	.summary = "After a job (Slurm Epilog): check the GPUs it used; exit 1 drains the node.",
	.help =
	"Checks only the job's own GPUs, from SLURM_JOB_GPUS (ordinals such as \"0,1,3\" or\n"
	"\"0-3\": device minors, /dev/nvidiaN, never NVML's order; or GPU UUIDs; MIG\n"
	"identifiers are skipped with a note) or --gpus. An empty, unset or unusable set\n"
	"checks nothing and exits 0, saying why. NVML is read in a child process under a\n"
	"hard deadline; the kernel's Xids since the job started (SLURM_JOB_START_TIME\n"
	"when set, else the last hour) are attached to the GPUs by PCI address, whatever\n"
	"NVML did. A job GPU the kernel or the store knows and NVML no longer lists is\n"
	"missing: fatal.\n"
	"\n"
	"One line per GPU: its severity (ok, transient, degraded, fatal, unresponsive,\n"
	"unknown) and\n"
	"the reasons. Only degraded or fatal drains. NVML missing, failing, hanging or\n"
	"answering nonsense is never a drain: the run says n/a (nothing checked) or\n"
	"unknown (NVML did not answer in time, or a GPU could not be read).\n",
	.opts = ng_check_job_opts,
	.help_tail =
	"Exit status: 1 degraded or fatal (Slurm drains the node); 0 everything else,\n"
	"including nothing to check, every monitoring failure and every configuration\n"
	"error: a broken policy, an unknown option or a bad value (by hand too) is one\n"
	"\"CONFIGURATION ERROR\" line on standard error, kept in the store when one is\n"
	"named (nodegate_config_errors in `nodegate metrics`), and exit 0: a mistake\n"
	"in the Epilog line or a policy rollout must not drain every node it runs on.\n"
	"docs/epilog.md.\n",
	.exec = epilog_main,
};

static int epilog_main(struct ng_cli *cli, int argc, char **argv)
{
	return ng_gpu_check_main(cli, &ng_cmd_epilog_entry, NG_CHECK_EPILOG, argc, argv);
}
