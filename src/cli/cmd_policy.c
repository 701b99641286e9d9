/* nodegate policy: the effective policy, and where each value came from. */
#include <stdlib.h>

#include "cli/cmd.h"
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
	"   \"identity\": {\"class_template\": \"{cpu.model}x{cpu.sockets}/{memory.gib}GiB\"}}\n"
	"Unknown names and out-of-range values are refused, naming the value.\n",
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
		printf("%-26s %-32s %-10s %s\n", "NAME", "VALUE", "SOURCE", "MEANING");
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		ng_strbuf_reset(&val);
		ng_policy_param_value(&cli->policy, i, &val);
		const char *name = ng_policy_param_name(i), *src = ng_policy_param_source(&cli->policy, i);
		if (json) {
			cJSON *e = cJSON_AddObjectToObject(values, name);
			cJSON_AddItemToObject(e, "value", cJSON_Parse(val.s));
			cJSON_AddStringToObject(e, "source", src);
			cJSON_AddStringToObject(e, "meaning", ng_policy_param_description(i));
		} else if (val.len <= 32) {
			printf("%-26s %-32s %-10s %s\n", name, val.s, src, ng_policy_param_description(i));
		} else {
			/* A long value (the class template) on a line of its own keeps the columns. */
			printf("%-26s %-32s %-10s %s\n    %s\n", name, "(below)", src,
			       ng_policy_param_description(i), val.s);
		}
	}
	ng_strbuf_free(&val);
	if (json) {
		char *s = cJSON_Print(doc);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(doc);
	}
	return NG_EXIT_OK;
}
