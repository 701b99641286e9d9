/* Small helpers the contestants share. */
#include <math.h>
#include <string.h>

#include "core/stats.h"
#include "sim.h"

double ng_sim_mean(const double *v, size_t n)
{
	if (!n)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

double ng_sim_median(const double *v, size_t n)
{
	double w[NG_FLEET_SAMPLES_MAX];
	if (!n || n > NG_FLEET_SAMPLES_MAX)
		return NAN;
	memcpy(w, v, n * sizeof *w);
	return ng_np_median_inplace(w, n);
}

double ng_sim_value_mean(const ng_fleet_result *r) { return ng_sim_mean(r->samples, r->n_samples); }

double ng_sim_value_median(const ng_fleet_result *r)
{
	return ng_sim_median(r->samples, r->n_samples);
}

double ng_sim_floor(const ng_sim_fleet *f, size_t cls, size_t m)
{
	return f->floor_fraction > 0 ? f->floor_fraction * f->reference[cls * NG_FLEET_METRICS_MAX + m]
	                             : NAN;
}

bool ng_sim_below_floor(const ng_sim_fleet *f, size_t cls, size_t m, double value)
{
	double fl = ng_sim_floor(f, cls, m);
	return isfinite(fl) && isfinite(value) && value < fl;
}

bool ng_sim_dcgm_measures(const char *metric)
{
	return strncmp(metric, "gpu.", 4) == 0 || strncmp(metric, "gpumem.", 7) == 0 ||
	       strncmp(metric, "nccl.", 5) == 0;
}
