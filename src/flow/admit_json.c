/* How an admission run reads for machines: one JSON object, what `admit
 * --json` prints and what the --on-verdict program is given. */
#include <math.h>
#include <string.h>

#include "flow/admit.h"

const char *ng_admit_status_of(const struct ng_admit_judged *j)
{
	return j->judged ? ng_admit_metric_status_name(j->line.status) : "not-judged";
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *ng_admit_json(const struct ng_admit_run *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", "nodegate/admission/1");
	cJSON_AddStringToObject(o, "node", r->node);
	cJSON_AddStringToObject(o, "node_name", r->node_name);
	cJSON_AddStringToObject(o, "class", r->class_key);
	cJSON_AddStringToObject(o, "software", r->software);
	cJSON_AddStringToObject(o, "run", r->run_id);
	cJSON_AddNumberToObject(o, "at", (double)r->now);
	cJSON_AddStringToObject(o, "outcome", r->outcome);
	cJSON_AddStringToObject(o, "judged", ng_admit_outcome_name(r->d.outcome));
	if (r->recheck_at)
		cJSON_AddNumberToObject(o, "recheck_at", (double)r->recheck_at);
	else
		cJSON_AddNullToObject(o, "recheck_at");
	if (r->case_id)
		cJSON_AddNumberToObject(o, "case", (double)r->case_id);
	else
		cJSON_AddNullToObject(o, "case");
	if (r->fleet_event)
		cJSON_AddNumberToObject(o, "fleet_event", (double)r->fleet_event);
	/* Cases this run withdrew: the first node of a drop it shares. */
	cJSON_AddItemToObject(o, "withdrawn", r->withdrawn ? cJSON_Duplicate(r->withdrawn, true)
	                                                   : cJSON_CreateArray());
	cJSON *confirm = cJSON_AddArrayToObject(o, "confirm");
	for (size_t i = 0; r->d.outcome == NG_ADMIT_SUSPECT && i < r->d.n_confirm; i++)
		cJSON_AddItemToArray(confirm, cJSON_CreateString(r->d.confirm[i]));
	cJSON *results = cJSON_AddArrayToObject(o, "results");
	for (size_t i = 0; i < r->n; i++) {
		const struct ng_admit_judged *j = &r->j[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "stage", j->stage);
		cJSON_AddStringToObject(x, "domain", j->res.domain);
		cJSON_AddStringToObject(x, "metric", j->metric);
		cJSON_AddStringToObject(x, "unit", j->unit);
		add_num(x, "value", j->res.value);
		add_num(x, "baseline_median", j->res.baseline_median);
		add_num(x, "floor", j->res.floor);
		add_num(x, "bar", j->line.flag.bar);
		add_num(x, "percent_of_median", j->line.flag.percent);
		cJSON_AddBoolToObject(x, "flagged", j->line.flag.flagged);
		cJSON_AddStringToObject(x, "gate", ng_verdict_name(j->raw));
		cJSON_AddStringToObject(x, "hysteresis", ng_verdict_name(j->effective));
		cJSON_AddStringToObject(x, "status", ng_admit_status_of(j));
		cJSON *b = cJSON_AddObjectToObject(x, "baseline");
		cJSON_AddStringToObject(b, "status", j->base.status);
		if (j->have_base)
			cJSON_AddNumberToObject(b, "id", (double)j->base.id);
		add_num(b, "cv", j->base.cv);
		cJSON_AddNumberToObject(b, "nodes", (double)j->base.n_nodes);
		if (j->pool.df > (double)j->base.n_nodes - 1) {
			/* The small class's bar took its spread from its family. */
			cJSON *f = cJSON_AddObjectToObject(b, "family");
			cJSON_AddStringToObject(f, "key", j->family);
			cJSON_AddNumberToObject(f, "classes", (double)j->pool.classes);
			cJSON_AddNumberToObject(f, "degrees_of_freedom", j->pool.df);
		}
		if (j->res.own_runs > 0) {
			/* Where this node has read (admission.own_level_runs). */
			cJSON *own = cJSON_AddObjectToObject(x, "own_level");
			add_num(own, "level", j->res.own_level);
			add_num(own, "spread", j->res.own_spread);
			cJSON_AddNumberToObject(own, "runs", (double)j->res.own_runs);
			add_num(own, "bar", j->line.own_bar > 0 ? j->line.own_bar : NAN);
			cJSON_AddBoolToObject(own, "decides", j->line.own_decides);
			if (j->res.own_recent_runs > 0) {
				/* The newest runs' mean (admission.own_level_recent). */
				cJSON *rec = cJSON_AddObjectToObject(own, "recent");
				add_num(rec, "mean", j->res.own_recent);
				cJSON_AddNumberToObject(rec, "runs", (double)j->res.own_recent_runs);
				add_num(rec, "bar", j->line.own_recent_bar > 0 ? j->line.own_recent_bar : NAN);
				cJSON_AddBoolToObject(rec, "decides", j->line.own_recent_decides);
			}
		}
		cJSON_AddNumberToObject(x, "cohort_nodes", (double)j->n_cohort);
		cJSON_AddNumberToObject(x, "record", (double)j->record_id);
		cJSON_AddItemToArray(results, x);
	}
	cJSON *because = cJSON_AddArrayToObject(o, "because");
	for (size_t i = 0; i < r->d.n_named; i++) {
		const struct ng_admit_judged *j = ng_admit_judged_of(r, r->d.named[i]);
		if (!j)
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "stage", j->stage);
		cJSON_AddStringToObject(x, "metric", j->metric);
		cJSON_AddNumberToObject(x, "record", (double)j->record_id);
		cJSON_AddItemToArray(because, x);
	}
	cJSON_AddItemToObject(o, "notes", cJSON_Duplicate(r->notes, true));
	return o;
}
