/* Siblings: each GPU (or each GPU-to-GPU link) of a node against the other
 * GPUs (links) of the same node, on the same metric.
 *
 * Before a class has a baseline there are no peers to compare a node with,
 * but a node is its own small cohort: eight GPUs of one model on one board
 * should copy, compute and reach host memory alike. One GPU in an x8 slot,
 * one slow link or one throttled GPU stands out against the median of its
 * siblings. Each item is compared with the median of the OTHERS, so the
 * outlier never pulls its own bar down.
 *
 * Pure: no I/O, no clock, no globals, no allocation. */
#ifndef NODEGATE_JUDGE_GPU_SIBLINGS_H
#define NODEGATE_JUDGE_GPU_SIBLINGS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	double value;           /* this item's run median, as given */
	double siblings_median; /* median of the other measured items; NaN when none */
	double percent;         /* value / siblings_median x 100; NaN when not evaluable */
	size_t n_siblings;      /* measured items besides this one */
	bool evaluable;         /* this item and at least one sibling were measured */
	bool outlier;           /* value < fraction x siblings_median */
} ng_gpu_sibling;

/* values[i]: item i's run median; NaN, infinite or not above 0 means not
 * measured, and such an item neither is judged nor counts as a sibling.
 * fraction in (0, 1]. work holds n doubles (overwritten). out[n]. */
void ng_gpu_siblings(const double *values, size_t n, double fraction, double *work,
                     ng_gpu_sibling *out);

#endif
