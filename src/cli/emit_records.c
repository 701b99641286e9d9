/* What every measuring verb does with its records: show them (a readable
 * table, or JSON), keep them (--out, atomically), and judge them with the gate
 * (--baseline). The exit status follows from the verdicts, or, without a
 * baseline, from whether every record holds a measurement. */
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/atomic_file.h"
#include "flow/gate_records.h"

struct shown {
	struct ng_cli *cli;
	const struct ng_emit_opts *o;
	cJSON *verdicts;
};

/* One judged record, shown as --json, --explain or a line asks. */
static void show(void *arg, const char *metric, const ng_gate_input *in, const ng_gate_trace *t,
                 ng_verdict v)
{
	struct shown *sh = arg;
	if (sh->o->json) {
		cJSON_AddItemToArray(sh->verdicts, ng_gate_verdict_json(metric, t, v));
	} else if (sh->o->explain) {
		putchar('\n');
		ng_report_gate_explain(stdout, metric, in, t, &sh->cli->policy);
	} else {
		printf("verdict  %-23s %s  (%s)\n", ng_verdict_name(v), metric, ng_gate_step_text(t->step));
	}
}

/* Judges the records with the gate (flow/gate_records.h). Returns the exit
 * status. */
static int judge(struct ng_cli *cli, const struct ng_cmd_entry *cmd, const struct ng_emit_opts *a,
                 cJSON *records, cJSON *verdicts)
{
	ng_err err;
	ng_baseline_file b;
	int rc = ng_baseline_file_load(&b, a->baseline_path, a->cohort, &err);
	if (rc == 0) {
		struct shown sh = {cli, a, verdicts};
		int all = ng_gate_records_judge(&b, &cli->policy, records, show, &sh, &err);
		if (all < 0)
			fprintf(stderr, "nodegate %s: %s\n", cmd->name, err.msg);
		rc = all < 0 ? NG_EXIT_USAGE : all ? NG_EXIT_OK : NG_EXIT_NOT_ADMISSIBLE;
	} else if (rc == NG_GATE_BASELINE_UNREAD) {
		fprintf(stderr, "nodegate %s: baseline %s\n", cmd->name, err.msg);
		rc = NG_EXIT_USAGE;
	} else if (rc == NG_GATE_BASELINE_INVALID) {
		fprintf(stderr, "nodegate %s: baseline %s: %s\n", cmd->name, a->baseline_path, err.msg);
		rc = NG_EXIT_USAGE;
	} else if (rc == NG_GATE_COHORT_LIST) {
		rc = ng_cmd_usage_error(cmd, "--cohort-drops: %s", err.msg);
	} else {
		fprintf(stderr, "nodegate %s: %s\n", cmd->name, err.msg);
		rc = NG_EXIT_USAGE;
	}
	ng_baseline_file_release(&b);
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
