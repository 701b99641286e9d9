/* nodegate kube: a node cordoned, tainted and labelled in Kubernetes, or
 * released (src/land/kube.c, docs/kubernetes.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "land/kube.h"

static int exec_kube(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt kube_opts[] = {
	{"reason", 'r', "R", "why (cordon only; required)"},
	{"case", 'c', "N", "the quarantine case (probation only; required)"},
	{"dry-run", 'n', NULL, "print the commands, run none"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_kube_entry = {
	.name = "kube",
	.usage = "cordon NODE --reason R [--dry-run]\n"
	         "       nodegate kube probation NODE --case N [--dry-run]\n"
	         "       nodegate kube release NODE [--dry-run]",
	.summary = "Cordon, taint and label a node in Kubernetes, or release it (kubectl).",
	.help =
	"  cordon   kubectl cordon NODE and annotate it nodegate.io/cordoned=true\n"
	"           (unless it is cordoned already: then the cordon is someone else's\n"
	"           and stays so); kubectl taint nodes NODE\n"
	"           nodegate.io/quarantine=R:NoSchedule --overwrite; kubectl label nodes\n"
	"           NODE nodegate.io/outcome=quarantined --overwrite\n"
	"  probation  a released node: kubectl taint nodes NODE\n"
	"           nodegate.io/probation=case-N:NoSchedule --overwrite (canary workloads\n"
	"           tolerate it, nothing else lands), then removes the quarantine taint,\n"
	"           labels it nodegate.io/outcome=probation and uncordons as release does\n"
	"  release  removes both taints and the label (already gone is fine); uncordons\n"
	"           only a cordon nodegate set (the annotation), never another party's\n"
	"\n"
	"R is the taint's value, so it must be a valid label value: free text is made\n"
	"one (other characters become '-', at most 63, starting and ending with a\n"
	"letter or digit) and the value used is printed. NODE must be a Kubernetes node\n"
	"name (lowercase letters, digits, '-' and '.'). Each kubectl command runs with\n"
	"an argv, no shell, and a 30 s timeout; every step is tried even when one fails.\n"
	"$NODEGATE_KUBECTL names the kubectl binary (default: kubectl on PATH).\n",
	.opts = kube_opts,
	.help_tail =
	"Exit status: 0 every step done; 1 a kubectl command failed, timed out or could\n"
	"not be started; 2 usage error.\n",
	.exec = exec_kube,
};

static int exec_kube(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	const struct ng_cmd_entry *e = &ng_cmd_kube_entry;
	const char *reason = NULL, *case_arg = NULL;
	ng_kube_opts o = {.out = stdout};
	int c;
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			ng_cmd_print_help(e, stdout);
			return NG_EXIT_OK;
		}
		return ng_cmd_usage_error(e, "say cordon, probation or release");
	}
	const char *sub = argv[1];
	if (strcmp(sub, "help") == 0) {
		ng_cmd_print_help(e, stdout);
		return NG_EXIT_OK;
	}
	bool cordon = strcmp(sub, "cordon") == 0, probation = strcmp(sub, "probation") == 0;
	if (!cordon && !probation && strcmp(sub, "release") != 0)
		return ng_cmd_usage_error(e, "unknown subcommand \"%s\": say cordon, probation or release",
		                          sub);
	optind = 0;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_kube_entry, argc - 1, argv + 1);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'r': reason = op.arg; break;
		case 'c': case_arg = op.arg; break;
		case 'n': o.dry_run = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	int first = optind + 1;
	if (first >= argc)
		return ng_cmd_usage_error(e, "kube %s needs a NODE", sub);
	if (first + 1 < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[first + 1]);
	const char *node = argv[first];
	if (!ng_kube_node_ok(node))
		return ng_cmd_usage_error(e, "\"%s\" is not a Kubernetes node name (lowercase letters, "
		                             "digits, '-' and '.', at most 253)",
		                          node);
	if (case_arg && !probation)
		return ng_cmd_usage_error(e, "--case is for probation");
	if (probation) {
		char *end;
		long long id = case_arg ? strtoll(case_arg, &end, 10) : 0;
		if (!case_arg || !*case_arg || *end || id < 1)
			return ng_cmd_usage_error(e, "kube probation needs --case N, the case's number");
		if (reason)
			return ng_cmd_usage_error(e, "--reason is for cordon");
		return ng_kube_probation(node, id, &o) ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
	}
	if (!cordon) {
		if (reason)
			return ng_cmd_usage_error(e, "--reason is for cordon");
		return ng_kube_release(node, &o) ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
	}
	if (!reason)
		return ng_cmd_usage_error(e, "kube cordon needs --reason");
	char value[NG_KUBE_VALUE_MAX + 1];
	ng_kube_value_of(reason, value);
	if (!value[0] || !ng_kube_value_ok(value))
		return ng_cmd_usage_error(e, "--reason \"%s\" has no letters or digits to make a taint "
		                             "value of",
		                          reason);
	if (strcmp(value, reason) != 0)
		printf("reason as a taint value: %s\n", value);
	return ng_kube_cordon(node, value, &o) ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}
