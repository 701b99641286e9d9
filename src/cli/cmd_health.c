/* nodegate health: check every GPU of the node (HealthCheckProgram, cron,
 * by hand), or a saved `nvidia-smi -q`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/gpu_check.h"
#include "flow/run_lock.h"

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
	"degraded or fatal this prints the drain reason (\"ng:fatal xid79 GPU3\n"
	"0000:3b:00: ... [nodegate]\": sinfo -R shows its first 20 characters) and exits 1; draining the node with it is up to the caller,\n"
	"unless --land slurm is given: then nodegate drains it through scontrol\n"
	"(State=DRAIN, that reason; never over an operator's drain; the state read\n"
	"back) and reports what changed. The health-check environment has no\n"
	"SLURM_CONF: give --slurm-conf FILE. docs/landing.md.\n"
	"\n"
	"--from-nvidia-smi FILE judges a saved `nvidia-smi -q` the same way (its\n"
	"[N/A] and \"Not Supported\" fields are not read as zero); kernel Xids are\n"
	"attached only from a --kmsg FILE given with it.\n",
	.opts = ng_check_health_opts,
	.help_tail =
	"One health check of the node runs at a time: a run that finds another alive\n"
	"(the lock $NODEGATE_STATE_DIR/health.lock, default the store's directory:\n"
	"/var/lib/nodegate as root) says so and exits 0 at once, checking nothing.\n"
	"\n"
	"Exit status: 1 degraded or fatal; 0 ok, transient, unknown or nothing checked,\n"
	"and 0 on a configuration error (a broken policy, an unknown option, an\n"
	"unreadable --from-nvidia-smi file): one \"CONFIGURATION ERROR\" line on\n"
	"standard error instead. docs/epilog.md.\n",
	.exec = health_main,
};

/* Only a check of this node's GPUs takes the lock: --help and a saved
 * nvidia-smi file touch no GPU. */
static bool checks_the_gpus(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0 ||
		    strncmp(argv[i], "--from-nvidia-smi", 17) == 0)
			return false;
	}
	return true;
}

static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0)
			return true;
	return false;
}

static int health_main(struct ng_cli *cli, int argc, char **argv)
{
	int fd = -1;
	if (checks_the_gpus(argc, argv)) {
		char path[4096], why[4200] = "";
		int got = ng_run_lock("health", &fd, path, sizeof path, why, sizeof why);
		if (got == 0) {
			if (wants_json(argc, argv)) {
				char *text = ng_gpu_check_busy_json(path);
				printf("%s\n", text ? text : "null");
				free(text);
			} else {
				printf("health: n/a: %s (%s)\n", NG_GPU_CHECK_BUSY, path);
			}
			return NG_EXIT_OK;
		}
		if (got < 0)
			fprintf(stderr, "nodegate health: not locked against a second run: %s\n", why);
	}
	int rc = ng_gpu_check_main(cli, &ng_cmd_health_entry, NG_CHECK_HEALTH, argc, argv);
	if (fd >= 0)
		close(fd);
	return rc;
}
