/* What the three GPU probes share (collect/probe_gpu_*.c only): choosing
 * GPUs, the sustained measurement loop, and record building. */
#ifndef NODEGATE_COLLECT_PROBE_GPU_COMMON_H
#define NODEGATE_COLLECT_PROBE_GPU_COMMON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "collect/probe_gpu.h"

double ng_gpu_now_s(void);

/* The GPUs of the run, as backend indexes in out[] (NG_GPU_DEVICES_MAX):
 * every GPU, or the picked ones in the order given. -1 (err) for an index
 * the backend does not have or one given twice. */
int ng_gpu_pick_resolve(const struct ng_gpu_loaded *g, const struct ng_gpu_pick *p, int *out,
                        size_t *n, ng_err *err);

/* A sustained measurement: step does reps units of work and says how much
 * work it did and how long the device took. Batches are sized to about a
 * quarter of an interval; a sample is the work over the device time of the
 * batches that ended within one interval of wall time, divided by unit. */
typedef int (*ng_gpu_step_fn)(void *ctx, unsigned reps, double *work, double *seconds, char *why);

struct ng_gpu_sustain {
	double duration_s, interval_s;
	double t0;    /* the probe's start: sample times are seconds since */
	double unit;  /* 1e12 for TFLOP/s, 1e9 for GB/s */
	double *samples, *t_s;
	size_t n, cap;
	/* Called before each batch with the seconds since the loop began. */
	void (*before_batch)(void *arg, double elapsed_s);
	void *arg;
};

/* Allocates cap for duration / interval samples; -1 when out of memory. */
int ng_gpu_sustain_init(struct ng_gpu_sustain *s, double duration_s, double interval_s, double t0,
                        double unit);
void ng_gpu_sustain_free(struct ng_gpu_sustain *s);
/* One untimed step, then batches until duration_s. NG_GPU_OK, or the
 * step's failure with why. */
int ng_gpu_sustain_run(struct ng_gpu_sustain *s, ng_gpu_step_fn step, void *ctx, char *why);

/* A record of the probe ("gpu-compute", ...) with the tool named. NULL
 * when out of memory. */
cJSON *ng_gpu_record(const char *metric, const char *probe);
/* {"index", "uuid", "pci_bus_id", "name"} of backend GPU dev. */
cJSON *ng_gpu_device_json(const struct ng_gpu_loaded *g, int dev);
/* conditions.backend: the library, its name and version. */
void ng_gpu_add_backend(cJSON *rec, const struct ng_gpu_loaded *g);
/* Records with no samples, one per metric, each giving why; NULL when out
 * of memory. */
cJSON *ng_gpu_unmeasured(const char *const *metrics, size_t n, const char *probe, const char *why);
/* For each metric among records, each record's run median against its
 * siblings': detail.siblings {median, percent, outlier, fraction, count}. */
void ng_gpu_mark_siblings(cJSON *records, double fraction);

/* The backend, loaded and started, with its GPUs described (heap); NULL
 * with why (no library, no GPU, ...) when there is none to measure with,
 * and *absent (when not NULL) true when no backend is installed at all. */
struct ng_gpu_loaded *ng_probe_gpu_open(char *why, size_t why_len, bool *absent);
void ng_probe_gpu_close(struct ng_gpu_loaded *g);

#endif
