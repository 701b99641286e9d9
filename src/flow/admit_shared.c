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
                           const struct ng_admit_judged *j, int64_t since, cJSON *names,
                           ng_admit_sharing *out, ng_err *err)
{
	*out = (ng_admit_sharing){0};
	ng_store_runs hist = {0};
	int64_t lookback = r->now - (int64_t)pol->baseline_window_days * 86400;
	if (ng_store_baseline_runs(st, r->class_key, r->software, j->metric, lookback, &hist, err) < 0)
		return -1;
	ng_store_node_run *recent = NULL;
	size_t n = 0;
	if (ng_store_node_runs(st, r->class_key, r->software, j->metric, since, &recent, &n, err) < 0) {
		ng_store_runs_free(&hist);
		return -1;
	}
	double *work = malloc((hist.n ? hist.n : 1) * sizeof *work);
	double *scratch = malloc((hist.n_samples ? hist.n_samples : 1) * sizeof *scratch);
	int rc = work && scratch ? 0 : ng_fail(err, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (strcmp(recent[i].node, r->node) == 0)
			continue;
		double usual = usual_level(&hist, recent[i].node, work, scratch);
		if (!isfinite(usual))
			usual = j->have_base ? j->base.median : NAN;
		if (!(usual > 0))
			continue;
		out->peers++;
		if (!ng_drop_shared(1 - recent[i].median / usual, j->drop, pol->warn))
			continue;
		out->sharing++;
		if (names && !cJSON_AddItemToArray(names, cJSON_CreateString(recent[i].node)))
			rc = ng_fail(err, "out of memory");
	}
	free(work);
	free(scratch);
	ng_store_node_runs_free(recent, n);
	ng_store_runs_free(&hist);
	return rc;
}
