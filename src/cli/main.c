/* nodegate: keeps slow and sick GPU nodes out of expensive allocations.
 *
 * main parses the global options, loads the policy, and hands the rest of the
 * command line to the verb's entry in the table below. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/config_error.h"
#include "core/json.h"
#include "core/policy_file.h"
#include "core/strbuf.h"

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "dev"
#endif

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
	&ng_cmd_floors_entry,
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
	&ng_cmd_gpus_entry,
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
	        "                 (also NODEGATE_POLICY; else " NG_DEFAULT_POLICY " if present);\n"
	        "                 also taken after the verb, except by `policy`, whose\n"
	        "                 subcommands' --policy is the proposed policy\n"
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

static const char *command_names[N_COMMANDS];

/* A mistake before the verb runs: for a GPU check (or anything Slurm runs
 * as its Epilog or Prolog) one loud line and exit 0, never a drain
 * (cli/config_error.h); otherwise the message, the usage when asked for,
 * and exit 2. */
static int early_error(int argc, char **argv, int verb_at, const char *kind, bool with_usage,
                       const char *fmt, const char *what)
{
	for (size_t k = 0; k < N_COMMANDS; k++)
		command_names[k] = commands[k]->name;
	ng_config_guard g;
	if (ng_config_guard_of(argc, argv, command_names, (int)N_COMMANDS, verb_at, &g))
		return ng_config_error(&g, kind, fmt, what);
	ng_strbuf s = {0};
	ng_strbuf_add_printable(&s, what);
	fprintf(stderr, "nodegate: ");
	fprintf(stderr, fmt, s.s ? s.s : "");
	fprintf(stderr, "\n");
	ng_strbuf_free(&s);
	if (with_usage) {
		fprintf(stderr, "\n");
		usage(stderr);
	}
	return NG_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	/* A reader that went away (an Epilog's output pipe, `| head`) makes a
	 * write fail with EPIPE, which the verbs see as an output error; the
	 * default SIGPIPE would end the process with signal 13 instead, which
	 * Slurm takes for a failed Epilog and drains the node on. */
	signal(SIGPIPE, SIG_IGN);
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
		} else if (strcmp(argv[i], "--store") == 0 || strcmp(argv[i], "--on-verdict") == 0 ||
		           strcmp(argv[i], "--policy") == 0) {
			return early_error(argc, argv, 0, NG_CONFIG_OPTION, true, "%s needs a value",
			                   argv[i]);
		} else {
			return early_error(argc, argv, 0, NG_CONFIG_OPTION, true,
			                   "unknown global option %s (they are --policy, --store and "
			                   "--on-verdict, before the command)",
			                   argv[i]);
		}
	}
	if (i == argc) {
		ng_config_guard g;
		if (ng_config_guard_of(argc, argv, command_names, 0, 0, &g))
			return ng_config_error(&g, NG_CONFIG_VERB, "no command given");
		usage(stderr);
		return NG_EXIT_USAGE;
	}
	const struct ng_cmd_entry *cmd = NULL;
	for (size_t k = 0; k < N_COMMANDS; k++)
		if (strcmp(commands[k]->name, argv[i]) == 0)
			cmd = commands[k];
	if (!cmd)
		return early_error(argc, argv, i, NG_CONFIG_VERB, true,
		                   "unknown command \"%s\" (nodegate --help lists them)", argv[i]);

	/* --policy means the same on every verb (docs/architecture.md): given after
	 * the verb, it is the global one, taken out before the verb parses.
	 * `policy` alone is different: its subcommands' --policy names the
	 * proposed policy (docs/policy-changes.md). */
	if (cmd != &ng_cmd_policy_entry) {
		int w = i + 1;
		bool rest = false; /* after "--": the fabric command's own arguments */
		for (int r = i + 1; r < argc; r++) {
			const char *a = argv[r], *value = NULL;
			if (!rest && strcmp(a, "--") == 0)
				rest = true;
			if (!rest && strcmp(a, "--policy") == 0) {
				if (r + 1 >= argc)
					return early_error(argc, argv, i, NG_CONFIG_OPTION, false,
					                   "%s needs a value", a);
				value = argv[++r];
			} else if (!rest && strncmp(a, "--policy=", 9) == 0) {
				value = a + 9;
			}
			if (!value) {
				argv[w++] = argv[r];
				continue;
			}
			if (policy_path && strcmp(policy_path, value) != 0)
				return early_error(argc, argv, i, NG_CONFIG_OPTION, false,
				                   "--policy is given twice (%s): which policy was meant?",
				                   value);
			policy_path = value;
		}
		argv[w] = NULL;
		argc = w;
	}

	/* `policy check FILE` reads FILE alone: the policy in force may be the
	 * broken one that is being replaced. */
	bool read_none = cmd == &ng_cmd_policy_entry && i + 1 < argc &&
	                 strcmp(argv[i + 1], "check") == 0;
	ng_err err;
	if (ng_policy_load_in_force(&cli.policy, policy_path, read_none, &err) < 0)
		return early_error(argc, argv, i, NG_CONFIG_POLICY, false,
		                   "policy (nodegate " NODEGATE_VERSION "): %s; `nodegate policy "
		                   "check FILE` checks a policy before it is rolled out",
		                   err.msg);

	/* A valid policy that is probably not what was meant says so, except to
	 * the GPU checks, whose standard error is the hook's log (and which
	 * read none of the gate's values), and to `policy`, which says it itself. */
	bool check_verb = cmd == &ng_cmd_epilog_entry || cmd == &ng_cmd_prolog_entry ||
	                  cmd == &ng_cmd_health_entry || cmd == &ng_cmd_npd_entry;
	for (size_t k = 0; !check_verb && cmd != &ng_cmd_policy_entry &&
	                   ng_policy_warning(&cli.policy, k);
	     k++)
		fprintf(stderr, "nodegate: policy %s: warning: %s\n", cli.policy.source_file,
		        ng_policy_warning(&cli.policy, k));

	/* Each verb parses its own options with getopt_long from a fresh start. */
	optind = 0;
	cli.cmd = cmd;
	cli.needs = cmd->needs;
	int rc = cmd->exec(&cli, argc - i, argv + i);
	ng_store_close(cli.store);
	return rc;
}
