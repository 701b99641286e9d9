/* `nodegate admit --queue` and `--prolog`: the flow (flow/admit_queue.h)
 * driven from an admission run, its notes into the run's. */
#include "cli/admit_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/config_error.h"
#include "flow/admit_queue.h"

static void note_to_stdout(void *arg, const char *verb, const char *fmt, va_list ap)
{
	(void)arg;
	printf("nodegate %s --prolog: ", verb);
	vprintf(fmt, ap);
	printf("\n");
}

static void note_line(void *arg, const char *verb, const char *fmt, va_list ap)
{
	(void)arg;
	char buf[700];
	vsnprintf(buf, sizeof buf, fmt, ap);
	printf("nodegate %s --unscreen: %s\n", verb, buf);
}

int ng_admit_unscreen(const struct ng_cli *cli, const char *list)
{
	ng_ctx ctx = {.policy = cli->policy, .no_land = cli->no_land, .note = note_line};
	size_t failed;
	if (ng_flow_admit_unscreen(&ctx, list, &failed) < 0) {
		fprintf(stderr, "nodegate admit: --unscreen takes a Slurm host list (gpu-[001-004]), "
		                "not \"%s\"\n", list);
		return NG_EXIT_USAGE;
	}
	return failed ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

int ng_admit_prolog_start(const struct ng_cli *cli, const char *node)
{
	ng_ctx ctx = {.policy = cli->policy, .note = note_to_stdout};
	char why[600];
	int asks = ng_flow_prolog_asks(&ctx, getenv("SLURM_JOB_ID"), node, why, sizeof why);
	if (asks == 1) {
		ng_ctx_note(&ctx, "admit", "job %s: screening this node: %s", getenv("SLURM_JOB_ID"), why);
		fflush(stdout);
		return -1;
	}
	if (asks == 0)
		ng_ctx_note(&ctx, "admit", "job %s: %s", getenv("SLURM_JOB_ID"), why);
	else
		ng_ctx_note(&ctx, "admit", "%s: not screened, the job is not held", why);
	return NG_EXIT_OK;
}

int ng_admit_prolog_exit(const struct ng_admit_run *r, int exit_code)
{
	if (r && r->outcome && strcmp(r->outcome, "quarantined") == 0) {
		printf("nodegate admit --prolog: quarantined (case %lld): the job is held off this node\n",
		       (long long)r->case_id);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	if (exit_code != NG_EXIT_OK)
		printf("nodegate admit --prolog: %s: not a fault of this node that is proven, the job "
		       "is not held\n",
		       r && r->outcome ? r->outcome : "the run did not finish");
	return NG_EXIT_OK;
}

int ng_admit_prolog_usage(int argc, char **argv, int rc)
{
	bool prolog = false;
	for (int i = 1; i < argc; i++)
		prolog |= strcmp(argv[i], "--prolog") == 0;
	ng_config_guard g;
	if (rc != NG_EXIT_USAGE || !prolog || !ng_config_guard_of(argc, argv, NULL, 0, 0, &g))
		return rc;
	return ng_config_error(&g, NG_CONFIG_OPTION, "admit --prolog: a bad option (above)");
}
