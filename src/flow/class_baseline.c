/* Class baselines: the store's accepted runs through the pure builder. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flow/class_baseline.h"
#include "flow/attribution.h"

const char *ng_baseline_status_name(ng_baseline_status s)
{
	static const char *const names[NG_BASELINE_STATUS_COUNT] = {
		[NG_BASELINE_OK] = "ok",
		[NG_BASELINE_TOO_FEW_NODES] = "too-few-nodes",
		[NG_BASELINE_TOO_FEW_REPEATS] = "too-few-repeats",
		[NG_BASELINE_NO_SPREAD] = "no-spread",
		[NG_BASELINE_INVALID_RUN] = "invalid-run",
		[NG_BASELINE_WORK_TOO_SMALL] = "work-too-small",
	};
	return (unsigned)s < NG_BASELINE_STATUS_COUNT ? names[s] : "unknown";
}

int ng_baseline_row_build(const ng_policy *pol, const ng_baseline_run *runs, size_t n,
                          const char *class_key, const char *software, const char *metric,
                          const char *unit, int64_t now, int64_t since, int64_t newest,
                          ng_store_baseline *out, ng_err *err)
{
	size_t nd, ni;
	ng_baseline_work_need(runs, n, &nd, &ni);
	ng_baseline_work w = {malloc((nd ? nd : 1) * sizeof(double)), nd,
	                      malloc((ni ? ni : 1) * sizeof(size_t)), ni};
	if (!w.buf || !w.idx) {
		free(w.buf), free(w.idx);
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory building the baseline of %s", class_key);
	}
	ng_baseline b;
	ng_baseline_build(runs, n, pol, w, &b);
	free(w.buf);
	free(w.idx);
	memset(out, 0, sizeof *out);
	ng_copy(out->class_key, sizeof out->class_key, class_key);
	ng_copy(out->software, sizeof out->software, software);
	ng_copy(out->metric, sizeof out->metric, metric);
	ng_copy(out->unit, sizeof out->unit, unit);
	ng_copy(out->status, sizeof out->status, ng_baseline_status_name(b.status));
	out->median = b.median;
	out->cv = b.status == NG_BASELINE_OK ? b.cv : NAN;
	out->node_mad = b.node_mad;
	out->n_nodes = (int64_t)b.n_nodes;
	out->n_runs = (int64_t)b.n_runs;
	out->n_samples = (int64_t)b.n_samples;
	out->min_nodes = b.min_nodes;
	out->built_at = now;
	out->window_start = since;
	out->window_end = newest;
	return (int)b.status;
}

int ng_class_baseline_build(ng_store *st, const ng_policy *pol, const char *class_key,
                            const char *software, const char *metric, const char *unit,
                            int64_t now, const char *actor, bool keep_refusal,
                            ng_store_baseline *out, ng_err *err)
{
	int64_t since = now - (int64_t)pol->baseline_window_days * 86400;
	ng_store_runs runs;
	if (ng_store_baseline_runs(st, class_key, software, metric, since, &runs, err) < 0)
		return -1;
	int status = ng_baseline_row_build(pol, runs.runs, runs.n, class_key, software, metric, unit, now,
	                                   since, runs.n ? runs.newest : now, out, err);
	ng_store_runs_free(&runs);
	if (status < 0)
		return -1;
	if (!ng_class_family(class_key, pol->family_parts, out->family, sizeof out->family))
		out->family[0] = '\0';
	if (status != NG_BASELINE_OK && !keep_refusal)
		return 0;
	if (ng_store_put_baseline(st, out, actor, err) < 0)
		return -1;
	/* Peers alone follow a class that drifts down together: a rebuild
	 * under the key's pinned baseline is told, never silent. */
	int64_t drift = 0;
	return status == NG_BASELINE_OK
	               ? ng_baseline_drift_check(st, pol, out, now, actor, &drift, err)
	               : 0;
}

int ng_class_baseline_for(ng_store *st, const ng_policy *pol, const char *class_key,
                          const char *software, const char *metric, const char *unit,
                          int64_t now, const char *actor, ng_store_baseline *out, ng_err *err)
{
	int r = ng_store_current_baseline(st, class_key, software, metric, out, err);
	if (r < 0)
		return -1;
	if (r == 1 && out->pinned_at)
		return 1;
	if (r == 1 && now - out->built_at < pol->baseline_max_age_hours * 3600) {
		/* Young enough, unless the class has outgrown the nodes it was
		 * built from (admission.baseline_regrow). */
		if (!(pol->baseline_regrow > 0))
			return 1;
		int64_t nodes = ng_store_count_class_nodes(
			st, class_key, now - (int64_t)pol->baseline_window_days * 86400, err);
		if (nodes < 0)
			return -1;
		if ((double)nodes < pol->baseline_regrow * (double)out->n_nodes)
			return 1;
	}
	/* Refusals found while admitting are reported, not stored: every node
	 * of a new class would otherwise add one per metric per run. */
	if (ng_class_baseline_build(st, pol, class_key, software, metric, unit, now, actor, false,
	                            out, err) < 0)
		return -1;
	/* A class too small for an ordinary baseline, but not too small for
	 * one whose bar carries its few nodes' uncertainty (judge/admit.h,
	 * ng_admit_small_bar): built to that class's own size. */
	if (strcmp(out->status, "too-few-nodes") == 0 && pol->small_class_min_nodes > 0 &&
	    out->n_nodes >= pol->small_class_min_nodes) {
		ng_policy small = *pol;
		small.min_baseline_nodes = pol->small_class_min_nodes;
		if (ng_class_baseline_build(st, &small, class_key, software, metric, unit, now, actor,
		                            false, out, err) < 0)
			return -1;
	}
	return strcmp(out->status, "ok") == 0;
}

int ng_class_family_pool(ng_store *st, const ng_policy *pol, const char *class_key,
                         const char *metric, int64_t now, ng_admit_pool *pool,
                         char family[256], ng_err *err)
{
	*pool = (ng_admit_pool){0};
	family[0] = '\0';
	if (!ng_class_family(class_key, pol->family_parts, family, 256))
		return 0;
	/* Two of the baselines' ages: every class of the family judged lately
	 * has one that young (admission rebuilds one older than an age). */
	ng_store_baseline *rows;
	size_t n;
	if (ng_store_family_baselines(st, family, metric,
	                              now - 2 * (int64_t)pol->baseline_max_age_hours * 3600, &rows, &n,
	                              err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* The newest of each class and software only, and only a class
		 * large enough for an ordinary baseline: a MAD of a few nodes'
		 * medians counts the median node's own zero deviation and reads
		 * low (0.82 of the spread on average at five normal nodes),
		 * which only the t bound of their few degrees of freedom covers. */
		if (i > 0 && strcmp(rows[i].class_key, rows[i - 1].class_key) == 0 &&
		    strcmp(rows[i].software, rows[i - 1].software) == 0)
			continue;
		if (rows[i].n_nodes < pol->min_baseline_nodes)
			continue;
		ng_admit_pool_add(pool, rows[i].median, rows[i].node_mad, rows[i].cv, rows[i].n_nodes);
	}
	free(rows);
	return 0;
}
