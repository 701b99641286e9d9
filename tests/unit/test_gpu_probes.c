/* The GPU probes' host side against a backend table in this process, with
 * fake device times (no device, no sleep): the rates come out as the fake
 * GPUs were told to deliver them, verification and failures land in the
 * right records, and the loader refuses what it must. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gpu_backend_load.h"
#include "collect/probe_gpu.h"
#include "core/json.h"

#define GPUS 4

/* ---- the fake backend ------------------------------------------------------------ */

static struct fake {
	int count;
	int init_rc;
	double tflops[GPUS], gbps[GPUS]; /* compute; every copy path and memory */
	double planted[GPUS];
	int throttle_calls[GPUS];
	double last_throttle[GPUS];
	uint64_t gemm_wrong[GPUS], copy_wrong[GPUS];
	int fail_gemm_setup, fail_mem_pattern, no_peer_src, no_peer_dst; /* -1: none */
	uint64_t free_bytes;
	int64_t corrupt_seen[GPUS];
} F;

static void fake_reset(void)
{
	memset(&F, 0, sizeof F);
	F.count = GPUS;
	for (int i = 0; i < GPUS; i++) {
		F.tflops[i] = 700;
		F.gbps[i] = 50;
		F.planted[i] = 1;
		F.corrupt_seen[i] = -2;
	}
	F.fail_gemm_setup = F.fail_mem_pattern = F.no_peer_src = F.no_peer_dst = -1;
	F.free_bytes = (uint64_t)1 << 30;
}

static int f_init(int *count, char *version, size_t len, char *why)
{
	if (F.init_rc) {
		snprintf(why, NG_GPU_WHY, "fake driver refused");
		return NG_GPU_EFAIL;
	}
	*count = F.count;
	snprintf(version, len, "fake 1");
	return NG_GPU_OK;
}

static int f_describe(int dev, struct ng_gpu_device *d, char *why)
{
	(void)why;
	snprintf(d->name, sizeof d->name, "Fake GPU");
	snprintf(d->uuid, sizeof d->uuid, "GPU-fake-%d", dev);
	snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:%02x:00.0", 0x10 + dev);
	d->total_bytes = (uint64_t)2 << 30;
	d->free_bytes = F.free_bytes;
	return NG_GPU_OK;
}

struct ctx {
	int dev, src, dst;
	unsigned n;
	uint64_t bytes;
};

static int f_gemm_setup(int dev, unsigned n, void **ctx, char *engine, size_t len, char *why)
{
	if (dev == F.fail_gemm_setup) {
		snprintf(why, NG_GPU_WHY, "fake out of memory");
		return NG_GPU_EFAIL;
	}
	struct ctx *c = calloc(1, sizeof *c);
	c->dev = dev;
	c->n = n;
	*ctx = c;
	snprintf(engine, len, "fake");
	return NG_GPU_OK;
}

static int f_gemm_run(void *ctx, unsigned reps, double *seconds, char *why)
{
	(void)why;
	struct ctx *c = ctx;
	double n = c->n;
	*seconds = reps * 2 * n * n * n / (F.tflops[c->dev] * F.planted[c->dev] * 1e12);
	return NG_GPU_OK;
}

static int f_gemm_verify(void *ctx, uint64_t *wrong, uint64_t *checked, char *why)
{
	(void)why;
	struct ctx *c = ctx;
	*wrong = F.gemm_wrong[c->dev];
	*checked = (uint64_t)c->n * c->n;
	return NG_GPU_OK;
}

static void f_free(void *ctx) { free(ctx); }

static int f_mem_setup(int dev, uint64_t bytes, void **ctx, char *why)
{
	(void)why;
	struct ctx *c = calloc(1, sizeof *c);
	c->dev = dev;
	c->bytes = bytes;
	*ctx = c;
	return NG_GPU_OK;
}

static int f_mem_pattern(void *ctx, enum ng_gpu_pattern p, uint64_t seed, int64_t corrupt,
                         uint64_t *wrong, uint64_t *offsets, unsigned max, unsigned *n, char *why)
{
	(void)seed;
	struct ctx *c = ctx;
	if (c->dev == F.fail_mem_pattern && p == NG_GPU_PATTERN_WALKING) {
		snprintf(why, NG_GPU_WHY, "fake kernel launch failed");
		return NG_GPU_EFAIL;
	}
	if (corrupt >= 0)
		F.corrupt_seen[c->dev] = corrupt;
	*wrong = corrupt >= 0;
	*n = 0;
	if (corrupt >= 0 && max > 0)
		offsets[(*n)++] = (uint64_t)corrupt * 8;
	return NG_GPU_OK;
}

static int f_mem_copy(void *ctx, unsigned reps, uint64_t *bytes, double *seconds, char *why)
{
	(void)why;
	struct ctx *c = ctx;
	*bytes = (uint64_t)reps * c->bytes;
	*seconds = (double)*bytes / (F.gbps[c->dev] * 1e9);
	return NG_GPU_OK;
}

static int f_copy_setup(enum ng_gpu_path path, int src, int dst, uint64_t bytes, void **ctx,
                        char *why)
{
	(void)why;
	if (path == NG_GPU_PATH_P2P && src == F.no_peer_src && dst == F.no_peer_dst)
		return NG_GPU_ENOTAPPLICABLE;
	struct ctx *c = calloc(1, sizeof *c);
	c->src = src;
	c->dst = dst;
	c->dev = path == NG_GPU_PATH_H2D ? dst : src;
	c->bytes = bytes;
	*ctx = c;
	return NG_GPU_OK;
}

static int f_copy_run(void *ctx, unsigned reps, double *seconds, char *why)
{
	(void)why;
	struct ctx *c = ctx;
	*seconds = (double)reps * (double)c->bytes / (F.gbps[c->dev] * 1e9);
	return NG_GPU_OK;
}

static int f_copy_verify(void *ctx, uint64_t seed, uint64_t *wrong, char *why)
{
	(void)seed;
	(void)why;
	struct ctx *c = ctx;
	*wrong = F.copy_wrong[c->dev];
	return NG_GPU_OK;
}

static int f_throttle(int dev, double share, char *why)
{
	(void)why;
	F.planted[dev] = share;
	F.throttle_calls[dev]++;
	F.last_throttle[dev] = share;
	return NG_GPU_OK;
}

static struct ng_gpu_backend fake_table(void)
{
	return (struct ng_gpu_backend){
		.abi = NG_GPU_BACKEND_ABI, .name = "fake", .init = f_init, .describe = f_describe,
		.gemm_setup = f_gemm_setup, .gemm_run = f_gemm_run, .gemm_verify = f_gemm_verify,
		.gemm_teardown = f_free, .mem_setup = f_mem_setup, .mem_pattern = f_mem_pattern,
		.mem_copy = f_mem_copy, .mem_teardown = f_free, .copy_setup = f_copy_setup,
		.copy_run = f_copy_run, .copy_verify = f_copy_verify, .copy_teardown = f_free,
		.throttle = f_throttle,
	};
}

static struct ng_gpu_backend table;
static struct ng_gpu_loaded loaded;

static const struct ng_gpu_loaded *load(void)
{
	char why[512];
	table = fake_table();
	assert_int_equal(ng_gpu_backend_use(&loaded, &table, "fake", why, sizeof why), 0);
	return &loaded;
}

/* ---- helpers ---------------------------------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static const cJSON *detail(const cJSON *r, const char *k) { return get(get(r, "detail"), k); }

static int n_samples(const cJSON *r) { return cJSON_GetArraySize(get(r, "samples")); }

/* Every sample within a part in a million of want. */
static void samples_are(const cJSON *r, double want)
{
	const cJSON *v;
	assert_true(n_samples(r) > 0);
	cJSON_ArrayForEach(v, get(r, "samples")) assert_true(fabs(v->valuedouble / want - 1) < 1e-6);
}

static int setup(void **state)
{
	(void)state;
	fake_reset();
	return 0;
}

static struct ng_gpu_compute_opts compute_opts(void)
{
	struct ng_gpu_compute_opts o;
	ng_gpu_compute_opts_default(&o);
	o.n = 256;
	o.duration_s = 0.3;
	o.interval_s = 0.05;
	o.nvml = false;
	return o;
}

/* ---- compute ---------------------------------------------------------------------- */

static void test_compute_rates_and_siblings(void **state)
{
	(void)state;
	F.tflops[2] = 350;
	struct ng_gpu_compute_opts o = compute_opts();
	ng_err err;
	cJSON *recs = ng_probe_gpu_compute_run(load(), NULL, &o, &err);
	assert_non_null(recs);
	assert_int_equal(cJSON_GetArraySize(recs), GPUS);
	int k = 0;
	for (const cJSON *r = recs->child; r; r = r->next, k++) {
		assert_string_equal(get(r, "metric")->valuestring, "gpu.gemm.tflops");
		assert_string_equal(get(r, "unit")->valuestring, "TFLOP/s");
		assert_int_equal((int)get(detail(r, "gpu"), "index")->valuedouble, k);
		char uuid[32];
		snprintf(uuid, sizeof uuid, "GPU-fake-%d", k);
		assert_string_equal(get(detail(r, "gpu"), "uuid")->valuestring, uuid);
		assert_non_null(get(detail(r, "gpu"), "pci_bus_id"));
		samples_are(r, k == 2 ? 350 : 700);
		/* At most one per interval, plus the cut-short last one; fewer
		 * only when the machine is slow to schedule the threads. */
		assert_true(n_samples(r) >= 1 && n_samples(r) <= 8);
		assert_true(get(r, "wrong")->valuedouble == 0);
		assert_true(get(detail(r, "verify"), "checked")->valuedouble == 256.0 * 256);
		assert_true(cJSON_IsBool(get(detail(r, "siblings"), "outlier")));
		assert_int_equal(cJSON_IsTrue(get(detail(r, "siblings"), "outlier")), k == 2);
		assert_false(cJSON_IsTrue(get(detail(r, "series"), "falling")));
		assert_string_equal(get(detail(r, "nvml"), "status")->valuestring, "not sampled (--no-nvml)");
		assert_int_equal(cJSON_GetArraySize(detail(r, "sample_t_s")), n_samples(r));
	}
	cJSON_Delete(recs);
}

static void test_compute_wrong_and_failed_setup(void **state)
{
	(void)state;
	F.gemm_wrong[0] = 3;
	F.fail_gemm_setup = 1;
	struct ng_gpu_compute_opts o = compute_opts();
	ng_err err;
	cJSON *recs = ng_probe_gpu_compute_run(load(), NULL, &o, &err);
	assert_non_null(recs);
	const cJSON *r0 = cJSON_GetArrayItem(recs, 0), *r1 = cJSON_GetArrayItem(recs, 1);
	assert_true(get(r0, "wrong")->valuedouble == 3);
	assert_int_equal(n_samples(r1), 0);
	assert_true(cJSON_IsNull(get(r1, "wrong")));
	assert_non_null(strstr(get(r1, "reason")->valuestring, "gemm_setup"));
	assert_non_null(strstr(get(r1, "reason")->valuestring, "fake out of memory"));
	/* The failed GPU takes no part in its siblings' median. */
	assert_true(get(detail(r0, "siblings"), "count")->valuedouble == 2);
	cJSON_Delete(recs);
}

static void test_compute_planted_throttle(void **state)
{
	(void)state;
	struct ng_gpu_compute_opts o = compute_opts();
	o.duration_s = 0.6;
	o.plant_throttle = 0.5;
	o.gpus = (struct ng_gpu_pick){(const int[]){3, 1}, 2};
	ng_err err;
	cJSON *recs = ng_probe_gpu_compute_run(load(), NULL, &o, &err);
	assert_non_null(recs);
	assert_int_equal(cJSON_GetArraySize(recs), 2);
	/* The first GPU of the run, planted and then released. */
	assert_int_equal(F.throttle_calls[3], 2);
	assert_true(F.last_throttle[3] == 1);
	assert_int_equal(F.throttle_calls[1], 0);
	const cJSON *r = recs->child;
	assert_int_equal((int)get(detail(r, "gpu"), "index")->valuedouble, 3);
	const cJSON *s = detail(r, "series");
	assert_true(cJSON_IsTrue(get(s, "falling")));
	assert_true(fabs(get(s, "drop_percent")->valuedouble - 50) < 1e-6);
	assert_non_null(strstr(get(s, "cause")->valuestring, "NVML gave no reading"));
	assert_true(get(get(r, "conditions"), "planted_throttle_share")->valuedouble == 0.5);
	assert_false(cJSON_IsTrue(get(detail(r->next, "series"), "falling")));
	cJSON_Delete(recs);
}

static void test_compute_bad_pick(void **state)
{
	(void)state;
	struct ng_gpu_compute_opts o = compute_opts();
	o.gpus = (struct ng_gpu_pick){(const int[]){1, 7}, 2};
	ng_err err;
	assert_null(ng_probe_gpu_compute_run(load(), NULL, &o, &err));
	assert_non_null(strstr(err.msg, "no GPU 7"));
	o.gpus = (struct ng_gpu_pick){(const int[]){1, 1}, 2};
	assert_null(ng_probe_gpu_compute_run(load(), NULL, &o, &err));
	assert_non_null(strstr(err.msg, "twice"));
}

/* ---- memory ----------------------------------------------------------------------- */

static struct ng_gpu_memory_opts memory_opts(void)
{
	struct ng_gpu_memory_opts o;
	ng_gpu_memory_opts_default(&o);
	o.duration_s = 0.2;
	o.interval_s = 0.05;
	return o;
}

static void test_memory_planted_word(void **state)
{
	(void)state;
	F.gbps[1] = 30;
	struct ng_gpu_memory_opts o = memory_opts();
	o.plant_corrupt_word = 1234;
	ng_err err;
	cJSON *recs = ng_probe_gpu_memory_run(load(), NULL, &o, &err);
	assert_non_null(recs);
	assert_int_equal(cJSON_GetArraySize(recs), GPUS);
	const cJSON *r0 = recs->child, *r1 = r0->next;
	assert_true(F.corrupt_seen[0] == 1234); /* the first GPU, random pattern only */
	assert_true(F.corrupt_seen[1] == -2);
	assert_true(get(r0, "wrong")->valuedouble == 1);
	assert_true(get(detail(r0, "integrity"), "random")->valuedouble == 1);
	assert_true(get(detail(r0, "integrity"), "address")->valuedouble == 0);
	const cJSON *m = cJSON_GetArrayItem(detail(r0, "first_mismatches"), 0);
	assert_string_equal(get(m, "offset")->valuestring, "0x2690");
	assert_string_equal(get(m, "pattern")->valuestring, "random");
	assert_true(get(r1, "wrong")->valuedouble == 0);
	samples_are(r0, 50);
	samples_are(r1, 30);
	assert_true(cJSON_IsTrue(get(detail(r1, "siblings"), "outlier")));
	/* 0.8 of 1 GiB free, in whole 16-byte units. */
	assert_true(get(get(r0, "conditions"), "bytes")->valuedouble == (double)((uint64_t)(0.8 * (1 << 30)) / 16 * 16));
	cJSON_Delete(recs);
}

static void test_memory_pattern_failure(void **state)
{
	(void)state;
	F.fail_mem_pattern = 2;
	struct ng_gpu_memory_opts o = memory_opts();
	ng_err err;
	cJSON *recs = ng_probe_gpu_memory_run(load(), NULL, &o, &err);
	const cJSON *r2 = cJSON_GetArrayItem(recs, 2);
	/* Bandwidth measured, integrity not checked: wrong stays null. */
	assert_true(n_samples(r2) > 0);
	assert_true(cJSON_IsNull(get(r2, "wrong")));
	assert_non_null(strstr(detail(r2, "problem")->valuestring, "walking"));
	cJSON_Delete(recs);
}

/* ---- copy ------------------------------------------------------------------------- */

static void test_copy_matrix(void **state)
{
	(void)state;
	F.gbps[1] = 25; /* an x8 slot: every path from or to GPU 1 is slower */
	F.no_peer_src = 2;
	F.no_peer_dst = 3;
	F.copy_wrong[3] = 2;
	struct ng_gpu_copy_opts o;
	ng_gpu_copy_opts_default(&o);
	o.bytes = 1 << 20;
	o.duration_s = 0.05;
	o.interval_s = 0.02;
	ng_err err;
	cJSON *recs = ng_probe_gpu_copy_run(load(), NULL, &o, &err);
	assert_non_null(recs);
	/* 4 H2D, 4 D2H, 12 ordered pairs less the one without peer access. */
	assert_int_equal(cJSON_GetArraySize(recs), 4 + 4 + 11);
	int h2d = 0, p2p = 0;
	for (const cJSON *r = recs->child; r; r = r->next) {
		const char *m = get(r, "metric")->valuestring;
		bool out = cJSON_IsTrue(get(detail(r, "siblings"), "outlier"));
		const cJSON *np = get(get(r, "conditions"), "no_peer_access");
		assert_int_equal(cJSON_GetArraySize(np), 1);
		if (strcmp(m, "gpucopy.p2p.gbps") == 0) {
			int src = (int)get(detail(r, "src"), "index")->valuedouble;
			int dst = (int)get(detail(r, "dst"), "index")->valuedouble;
			assert_false(src == 2 && dst == 3);
			samples_are(r, src == 1 ? 25 : 50);
			assert_int_equal(out, src == 1);
			assert_true(get(r, "wrong")->valuedouble == (src == 3 ? 2 : 0));
			p2p++;
		} else {
			int dev = (int)get(detail(r, "gpu"), "index")->valuedouble;
			samples_are(r, dev == 1 ? 25 : 50);
			assert_int_equal(out, dev == 1);
			assert_true(get(r, "wrong")->valuedouble == (dev == 3 ? 2 : 0));
			h2d += strcmp(m, "gpucopy.h2d.gbps") == 0;
		}
	}
	assert_int_equal(h2d, 4);
	assert_int_equal(p2p, 11);
	cJSON_Delete(recs);
}

/* ---- no backend, and the loader ---------------------------------------------------- */

static void test_no_backend(void **state)
{
	(void)state;
	struct ng_gpu_copy_opts co;
	ng_gpu_copy_opts_default(&co);
	ng_err err;
	cJSON *recs = ng_probe_gpu_copy_run(NULL, "no GPU backend: test", &co, &err);
	assert_int_equal(cJSON_GetArraySize(recs), 3);
	for (const cJSON *r = recs->child; r; r = r->next) {
		assert_int_equal(n_samples(r), 0);
		assert_string_equal(get(r, "reason")->valuestring, "no GPU backend: test");
	}
	cJSON_Delete(recs);
	struct ng_gpu_compute_opts o = compute_opts();
	recs = ng_probe_gpu_compute_run(NULL, "none", &o, &err);
	assert_int_equal(cJSON_GetArraySize(recs), 1);
	cJSON_Delete(recs);
}

static void test_loader_refusals(void **state)
{
	(void)state;
	char why[512];
	struct ng_gpu_loaded g;
	struct ng_gpu_backend t = fake_table();
	t.abi = 99;
	assert_int_equal(ng_gpu_backend_use(&g, &t, "x.so", why, sizeof why), -1);
	assert_non_null(strstr(why, "ABI 99"));
	t = fake_table();
	t.mem_copy = NULL;
	assert_int_equal(ng_gpu_backend_use(&g, &t, "x.so", why, sizeof why), -1);
	assert_non_null(strstr(why, "mem_copy"));
	t = fake_table();
	F.init_rc = 1;
	assert_int_equal(ng_gpu_backend_use(&g, &t, "x.so", why, sizeof why), -1);
	assert_non_null(strstr(why, "fake driver refused"));
	F.init_rc = 0;
	F.count = 0;
	assert_int_equal(ng_gpu_backend_use(&g, &t, "x.so", why, sizeof why), -1);
	assert_non_null(strstr(why, "sees no GPU"));
	assert_int_equal(ng_gpu_backend_use(&g, NULL, "x.so", why, sizeof why), -1);

	/* Named but not there: the operator's library is broken, not absent. */
	setenv("NODEGATE_GPU_BACKEND", "/nonexistent/libnodegate-gpu-none.so", 1);
	assert_int_equal(ng_gpu_backend_open(&g, why, sizeof why), -1);
	assert_non_null(strstr(why, "/nonexistent/libnodegate-gpu-none.so"));
	assert_null(g.handle);
	/* A library that is no backend: libm has no ng_gpu_backend_v1. */
	setenv("NODEGATE_GPU_BACKEND", "libm.so.6", 1);
	assert_int_equal(ng_gpu_backend_open(&g, why, sizeof why), -1);
	assert_non_null(strstr(why, "ng_gpu_backend_v1"));
	/* Unset: nothing beside this test, in its ../lib or on the path. */
	unsetenv("NODEGATE_GPU_BACKEND");
	assert_int_equal(ng_gpu_backend_open(&g, why, sizeof why), NG_GPU_LOAD_ABSENT);
	assert_non_null(strstr(why, "neither beside nodegate"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_compute_rates_and_siblings, setup),
		cmocka_unit_test_setup(test_compute_wrong_and_failed_setup, setup),
		cmocka_unit_test_setup(test_compute_planted_throttle, setup),
		cmocka_unit_test_setup(test_compute_bad_pick, setup),
		cmocka_unit_test_setup(test_memory_planted_word, setup),
		cmocka_unit_test_setup(test_memory_pattern_failure, setup),
		cmocka_unit_test_setup(test_copy_matrix, setup),
		cmocka_unit_test_setup(test_no_backend, setup),
		cmocka_unit_test_setup(test_loader_refusals, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
