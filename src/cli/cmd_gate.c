/* nodegate gate: one or more records against a baseline, or a batch of cases
 * as JSON Lines on standard input (cmd_gate_batch.c). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/record.h"
#include "judge/gate.h"

static int exec_gate(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_gate_entry = {
	.name = "gate",
	.usage = "--baseline B.json [--cohort-drops D1,D2,...] [--explain] [--json] RECORD.json...\n"
	         "       nodegate gate --batch < CASES.jsonl",
	.summary = "Judge qualification runs against a baseline (fail-closed).",
	.help =
	"Options:\n"
	"  -b, --baseline FILE     the baseline for the records' class: {\"class\", \"median\", \"cv\"}\n"
	"  -c, --cohort-drops LIST fractional drops the rest of the cohort saw in the same\n"
	"                          change, comma separated (0.12 = 12%% slower than baseline)\n"
	"  -e, --explain           show the arithmetic behind each verdict\n"
	"  -j, --json              one JSON object per record instead of text\n"
	"      --batch             read cases as JSON Lines on standard input, one per line:\n"
	"                            {\"record\": {...}, \"baseline\": {...}, \"cohort_drops\": [...],\n"
	"                             \"history\": [raw verdicts], \"blocked\": bool,\n"
	"                             \"clear_after\": n, \"escalate_after\": n}\n"
	"                          and write one JSON line per input line, in order:\n"
	"                            {\"verdict\": \"...\"} (+ \"effective\", \"blocked\" with history\n"
	"                            or blocked), or {\"error\": \"line N: ...\"}\n"
	"  -h, --help              this text\n"
	"\n"
	"A record is one measurement run: {\"class\", \"samples\": [...], \"wrong\": N|null,\n"
	"\"diag\": {\"pcie\": \"pass\", ...}}. RECORD \"-\" reads standard input.\n"
	"`nodegate verdicts` lists every verdict and where it lands.\n"
	"\n"
	"Exit status: 0 every record admissible (pass, warn); 1 any record not\n"
	"admissible; 2 usage or input error. With --batch: 0 every line judged,\n"
	"1 some line could not be judged, 2 usage error.\n",
	.exec = exec_gate,
};

static const char *pct(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f%%", v * 100.0);
	return buf;
}

static void print_explain(FILE *out, const char *path, const ng_gate_input *in,
                          const ng_gate_trace *t, const ng_policy *pol)
{
	const struct ng_verdict_info *vi = ng_verdict_info(t->verdict);
	char a[32], b[32], c[32];
	fprintf(out, "record      %s\n", path);
	fprintf(out, "verdict     %s (%s)\n", vi->name, vi->admissible ? "admissible" : "not admissible");
	fprintf(out, "decided by  %s", ng_gate_step_text(t->step));
	if (t->diag_test)
		fprintf(out, " (%s)", t->diag_test);
	fprintf(out, "\nlands       %s\n", vi->lands);
	fprintf(out, "baseline    median %.6g, cv %.6g\n", in->base.median, in->base.cv);
	fprintf(out, "samples     n=%zu", t->n);
	if (!isnan(t->median))
		fprintf(out, ", median %.6g", t->median);
	if (!isnan(t->spread))
		fprintf(out, ", spread %s (unstable above %s)", pct(a, sizeof a, t->spread),
		        pct(b, sizeof b, pol->unstable_cv_multiple * in->base.cv));
	fputc('\n', out);
	if (!isnan(t->ratio))
		fprintf(out, "ratio       %.4f (implausible at or below %g, at or above %g)\n", t->ratio,
		        pol->slow, pol->fast);
	if (!isnan(t->drop)) {
		fprintf(out, "drop        %s; bars: warn %s, block %s\n", pct(a, sizeof a, t->drop),
		        pct(b, sizeof b, pol->warn), pct(c, sizeof c, pol->block));
		fprintf(out, "noise bar   %s = %g x cv %g / sqrt(%zu)\n", pct(a, sizeof a, t->noise_bar),
		        pol->noise_sigmas, in->base.cv, t->n);
		fprintf(out, "slow share  %s of samples under %.6g (bimodal at %s)\n",
		        pct(a, sizeof a, t->slow_fraction), in->base.median * (1 - pol->block),
		        pct(b, sizeof b, pol->bimodal_fraction));
	}
	if (t->cohort_n || t->step == NG_STEP_FLEET || t->step == NG_STEP_BLOCK ||
	    t->step == NG_STEP_WARN) {
		fprintf(out, "cohort      %zu drops, %zu valid (need all valid and at least %ld)", t->cohort_n,
		        t->cohort_valid, pol->cohort_min);
		if (!isnan(t->cohort_past_warn))
			fprintf(out, ", %s past the warn bar (need %s)", pct(a, sizeof a, t->cohort_past_warn),
			        pct(b, sizeof b, pol->cohort_majority));
		if (!isnan(t->cohort_median))
			fprintf(out, ", median drop %s; node minus cohort %s vs noise %s",
			        pct(a, sizeof a, t->cohort_median), pct(b, sizeof b, t->drop - t->cohort_median),
			        pct(c, sizeof c, t->noise_bar));
		fputc('\n', out);
	}
}

static void print_json(FILE *out, const char *path, const ng_gate_trace *t)
{
	const struct ng_verdict_info *vi = ng_verdict_info(t->verdict);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "record", path);
	cJSON_AddStringToObject(o, "verdict", vi->name);
	cJSON_AddBoolToObject(o, "admissible", vi->admissible);
	cJSON_AddStringToObject(o, "decided_by", ng_gate_step_text(t->step));
	if (t->diag_test)
		cJSON_AddStringToObject(o, "diag_test", t->diag_test);
	cJSON_AddStringToObject(o, "lands", vi->lands);
	cJSON *e = cJSON_AddObjectToObject(o, "explain");
	cJSON_AddNumberToObject(e, "n", (double)t->n);
	ng_json_add_number(e, "median", t->median);
	ng_json_add_number(e, "spread", t->spread);
	ng_json_add_number(e, "ratio", t->ratio);
	ng_json_add_number(e, "drop", t->drop);
	ng_json_add_number(e, "noise_bar", t->noise_bar);
	ng_json_add_number(e, "slow_fraction", t->slow_fraction);
	cJSON_AddNumberToObject(e, "cohort_n", (double)t->cohort_n);
	cJSON_AddNumberToObject(e, "cohort_valid", (double)t->cohort_valid);
	ng_json_add_number(e, "cohort_median", t->cohort_median);
	ng_json_add_number(e, "cohort_past_warn", t->cohort_past_warn);
	char *s = cJSON_PrintUnformatted(o);
	if (s)
		fprintf(out, "%s\n", s);
	free(s);
	cJSON_Delete(o);
}

/* Judges one record file. Returns the exit status it contributes. */
static int judge_file(struct ng_cli *cli, ng_gate_input *in, const char *path, bool explain,
                      bool json, bool many)
{
	ng_err err;
	char *text;
	size_t len;
	cJSON *doc = ng_load_json_file(path, &text, &len, &err);
	if (!doc) {
		fprintf(stderr, "nodegate gate: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	ng_json_source src = {text, len, doc};
	int rc = NG_EXIT_USAGE;
	if (ng_gate_input_record(in, doc, &src, &err) < 0) {
		fprintf(stderr, "nodegate gate: %s: %s\n", path, err.msg);
		goto out;
	}
	ng_gate_trace t;
	ng_verdict v = ng_gate_input_judge(in, &cli->policy, &t);
	if (json)
		print_json(stdout, path, &t);
	else if (explain)
		print_explain(stdout, path, in, &t, &cli->policy);
	else if (many)
		printf("%-23s %s  (%s)\n", ng_verdict_name(v), path, ng_gate_step_text(t.step));
	else
		printf("%s\n", ng_verdict_name(v));
	if (explain && many && !json)
		putchar('\n');
	rc = ng_verdict_admissible(v) ? NG_EXIT_OK : NG_EXIT_NOT_ADMISSIBLE;
out:
	cJSON_Delete(doc);
	free(text);
	return rc;
}

static int exec_gate(struct ng_cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"baseline", required_argument, NULL, 'b'},
		{"cohort-drops", required_argument, NULL, 'c'},
		{"explain", no_argument, NULL, 'e'},
		{"json", no_argument, NULL, 'j'},
		{"batch", no_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *baseline_path = NULL, *cohort_arg = NULL;
	bool explain = false, json = false, batch = false;
	int c;
	while ((c = getopt_long(argc, argv, "+b:c:ejh", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': baseline_path = optarg; break;
		case 'c': cohort_arg = optarg; break;
		case 'e': explain = true; break;
		case 'j': json = true; break;
		case 'B': batch = true; break;
		case 'h': ng_cmd_print_help(&ng_cmd_gate_entry, stdout); return NG_EXIT_OK;
		default: return ng_cmd_usage_error(&ng_cmd_gate_entry, "unrecognised option");
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
	ng_gate_input in = {0};
	int rc = NG_EXIT_USAGE;
	char *btext = NULL;
	size_t blen;
	cJSON *bdoc = ng_load_json_file(baseline_path, &btext, &blen, &err);
	if (!bdoc) {
		fprintf(stderr, "nodegate gate: baseline %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	if (ng_gate_input_baseline(&in, bdoc, &err) < 0) {
		fprintf(stderr, "nodegate gate: baseline %s: %s\n", baseline_path, err.msg);
		goto out;
	}
	if (cohort_arg) {
		double *drops;
		size_t n;
		if (ng_parse_number_list(cohort_arg, &drops, &n, &err) < 0) {
			rc = ng_cmd_usage_error(&ng_cmd_gate_entry, "--cohort-drops: %s", err.msg);
			goto out;
		}
		int r = ng_gate_input_cohort(&in, drops, n, &err);
		free(drops);
		if (r < 0) {
			fprintf(stderr, "nodegate gate: %s\n", err.msg);
			goto out;
		}
	}
	rc = NG_EXIT_OK;
	bool many = argc - optind > 1;
	for (int i = optind; i < argc; i++) {
		int r = judge_file(cli, &in, argv[i], explain, json, many);
		if (r > rc)
			rc = r;
	}
out:
	ng_gate_input_free(&in);
	cJSON_Delete(bdoc);
	free(btext);
	return rc;
}
