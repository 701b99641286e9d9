/* nodegate policy: the effective policy, and where each value came from. */
#include <stdlib.h>

#include "cli/cmd.h"
#include "core/policy_digest.h"
#include "core/strbuf.h"

static int exec_policy(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_policy_entry = {
	.name = "policy",
	.usage = "[--json]",
	.summary = "Print the effective policy and where each value came from.",
	.help =
	"Options:\n"
	"  -j, --json   a JSON object instead of a table\n"
	"  -h, --help   this text\n"
	"\n"
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
	"case; `nodegate report` counts false rejects per version.\n",
	.exec = exec_policy,
};

static int exec_policy(struct ng_cli *cli, int argc, char **argv)
{
	bool json;
	int rc = ng_cmd_json_option(&ng_cmd_policy_entry, argc, argv, &json);
	if (rc >= 0)
		return rc;

	ng_strbuf val = {0};
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *values = json ? cJSON_AddObjectToObject(doc, "policy") : NULL;
	if (!json)
		printf("%-34s %-24s %-8s %s\n", "NAME", "VALUE", "SOURCE", "MEANING");
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		ng_strbuf_reset(&val);
		ng_policy_param_value(&cli->policy, i, &val);
		const char *name = ng_policy_param_name(i), *src = ng_policy_param_source(&cli->policy, i);
		if (json) {
			cJSON *e = cJSON_AddObjectToObject(values, name);
			cJSON_AddItemToObject(e, "value", cJSON_Parse(val.s));
			cJSON_AddStringToObject(e, "source", src);
			cJSON_AddStringToObject(e, "meaning", ng_policy_param_description(i));
		} else if (val.len <= 24) {
			printf("%-34s %-24s %-8s %s\n", name, val.s, src, ng_policy_param_description(i));
		} else {
			/* A long value (the class template) on a line of its own keeps the columns. */
			printf("%-34s %-24s %-8s %s\n    %s\n", name, "(below)", src,
			       ng_policy_param_description(i), val.s);
		}
	}
	ng_strbuf_free(&val);
	/* Floors are per metric: their own section, and none by default. */
	const ng_policy *p = &cli->policy;
	cJSON *floors = json ? cJSON_AddObjectToObject(doc, "floors") : NULL;
	if (!json)
		printf("\nfloors (%s): %s\n", p->n_floors ? p->source_file : "default",
		       p->n_floors ? "" : "none: peers only: a class that degrades together is accepted "
		       "(`nodegate floors suggest` derives floors from a pinned baseline)");
	for (size_t i = 0; i < p->n_floors; i++) {
		if (json)
			cJSON_AddNumberToObject(floors, p->floors[i].metric, p->floors[i].value);
		else
			printf("  %-40s %g\n", p->floors[i].metric, p->floors[i].value);
	}
	/* The policy version stored with every admission decision and case,
	 * which `nodegate report` groups false rejects by. */
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(p, digest);
	if (json)
		cJSON_AddStringToObject(doc, "version", digest);
	else
		printf("\npolicy version: %s\n", digest);
	if (json) {
		char *s = cJSON_Print(doc);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(doc);
	}
	return NG_EXIT_OK;
}
