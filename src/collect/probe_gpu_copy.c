/* The GPU copy-path probe: pinned host memory to each GPU and back, and
 * every ordered GPU pair peer to peer, each copy's data verified, as a
 * per-path matrix of records.
 *
 * Host paths run one GPU at a time: all GPUs at once would measure the
 * host's memory and root complex, shared by all of them, rather than each
 * GPU's own link (one GPU in an x8 slot must stand out). Peer paths run in
 * rounds: in round r every GPU i sends to GPU i + r (mod n), so each GPU
 * sends on one link and receives on one at a time, and the n - 1 rounds
 * cover every ordered pair. */
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

#define PROBE "gpu-copy"

static const char *const metric_of_path[] = {"gpucopy.h2d.gbps", "gpucopy.d2h.gbps",
                                             "gpucopy.p2p.gbps"};

void ng_gpu_copy_opts_default(struct ng_gpu_copy_opts *o)
{
	/* 256 MiB: tens of milliseconds per copy on any link, far past the
	 * sizes where latency still counts. */
	*o = (struct ng_gpu_copy_opts){.bytes = 256u << 20, .duration_s = 0.5, .interval_s = 0.1,
	                               .seed = 1, .sibling_fraction = 0.9};
}

struct job {
	pthread_t tid;
	const struct ng_gpu_loaded *g;
	const struct ng_gpu_copy_opts *o;
	enum ng_gpu_path path;
	int src, dst; /* backend indexes; the host path's GPU in both */
	void *ctx;
	struct ng_gpu_sustain s;
	bool measured, not_applicable, verified;
	uint64_t wrong;
	char why[NG_GPU_WHY + 96];
	char check_why[NG_GPU_WHY + 96];
};

static const char *path_name(enum ng_gpu_path p)
{
	return p == NG_GPU_PATH_H2D ? "host to device" : p == NG_GPU_PATH_D2H ? "device to host"
	                                                                      : "peer to peer";
}

static int copy_step(void *arg, unsigned reps, double *work, double *seconds, char *why)
{
	struct job *j = arg;
	*work = (double)j->o->bytes * (double)reps;
	return j->g->be->copy_run(j->ctx, reps, seconds, why);
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	const struct ng_gpu_backend *be = j->g->be;
	char why[NG_GPU_WHY] = "", what[48];
	if (j->path == NG_GPU_PATH_P2P)
		snprintf(what, sizeof what, "GPU %d to GPU %d", j->src, j->dst);
	else
		snprintf(what, sizeof what, "GPU %d", j->src);
	if (j->why[0])
		return NULL;
	int rc = be->copy_setup(j->path, j->src, j->dst, j->o->bytes, &j->ctx, why);
	why[NG_GPU_WHY - 1] = '\0';
	if (rc == NG_GPU_ENOTAPPLICABLE) {
		j->not_applicable = true;
		return NULL;
	}
	if (rc != NG_GPU_OK) {
		snprintf(j->why, sizeof j->why, "copy_setup (%s, %s) failed: %s", path_name(j->path), what,
		         why);
		return NULL;
	}
	/* Checked first: a path that corrupts data has no bandwidth worth having. */
	rc = be->copy_verify(j->ctx, j->o->seed, &j->wrong, why);
	why[NG_GPU_WHY - 1] = '\0';
	j->verified = rc == NG_GPU_OK;
	if (!j->verified)
		snprintf(j->check_why, sizeof j->check_why, "copy_verify (%s, %s) failed: %s",
		         path_name(j->path), what, why);
	rc = ng_gpu_sustain_run(&j->s, copy_step, j, why);
	why[NG_GPU_WHY - 1] = '\0';
	if (rc != NG_GPU_OK)
		snprintf(j->why, sizeof j->why, "copy_run (%s, %s) failed after %zu samples: %s",
		         path_name(j->path), what, j->s.n, why);
	else if (j->s.n == 0)
		snprintf(j->why, sizeof j->why, "no interval completed (%s, %s)", path_name(j->path), what);
	else
		j->measured = true;
	be->copy_teardown(j->ctx);
	return NULL;
}

/* Runs jobs[idx[0..n)] at once. */
static void run_round(struct job *jobs, const size_t *idx, size_t n)
{
	size_t started = 0;
	for (; started < n; started++)
		if (pthread_create(&jobs[idx[started]].tid, NULL, job_main, &jobs[idx[started]]) != 0)
			break;
	for (size_t k = started; k < n; k++)
		snprintf(jobs[idx[k]].why, sizeof jobs[idx[k]].why, "could not start a thread");
	for (size_t k = 0; k < started; k++)
		pthread_join(jobs[idx[k]].tid, NULL);
}

static cJSON *no_peer_list(const struct job *jobs, size_t n_jobs)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n_jobs; i++)
		if (jobs[i].not_applicable) {
			cJSON *pair = cJSON_CreateArray();
			cJSON_AddItemToArray(pair, cJSON_CreateNumber(jobs[i].src));
			cJSON_AddItemToArray(pair, cJSON_CreateNumber(jobs[i].dst));
			cJSON_AddItemToArray(arr, pair);
		}
	return arr;
}

static cJSON *build(const struct ng_gpu_loaded *g, const struct ng_gpu_copy_opts *o,
                    struct job *jobs, size_t n_jobs, size_t n_gpus)
{
	cJSON *records = cJSON_CreateArray();
	for (size_t i = 0; records && i < n_jobs; i++) {
		struct job *j = &jobs[i];
		if (j->not_applicable)
			continue; /* no peer access: nothing to measure, listed in conditions */
		cJSON *rec = ng_gpu_record(metric_of_path[j->path], PROBE);
		if (!rec) {
			cJSON_Delete(records);
			return NULL;
		}
		cJSON_AddItemToArray(records, rec);
		cJSON *d = ng_record_detail(rec), *c = ng_record_conditions(rec);
		if (j->path == NG_GPU_PATH_P2P) {
			cJSON_AddItemToObject(d, "src", ng_gpu_device_json(g, j->src));
			cJSON_AddItemToObject(d, "dst", ng_gpu_device_json(g, j->dst));
		} else {
			cJSON_AddItemToObject(d, "gpu", ng_gpu_device_json(g, j->src));
		}
		ng_gpu_add_backend(rec, g);
		cJSON_AddStringToObject(c, "path", path_name(j->path));
		cJSON_AddNumberToObject(c, "bytes", (double)o->bytes);
		cJSON_AddStringToObject(c, "host_memory", j->path == NG_GPU_PATH_P2P ? "none" : "pinned");
		cJSON_AddStringToObject(c, "schedule", j->path == NG_GPU_PATH_P2P
		                                           ? "rounds: every GPU sends to one peer at once"
		                                           : "one GPU at a time");
		cJSON_AddNumberToObject(c, "duration_s", o->duration_s);
		cJSON_AddNumberToObject(c, "interval_s", o->interval_s);
		cJSON_AddNumberToObject(c, "seed", (double)o->seed);
		cJSON_AddNumberToObject(c, "gpus", (double)n_gpus);
		cJSON_AddItemToObject(c, "no_peer_access", no_peer_list(jobs, n_jobs));
		if (!j->measured) {
			ng_record_set_reason(rec, "%s", j->why);
			continue;
		}
		for (size_t k = 0; k < j->s.n; k++)
			ng_record_add_sample(rec, j->s.samples[k]);
		if (j->verified) {
			ng_record_set_wrong(rec, (double)j->wrong);
			cJSON *v = cJSON_AddObjectToObject(d, "verify");
			cJSON_AddNumberToObject(v, "wrong_words", (double)j->wrong);
			cJSON_AddNumberToObject(v, "checked_words", (double)(o->bytes / 8));
		} else {
			cJSON_AddStringToObject(d, "problem", j->check_why);
		}
	}
	return records;
}

static int check_opts(const struct ng_gpu_copy_opts *o, ng_err *err)
{
	if (o->bytes < 4096 || o->bytes % 8 || o->bytes > ((uint64_t)64 << 30))
		return ng_fail(err, "--size must be 4 KiB to 64 GiB, a whole number of 8-byte words");
	if (!(o->duration_s > 0) || o->duration_s > 3600)
		return ng_fail(err, "--duration must be more than 0 and at most 3600 s");
	if (!(o->interval_s >= 0.01) || o->interval_s > o->duration_s)
		return ng_fail(err, "--interval must be at least 0.01 s and at most the duration");
	return 0;
}

cJSON *ng_probe_gpu_copy_run(const struct ng_gpu_loaded *g, const char *why,
                             const struct ng_gpu_copy_opts *o, ng_err *err)
{
	if (check_opts(o, err) < 0)
		return NULL;
	if (!g)
		return ng_gpu_unmeasured(metric_of_path, 3, PROBE, why ? why : "no GPU backend");
	int devs[NG_GPU_DEVICES_MAX];
	size_t n;
	if (ng_gpu_pick_resolve(g, &o->gpus, devs, &n, err) < 0)
		return NULL;
	size_t n_jobs = 2 * n + n * (n - 1);
	struct job *jobs = calloc(n_jobs, sizeof *jobs);
	size_t *idx = calloc(n, sizeof *idx);
	cJSON *records = NULL;
	if (!jobs || !idx) {
		ng_fail(err, "out of memory");
		goto out;
	}
	double t0 = ng_gpu_now_s();
	size_t at = 0;
	for (int p = NG_GPU_PATH_H2D; p <= NG_GPU_PATH_D2H; p++)
		for (size_t k = 0; k < n; k++)
			jobs[at++] = (struct job){.path = (enum ng_gpu_path)p, .src = devs[k], .dst = devs[k]};
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++)
			if (a != b)
				jobs[at++] = (struct job){.path = NG_GPU_PATH_P2P, .src = devs[a], .dst = devs[b]};
	for (size_t i = 0; i < n_jobs; i++) {
		jobs[i].g = g;
		jobs[i].o = o;
		if (ng_gpu_sustain_init(&jobs[i].s, o->duration_s, o->interval_s, t0, 1e9) < 0)
			snprintf(jobs[i].why, sizeof jobs[i].why, "out of memory");
	}
	/* Host paths, one at a time: H2D and D2H of each GPU. */
	for (size_t k = 0; k < n; k++) {
		idx[0] = k;
		run_round(jobs, idx, 1);
		idx[0] = n + k;
		run_round(jobs, idx, 1);
	}
	/* Peer rounds. jobs for source a are at 2n + a(n-1) + (b < a ? b : b - 1). */
	for (size_t r = 1; r < n; r++) {
		for (size_t a = 0; a < n; a++) {
			size_t b = (a + r) % n;
			idx[a] = 2 * n + a * (n - 1) + (b < a ? b : b - 1);
		}
		run_round(jobs, idx, n);
	}
	records = build(g, o, jobs, n_jobs, n);
	if (records)
		ng_gpu_mark_siblings(records, o->sibling_fraction);
	else
		ng_fail(err, "out of memory");
out:
	for (size_t i = 0; jobs && i < n_jobs; i++)
		ng_gpu_sustain_free(&jobs[i].s);
	free(jobs);
	free(idx);
	return records;
}
