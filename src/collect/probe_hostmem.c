/* The host-memory probe (see probe_hostmem.h). A pool of pinned threads
 * works in lockstep with the main thread: the main thread names an
 * operation, every thread does its share on its own node's buffer, and the
 * main thread times the pass between two barriers. */
#include "collect/probe_hostmem.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "collect/probe_cpu.h"
#include "core/record_build.h"

#define MAX_CPUS 4096
#define MAX_NODES 64
#define MAX_FIRST 8           /* mismatched words kept in detail */
#define PAGE_WORDS 512        /* 4 KiB: arrays start on page boundaries */
#define REGION_ALIGN (2u << 20) /* one transparent huge page */

enum op { OP_EXIT, OP_NOP, OP_FILL, OP_VERIFY, OP_INIT, OP_COPY, OP_TRIAD, OP_COPY1T };
enum { PAT_ADDRESS, PAT_WALK1, PAT_WALK0, PAT_RANDOM, PAT_COUNT };
static const char *const pattern_names[PAT_COUNT] = {"address", "walking-ones", "walking-zeros",
                                                     "random"};

struct miss {
	uintptr_t addr;
	uint64_t expected, got;
	int pattern;
};

struct node_buf {
	int node;
	void *base;
	size_t len;      /* bytes mapped */
	uint64_t *w;     /* the three arrays, back to back */
	size_t arr;      /* words per array */
	unsigned nthreads;
};

struct pool;

struct thr {
	pthread_t tid;
	int cpu, err;
	size_t node;
	unsigned sub; /* index among the node's threads */
	uint64_t mismatches;
	struct miss first[MAX_FIRST];
	size_t n_first;
	struct pool *p;
};

struct pool {
	pthread_barrier_t start, done;
	/* Before the barriers: 1 go on, -1 leave (not every thread started). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int go;
	enum op op;
	int pattern;
	uint64_t seed;
	struct node_buf nodes[MAX_NODES];
	size_t n_nodes;
	struct thr *t;
	size_t n;
};

void ng_hostmem_opts_default(struct ng_hostmem_opts *o)
{
	*o = (struct ng_hostmem_opts){.phase_s = 2, .interval_s = 0.4, .seed = 1, .lock = true,
	                              .test_corrupt_word = -1};
}

/* ---- what the machine has ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* Whether cpu is in a list such as "0-7,64-71"; *count gets its size. */
static bool cpulist_has(const char *s, int cpu, long *count)
{
	bool has = false;
	*count = 0;
	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;
		if (end == s)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		has |= cpu >= lo && cpu <= hi;
		*count += hi - lo + 1;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return has;
}

static size_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (size_t)kb * 1024;
}

/* The last-level cache of the whole machine, roughly: cpu0's last level
 * times the number of such caches. 0 when sysfs does not say. */
static size_t llc_bytes(void)
{
	size_t best = 0;
	long sharing = 1, online = sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 0; i < 8; i++) {
		char path[96], buf[256];
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!read_line(path, buf, sizeof buf))
			break;
		char *end;
		size_t kb = (size_t)strtoull(buf, &end, 10);
		size_t bytes = kb * (*end == 'M' ? 1024 * 1024 : 1024);
		if (bytes >= best) {
			best = bytes;
			snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
			if (read_line(path, buf, sizeof buf))
				cpulist_has(buf, 0, &sharing);
		}
	}
	if (sharing < 1)
		sharing = 1;
	return best * (size_t)((online + sharing - 1) / sharing);
}

size_t ng_hostmem_default_size(void)
{
	size_t avail = mem_available() / 4, size = (size_t)1 << 30, llc4 = llc_bytes() * 4;
	if (llc4 > size)
		size = llc4;
	if (avail && size > avail)
		size = avail;
	return size;
}

/* The NUMA node of a CPU, from /sys/devices/system/node; 0 without it. */
static int node_of(int cpu)
{
	for (int n = 0; n < MAX_NODES * 4; n++) {
		char path[96], buf[4096];
		long count;
		snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", n);
		if (read_line(path, buf, sizeof buf) && cpulist_has(buf, cpu, &count))
			return n;
	}
	return 0;
}

static long count_nodes(void)
{
	char buf[256];
	long count = 0;
	if (!read_line("/sys/devices/system/node/online", buf, sizeof buf))
		return 1;
	cpulist_has(buf, -1, &count);
	return count > 0 ? count : 1;
}

/* ---- what the threads do ---- */

static uint64_t pattern_word(int pattern, const uint64_t *w, size_t i, uint64_t seed)
{
	switch (pattern) {
	case PAT_ADDRESS: return (uint64_t)(uintptr_t)&w[i];
	case PAT_WALK1: return (uint64_t)1 << (i & 63);
	case PAT_WALK0: return ~((uint64_t)1 << (i & 63));
	default: {
		/* splitmix64 of the address, so every word of every node differs
		 * and any thread can compute any word. */
		uint64_t z = seed + (uint64_t)(uintptr_t)&w[i] * 0x9e3779b97f4a7c15u;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
		return z ^ (z >> 31);
	}
	}
}

static void share(size_t total, unsigned parts, unsigned part, size_t *lo, size_t *hi)
{
	*lo = total * part / parts;
	*hi = total * (part + 1) / parts;
}

static void fill(struct thr *t, struct node_buf *nb)
{
	size_t lo, hi;
	share(nb->arr * 3, nb->nthreads, t->sub, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		nb->w[i] = pattern_word(t->p->pattern, nb->w, i, t->p->seed);
}

static void verify(struct thr *t, struct node_buf *nb)
{
	size_t lo, hi;
	share(nb->arr * 3, nb->nthreads, t->sub, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		uint64_t want = pattern_word(t->p->pattern, nb->w, i, t->p->seed), got = nb->w[i];
		if (got == want)
			continue;
		if (t->n_first < MAX_FIRST)
			t->first[t->n_first++] = (struct miss){(uintptr_t)&nb->w[i], want, got, t->p->pattern};
		t->mismatches++;
	}
}

static void bandwidth(struct thr *t, struct node_buf *nb, enum op op)
{
	double *a = (double *)nb->w, *b = a + nb->arr, *c = b + nb->arr;
	size_t lo = 0, hi = nb->arr;
	if (op != OP_COPY1T)
		share(nb->arr, nb->nthreads, t->sub, &lo, &hi);
	switch (op) {
	case OP_INIT:
		for (size_t i = lo; i < hi; i++) {
			a[i] = 0.0;
			b[i] = 1.0;
			c[i] = 2.0;
		}
		break;
	case OP_COPY:
	case OP_COPY1T:
		memcpy(a + lo, b + lo, (hi - lo) * sizeof *a);
		break;
	default:
		for (size_t i = lo; i < hi; i++)
			a[i] = b[i] + 3.0 * c[i];
		break;
	}
}

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	struct pool *p = t->p;
	t->err = ng_cpu_pin_self(t->cpu);
	pthread_mutex_lock(&p->mu);
	while (p->go == 0)
		pthread_cond_wait(&p->cv, &p->mu);
	int go = p->go;
	pthread_mutex_unlock(&p->mu);
	while (go > 0) {
		pthread_barrier_wait(&p->start);
		enum op op = p->op;
		if (op == OP_EXIT)
			break;
		struct node_buf *nb = &p->nodes[t->node];
		if (op == OP_FILL)
			fill(t, nb);
		else if (op == OP_VERIFY)
			verify(t, nb);
		else if (op == OP_INIT || op == OP_COPY || op == OP_TRIAD || (op == OP_COPY1T && t == p->t))
			bandwidth(t, nb, op);
		pthread_barrier_wait(&p->done);
	}
	return NULL;
}

/* One pass of op on every thread; its wall time in seconds. */
static double pass(struct pool *p, enum op op)
{
	p->op = op;
	double t0 = now_s();
	pthread_barrier_wait(&p->start);
	pthread_barrier_wait(&p->done);
	return now_s() - t0;
}

/* ---- setting up ---- */

static int plan(struct pool *p, const struct ng_hostmem_opts *o, size_t size, ng_err *err)
{
	static int cpus[MAX_CPUS];
	size_t n_cores, n_all = ng_cpu_list(cpus, MAX_CPUS, &n_cores);
	size_t n = o->threads ? o->threads : n_cores;
	if (n_all == 0 || n == 0)
		return ng_fail(err, "cannot read which CPUs this process may run on");
	if (n > n_all)
		return ng_fail(err, "%zu threads asked for, but this process may run on %zu CPUs", n, n_all);
	p->t = calloc(n, sizeof *p->t);
	if (!p->t)
		return ng_fail(err, "out of memory");
	p->n = n;
	for (size_t i = 0; i < n; i++) {
		int node = node_of(cpus[i]);
		size_t k = 0;
		while (k < p->n_nodes && p->nodes[k].node != node)
			k++;
		if (k == p->n_nodes) {
			if (k == MAX_NODES)
				return ng_fail(err, "more than %d NUMA nodes", MAX_NODES);
			p->nodes[p->n_nodes++].node = node;
		}
		p->t[i] = (struct thr){.cpu = cpus[i], .node = k, .sub = p->nodes[k].nthreads++, .p = p};
	}
	for (size_t k = 0; k < p->n_nodes; k++) {
		struct node_buf *nb = &p->nodes[k];
		size_t words = size / 8 * nb->nthreads / n;
		nb->arr = words / 3 / PAGE_WORDS * PAGE_WORDS;
		if (nb->arr < (size_t)PAGE_WORDS * nb->nthreads)
			return ng_fail(err, "--size %zu bytes is too small for %u threads on node %d "
			               "(at least %zu bytes)", size, nb->nthreads, nb->node,
			               (size_t)3 * 4096 * n * nb->nthreads);
		nb->len = (nb->arr * 3 * 8 + REGION_ALIGN - 1) / REGION_ALIGN * REGION_ALIGN;
	}
	return 0;
}

/* Maps every node's buffer; the first failure is the reason. */
static bool map_buffers(struct pool *p, cJSON *reason_rec)
{
	for (size_t k = 0; k < p->n_nodes; k++) {
		struct node_buf *nb = &p->nodes[k];
		void *m = mmap(NULL, nb->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			ng_record_set_reason(reason_rec, "could not allocate %zu bytes for NUMA node %d: %s",
			                     nb->len, nb->node, strerror(errno));
			return false;
		}
		nb->base = m;
		nb->w = m;
		/* Huge pages where the kernel allows them: fewer TLB misses, so the
		 * figure is the memory's. Advice only; failure changes nothing. */
		(void)madvise(m, nb->len, MADV_HUGEPAGE);
	}
	return true;
}

static bool lock_buffers(struct pool *p, cJSON *reason_rec)
{
	for (size_t k = 0; k < p->n_nodes; k++)
		if (mlock(p->nodes[k].base, p->nodes[k].len) != 0) {
			int e = errno;
			ng_record_set_reason(reason_rec,
			                     "could not lock %zu bytes of memory (%s): run as root, raise "
			                     "RLIMIT_MEMLOCK, or pass --no-lock", p->nodes[k].len, strerror(e));
			return false;
		}
	return true;
}

static size_t start_threads(struct pool *p, cJSON *reason_rec)
{
	size_t started = 0;
	for (; started < p->n; started++) {
		int e = pthread_create(&p->t[started].tid, NULL, thr_main, &p->t[started]);
		if (e) {
			ng_record_set_reason(reason_rec, "could not start thread %zu of %zu: %s", started + 1,
			                     p->n, strerror(e));
			break;
		}
	}
	/* The barriers count every thread: with fewer, none may reach them. */
	pthread_mutex_lock(&p->mu);
	p->go = started == p->n ? 1 : -1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return started;
}

/* ---- measuring ---- */

struct results {
	uint64_t wrong[PAT_COUNT];
	struct miss first[MAX_FIRST];
	size_t n_first;
	double *s[3]; /* copy, triad, copy1t */
	size_t n[3], cap;
};

static void integrity(struct pool *p, const struct ng_hostmem_opts *o, struct results *r)
{
	for (int pat = 0; pat < PAT_COUNT; pat++) {
		p->pattern = pat;
		/* The address pattern was written as the first touch. */
		if (pat != PAT_ADDRESS)
			pass(p, OP_FILL);
		if (pat == PAT_RANDOM && o->test_corrupt_word >= 0) {
			struct node_buf *nb = &p->nodes[0];
			nb->w[(size_t)o->test_corrupt_word % (nb->arr * 3)] ^= (uint64_t)1 << 17;
		}
		for (size_t i = 0; i < p->n; i++)
			p->t[i].mismatches = 0;
		pass(p, OP_VERIFY);
		for (size_t i = 0; i < p->n; i++) {
			r->wrong[pat] += p->t[i].mismatches;
			for (size_t j = 0; j < p->t[i].n_first && r->n_first < MAX_FIRST; j++)
				r->first[r->n_first++] = p->t[i].first[j];
			p->t[i].n_first = 0;
		}
	}
}

/* Passes of op for phase_s seconds after one untimed pass; a sample is the
 * bytes of the passes that finished within one interval over their time. */
static void phase(struct pool *p, enum op op, double bytes, const struct ng_hostmem_opts *o,
                  double *out, size_t *n, size_t cap)
{
	pass(p, op);
	double end = now_s() + o->phase_s;
	while (*n < cap && now_s() < end) {
		double t = 0, b = 0;
		do {
			t += pass(p, op);
			b += bytes;
		} while (t < o->interval_s && now_s() < end);
		out[(*n)++] = b / t / 1e9;
	}
}

static void bandwidth_phases(struct pool *p, const struct ng_hostmem_opts *o, struct results *r)
{
	double words = 0;
	for (size_t k = 0; k < p->n_nodes; k++)
		words += (double)p->nodes[k].arr;
	pass(p, OP_INIT);
	phase(p, OP_COPY, 16 * words, o, r->s[0], &r->n[0], r->cap);
	phase(p, OP_TRIAD, 24 * words, o, r->s[1], &r->n[1], r->cap);
	phase(p, OP_COPY1T, 16 * (double)p->nodes[p->t[0].node].arr, o, r->s[2], &r->n[2], r->cap);
}

/* ---- the records ---- */

static const char *const metrics[3] = {"hostmem.copy.gbps", "hostmem.triad.gbps",
                                       "hostmem.copy1t.gbps"};

static void thp_mode(char *buf, size_t len)
{
	char line[256];
	const char *open, *close;
	snprintf(buf, len, "unknown");
	if (read_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof line) &&
	    (open = strchr(line, '[')) && (close = strchr(open, ']')))
		snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
}

static void add_conditions(cJSON *rec, const struct pool *p, const struct ng_hostmem_opts *o,
                           size_t size, int k)
{
	cJSON *c = ng_record_conditions(rec);
	char thp[32];
	size_t bytes = 0;
	for (size_t i = 0; i < p->n_nodes; i++)
		bytes += p->nodes[i].arr * 3 * 8;
	cJSON_AddNumberToObject(c, "size_bytes", (double)(bytes ? bytes : size));
	cJSON_AddNumberToObject(c, "threads", k == 2 ? 1 : (double)p->n);
	cJSON_AddNumberToObject(c, "numa_nodes", (double)count_nodes());
	cJSON *nodes = cJSON_AddArrayToObject(c, "layout");
	for (size_t i = 0; i < p->n_nodes; i++) {
		cJSON *n = cJSON_CreateObject(), *cpus = cJSON_AddArrayToObject(n, "cpus");
		cJSON_AddNumberToObject(n, "node", p->nodes[i].node);
		cJSON_AddNumberToObject(n, "array_bytes", (double)p->nodes[i].arr * 8);
		for (size_t t = 0; t < p->n; t++)
			if (p->t[t].node == i && (k != 2 || t == 0))
				cJSON_AddItemToArray(cpus, cJSON_CreateNumber(p->t[t].cpu));
		cJSON_AddItemToArray(nodes, n);
	}
	cJSON_AddBoolToObject(c, "locked", o->lock);
	thp_mode(thp, sizeof thp);
	cJSON_AddStringToObject(c, "transparent_hugepage", thp);
	cJSON_AddStringToObject(c, "kernel", k == 1 ? "a[i] = b[i] + 3*c[i], doubles" : "memcpy");
	cJSON_AddStringToObject(c, "bytes_counted", k == 1 ? "24 per element (2 read, 1 written)"
	                                                   : "16 per element (1 read, 1 written)");
	cJSON_AddNumberToObject(c, "phase_s", o->phase_s);
	cJSON_AddNumberToObject(c, "interval_s", o->interval_s);
	cJSON_AddNumberToObject(c, "seed", (double)o->seed);
}

static void add_integrity(cJSON *rec, const struct results *r)
{
	cJSON *d = ng_record_detail(rec), *pats = cJSON_AddObjectToObject(d, "integrity");
	double total = 0;
	for (int i = 0; i < PAT_COUNT; i++) {
		cJSON_AddNumberToObject(pats, pattern_names[i], (double)r->wrong[i]);
		total += (double)r->wrong[i];
	}
	cJSON *first = cJSON_AddArrayToObject(d, "first_mismatches");
	for (size_t i = 0; i < r->n_first; i++) {
		char buf[24];
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "pattern", pattern_names[r->first[i].pattern]);
		snprintf(buf, sizeof buf, "0x%" PRIxPTR, r->first[i].addr);
		cJSON_AddStringToObject(m, "address", buf);
		snprintf(buf, sizeof buf, "0x%016" PRIx64, r->first[i].expected);
		cJSON_AddStringToObject(m, "expected", buf);
		snprintf(buf, sizeof buf, "0x%016" PRIx64, r->first[i].got);
		cJSON_AddStringToObject(m, "got", buf);
		cJSON_AddItemToArray(first, m);
	}
	ng_record_set_wrong(rec, total);
}

static cJSON *make_records(void)
{
	cJSON *records = cJSON_CreateArray();
	for (int k = 0; records && k < 3; k++) {
		cJSON *rec = ng_record_new(metrics[k], NULL, NULL);
		if (!rec) {
			cJSON_Delete(records);
			return NULL;
		}
		cJSON *tool = ng_record_tool(rec);
		cJSON_AddStringToObject(tool, "name", "nodegate");
		cJSON_AddStringToObject(tool, "probe", "hostmem");
		cJSON_AddItemToArray(records, rec);
	}
	return records;
}

static void copy_reason(cJSON *records)
{
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(records->child, "reason");
	if (!reason)
		return;
	for (cJSON *r = records->child->next; r; r = r->next)
		ng_json_set(r, "reason", cJSON_Duplicate(reason, 1));
}

/* Allocates, checks and measures; fills r. false (a reason set on rec) when
 * nothing could be measured. */
static bool run_pool(struct pool *p, const struct ng_hostmem_opts *o, struct results *r, cJSON *rec)
{
	if (!map_buffers(p, rec))
		return false;
	size_t started = start_threads(p, rec);
	bool ok = started == p->n;
	if (ok) {
		pass(p, OP_NOP);
		for (size_t i = 0; i < p->n && ok; i++)
			if (p->t[i].err) {
				ng_record_set_reason(rec, "could not pin a thread to CPU %d: %s", p->t[i].cpu,
				                     strerror(p->t[i].err));
				ok = false;
			}
	}
	if (ok) {
		/* First touch, by each node's own threads, is the address pattern. */
		p->pattern = PAT_ADDRESS;
		pass(p, OP_FILL);
		ok = !o->lock || lock_buffers(p, rec);
	}
	if (ok) {
		integrity(p, o, r);
		bandwidth_phases(p, o, r);
	}
	if (started == p->n) {
		p->op = OP_EXIT;
		pthread_barrier_wait(&p->start);
	}
	for (size_t i = 0; i < started; i++)
		pthread_join(p->t[i].tid, NULL);
	return ok;
}

static int check_opts(const struct ng_hostmem_opts *o, ng_err *err)
{
	if (!(o->phase_s > 0) || o->phase_s > 3600)
		return ng_fail(err, "the phase duration must be more than 0 and at most 3600 s");
	if (!(o->interval_s >= 0.01) || o->interval_s > o->phase_s)
		return ng_fail(err, "interval must be at least 0.01 s and at most the phase duration");
	if (o->threads > MAX_CPUS)
		return ng_fail(err, "at most %d threads", MAX_CPUS);
	return 0;
}

cJSON *ng_probe_hostmem_run(const struct ng_hostmem_opts *o, ng_err *err)
{
	if (check_opts(o, err) < 0)
		return NULL;
	size_t size = o->size ? o->size : ng_hostmem_default_size();
	struct pool *p = calloc(1, sizeof *p);
	struct results r = {.cap = (size_t)ceil(o->phase_s / o->interval_s) + 2};
	cJSON *records = NULL;
	if (!p || plan(p, o, size, err) < 0)
		goto out;
	for (int k = 0; k < 3; k++)
		r.s[k] = calloc(r.cap, sizeof *r.s[k]);
	records = make_records();
	if (!records || !r.s[0] || !r.s[1] || !r.s[2]) {
		cJSON_Delete(records);
		records = NULL;
		ng_fail(err, "out of memory");
		goto out;
	}
	size_t avail = mem_available();
	bool ok;
	if (avail && size > avail - avail / 10) {
		ng_record_set_reason(records->child, "%zu bytes asked for, but only %zu are available: "
		                     "a smaller --size, or free memory first", size, avail);
		ok = false;
	} else {
		pthread_barrier_init(&p->start, NULL, (unsigned)p->n + 1);
		pthread_barrier_init(&p->done, NULL, (unsigned)p->n + 1);
		pthread_mutex_init(&p->mu, NULL);
		pthread_cond_init(&p->cv, NULL);
		p->seed = o->seed;
		ok = run_pool(p, o, &r, records->child);
		pthread_barrier_destroy(&p->start);
		pthread_barrier_destroy(&p->done);
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	int k = 0;
	for (cJSON *rec = records->child; rec; rec = rec->next, k++) {
		add_conditions(rec, p, o, size, k);
		if (!ok)
			continue;
		for (size_t i = 0; i < r.n[k]; i++)
			ng_record_add_sample(rec, r.s[k][i]);
		add_integrity(rec, &r);
	}
	copy_reason(records);
out:
	if (p) {
		for (size_t k2 = 0; k2 < p->n_nodes; k2++)
			if (p->nodes[k2].base)
				munmap(p->nodes[k2].base, p->nodes[k2].len);
		free(p->t);
	}
	free(p);
	for (int k2 = 0; k2 < 3; k2++)
		free(r.s[k2]);
	return records;
}
