/* The GPU memory probe: a policy share of each GPU's free memory allocated,
 * three integrity patterns written and checked on the device, then the
 * bandwidth of a device copy within it, on every GPU at once. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/probe_gpu.h"
#include "collect/probe_gpu_common.h"
#include "core/json.h"
#include "core/record_build.h"

#define METRIC "gpumem.copy.gbps"
#define PROBE "gpu-memory"
#define FIRST_MAX 8 /* mismatched offsets kept per pattern */

static const char *const pattern_names[NG_GPU_PATTERN_COUNT] = {"address", "walking", "random"};

void ng_gpu_memory_opts_default(struct ng_gpu_memory_opts *o)
{
	*o = (struct ng_gpu_memory_opts){.share = 0.8, .duration_s = 3, .interval_s = 0.25, .seed = 1,
	                                 .plant_corrupt_word = -1, .sibling_fraction = 0.9};
}

struct worker {
	pthread_t tid;
	const struct ng_gpu_loaded *g;
	const struct ng_gpu_memory_opts *o;
	int dev;
	bool plant;
	uint64_t bytes;
	void *ctx;
	struct ng_gpu_sustain s;
	bool measured, checked;
	uint64_t wrong[NG_GPU_PATTERN_COUNT];
	uint64_t offsets[NG_GPU_PATTERN_COUNT][FIRST_MAX];
	unsigned n_offsets[NG_GPU_PATTERN_COUNT];
	char why[NG_GPU_WHY + 96];
	char check_why[NG_GPU_WHY + 96];
};

static int copy_step(void *arg, unsigned reps, double *work, double *seconds, char *why)
{
	struct worker *w = arg;
	uint64_t bytes = 0;
	int rc = w->g->be->mem_copy(w->ctx, reps, &bytes, seconds, why);
	*work = (double)bytes;
	return rc;
}

static void integrity(struct worker *w)
{
	const struct ng_gpu_backend *be = w->g->be;
	char why[NG_GPU_WHY] = "";
	w->checked = true;
	for (int p = 0; p < NG_GPU_PATTERN_COUNT; p++) {
		/* The planted word goes in the random pattern, as a bit flip in
		 * data that is not an address would be. */
		int64_t corrupt = w->plant && p == NG_GPU_PATTERN_RANDOM ? w->o->plant_corrupt_word : -1;
		if (be->mem_pattern(w->ctx, (enum ng_gpu_pattern)p, w->o->seed, corrupt, &w->wrong[p],
		                    w->offsets[p], FIRST_MAX, &w->n_offsets[p], why) != NG_GPU_OK) {
			why[NG_GPU_WHY - 1] = '\0';
			snprintf(w->check_why, sizeof w->check_why,
			         "the %s pattern could not be checked on GPU %d: %s", pattern_names[p], w->dev,
			         why);
			w->checked = false;
			return;
		}
		if (w->n_offsets[p] > FIRST_MAX)
			w->n_offsets[p] = FIRST_MAX;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct ng_gpu_backend *be = w->g->be;
	char why[NG_GPU_WHY] = "";
	if (w->why[0])
		return NULL;
	if (be->mem_setup(w->dev, w->bytes, &w->ctx, why) != NG_GPU_OK) {
		why[NG_GPU_WHY - 1] = '\0';
		snprintf(w->why, sizeof w->why, "could not allocate %" PRIu64 " bytes on GPU %d: %s",
		         w->bytes, w->dev, why);
		return NULL;
	}
	integrity(w);
	int rc = ng_gpu_sustain_run(&w->s, copy_step, w, why);
	why[NG_GPU_WHY - 1] = '\0';
	if (rc != NG_GPU_OK)
		snprintf(w->why, sizeof w->why, "mem_copy failed on GPU %d after %zu samples: %s", w->dev,
		         w->s.n, why);
	else if (w->s.n == 0)
		snprintf(w->why, sizeof w->why, "no interval completed on GPU %d", w->dev);
	else
		w->measured = true;
	be->mem_teardown(w->ctx);
	return NULL;
}

static void add_integrity(cJSON *rec, const struct worker *w)
{
	cJSON *d = ng_record_detail(rec);
	if (!w->checked) {
		/* wrong stays null: not checked, and the gate says so. */
		cJSON_AddStringToObject(d, "problem", w->check_why);
		return;
	}
	cJSON *pats = cJSON_AddObjectToObject(d, "integrity");
	cJSON *first = cJSON_AddArrayToObject(d, "first_mismatches");
	double total = 0;
	for (int p = 0; p < NG_GPU_PATTERN_COUNT; p++) {
		cJSON_AddNumberToObject(pats, pattern_names[p], (double)w->wrong[p]);
		total += (double)w->wrong[p];
		for (unsigned i = 0; i < w->n_offsets[p]; i++) {
			char buf[24];
			cJSON *m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "pattern", pattern_names[p]);
			snprintf(buf, sizeof buf, "0x%" PRIx64, w->offsets[p][i]);
			cJSON_AddStringToObject(m, "offset", buf);
			cJSON_AddItemToArray(first, m);
		}
	}
	ng_record_set_wrong(rec, total);
}

static cJSON *build(const struct ng_gpu_loaded *g, const struct ng_gpu_memory_opts *o,
                    struct worker *w, size_t n)
{
	cJSON *records = cJSON_CreateArray();
	for (size_t k = 0; records && k < n; k++) {
		cJSON *rec = ng_gpu_record(METRIC, PROBE);
		if (!rec) {
			cJSON_Delete(records);
			return NULL;
		}
		cJSON_AddItemToArray(records, rec);
		const struct ng_gpu_device *dv = &g->dev[w[k].dev];
		cJSON *d = ng_record_detail(rec), *c = ng_record_conditions(rec);
		cJSON_AddItemToObject(d, "gpu", ng_gpu_device_json(g, w[k].dev));
		ng_gpu_add_backend(rec, g);
		cJSON_AddNumberToObject(c, "bytes", (double)w[k].bytes);
		cJSON_AddNumberToObject(c, "share", o->share);
		cJSON_AddNumberToObject(c, "free_bytes", (double)dv->free_bytes);
		cJSON_AddNumberToObject(c, "total_bytes", (double)dv->total_bytes);
		cJSON_AddStringToObject(c, "kernel", "copy of one half of the buffer to the other");
		cJSON_AddStringToObject(c, "bytes_counted", "read plus written");
		cJSON_AddNumberToObject(c, "duration_s", o->duration_s);
		cJSON_AddNumberToObject(c, "interval_s", o->interval_s);
		cJSON_AddNumberToObject(c, "seed", (double)o->seed);
		cJSON_AddNumberToObject(c, "gpus_at_once", (double)n);
		if (w[k].plant)
			cJSON_AddNumberToObject(c, "planted_corrupt_word", (double)o->plant_corrupt_word);
		if (!w[k].measured) {
			ng_record_set_reason(rec, "%s", w[k].why);
			continue;
		}
		for (size_t i = 0; i < w[k].s.n; i++)
			ng_record_add_sample(rec, w[k].s.samples[i]);
		add_integrity(rec, &w[k]);
	}
	return records;
}

static int check_opts(const struct ng_gpu_memory_opts *o, ng_err *err)
{
	if (!(o->share > 0) || o->share > 0.95)
		return ng_fail(err, "--share must be above 0 and at most 0.95 of free memory");
	if (!(o->duration_s > 0) || o->duration_s > 3600)
		return ng_fail(err, "--duration must be more than 0 and at most 3600 s");
	if (!(o->interval_s >= 0.01) || o->interval_s > o->duration_s)
		return ng_fail(err, "--interval must be at least 0.01 s and at most the duration");
	return 0;
}

cJSON *ng_probe_gpu_memory_run(const struct ng_gpu_loaded *g, const char *why,
                               const struct ng_gpu_memory_opts *o, ng_err *err)
{
	static const char *const metrics[] = {METRIC};
	if (check_opts(o, err) < 0)
		return NULL;
	if (!g)
		return ng_gpu_unmeasured(metrics, 1, PROBE, why ? why : "no GPU backend");
	int devs[NG_GPU_DEVICES_MAX];
	size_t n;
	if (ng_gpu_pick_resolve(g, &o->gpus, devs, &n, err) < 0)
		return NULL;
	struct worker *w = calloc(n, sizeof *w);
	if (!w) {
		ng_fail(err, "out of memory");
		return NULL;
	}
	double t0 = ng_gpu_now_s();
	for (size_t k = 0; k < n; k++) {
		const struct ng_gpu_device *dv = &g->dev[devs[k]];
		/* Whole 16-byte units: two halves of whole 64-bit words. */
		uint64_t bytes = (uint64_t)((double)dv->free_bytes * o->share) / 16 * 16;
		w[k] = (struct worker){.g = g, .o = o, .dev = devs[k], .bytes = bytes,
		                       .plant = k == 0 && o->plant_corrupt_word >= 0};
		if (bytes < 16)
			snprintf(w[k].why, sizeof w[k].why, "GPU %d reports %" PRIu64 " bytes free: nothing "
			         "to test", devs[k], dv->free_bytes);
		else if (w[k].plant && (uint64_t)o->plant_corrupt_word >= bytes / 8)
			snprintf(w[k].why, sizeof w[k].why, "--plant-corrupt-word %lld is past the %" PRIu64
			         " words allocated on GPU %d", (long long)o->plant_corrupt_word, bytes / 8,
			         devs[k]);
		else if (ng_gpu_sustain_init(&w[k].s, o->duration_s, o->interval_s, t0, 1e9) < 0)
			snprintf(w[k].why, sizeof w[k].why, "out of memory");
	}
	size_t started = 0;
	for (; started < n; started++)
		if (pthread_create(&w[started].tid, NULL, worker_main, &w[started]) != 0)
			break;
	for (size_t k = started; k < n; k++)
		snprintf(w[k].why, sizeof w[k].why, "could not start a thread for GPU %d", w[k].dev);
	for (size_t k = 0; k < started; k++)
		pthread_join(w[k].tid, NULL);
	cJSON *records = build(g, o, w, n);
	if (records)
		ng_gpu_mark_siblings(records, o->sibling_fraction);
	else
		ng_fail(err, "out of memory");
	for (size_t k = 0; k < n; k++)
		ng_gpu_sustain_free(&w[k].s);
	free(w);
	return records;
}
