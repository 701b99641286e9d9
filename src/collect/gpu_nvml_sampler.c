/* NVML in the background during the compute probe (gpu_nvml_sampler.h). */
#include "collect/gpu_nvml_sampler.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/nvml.h"
#include "collect/probe_gpu_common.h"

#define SAMPLER_GPUS 64
#define POINTS_MAX 100000 /* a day at one reading a second; more is dropped */

struct ng_gpu_sampler {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* clock: CLOCK_MONOTONIC */
	bool stop, done, abandoned;
	double interval_s, t0;
	char lib[4096];
	bool have_lib;
	size_t n_gpus;
	char uuid[SAMPLER_GPUS][96];
	ng_gpu_nvml_point *pts[SAMPLER_GPUS];
	size_t n_pts[SAMPLER_GPUS], cap[SAMPLER_GPUS];
	bool matched[SAMPLER_GPUS];
	size_t n_snapshots;
	char status[600];
};

static void sampler_free(struct ng_gpu_sampler *s)
{
	for (size_t i = 0; i < s->n_gpus; i++)
		free(s->pts[i]);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

static double field(const ng_gpu_field *f, double scale)
{
	return f->state == NG_FIELD_OK ? (double)f->value * scale : NAN;
}

static void append(struct ng_gpu_sampler *s, size_t i, const ng_gpu_state *g, double t)
{
	if (s->n_pts[i] == s->cap[i]) {
		size_t cap = s->cap[i] ? s->cap[i] * 2 : 64;
		if (cap > POINTS_MAX)
			return;
		ng_gpu_nvml_point *p = realloc(s->pts[i], cap * sizeof *p);
		if (!p)
			return;
		s->pts[i] = p;
		s->cap[i] = cap;
	}
	s->pts[i][s->n_pts[i]++] = (ng_gpu_nvml_point){
		.t_s = t,
		.sm_clock_mhz = field(&g->sm_clock_mhz, 1),
		.power_w = field(&g->power_mw, 1e-3),
		.temperature_c = field(&g->temperature_c, 1),
		.reasons = g->clock_reasons.state == NG_FIELD_OK ? g->clock_reasons.value : 0,
		.have_reasons = g->clock_reasons.state == NG_FIELD_OK,
	};
}

/* Takes one snapshot's readings under the lock. */
static void take(struct ng_gpu_sampler *s, const ng_gpu_snapshot *snap, double t)
{
	s->n_snapshots++;
	if (snap->nvml != NG_FIELD_OK) {
		if (!s->status[0])
			snprintf(s->status, sizeof s->status, "NVML: %s", snap->nvml_error);
		return;
	}
	for (size_t i = 0; i < s->n_gpus; i++)
		for (size_t k = 0; k < snap->n_gpus; k++)
			if (strcmp(snap->gpu[k].uuid, s->uuid[i]) == 0) {
				s->matched[i] = true;
				append(s, i, &snap->gpu[k], t);
				break;
			}
}

static struct timespec abs_after(double s)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double whole = floor(s);
	ts.tv_sec += (time_t)whole;
	ts.tv_nsec += (long)((s - whole) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static void *sampler_main(void *arg)
{
	struct ng_gpu_sampler *s = arg;
	ng_gpu_snapshot *snap = malloc(sizeof *snap);
	ng_nvml_opts o = {.lib_path = s->have_lib ? s->lib : NULL};
	double next = s->t0;
	pthread_mutex_lock(&s->mu);
	if (!snap)
		snprintf(s->status, sizeof s->status, "out of memory for an NVML snapshot");
	while (snap && !s->stop) {
		pthread_mutex_unlock(&s->mu);
		ng_err err = {0};
		/* Outside the lock: this is the call that may never return. */
		int rc = ng_nvml_snapshot(&o, snap, &err);
		double t = ng_gpu_now_s() - s->t0;
		pthread_mutex_lock(&s->mu);
		if (s->abandoned)
			break;
		if (rc < 0 && !s->status[0])
			snprintf(s->status, sizeof s->status, "NVML: %s", err.msg);
		else if (rc == 0)
			take(s, snap, t);
		next += s->interval_s;
		double wait = next - ng_gpu_now_s();
		if (wait < 0)
			next = ng_gpu_now_s(); /* a slow reading: do not try to catch up */
		struct timespec until = abs_after(wait > 0 ? wait : 0);
		while (!s->stop && wait > 0 &&
		       pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
			;
	}
	free(snap);
	bool abandoned = s->abandoned;
	s->done = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (abandoned)
		sampler_free(s); /* nobody else holds it any more */
	return NULL;
}

struct ng_gpu_sampler *ng_gpu_sampler_start(const char *const *uuids, size_t n_gpus,
                                            double interval_s, double t0, const char *lib,
                                            char *status, size_t status_len)
{
	struct ng_gpu_sampler *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(status, status_len, "out of memory");
		return NULL;
	}
	s->n_gpus = n_gpus < SAMPLER_GPUS ? n_gpus : SAMPLER_GPUS;
	for (size_t i = 0; i < s->n_gpus; i++)
		snprintf(s->uuid[i], sizeof s->uuid[i], "%s", uuids[i]);
	s->interval_s = interval_s;
	s->t0 = t0;
	if (lib) {
		snprintf(s->lib, sizeof s->lib, "%s", lib);
		s->have_lib = true;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->mu, NULL);
	int e = pthread_create(&s->tid, NULL, sampler_main, s);
	if (e) {
		snprintf(status, status_len, "could not start the NVML sampler thread: %s", strerror(e));
		sampler_free(s);
		return NULL;
	}
	return s;
}

void ng_gpu_sampler_stop(struct ng_gpu_sampler *s, double grace_s, struct ng_gpu_sampled *out)
{
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
	struct timespec until = abs_after(grace_s);
	while (!s->done && pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
		;
	bool done = s->done;
	out->n_gpus = s->n_gpus;
	out->n_snapshots = s->n_snapshots;
	snprintf(out->status, sizeof out->status, "%s", s->status);
	for (size_t i = 0; i < s->n_gpus; i++) {
		out->matched[i] = s->matched[i];
		if (s->n_pts[i] && (out->pts[i] = malloc(s->n_pts[i] * sizeof *out->pts[i]))) {
			memcpy(out->pts[i], s->pts[i], s->n_pts[i] * sizeof *out->pts[i]);
			out->n_pts[i] = s->n_pts[i];
		}
	}
	if (!done) {
		/* From the unlock on, the thread may finish and free s at any time. */
		pthread_t tid = s->tid;
		out->abandoned = true;
		s->abandoned = true;
		pthread_mutex_unlock(&s->mu);
		pthread_detach(tid);
		return;
	}
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->tid, NULL);
	sampler_free(s);
}

void ng_gpu_sampled_free(struct ng_gpu_sampled *out)
{
	for (size_t i = 0; i < out->n_gpus; i++)
		free(out->pts[i]);
	memset(out, 0, sizeof *out);
}
