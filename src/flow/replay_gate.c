/* The gate judged again in a replay (flow/replay_gate.h). */
#include "flow/replay_gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/strbuf.h"
#include "judge/record.h"

enum reason { R_NO_RECORD, R_RECORD_GONE, R_RECORD_UNREADABLE, R_BASELINE_GONE, R_CONTROL, R_COUNT };

static const struct {
	const char *key, *why;
} reasons[R_COUNT] = {
	[R_NO_RECORD] = {"no_record", "the verdict line names no record (written without one, as "
	                              "bench/fleetgen writes its lines): the gate's input is not kept"},
	[R_RECORD_GONE] = {"record_gone", "the record the gate judged is no longer in the store"},
	[R_RECORD_UNREADABLE] = {"record_unreadable", "the record the gate judged does not read "
	                                              "back as JSON"},
	[R_BASELINE_GONE] = {"baseline_gone", "no class baseline of the key built by then has the "
	                                      "median the line was judged against"},
	[R_CONTROL] = {"control_differs", "judged again under the policy that decided it, the gate "
	                                  "does not give the recorded verdict: what the store keeps "
	                                  "is not all it judged (a record stored meanwhile, the "
	                                  "hysteresis, or a gate changed since)"},
};

struct ng_replay_gate {
	const ng_policy *proposed;
	/* the own policies already compared with the proposed one */
	const ng_policy *seen[16];
	bool differs[16];
	size_t n_seen;
	bool differs_any; /* some own policy differs in a value the gate reads */
	int64_t lines, rerun, changed, cohorts;
	int64_t not_rerun[R_COUNT];
	char first_run[R_COUNT][80];
	/* the last baseline found, for the lines of a class that follow */
	char b_class[256], b_software[80], b_metric[128], b_unit[24];
	double b_median, b_cv;
	int64_t b_at;
	int b_found;
	ng_strbuf body;
};

ng_replay_gate *ng_replay_gate_new(const ng_policy *proposed)
{
	ng_replay_gate *g = calloc(1, sizeof *g);
	if (g)
		g->proposed = proposed;
	return g;
}

void ng_replay_gate_free(ng_replay_gate *g)
{
	if (!g)
		return;
	ng_strbuf_free(&g->body);
	free(g);
}

bool ng_replay_gate_reads(size_t param)
{
	const char *name = ng_policy_param_name(param);
	return strncmp(name, "gate.", 5) == 0 || strcmp(name, "admission.cohort_window_hours") == 0 ||
	       strcmp(name, "admission.cohort_local_minutes") == 0;
}

static bool differ(const ng_policy *a, const ng_policy *b)
{
	ng_strbuf x = {0}, y = {0};
	bool d = false;
	for (size_t i = 0; i < ng_policy_param_count() && !d; i++) {
		if (!ng_replay_gate_reads(i))
			continue;
		ng_strbuf_reset(&x);
		ng_strbuf_reset(&y);
		ng_policy_param_value(a, i, &x);
		ng_policy_param_value(b, i, &y);
		d = strcmp(x.s ? x.s : "", y.s ? y.s : "") != 0;
	}
	ng_strbuf_free(&x);
	ng_strbuf_free(&y);
	return d;
}

bool ng_replay_gate_needed(ng_replay_gate *g, const ng_policy *own)
{
	for (size_t i = 0; i < g->n_seen; i++)
		if (g->seen[i] == own)
			return g->differs[i];
	bool d = differ(own, g->proposed);
	if (g->n_seen < sizeof g->seen / sizeof *g->seen) {
		g->seen[g->n_seen] = own;
		g->differs[g->n_seen++] = d;
	}
	g->differs_any = g->differs_any || d;
	return d;
}

static int not_rerun(ng_replay_gate *g, enum reason r, const ng_store_replay_decision *d)
{
	if (!g->not_rerun[r]++)
		ng_copy(g->first_run[r], sizeof g->first_run[r], d->run_id);
	return 0;
}

/* The class baseline the line was judged against: 1 found, 0 not, -1 error. */
static int baseline_of(ng_replay_gate *g, ng_store *st, const ng_store_replay_decision *d,
                       const ng_store_replay_line *l, ng_err *err)
{
	if (g->b_found == 1 && g->b_median == l->baseline_median && g->b_at <= d->at &&
	    strcmp(g->b_class, d->class_key) == 0 && strcmp(g->b_software, d->software) == 0 &&
	    strcmp(g->b_metric, l->metric) == 0)
		return 1;
	char metric[128], unit[24];
	double cv;
	int r = ng_store_baseline_as_of(st, d->class_key, d->software, l->metric, d->at,
	                                l->baseline_median, &cv, metric, sizeof metric, unit,
	                                sizeof unit, err);
	if (r != 1)
		return r;
	g->b_found = 1;
	g->b_median = l->baseline_median;
	g->b_cv = cv;
	g->b_at = d->at;
	ng_copy(g->b_class, sizeof g->b_class, d->class_key);
	ng_copy(g->b_software, sizeof g->b_software, d->software);
	ng_copy(g->b_metric, sizeof g->b_metric, metric);
	ng_copy(g->b_unit, sizeof g->b_unit, unit);
	return 1;
}

static cJSON *baseline_json(const ng_replay_gate *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", NG_BASELINE_SCHEMA);
	cJSON_AddStringToObject(o, "class", g->b_class);
	cJSON_AddStringToObject(o, "metric", g->b_metric);
	cJSON_AddNumberToObject(o, "median", g->b_median);
	cJSON_AddNumberToObject(o, "cv", g->b_cv);
	if (g->b_unit[0])
		cJSON_AddStringToObject(o, "unit", g->b_unit);
	return o;
}

/* The gate over the record, the baseline and the cohort of the `minutes`
 * before the run, under pol: as admission asks it (flow/admit_judge.c). */
static int with_cohort(ng_replay_gate *g, ng_store *st, const ng_store_replay_decision *d,
                       const ng_store_replay_line *l, ng_gate_input *in, const ng_policy *pol,
                       int64_t seconds, ng_verdict *v, ng_err *err)
{
	double *drops = NULL;
	size_t n = 0;
	if (ng_store_cohort_as_of(st, d->class_key, d->software, l->metric, d->node, l->record_id,
	                          d->at - seconds, l->baseline_median, &drops, &n, err) < 0)
		return -1;
	g->cohorts++;
	int rc = ng_gate_input_cohort(in, n ? drops : NULL, n, err);
	free(drops);
	if (rc < 0)
		return -1;
	ng_gate_trace t;
	*v = ng_gate_input_judge(in, pol, &t);
	return 0;
}

static int judge(ng_replay_gate *g, ng_store *st, const ng_store_replay_decision *d,
                 const ng_store_replay_line *l, const cJSON *rec, bool have_base,
                 const ng_policy *pol, ng_verdict *out, ng_err *err)
{
	ng_gate_input in = {0};
	cJSON *bj = have_base ? baseline_json(g) : NULL;
	int rc = ng_gate_input_record(&in, rec, NULL, err);
	/* A record that names no domain has its registered metric's. */
	if (rc == 0 && !in.rec.domain && *l->domain)
		in.rec.domain = l->domain;
	if (rc == 0)
		rc = ng_gate_input_baseline(&in, bj, err);
	ng_gate_trace t;
	ng_verdict v = NG_V_INVALID_INPUT;
	if (rc == 0)
		v = ng_gate_input_judge(&in, pol, &t);
	/* The cohort is read only past the warn bar: a block or a warn without
	 * it is where the class's other nodes could have explained the drop. */
	if (rc == 0 && have_base && (v == NG_V_BLOCK || v == NG_V_WARN)) {
		rc = with_cohort(g, st, d, l, &in, pol, (int64_t)pol->cohort_window_hours * 3600, &v, err);
		ng_verdict local;
		if (rc == 0 && pol->cohort_local_minutes > 0 && (v == NG_V_BLOCK || v == NG_V_WARN) &&
		    (rc = with_cohort(g, st, d, l, &in, pol, pol->cohort_local_minutes * 60, &local,
		                      err)) == 0 &&
		    local == NG_V_FLEET_REGRESSION)
			v = local;
	}
	/* No baseline: the diagnostics decide without one. */
	if (rc == 0 && v == NG_V_NO_BASELINE) {
		ng_gate_trace dt = {0};
		ng_verdict dv = ng_gate_diagnostics(&in.rec, pol, &dt);
		if (dv != NG_V_PASS)
			v = dv;
	}
	ng_gate_input_free(&in);
	cJSON_Delete(bj);
	*out = v;
	return rc;
}

int ng_replay_gate_line(ng_replay_gate *g, ng_store *st, const ng_store_replay_decision *d,
                        const ng_store_replay_line *l, const ng_policy *own, ng_verdict recorded,
                        ng_verdict *cur, ng_verdict *prop, ng_err *err)
{
	g->lines++;
	if (l->record_id <= 0)
		return not_rerun(g, R_NO_RECORD, d);
	int r = ng_store_record_body(st, l->record_id, &g->body, err);
	if (r < 0)
		return -1;
	if (r == 0)
		return not_rerun(g, R_RECORD_GONE, d);
	ng_err perr;
	cJSON *rec = ng_json_parse(g->body.s, g->body.len, &perr);
	if (!cJSON_IsObject(rec)) {
		cJSON_Delete(rec);
		return not_rerun(g, R_RECORD_UNREADABLE, d);
	}
	bool have_base = isfinite(l->baseline_median);
	if (have_base && (r = baseline_of(g, st, d, l, err)) != 1) {
		cJSON_Delete(rec);
		return r < 0 ? -1 : not_rerun(g, R_BASELINE_GONE, d);
	}
	int rc = judge(g, st, d, l, rec, have_base, own, cur, err);
	if (rc == 0 && *cur != recorded) {
		cJSON_Delete(rec);
		return not_rerun(g, R_CONTROL, d);
	}
	if (rc == 0)
		rc = judge(g, st, d, l, rec, have_base, g->proposed, prop, err);
	cJSON_Delete(rec);
	if (rc < 0)
		return -1;
	g->rerun++;
	g->changed += *cur != *prop;
	return 1;
}

int ng_replay_gate_report(const ng_replay_gate *g, cJSON *doc)
{
	cJSON *o = cJSON_AddObjectToObject(doc, "gate");
	if (!o)
		return -1;
	cJSON *vals = cJSON_AddArrayToObject(o, "values_differ");
	for (size_t i = 0; g->differs_any && i < ng_policy_param_count(); i++) {
		if (!ng_replay_gate_reads(i))
			continue;
		/* listed when it differs from some policy that decided */
		for (size_t k = 0; k < g->n_seen; k++) {
			ng_strbuf x = {0}, y = {0};
			ng_policy_param_value(g->seen[k], i, &x);
			ng_policy_param_value(g->proposed, i, &y);
			bool d = strcmp(x.s ? x.s : "", y.s ? y.s : "") != 0;
			ng_strbuf_free(&x);
			ng_strbuf_free(&y);
			if (d) {
				cJSON_AddItemToArray(vals, cJSON_CreateString(ng_policy_param_name(i)));
				break;
			}
		}
	}
	cJSON_AddBoolToObject(o, "re_evaluated", g->differs_any);
	cJSON_AddNumberToObject(o, "lines", (double)g->lines);
	cJSON_AddNumberToObject(o, "rerun", (double)g->rerun);
	cJSON_AddNumberToObject(o, "verdicts_changed", (double)g->changed);
	cJSON_AddNumberToObject(o, "cohorts_read", (double)g->cohorts);
	cJSON *nr = cJSON_AddObjectToObject(o, "not_rerun");
	int64_t total = 0;
	cJSON *by = cJSON_AddArrayToObject(nr, "by_reason");
	for (int r = 0; r < R_COUNT; r++) {
		total += g->not_rerun[r];
		if (!g->not_rerun[r])
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "reason", reasons[r].key);
		cJSON_AddNumberToObject(e, "lines", (double)g->not_rerun[r]);
		cJSON_AddStringToObject(e, "first_run", g->first_run[r]);
		cJSON_AddStringToObject(e, "why", reasons[r].why);
		cJSON_AddItemToArray(by, e);
	}
	cJSON_AddNumberToObject(nr, "lines", (double)total);
	cJSON_AddStringToObject(o, "why", g->differs_any
	                        ? "lines judged again by the gate from the record, the baseline and "
	                          "the cohort the store keeps, under each policy; a line that cannot "
	                          "be keeps its recorded verdict under both (not_rerun)"
	                        : "no value the gate reads differs: the recorded verdicts are what "
	                          "the gate gives again");
	return 0;
}
