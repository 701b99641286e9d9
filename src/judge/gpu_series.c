/* A falling series and its cause (gpu_series.h). */
#include "judge/gpu_series.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/gpu.h"
#include "core/stats.h"

/* Boost clocks wander a few percent under steady load; a smaller move than
 * this is the clock holding, not the clock falling. */
#define CLOCK_HELD_SHARE 0.95

static const struct {
	uint64_t bit;
	const char *name;
} reason_names[] = {
	{NG_CLK_HW_THERMAL, "HW thermal slowdown"},
	{NG_CLK_SW_THERMAL, "SW thermal slowdown"},
	{NG_CLK_SW_POWER_CAP, "SW power cap"},
	{NG_CLK_HW_SLOWDOWN, "HW slowdown"},
	{NG_CLK_HW_POWER_BRAKE, "HW power brake"},
};

size_t ng_gpu_reason_text(uint64_t bits, char *out, size_t len)
{
	size_t n = 0, at = 0;
	if (len)
		out[0] = '\0';
	bits &= ~(uint64_t)NG_CLK_GPU_IDLE;
	for (size_t i = 0; i < sizeof reason_names / sizeof *reason_names; i++) {
		if (!(bits & reason_names[i].bit))
			continue;
		bits &= ~reason_names[i].bit;
		int w = snprintf(out + at, len > at ? len - at : 0, "%s%s", n ? ", " : "",
		                 reason_names[i].name);
		at += w > 0 ? (size_t)w : 0;
		n++;
	}
	if (bits) {
		snprintf(out + at, len > at ? len - at : 0, "%sother 0x%llx", n ? ", " : "",
		         (unsigned long long)bits);
		n++;
	}
	return n;
}

/* Median of the finite values of field over points [lo, hi), or NaN. */
static double points_median(const ng_gpu_nvml_point *p, size_t lo, size_t hi, size_t field,
                            double *work)
{
	size_t m = 0;
	for (size_t i = lo; i < hi; i++) {
		double v = field == 0 ? p[i].sm_clock_mhz : field == 1 ? p[i].power_w : p[i].temperature_c;
		if (isfinite(v))
			work[m++] = v;
	}
	return m ? ng_np_median_inplace(work, m) : NAN;
}

static double points_max(const ng_gpu_nvml_point *p, size_t lo, size_t hi, size_t field)
{
	double best = NAN;
	for (size_t i = lo; i < hi; i++) {
		double v = field == 1 ? p[i].power_w : p[i].temperature_c;
		if (isfinite(v) && !(v <= best))
			best = v;
	}
	return best;
}

/* "1980 -> 1200 MHz", or "unread" parts. */
static void describe_nvml(const ng_gpu_series *s, char *out, size_t len)
{
	char temp[48] = "", power[48] = "";
	if (isfinite(s->temperature_max_c))
		snprintf(temp, sizeof temp, ", up to %.0f C", s->temperature_max_c);
	if (isfinite(s->power_max_w))
		snprintf(power, sizeof power, ", up to %.0f W", s->power_max_w);
	if (isfinite(s->clock_before_mhz) && isfinite(s->clock_during_mhz))
		snprintf(out, len, "SM clock %.0f -> %.0f MHz%s%s", s->clock_before_mhz,
		         s->clock_during_mhz, temp, power);
	else
		snprintf(out, len, "SM clock unread%s%s", temp, power);
}

static void explain(ng_gpu_series *s)
{
	char names[160], nv[160];
	describe_nvml(s, nv, sizeof nv);
	if (s->n_points == 0) {
		snprintf(s->cause, sizeof s->cause,
		         "NVML gave no reading of this GPU while the rate fell: the cause is unknown");
	} else if (ng_gpu_reason_text(s->reasons, names, sizeof names) > 0) {
		snprintf(s->cause, sizeof s->cause, "%s while the rate fell (%s)", names, nv);
	} else if (s->clocks_held) {
		snprintf(s->cause, sizeof s->cause,
		         "no clock event reason was reported and the clocks held (%s): the loss is "
		         "not the GPU's clocks (contention or software)", nv);
	} else if (isfinite(s->clock_during_mhz)) {
		snprintf(s->cause, sizeof s->cause,
		         "the SM clock fell with no clock event reason reported (%s)", nv);
	} else {
		snprintf(s->cause, sizeof s->cause,
		         "no clock event reason was reported and the SM clock was not read (%s)", nv);
	}
}

void ng_gpu_series_judge(const double *samples, const double *t_s, size_t n,
                         const ng_gpu_nvml_point *pts, size_t n_pts, double drop_share,
                         double *work, ng_gpu_series *out)
{
	ng_gpu_series s = {.first_median = NAN, .last_median = NAN, .drop_percent = NAN,
	                   .fall_t_s = NAN, .clock_before_mhz = NAN, .clock_during_mhz = NAN,
	                   .temperature_max_c = NAN, .power_max_w = NAN};
	for (size_t i = 0; i < n; i++)
		if (!isfinite(samples[i])) {
			*out = s; /* a series with a hole says nothing about its shape */
			return;
		}
	if (n < 3) {
		*out = s;
		return;
	}
	size_t k = n / 3;
	s.evaluable = true;
	memcpy(work, samples, k * sizeof *work);
	s.first_median = ng_np_median_inplace(work, k);
	memcpy(work, samples + n - k, k * sizeof *work);
	s.last_median = ng_np_median_inplace(work, k);
	if (s.first_median > 0)
		s.drop_percent = (1.0 - s.last_median / s.first_median) * 100.0;
	double bar = s.first_median * (1.0 - drop_share);
	s.falling = s.last_median < bar;
	if (!s.falling) {
		*out = s;
		return;
	}
	size_t i = k;
	while (i < n && !(samples[i] < bar))
		i++;
	if (i == n)
		i = n - k; /* the last third as a whole fell, no one sample alone */
	/* A sample covers the interval since the one before it. */
	s.fall_t_s = i > 0 ? t_s[i - 1] : 0.0;
	double first_end = t_s[k - 1];
	size_t before_hi = 0, during_lo = n_pts;
	while (before_hi < n_pts && pts[before_hi].t_s <= first_end)
		before_hi++;
	for (size_t p = 0; p < n_pts; p++)
		if (pts[p].t_s >= s.fall_t_s) {
			during_lo = p;
			break;
		}
	s.n_points = n_pts - during_lo;
	for (size_t p = during_lo; p < n_pts; p++)
		if (pts[p].have_reasons)
			s.reasons |= pts[p].reasons;
	s.reasons &= ~(uint64_t)NG_CLK_GPU_IDLE;
	s.clock_before_mhz = points_median(pts, 0, before_hi, 0, work);
	s.clock_during_mhz = points_median(pts, during_lo, n_pts, 0, work);
	s.temperature_max_c = points_max(pts, during_lo, n_pts, 2);
	s.power_max_w = points_max(pts, during_lo, n_pts, 1);
	s.clocks_held = isfinite(s.clock_before_mhz) && isfinite(s.clock_during_mhz) &&
	                s.clock_during_mhz >= CLOCK_HELD_SHARE * s.clock_before_mhz;
	explain(&s);
	*out = s;
}
