/* The CPU compute probe (see probe_cpu.h): pinned threads run a fixed
 * micro-kernel; the main thread samples their progress once per interval,
 * with the clock frequency the cores report, and the record says how many
 * threads ever produced a result that differed from the reference. */
#include "collect/probe_cpu.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/cpu_kernels.inc"
#include "core/record_build.h"

#define METRIC "cpu.fp64.gflops"
#define MAX_CPUS 4096
#define BATCH 32            /* kernel repetitions between progress updates: tens of us */
#define WARMUP_S 0.25       /* clocks ramp and caches fill before sampling (at most) */

void ng_cpu_opts_default(struct ng_cpu_opts *o)
{
	*o = (struct ng_cpu_opts){.duration_s = 10, .interval_s = 1, .test_corrupt_thread = -1};
}

size_t ng_cpu_tiers(const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof ng_cpu_tier_table / sizeof ng_cpu_tier_table[0] && n < max; i++)
		if (ng_cpu_tier_table[i].supported())
			out[n++] = ng_cpu_tier_table[i].name;
	return n;
}

static const struct ng_cpu_tier *pick_tier(const char *name, ng_err *err)
{
	for (size_t i = 0; i < sizeof ng_cpu_tier_table / sizeof ng_cpu_tier_table[0]; i++) {
		const struct ng_cpu_tier *t = &ng_cpu_tier_table[i];
		if (name && strcmp(name, t->name) != 0)
			continue;
		if (t->supported())
			return t;
		if (name) {
			ng_fail(err, "this CPU cannot run the %s tier", name);
			return NULL;
		}
	}
	ng_fail(err, "unknown tier \"%s\" (avx512, avx2, sse2, portable)", name ? name : "");
	return NULL;
}

/* ---- topology ---- */

static long read_long_file(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v = dflt;
	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

static void core_key(int cpu, long *pkg, long *core)
{
	char path[128];
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
	*pkg = read_long_file(path, -1);
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
	/* Without topology every CPU counts as its own core. */
	*core = read_long_file(path, -1 - cpu);
}

size_t ng_cpu_list(int *cpus, size_t max, size_t *n_cores)
{
	cpu_set_t set;
	size_t n = 0, primaries = 0;
	*n_cores = 0;
	if (sched_getaffinity(0, sizeof set, &set) != 0 || max == 0)
		return 0;
	long pkg[CPU_SETSIZE], core[CPU_SETSIZE];
	int allowed[CPU_SETSIZE];
	size_t na = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			core_key(c, &pkg[na], &core[na]);
			allowed[na++] = c;
		}
	/* Pass 0 takes the first CPU of each physical core, pass 1 the rest. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < na && n < max; i++) {
			bool first = true;
			for (size_t j = 0; j < i && first; j++)
				first = !(pkg[j] == pkg[i] && core[j] == core[i]);
			if (first == (pass == 0)) {
				cpus[n++] = allowed[i];
				primaries += pass == 0;
			}
		}
	*n_cores = primaries;
	return n;
}

int ng_cpu_pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* ---- clock frequency ---- */

/* Mean MHz over the CPUs: cpufreq where the kernel has it, else the "cpu MHz"
 * lines of /proc/cpuinfo (which some hypervisors report as a constant).
 * NAN when neither says anything. *source names what was read. */
static double read_mhz(const int *cpus, size_t n, const char **source)
{
	double sum = 0;
	size_t got = 0;
	for (size_t i = 0; i < n; i++) {
		char path[128];
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpus[i]);
		long khz = read_long_file(path, -1);
		if (khz > 0) {
			sum += (double)khz / 1000.0;
			got++;
		}
	}
	if (got) {
		*source = "cpufreq scaling_cur_freq";
		return sum / (double)got;
	}
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return NAN;
	char line[512];
	long proc = -1;
	while (fgets(line, sizeof line, f)) {
		double mhz;
		if (sscanf(line, "processor : %ld", &proc) == 1)
			continue;
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			for (size_t i = 0; i < n; i++)
				if (cpus[i] == proc) {
					sum += mhz;
					got++;
				}
	}
	fclose(f);
	*source = "/proc/cpuinfo cpu MHz";
	return got ? sum / (double)got : NAN;
}

static const char *read_governor(char *buf, size_t len)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "re");
	if (!f)
		return NULL;
	char *s = fgets(buf, (int)len, f);
	fclose(f);
	if (!s)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* ---- the worker threads ---- */

struct shared {
	const struct ng_cpu_tier *tier;
	const double *a, *b, *expect; /* templates each thread copies */
	atomic_int stop, corrupt_now, ready;
};

struct worker {
	pthread_t tid;
	int cpu, err; /* err: errno of pinning or allocation */
	bool started, corrupt;
	struct shared *sh;
	/* Padding keeps each thread's counters off its neighbours' cache line. */
	char pad_before[64];
	atomic_uint_least64_t reps, bad;
	char pad_after[64];
};

static double *panel_copy(const double *src, size_t n)
{
	double *p = aligned_alloc(64, (n * sizeof *p + 63) / 64 * 64);
	if (p)
		memcpy(p, src, n * sizeof *p);
	return p;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	const struct ng_cpu_tier *t = sh->tier;
	size_t na = (size_t)t->mr * t->k, nb = (size_t)t->k * t->nr, nc = (size_t)t->mr * t->nr;
	w->err = ng_cpu_pin_self(w->cpu);
	/* Panels are copied after pinning, so they live in this core's cache
	 * and, on a NUMA machine, in its node's memory. */
	double *a = w->err ? NULL : panel_copy(sh->a, na);
	double *b = w->err ? NULL : panel_copy(sh->b, nb);
	double *e = w->err ? NULL : panel_copy(sh->expect, nc);
	if (!w->err && (!a || !b || !e))
		w->err = ENOMEM;
	atomic_fetch_add(&sh->ready, 1);
	/* After the stop, one last repetition: every thread has its result
	 * checked at the end however the scheduler treated it meanwhile. */
	for (bool last = false; !w->err && !last;) {
		last = atomic_load_explicit(&sh->stop, memory_order_acquire);
		if (w->corrupt && atomic_load_explicit(&sh->corrupt_now, memory_order_relaxed)) {
			uint64_t bits;
			memcpy(&bits, &a[na / 2], sizeof bits);
			/* The top mantissa bit: a low one can vanish in the rounding
			 * of the sums, as a low-order error in a real core can. */
			bits ^= (uint64_t)1 << 51;
			memcpy(&a[na / 2], &bits, sizeof bits);
			w->corrupt = false;
		}
		uint64_t n = last ? 1 : BATCH, bad = t->run(a, b, e, n);
		atomic_fetch_add_explicit(&w->reps, n, memory_order_relaxed);
		if (bad)
			atomic_fetch_add_explicit(&w->bad, bad, memory_order_relaxed);
	}
	free(a);
	free(b);
	free(e);
	return NULL;
}

/* ---- the reference result ---- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Panels of values in [-1, 1) with full 53-bit mantissas, from a fixed seed,
 * and C computed by scalar code in the kernel's order of operations. */
static int make_panels(const struct ng_cpu_tier *t, double **a, double **b, double **c)
{
	size_t na = (size_t)t->mr * t->k, nb = (size_t)t->k * t->nr, nc = (size_t)t->mr * t->nr;
	*a = malloc(na * sizeof **a);
	*b = malloc(nb * sizeof **b);
	*c = calloc(nc, sizeof **c);
	if (!*a || !*b || !*c)
		return -1;
	uint64_t s = 0x6e6f646567617465u; /* "nodegate" */
	for (size_t i = 0; i < na; i++)
		(*a)[i] = (double)(splitmix64(&s) >> 11) * 0x1p-52 - 1.0;
	for (size_t i = 0; i < nb; i++)
		(*b)[i] = (double)(splitmix64(&s) >> 11) * 0x1p-52 - 1.0;
	for (size_t k = 0; k < t->k; k++)
		for (size_t j = 0; j < t->nr; j++)
			for (size_t i = 0; i < t->mr; i++) {
				double *cij = &(*c)[j * t->mr + i];
				double x = (*a)[k * t->mr + i], y = (*b)[k * t->nr + j];
				if (t->fused) {
					*cij = fma(x, y, *cij);
				} else {
					double p = x * y;
					*cij = *cij + p;
				}
			}
	return 0;
}

/* A fingerprint of the reference C, so two runs can be seen to have checked
 * against the same values. */
static uint64_t checksum(const double *c, size_t n)
{
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < n; i++) {
		uint64_t bits;
		memcpy(&bits, &c[i], sizeof bits);
		h = (h ^ bits) * 1099511628211u;
	}
	return h;
}

/* ---- the run ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t)
{
	struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static cJSON *new_record(void)
{
	cJSON *rec = ng_record_new(METRIC, NULL, NULL);
	if (!rec)
		return NULL;
	cJSON *tool = ng_record_tool(rec);
	cJSON_AddStringToObject(tool, "name", "nodegate");
	cJSON_AddStringToObject(tool, "probe", "cpu");
	return rec;
}

/* Short runs (tests) warm up for one interval, not the full quarter second. */
static double warmup(const struct ng_cpu_opts *o) { return o->interval_s < WARMUP_S ? o->interval_s : WARMUP_S; }

static void add_conditions(cJSON *rec, const struct ng_cpu_opts *o, const struct ng_cpu_tier *t,
                           const int *cpus, size_t n, size_t n_cores)
{
	cJSON *c = ng_record_conditions(rec);
	char gov[64];
	cJSON_AddStringToObject(c, "tier", t->name);
	cJSON_AddStringToObject(c, "isa", t->isa);
	char kern[96];
	snprintf(kern, sizeof kern, "dgemm micro-kernel %ux%u, k=%u, %s", t->mr, t->nr, t->k,
	         t->fused ? "fused multiply-add" : "multiply then add");
	cJSON_AddStringToObject(c, "kernel", kern);
	cJSON_AddNumberToObject(c, "threads", (double)n);
	cJSON_AddNumberToObject(c, "physical_cores", (double)n_cores);
	cJSON *list = cJSON_AddArrayToObject(c, "cpus");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(list, cJSON_CreateNumber(cpus[i]));
	cJSON_AddNumberToObject(c, "duration_s", o->duration_s);
	cJSON_AddNumberToObject(c, "interval_s", o->interval_s);
	cJSON_AddNumberToObject(c, "warmup_s", warmup(o));
	const char *g = read_governor(gov, sizeof gov);
	if (g)
		cJSON_AddStringToObject(c, "governor", g);
}

static void add_detail_series(cJSON *detail, const char *key, const double *v, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(detail, key);
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
}

struct sampling {
	size_t n_int, n;
	double *agg, *mhz, *per; /* per[interval * threads + thread] */
	const char *freq_source;
};

/* Samples every interval until the duration is up. */
static void sample(struct worker *w, size_t n, const int *cpus, double flops_per_rep,
                   const struct ng_cpu_opts *o, struct sampling *s)
{
	uint64_t *last = calloc(n, sizeof *last);
	if (!last)
		return;
	double t0 = now_s(), prev = t0;
	for (size_t i = 0; i < n; i++)
		last[i] = atomic_load(&w[i].reps);
	for (size_t k = 0; k < s->n_int; k++) {
		double end = t0 + (double)(k + 1) * o->interval_s;
		if (end > t0 + o->duration_s + 1e-9)
			end = t0 + o->duration_s;
		sleep_until(end);
		double t = now_s(), dt = t - prev, sum = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t r = atomic_load(&w[i].reps);
			double g = (double)(r - last[i]) * flops_per_rep / dt / 1e9;
			s->per[k * n + i] = g;
			sum += g;
			last[i] = r;
		}
		s->agg[k] = sum;
		s->mhz[k] = read_mhz(cpus, n, &s->freq_source);
		prev = t;
		s->n = k + 1;
		if (t >= t0 + o->duration_s - 1e-9)
			break;
	}
	free(last);
}

static void fill_record(cJSON *rec, struct worker *w, size_t n, const struct sampling *s,
                        const double *expect, size_t nc)
{
	cJSON *detail = ng_record_detail(rec);
	size_t stalled = 0, wrong = 0;
	for (size_t k = 0; k < s->n; k++) {
		/* A zero would be refused by the gate as invalid; an interval in
		 * which no thread finished a batch is counted, not recorded. */
		if (s->agg[k] > 0)
			ng_record_add_sample(rec, s->agg[k]);
		else
			stalled++;
	}
	add_detail_series(detail, "mhz", s->mhz, s->n);
	if (s->freq_source)
		cJSON_AddStringToObject(ng_record_conditions(rec), "freq_source", s->freq_source);
	cJSON *threads = cJSON_AddArrayToObject(detail, "threads");
	double *col = malloc((s->n ? s->n : 1) * sizeof *col);
	for (size_t i = 0; i < n; i++) {
		cJSON *t = cJSON_CreateObject();
		uint64_t bad = atomic_load(&w[i].bad);
		cJSON_AddNumberToObject(t, "cpu", w[i].cpu);
		cJSON_AddNumberToObject(t, "reps", (double)atomic_load(&w[i].reps));
		cJSON_AddNumberToObject(t, "mismatched_reps", (double)bad);
		if (col) {
			for (size_t k = 0; k < s->n; k++)
				col[k] = s->per[k * n + i];
			add_detail_series(t, "gflops", col, s->n);
		}
		cJSON_AddItemToArray(threads, t);
		wrong += bad > 0;
	}
	free(col);
	char sum[24];
	snprintf(sum, sizeof sum, "%016" PRIx64, checksum(expect, nc));
	cJSON_AddStringToObject(detail, "reference_checksum", sum);
	if (stalled)
		cJSON_AddNumberToObject(detail, "stalled_intervals", (double)stalled);
	ng_record_set_wrong(rec, (double)wrong);
	if (s->n == 0)
		ng_record_set_reason(rec, "no interval was sampled (out of memory)");
}

static int check_opts(const struct ng_cpu_opts *o, ng_err *err)
{
	if (!(o->duration_s > 0) || o->duration_s > 86400)
		return ng_fail(err, "duration must be more than 0 and at most 86400 s");
	if (!(o->interval_s >= 0.01) || o->interval_s > o->duration_s)
		return ng_fail(err, "interval must be at least 0.01 s and at most the duration");
	if (o->threads > MAX_CPUS)
		return ng_fail(err, "at most %d threads", MAX_CPUS);
	return 0;
}

/* Starts the workers; returns how many started. The first failure becomes
 * the record's reason. */
static size_t start_workers(struct worker *w, size_t n, const int *cpus, struct shared *sh,
                            const struct ng_cpu_opts *o, cJSON *rec)
{
	size_t started = 0;
	for (size_t i = 0; i < n; i++) {
		w[i].cpu = cpus[i];
		w[i].sh = sh;
		w[i].corrupt = o->test_corrupt_thread == (int)i;
		int e = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (e) {
			ng_record_set_reason(rec, "could not start thread %zu of %zu: %s", i + 1, n, strerror(e));
			break;
		}
		w[i].started = true;
		started++;
	}
	while ((size_t)atomic_load(&sh->ready) < started)
		sched_yield();
	for (size_t i = 0; i < started; i++)
		if (w[i].err) {
			ng_record_set_reason(rec, "thread on CPU %d could not %s: %s", w[i].cpu,
			                     w[i].err == ENOMEM ? "allocate its panels" : "be pinned",
			                     strerror(w[i].err));
			return 0;
		}
	return started == n ? started : 0;
}

static void measure(cJSON *rec, const struct ng_cpu_opts *o, const struct ng_cpu_tier *t,
                    const int *cpus, size_t n, struct shared *sh, const double *expect)
{
	struct worker *w = calloc(n, sizeof *w);
	struct sampling s = {.n_int = (size_t)ceil(o->duration_s / o->interval_s - 1e-9)};
	s.agg = calloc(s.n_int, sizeof *s.agg);
	s.mhz = calloc(s.n_int, sizeof *s.mhz);
	s.per = calloc(s.n_int * n, sizeof *s.per);
	if (!w || !s.agg || !s.mhz || !s.per) {
		ng_record_set_reason(rec, "out of memory for %zu threads", n);
		goto out;
	}
	size_t ok = start_workers(w, n, cpus, sh, o, rec);
	if (ok) {
		sleep_until(now_s() + warmup(o));
		atomic_store(&sh->corrupt_now, 1);
		sample(w, n, cpus, 2.0 * t->mr * t->nr * t->k, o, &s);
	}
	atomic_store(&sh->stop, 1);
	for (size_t i = 0; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].tid, NULL);
	if (ok)
		fill_record(rec, w, n, &s, expect, (size_t)t->mr * t->nr);
out:
	free(s.agg);
	free(s.mhz);
	free(s.per);
	free(w);
}

cJSON *ng_probe_cpu_run(const struct ng_cpu_opts *o, ng_err *err)
{
	if (check_opts(o, err) < 0)
		return NULL;
	const struct ng_cpu_tier *t = pick_tier(o->tier, err);
	if (!t)
		return NULL;
	static int cpus[MAX_CPUS];
	size_t n_cores, n_all = ng_cpu_list(cpus, MAX_CPUS, &n_cores);
	size_t n = o->threads ? o->threads : n_cores;
	if (n_all == 0 || n == 0) {
		ng_fail(err, "cannot read which CPUs this process may run on");
		return NULL;
	}
	if (n > n_all) {
		ng_fail(err, "%zu threads asked for, but this process may run on %zu CPUs", n, n_all);
		return NULL;
	}
	cJSON *records = cJSON_CreateArray(), *rec = new_record();
	double *a = NULL, *b = NULL, *c = NULL;
	if (!records || !rec) {
		cJSON_Delete(records);
		cJSON_Delete(rec);
		ng_fail(err, "out of memory");
		return NULL;
	}
	cJSON_AddItemToArray(records, rec);
	add_conditions(rec, o, t, cpus, n, n_cores > n ? n : n_cores);
	if (make_panels(t, &a, &b, &c) < 0) {
		ng_record_set_reason(rec, "out of memory for the reference panels");
	} else {
		struct shared sh = {.tier = t, .a = a, .b = b, .expect = c};
		measure(rec, o, t, cpus, n, &sh, c);
	}
	free(a);
	free(b);
	free(c);
	return records;
}
