/* nodegate prolog: before a job, check the GPUs it was given; exit 1 drains. */
#include "cli/gpu_check.h"

static int prolog_main(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_prolog_entry = {
	.name = "prolog",
	.usage = "[--gpus LIST] [--deadline S] [--kmsg FILE | --no-kmsg] [--since S] [--json]",
	.summary = "Before a job (Slurm Prolog): check the GPUs it was given; exit 1 drains the node.",
	.help =
	"The same check as `nodegate epilog`, on the GPUs the job is about to get\n"
	"(SLURM_JOB_GPUS or --gpus). A non-zero Prolog makes Slurm drain the node and\n"
	"requeue the job, so only degraded or fatal exits 1; nothing to check, NVML\n"
	"missing, failing or hanging exit 0. Kernel Xids from the last hour are\n"
	"attached unless --since says otherwise.\n",
	.opts = ng_check_job_opts,
	.help_tail =
	"Exit status: 1 degraded or fatal (Slurm drains the node and requeues the job);\n"
	"0 everything else, a configuration error (broken policy, unknown option)\n"
	"included: one \"CONFIGURATION ERROR\" line on standard error instead.\n"
	"docs/epilog.md.\n",
	.exec = prolog_main,
};

static int prolog_main(struct ng_cli *cli, int argc, char **argv)
{
	return ng_gpu_check_main(cli, &ng_cmd_prolog_entry, NG_CHECK_PROLOG, argc, argv);
}
