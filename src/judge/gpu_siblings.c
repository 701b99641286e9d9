/* Each GPU or link against the median of its siblings (gpu_siblings.h). */
#include "judge/gpu_siblings.h"

#include <math.h>

#include "core/stats.h"

static bool measured(double v) { return isfinite(v) && v > 0; }

void ng_gpu_siblings(const double *values, size_t n, double fraction, double *work,
                     ng_gpu_sibling *out)
{
	for (size_t i = 0; i < n; i++) {
		ng_gpu_sibling s = {.value = values[i], .siblings_median = NAN, .percent = NAN};
		size_t m = 0;
		for (size_t j = 0; j < n; j++)
			if (j != i && measured(values[j]))
				work[m++] = values[j];
		s.n_siblings = m;
		if (m > 0)
			s.siblings_median = ng_np_median_inplace(work, m);
		s.evaluable = measured(values[i]) && m > 0;
		if (s.evaluable) {
			s.percent = values[i] / s.siblings_median * 100.0;
			s.outlier = values[i] < fraction * s.siblings_median;
		}
		out[i] = s;
	}
}
