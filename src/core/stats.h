/* Statistics computed exactly as numpy 1.24 computes them.
 *
 * The gate's reference rule is written against numpy, and "identical verdicts
 * on every input" includes inputs that land within one rounding of a bar. So
 * sums follow numpy's pairwise summation (eight accumulators, blocks of 128,
 * recursive halving) applied to chunks of 8192 elements, which is how its
 * buffered reduction walks an array, and means, standard deviations and
 * medians use numpy's order of operations. Verified bit for bit against
 * numpy by tests/reference. */
#ifndef NODEGATE_CORE_STATS_H
#define NODEGATE_CORE_STATS_H

#include <stddef.h>

/* np.add.reduce(v) for a float64 array. */
double ng_np_sum(const double *v, size_t n);
/* np.mean(v). n must be > 0. */
double ng_np_mean(const double *v, size_t n);
/* np.std(v) / np.mean(v), population standard deviation (ddof=0). n > 0. */
double ng_np_std_over_mean(const double *v, size_t n);
/* np.median(v). n > 0; work holds n doubles and is overwritten. No NaN in v. */
double ng_np_median(const double *v, size_t n, double *work);
/* The same, reordering v itself. */
double ng_np_median_inplace(double *v, size_t n);

/* The p-quantile of Student's t with df degrees of freedom (0 < p < 1,
 * df > 0); NaN otherwise. */
double ng_student_t_quantile(double p, double df);

#endif
