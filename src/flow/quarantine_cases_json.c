/* The quarantine cases as `nodegate quarantine ... --json` gives them
 * (flow/quarantine_cases.h). */
#include "core/json.h"
#include "flow/quarantine_cases.h"
#include "judge/evidence_summary.h"

#define SUMMARY_MAX 32

/* What a case's probation, lemon verdict and captured evidence add to it. */
static void add_extra(cJSON *o, const ng_case_view *v, const cJSON *captured)
{
	if (v->has_probation) {
		const ng_store_probation *p = &v->probation;
		cJSON *j = cJSON_AddObjectToObject(o, "probation");
		ng_json_add_time(j, "started_at", p->started_at);
		ng_json_add_time(j, "ended_at", p->ended_at);
		cJSON_AddStringToObject(j, "outcome", p->ended_at ? p->outcome : "in force");
		cJSON_AddStringToObject(j, "job", p->job);
		cJSON_AddStringToObject(j, "why", p->detail);
	}
	if (captured) {
		cJSON_AddItemToObject(o, "domain_evidence", cJSON_Duplicate(captured, true));
		char lines[SUMMARY_MAX][NG_SUMMARY_LINE];
		size_t n = ng_evidence_summary(captured, lines, SUMMARY_MAX);
		cJSON *sum = cJSON_AddArrayToObject(o, "evidence_summary");
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(sum, cJSON_CreateString(lines[i]));
	}
	if (v->lemon) {
		const ng_lemon_verdict *l = v->lemon;
		cJSON_AddBoolToObject(o, "lemon", l->lemon);
		cJSON *j = cJSON_AddObjectToObject(o, "repeat");
		cJSON_AddNumberToObject(j, "quarantines_in_window", (double)l->node_count);
		if (l->gpu[0]) {
			cJSON_AddStringToObject(j, "gpu", l->gpu);
			cJSON_AddNumberToObject(j, "gpu_quarantines_in_window", (double)l->gpu_count);
		}
		if (l->mtbi_s >= 0)
			cJSON_AddNumberToObject(j, "mean_seconds_between_incidents", l->mtbi_s);
		else
			cJSON_AddNullToObject(j, "mean_seconds_between_incidents");
		if (l->lemon) {
			cJSON_AddStringToObject(j, "why", l->why);
			cJSON_AddStringToObject(j, "replacement_evidence", l->replace);
		}
	}
}

/* The case; its recorded evidence only when with_evidence (a list leaves it
 * to `show`). */
static cJSON *case_json(const ng_case_view *v, long needed, const cJSON *captured,
                        bool with_evidence)
{
	const ng_store_case *c = &v->c;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)c->id);
	cJSON_AddStringToObject(o, "node", c->node);
	cJSON_AddStringToObject(o, "node_name", c->node_name);
	cJSON_AddStringToObject(o, "state", ng_case_state(v));
	cJSON_AddStringToObject(o, "class", c->class_key);
	cJSON_AddStringToObject(o, "software", c->software);
	cJSON_AddStringToObject(o, "domain", c->domain);
	cJSON_AddStringToObject(o, "metric", c->metric);
	ng_json_add_time(o, "opened_at", c->opened_at);
	cJSON_AddStringToObject(o, "release_condition", c->release_condition);
	cJSON_AddNumberToObject(o, "passes", (double)c->passes);
	cJSON_AddNumberToObject(o, "passes_needed", (double)needed);
	cJSON_AddNumberToObject(o, "retries", (double)c->retries);
	ng_json_add_time(o, "closed_at", c->closed_at);
	if (c->closed_at) {
		cJSON_AddStringToObject(o, "closed_by", c->closed_by);
		cJSON_AddStringToObject(o, "close_reason", c->close_reason);
	} else {
		cJSON_AddNullToObject(o, "closed_by");
		cJSON_AddNullToObject(o, "close_reason");
	}
	if (with_evidence) {
		cJSON *ev = c->evidence ? cJSON_Parse(c->evidence) : NULL;
		if (!ev && c->evidence && c->evidence[0])
			ev = cJSON_CreateString(c->evidence); /* kept as it was, whatever it is */
		cJSON_AddItemToObject(o, "evidence", ev ? ev : cJSON_CreateNull());
	}
	add_extra(o, v, captured);
	return o;
}

cJSON *ng_case_list_json(const ng_case_list *l, long passes_needed)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "cases");
	for (size_t i = 0; i < l->n; i++)
		cJSON_AddItemToArray(arr, case_json(&l->cases[i], passes_needed, NULL, false));
	return doc;
}

cJSON *ng_case_detail_json(const ng_case_detail *d, long passes_needed)
{
	return case_json(&d->view, passes_needed, d->captured, true);
}
