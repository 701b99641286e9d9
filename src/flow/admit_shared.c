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
	*out = (ng_admit_sharing){0};
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
	int rc = work && scratch ? 0 : ng_fail(err, "out of memory");
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
		if (!ng_drop_shared(1 - recent[i].median / level, drop, pol->warn))
			continue;
		out->sharing++;
		if (q->names && !cJSON_AddItemToArray(q->names, cJSON_CreateString(node)))
			rc = ng_fail(err, "out of memory");
	}
	free(work);
	free(scratch);
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

/* Against the class baseline, not the nodes' own levels: a rollout's nodes
 * screened under a new software identity were accepted already low while
 * its baseline established, and still they are what moved. An event
 * explains what moved while it stays moved: a node that drops alone after
 * an incident is over, or much deeper than what moved (a sick node among a
 * rollout's), is the node's own fault. */
int ng_admit_event_explains(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                            const ng_store_fleet_event *e, bool *explains, ng_err *err)
{
	const struct ng_admit_judged *mj = ng_admit_latest_of(r, e->metric);
	cJSON *named = e->nodes ? cJSON_Parse(e->nodes) : NULL;
	*explains = true;
	int rc = 0;
	if (mj && mj->have_base && mj->base.median > 0 && cJSON_GetArraySize(named) > 0) {
		ng_admit_share_query q = {.since = r->now - (int64_t)pol->breaker_window_hours * 3600,
		                          .among = named, .class_level = true};
		ng_admit_sharing sh;
		rc = ng_admit_sharing_peers(st, pol, r, mj, &q, &sh, err);
		*explains = rc == 0 && sh.sharing > 0;
	}
	cJSON_Delete(named);
	return rc;
}
