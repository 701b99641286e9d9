/* nodegate: keeps slow and sick GPU nodes out of expensive allocations.
 *
 * main parses the global options, loads the policy, and hands the rest of the
 * command line to the verb's entry in the table below. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "core/json.h"

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "dev"
#endif

#define NG_DEFAULT_POLICY "/etc/nodegate/policy.json"

static const struct ng_cmd_entry *const commands[] = {
	&ng_cmd_gate_entry,
	&ng_cmd_run_entry,
	&ng_cmd_parse_entry,
	&ng_cmd_probe_entry,
	&ng_cmd_identity_entry,
	&ng_cmd_policy_entry,
	&ng_cmd_verdicts_entry,
	&ng_cmd_admit_entry,
	&ng_cmd_ingest_entry,
	&ng_cmd_baseline_entry,
	&ng_cmd_quarantine_entry,
	&ng_cmd_release_entry,
	&ng_cmd_override_entry,
	&ng_cmd_fleet_entry,
	&ng_cmd_audit_entry,
	&ng_cmd_report_entry,
	&ng_cmd_epilog_entry,
	&ng_cmd_prolog_entry,
	&ng_cmd_health_entry,
	&ng_cmd_scenarios_entry,
	&ng_cmd_selftest_entry,
	&ng_cmd_metrics_entry,
	&ng_cmd_kube_entry,
	&ng_cmd_npd_entry,
	&ng_cmd_fabric_entry,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: nodegate [--policy FILE] [--store S] [--on-verdict CMD] COMMAND [ARGS]\n"
	        "\n"
	        "Keeps slow and sick GPU nodes out of training allocations, and healthy\n"
	        "ones in. Anything it did not measure is never a pass.\n"
	        "\n"
	        "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(out,
	        "\n"
	        "Global options:\n"
	        "  --policy FILE  policy values to use instead of the defaults\n"
	        "                 (also NODEGATE_POLICY; else " NG_DEFAULT_POLICY " if present)\n"
	        "  --store S      the store: a SQLite file, or postgresql://... for a fleet\n"
	        "                 database (also NODEGATE_STORE; else /var/lib/nodegate/\n"
	        "                 nodegate.db as root, $XDG_STATE_HOME/nodegate otherwise)\n"
	        "  --on-verdict CMD  run CMD with each admit, epilog, prolog or health verdict\n"
	        "                 as JSON on its standard input (10 s; CMD is split on spaces,\n"
	        "                 no shell); its failure is a note, never a different verdict\n"
	        "  --help         this text; `nodegate COMMAND --help` for a command\n"
	        "  --version      print the version\n"
	        "\n"
	        "Exit status: 0 admissible, 1 not admissible, 2 usage or input error,\n"
	        "3 the store could not be opened, read or written.\n");
}

/* An explicitly named policy file must exist; the default one may not. */
static int load_policy(struct ng_cli *cli, const char *path, bool must_exist)
{
	ng_policy_default(&cli->policy);
	if (!path)
		return 0;
	if (!must_exist && access(path, F_OK) != 0 && errno == ENOENT)
		return 0;
	ng_err err;
	char *text;
	size_t len;
	cJSON *doc = ng_load_json_file(path, &text, &len, &err);
	if (!doc) {
		fprintf(stderr, "nodegate: policy: %s\n", err.msg);
		return -1;
	}
	int rc = ng_policy_apply_json(&cli->policy, doc, path, &err);
	if (rc < 0)
		fprintf(stderr, "nodegate: policy %s: %s\n", path, err.msg);
	cJSON_Delete(doc);
	free(text);
	return rc;
}

int main(int argc, char **argv)
{
	struct ng_cli cli = {.prog = argv[0]};
	const char *policy_path = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return NG_EXIT_OK;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("nodegate %s\n", NODEGATE_VERSION);
			return NG_EXIT_OK;
		} else if (strcmp(argv[i], "--store") == 0 && i + 1 < argc) {
			cli.store_spec = argv[++i];
		} else if (strncmp(argv[i], "--store=", 8) == 0) {
			cli.store_spec = argv[i] + 8;
		} else if (strcmp(argv[i], "--on-verdict") == 0 && i + 1 < argc) {
			cli.on_verdict = argv[++i];
		} else if (strncmp(argv[i], "--on-verdict=", 13) == 0) {
			cli.on_verdict = argv[i] + 13;
		} else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
			policy_path = argv[++i];
		} else if (strncmp(argv[i], "--policy=", 9) == 0) {
			policy_path = argv[i] + 9;
		} else {
			fprintf(stderr, "nodegate: unknown option %s\n\n", argv[i]);
			usage(stderr);
			return NG_EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage(stderr);
		return NG_EXIT_USAGE;
	}
	const struct ng_cmd_entry *cmd = NULL;
	for (size_t k = 0; k < N_COMMANDS; k++)
		if (strcmp(commands[k]->name, argv[i]) == 0)
			cmd = commands[k];
	if (!cmd) {
		fprintf(stderr, "nodegate: unknown command \"%s\"\n\n", argv[i]);
		usage(stderr);
		return NG_EXIT_USAGE;
	}

	bool explicit_policy = policy_path != NULL;
	const char *env = getenv("NODEGATE_POLICY");
	if (!policy_path && env && *env)
		policy_path = env;
	explicit_policy = explicit_policy || policy_path != NULL;
	if (!policy_path)
		policy_path = NG_DEFAULT_POLICY;
	if (load_policy(&cli, policy_path, explicit_policy) < 0)
		return NG_EXIT_USAGE;

	/* Each verb parses its own options with getopt_long from a fresh start. */
	optind = 0;
	return cmd->exec(&cli, argc - i, argv + i);
}
