/* What the GPU probes share (probe_gpu_common.h). */
#include "collect/probe_gpu_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/gpu_backend_load.h"
#include "core/json.h"
#include "core/record_build.h"
#include "core/stats.h"
#include "judge/gpu_siblings.h"

/* Batches of about a quarter interval: short enough that an interval ends
 * close to its nominal length, long enough that launching is noise. */
#define BATCHES_PER_INTERVAL 4
#define REPS_MAX 1000000u

double ng_gpu_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ng_gpu_pick_resolve(const struct ng_gpu_loaded *g, const struct ng_gpu_pick *p, int *out,
                        size_t *n, ng_err *err)
{
	*n = 0;
	if (!p->index || p->n == 0) {
		for (int i = 0; i < g->count; i++)
			out[(*n)++] = i;
		return 0;
	}
	if (p->n > NG_GPU_DEVICES_MAX)
		return ng_fail(err, "at most %d GPUs", NG_GPU_DEVICES_MAX);
	for (size_t i = 0; i < p->n; i++) {
		if (p->index[i] < 0 || p->index[i] >= g->count)
			return ng_fail(err, "--gpus: there is no GPU %d (the backend sees %d, 0 to %d)",
			               p->index[i], g->count, g->count - 1);
		for (size_t j = 0; j < i; j++)
			if (p->index[j] == p->index[i])
				return ng_fail(err, "--gpus: GPU %d is named twice", p->index[i]);
		out[(*n)++] = p->index[i];
	}
	return 0;
}

int ng_gpu_sustain_init(struct ng_gpu_sustain *s, double duration_s, double interval_s, double t0,
                        double unit)
{
	*s = (struct ng_gpu_sustain){.duration_s = duration_s, .interval_s = interval_s, .t0 = t0,
	                             .unit = unit};
	/* The last interval may be cut short; a slow batch may end an interval
	 * late, never early, so this many always suffice. */
	s->cap = (size_t)ceil(duration_s / interval_s) + 2;
	s->samples = calloc(s->cap, sizeof *s->samples);
	s->t_s = calloc(s->cap, sizeof *s->t_s);
	if (!s->samples || !s->t_s) {
		ng_gpu_sustain_free(s);
		return -1;
	}
	return 0;
}

void ng_gpu_sustain_free(struct ng_gpu_sustain *s)
{
	free(s->samples);
	free(s->t_s);
	s->samples = s->t_s = NULL;
	s->n = s->cap = 0;
}

static unsigned reps_for(double target_s, double per_rep_s)
{
	if (!(per_rep_s > 0) || !isfinite(per_rep_s))
		return 1;
	double r = target_s / per_rep_s;
	return r < 1 ? 1 : r > REPS_MAX ? REPS_MAX : (unsigned)r;
}

int ng_gpu_sustain_run(struct ng_gpu_sustain *s, ng_gpu_step_fn step, void *ctx, char *why)
{
	double work, sec;
	/* The first step warms up (clocks, caches, lazy allocation) and sizes
	 * the batches; it is not counted. */
	int rc = step(ctx, 1, &work, &sec, why);
	if (rc != NG_GPU_OK)
		return rc;
	unsigned reps = reps_for(s->interval_s / BATCHES_PER_INTERVAL, sec);
	double start = ng_gpu_now_s(), now = start;
	while (now - start < s->duration_s && s->n < s->cap) {
		double w_sum = 0, t_sum = 0, begin = now;
		do {
			if (s->before_batch)
				s->before_batch(s->arg, now - start);
			if ((rc = step(ctx, reps, &work, &sec, why)) != NG_GPU_OK)
				return rc;
			if (!(sec > 0) || !isfinite(sec) || !(work > 0)) {
				snprintf(why, NG_GPU_WHY, "the backend reported %g work in %g s of device time",
				         work, sec);
				return NG_GPU_EFAIL;
			}
			w_sum += work;
			t_sum += sec;
			reps = reps_for(s->interval_s / BATCHES_PER_INTERVAL, sec / reps);
			now = ng_gpu_now_s();
		} while (now - begin < s->interval_s && now - start < s->duration_s);
		s->samples[s->n] = w_sum / t_sum / s->unit;
		s->t_s[s->n++] = now - s->t0;
	}
	return NG_GPU_OK;
}

cJSON *ng_gpu_record(const char *metric, const char *probe)
{
	cJSON *rec = ng_record_new(metric, NULL, NULL);
	if (!rec)
		return NULL;
	cJSON *tool = ng_record_tool(rec);
	cJSON_AddStringToObject(tool, "name", "nodegate");
	cJSON_AddStringToObject(tool, "probe", probe);
	return rec;
}

cJSON *ng_gpu_device_json(const struct ng_gpu_loaded *g, int dev)
{
	const struct ng_gpu_device *d = &g->dev[dev];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", dev);
	cJSON_AddStringToObject(o, "uuid", d->uuid);
	cJSON_AddStringToObject(o, "pci_bus_id", d->pci_bus_id);
	cJSON_AddStringToObject(o, "name", d->name);
	return o;
}

void ng_gpu_add_backend(cJSON *rec, const struct ng_gpu_loaded *g)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "name", g->be && g->be->name ? g->be->name : "");
	cJSON_AddStringToObject(b, "library", g->path);
	cJSON_AddStringToObject(b, "version", g->version);
	ng_json_set(ng_record_conditions(rec), "backend", b);
}

cJSON *ng_gpu_unmeasured(const char *const *metrics, size_t n, const char *probe, const char *why)
{
	cJSON *records = cJSON_CreateArray();
	for (size_t i = 0; records && i < n; i++) {
		cJSON *rec = ng_gpu_record(metrics[i], probe);
		if (!rec) {
			cJSON_Delete(records);
			return NULL;
		}
		ng_record_set_reason(rec, "%s", why);
		cJSON_AddItemToArray(records, rec);
	}
	return records;
}

/* The median of a record's samples; NaN without (valid) samples. */
static double record_median(const cJSON *rec)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "samples"), *v;
	int n = cJSON_IsArray(s) ? cJSON_GetArraySize(s) : 0;
	if (n <= 0)
		return NAN;
	double *buf = malloc((size_t)n * sizeof *buf);
	size_t k = 0;
	if (!buf)
		return NAN;
	cJSON_ArrayForEach(v, s)
	{
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
			free(buf);
			return NAN;
		}
		buf[k++] = v->valuedouble;
	}
	double m = ng_np_median_inplace(buf, k);
	free(buf);
	return m;
}

static const char *metric_of(const cJSON *rec)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(rec, "metric");
	return cJSON_IsString(m) ? m->valuestring : "";
}

void ng_gpu_mark_siblings(cJSON *records, double fraction)
{
	size_t total = (size_t)cJSON_GetArraySize(records);
	if (total == 0)
		return;
	cJSON **group = malloc(total * sizeof *group);
	double *values = malloc(total * sizeof *values), *work = malloc(total * sizeof *work);
	ng_gpu_sibling *out = malloc(total * sizeof *out);
	bool *done = calloc(total, sizeof *done);
	if (!group || !values || !work || !out || !done)
		goto out;
	size_t i = 0;
	for (cJSON *a = records->child; a; a = a->next, i++) {
		if (done[i])
			continue;
		size_t n = 0, j = i;
		for (cJSON *b = a; b; b = b->next, j++)
			if (!done[j] && strcmp(metric_of(a), metric_of(b)) == 0) {
				done[j] = true;
				group[n] = b;
				values[n++] = record_median(b);
			}
		ng_gpu_siblings(values, n, fraction, work, out);
		for (size_t k = 0; k < n; k++) {
			cJSON *sib = cJSON_CreateObject();
			cJSON_AddBoolToObject(sib, "evaluable", out[k].evaluable);
			if (isfinite(out[k].siblings_median))
				cJSON_AddNumberToObject(sib, "median", out[k].siblings_median);
			if (out[k].evaluable)
				cJSON_AddNumberToObject(sib, "percent", out[k].percent);
			cJSON_AddBoolToObject(sib, "outlier", out[k].outlier);
			cJSON_AddNumberToObject(sib, "fraction", fraction);
			cJSON_AddNumberToObject(sib, "count", (double)out[k].n_siblings);
			ng_json_set(ng_record_detail(group[k]), "siblings", sib);
		}
	}
out:
	free(group);
	free(values);
	free(work);
	free(out);
	free(done);
}

struct ng_gpu_loaded *ng_probe_gpu_open(char *why, size_t why_len, bool *absent)
{
	struct ng_gpu_loaded *g = malloc(sizeof *g);
	if (absent)
		*absent = false;
	if (!g) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	int rc = ng_gpu_backend_open(g, why, why_len);
	if (rc < 0) {
		if (absent)
			*absent = rc == NG_GPU_LOAD_ABSENT;
		free(g);
		return NULL;
	}
	return g;
}

void ng_probe_gpu_close(struct ng_gpu_loaded *g)
{
	if (!g)
		return;
	ng_gpu_backend_close(g);
	free(g);
}
