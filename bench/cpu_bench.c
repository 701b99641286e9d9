/* CPU probe beside OpenBLAS dgemm, same machine, same threads, one run.
 *
 * Rounds alternate the two so that both see the same machine: each round
 * times dgemm at N x N (2 N^3 flops per call) and then runs the probe for a
 * few seconds. Prints the median GFLOP/s of each, and the ratio of medians
 * (probe / dgemm); the target is at least 0.8. --tier runs the probe with the
 * instructions OpenBLAS chose (its core name is printed: Haswell means AVX2),
 * for a like-for-like figure where OpenBLAS does not know the CPU. Exit 1 when
 * the ratio misses, 2 when the probe did not measure or reported a wrong result. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/probe_cpu.h"

#define MAX_VALUES 4096

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double dgemm_gflops(int n, double *a, double *b, double *c)
{
	double t0 = now_s();
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
	return 2.0 * n * n * (double)n / (now_s() - t0) / 1e9;
}

int main(int argc, char **argv)
{
	int n = 4096, rounds = 3;
	double probe_s = 3;
	const char *want_tier = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--n") == 0)
			n = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--probe-seconds") == 0)
			probe_s = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--tier") == 0)
			want_tier = argv[i + 1];
	}
	if (n < 256 || rounds < 1 || rounds > 50 || !(probe_s > 0)) {
		fprintf(stderr, "usage: cpu_bench [--n N>=256] [--rounds R] [--probe-seconds S] [--tier T]\n");
		return 2;
	}
	int cpus[MAX_VALUES];
	size_t cores;
	ng_cpu_list(cpus, MAX_VALUES, &cores);
	openblas_set_num_threads((int)cores);
	size_t nn = (size_t)n * (size_t)n;
	double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
	if (!a || !b || !c)
		return 2;
	for (size_t i = 0; i < nn; i++) {
		a[i] = (double)(i % 97) / 97.0;
		b[i] = (double)(i % 89) / 89.0;
	}
	dgemm_gflops(n, a, b, c); /* OpenBLAS starts its threads; pages touched */

	static double ref[MAX_VALUES], ours[MAX_VALUES];
	size_t nref = 0, nours = 0;
	const char *tier = "?";
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2 && nref < MAX_VALUES; k++)
			ref[nref++] = dgemm_gflops(n, a, b, c);
		struct ng_cpu_opts o;
		ng_cpu_opts_default(&o);
		o.duration_s = probe_s;
		o.interval_s = 0.5;
		o.tier = want_tier;
		ng_err err;
		cJSON *recs = ng_probe_cpu_run(&o, &err);
		if (!recs) {
			fprintf(stderr, "cpu_bench: probe: %s\n", err.msg);
			return 2;
		}
		cJSON *rec = recs->child, *x;
		cJSON *wrong = cJSON_GetObjectItemCaseSensitive(rec, "wrong");
		if (!cJSON_IsNumber(wrong) || wrong->valuedouble != 0) {
			fprintf(stderr, "cpu_bench: the probe reported wrong results or none\n");
			return 2;
		}
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(rec, "samples"))
			if (nours < MAX_VALUES)
				ours[nours++] = x->valuedouble;
		static char tier_buf[32];
		snprintf(tier_buf, sizeof tier_buf, "%s",
		         cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "conditions"),
		                                          "tier")->valuestring);
		tier = tier_buf;
		cJSON_Delete(recs);
	}
	if (!nours || !nref)
		return 2;
	double mr = median(ref, nref), mo = median(ours, nours), ratio = mo / mr;
	printf("threads              %zu (one per physical core)\n", cores);
	printf("openblas dgemm       N=%d, core %s: median %.2f GFLOP/s over %zu calls\n", n,
	       openblas_get_corename(), mr, nref);
	printf("nodegate probe cpu   tier %s: median %.2f GFLOP/s over %zu samples\n", tier, mo, nours);
	printf("ratio (probe/dgemm)  %.3f   target >= 0.80: %s\n", ratio, ratio >= 0.8 ? "met" : "MISSED");
	free(a);
	free(b);
	free(c);
	return ratio >= 0.8 ? 0 : 1;
}
