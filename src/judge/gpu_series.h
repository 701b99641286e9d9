/* A falling series and its cause: the GPU compute probe's samples over the
 * run, read against what NVML said during it.
 *
 * A GPU whose rate falls while it runs (thermal or power limits reached a
 * few seconds in) can pass a short average. The series is falling when the
 * median of its last third is below the median of its first third by more
 * than a policy share (probe.gpu_series_drop). The fall starts at the first
 * sample after the first third below that bar; the cause is what NVML
 * reported from then on: the clock event reasons active (HW thermal
 * slowdown, SW thermal slowdown, SW power cap, HW slowdown, HW power brake),
 * the SM clock before and during the fall, the temperature and the power.
 * With no reason reported and the clock held, the loss is not the GPU's
 * clocks: something else took the time (contention or software).
 *
 * Pure: no I/O, no clock, no globals, no allocation. */
#ifndef NODEGATE_JUDGE_GPU_SERIES_H
#define NODEGATE_JUDGE_GPU_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One NVML reading of one GPU during the run. A field not read is NaN (or
 * have_reasons false), never 0. */
typedef struct {
	double t_s; /* seconds since the probe's start */
	double sm_clock_mhz, power_w, temperature_c;
	uint64_t reasons; /* NG_CLK_* bits (core/gpu.h) */
	bool have_reasons;
} ng_gpu_nvml_point;

typedef struct {
	bool evaluable;       /* at least three samples */
	bool falling;
	double first_median, last_median; /* of the first and last thirds */
	double drop_percent;  /* (1 - last / first) x 100 */
	double fall_t_s;      /* when the fall began (NaN when not falling) */
	size_t n_points;      /* NVML readings from the fall's start on */
	uint64_t reasons;     /* reasons active in them (gpu_idle left out) */
	double clock_before_mhz, clock_during_mhz; /* medians; NaN when unread */
	double temperature_max_c, power_max_w;     /* during the fall; NaN when unread */
	bool clocks_held;     /* the clock during the fall within 5 % of before */
	char cause[512];      /* for people; "" when not falling */
} ng_gpu_series;

/* samples[i] ended t_s[i] seconds after the start, in order. pts: NVML
 * readings in time order (n_pts may be 0). drop_share in (0, 1). work holds
 * max(n, n_pts) doubles. */
void ng_gpu_series_judge(const double *samples, const double *t_s, size_t n,
                         const ng_gpu_nvml_point *pts, size_t n_pts, double drop_share,
                         double *work, ng_gpu_series *out);

/* The names of the reasons in bits, joined by ", " into out (e.g. "HW
 * thermal slowdown, SW power cap"); bits no name covers are "other 0x..".
 * gpu_idle is left out. Returns the number of names written. */
size_t ng_gpu_reason_text(uint64_t bits, char *out, size_t len);

#endif
