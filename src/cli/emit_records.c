/* What every measuring verb does with its records: show them (a readable
 * table, or JSON), keep them (--out, atomically), and judge them with the gate
 * (--baseline). The exit status follows from the verdicts, or, without a
 * baseline, from whether every record holds a measurement. */
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "judge/record.h"

/* Judges the records the baseline is for (its metric, when it names one) and
 * every record that measured nothing. Returns the exit status. */
static int judge(struct ng_cli *cli, const struct ng_cmd_entry *cmd, const struct ng_emit_opts *a,
                 cJSON *records, cJSON *verdicts)
{
	ng_err err;
	char *btext;
	size_t blen;
	cJSON *bdoc = ng_load_json_file(a->baseline_path, &btext, &blen, &err);
	if (!bdoc) {
		fprintf(stderr, "nodegate %s: baseline %s\n", cmd->name, err.msg);
		return NG_EXIT_USAGE;
	}
	ng_gate_input in = {0};
	int rc = NG_EXIT_OK;
	if (ng_gate_input_baseline(&in, bdoc, &err) < 0) {
		fprintf(stderr, "nodegate %s: baseline %s: %s\n", cmd->name, a->baseline_path, err.msg);
		rc = NG_EXIT_USAGE;
		goto out;
	}
	if (a->cohort) {
		double *d;
		size_t n;
		if (ng_parse_number_list(a->cohort, &d, &n, &err) < 0) {
			rc = ng_cmd_usage_error(cmd, "--cohort-drops: %s", err.msg);
			goto out;
		}
		ng_gate_input_cohort(&in, d, n, &err);
		free(d);
	}
	const cJSON *bmetric = ng_json_get(bdoc, "metric");
	for (const cJSON *r = records->child; r; r = r->next) {
		const cJSON *m = ng_json_get(r, "metric");
		const char *metric = cJSON_IsString(m) ? m->valuestring : "(no metric)";
		if (cJSON_IsString(bmetric) && strcmp(metric, bmetric->valuestring) != 0 &&
		    ng_record_measured(r))
			continue;
		if (ng_gate_input_record(&in, r, NULL, &err) < 0) {
			fprintf(stderr, "nodegate %s: %s\n", cmd->name, err.msg);
			rc = NG_EXIT_USAGE;
			break;
		}
		ng_gate_trace t;
		ng_verdict v = ng_gate_input_judge(&in, &cli->policy, &t);
		if (a->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "metric", metric);
			cJSON_AddStringToObject(o, "verdict", ng_verdict_name(v));
			cJSON_AddBoolToObject(o, "admissible", ng_verdict_admissible(v));
			cJSON_AddStringToObject(o, "decided_by", ng_gate_step_text(t.step));
			cJSON_AddItemToArray(verdicts, o);
		} else if (a->explain) {
			putchar('\n');
			ng_report_gate_explain(stdout, metric, &in, &t, &cli->policy);
		} else {
			printf("verdict  %-23s %s  (%s)\n", ng_verdict_name(v), metric,
			       ng_gate_step_text(t.step));
		}
		if (!ng_verdict_admissible(v) && rc == NG_EXIT_OK)
			rc = NG_EXIT_NOT_ADMISSIBLE;
	}
out:
	ng_gate_input_free(&in);
	cJSON_Delete(bdoc);
	free(btext);
	return rc;
}

int ng_emit_records(struct ng_cli *cli, const struct ng_cmd_entry *cmd, cJSON *records,
                    const struct ng_emit_opts *o)
{
	ng_err err;
	if ((o->cohort || o->explain) && !o->baseline_path)
		return ng_cmd_usage_error(cmd, "--cohort-drops and --explain need --baseline");
	if (o->out_path) {
		char *s = cJSON_Print(records);
		int w = s ? ng_write_file_atomic(o->out_path, s, strlen(s), &err) : ng_fail(&err, "out of memory");
		free(s);
		if (w < 0) {
			fprintf(stderr, "nodegate %s: --out: %s\n", cmd->name, err.msg);
			return NG_EXIT_USAGE;
		}
	}
	int rc = NG_EXIT_OK;
	cJSON *verdicts = cJSON_CreateArray();
	if (!o->json)
		ng_print_record_table(stdout, records);
	if (o->baseline_path) {
		rc = judge(cli, cmd, o, records, verdicts);
	} else {
		for (const cJSON *r = records->child; r; r = r->next)
			if (!ng_record_measured(r))
				rc = NG_EXIT_NOT_ADMISSIBLE;
	}
	if (o->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddItemReferenceToObject(doc, "records", records);
		if (o->baseline_path)
			cJSON_AddItemReferenceToObject(doc, "verdicts", verdicts);
		char *s = cJSON_Print(doc);
		if (s)
			printf("%s\n", s);
		free(s);
		cJSON_Delete(doc);
	}
	cJSON_Delete(verdicts);
	return rc;
}
