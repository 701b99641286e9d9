#include "flow/gate_records.h"

#include "core/json.h"

cJSON *ng_gate_trace_json(const char *label, const ng_gate_trace *t)
{
	const struct ng_verdict_info *vi = ng_verdict_info(t->verdict);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "record", label);
	cJSON_AddStringToObject(o, "verdict", vi->name);
	cJSON_AddBoolToObject(o, "admissible", vi->admissible);
	cJSON_AddStringToObject(o, "decided_by", ng_gate_step_text(t->step));
	if (t->diag_test)
		cJSON_AddStringToObject(o, "diag_test", t->diag_test);
	if (t->record_says && t->baseline_says) {
		cJSON_AddStringToObject(o, "record_says", t->record_says);
		cJSON_AddStringToObject(o, "baseline_says", t->baseline_says);
	}
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
	return o;
}

cJSON *ng_gate_verdict_json(const char *metric, const ng_gate_trace *t, ng_verdict v)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "metric", metric);
	cJSON_AddStringToObject(o, "verdict", ng_verdict_name(v));
	cJSON_AddBoolToObject(o, "admissible", ng_verdict_admissible(v));
	cJSON_AddStringToObject(o, "decided_by", ng_gate_step_text(t->step));
	return o;
}
