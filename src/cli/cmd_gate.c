/* nodegate gate: one or more records against a baseline, or a batch of cases
 * as JSON Lines on standard input (cmd_gate_batch.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "flow/gate_records.h"

static int exec_gate(struct ng_cli *cli, int argc, char **argv);

enum { O_BATCH = NG_OPT_LONG };

static const struct ng_opt gate_opts[] = {
	{"baseline", 'b', "FILE", "the baseline for the records' class: {\"class\", \"median\", \"cv\"}"},
	{"cohort-drops", 'c', "LIST", "fractional drops the rest of the cohort saw in the same\n"
	 "change, comma separated (0.12 = 12% slower than baseline)"},
	{"explain", 'e', NULL, "show the arithmetic behind each verdict"},
	NG_OPT_JSON("one JSON object per record instead of text"),
	{"batch", O_BATCH, NULL, "read cases as JSON Lines on standard input, one per line:\n"
	 "  {\"record\": {...}, \"baseline\": {...}, \"cohort_drops\": [...],\n"
	 "   \"history\": [raw verdicts], \"blocked\": bool,\n"
	 "   \"clear_after\": n, \"escalate_after\": n}\n"
	 "and write one JSON line per input line, in order:\n"
	 "  {\"verdict\": \"...\"} (+ \"effective\", \"blocked\" with history\n"
	 "  or blocked), or {\"error\": \"line N: ...\"}"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_gate_entry = {
	.name = "gate",
	.usage = "--baseline B.json [--cohort-drops D1,D2,...] [--explain] [--json] RECORD.json...\n"
	         "       nodegate gate --batch < CASES.jsonl",
	.summary = "Judge qualification runs against a baseline (fail-closed).",
	.help = "",
	.opts = gate_opts,
	.help_tail =
	"A record is one measurement run: {\"class\", \"samples\": [...], \"wrong\": N|null,\n"
	"\"diag\": {\"pcie\": \"pass\", ...}}, or an array of records (as --out of\n"
	"`nodegate run` and `nodegate probe` writes). RECORD \"-\" reads standard input.\n"
	"`nodegate verdicts` lists every verdict and where it lands.\n"
	"\n"
	"Exit status: 0 every record admissible (pass, warn); 1 any record not\n"
	"admissible; 2 usage or input error. With --batch: 0 every line judged,\n"
	"1 some line could not be judged, 2 usage error.\n",
	.exec = exec_gate,
};

/* How the verdicts of one file are shown, and the worst exit status. */
struct shown {
	const ng_policy *pol;
	bool explain, json, many;
	int rc;
};

/* Prints one record's verdict and keeps the exit status it contributes. */
static void show(void *arg, const char *label, bool element, const ng_gate_input *in,
                 const ng_gate_trace *t, ng_verdict v, const ng_err *bad)
{
	struct shown *sh = arg;
	bool many = element || sh->many;
	int rc;
	if (bad) {
		fprintf(stderr, "nodegate gate: %s: %s\n", label, bad->msg);
		rc = NG_EXIT_USAGE;
	} else {
		if (sh->json)
			ng_report_gate_json(stdout, label, t);
		else if (sh->explain)
			ng_report_gate_explain(stdout, label, in, t, sh->pol);
		else if (many)
			printf("%-23s %s  (%s)\n", ng_verdict_name(v), label, ng_gate_step_text(t->step));
		else
			printf("%s\n", ng_verdict_name(v));
		if (sh->explain && many && !sh->json)
			putchar('\n');
		rc = ng_verdict_admissible(v) ? NG_EXIT_OK : NG_EXIT_NOT_ADMISSIBLE;
	}
	sh->rc = rc > sh->rc ? rc : sh->rc;
}

/* Judges a record file (flow/gate_records.h), each record of an array
 * labelled FILE[i]. Returns the exit status. */
static int judge_file(struct ng_cli *cli, ng_gate_input *in, const char *path, bool explain,
                      bool json, bool many)
{
	ng_err err;
	struct shown sh = {&cli->policy, explain, json, many, NG_EXIT_OK};
	int r = ng_gate_file_judge(in, &cli->policy, path, show, &sh, &err);
	if (r == NG_GATE_FILE_UNREAD) {
		fprintf(stderr, "nodegate gate: %s\n", err.msg);
		return ng_exit_for(&err, NG_ERR_INPUT);
	}
	if (r == NG_GATE_FILE_EMPTY) {
		fprintf(stderr, "nodegate gate: %s holds an empty array: no record to judge\n", path);
		sh.rc = NG_EXIT_USAGE;
	}
	return sh.rc;
}

static int exec_gate(struct ng_cli *cli, int argc, char **argv)
{
	const char *baseline_path = NULL, *cohort_arg = NULL;
	bool explain = false, json = false, batch = false;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_gate_entry, argc, argv);
	op.in_order = true;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'b': baseline_path = op.arg; break;
		case 'c': cohort_arg = op.arg; break;
		case 'e': explain = true; break;
		case 'j': json = true; break;
		case O_BATCH: batch = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (batch) {
		if (baseline_path || cohort_arg || explain || json || optind < argc)
			return ng_cmd_usage_error(&ng_cmd_gate_entry,
			                          "--batch takes no other options or files: each line carries "
			                          "its own record, baseline and cohort");
		return ng_gate_batch(cli, stdin, stdout);
	}
	if (!baseline_path)
		return ng_cmd_usage_error(&ng_cmd_gate_entry, "--baseline is required");
	if (optind == argc)
		return ng_cmd_usage_error(&ng_cmd_gate_entry, "name at least one RECORD.json");

	ng_err err;
	ng_baseline_file b;
	int rc = ng_baseline_file_load(&b, baseline_path, cohort_arg, &err);
	if (rc == NG_GATE_BASELINE_UNREAD) {
		fprintf(stderr, "nodegate gate: baseline %s\n", err.msg);
		rc = ng_exit_for(&err, NG_ERR_INPUT);
		goto out;
	}
	if (rc == NG_GATE_BASELINE_INVALID)
		fprintf(stderr, "nodegate gate: baseline %s: %s\n", baseline_path, err.msg);
	else if (rc == NG_GATE_COHORT_LIST)
		ng_cmd_usage_error(&ng_cmd_gate_entry, "--cohort-drops: %s", err.msg);
	else if (rc < 0)
		fprintf(stderr, "nodegate gate: %s\n", err.msg);
	if (rc < 0) {
		rc = NG_EXIT_USAGE;
		goto out;
	}
	rc = NG_EXIT_OK;
	bool many = argc - optind > 1;
	for (int i = optind; i < argc; i++) {
		int r = judge_file(cli, &b.in, argv[i], explain, json, many);
		if (r > rc)
			rc = r;
	}
out:
	ng_baseline_file_release(&b);
	return rc;
}
