/* The CUDA backend as nodegate loads it: dlopen, ng_gpu_backend_v1, init.
 *
 * Without a GPU or driver, init must fail with a one-line reason (or see no
 * GPU), and every other entry must fail the same way without crashing. With
 * GPUs, each operation runs once, small, on GPU 0 (and a peer pair where
 * there is one) and its answer is checked: the GEMM on both engines, the
 * three memory patterns and a planted corrupt word, the copy kernel and the
 * copy paths. No timing is asserted: a test that fails when the machine is
 * busy tests the machine.
 *
 * usage: test_gpu_cuda_load LIBRARY */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gpu_backend.h"

static int failures;

#define CHECK(cond, ...)                                                         \
	do {                                                                     \
		if (!(cond)) {                                                   \
			failures++;                                              \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                            \
			fputc('\n', stderr);                                     \
		}                                                                \
	} while (0)

static int one_line(const char *why)
{
	return why[0] != '\0' && strchr(why, '\n') == NULL && strlen(why) < NG_GPU_WHY;
}

/* Every entry on a machine without a working driver: a failure with a
 * reason, or "not applicable", never success or a crash. */
static void no_driver(const struct ng_gpu_backend *b)
{
	char why[NG_GPU_WHY], engine[32];
	void *ctx = (void *)1;
	double s = 1;
	struct ng_gpu_device d;
	int rc;

	why[0] = '\0';
	rc = b->describe(0, &d, why);
	CHECK(rc == NG_GPU_EFAIL && one_line(why), "describe: rc %d why '%s'", rc, why);
	why[0] = '\0';
	rc = b->gemm_setup(0, 64, &ctx, engine, sizeof engine, why);
	CHECK(rc == NG_GPU_EFAIL && one_line(why) && ctx == NULL, "gemm_setup: rc %d why '%s'", rc, why);
	why[0] = '\0';
	ctx = (void *)1;
	rc = b->mem_setup(0, 1u << 20, &ctx, why);
	CHECK(rc == NG_GPU_EFAIL && one_line(why) && ctx == NULL, "mem_setup: rc %d why '%s'", rc, why);
	why[0] = '\0';
	ctx = (void *)1;
	rc = b->copy_setup(NG_GPU_PATH_H2D, 0, 0, 1u << 20, &ctx, why);
	CHECK(rc == NG_GPU_EFAIL && one_line(why) && ctx == NULL, "copy_setup: rc %d why '%s'", rc, why);
	why[0] = '\0';
	rc = b->ref_gemm(0, 64, 1, &s, why);
	CHECK((rc == NG_GPU_EFAIL || rc == NG_GPU_ENOTAPPLICABLE) && one_line(why), "ref_gemm: rc %d why '%s'",
	      rc, why);
	why[0] = '\0';
	rc = b->ref_d2d(0, 1u << 20, 1, &s, why);
	CHECK(rc == NG_GPU_EFAIL && one_line(why), "ref_d2d: rc %d why '%s'", rc, why);
	why[0] = '\0';
	rc = b->ref_h2d(0, 1u << 20, 1, &s, why);
	CHECK(rc == NG_GPU_EFAIL && one_line(why), "ref_h2d: rc %d why '%s'", rc, why);
	b->gemm_teardown(NULL);
	b->mem_teardown(NULL);
	b->copy_teardown(NULL);
}

static void gemm_check(const struct ng_gpu_backend *b, unsigned n, const char *want_engine)
{
	char why[NG_GPU_WHY] = "", engine[32] = "";
	void *ctx = NULL;
	double s = 0;
	uint64_t wrong = 1, checked = 0;
	int rc = b->gemm_setup(0, n, &ctx, engine, sizeof engine, why);
	CHECK(rc == 0, "gemm_setup(n=%u): %s", n, why);
	if (rc) return;
	printf("gemm n=%u engine %s\n", n, engine);
	if (want_engine) CHECK(strcmp(engine, want_engine) == 0, "engine %s, wanted %s", engine, want_engine);
	rc = b->gemm_run(ctx, 2, &s, why);
	CHECK(rc == 0 && s > 0, "gemm_run: rc %d %s", rc, why);
	rc = b->gemm_verify(ctx, &wrong, &checked, why);
	CHECK(rc == 0 && wrong == 0 && checked == (uint64_t)n * n, "gemm_verify: rc %d wrong %llu of %llu %s",
	      rc, (unsigned long long)wrong, (unsigned long long)checked, why);
	/* the planted slowdown runs and ends (its effect is timed by gpu_bench) */
	rc = b->throttle(0, 0.5, why);
	CHECK(rc == 0, "throttle(0.5): %s", why);
	rc = b->gemm_run(ctx, 2, &s, why);
	CHECK(rc == 0 && s > 0, "throttled gemm_run: rc %d %s", rc, why);
	rc = b->throttle(0, 1.0, why);
	CHECK(rc == 0, "throttle(1): %s", why);
	rc = b->gemm_verify(ctx, &wrong, &checked, why);
	CHECK(rc == 0 && wrong == 0, "gemm_verify after throttle: wrong %llu", (unsigned long long)wrong);
	b->gemm_teardown(ctx);
}

static void with_gpus(const struct ng_gpu_backend *b, int count)
{
	char why[NG_GPU_WHY] = "";
	for (int i = 0; i < count; i++) {
		struct ng_gpu_device d;
		int rc = b->describe(i, &d, why);
		CHECK(rc == 0, "describe(%d): %s", i, why);
		if (rc) continue;
		printf("GPU %d: %s %s %s cc %d.%d, %d SMs, %llu of %llu bytes free\n", i, d.name, d.uuid,
		       d.pci_bus_id, d.cc_major, d.cc_minor, d.sm_count, (unsigned long long)d.free_bytes,
		       (unsigned long long)d.total_bytes);
		CHECK(d.name[0] && strncmp(d.uuid, "GPU-", 4) == 0 && d.pci_bus_id[0] && d.sm_count > 0 &&
		          d.total_bytes > 0 && d.free_bytes <= d.total_bytes,
		      "describe(%d) fields", i);
	}

	/* compute: cuBLAS where present, and our kernel at a size that is not a
	 * multiple of its tile */
	gemm_check(b, 256, NULL);
	setenv("NODEGATE_CUDA_GEMM", "kernel", 1);
	gemm_check(b, 200, "kernel");
	unsetenv("NODEGATE_CUDA_GEMM");

	/* memory: the patterns clean, then one planted corrupt word */
	void *ctx = NULL;
	int rc = b->mem_setup(0, 64u << 20, &ctx, why);
	CHECK(rc == 0, "mem_setup: %s", why);
	if (rc == 0) {
		uint64_t wrong = 9, offsets[8] = {0}, bytes = 0;
		unsigned got = 9;
		double s = 0;
		for (int p = 0; p < NG_GPU_PATTERN_COUNT; p++) {
			rc = b->mem_pattern(ctx, (enum ng_gpu_pattern)p, 42, -1, &wrong, offsets, 8, &got, why);
			CHECK(rc == 0 && wrong == 0 && got == 0, "pattern %d: rc %d wrong %llu %s", p, rc,
			      (unsigned long long)wrong, why);
		}
		for (int p = 0; p < NG_GPU_PATTERN_COUNT; p++) {
			rc = b->mem_pattern(ctx, (enum ng_gpu_pattern)p, 42, 12345, &wrong, offsets, 8, &got, why);
			CHECK(rc == 0 && wrong == 1 && got == 1 && offsets[0] == 12345u * 8u,
			      "planted word, pattern %d: rc %d wrong %llu got %u offset %llu %s", p, rc,
			      (unsigned long long)wrong, got, (unsigned long long)offsets[0], why);
		}
		rc = b->mem_copy(ctx, 3, &bytes, &s, why);
		CHECK(rc == 0 && bytes == 3ull * (64u << 20) && s > 0, "mem_copy: rc %d bytes %llu %s", rc,
		      (unsigned long long)bytes, why);
		b->mem_teardown(ctx);
	}

	/* copy paths, each verified */
	for (int path = NG_GPU_PATH_H2D; path <= NG_GPU_PATH_P2P; path++) {
		int dst = path == NG_GPU_PATH_P2P ? 1 : 0;
		if (path == NG_GPU_PATH_P2P && count < 2) continue;
		ctx = NULL;
		rc = b->copy_setup((enum ng_gpu_path)path, 0, dst, (16u << 20) + 8, &ctx, why);
		if (rc == NG_GPU_ENOTAPPLICABLE) {
			printf("path %d: not applicable: %s\n", path, why);
			continue;
		}
		CHECK(rc == 0, "copy_setup(path %d): %s", path, why);
		if (rc) continue;
		double s = 0;
		uint64_t wrong = 7;
		rc = b->copy_run(ctx, 2, &s, why);
		CHECK(rc == 0 && s > 0, "copy_run(path %d): %s", path, why);
		rc = b->copy_verify(ctx, 7, &wrong, why);
		CHECK(rc == 0 && wrong == 0, "copy_verify(path %d): wrong %llu %s", path, (unsigned long long)wrong,
		      why);
		b->copy_teardown(ctx);
	}

	double s = 0;
	rc = b->ref_d2d(0, 16u << 20, 2, &s, why);
	CHECK(rc == 0 && s > 0, "ref_d2d: %s", why);
	rc = b->ref_h2d(0, 16u << 20, 2, &s, why);
	CHECK(rc == 0 && s > 0, "ref_h2d: %s", why);
	rc = b->ref_gemm(0, 256, 2, &s, why);
	CHECK(rc == NG_GPU_ENOTAPPLICABLE || (rc == 0 && s > 0), "ref_gemm: %s", why);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "FAIL dlopen: %s\n", dlerror());
		return 1;
	}
	ng_gpu_backend_fn fn;
	*(void **)&fn = dlsym(lib, NG_GPU_BACKEND_SYMBOL);
	if (!fn) {
		fprintf(stderr, "FAIL no %s: %s\n", NG_GPU_BACKEND_SYMBOL, dlerror());
		return 1;
	}
	const struct ng_gpu_backend *b = fn();
	CHECK(b != NULL, "table");
	if (!b) return 1;
	CHECK(b->abi == NG_GPU_BACKEND_ABI, "abi %u", b->abi);
	CHECK(b->name && strcmp(b->name, "cuda") == 0, "name %s", b->name ? b->name : "(null)");
	/* the statically linked runtime and our helpers stay inside */
	CHECK(dlsym(lib, "cudaMalloc") == NULL, "cudaMalloc is exported");
	CHECK(dlsym(lib, "cudaGetDeviceCount") == NULL, "cudaGetDeviceCount is exported");
	CHECK(b->init && b->describe && b->gemm_setup && b->gemm_run && b->gemm_verify && b->gemm_teardown &&
	          b->mem_setup && b->mem_pattern && b->mem_copy && b->mem_teardown && b->copy_setup &&
	          b->copy_run && b->copy_verify && b->copy_teardown && b->ref_gemm && b->ref_d2d &&
	          b->ref_h2d && b->throttle,
	      "every entry is set");

	char why[NG_GPU_WHY] = "", version[128] = "";
	int count = -1;
	int rc = b->init(&count, version, sizeof version, why);
	printf("init: rc %d, %d GPUs, version '%s', why '%s'\n", rc, count, version, why);
	CHECK(strncmp(version, "cuda ", 5) == 0, "version '%s'", version);
	/* the throttle's arguments are checked without a GPU */
	CHECK(b->throttle(0, 0.0, why) == NG_GPU_EFAIL && one_line(why), "throttle(0)");
	CHECK(b->throttle(-1, 0.5, why) == NG_GPU_EFAIL, "throttle on GPU -1");
	if (rc == NG_GPU_EFAIL) {
		CHECK(one_line(why), "init's reason '%s'", why);
		CHECK(count == 0, "count %d after a failed init", count);
		no_driver(b);
	} else {
		CHECK(rc == 0 && count >= 0, "init: rc %d count %d", rc, count);
		if (count == 0)
			no_driver(b);
		else
			with_gpus(b, count);
	}
	/* a second init answers the same */
	int count2 = -1;
	char why2[NG_GPU_WHY] = "";
	int rc2 = b->init(&count2, version, sizeof version, why2);
	CHECK(rc2 == rc && count2 == count, "second init: rc %d count %d", rc2, count2);

	dlclose(lib);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
