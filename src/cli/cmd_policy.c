/* nodegate policy: the effective policy, and where each value came from;
 * `policy check FILE` validates a policy before it is rolled out. */
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/policy_changes.h"
#include "core/policy_digest.h"
#include "core/policy_file.h"
#include "core/strbuf.h"
#include "flow/policy_view.h"

static int exec_policy(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt policy_opts[] = {
	NG_OPT_JSON("a JSON object instead of a table"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_policy_entry = {
	.name = "policy",
	.usage = "[--json]\n"
	         "       nodegate policy check FILE [--json]\n"
	         "       nodegate policy replay --policy PROPOSED.json [--days N] [--class C] [--json]\n"
	         "       nodegate policy shadow set FILE --reason TEXT | clear --reason TEXT | show\n"
	         "       nodegate policy promote FILE --reason TEXT [--force] [--guard-share S]\n"
	         "                              [--install PATH | --no-install] [--days N] [--json]\n"
	         "       nodegate policy history [--json]",
	.summary = "Print the effective policy and where each value came from.",
	.help = "",
	.opts = policy_opts,
	.help_tail =
	"Values come from the built-in defaults (the fabric-gate runbook's), overridden\n"
	"by a policy file: --policy FILE, else $NODEGATE_POLICY, else\n"
	"/etc/nodegate/policy.json when it exists. A policy file looks like:\n"
	"  {\"gate\": {\"warn\": 0.05, \"block\": 0.10, \"required_diag\": [\"pcie\", \"memory\"]},\n"
	"   \"hysteresis\": {\"clear_after\": 2},\n"
	"   \"identity\": {\"class_template\": \"{cpu.model}x{cpu.sockets}/{memory.gib}GiB\"},\n"
	"   \"admission\": {\"flag_fraction\": 0.90},\n"
	"   \"floors\": {\"nccl.all_reduce.busbw\": 270}}\n"
	"Floors are absolute minimums per metric, in its canonical unit.\n"
	"Unknown names and out-of-range values are refused, naming the value.\n"
	"\n"
	"The policy version printed last (pol- and 12 hex digits of a SHA-256 over every\n"
	"value and floor) is recorded with every admission decision and quarantine\n"
	"case; `nodegate report` counts false rejects per version.\n"
	"\n"
	"policy check FILE reads FILE as this nodegate would (and nothing else: not\n"
	"--policy, $NODEGATE_POLICY or /etc/nodegate/policy.json) and says whether\n"
	"it is valid: a file that does not parse (a trailing comma), a value out of\n"
	"range, a section or key given twice, or a key this version does not know\n"
	"(one of a newer nodegate, or a misspelling) is refused, naming it. Run it\n"
	"with the nodegate the fleet runs before rolling a policy out: a GPU check\n"
	"that meets a broken policy checks nothing (it never drains for it).\n"
	"Exit status 0 valid (warnings, such as gate.required_diag [], on standard\n"
	"error), 2 invalid or unreadable.\n"
	"\n"
	"Trying a policy before it drains anyone (docs/policy-changes.md):\n"
	"policy replay decides the store's admission runs of the last --days (30) again\n"
	"under the proposed policy and, as the control, under the policy that decided\n"
	"each (the store keeps each policy's text by its version): outcomes per class\n"
	"under each, every decision that differs with its decisive metric and values,\n"
	"quarantines added and removed and what later became of those nodes. It lands\n"
	"nothing and writes nothing. Runs whose policy the store kept only as a digest\n"
	"are listed as not replayed, with why; never counted as unchanged.\n"
	"policy shadow set FILE runs FILE beside the enforcing policy on every admission\n"
	"and GPU check: what it would have done is kept and counted (here, in `nodegate\n"
	"metrics` and the report), never landed. clear ends it; show (the default) counts.\n"
	"policy promote FILE makes FILE enforcing: written to --install PATH (default\n"
	"$NODEGATE_POLICY, else /etc/nodegate/policy.json; --no-install records only),\n"
	"with who, --reason and the replay's and shadow's figures in the audit log. A\n"
	"policy whose replay or shadow run would quarantine or drain more than\n"
	"--guard-share (0.05) of a class in one day is refused (exit 1, audited) unless\n"
	"--force. policy history lists every policy version the store has seen: first\n"
	"and last use, who promoted it, and its decisions of each kind.\n",
	.exec = exec_policy,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "dev"
#endif

static int policy_check(int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_policy_entry;
	const char *file = NULL;
	bool json = false;
	struct ng_opt_parser op;
	ng_opt_begin(&op, e, argc, argv);
	int c;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT)
			return op.status;
		if (c == 'j')
			json = true;
	}
	if (argc - op.next > 1)
		return ng_cmd_usage_error(e, "policy check takes one FILE");
	if (op.next < argc)
		file = argv[op.next];
	if (!file)
		return ng_cmd_usage_error(e, "policy check: name the policy FILE to check");
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err;
	bool valid = ng_policy_load_file(&pol, file, &err) == 0;
	if (json) {
		cJSON *doc = ng_policy_check_json(file, valid ? &pol : NULL, err.msg);
		char *text = cJSON_Print(doc);
		printf("%s\n", text ? text : "{}");
		free(text);
		cJSON_Delete(doc);
	} else if (valid) {
		char digest[NG_POLICY_DIGEST_LEN];
		ng_policy_digest(&pol, digest);
		size_t set = ng_policy_values_set(&pol);
		printf("%s: valid for nodegate %s: %zu value%s and %zu floor%s set; policy version %s\n",
		       file, NODEGATE_VERSION, set, set == 1 ? "" : "s", pol.n_floors,
		       pol.n_floors == 1 ? "" : "s", digest);
	} else {
		printf("INVALID for nodegate %s: %s\n", NODEGATE_VERSION, err.msg);
	}
	for (size_t k = 0; valid && ng_policy_warning(&pol, k); k++)
		fprintf(stderr, "nodegate policy check: warning: %s: %s\n", file,
		        ng_policy_warning(&pol, k));
	return valid ? NG_EXIT_OK : NG_EXIT_USAGE;
}

static void print_warnings(const ng_policy *p)
{
	for (size_t k = 0; ng_policy_warning(p, k); k++)
		fprintf(stderr, "nodegate policy: warning: %s: %s\n", p->source_file,
		        ng_policy_warning(p, k));
}

static int exec_policy(struct ng_cli *cli, int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "check") == 0)
		return policy_check(argc - 1, argv + 1);
	int sub = argc > 1 ? ng_policy_changes(cli, argc - 1, argv + 1) : -1;
	if (sub >= 0)
		return sub;
	bool json;
	int rc = ng_cmd_json_option(&ng_cmd_policy_entry, argc, argv, &json);
	if (rc >= 0)
		return rc;

	const ng_policy *p = &cli->policy;
	if (json) {
		cJSON *doc = ng_policy_view_json(p);
		print_warnings(p);
		char *s = cJSON_Print(doc);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(doc);
		return NG_EXIT_OK;
	}
	ng_strbuf val = {0};
	printf("%-34s %-24s %-8s %s\n", "NAME", "VALUE", "SOURCE", "MEANING");
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		ng_strbuf_reset(&val);
		ng_policy_param_value(p, i, &val);
		const char *name = ng_policy_param_name(i), *src = ng_policy_param_source(p, i);
		if (val.len <= 24) {
			printf("%-34s %-24s %-8s %s\n", name, val.s, src, ng_policy_param_description(i));
		} else {
			/* A long value (the class template) on a line of its own keeps the columns. */
			printf("%-34s %-24s %-8s %s\n    %s\n", name, "(below)", src,
			       ng_policy_param_description(i), val.s);
		}
	}
	ng_strbuf_free(&val);
	print_warnings(p);
	/* Floors are per metric: their own section, and none by default. */
	printf("\nfloors (%s): %s\n", p->n_floors ? p->source_file : "default",
	       p->n_floors ? "" : "none: peers only: a class that degrades together is accepted "
	       "(`nodegate floors suggest` derives floors from a pinned baseline)");
	for (size_t i = 0; i < p->n_floors; i++)
		printf("  %-40s %g\n", p->floors[i].metric, p->floors[i].value);
	/* The policy version stored with every admission decision and case,
	 * which `nodegate report` groups false rejects by. */
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(p, digest);
	printf("\npolicy version: %s\n", digest);
	return NG_EXIT_OK;
}
