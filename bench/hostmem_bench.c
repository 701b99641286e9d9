/* Host-memory probe beside mbw, same machine, same array size, one run.
 *
 * mbw -t0 times memcpy of one array into another and prints "Copy: X MiB/s"
 * where X is the array's MiB over the time: it counts the bytes once. The
 * probe counts bytes read plus bytes written, in decimal GB/s, so mbw's figure
 * is converted as X * 1048576 * 2 / 1e9. Rounds alternate an mbw run (its
 * AVG line over --mbw-n copies) and a probe run; the reference is the best of
 * the mbw runs, the probe's figure the median of its single-thread copy
 * samples. Prints the ratio (target at least 0.95) and the multi-core triad.
 * Exit 1 when the ratio misses, 2 when something did not run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/probe_hostmem.h"
#include "collect/spawn.h"

#define MAX_VALUES 4096

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

/* One mbw run: its AVG copy figure and its best single copy, in MiB/s. */
static int run_mbw(int mib, int iters, double *avg, double *best)
{
	char size[32], n[32];
	snprintf(size, sizeof size, "%d", mib);
	snprintf(n, sizeof n, "%d", iters);
	char *argv[] = {"mbw", "-q", "-t0", "-n", n, size, NULL};
	ng_spawn_result r;
	char err[256];
	if (ng_spawn_capture(argv, 300, 1 << 20, &r, err, sizeof err) < 0 || !r.spawned ||
	    r.exit_status != 0) {
		fprintf(stderr, "hostmem_bench: mbw did not run (installed? scripts/setup-deps --bench)\n");
		return -1;
	}
	*avg = NAN;
	*best = 0;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		const char *copy = strstr(line, "Copy: ");
		double v;
		if (!copy || sscanf(copy, "Copy: %lf MiB/s", &v) != 1)
			continue;
		if (strncmp(line, "AVG", 3) == 0)
			*avg = v;
		else if (v > *best)
			*best = v;
	}
	ng_spawn_result_free(&r);
	return isnan(*avg) ? -1 : 0;
}

static double mibps_to_gbps(double mibps) { return mibps * 1048576.0 * 2 / 1e9; }

static int add_samples(const cJSON *rec, double *v, size_t *n)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(rec, "wrong"), *x;
	if (!cJSON_IsNumber(w) || w->valuedouble != 0)
		return -1;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(rec, "samples"))
		if (*n < MAX_VALUES)
			v[(*n)++] = x->valuedouble;
	return 0;
}

int main(int argc, char **argv)
{
	int mib = 256, rounds = 3, iters = 10;
	double phase_s = 1.5;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--mib") == 0)
			mib = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--mbw-n") == 0)
			iters = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--phase-seconds") == 0)
			phase_s = atof(argv[i + 1]);
	}
	if (mib < 16 || rounds < 1 || rounds > 50 || iters < 1 || !(phase_s > 0)) {
		fprintf(stderr, "usage: hostmem_bench [--mib M>=16] [--rounds R] [--mbw-n N] "
		                "[--phase-seconds S]\n");
		return 2;
	}
	static double copy1t[MAX_VALUES], triad[MAX_VALUES];
	size_t n1 = 0, nt = 0;
	double mbw_best_avg = 0, mbw_best_iter = 0, threads = 0, arr_bytes = 0;
	for (int r = 0; r < rounds; r++) {
		double avg, best;
		if (run_mbw(mib, iters, &avg, &best) < 0)
			return 2;
		mbw_best_avg = fmax(mbw_best_avg, avg);
		mbw_best_iter = fmax(mbw_best_iter, best);
		struct ng_hostmem_opts o;
		ng_hostmem_opts_default(&o);
		/* Three arrays of `mib` MiB each, so one copy moves what mbw's does
		 * (on one NUMA node; on several, node 0's share). */
		o.size = (size_t)mib * 3 << 20;
		o.phase_s = phase_s;
		o.interval_s = phase_s / 5;
		o.lock = false; /* mbw does not lock either */
		ng_err err;
		cJSON *recs = ng_probe_hostmem_run(&o, &err);
		if (!recs) {
			fprintf(stderr, "hostmem_bench: probe: %s\n", err.msg);
			return 2;
		}
		const cJSON *tri = recs->child->next, *one = tri->next;
		if (add_samples(one, copy1t, &n1) < 0 || add_samples(tri, triad, &nt) < 0) {
			fprintf(stderr, "hostmem_bench: the probe found wrong words or measured nothing\n");
			return 2;
		}
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(tri, "conditions");
		threads = cJSON_GetObjectItemCaseSensitive(c, "threads")->valuedouble;
		arr_bytes = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "layout"), 0), "array_bytes")->valuedouble;
		cJSON_Delete(recs);
	}
	if (!n1 || !nt)
		return 2;
	double ref = mibps_to_gbps(mbw_best_avg), ours = median(copy1t, n1), ratio = ours / ref;
	printf("array                %d MiB (probe: %.0f MiB per array on node 0)\n", mib,
	       arr_bytes / 1048576.0);
	printf("mbw -t0 memcpy       best of %d runs (AVG of %d): %.1f MiB/s = %.2f GB/s read+written\n",
	       rounds, iters, mbw_best_avg, ref);
	printf("                     best single copy: %.1f MiB/s = %.2f GB/s\n", mbw_best_iter,
	       mibps_to_gbps(mbw_best_iter));
	printf("probe copy1t         median %.2f GB/s over %zu samples\n", ours, n1);
	printf("ratio (probe/mbw)    %.3f   target >= 0.95: %s\n", ratio, ratio >= 0.95 ? "met" : "MISSED");
	printf("  vs best single     %.3f\n", ours / mibps_to_gbps(mbw_best_iter));
	printf("probe triad          median %.2f GB/s on %.0f threads (%zu samples)\n", median(triad, nt),
	       threads, nt);
	return ratio >= 0.95 ? 0 : 1;
}
