/* The report as JSON: the same content as the HTML page, for machines
 * ("schema": "nodegate/report/1"). Times are unix seconds, null when unset;
 * numbers that are not finite are null. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "flow/report_doc.h"

static void num(cJSON *o, const char *k, double v) { ng_json_add_number(o, k, v); }

static void tally(cJSON *o, const ng_gh_tally *t)
{
	num(o, "node_fault_gpu_hours", t->node_fault_hours);
	num(o, "job_failure_gpu_hours", t->job_failure_hours);
	num(o, "suspect_gpu_hours", t->suspect_hours);
	num(o, "node_fault_jobs", t->node_fault_jobs);
	num(o, "job_failure_jobs", t->job_failure_jobs);
	num(o, "suspect_jobs", t->suspect_jobs);
}

static const char *cls(const struct ng_report *r, long c)
{
	return c >= 0 ? r->class_map.keys[c] : NULL;
}

static cJSON *series_json(const struct ng_report *r, const struct ng_rseries *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "class", cls(r, (long)s->cls));
	cJSON_AddStringToObject(o, "metric", s->metric);
	cJSON_AddStringToObject(o, "unit", s->unit);
	cJSON *b = cJSON_AddObjectToObject(o, "baseline");
	cJSON_AddStringToObject(b, "status", s->baseline_status);
	num(b, "median", s->median);
	cJSON_AddStringToObject(b, "software", s->software);
	if (s->baseline_id)
		cJSON_AddNumberToObject(b, "id", (double)s->baseline_id);
	cJSON_AddNumberToObject(b, "nodes", (double)s->baseline_nodes);
	ng_json_add_time(b, "built_at", s->baseline_built);
	if (isfinite(s->prev_median)) {
		cJSON *p = cJSON_AddObjectToObject(o, "previous_baseline");
		num(p, "median", s->prev_median);
		cJSON_AddStringToObject(p, "software", s->prev_software);
	}
	num(o, "flag_fraction", r->flag_fraction);
	num(o, "floor", s->floor);
	num(o, "bar", s->bar);
	cJSON_AddNumberToObject(o, "flagged", (double)s->n_flagged);
	cJSON *pts = cJSON_AddArrayToObject(o, "nodes");
	for (size_t i = 0; i < s->n_pts; i++) {
		const struct ng_rnode *n = &r->nodes[s->pts[i].node];
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "node", n->name);
		cJSON_AddStringToObject(p, "node_id", n->id[0] ? n->id : n->name);
		num(p, "value", s->pts[i].value);
		cJSON_AddNumberToObject(p, "runs", (double)s->pts[i].runs);
		cJSON_AddStringToObject(p, "state", ng_report_state_of(r, s->pts[i].node));
		cJSON_AddBoolToObject(p, "flagged", isfinite(s->bar) && s->pts[i].value < s->bar);
		cJSON_AddItemToArray(pts, p);
	}
	return o;
}

static cJSON *case_json(const struct ng_report *r, const struct ng_rcase *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)c->c.id);
	cJSON_AddStringToObject(o, "node", r->nodes[c->node].name);
	cJSON_AddStringToObject(o, "node_id", c->c.node);
	cJSON_AddStringToObject(o, "class", c->c.class_key);
	cJSON_AddStringToObject(o, "software", c->c.software);
	cJSON_AddStringToObject(o, "domain", c->c.domain);
	cJSON_AddStringToObject(o, "metric", c->c.metric);
	ng_json_add_time(o, "opened_at", c->c.opened_at);
	cJSON_AddNumberToObject(o, "age_seconds",
	                        (double)((c->c.closed_at ? c->c.closed_at : r->o.now) - c->c.opened_at));
	cJSON_AddNumberToObject(o, "passes", (double)c->c.passes);
	cJSON_AddNumberToObject(o, "retries", (double)c->c.retries);
	cJSON_AddStringToObject(o, "release_condition", c->c.release_condition);
	ng_json_add_time(o, "closed_at", c->c.closed_at);
	if (c->c.closed_at) {
		cJSON_AddStringToObject(o, "closed_by", c->c.closed_by);
		cJSON_AddStringToObject(o, "close_reason", c->c.close_reason);
	}
	cJSON_AddStringToObject(o, "policy", c->policy[0] ? c->policy : "unrecorded");
	cJSON_AddStringToObject(o, "release", ng_case_class_name(c->klass));
	cJSON_AddBoolToObject(o, "in_fleet_event", c->in_fleet_event);
	if (c->c.closed_at) {
		cJSON_AddBoolToObject(o, "possible_false_reject",
		                      c->klass == NG_CASE_RELEASED_SAME_HW && !c->after_release);
		if (c->after_release)
			cJSON_AddStringToObject(o, "after_release", c->after_release);
		else
			cJSON_AddNullToObject(o, "after_release");
	}
	cJSON *ev = cJSON_Parse(c->c.evidence ? c->c.evidence : "{}");
	cJSON_AddItemToObject(o, "evidence", ev ? ev : cJSON_CreateNull());
	return o;
}

static cJSON *event_json(const struct ng_report *r, const struct ng_revent *e)
{
	(void)r;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)e->e.id);
	cJSON_AddStringToObject(o, "class", e->e.class_key);
	cJSON_AddStringToObject(o, "software", e->e.software);
	cJSON_AddStringToObject(o, "kind", e->e.kind[0] ? e->e.kind : "breaker");
	ng_json_add_time(o, "opened_at", e->e.opened_at);
	ng_json_add_time(o, "cleared_at", e->e.cleared_at);
	if (e->e.cleared_at) {
		cJSON_AddStringToObject(o, "cleared_by", e->e.cleared_by);
		cJSON_AddStringToObject(o, "clear_reason", e->e.clear_reason);
	}
	cJSON *sw = cJSON_AddObjectToObject(o, "software_change");
	cJSON_AddBoolToObject(sw, "coincided", e->software_changed);
	if (e->prev_software[0])
		cJSON_AddStringToObject(sw, "from", e->prev_software);
	else
		cJSON_AddNullToObject(sw, "from");
	ng_json_add_time(sw, "first_seen", e->software_first);
	cJSON *nodes = cJSON_Parse(e->e.nodes ? e->e.nodes : "[]");
	cJSON_AddItemToObject(o, "nodes", nodes ? nodes : cJSON_CreateArray());
	cJSON *d = cJSON_Parse(e->e.detail ? e->e.detail : "{}");
	cJSON_AddItemToObject(o, "detail", d ? d : cJSON_CreateObject());
	return o;
}

cJSON *ng_report_json(const struct ng_report *r)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "schema", "nodegate/report/1");
	cJSON_AddStringToObject(doc, "store", r->o.store_where);
	ng_json_add_time(doc, "from", r->since);
	ng_json_add_time(doc, "to", r->o.now);
	cJSON_AddNumberToObject(doc, "days", (double)r->o.days);
	cJSON_AddNumberToObject(doc, "nodes", (double)ng_report_nodes_shown(r));
	if (r->o.class_key)
		cJSON_AddStringToObject(doc, "class", r->o.class_key);
	else
		cJSON_AddNullToObject(doc, "class");
	cJSON *pol = cJSON_AddObjectToObject(doc, "policy");
	cJSON_AddStringToObject(pol, "digest", r->policy);
	num(pol, "flag_fraction", r->flag_fraction);
	cJSON_AddNumberToObject(pol, "breaker_count", (double)r->breaker_count);
	num(pol, "breaker_share", r->breaker_share);
	cJSON_AddNumberToObject(pol, "breaker_window_hours", (double)r->breaker_window_hours);
	cJSON_AddItemToObject(doc, "notes", cJSON_Duplicate(r->notes, true));

	cJSON *br = cJSON_AddArrayToObject(doc, "breaker");
	for (size_t c = 0; c < r->class_map.n; c++) {
		if (r->o.class_key && strcmp(r->o.class_key, r->class_map.keys[c]) != 0)
			continue;
		const struct ng_rclass *k = &r->classes[c];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "class", r->class_map.keys[c]);
		cJSON_AddNumberToObject(o, "nodes", (double)k->n_nodes);
		cJSON_AddNumberToObject(o, "quarantined_in_window", (double)k->recent_quarantines);
		cJSON_AddNumberToObject(o, "open_cases", (double)k->open_cases);
		cJSON_AddStringToObject(o, "state", k->open_event >= 0 ? "tripped" : "armed");
		if (k->open_event >= 0)
			cJSON_AddNumberToObject(o, "event", (double)r->events[k->open_event].e.id);
		else
			cJSON_AddNullToObject(o, "event");
		cJSON_AddStringToObject(o, "software", k->software);
		cJSON_AddItemToArray(br, o);
	}

	cJSON *tl = cJSON_AddArrayToObject(doc, "timeline");
	static const char *const names[NG_RDAY_OUTCOMES] = {"admitted", "admitted-warn", "held",
	                                                    "suspect", "quarantined"};
	for (size_t d = 0; d < r->n_days; d++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "day", (double)(r->since + (int64_t)d * 86400));
		for (int k = 0; k < NG_RDAY_OUTCOMES; k++)
			cJSON_AddNumberToObject(o, names[k], (double)r->days[d].outcomes[k]);
		cJSON_AddNumberToObject(o, "gpu_faults", (double)r->days[d].gpu_faults);
		cJSON_AddItemToArray(tl, o);
	}
	cJSON *sw = cJSON_AddArrayToObject(doc, "software");
	for (size_t i = 0; i < r->n_sw; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "class", cls(r, (long)r->sw[i].cls));
		cJSON_AddStringToObject(o, "software", r->sw[i].software);
		ng_json_add_time(o, "first_seen", r->sw[i].first);
		ng_json_add_time(o, "last_seen", r->sw[i].last);
		cJSON_AddItemToArray(sw, o);
	}
	cJSON *ce = cJSON_AddObjectToObject(doc, "config_errors");
	cJSON_AddNumberToObject(ce, "nodes", (double)r->config_error_nodes);
	cJSON *cel = cJSON_AddArrayToObject(ce, "by_node");
	for (size_t i = 0; i < r->n_config_errors; i++) {
		const ng_store_config_error *e = &r->config_errors[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", e->node);
		cJSON_AddStringToObject(o, "verb", e->verb);
		cJSON_AddStringToObject(o, "kind", e->kind);
		cJSON_AddNumberToObject(o, "count", (double)e->count);
		ng_json_add_time(o, "last", e->at);
		cJSON_AddStringToObject(o, "message", e->message);
		cJSON_AddItemToArray(cel, o);
	}
	cJSON_AddItemToObject(doc, "attention", ng_report_json_attention(r));
	cJSON *ev = cJSON_AddArrayToObject(doc, "fleet_events");
	for (size_t k = 0; k < r->n_events; k++)
		cJSON_AddItemToArray(ev, event_json(r, &r->events[k]));
	cJSON *q = cJSON_AddArrayToObject(doc, "quarantine");
	cJSON *rel = cJSON_AddArrayToObject(doc, "released");
	for (size_t i = 0; i < r->n_cases; i++)
		cJSON_AddItemToArray(r->cases[i].c.closed_at ? rel : q, case_json(r, &r->cases[i]));

	struct ng_gpu_check_summary gs;
	ng_report_gpu_checks(r, &gs);
	cJSON *gc = cJSON_AddObjectToObject(doc, "gpu_checks");
	cJSON_AddNumberToObject(gc, "nodes", (double)gs.nodes);
	cJSON *mf = cJSON_AddObjectToObject(gc, "monitoring_failure");
	cJSON_AddNumberToObject(mf, "nodes", (double)gs.failing);
	cJSON_AddBoolToObject(mf, "fleet_event", gs.event);
	cJSON *last = cJSON_AddArrayToObject(gc, "last");
	for (size_t i = 0; i < r->n_gpu_runs; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", r->gpu_runs[i].node);
		cJSON_AddStringToObject(o, "mode", r->gpu_runs[i].mode);
		cJSON_AddStringToObject(o, "outcome", r->gpu_runs[i].outcome);
		ng_json_add_time(o, "at", r->gpu_runs[i].at);
		cJSON_AddItemToArray(last, o);
	}

	cJSON *gh = cJSON_AddObjectToObject(doc, "gpu_hours");
	cJSON_AddStringToObject(gh, "source", r->jobs_source);
	cJSON_AddBoolToObject(gh, "available", r->have_jobs);
	if (r->have_jobs) {
		cJSON *t = cJSON_AddObjectToObject(gh, "total");
		tally(t, &r->gh_total);
		cJSON *c = cJSON_AddObjectToObject(gh, "jobs");
		cJSON_AddNumberToObject(c, "in_window", (double)r->gh_counts.jobs_in_window);
		cJSON_AddNumberToObject(c, "without_hours", (double)r->gh_counts.jobs_no_hours);
		cJSON_AddNumberToObject(c, "node_fault", (double)r->gh_counts.jobs_node_fault);
		cJSON_AddNumberToObject(c, "node_fault_unlocated",
		                        (double)r->gh_counts.jobs_node_fault_unlocated);
		cJSON_AddNumberToObject(c, "job_failure", (double)r->gh_counts.jobs_job_failure);
		cJSON_AddNumberToObject(c, "suspect", (double)r->gh_counts.jobs_suspect);
		cJSON_AddNumberToObject(c, "lines_not_read", (double)r->sacct_bad);
		cJSON *byc = cJSON_AddArrayToObject(gh, "by_class");
		for (size_t k = 0; k < r->class_map.n; k++) {
			if (r->o.class_key && strcmp(r->o.class_key, r->class_map.keys[k]) != 0)
				continue;
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "class", r->class_map.keys[k]);
			tally(o, &r->classes[k].gh);
			cJSON_AddItemToArray(byc, o);
		}
	}
	cJSON *top = cJSON_AddArrayToObject(gh, "top_nodes");
	size_t n = 0;
	size_t *idx = ng_report_top_nodes(r, &n);
	for (size_t i = 0; idx && i < n; i++) {
		const struct ng_rnode *nd = &r->nodes[idx[i]];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", nd->name);
		cJSON_AddStringToObject(o, "node_id", nd->id[0] ? nd->id : nd->name);
		if (nd->cls >= 0)
			cJSON_AddStringToObject(o, "class", cls(r, nd->cls));
		else
			cJSON_AddNullToObject(o, "class");
		cJSON_AddStringToObject(o, "state", ng_report_state_of(r, idx[i]));
		if (r->have_jobs)
			tally(o, &nd->gh);
		cJSON_AddNumberToObject(o, "epilog_faults", (double)nd->epilog_faults);
		cJSON_AddNumberToObject(o, "health_faults", (double)nd->health_faults);
		cJSON_AddNumberToObject(o, "quarantines", (double)nd->quarantines);
		cJSON_AddItemToArray(top, o);
	}
	free(idx);

	cJSON *fr = cJSON_AddObjectToObject(doc, "false_rejects");
	cJSON_AddNumberToObject(fr, "straggle_days", (double)r->o.straggle_days);
	cJSON_AddNumberToObject(fr, "admissions", (double)r->admissions);
	cJSON_AddNumberToObject(fr, "later_stragglers", (double)r->straggled);
	cJSON *rows = cJSON_AddArrayToObject(fr, "by_class_and_policy");
	for (size_t i = 0; i < r->n_fr; i++) {
		const struct ng_rfr *f = &r->fr[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "class", cls(r, (long)f->cls));
		cJSON_AddStringToObject(o, "policy", f->policy);
		cJSON_AddNumberToObject(o, "admissions", (double)f->admissions);
		cJSON_AddNumberToObject(o, "later_stragglers", (double)f->straggled);
		cJSON_AddNumberToObject(o, "quarantines", (double)f->quarantines);
		cJSON_AddNumberToObject(o, "released_same_hardware", (double)f->released_same);
		cJSON_AddNumberToObject(o, "possible_false_rejects", (double)f->possible_false_rejects);
		cJSON_AddNumberToObject(o, "released_hardware_changed", (double)f->released_changed);
		cJSON_AddNumberToObject(o, "released_hardware_unknown", (double)f->released_unknown);
		cJSON_AddNumberToObject(o, "still_open", (double)f->still_open);
		cJSON_AddItemToArray(rows, o);
	}
	cJSON *cl = cJSON_AddArrayToObject(doc, "classes");
	for (size_t c = 0; c < r->class_map.n; c++) {
		bool any = false;
		for (size_t s = 0; s < r->n_series; s++)
			any |= r->series[s].cls == c;
		if (!any)
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "class", r->class_map.keys[c]);
		cJSON *ms = cJSON_AddArrayToObject(o, "metrics");
		for (size_t s = 0; s < r->n_series; s++)
			if (r->series[s].cls == c)
				cJSON_AddItemToArray(ms, series_json(r, &r->series[s]));
		cJSON_AddItemToArray(cl, o);
	}
	return doc;
}
