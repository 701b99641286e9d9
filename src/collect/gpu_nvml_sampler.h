/* NVML read in the background while the GPU compute probe runs: one
 * snapshot per interval, each GPU's clock, power, temperature and clock
 * event reasons kept as a series, matched to the backend's GPUs by UUID.
 *
 * An NVML call can hang on a sick node. The probe must still end: stopping
 * waits at most a grace period for the reading in flight, then leaves the
 * sampler thread behind (detached; it frees its own state if it ever
 * returns) and keeps what it had read. */
#ifndef NODEGATE_COLLECT_GPU_NVML_SAMPLER_H
#define NODEGATE_COLLECT_GPU_NVML_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>

#include "judge/gpu_series.h"

struct ng_gpu_sampler;

/* What the sampler read, per backend GPU (in the order of the uuids given). */
struct ng_gpu_sampled {
	size_t n_gpus;
	ng_gpu_nvml_point *pts[64];
	size_t n_pts[64];
	bool matched[64];     /* NVML had a GPU with this UUID */
	size_t n_snapshots;   /* readings that returned */
	bool abandoned;       /* a reading did not return within the grace period */
	char status[600];     /* "" when NVML answered; else why not */
};

/* Starts sampling n_gpus GPUs (uuids[i] for backend GPU i) every
 * interval_s from t0 (ng_gpu_now_s()). lib: the NVML library (NULL: the
 * default). NULL when the thread cannot start (status says why). */
struct ng_gpu_sampler *ng_gpu_sampler_start(const char *const *uuids, size_t n_gpus,
                                            double interval_s, double t0, const char *lib,
                                            char *status, size_t status_len);

/* Stops it, waiting at most grace_s for a reading in flight, and fills out
 * (free with ng_gpu_sampled_free). */
void ng_gpu_sampler_stop(struct ng_gpu_sampler *s, double grace_s, struct ng_gpu_sampled *out);
void ng_gpu_sampled_free(struct ng_gpu_sampled *out);

#endif
