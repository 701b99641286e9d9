/* nodegate health: check every GPU of the node (HealthCheckProgram, cron,
 * by hand), or a saved `nvidia-smi -q`. */
#include "cli/gpu_check.h"

static int health_main(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_health_entry = {
	.name = "health",
	.usage = "[--from-nvidia-smi FILE] [--deadline S] [--kmsg FILE | --no-kmsg] [--since S]\n"
	         "       [--land slurm|none [--slurm-conf FILE] [--node NAME]] [--json]",
	.summary = "Check every GPU of this node (or a saved nvidia-smi -q); print the drain reason.",
	.help =
	"The rules of `nodegate epilog`, on every GPU NVML lists and every GPU the kernel\n"
	"(--root) or the store knows and NVML does not (missing: fatal), with every Xid\n"
	"in the kernel's buffer (or --since S seconds of it). For Slurm's HealthCheckProgram,\n"
	"cron or a person. Slurm only logs a HealthCheckProgram's exit status, so on\n"
	"degraded or fatal this prints the drain reason (\"nodegate: GPU 3 0000:3b:00\n"
	"fatal: ...\") and exits 1; draining the node with it is up to the caller,\n"
	"unless --land slurm is given: then nodegate drains it through scontrol\n"
	"(State=DRAIN, that reason; never over an operator's drain; the state read\n"
	"back) and reports what changed. The health-check environment has no\n"
	"SLURM_CONF: give --slurm-conf FILE. docs/landing.md.\n"
	"\n"
	"--from-nvidia-smi FILE judges a saved `nvidia-smi -q` the same way (its\n"
	"[N/A] and \"Not Supported\" fields are not read as zero); kernel Xids are\n"
	"attached only from a --kmsg FILE given with it.\n"
	"\n"
	"Options:\n"
	"      --from-nvidia-smi F judge this saved `nvidia-smi -q` instead of NVML\n" NG_CHECK_COMMON_HELP
	"\n"
	"Exit status: 1 degraded or fatal; 0 ok, transient, unknown or nothing checked;\n"
	"2 a usage error or an unreadable --from-nvidia-smi file. docs/epilog.md.\n",
	.exec = health_main,
};

static int health_main(struct ng_cli *cli, int argc, char **argv)
{
	return ng_gpu_check_main(cli, &ng_cmd_health_entry, NG_CHECK_HEALTH, argc, argv);
}
