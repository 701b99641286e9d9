/* The GPU probes' operations beside the vendor's own, in the same run, on
 * each GPU (bench/README.md, "GPU probes on hardware"):
 *
 *   gpu-compute  gemm_run, bf16 n x n x n GEMM       vs ref_gemm (cuBLAS GemmEx)  >= 0.90x
 *   gpu-memory   mem_copy, our copy kernel            vs ref_d2d (cudaMemcpy D2D) >= 0.90x
 *   gpu-copy     copy_run host to device, pinned      vs ref_h2d (cudaMemcpy)     >= 0.95x
 *
 * each the median of five measurements after a warm-up, probe and reference
 * alternating; and the checks that must come out right: the GEMM's answer,
 * the memory patterns, one planted corrupt word (wrong = 1 at its offset),
 * the copies' data, a planted slowdown (about half the rate), and our own
 * GEMM kernel (the engine where cuBLAS is absent).
 *
 * usage: gpu_bench [LIBRARY] [--gpu N] [--json FILE] [--gemm-n N]
 *                  [--mem-gib G] [--h2d-gib G] [--reps R]
 * LIBRARY defaults to $NODEGATE_GPU_BACKEND. Exit 0: every target met and
 * every check right; 1: a target missed; 2: a check wrong or an error. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/gpu_backend.h"

#define RUNS 5
#define MAX_ROWS 16
#define PLANTED_WORD 12345

struct row {
	char check[64];
	char unit[16];
	double probe, ref; /* rates; ref < 0: no reference */
	double target;     /* 0: none */
	int state;         /* 1 met, 0 missed, -1 no reference, 2 check right, 3 check wrong, 4 error */
	char note[256];
};

struct gpu {
	int index;
	struct ng_gpu_device d;
	int described;
	struct row rows[MAX_ROWS];
	int n;
};

static const struct ng_gpu_backend *B;
static unsigned opt_reps = RUNS;

static struct row *add(struct gpu *g, const char *check, const char *unit)
{
	struct row *r = &g->rows[g->n < MAX_ROWS ? g->n++ : MAX_ROWS - 1];
	memset(r, 0, sizeof *r);
	snprintf(r->check, sizeof r->check, "%s", check);
	snprintf(r->unit, sizeof r->unit, "%s", unit);
	r->ref = -1;
	return r;
}

static void note(struct row *r, int state, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(struct row *r, int state, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->note, sizeof r->note, fmt, ap);
	va_end(ap);
	r->state = state;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Repetitions that make one measurement last about want seconds, given one
 * repetition's time. */
static unsigned reps_for(double one, double want, unsigned lo, unsigned hi)
{
	if (!(one > 0)) return lo;
	double r = want / one;
	return r < lo ? lo : r > hi ? hi : (unsigned)r;
}

/* Compares the probe's and the reference's medians. */
static void judge(struct row *r, double *p, double *q, unsigned runs, int have_ref, double target)
{
	r->probe = median(p, runs);
	r->target = target;
	if (!have_ref) {
		r->state = -1;
		return;
	}
	r->ref = median(q, runs);
	r->state = r->ref > 0 && r->probe / r->ref >= target ? 1 : 0;
}

static void bench_gemm(struct gpu *g, unsigned n)
{
	char why[NG_GPU_WHY] = "", engine[32] = "", label[64];
	void *ctx = NULL;
	snprintf(label, sizeof label, "gpu-compute gemm n=%u", n);
	struct row *r = add(g, label, "TFLOP/s");
	if (B->gemm_setup(g->index, n, &ctx, engine, sizeof engine, why)) {
		note(r, 4, "gemm_setup: %s", why);
		return;
	}
	snprintf(r->check, sizeof r->check, "gpu-compute gemm n=%u (%s)", n, engine);
	const double flop = 2.0 * n * (double)n * n;
	double s = 0, p[RUNS], q[RUNS];
	if (B->gemm_run(ctx, 1, &s, why)) { /* warm-up, and the size of a batch */
		note(r, 4, "gemm_run: %s", why);
		goto out;
	}
	unsigned reps = reps_for(s, 0.25, 2, 2000);
	if (B->gemm_run(ctx, reps, &s, why)) {
		note(r, 4, "gemm_run: %s", why);
		goto out;
	}
	int have_ref = 1;
	for (unsigned i = 0; i < opt_reps; i++) {
		if (B->gemm_run(ctx, reps, &s, why)) {
			note(r, 4, "gemm_run: %s", why);
			goto out;
		}
		p[i] = flop * reps / s / 1e12;
		if (have_ref) {
			int rc = B->ref_gemm(g->index, n, reps, &s, why);
			if (rc == NG_GPU_ENOTAPPLICABLE)
				have_ref = 0;
			else if (rc) {
				note(r, 4, "ref_gemm: %s", why);
				goto out;
			} else
				q[i] = flop * reps / s / 1e12;
		}
	}
	judge(r, p, q, opt_reps, have_ref, 0.90);
	snprintf(r->note, sizeof r->note, "%u GEMMs a measurement%s", reps, have_ref ? "" : "; no reference");
	double rate = r->probe;

	/* the answer */
	uint64_t wrong = 0, checked = 0;
	struct row *v = add(g, "gemm verify", "");
	if (B->gemm_verify(ctx, &wrong, &checked, why))
		note(v, 4, "gemm_verify: %s", why);
	else
		note(v, wrong == 0 && checked > 0 ? 2 : 3, "wrong=%llu of %llu", (unsigned long long)wrong,
		     (unsigned long long)checked);

	/* the planted slowdown: about half the rate while it lasts */
	struct row *t = add(g, "planted throttle 0.5", "share");
	if (B->throttle(g->index, 0.5, why)) {
		note(t, 4, "throttle: %s", why);
	} else {
		double run[3];
		int bad = 0;
		for (int i = 0; i < 3 && !bad; i++) {
			if (B->gemm_run(ctx, reps, &s, why)) bad = 1;
			else run[i] = flop * reps / s / 1e12 / rate;
		}
		char w2[NG_GPU_WHY];
		B->throttle(g->index, 1.0, w2);
		if (bad)
			note(t, 4, "throttled gemm_run: %s", why);
		else {
			t->probe = median(run, 3);
			note(t, t->probe > 0.40 && t->probe < 0.60 ? 2 : 3, "delivered %.2f of the rate (want 0.40-0.60)",
			     t->probe);
		}
	}
out:
	B->gemm_teardown(ctx);

	/* our own kernel, the engine where cuBLAS is absent: right answers at a
	 * size that is not a multiple of its tile (a backend without the switch
	 * just runs its usual engine) */
	struct row *k = add(g, "gemm kernel engine n=1000", "");
	setenv("NODEGATE_CUDA_GEMM", "kernel", 1);
	ctx = NULL;
	if (B->gemm_setup(g->index, 1000, &ctx, engine, sizeof engine, why)) {
		note(k, 4, "gemm_setup: %s", why);
	} else {
		uint64_t kwrong = 0, kchecked = 0;
		if (B->gemm_run(ctx, 1, &s, why) || B->gemm_verify(ctx, &kwrong, &kchecked, why))
			note(k, 4, "%s", why);
		else
			note(k, kwrong == 0 && kchecked > 0 ? 2 : 3, "engine %s, wrong=%llu of %llu, %.2f TFLOP/s",
			     engine, (unsigned long long)kwrong, (unsigned long long)kchecked, 2e9 / s / 1e12);
		B->gemm_teardown(ctx);
	}
	unsetenv("NODEGATE_CUDA_GEMM");
}

static void bench_mem(struct gpu *g, uint64_t bytes)
{
	char why[NG_GPU_WHY] = "", label[64];
	void *ctx = NULL;
	snprintf(label, sizeof label, "gpu-memory copy %.1f GiB", bytes / 1073741824.0);
	struct row *r = add(g, label, "GB/s");
	if (B->mem_setup(g->index, bytes, &ctx, why)) {
		note(r, 4, "mem_setup: %s", why);
		return;
	}
	double s = 0, p[RUNS], q[RUNS];
	uint64_t moved = 0;
	if (B->mem_copy(ctx, 1, &moved, &s, why)) {
		note(r, 4, "mem_copy: %s", why);
		goto out;
	}
	unsigned reps = reps_for(s, 0.1, 2, 1000);
	/* the reference copies one half's bytes: the same bytes read and written */
	uint64_t half = moved / 2;
	int have_ref = 1;
	if (B->mem_copy(ctx, reps, &moved, &s, why)) {
		note(r, 4, "mem_copy: %s", why);
		goto out;
	}
	for (unsigned i = 0; i < opt_reps; i++) {
		if (B->mem_copy(ctx, reps, &moved, &s, why)) {
			note(r, 4, "mem_copy: %s", why);
			goto out;
		}
		p[i] = moved / s / 1e9;
		if (have_ref) {
			int rc = B->ref_d2d(g->index, half, reps, &s, why);
			if (rc == NG_GPU_ENOTAPPLICABLE)
				have_ref = 0;
			else if (rc) {
				note(r, 4, "ref_d2d: %s", why);
				goto out;
			} else
				q[i] = 2.0 * half * reps / s / 1e9;
		}
	}
	judge(r, p, q, opt_reps, have_ref, 0.90);
	snprintf(r->note, sizeof r->note, "bytes read plus written; %u copies a measurement%s", reps,
	         have_ref ? "" : "; no reference");

	static const char *names[] = {"address", "walking", "random"};
	for (int pat = 0; pat < NG_GPU_PATTERN_COUNT; pat++) {
		char l2[64];
		snprintf(l2, sizeof l2, "pattern %s", names[pat]);
		struct row *v = add(g, l2, "");
		uint64_t wrong = 0, offsets[4];
		unsigned got = 0;
		if (B->mem_pattern(ctx, (enum ng_gpu_pattern)pat, 1, -1, &wrong, offsets, 4, &got, why))
			note(v, 4, "mem_pattern: %s", why);
		else
			note(v, wrong == 0 ? 2 : 3, "wrong=%llu", (unsigned long long)wrong);
	}
	struct row *c = add(g, "planted corrupt word 12345", "");
	uint64_t wrong = 0, offsets[4] = {0};
	unsigned got = 0;
	if (B->mem_pattern(ctx, NG_GPU_PATTERN_RANDOM, 1, PLANTED_WORD, &wrong, offsets, 4, &got, why))
		note(c, 4, "mem_pattern: %s", why);
	else
		note(c, wrong == 1 && got == 1 && offsets[0] == PLANTED_WORD * 8ull ? 2 : 3,
		     "wrong=%llu at offset %llu (want 1 at %llu)", (unsigned long long)wrong,
		     got ? (unsigned long long)offsets[0] : 0ull, PLANTED_WORD * 8ull);
out:
	B->mem_teardown(ctx);
}

static void bench_copy(struct gpu *g, enum ng_gpu_path path, uint64_t bytes)
{
	char why[NG_GPU_WHY] = "", label[64];
	void *ctx = NULL;
	const int h2d = path == NG_GPU_PATH_H2D;
	snprintf(label, sizeof label, "gpu-copy %s %.1f GiB", h2d ? "h2d" : "d2h", bytes / 1073741824.0);
	struct row *r = add(g, label, "GB/s");
	if (B->copy_setup(path, g->index, g->index, bytes, &ctx, why)) {
		note(r, 4, "copy_setup: %s", why);
		return;
	}
	double s = 0, p[RUNS], q[RUNS];
	if (B->copy_run(ctx, 1, &s, why)) {
		note(r, 4, "copy_run: %s", why);
		goto out;
	}
	unsigned reps = reps_for(s, 0.1, 2, 100);
	int have_ref = h2d;
	for (unsigned i = 0; i < opt_reps; i++) {
		if (B->copy_run(ctx, reps, &s, why)) {
			note(r, 4, "copy_run: %s", why);
			goto out;
		}
		p[i] = (double)bytes * reps / s / 1e9;
		if (have_ref) {
			int rc = B->ref_h2d(g->index, bytes, reps, &s, why);
			if (rc == NG_GPU_ENOTAPPLICABLE)
				have_ref = 0;
			else if (rc) {
				note(r, 4, "ref_h2d: %s", why);
				goto out;
			} else
				q[i] = (double)bytes * reps / s / 1e9;
		}
	}
	judge(r, p, q, opt_reps, have_ref, h2d ? 0.95 : 0);
	uint64_t wrong = 0;
	if (B->copy_verify(ctx, 99, &wrong, why))
		note(r, 4, "copy_verify: %s", why);
	else if (wrong)
		note(r, 3, "copy_verify: wrong=%llu", (unsigned long long)wrong);
	else
		snprintf(r->note, sizeof r->note, "%u copies a measurement, data verified%s", reps,
		         have_ref ? "" : "; no reference");
out:
	B->copy_teardown(ctx);
}

static const char *state_text(int s)
{
	switch (s) {
	case 1: return "met";
	case 0: return "missed";
	case -1: return "no reference";
	case 2: return "right";
	case 3: return "WRONG";
	default: return "ERROR";
	}
}

static void print_table(const struct gpu *g)
{
	printf("\nGPU %d: %s %s %s\n", g->index, g->described ? g->d.name : "?", g->described ? g->d.uuid : "",
	       g->described ? g->d.pci_bus_id : "");
	printf("%-36s %14s %14s %7s %7s  %-12s %s\n", "check", "probe", "reference", "ratio", "target", "result",
	       "note");
	for (int i = 0; i < g->n; i++) {
		const struct row *r = &g->rows[i];
		char pr[32] = "", rf[32] = "", ra[16] = "", tg[16] = "";
		if (r->unit[0] && r->state != 4 && strcmp(r->unit, "share") != 0) {
			snprintf(pr, sizeof pr, "%.1f %s", r->probe, r->unit);
			if (r->ref >= 0) {
				snprintf(rf, sizeof rf, "%.1f %s", r->ref, r->unit);
				snprintf(ra, sizeof ra, "%.3f", r->probe / r->ref);
			} else
				snprintf(rf, sizeof rf, "-");
		}
		if (r->target > 0) snprintf(tg, sizeof tg, "%.2f", r->target);
		printf("%-36s %14s %14s %7s %7s  %-12s %s\n", r->check, pr, rf, ra, tg, state_text(r->state), r->note);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
		else if (c < 0x20) fprintf(f, "\\u%04x", c);
		else fputc(c, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v, int present)
{
	if (present && isfinite(v)) fprintf(f, "%.6g", v);
	else fputs("null", f);
}

static int write_json(const char *path, const char *lib, const char *version, const struct gpu *gs, int ng,
                      int status)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	fputs("{\"tool\":\"gpu_bench\",\"library\":", f);
	json_str(f, lib);
	fputs(",\"backend\":", f);
	json_str(f, B->name ? B->name : "");
	fputs(",\"version\":", f);
	json_str(f, version);
	fprintf(f, ",\"status\":%d,\"all_met\":%s,\"gpus\":[", status, status == 0 ? "true" : "false");
	for (int i = 0; i < ng; i++) {
		const struct gpu *g = &gs[i];
		fprintf(f, "%s{\"index\":%d,\"name\":", i ? "," : "", g->index);
		json_str(f, g->described ? g->d.name : "");
		fputs(",\"uuid\":", f);
		json_str(f, g->described ? g->d.uuid : "");
		fputs(",\"pci_bus_id\":", f);
		json_str(f, g->described ? g->d.pci_bus_id : "");
		fputs(",\"rows\":[", f);
		for (int j = 0; j < g->n; j++) {
			const struct row *r = &g->rows[j];
			const int rate = r->unit[0] && r->state != 4;
			fputs(j ? ",{\"check\":" : "{\"check\":", f);
			json_str(f, r->check);
			fputs(",\"unit\":", f);
			json_str(f, r->unit);
			fputs(",\"probe\":", f);
			json_num(f, r->probe, rate);
			fputs(",\"reference\":", f);
			json_num(f, r->ref, rate && r->ref >= 0);
			fputs(",\"ratio\":", f);
			json_num(f, r->ref > 0 ? r->probe / r->ref : 0, rate && r->ref > 0);
			fputs(",\"target\":", f);
			json_num(f, r->target, r->target > 0);
			fputs(",\"result\":", f);
			json_str(f, state_text(r->state));
			fputs(",\"note\":", f);
			json_str(f, r->note);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
	return fclose(f);
}

/* No GPU to measure: the reason, for whoever reads the JSON. */
static void write_error_json(const char *path, const char *lib, const char *version, const char *why)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	fputs("{\"tool\":\"gpu_bench\",\"library\":", f);
	json_str(f, lib);
	fputs(",\"backend\":", f);
	json_str(f, B->name ? B->name : "");
	fputs(",\"version\":", f);
	json_str(f, version);
	fputs(",\"status\":2,\"all_met\":false,\"error\":", f);
	json_str(f, why);
	fputs(",\"gpus\":[]}\n", f);
	fclose(f);
}

static void usage(void)
{
	fprintf(stderr, "usage: gpu_bench [LIBRARY] [--gpu N] [--json FILE] [--gemm-n N] [--mem-gib G]\n"
	                "                 [--h2d-gib G] [--reps R]   (LIBRARY defaults to $NODEGATE_GPU_BACKEND)\n");
}

int main(int argc, char **argv)
{
	const char *lib = getenv("NODEGATE_GPU_BACKEND"), *json = NULL;
	int only = -1;
	unsigned gemm_n = 8192;
	double mem_gib = 4, h2d_gib = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--gpu") && v) only = atoi(argv[++i]);
		else if (!strcmp(a, "--json") && v) json = argv[++i];
		else if (!strcmp(a, "--gemm-n") && v) gemm_n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--mem-gib") && v) mem_gib = strtod(argv[++i], NULL);
		else if (!strcmp(a, "--h2d-gib") && v) h2d_gib = strtod(argv[++i], NULL);
		else if (!strcmp(a, "--reps") && v) opt_reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (a[0] != '-') lib = a;
		else {
			usage();
			return 2;
		}
	}
	if (opt_reps < 1 || opt_reps > RUNS) opt_reps = RUNS;
	if (!lib || !*lib || gemm_n == 0 || !(mem_gib > 0) || !(h2d_gib > 0)) {
		usage();
		return 2;
	}
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "gpu_bench: %s\n", dlerror());
		return 2;
	}
	ng_gpu_backend_fn fn;
	*(void **)&fn = dlsym(h, NG_GPU_BACKEND_SYMBOL);
	B = fn ? fn() : NULL;
	if (!B || B->abi != NG_GPU_BACKEND_ABI) {
		fprintf(stderr, "gpu_bench: %s has no %s of ABI %d\n", lib, NG_GPU_BACKEND_SYMBOL, NG_GPU_BACKEND_ABI);
		return 2;
	}
	char why[NG_GPU_WHY] = "", version[128] = "";
	int count = 0;
	if (B->init(&count, version, sizeof version, why)) {
		fprintf(stderr, "gpu_bench: %s backend: %s\n", B->name, why);
		if (json) write_error_json(json, lib, version, why);
		return 2;
	}
	printf("gpu_bench: %s backend (%s), %s, %d GPUs\n", B->name, lib, version, count);
	if (count == 0 || (only >= 0 && only >= count)) {
		snprintf(why, sizeof why, "no GPU%s", only >= 0 ? " of that index" : "");
		fprintf(stderr, "gpu_bench: %s\n", why);
		if (json) write_error_json(json, lib, version, why);
		return 2;
	}
	struct gpu *gs = calloc((size_t)count, sizeof *gs);
	if (!gs) return 2;
	int ng = 0, status = 0;
	const uint64_t mem_bytes = (uint64_t)(mem_gib * 1073741824.0) / 32 * 32;
	const uint64_t h2d_bytes = (uint64_t)(h2d_gib * 1073741824.0) / 8 * 8;
	for (int d = 0; d < count; d++) {
		if (only >= 0 && d != only) continue;
		struct gpu *g = &gs[ng++];
		g->index = d;
		g->described = B->describe(d, &g->d, why) == 0;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		bench_gemm(g, gemm_n);
		bench_mem(g, mem_bytes);
		bench_copy(g, NG_GPU_PATH_H2D, h2d_bytes);
		bench_copy(g, NG_GPU_PATH_D2H, h2d_bytes);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		print_table(g);
		printf("(GPU %d: %.1f s)\n", d, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		for (int i = 0; i < g->n; i++) {
			int s = g->rows[i].state;
			if (s == 3 || s == 4) status = 2;
			else if (s == 0 && status == 0) status = 1;
		}
		fflush(stdout);
	}
	printf("\n%s\n", status == 0 ? "all targets met, all checks right"
	                  : status == 1 ? "a target missed" : "a check wrong or an error");
	if (json && write_json(json, lib, version, gs, ng, status)) status = 2;
	free(gs);
	return status;
}
