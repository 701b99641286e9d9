/* The GPU probes: compute (a sustained GEMM), GPU memory (integrity
 * patterns and a device copy) and copy paths (host to device, device to
 * host, GPU to GPU), measured on every GPU at once through the backend
 * (collect/gpu_backend.h), one thread per GPU.
 *
 * Each writes one record per GPU (per ordered GPU pair for peer to peer)
 * with the GPU's index, UUID and PCI bus id in detail.gpu (detail.src and
 * detail.dst for a pair), samples of the rate per interval from device
 * time, and "wrong" from the backend's own check of the result. Every GPU
 * and link is also compared with its siblings in the node
 * (judge/gpu_siblings.h), and the compute series is read for a fall and
 * its cause (judge/gpu_series.h), into detail.siblings and detail.series.
 * docs/gpu-probes.md has the layout.
 *
 * No backend (g NULL) is records with no samples that give `why`; a GPU
 * that fails is its records with no samples that say which call failed. */
#ifndef NODEGATE_COLLECT_PROBE_GPU_H
#define NODEGATE_COLLECT_PROBE_GPU_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/gpu_backend_load.h"
#include "core/error.h"

/* Which GPUs, by backend index; NULL (n 0) is every GPU. */
struct ng_gpu_pick {
	const int *index;
	size_t n;
};

struct ng_gpu_compute_opts {
	unsigned n;              /* the GEMM's n (n x n x n) */
	double duration_s;       /* sustained this long on every GPU at once */
	double interval_s;       /* one sample, and one NVML reading, per interval */
	struct ng_gpu_pick gpus;
	/* > 0: the first GPU of the run is throttled to this share after a
	 * third of the duration (backend->throttle): a planted slowdown that
	 * must come out as a falling series. */
	double plant_throttle;
	double sibling_fraction; /* probe.gpu_sibling_fraction */
	double series_drop;      /* probe.gpu_series_drop */
	bool nvml;               /* sample NVML during the run */
	const char *nvml_lib;    /* NULL: as collect/nvml.h decides */
	double nvml_grace_s;     /* how long the end waits for a slow NVML reading */
};

struct ng_gpu_memory_opts {
	double share;            /* of each GPU's free memory (probe.gpu_memory_share) */
	double duration_s, interval_s;
	uint64_t seed;           /* of the random pattern */
	/* >= 0: one bit of this word of the first GPU of the run is flipped
	 * between writing and checking the random pattern (a planted fault). */
	int64_t plant_corrupt_word;
	struct ng_gpu_pick gpus;
	double sibling_fraction;
};

struct ng_gpu_copy_opts {
	uint64_t bytes;          /* per copy */
	double duration_s;       /* per path */
	double interval_s;
	uint64_t seed;           /* of the verified copy's pattern */
	struct ng_gpu_pick gpus;
	double sibling_fraction;
};

void ng_gpu_compute_opts_default(struct ng_gpu_compute_opts *o);
void ng_gpu_memory_opts_default(struct ng_gpu_memory_opts *o);
void ng_gpu_copy_opts_default(struct ng_gpu_copy_opts *o);

/* Each returns an array of records, or NULL for a usage error (err says
 * which: a bad option, a GPU index the backend does not have) or when out
 * of memory. */
cJSON *ng_probe_gpu_compute_run(const struct ng_gpu_loaded *g, const char *why,
                                const struct ng_gpu_compute_opts *o, ng_err *err);
cJSON *ng_probe_gpu_memory_run(const struct ng_gpu_loaded *g, const char *why,
                               const struct ng_gpu_memory_opts *o, ng_err *err);
cJSON *ng_probe_gpu_copy_run(const struct ng_gpu_loaded *g, const char *why,
                             const struct ng_gpu_copy_opts *o, ng_err *err);

#endif
