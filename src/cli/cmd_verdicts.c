/* nodegate verdicts: every verdict, what it means and where it lands. */
#include <stdlib.h>

#include "cli/cmd.h"
#include "core/verdict.h"
#include "flow/verdict_table.h"

static int exec_verdicts(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt verdicts_opts[] = {
	NG_OPT_JSON("a JSON array instead of text"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_verdicts_entry = {
	.name = "verdicts",
	.usage = "[--json]",
	.summary = "List every gate verdict, what it means and where it lands.",
	.help = "",
	.opts = verdicts_opts,
	.help_tail =
	"Only pass and warn are admissible. \"hard\" verdicts are not statements about\n"
	"performance; hysteresis never rewrites them.\n",
	.exec = exec_verdicts,
};

static int exec_verdicts(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	bool json;
	int rc = ng_cmd_json_option(&ng_cmd_verdicts_entry, argc, argv, &json);
	if (rc >= 0)
		return rc;

	if (json) {
		cJSON *arr = ng_verdict_table_json();
		char *s = cJSON_Print(arr);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(arr);
		return NG_EXIT_OK;
	}
	for (int v = 0; v < NG_V_COUNT; v++) {
		const struct ng_verdict_info *vi = ng_verdict_info((ng_verdict)v);
		printf("%-23s %-12s %-14s %s\n", vi->name, vi->family,
		       vi->admissible ? "admissible" : "not admissible", vi->hard ? "(hard)" : "");
		printf("    means: %s\n    lands: %s\n", vi->meaning, vi->lands);
	}
	return NG_EXIT_OK;
}
