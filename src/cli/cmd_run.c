/* nodegate run: run a measurement tool through the harness, read its output
 * into records, and optionally judge them with the gate. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "collect/identity.h"
#include "collect/harness.h"
#include "core/json.h"
#include "judge/record.h"
#include "core/record_build.h"

static int exec_run(struct ng_cli *cli, int argc, char **argv);

enum { O_NO_PROBE = NG_OPT_LONG };

static const struct ng_opt run_opts[] = {
	{"repeat", 'n', "N", "run N times; each metric's samples are merged (default 1)"},
	{"timeout", 't', "S", "seconds per run before the run is killed (default 600)"},
	{"raw-dir", 'r', "DIR", "keep each run's raw stdout/stderr there (sha256 is always kept)"},
	{"class", 'C', "CLASS", "the topology class to record (must match the baseline's)"},
	{"node", 'N', "NAME", "the node identity to record (default: its stable id,\n"
	 "with its scheduler name as node_name: docs/naming.md)"},
	{"diag", 'd', "FILE", "records holding a \"diag\" map (e.g. the --out of\n"
	 "`nodegate run dcgmi`), copied into records that have none"},
	{"baseline", 'b', "FILE", "judge the records with the gate against this baseline"},
	{"cohort-drops", 'c', "L", "the cohort's drops, as for `nodegate gate`"},
	{"explain", 'e', NULL, "show the gate's arithmetic"},
	NG_OPT_JSON("print {\"records\": [...], \"verdicts\": [...]} as JSON"),
	{"out", 'o', "FILE", "also write the records there (atomically)"},
	{"no-probe", O_NO_PROBE, NULL, "do not check options against the help text"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_run_entry = {
	.name = "run",
	.usage = "TOOL [--repeat N] [--timeout S] [--raw-dir DIR] [--class CLASS] [--node NAME]\n"
	         "       [--diag RECORDS.json] [--baseline B.json [--cohort-drops LIST] [--explain]]\n"
	         "       [--json] [--out FILE] [--no-probe] -- COMMAND [ARGS...]",
	.summary = "Run a measurement tool and read what it printed into records.",
	.help =
	"TOOL is how to read the output: nccl-tests, dcgmi, perftest, nvbandwidth.\n"
	"\n"
	"Before running, nodegate asks COMMAND for its help text (COMMAND -h; for dcgmi,\n"
	"dcgmi SUBCOMMAND -h) and refuses to pass an option it does not list: an\n"
	"nccl-tests build that does not know -I prints usage and exits 0 having\n"
	"measured nothing. A missing binary, a timeout or a crash is a record with no\n"
	"samples that says so, never a pass.\n",
	.opts = run_opts,
	.help_tail =
	"Exit status: with --baseline, 0 when every judged record is admissible and\n"
	"1 when any is not; without, 0 when every record holds a measurement and 1\n"
	"when any holds none; 2 on usage errors.\n",
	.exec = exec_run,
};

struct run_args {
	struct ng_harness_opts h;
	const char *diag_path, *baseline_path, *cohort, *out_path;
	bool explain, json;
};


static bool parse_positive(const char *s, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*s == '\0' || *end || errno || !(v > 0) || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	double v;
	int c;
	/* "+": stop at the first non-option, so COMMAND's own options stay its own. */
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_run_entry, argc, argv);
	op.in_order = true;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'n':
			if (!parse_positive(op.arg, 100000, &v) || v != floor(v))
				return ng_cmd_usage_error(&ng_cmd_run_entry, "--repeat takes a whole number, 1 to 100000");
			a->h.repeat = (unsigned)v;
			break;
		case 't':
			if (!parse_positive(op.arg, 86400 * 7, &a->h.timeout_s))
				return ng_cmd_usage_error(&ng_cmd_run_entry, "--timeout takes seconds, more than 0");
			break;
		case 'r': a->h.raw_dir = op.arg; break;
		case 'C': a->h.cls = op.arg; break;
		case 'N': a->h.node = op.arg; break;
		case 'd': a->diag_path = op.arg; break;
		case 'b': a->baseline_path = op.arg; break;
		case 'c': a->cohort = op.arg; break;
		case 'e': a->explain = true; break;
		case 'j': a->json = true; break;
		case 'o': a->out_path = op.arg; break;
		case O_NO_PROBE: a->h.probe = false; break;
		case NG_OPT_EXIT: return op.status == NG_EXIT_OK ? -1 : op.status; /* -1: help given */
		}
	}
	return 0;
}

static int exec_run(struct ng_cli *cli, int argc, char **argv)
{
	static char host[256];
	struct run_args a = {.h = {.repeat = 1, .timeout_s = 600, .probe = true,
	                           .max_output = (size_t)256 << 20}};
	/* TOOL comes first; then nodegate's options; then "--" and the command. */
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		ng_cmd_print_help(&ng_cmd_run_entry, stdout);
		return NG_EXIT_OK;
	}
	if (argc < 2)
		return ng_cmd_usage_error(&ng_cmd_run_entry, "name a TOOL");
	a.h.parser = ng_parser_find(argv[1]);
	if (!a.h.parser)
		return ng_cmd_usage_error(&ng_cmd_run_entry,
		                          "unknown tool \"%s\" (nccl-tests, dcgmi, perftest, nvbandwidth)",
		                          argv[1]);
	int rc = parse_args(argc - 1, argv + 1, &a);
	if (rc != 0)
		return rc < 0 ? NG_EXIT_OK : rc;
	int cmd = optind + 1;
	if (cmd < argc && strcmp(argv[cmd - 1], "--") != 0 && strcmp(argv[cmd], "--") == 0)
		cmd++;
	if (cmd >= argc)
		return ng_cmd_usage_error(&ng_cmd_run_entry, "give the command to run after --");
	if ((a.cohort || a.explain) && !a.baseline_path)
		return ng_cmd_usage_error(&ng_cmd_run_entry, "--cohort-drops and --explain need --baseline");
	/* The node as admission keys it: its stable id, with the scheduler
	 * name beside it (docs/naming.md), unless --node names it. */
	char node_name[128] = "";
	if (!a.h.node) {
		ng_node_names(host, sizeof host, node_name, sizeof node_name);
		a.h.node = host;
	}
	a.h.argv = argv + cmd;
	a.h.argc = (size_t)(argc - cmd);

	ng_err err;
	cJSON *records = ng_harness_run(&a.h, &err);
	if (!records) {
		fprintf(stderr, "nodegate run: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	rc = NG_EXIT_OK;
	for (cJSON *r = records->child; node_name[0] && r; r = r->next)
		if (cJSON_IsObject(r) && !cJSON_HasObjectItem(r, "node_name"))
			cJSON_AddStringToObject(r, "node_name", node_name);
	if (a.diag_path && ng_apply_diag_file(records, a.diag_path, &err) < 0) {
		fprintf(stderr, "nodegate run: --diag %s\n", err.msg);
		rc = NG_EXIT_USAGE;
		goto out;
	}
	struct ng_emit_opts e = {.baseline_path = a.baseline_path, .cohort = a.cohort,
	                         .out_path = a.out_path, .explain = a.explain, .json = a.json};
	rc = ng_emit_records(cli, &ng_cmd_run_entry, records, &e);
out:
	cJSON_Delete(records);
	return rc;
}
