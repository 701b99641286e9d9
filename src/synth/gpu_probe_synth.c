/* Synthetic GPUs for the GPU probes: a backend (collect/gpu_backend.h) that
 * answers from the scenario file $NODEGATE_SYNTH_GPUS names, the same file
 * the synthetic NVML reads (docs/synthetic-gpus.md, "probe").
 *
 * Nothing runs on a device. Each operation sleeps for the time its work
 * would take at the rate the scenario names and reports exactly that as the
 * device time, so the probes' host side (intervals, threads, grace periods,
 * verification bookkeeping, records) runs on real time with rates that are
 * known in advance. Everything is deterministic: the same scenario gives the
 * same rates, the same wrong counts and the same offsets.
 *
 * Only ng_gpu_backend_v1 is exported (the target builds with hidden
 * visibility), and nodegate_core is not linked in. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/gpu_backend.h"

#define GPUS_MAX 64
#define CORRUPT_MAX 64
#define SCENARIO_BYTES_MAX (4u << 20)

__attribute__((visibility("default"))) const struct ng_gpu_backend *ng_gpu_backend_v1(void);

enum fn {
	F_DESCRIBE, F_GEMM_SETUP, F_GEMM_RUN, F_GEMM_VERIFY, F_MEM_SETUP, F_MEM_PATTERN, F_MEM_COPY,
	F_COPY_SETUP, F_COPY_RUN, F_COPY_VERIFY, F_THROTTLE, F_NONE
};
static const char *const fn_names[F_NONE] = {
	"describe", "gemm_setup", "gemm_run", "gemm_verify", "mem_setup", "mem_pattern", "mem_copy",
	"copy_setup", "copy_run", "copy_verify", "throttle",
};

struct gpu {
	char uuid[96], name[96], bus[32];
	bool lost;
	double tflops, mem_gbps, h2d_gbps, d2h_gbps, p2p_gbps;
	double p2p[GPUS_MAX]; /* per peer: > 0 a rate, 0 the default, < 0 no peer access */
	uint64_t gemm_wrong, copy_wrong, total_bytes, free_bytes;
	uint64_t corrupt[CORRUPT_MAX];
	unsigned n_corrupt;
	double throttle_after_s, throttle_share; /* share 1: none */
	enum fn fail;

	/* Mutable: the planted throttle and the GEMM time so far. */
	pthread_mutex_t mu;
	double planted, gemm_elapsed_s;
};

static struct {
	bool loaded;
	int count;
	char driver[80];
	struct gpu gpu[GPUS_MAX];
} S;

/* ---- small helpers ------------------------------------------------------------ */

static int failf(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(char *why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (why)
		vsnprintf(why, NG_GPU_WHY, fmt, ap);
	va_end(ap);
	return NG_GPU_EFAIL;
}

static void sleep_s(double s)
{
	if (!(s > 0))
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static struct gpu *gpu_at(int dev, char *why)
{
	if (!S.loaded || dev < 0 || dev >= S.count) {
		failf(why, "synthetic: no GPU %d", dev);
		return NULL;
	}
	return &S.gpu[dev];
}

/* What an operation on g answers before doing anything: lost, or failing. */
static int enter(const struct gpu *g, enum fn f, char *why)
{
	if (g->lost)
		return failf(why, "synthetic: GPU %s is lost (fell off the bus)", g->uuid);
	if (g->fail == f)
		return failf(why, "synthetic: %s fails on GPU %s (scenario probe.fail)", fn_names[f],
		             g->uuid);
	return NG_GPU_OK;
}

/* ---- the scenario ------------------------------------------------------------ */

static const unsigned default_bus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

static void gpu_defaults(struct gpu *g, int i)
{
	memset(g, 0, sizeof *g);
	snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-4000-8000-%012x", (unsigned)i);
	snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
	snprintf(g->bus, sizeof g->bus, "%04X:%02X:00.0", (unsigned)i / 8, default_bus[i % 8]);
	g->tflops = 700;
	g->mem_gbps = 3000;
	g->h2d_gbps = 55;
	g->d2h_gbps = 53;
	g->p2p_gbps = 350;
	g->total_bytes = 85899345920ull;           /* 80 GiB */
	g->free_bytes = g->total_bytes - (1ull << 30); /* the driver keeps some */
	g->throttle_share = 1;
	g->fail = F_NONE;
	g->planted = 1;
}

/* "00000000:18:00.0", "0000:18:00.0", "0000:18:00" or "18:00.0" -> "0000:18:00.0". */
static bool bus_id(const char *s, char *out, size_t len)
{
	unsigned d = 0, b, dev, fn = 0;
	int colons = 0;
	for (const char *p = s; *p; p++)
		colons += *p == ':';
	int got = colons == 2 ? sscanf(s, "%x:%x:%x.%x", &d, &b, &dev, &fn)
	                      : colons == 1 ? sscanf(s, "%x:%x.%x", &b, &dev, &fn) + 1 : 0;
	if (got < 3 || b > 0xff || dev > 0x1f)
		return false;
	snprintf(out, len, "%04X:%02X:%02X.%X", d & 0xffff, b, dev, fn & 7);
	return true;
}

struct reader {
	char *why;
	char at[64];
};

static bool bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(struct reader *r, const char *fmt, ...)
{
	char msg[192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	failf(r->why, "synthetic: $NODEGATE_SYNTH_GPUS: %s: %s", r->at, msg);
	return false;
}

static bool rate(struct reader *r, const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return true;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0))
		return bad(r, "%s: expected a rate above 0", key);
	*out = v->valuedouble;
	return true;
}

static bool whole(struct reader *r, const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return true;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0 ||
	    v->valuedouble != floor(v->valuedouble))
		return bad(r, "%s: expected a whole number from 0", key);
	*out = (uint64_t)v->valuedouble;
	return true;
}

static bool known_keys(struct reader *r, const cJSON *o, const char *const *keys, size_t n)
{
	for (const cJSON *m = o->child; m; m = m->next) {
		size_t i = 0;
		while (i < n && strcmp(keys[i], m->string) != 0)
			i++;
		if (i == n)
			return bad(r, "unknown key \"%s\"", m->string);
	}
	return true;
}

static bool read_p2p(struct reader *r, const cJSON *o, struct gpu *g, int count)
{
	for (const cJSON *m = o->child; m; m = m->next) {
		char *end;
		long peer = strtol(m->string, &end, 10);
		if (end == m->string || *end || peer < 0 || peer >= count)
			return bad(r, "p2p: \"%s\" is not the index of a GPU of this scenario", m->string);
		if (cJSON_IsFalse(m))
			g->p2p[peer] = -1;
		else if (cJSON_IsNumber(m) && isfinite(m->valuedouble) && m->valuedouble > 0)
			g->p2p[peer] = m->valuedouble;
		else
			return bad(r, "p2p.%s: expected a rate above 0 or false (no peer access)", m->string);
	}
	return true;
}

static bool read_probe(struct reader *r, const cJSON *p, struct gpu *g, int count)
{
	static const char *const keys[] = {
		"tflops", "mem_gbps", "h2d_gbps", "d2h_gbps", "p2p_gbps", "p2p", "gemm_wrong",
		"copy_wrong", "corrupt_words", "throttle", "fail", "total_bytes", "free_bytes",
	};
	if (!cJSON_IsObject(p))
		return bad(r, "expected an object");
	if (!known_keys(r, p, keys, sizeof keys / sizeof *keys) || !rate(r, p, "tflops", &g->tflops) ||
	    !rate(r, p, "mem_gbps", &g->mem_gbps) || !rate(r, p, "h2d_gbps", &g->h2d_gbps) ||
	    !rate(r, p, "d2h_gbps", &g->d2h_gbps) || !rate(r, p, "p2p_gbps", &g->p2p_gbps) ||
	    !whole(r, p, "gemm_wrong", &g->gemm_wrong) || !whole(r, p, "copy_wrong", &g->copy_wrong) ||
	    !whole(r, p, "total_bytes", &g->total_bytes) || !whole(r, p, "free_bytes", &g->free_bytes))
		return false;
	if (cJSON_GetObjectItemCaseSensitive(p, "total_bytes") &&
	    !cJSON_GetObjectItemCaseSensitive(p, "free_bytes"))
		g->free_bytes = g->total_bytes - g->total_bytes / 80;
	if (g->free_bytes > g->total_bytes)
		return bad(r, "free_bytes is more than total_bytes");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "p2p");
	if (v && (!cJSON_IsObject(v) || !read_p2p(r, v, g, count)))
		return cJSON_IsObject(v) ? false : bad(r, "p2p: expected {\"peer index\": rate or false}");
	v = cJSON_GetObjectItemCaseSensitive(p, "corrupt_words");
	if (v) {
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > CORRUPT_MAX)
			return bad(r, "corrupt_words: expected a list of at most %d word indexes", CORRUPT_MAX);
		for (const cJSON *e = v->child; e; e = e->next) {
			if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble != floor(e->valuedouble) ||
			    e->valuedouble > 9007199254740992.0)
				return bad(r, "corrupt_words: expected whole numbers from 0");
			g->corrupt[g->n_corrupt++] = (uint64_t)e->valuedouble;
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(p, "throttle");
	if (v) {
		/* The clock fields are the synthetic NVML's: what it answers once
		 * the throttle is on (docs/synthetic-gpus.md). */
		static const char *const tkeys[] = {"after_s", "share", "clock_reasons", "sm_clock_mhz",
		                                    "temperature_c", "power_mw"};
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(v, "after_s");
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "share");
		if (!cJSON_IsObject(v) || !known_keys(r, v, tkeys, sizeof tkeys / sizeof *tkeys))
			return cJSON_IsObject(v) ? false : bad(r, "throttle: expected {after_s, share}");
		if (!cJSON_IsNumber(a) || !(a->valuedouble >= 0) || !isfinite(a->valuedouble) ||
		    !cJSON_IsNumber(s) || !(s->valuedouble > 0) || !(s->valuedouble <= 1))
			return bad(r, "throttle: after_s (seconds from 0) and share (above 0, at most 1) "
			              "are both needed");
		g->throttle_after_s = a->valuedouble;
		g->throttle_share = s->valuedouble;
	}
	v = cJSON_GetObjectItemCaseSensitive(p, "fail");
	if (v) {
		int f = 0;
		while (f < F_NONE && !(cJSON_IsString(v) && strcmp(v->valuestring, fn_names[f]) == 0))
			f++;
		if (f == F_NONE)
			return bad(r, "fail: expected the name of a backend function (describe, gemm_setup, "
			              "gemm_run, gemm_verify, mem_setup, mem_pattern, mem_copy, copy_setup, "
			              "copy_run, copy_verify, throttle)");
		g->fail = (enum fn)f;
	}
	return true;
}

static bool read_gpu(struct reader *r, const cJSON *o, struct gpu *g, int count)
{
	if (!cJSON_IsObject(o))
		return bad(r, "expected an object");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "uuid");
	if (cJSON_IsString(v) && v->valuestring[0])
		snprintf(g->uuid, sizeof g->uuid, "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "name");
	if (cJSON_IsString(v) && v->valuestring[0])
		snprintf(g->name, sizeof g->name, "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "pci_bus_id");
	if (cJSON_IsString(v) && !bus_id(v->valuestring, g->bus, sizeof g->bus))
		return bad(r, "pci_bus_id \"%s\" is not a PCI address", v->valuestring);
	g->lost = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "lost"));
	v = cJSON_GetObjectItemCaseSensitive(o, "probe");
	if (v) {
		size_t len = strlen(r->at);
		snprintf(r->at + len, sizeof r->at - len, ".probe");
		return read_probe(r, v, g, count);
	}
	return true;
}

/* The rest of the file is the synthetic NVML's to check; only what the
 * probes need is read here. */
static bool read_scenario(struct reader *r, const cJSON *doc)
{
	snprintf(r->at, sizeof r->at, "top level");
	if (!cJSON_IsObject(doc))
		return bad(r, "expected a JSON object");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "driver");
	snprintf(S.driver, sizeof S.driver, "%s",
	         cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : "550.54.15");
	const cJSON *fail = cJSON_GetObjectItemCaseSensitive(doc, "fail");
	const cJSON *init = cJSON_GetObjectItemCaseSensitive(fail, "init");
	if (init && !cJSON_IsNull(init)) {
		char code[64] = "";
		if (cJSON_IsString(init))
			snprintf(code, sizeof code, "%s", init->valuestring);
		else if (cJSON_IsNumber(init))
			snprintf(code, sizeof code, "%.0f", init->valuedouble);
		failf(r->why, "synthetic: the driver did not start (scenario fail.init %s)", code);
		return false;
	}
	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
	if (gpus && !cJSON_IsArray(gpus))
		return bad(r, "gpus: expected a list");
	int n = gpus ? cJSON_GetArraySize(gpus) : 8;
	if (n > GPUS_MAX)
		return bad(r, "gpus: %d GPUs; at most %d", n, GPUS_MAX);
	for (int i = 0; i < n; i++)
		gpu_defaults(&S.gpu[i], i);
	int i = 0;
	for (const cJSON *e = gpus ? gpus->child : NULL; e; e = e->next, i++) {
		snprintf(r->at, sizeof r->at, "gpus[%d]", i);
		if (!read_gpu(r, e, &S.gpu[i], n))
			return false;
	}
	S.count = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fail, "zero_devices")) ? 0 : n;
	return true;
}

static int load(char *why)
{
	const char *file = getenv("NODEGATE_SYNTH_GPUS");
	if (!file || !*file)
		return failf(why, "synthetic: NODEGATE_SYNTH_GPUS is not set; set it to a scenario file "
		                  "(docs/synthetic-gpus.md)");
	FILE *f = fopen(file, "rb");
	if (!f)
		return failf(why, "synthetic: cannot open %s: %s", file, strerror(errno));
	char *text = malloc(SCENARIO_BYTES_MAX + 1);
	size_t len = text ? fread(text, 1, SCENARIO_BYTES_MAX + 1, f) : 0;
	fclose(f);
	if (!text)
		return failf(why, "synthetic: out of memory");
	if (len > SCENARIO_BYTES_MAX) {
		free(text);
		return failf(why, "synthetic: %s is larger than %u bytes", file, SCENARIO_BYTES_MAX);
	}
	text[len] = '\0';
	cJSON *doc = cJSON_ParseWithLength(text, len);
	free(text);
	if (!doc)
		return failf(why, "synthetic: %s is not valid JSON", file);
	struct reader r = {.why = why};
	bool ok = read_scenario(&r, doc);
	cJSON_Delete(doc);
	return ok ? NG_GPU_OK : NG_GPU_EFAIL;
}

/* ---- the table ---------------------------------------------------------------- */

static void unload(void)
{
	if (S.loaded)
		for (int i = 0; i < S.count; i++)
			pthread_mutex_destroy(&S.gpu[i].mu);
	S.loaded = false;
	S.count = 0;
}

static int synth_init(int *count, char *version, size_t version_len, char *why)
{
	unload();
	if (load(why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	for (int i = 0; i < S.count; i++)
		pthread_mutex_init(&S.gpu[i].mu, NULL);
	S.loaded = true;
	*count = S.count;
	snprintf(version, version_len, "synthetic 1 / driver %s", S.driver);
	return NG_GPU_OK;
}

static int synth_describe(int dev, struct ng_gpu_device *d, char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g)
		return NG_GPU_EFAIL;
	if (g->fail == F_DESCRIBE)
		return enter(g, F_DESCRIBE, why);
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", g->name);
	snprintf(d->uuid, sizeof d->uuid, "%s", g->uuid);
	snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "%s", g->bus);
	d->total_bytes = g->total_bytes;
	d->free_bytes = g->free_bytes;
	d->cc_major = 9;
	d->cc_minor = 0;
	d->sm_count = 132;
	return NG_GPU_OK;
}

struct gemm_ctx {
	int dev;
	unsigned n;
};

static int synth_gemm_setup(int dev, unsigned n, void **ctx, char *engine, size_t engine_len,
                            char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g || enter(g, F_GEMM_SETUP, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	if (n == 0)
		return failf(why, "synthetic: a GEMM of size 0");
	struct gemm_ctx *c = malloc(sizeof *c);
	if (!c)
		return failf(why, "synthetic: out of memory");
	*c = (struct gemm_ctx){dev, n};
	*ctx = c;
	snprintf(engine, engine_len, "synthetic");
	return NG_GPU_OK;
}

/* Each GEMM at the GPU's rate, times the scenario's throttle once the GPU
 * has done after_s seconds of GEMMs, times a planted throttle. */
static int synth_gemm_run(void *ctx, unsigned reps, double *seconds, char *why)
{
	struct gemm_ctx *c = ctx;
	struct gpu *g = &S.gpu[c->dev];
	if (enter(g, F_GEMM_RUN, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	double work = 2.0 * (double)c->n * (double)c->n * (double)c->n, t = 0;
	pthread_mutex_lock(&g->mu);
	for (unsigned i = 0; i < reps; i++) {
		double share = g->planted * (g->gemm_elapsed_s >= g->throttle_after_s ? g->throttle_share : 1);
		double dt = work / (g->tflops * 1e12 * share);
		t += dt;
		g->gemm_elapsed_s += dt;
	}
	pthread_mutex_unlock(&g->mu);
	sleep_s(t);
	*seconds = t;
	return NG_GPU_OK;
}

static int synth_gemm_verify(void *ctx, uint64_t *wrong, uint64_t *checked, char *why)
{
	struct gemm_ctx *c = ctx;
	struct gpu *g = &S.gpu[c->dev];
	if (enter(g, F_GEMM_VERIFY, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	*checked = (uint64_t)c->n * c->n;
	*wrong = g->gemm_wrong < *checked ? g->gemm_wrong : *checked;
	return NG_GPU_OK;
}

static void synth_free(void *ctx) { free(ctx); }

struct mem_ctx {
	int dev;
	uint64_t bytes;
};

static int synth_mem_setup(int dev, uint64_t bytes, void **ctx, char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g || enter(g, F_MEM_SETUP, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	if (bytes == 0 || bytes % 8)
		return failf(why, "synthetic: %llu bytes is not a whole number of 64-bit words",
		             (unsigned long long)bytes);
	if (bytes > g->free_bytes)
		return failf(why, "synthetic: out of memory: %llu bytes asked for, %llu free",
		             (unsigned long long)bytes, (unsigned long long)g->free_bytes);
	struct mem_ctx *c = malloc(sizeof *c);
	if (!c)
		return failf(why, "synthetic: out of memory");
	*c = (struct mem_ctx){dev, bytes};
	*ctx = c;
	return NG_GPU_OK;
}

/* The scenario's corrupt words fail every pattern; the planted word fails
 * the pattern it was planted in. Offsets in the order the words are named. */
static int synth_mem_pattern(void *ctx, enum ng_gpu_pattern pattern, uint64_t seed,
                             int64_t corrupt_word, uint64_t *wrong, uint64_t *offsets,
                             unsigned max_offsets, unsigned *n_offsets, char *why)
{
	struct mem_ctx *c = ctx;
	struct gpu *g = &S.gpu[c->dev];
	(void)seed;
	if (enter(g, F_MEM_PATTERN, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	if ((unsigned)pattern >= NG_GPU_PATTERN_COUNT)
		return failf(why, "synthetic: no pattern %d", (int)pattern);
	uint64_t words = c->bytes / 8;
	*wrong = 0;
	*n_offsets = 0;
	bool planted_counted = false;
	for (unsigned i = 0; i < g->n_corrupt; i++) {
		uint64_t w = g->corrupt[i];
		bool dup = false;
		for (unsigned j = 0; j < i; j++)
			dup = dup || g->corrupt[j] == w;
		if (w >= words || dup)
			continue;
		planted_counted = planted_counted || (corrupt_word >= 0 && (uint64_t)corrupt_word == w);
		if (*n_offsets < max_offsets)
			offsets[(*n_offsets)++] = w * 8;
		(*wrong)++;
	}
	if (corrupt_word >= 0 && (uint64_t)corrupt_word < words && !planted_counted) {
		if (*n_offsets < max_offsets)
			offsets[(*n_offsets)++] = (uint64_t)corrupt_word * 8;
		(*wrong)++;
	}
	sleep_s(2.0 * (double)c->bytes / (g->mem_gbps * 1e9)); /* written, then read */
	return NG_GPU_OK;
}

static int synth_mem_copy(void *ctx, unsigned reps, uint64_t *bytes, double *seconds, char *why)
{
	struct mem_ctx *c = ctx;
	struct gpu *g = &S.gpu[c->dev];
	if (enter(g, F_MEM_COPY, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	/* Half the buffer read, the other half written, each pass. */
	*bytes = (uint64_t)reps * (c->bytes / 16 * 16);
	*seconds = (double)*bytes / (g->mem_gbps * 1e9);
	sleep_s(*seconds);
	return NG_GPU_OK;
}

struct copy_ctx {
	enum ng_gpu_path path;
	int src, dst;
	uint64_t bytes;
	double gbps;
};

/* The GPUs a path touches: H2D the destination, D2H the source, P2P both. */
static int copy_gpus(enum ng_gpu_path path, int src, int dst, struct gpu **a, struct gpu **b,
                     char *why)
{
	*a = *b = NULL;
	if (path == NG_GPU_PATH_H2D)
		*a = gpu_at(dst, why);
	else if (path == NG_GPU_PATH_D2H)
		*a = gpu_at(src, why);
	else if (path == NG_GPU_PATH_P2P) {
		*a = gpu_at(src, why);
		*b = *a ? gpu_at(dst, why) : NULL;
		if (*a && !*b)
			return NG_GPU_EFAIL;
	} else
		return failf(why, "synthetic: no copy path %d", (int)path);
	return *a ? NG_GPU_OK : NG_GPU_EFAIL;
}

static int synth_copy_setup(enum ng_gpu_path path, int src, int dst, uint64_t bytes, void **ctx,
                            char *why)
{
	struct gpu *a, *b;
	if (copy_gpus(path, src, dst, &a, &b, why) != NG_GPU_OK || enter(a, F_COPY_SETUP, why) ||
	    (b && enter(b, F_COPY_SETUP, why)))
		return NG_GPU_EFAIL;
	if (bytes == 0 || bytes % 8)
		return failf(why, "synthetic: %llu bytes is not a whole number of 64-bit words",
		             (unsigned long long)bytes);
	double gbps = path == NG_GPU_PATH_H2D ? a->h2d_gbps : path == NG_GPU_PATH_D2H ? a->d2h_gbps : 0;
	if (path == NG_GPU_PATH_P2P) {
		if (src == dst)
			return failf(why, "synthetic: peer to peer from GPU %d to itself", src);
		if (a->p2p[dst] < 0 || b->p2p[src] < 0)
			return NG_GPU_ENOTAPPLICABLE;
		gbps = a->p2p[dst] > 0 ? a->p2p[dst] : fmin(a->p2p_gbps, b->p2p_gbps);
	}
	struct copy_ctx *c = malloc(sizeof *c);
	if (!c)
		return failf(why, "synthetic: out of memory");
	*c = (struct copy_ctx){path, src, dst, bytes, gbps};
	*ctx = c;
	return NG_GPU_OK;
}

static int copy_enter(const struct copy_ctx *c, enum fn f, struct gpu **a, struct gpu **b,
                      char *why)
{
	if (copy_gpus(c->path, c->src, c->dst, a, b, why) != NG_GPU_OK || enter(*a, f, why) ||
	    (*b && enter(*b, f, why)))
		return NG_GPU_EFAIL;
	return NG_GPU_OK;
}

static int synth_copy_run(void *ctx, unsigned reps, double *seconds, char *why)
{
	struct copy_ctx *c = ctx;
	struct gpu *a, *b;
	if (copy_enter(c, F_COPY_RUN, &a, &b, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	*seconds = (double)reps * (double)c->bytes / (c->gbps * 1e9);
	sleep_s(*seconds);
	return NG_GPU_OK;
}

static int synth_copy_verify(void *ctx, uint64_t seed, uint64_t *wrong, char *why)
{
	struct copy_ctx *c = ctx;
	struct gpu *a, *b;
	(void)seed;
	if (copy_enter(c, F_COPY_VERIFY, &a, &b, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	uint64_t w = a->copy_wrong;
	if (b && b->copy_wrong > w)
		w = b->copy_wrong;
	*wrong = w < c->bytes / 8 ? w : c->bytes / 8;
	sleep_s((double)c->bytes / (c->gbps * 1e9));
	return NG_GPU_OK;
}

static int synth_ref_gemm(int dev, unsigned n, unsigned reps, double *seconds, char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g || enter(g, F_GEMM_RUN, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	*seconds = (double)reps * 2.0 * (double)n * (double)n * (double)n / (g->tflops * 1e12);
	sleep_s(*seconds);
	return NG_GPU_OK;
}

static int synth_ref_d2d(int dev, uint64_t bytes, unsigned reps, double *seconds, char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g || enter(g, F_MEM_COPY, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	*seconds = (double)reps * 2.0 * (double)bytes / (g->mem_gbps * 1e9);
	sleep_s(*seconds);
	return NG_GPU_OK;
}

static int synth_ref_h2d(int dev, uint64_t bytes, unsigned reps, double *seconds, char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g || enter(g, F_COPY_RUN, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	*seconds = (double)reps * (double)bytes / (g->h2d_gbps * 1e9);
	sleep_s(*seconds);
	return NG_GPU_OK;
}

static int synth_throttle(int dev, double share, char *why)
{
	struct gpu *g = gpu_at(dev, why);
	if (!g || enter(g, F_THROTTLE, why) != NG_GPU_OK)
		return NG_GPU_EFAIL;
	if (!(share > 0) || !(share <= 1))
		return failf(why, "synthetic: throttle share %g is not in (0, 1]", share);
	pthread_mutex_lock(&g->mu);
	g->planted = share;
	pthread_mutex_unlock(&g->mu);
	return NG_GPU_OK;
}

static const struct ng_gpu_backend table = {
	.abi = NG_GPU_BACKEND_ABI,
	.name = "synthetic",
	.init = synth_init,
	.describe = synth_describe,
	.gemm_setup = synth_gemm_setup,
	.gemm_run = synth_gemm_run,
	.gemm_verify = synth_gemm_verify,
	.gemm_teardown = synth_free,
	.mem_setup = synth_mem_setup,
	.mem_pattern = synth_mem_pattern,
	.mem_copy = synth_mem_copy,
	.mem_teardown = synth_free,
	.copy_setup = synth_copy_setup,
	.copy_run = synth_copy_run,
	.copy_verify = synth_copy_verify,
	.copy_teardown = synth_free,
	.ref_gemm = synth_ref_gemm,
	.ref_d2d = synth_ref_d2d,
	.ref_h2d = synth_ref_h2d,
	.throttle = synth_throttle,
};

const struct ng_gpu_backend *ng_gpu_backend_v1(void) { return &table; }
