/* The GPU compute probe: a fixed GEMM sustained on every GPU at once, one
 * sample of TFLOP/s per interval per GPU, the result checked at the end,
 * NVML read alongside so that a falling series names its cause. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gpu_nvml_sampler.h"
#include "collect/probe_gpu.h"
#include "collect/probe_gpu_common.h"
#include "core/json.h"
#include "core/record_build.h"
#include "judge/gpu_series.h"

#define METRIC "gpu.gemm.tflops"
#define PROBE "gpu-compute"

void ng_gpu_compute_opts_default(struct ng_gpu_compute_opts *o)
{
	/* n = 8192: large enough for the tensor cores' full rate on current
	 * GPUs (about 1.1 TFLOP per GEMM), small enough for any of them. */
	*o = (struct ng_gpu_compute_opts){.n = 8192, .duration_s = 15, .interval_s = 0.5,
	                                  .sibling_fraction = 0.9, .series_drop = 0.1,
	                                  .nvml = true, .nvml_grace_s = 2};
}

/* Every GPU starts at once: the node's power and cooling carry all of them,
 * as in training. Threads get ready (set up), then wait to be let go. */
struct start_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t ready;
	bool go;
	double t0;
};

struct worker {
	pthread_t tid;
	const struct ng_gpu_loaded *g;
	const struct ng_gpu_compute_opts *o;
	struct start_gate *start;
	int dev;
	bool plant;
	double t0;
	/* results */
	struct ng_gpu_sustain s;
	bool measured, verified, planted;
	char engine[64];
	uint64_t wrong, checked;
	char why[NG_GPU_WHY + 64];
	char problem[NG_GPU_WHY + 64];
	void *ctx;
};

static int gemm_step(void *arg, unsigned reps, double *work, double *seconds, char *why)
{
	struct worker *w = arg;
	double n = (double)w->o->n;
	*work = 2.0 * n * n * n * (double)reps;
	return w->g->be->gemm_run(w->ctx, reps, seconds, why);
}

/* The planted slowdown begins a third of the way through the run. */
static void before_batch(void *arg, double elapsed_s)
{
	struct worker *w = arg;
	char why[NG_GPU_WHY] = "";
	if (w->plant && !w->planted && elapsed_s >= w->o->duration_s / 3) {
		w->planted = true;
		if (w->g->be->throttle(w->dev, w->o->plant_throttle, why) != NG_GPU_OK)
			snprintf(w->problem, sizeof w->problem, "the planted throttle failed: %s", why);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct ng_gpu_backend *be = w->g->be;
	char why[NG_GPU_WHY] = "";
	int rc = NG_GPU_EFAIL;
	if (!w->why[0]) {
		rc = be->gemm_setup(w->dev, w->o->n, &w->ctx, w->engine, sizeof w->engine, why);
		w->engine[sizeof w->engine - 1] = '\0';
		why[NG_GPU_WHY - 1] = '\0';
		if (rc != NG_GPU_OK)
			snprintf(w->why, sizeof w->why, "gemm_setup (n = %u) failed on GPU %d: %s", w->o->n,
			         w->dev, why);
	}
	struct start_gate *sg = w->start;
	pthread_mutex_lock(&sg->mu);
	sg->ready++;
	pthread_cond_broadcast(&sg->cv);
	while (!sg->go)
		pthread_cond_wait(&sg->cv, &sg->mu);
	w->s.t0 = sg->t0;
	pthread_mutex_unlock(&sg->mu);
	if (rc != NG_GPU_OK)
		return NULL;
	w->s.before_batch = before_batch;
	w->s.arg = w;
	rc = ng_gpu_sustain_run(&w->s, gemm_step, w, why);
	why[NG_GPU_WHY - 1] = '\0';
	if (w->planted) {
		char ignored[NG_GPU_WHY];
		/* Ended whatever happened; a failure here changes no measurement. */
		be->throttle(w->dev, 1, ignored);
	}
	if (rc != NG_GPU_OK) {
		snprintf(w->why, sizeof w->why, "gemm_run failed on GPU %d after %zu samples: %s", w->dev,
		         w->s.n, why);
	} else if (w->s.n == 0) {
		snprintf(w->why, sizeof w->why, "no interval completed on GPU %d", w->dev);
	} else {
		w->measured = true;
		rc = be->gemm_verify(w->ctx, &w->wrong, &w->checked, why);
		why[NG_GPU_WHY - 1] = '\0';
		w->verified = rc == NG_GPU_OK;
		if (!w->verified)
			snprintf(w->problem, sizeof w->problem, "gemm_verify failed on GPU %d: %s",
			         w->dev, why);
	}
	be->gemm_teardown(w->ctx);
	return NULL;
}

static cJSON *nvml_series(const ng_gpu_nvml_point *p, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		char names[160];
		cJSON_AddNumberToObject(o, "t_s", round(p[i].t_s * 1000) / 1000);
		if (isfinite(p[i].sm_clock_mhz))
			cJSON_AddNumberToObject(o, "sm_clock_mhz", p[i].sm_clock_mhz);
		if (isfinite(p[i].power_w))
			cJSON_AddNumberToObject(o, "power_w", p[i].power_w);
		if (isfinite(p[i].temperature_c))
			cJSON_AddNumberToObject(o, "temperature_c", p[i].temperature_c);
		if (p[i].have_reasons) {
			ng_gpu_reason_text(p[i].reasons, names, sizeof names);
			cJSON_AddNumberToObject(o, "clock_reasons_mask", (double)p[i].reasons);
			cJSON_AddStringToObject(o, "clock_reasons", names);
		}
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void add_number_if(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
}

static void add_series(cJSON *rec, const struct worker *w, const struct ng_gpu_sampled *nv,
                       size_t k)
{
	const ng_gpu_nvml_point *pts = nv && k < nv->n_gpus ? nv->pts[k] : NULL;
	size_t n_pts = pts ? nv->n_pts[k] : 0;
	size_t len = w->s.n > n_pts ? w->s.n : n_pts;
	double *work = malloc((len ? len : 1) * sizeof *work);
	if (!work)
		return;
	ng_gpu_series s;
	ng_gpu_series_judge(w->s.samples, w->s.t_s, w->s.n, pts, n_pts, w->o->series_drop, work, &s);
	free(work);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "evaluable", s.evaluable);
	cJSON_AddBoolToObject(o, "falling", s.falling);
	add_number_if(o, "first_third_median", s.first_median);
	add_number_if(o, "last_third_median", s.last_median);
	add_number_if(o, "drop_percent", s.drop_percent);
	cJSON_AddNumberToObject(o, "drop_share", w->o->series_drop);
	if (s.falling) {
		char names[160];
		ng_gpu_reason_text(s.reasons, names, sizeof names);
		add_number_if(o, "fall_t_s", s.fall_t_s);
		cJSON_AddStringToObject(o, "clock_reasons", names);
		add_number_if(o, "sm_clock_before_mhz", s.clock_before_mhz);
		add_number_if(o, "sm_clock_during_mhz", s.clock_during_mhz);
		add_number_if(o, "temperature_max_c", s.temperature_max_c);
		add_number_if(o, "power_max_w", s.power_max_w);
		cJSON_AddBoolToObject(o, "clocks_held", s.clocks_held);
		cJSON_AddStringToObject(o, "cause", s.cause);
	}
	ng_json_set(ng_record_detail(rec), "series", o);
}

static void add_nvml(cJSON *rec, const struct ng_gpu_compute_opts *o,
                     const struct ng_gpu_sampled *nv, const char *nv_status, size_t k)
{
	cJSON *d = cJSON_CreateObject();
	if (!o->nvml) {
		cJSON_AddStringToObject(d, "status", "not sampled (--no-nvml)");
	} else if (!nv) {
		cJSON_AddStringToObject(d, "status", nv_status);
	} else {
		char status[800];
		if (nv->abandoned)
			snprintf(status, sizeof status, "a reading did not return within %g s; kept %zu "
			         "readings before it%s%s", o->nvml_grace_s, nv->n_pts[k],
			         nv->status[0] ? "; " : "", nv->status);
		else if (nv->status[0])
			snprintf(status, sizeof status, "%s", nv->status);
		else if (!nv->matched[k])
			snprintf(status, sizeof status, "NVML has no GPU with this UUID");
		else
			snprintf(status, sizeof status, "ok");
		cJSON_AddStringToObject(d, "status", status);
		cJSON_AddItemToObject(d, "series", nvml_series(nv->pts[k], nv->n_pts[k]));
	}
	ng_json_set(ng_record_detail(rec), "nvml", d);
}

static cJSON *build(const struct ng_gpu_loaded *g, const struct ng_gpu_compute_opts *o,
                    struct worker *w, size_t n, const struct ng_gpu_sampled *nv,
                    const char *nv_status)
{
	cJSON *records = cJSON_CreateArray();
	for (size_t k = 0; records && k < n; k++) {
		cJSON *rec = ng_gpu_record(METRIC, PROBE);
		if (!rec) {
			cJSON_Delete(records);
			return NULL;
		}
		cJSON_AddItemToArray(records, rec);
		cJSON *d = ng_record_detail(rec), *c = ng_record_conditions(rec);
		cJSON_AddItemToObject(d, "gpu", ng_gpu_device_json(g, w[k].dev));
		cJSON_AddStringToObject(d, "engine", w[k].engine);
		ng_gpu_add_backend(rec, g);
		cJSON_AddNumberToObject(c, "n", o->n);
		cJSON_AddStringToObject(c, "operation", "C = A x B, n x n x n, bf16 inputs, fp32 "
		                                        "accumulate; 2n^3 operations per GEMM");
		cJSON_AddNumberToObject(c, "duration_s", o->duration_s);
		cJSON_AddNumberToObject(c, "interval_s", o->interval_s);
		cJSON_AddNumberToObject(c, "gpus_at_once", (double)n);
		if (w[k].plant)
			cJSON_AddNumberToObject(c, "planted_throttle_share", o->plant_throttle);
		if (!w[k].measured) {
			ng_record_set_reason(rec, "%s", w[k].why);
			continue;
		}
		cJSON *ts = cJSON_AddArrayToObject(d, "sample_t_s");
		for (size_t i = 0; i < w[k].s.n; i++) {
			ng_record_add_sample(rec, w[k].s.samples[i]);
			cJSON_AddItemToArray(ts, cJSON_CreateNumber(round(w[k].s.t_s[i] * 1000) / 1000));
		}
		if (w[k].verified) {
			ng_record_set_wrong(rec, (double)w[k].wrong);
			cJSON *v = cJSON_AddObjectToObject(d, "verify");
			cJSON_AddNumberToObject(v, "wrong", (double)w[k].wrong);
			cJSON_AddNumberToObject(v, "checked", (double)w[k].checked);
		}
		if (w[k].problem[0])
			cJSON_AddStringToObject(d, "problem", w[k].problem);
		add_nvml(rec, o, nv, nv_status, k);
		add_series(rec, &w[k], o->nvml ? nv : NULL, k);
	}
	return records;
}

static int check_opts(const struct ng_gpu_compute_opts *o, ng_err *err)
{
	if (o->n < 16 || o->n > 65536)
		return ng_fail(err, "--size: the GEMM's n must be 16 to 65536");
	if (!(o->duration_s > 0) || o->duration_s > 3600)
		return ng_fail(err, "--duration must be more than 0 and at most 3600 s");
	if (!(o->interval_s >= 0.01) || o->interval_s > o->duration_s)
		return ng_fail(err, "--interval must be at least 0.01 s and at most the duration");
	if (o->plant_throttle != 0 && !(o->plant_throttle > 0 && o->plant_throttle < 1))
		return ng_fail(err, "--plant-throttle takes a share above 0 and below 1");
	return 0;
}

cJSON *ng_probe_gpu_compute_run(const struct ng_gpu_loaded *g, const char *why,
                                const struct ng_gpu_compute_opts *o, ng_err *err)
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
	const char *uuids[NG_GPU_DEVICES_MAX];
	struct start_gate sg = {.ready = 0};
	cJSON *records = NULL;
	if (!w) {
		ng_fail(err, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&sg.mu, NULL);
	pthread_cond_init(&sg.cv, NULL);
	size_t started = 0;
	for (size_t k = 0; k < n; k++) {
		w[k] = (struct worker){.g = g, .o = o, .start = &sg, .dev = devs[k],
		                       .plant = k == 0 && o->plant_throttle > 0};
		uuids[k] = g->dev[devs[k]].uuid;
		if (ng_gpu_sustain_init(&w[k].s, o->duration_s, o->interval_s, 0, 1e12) < 0)
			snprintf(w[k].why, sizeof w[k].why, "out of memory");
	}
	for (; started < n; started++)
		if (pthread_create(&w[started].tid, NULL, worker_main, &w[started]) != 0)
			break;
	for (size_t k = started; k < n; k++)
		snprintf(w[k].why, sizeof w[k].why, "could not start a thread for GPU %d", w[k].dev);
	char nv_status[600] = "";
	struct ng_gpu_sampler *sampler = NULL;
	struct ng_gpu_sampled nv = {0};
	pthread_mutex_lock(&sg.mu);
	while (sg.ready < started)
		pthread_cond_wait(&sg.cv, &sg.mu);
	/* NVML readings and samples count time from the same moment. */
	sg.t0 = ng_gpu_now_s();
	if (o->nvml)
		sampler = ng_gpu_sampler_start(uuids, n, o->interval_s, sg.t0, o->nvml_lib, nv_status,
		                               sizeof nv_status);
	sg.go = true;
	pthread_cond_broadcast(&sg.cv);
	pthread_mutex_unlock(&sg.mu);
	for (size_t k = 0; k < started; k++)
		pthread_join(w[k].tid, NULL);
	if (sampler)
		ng_gpu_sampler_stop(sampler, o->nvml_grace_s, &nv);
	records = build(g, o, w, n, sampler ? &nv : NULL, nv_status);
	if (records)
		ng_gpu_mark_siblings(records, o->sibling_fraction);
	else
		ng_fail(err, "out of memory");
	ng_gpu_sampled_free(&nv);
	for (size_t k = 0; k < n; k++)
		ng_gpu_sustain_free(&w[k].s);
	pthread_mutex_destroy(&sg.mu);
	pthread_cond_destroy(&sg.cv);
	free(w);
	return records;
}
