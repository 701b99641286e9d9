/* Which of the class's nodes share a node's drop: the time-local half of
 * "blame the change when the cohort moved" (docs/admission.md, "Recheck").
 *
 * A peer shares the drop when its newest run since a time is below its own
 * usual level (the median of its accepted runs in the baseline window) by
 * as much as ng_drop_shared asks. Its own level, not the class's: a class
 * always holds a few healthy nodes that read lower than most, and they are
 * as low on a quiet day as in an incident, so against the class median they
 * would "share" every drop. A peer with no accepted run of its own (a new
 * node, the first day of a software identity) is measured against the class
 * baseline instead, as the gate measures it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/admit_shared.h"
#include "core/json.h"
#include "core/stats.h"
#include "judge/breaker.h"

/* The median of node's accepted run medians in hist (NaN: it has none).
 * work holds hist->n doubles, scratch hist->n_samples. */
static double usual_level(const ng_store_runs *hist, const char *node, double *work,
                          double *scratch)
{
	size_t k = 0;
	for (size_t i = 0; i < hist->n; i++) {
		const ng_baseline_run *run = &hist->runs[i];
		if (run->n_samples == 0 || strcmp(run->node, node) != 0)
			continue;
		double m = ng_np_median(run->samples, run->n_samples, scratch);
		if (isfinite(m) && m > 0)
			work[k++] = m;
	}
	return k ? ng_np_median_inplace(work, k) : NAN;
}

int ng_admit_sharing_peers(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                           const struct ng_admit_judged *j, const ng_admit_share_query *q,
                           ng_admit_sharing *out, ng_err *err)
{
	*out = (ng_admit_sharing){.depth = NAN};
	ng_store_runs hist = {0};
	int64_t lookback = r->now - (int64_t)pol->baseline_window_days * 86400;
	if (!q->class_level &&
	    ng_store_baseline_runs(st, r->class_key, r->software, j->metric, lookback, &hist, err) < 0)
		return -1;
	ng_store_node_run *recent = NULL;
	size_t n = 0;
	if (ng_store_node_runs(st, r->class_key, r->software, j->metric, q->since, &recent, &n, err) < 0) {
		ng_store_runs_free(&hist);
		return -1;
	}
	double *work = malloc((hist.n ? hist.n : 1) * sizeof *work);
	double *scratch = malloc((hist.n_samples ? hist.n_samples : 1) * sizeof *scratch);
	double *depths = malloc((n ? n : 1) * sizeof *depths);
	int rc = work && scratch && depths ? 0 : ng_fail(err, "out of memory");
	double class_level = j->have_base ? j->base.median : NAN;
	/* A node flagged against its own level dropped by that much, whatever
	 * its distance from the class median. */
	double drop = j->drop;
	if (isfinite(j->own_drop) && !(drop >= j->own_drop))
		drop = j->own_drop;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const char *node = recent[i].node;
		if (strcmp(node, r->node) == 0 || (q->among && !ng_json_has_string(q->among, node)))
			continue;
		double level = q->class_level ? class_level : usual_level(&hist, node, work, scratch);
		if (!isfinite(level))
			level = class_level;
		if (!(level > 0))
			continue;
		out->peers++;
		double theirs = 1 - recent[i].median / level;
		if (!ng_drop_shared(theirs, drop, pol->warn))
			continue;
		depths[out->sharing++] = theirs;
		if (q->names && !cJSON_AddItemToArray(q->names, cJSON_CreateString(node)))
			rc = ng_fail(err, "out of memory");
	}
	out->depth = rc == 0 && out->sharing ? ng_np_median_inplace(depths, out->sharing) : NAN;
	free(work);
	free(scratch);
	free(depths);
	ng_store_node_runs_free(recent, n);
	ng_store_runs_free(&hist);
	return rc;
}

/* Asks holds of every failed metric the decision's quarantine names: 1
 * when there is one and each holds, 0 when one does not or a result was
 * wrong (a wrong answer is never rechecked), -1 when holds failed. */
static int every_failure(const struct ng_admit_run *r,
                         int (*holds)(const struct ng_admit_judged *j, void *arg), void *arg)
{
	bool any = false;
	for (size_t i = 0; i < r->d.n_named; i++) {
		const struct ng_admit_judged *j = ng_admit_judged_of(r, r->d.named[i]);
		if (!j)
			continue;
		if (j->line.status == NG_MS_INTEGRITY)
			return 0;
		if (j->line.status != NG_MS_FAILED)
			continue;
		int h = holds(j, arg);
		if (h <= 0)
			return h;
		any = true;
	}
	return any;
}

static int shared_lately(const struct ng_admit_judged *j, void *arg)
{
	const struct ng_admit_judged *mj = ng_admit_latest_of(arg, j->metric);
	return mj && mj->local_sharing > 0;
}

bool ng_admit_shared_with_peers(const struct ng_admit_run *r)
{
	return every_failure(r, shared_lately, (void *)r) == 1;
}

struct first_drop {
	ng_store *st;
	const ng_policy *pol;
	const struct ng_admit_run *r;
	int64_t lookback;
	ng_err *err;
};

static int first_drop(const struct ng_admit_judged *j, void *arg)
{
	const struct first_drop *f = arg;
	if (!ng_policy_shared_path(f->pol, j->res.domain))
		return 0;
	int64_t before = ng_store_count_node_verdicts(
		f->st, f->r->node, j->metric, "confirm", ng_admit_metric_status_name(NG_MS_FAILED),
		f->r->now - f->lookback, f->r->now, f->err);
	return before < 0 ? -1 : before == 0;
}

int ng_admit_first_drop_on_shared_path(ng_store *st, const ng_policy *pol,
                                       const struct ng_admit_run *r, int64_t lookback,
                                       ng_err *err)
{
	struct first_drop f = {st, pol, r, lookback, err};
	return every_failure(r, first_drop, &f);
}

/* Whether any node the event names, other than this one, had a run of
 * metric the gate called v since a time. 1 yes, 0 no, -1 error. */
static int event_shares_shape(ng_store *st, const struct ng_admit_run *r, const cJSON *named,
                              const char *metric, ng_verdict v, int64_t since, ng_err *err)
{
	const cJSON *node;
	cJSON_ArrayForEach(node, named) {
		if (!cJSON_IsString(node) || strcmp(node->valuestring, r->node) == 0)
			continue;
		int64_t k = ng_store_count_gate_verdicts(st, node->valuestring, metric, ng_verdict_name(v),
		                                         since, r->now, err);
		if (k != 0)
			return k < 0 ? -1 : 1;
	}
	return 0;
}

/* Against the class baseline, not the nodes' own levels: a rollout's nodes
 * screened under a new software identity were accepted already low while
 * its baseline established, and still they are what moved. An event
 * explains what moved while it stays moved: a node that drops alone after
 * an incident is over, deeper than what moved by more than the class's bar
 * (a sick node among a rollout's), or whose samples scatter where theirs
 * did not, is the node's own fault. */
int ng_admit_event_explains(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                            const ng_store_fleet_event *e, ng_event_explanation *why,
                            double *depth, ng_err *err)
{
	*why = NG_EVENT_EXPLAINS;
	*depth = NAN;
	const struct ng_admit_judged *mj = ng_admit_latest_of(r, e->metric);
	cJSON *named = e->nodes ? cJSON_Parse(e->nodes) : NULL;
	int rc = 0;
	if (mj && mj->have_base && mj->base.median > 0 && cJSON_GetArraySize(named) > 0) {
		ng_admit_share_query q = {.since = r->now - (int64_t)pol->breaker_window_hours * 3600,
		                          .among = named, .class_level = true};
		ng_admit_sharing sh;
		rc = ng_admit_sharing_peers(st, pol, r, mj, &q, &sh, err);
		*depth = sh.depth;
		/* moved back up by what the event's nodes moved, would it pass? */
		double bar = mj->line.flag.bar, value = mj->res.value;
		if (rc < 0 || sh.sharing == 0)
			*why = NG_EVENT_NOBODY_SHARES;
		else if (isfinite(bar) && isfinite(value) && sh.depth < 1 && value / (1 - sh.depth) < bar)
			*why = NG_EVENT_DEEPER;
		else if (mj->raw == NG_V_BIMODAL || mj->raw == NG_V_UNSTABLE) {
			int k = event_shares_shape(st, r, named, e->metric, mj->raw, q.since, err);
			rc = k < 0 ? -1 : 0;
			*why = k == 1 ? NG_EVENT_EXPLAINS : NG_EVENT_OTHER_SHAPE;
		}
	}
	cJSON_Delete(named);
	return rc;
}

/* Whether the node's newest screen of metric before a time, under this
 * software identity, was not flagged: its drop is new. A drop that began
 * under another identity is new under this one: its baseline and its
 * events are this identity's. 1 new, 0 not, -1 error. */
static int drop_is_new(ng_store *st, const char *node, const char *software, const char *metric,
                       int64_t before, ng_err *err)
{
	char status[32];
	int r = ng_store_last_node_status(st, node, software, metric, "first", before, status,
	                                  sizeof status, err);
	if (r < 0)
		return -1;
	return r == 0 || strcmp(status, ng_admit_metric_status_name(NG_MS_FAILED)) != 0;
}

/* Whether a case's evidence is one metric's drop: no floor failure, no
 * wrong result, no other metric. */
static bool one_metric_drop(const char *evidence, const char *metric)
{
	cJSON *ev = evidence ? cJSON_Parse(evidence) : NULL;
	const cJSON *failed = cJSON_GetObjectItemCaseSensitive(ev, "failed"), *f;
	bool ok = cJSON_IsArray(failed) && cJSON_GetArraySize(failed) > 0 &&
	          cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ev, "below_floor"));
	cJSON_ArrayForEach(f, failed) {
		const char *m = ng_admit_str(f, "metric"), *status = ng_admit_str(f, "status");
		ok = ok && m && strcmp(m, metric) == 0 && status &&
		     strcmp(status, ng_admit_metric_status_name(NG_MS_FAILED)) == 0;
	}
	cJSON_Delete(ev);
	return ok;
}

static int withdraw(ng_store *st, struct ng_admit_run *r, const ng_store_case *c,
                    const ng_policy *pol, ng_err *err)
{
	char why[256];
	snprintf(why, sizeof why,
	         "withdrawn: the first node of a shared drop in %.64s; %.48s, screened %lld min "
	         "later, shares it",
	         c->metric, r->node, (long long)((r->now - c->opened_at) / 60));
	if (ng_store_close_case(st, c->id, r->now, "nodegate", why, err) < 0)
		return -1;
	cJSON *w = cJSON_CreateObject();
	if (!w || !r->withdrawn || !cJSON_AddItemToArray(r->withdrawn, w)) {
		cJSON_Delete(w);
		return ng_fail(err, "out of memory");
	}
	cJSON_AddNumberToObject(w, "case", (double)c->id);
	cJSON_AddStringToObject(w, "node", c->node);
	cJSON_AddStringToObject(w, "node_name", c->node_name);
	ng_admit_note(r,
	              "case %lld of %s withdrawn: it was quarantined for %s %lld minutes ago, the "
	              "first of the class's nodes to drop, before any peer could share the drop; this "
	              "node's drop is new too and shares it (within %ld minutes): the shared path's or "
	              "the change's, not that node's own (it is screened again before use)",
	              (long long)c->id, c->node_name[0] ? c->node_name : c->node, c->metric,
	              (long long)((r->now - c->opened_at) / 60), pol->cohort_local_minutes);
	return 0;
}

int ng_admit_withdraw_first_of_incident(ng_store *st, const ng_policy *pol,
                                        struct ng_admit_run *r, const char *metric,
                                        const cJSON *sharing, ng_err *err)
{
	int is_new = drop_is_new(st, r->node, r->software, metric, r->now, err);
	if (is_new <= 0)
		return is_new;
	if (!r->withdrawn && !(r->withdrawn = cJSON_CreateArray()))
		return ng_fail(err, "out of memory");
	ng_store_case *cases = NULL;
	size_t n = 0;
	if (ng_store_list_cases(st, false, &cases, &n, err) < 0)
		return -1;
	int64_t since = r->now - pol->cohort_local_minutes * 60;
	int rc = 0, withdrawn = 0;
	for (size_t i = 0; i < n; i++) {
		const ng_store_case *c = &cases[i];
		if (rc == 0 && c->opened_at >= since && c->opened_at <= r->now &&
		    strcmp(c->node, r->node) != 0 && strcmp(c->class_key, r->class_key) == 0 &&
		    strcmp(c->software, r->software) == 0 && strcmp(c->metric, metric) == 0 &&
		    ng_json_has_string(sharing, c->node) && one_metric_drop(c->evidence, metric)) {
			int theirs_new = drop_is_new(st, c->node, r->software, metric, c->opened_at, err);
			rc = theirs_new < 0 ? -1 : theirs_new ? withdraw(st, r, c, pol, err) : 0;
			withdrawn += rc == 0 && theirs_new;
		}
		ng_store_case_free(&cases[i]);
	}
	free(cases);
	return rc < 0 ? -1 : withdrawn;
}
