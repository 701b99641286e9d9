/* A class baseline for one (class, metric) from accepted runs.
 *
 * The admission seed asks for "the median and a robust spread measure over
 * the mean when a few sick nodes could contaminate the population", and the
 * design for a baseline that counts nodes, not runs. So:
 *
 *   median    the median of per-node medians. A node's median is the median
 *             of its runs' medians, so a node measured fifty times weighs
 *             exactly as much as a node measured once.
 *   node_mad  1.4826 x the median absolute deviation of the per-node medians
 *             from the baseline median: how far healthy peers sit from each
 *             other, in the metric's unit (a standard deviation's worth when
 *             the peers are normal, and unmoved by a few sick ones).
 *   cv        the gate's cv. The gate uses it as the noise of ONE SAMPLE: its
 *             noise bar is noise_sigmas x cv / sqrt(samples) and it calls a
 *             run unstable when the run's own std/mean exceeds a multiple of
 *             cv. So cv must be the same kind of quantity as a run's own
 *             spread: how far repeated samples of one run stray from that
 *             run's median. For each node, 1.4826 x the median of |sample -
 *             its run's median| over all the node's runs (each run less its
 *             smallest deviation, which the fitted median makes too small:
 *             see baseline.c); the median of that over nodes; divided by the
 *             baseline median. Node-to-node
 *             differences are deliberately not in it (they are what the gate
 *             judges), and taking the median over nodes keeps one noisy sick
 *             node, or one node with many runs, from setting everyone's bar.
 *             Runs of fewer than three samples say too little about noise
 *             and do not count toward it.
 *
 * Fewer nodes than the policy's admission.min_baseline_nodes (for the median)
 * or fewer nodes with runs of three or more samples than that (for cv) give no baseline, and
 * say which. Pure: no I/O, no clock, no globals, no allocation; the caller
 * provides the scratch (ng_baseline_work_need says how much). */
#ifndef NODEGATE_JUDGE_BASELINE_H
#define NODEGATE_JUDGE_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/policy.h"

/* One accepted run: a view, nothing is copied or kept. */
typedef struct {
	const char *node; /* stable node identity; runs with equal ids are one node */
	const double *samples;
	size_t n_samples;
} ng_baseline_run;

typedef enum {
	NG_BASELINE_OK,
	NG_BASELINE_TOO_FEW_NODES,     /* establishing: not enough distinct nodes yet */
	NG_BASELINE_TOO_FEW_REPEATS,   /* not enough nodes with a run of >= 3 samples for cv */
	NG_BASELINE_NO_SPREAD,         /* the runs show no spread: cv would be 0 */
	NG_BASELINE_INVALID_RUN,       /* no node id, no samples, or a sample not finite and > 0 */
	NG_BASELINE_WORK_TOO_SMALL,
	NG_BASELINE_STATUS_COUNT
} ng_baseline_status;

typedef struct {
	ng_baseline_status status;
	double median;         /* NaN unless computed */
	double node_mad;       /* scaled MAD of per-node medians, metric's unit; NaN unless computed */
	double cv;             /* NaN unless status is OK */
	size_t n_nodes;        /* distinct nodes */
	size_t n_spread_nodes; /* of those, nodes with a run of three or more samples */
	size_t n_runs;
	size_t n_samples;
	size_t bad_run;        /* NG_BASELINE_INVALID_RUN: index of the first bad run */
	long min_nodes;        /* the policy minimum it was held to */
} ng_baseline;

/* Scratch: doubles for medians and deviations, indexes to group runs by node. */
typedef struct {
	double *buf;
	size_t cap;
	size_t *idx;
	size_t idx_cap;
} ng_baseline_work;

/* The scratch ng_baseline_build needs for these runs. */
void ng_baseline_work_need(const ng_baseline_run *runs, size_t n_runs, size_t *doubles,
                           size_t *indexes);

/* Fills out and returns out->status. A refusal leaves cv NaN. */
ng_baseline_status ng_baseline_build(const ng_baseline_run *runs, size_t n_runs,
                                     const ng_policy *pol, ng_baseline_work work,
                                     ng_baseline *out);

/* Why there is (or is not) a baseline, in one sentence for an operator. */
const char *ng_baseline_status_text(ng_baseline_status s);

#endif
