/* nodegate floors: workload floors derived from a pinned baseline, for an
 * operator to review and commit to the policy file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/floors_suggest.h"

static int exec_floors(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt floors_opts[] = {
	{"fraction", 'f', "F", "the share of the pinned median the workload needs, 0 < F <= 1"},
	{"software", 'w', "SW", "only baselines of this software identity"},
	NG_OPT_STORE,
	NG_OPT_JSON("the policy document, and what each floor came from, as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_floors_entry = {
	.name = "floors",
	.usage = "suggest CLASS --fraction F [--software SW] [--store S] [--json]",
	.summary = "Suggest workload floors from a class's pinned baseline and a stated fraction.",
	.help =
	"Peers alone accept a class that degrades together: every node of it is as\n"
	"slow as its peers. A floor is what the workload needs, whatever the peers do.\n"
	"`floors suggest` derives one per metric from the class's pinned baseline (the\n"
	"newest pinned one of each metric, `nodegate baseline pin`): F x its median, in\n"
	"the metric's unit. It prints a policy \"floors\" section to review and commit\n"
	"(what each floor came from goes to stderr); it changes nothing. A floor you set by hand from the workload's own need is\n"
	"better than one derived from what the class happened to measure.\n",
	.opts = floors_opts,
	.help_tail =
	"Example:\n"
	"  nodegate floors suggest 8xH100-SXM/8rail --fraction 0.75 > floors.json\n"
	"\n"
	"Exit status: 0 floors suggested; 1 the class has no pinned baseline; 2 usage\n"
	"error; 3 the store could not be opened or read.\n",
	.exec = exec_floors,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

static int cmd_suggest(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_floors_entry;
	const char *spec = NULL, *fraction = NULL, *software = NULL;
	bool json = false;
	optind = 0;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_floors_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'f': fraction = op.arg; break;
		case 'w': software = op.arg; break;
		case 's': spec = op.arg; break;
		case 'j': json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (argc - optind != 1)
		return ng_cmd_usage_error(e, "floors suggest names one CLASS");
	const char *cls = argv[optind];
	if (!fraction)
		return ng_cmd_usage_error(e, "floors suggest needs --fraction: the share of the "
		                             "pinned median the workload needs");
	char *end;
	errno = 0;
	double f = strtod(fraction, &end);
	if (errno || end == fraction || *end || !(f > 0 && f <= 1))
		return ng_cmd_usage_error(e, "--fraction wants a number over 0 and at most 1, not \"%s\"",
		                          fraction);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	ng_floor_suggestion *sug = NULL;
	size_t used = 0;
	int r = ng_floors_suggest(&ctx, cls, software, f, &sug, &used, &err);
	if (r < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);

	cJSON *out = ng_floors_suggest_json(cls, f, sug, used);
	free(sug);
	int rc = used ? NG_EXIT_OK : 1;
	if (!used)
		fprintf(stderr, "nodegate floors: class %s has no pinned baseline%s%s: pin one first "
		                "(`nodegate baseline pin`)\n",
		        cls, software ? " of software " : "", software ? software : "");
	if (json) {
		ng_print_json(out);
		cJSON_Delete(out);
		return rc;
	}
	const cJSON *x, *from = cJSON_GetObjectItemCaseSensitive(out, "from");
	if (used) {
		/* What each floor came from on stderr: stdout is the policy section. */
		fprintf(stderr, "floors for %s at %g x its pinned baselines: review, then put them in the\n"
		                "policy file (--policy) of the partition the class serves\n", cls, f);
		cJSON_ArrayForEach(x, from)
			fprintf(stderr, "  %-32s %10.4g %-8s (%g x median %.4g of baseline %d \"%s\", %d nodes)\n",
			       cJSON_GetObjectItem(x, "metric")->valuestring,
			       cJSON_GetObjectItem(x, "floor")->valuedouble,
			       cJSON_GetObjectItem(x, "unit")->valuestring, f,
			       cJSON_GetObjectItem(x, "median")->valuedouble,
			       (int)cJSON_GetObjectItem(x, "baseline")->valuedouble,
			       cJSON_GetObjectItem(x, "pinned")->valuestring,
			       (int)cJSON_GetObjectItem(x, "nodes")->valuedouble);
		ng_print_json(cJSON_GetObjectItemCaseSensitive(out, "policy"));
	}
	cJSON_Delete(out);
	return rc;
}

static int exec_floors(struct ng_cli *cli, int argc, char **argv)
{
	static const struct ng_subcmd subcommands[] = {
		{"suggest", cmd_suggest},
	};
	return ng_cmd_dispatch(&ng_cmd_floors_entry, subcommands,
	                       sizeof subcommands / sizeof subcommands[0], cli, argc, argv);
}
