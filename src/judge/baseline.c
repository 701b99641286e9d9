#include "judge/baseline.h"

#include <math.h>
#include <string.h>

#include "core/stats.h"

/* 1 / Phi^-1(3/4): makes a MAD estimate a standard deviation for normal data,
 * so cv is comparable with the std/mean the gate computes for a run. */
#define MAD_SCALE 1.4826
/* Fewest samples in a run for its spread to say anything about noise. */
#define MIN_SPREAD_SAMPLES 3

static const char *const status_text[NG_BASELINE_STATUS_COUNT] = {
	[NG_BASELINE_OK] = "baseline built",
	[NG_BASELINE_TOO_FEW_NODES] =
		"establishing a baseline: fewer distinct nodes than admission.min_baseline_nodes",
	[NG_BASELINE_TOO_FEW_REPEATS] =
		"establishing a baseline: too few nodes have runs of three or more samples to measure noise",
	[NG_BASELINE_NO_SPREAD] =
		"no baseline: the runs show no sample-to-sample spread, so no noise bar can be set",
	[NG_BASELINE_INVALID_RUN] =
		"no baseline: a run has no node id, no samples, or a sample that is not a positive number",
	[NG_BASELINE_WORK_TOO_SMALL] = "no baseline: the scratch buffer is too small",
};

const char *ng_baseline_status_text(ng_baseline_status s)
{
	return (unsigned)s < NG_BASELINE_STATUS_COUNT ? status_text[s] : "unknown baseline status";
}

static size_t total_samples(const ng_baseline_run *runs, size_t n)
{
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += runs[i].n_samples;
	return t;
}

void ng_baseline_work_need(const ng_baseline_run *runs, size_t n_runs, size_t *doubles,
                           size_t *indexes)
{
	/* node medians, node spreads, one node's run medians (each <= n_runs),
	 * one node's deviations and one run's copy (each <= all samples) */
	*doubles = 3 * n_runs + 2 * total_samples(runs, n_runs);
	*indexes = 2 * n_runs;
}

/* A run the baseline can use: named, measured, every sample a positive number. */
static bool run_valid(const ng_baseline_run *r)
{
	if (!r->node || !r->node[0] || r->n_samples == 0 || !r->samples)
		return false;
	for (size_t k = 0; k < r->n_samples; k++)
		if (!isfinite(r->samples[k]) || !(r->samples[k] > 0))
			return false;
	return true;
}

/* Stable merge sort of run indexes by node id: groups a node's runs wherever
 * they sit in the input, in O(n log n), with no allocation and no globals
 * (qsort has no context argument in C17). */
static void sort_by_node(const ng_baseline_run *runs, size_t *idx, size_t *tmp, size_t n)
{
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi)
				tmp[o++] = strcmp(runs[idx[b]].node, runs[idx[a]].node) < 0 ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[o++] = idx[a++];
			while (b < hi)
				tmp[o++] = idx[b++];
		}
		memcpy(idx, tmp, n * sizeof *idx);
	}
}

/* A run's deviations from its own median, less the smallest one. The median
 * is fitted to the run, so deviations from it understate the noise: with an
 * odd count one of them is zero by construction. Dropping the smallest
 * deviation makes 1.4826 x their median an unbiased standard deviation for
 * normal samples to within a few percent from three samples up (simulated:
 * 0.95 to 1.03 for 3 to 50 samples, against 0.46 to 0.94 keeping it). Two
 * samples stay biased low (0.70) however it is done, so they do not count. */
static size_t add_deviations(const ng_baseline_run *r, double med, double *pool, size_t n_pool)
{
	size_t smallest = n_pool;
	for (size_t k = 0; k < r->n_samples; k++) {
		pool[n_pool] = fabs(r->samples[k] - med);
		if (pool[n_pool] < pool[smallest])
			smallest = n_pool;
		n_pool++;
	}
	pool[smallest] = pool[--n_pool];
	return n_pool;
}

struct scratch {
	double *node_med, *node_spread, *run_med, *pool, *copy;
};

/* One node's runs idx[g0..g1): its median (of run medians) and, when a run
 * has three or more samples, its within-run spread. Returns whether one did. */
static bool one_node(const ng_baseline_run *runs, const size_t *idx, size_t g0, size_t g1,
                     struct scratch *s, double *median, double *spread)
{
	size_t n_pool = 0;
	for (size_t g = g0; g < g1; g++) {
		const ng_baseline_run *r = &runs[idx[g]];
		memcpy(s->copy, r->samples, r->n_samples * sizeof *s->copy);
		double med = ng_np_median_inplace(s->copy, r->n_samples);
		s->run_med[g - g0] = med;
		if (r->n_samples >= MIN_SPREAD_SAMPLES)
			n_pool = add_deviations(r, med, s->pool, n_pool);
	}
	*median = ng_np_median_inplace(s->run_med, g1 - g0);
	if (n_pool == 0)
		return false;
	*spread = MAD_SCALE * ng_np_median_inplace(s->pool, n_pool);
	return true;
}

/* Walks the groups of equal node ids; fills node medians and spreads. */
static void per_node(const ng_baseline_run *runs, size_t n_runs, const size_t *idx,
                     struct scratch *s, ng_baseline *out)
{
	size_t g0 = 0;
	while (g0 < n_runs) {
		size_t g1 = g0 + 1;
		while (g1 < n_runs && strcmp(runs[idx[g1]].node, runs[idx[g0]].node) == 0)
			g1++;
		double spread = 0;
		if (one_node(runs, idx, g0, g1, s, &s->node_med[out->n_nodes], &spread))
			s->node_spread[out->n_spread_nodes++] = spread;
		out->n_nodes++;
		g0 = g1;
	}
}

static ng_baseline_status finish(ng_baseline *out, ng_baseline_status st)
{
	out->status = st;
	if (st != NG_BASELINE_OK)
		out->cv = NAN;
	return st;
}

/* Checks the input and the scratch; NG_BASELINE_OK when both will do. */
static ng_baseline_status check_input(const ng_baseline_run *runs, size_t n_runs,
                                      const ng_baseline_work *work, ng_baseline *out)
{
	for (size_t i = 0; i < n_runs; i++) {
		if (!run_valid(&runs[i])) {
			out->bad_run = i;
			return NG_BASELINE_INVALID_RUN;
		}
		out->n_samples += runs[i].n_samples;
	}
	size_t need_d = 0, need_i = 0;
	ng_baseline_work_need(runs, n_runs, &need_d, &need_i);
	if (!work->buf || work->cap < need_d || !work->idx || work->idx_cap < need_i)
		return NG_BASELINE_WORK_TOO_SMALL;
	return NG_BASELINE_OK;
}

ng_baseline_status ng_baseline_build(const ng_baseline_run *runs, size_t n_runs,
                                     const ng_policy *pol, ng_baseline_work work,
                                     ng_baseline *out)
{
	*out = (ng_baseline){.median = NAN, .node_mad = NAN, .cv = NAN, .n_runs = n_runs,
	                     .min_nodes = pol->min_baseline_nodes};
	if (n_runs == 0)
		return finish(out, NG_BASELINE_TOO_FEW_NODES);
	ng_baseline_status st = check_input(runs, n_runs, &work, out);
	if (st != NG_BASELINE_OK)
		return finish(out, st);

	struct scratch s = {.node_med = work.buf, .node_spread = work.buf + n_runs,
	                    .run_med = work.buf + 2 * n_runs, .pool = work.buf + 3 * n_runs};
	s.copy = s.pool + out->n_samples;
	for (size_t i = 0; i < n_runs; i++)
		work.idx[i] = i;
	sort_by_node(runs, work.idx, work.idx + n_runs, n_runs);
	per_node(runs, n_runs, work.idx, &s, out);

	/* run_med is free again: it is the median's scratch */
	out->median = ng_np_median(s.node_med, out->n_nodes, s.run_med);
	for (size_t i = 0; i < out->n_nodes; i++)
		s.node_med[i] = fabs(s.node_med[i] - out->median);
	out->node_mad = MAD_SCALE * ng_np_median_inplace(s.node_med, out->n_nodes);

	if ((long)out->n_nodes < pol->min_baseline_nodes)
		return finish(out, NG_BASELINE_TOO_FEW_NODES);
	if ((long)out->n_spread_nodes < pol->min_baseline_nodes)
		return finish(out, NG_BASELINE_TOO_FEW_REPEATS);
	double spread = ng_np_median_inplace(s.node_spread, out->n_spread_nodes);
	if (!(spread > 0))
		return finish(out, NG_BASELINE_NO_SPREAD);
	out->cv = spread / out->median;
	return finish(out, NG_BASELINE_OK);
}
