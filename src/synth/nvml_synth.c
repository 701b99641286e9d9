/* Synthetic GPUs: a stand-in for libnvidia-ml.so.1 that answers the NVML
 * calls nodegate makes from a scenario file ($NODEGATE_SYNTH_GPUS), so every
 * fault a GPU node can show (and every way NVML itself can fail) runs on a
 * machine without a GPU. The format is docs/synthetic-gpus.md.
 *
 * Built four times from this file:
 *   libnodegate-nvml-synth.so         the current ABI (versioned names and
 *                                     the unversioned ones, as the real
 *                                     library keeps both)
 *   libnodegate-nvml-synth-old.so     NG_SYNTH_OLD: an old driver, without
 *                                     nvmlInit_v2, nvmlDeviceGetCount_v2,
 *                                     nvmlDeviceGetHandleByIndex_v2 and
 *                                     nvmlDeviceGetCurrentClocksEventReasons
 *   libnodegate-nvml-synth-broken.so  NG_SYNTH_BROKEN: no nvmlDeviceGetUUID
 *   libnodegate-nvml-synth-minimal.so NG_SYNTH_MINIMAL: only what nodegate
 *                                     cannot do without (init, count,
 *                                     handles, UUID, PCI info, shutdown)
 *
 * Only NVML's own names are exported (-fvisibility=hidden). The library
 * prints nothing, except one line on stderr when the scenario cannot be used
 * (nvmlInit then returns NVML_ERROR_UNKNOWN). Not thread-safe: nodegate
 * calls NVML from one thread. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#pragma GCC visibility push(default)
#include "collect/nvml_abi.h"
#pragma GCC visibility pop

#define SCHEMA "nodegate/synthetic-gpus/1"
#define SYNTH_GPUS_MAX 4096
#define SYNTH_LINKS_MAX 36 /* NVML_NVLINK_MAX_LINKS in the newest header */
#define SCENARIO_BYTES_MAX (16u << 20)
#define JSON_WHOLE_MAX 9007199254740992.0 /* 2^53: the largest exact whole double */

/* Every call a scenario can make fail, hang or answer NOT_SUPPORTED. */
#define SYMS(X)                                                        \
	X(INIT_V2, "nvmlInit_v2")                                      \
	X(INIT, "nvmlInit")                                            \
	X(SHUTDOWN, "nvmlShutdown")                                    \
	X(DRIVER, "nvmlSystemGetDriverVersion")                        \
	X(NVML_VERSION, "nvmlSystemGetNVMLVersion")                    \
	X(COUNT_V2, "nvmlDeviceGetCount_v2")                           \
	X(COUNT, "nvmlDeviceGetCount")                                 \
	X(HANDLE_V2, "nvmlDeviceGetHandleByIndex_v2")                  \
	X(HANDLE, "nvmlDeviceGetHandleByIndex")                        \
	X(HANDLE_UUID, "nvmlDeviceGetHandleByUUID")                    \
	X(INDEX, "nvmlDeviceGetIndex")                                 \
	X(UUID, "nvmlDeviceGetUUID")                                   \
	X(NAME, "nvmlDeviceGetName")                                   \
	X(PCI_V3, "nvmlDeviceGetPciInfo_v3")                           \
	X(ECC, "nvmlDeviceGetTotalEccErrors")                          \
	X(RETIRED, "nvmlDeviceGetRetiredPages")                        \
	X(RETIRED_PENDING, "nvmlDeviceGetRetiredPagesPendingStatus")   \
	X(REMAPPED, "nvmlDeviceGetRemappedRows")                       \
	X(PCIE_GEN, "nvmlDeviceGetCurrPcieLinkGeneration")             \
	X(PCIE_WIDTH, "nvmlDeviceGetCurrPcieLinkWidth")                \
	X(PCIE_GEN_MAX, "nvmlDeviceGetMaxPcieLinkGeneration")          \
	X(PCIE_WIDTH_MAX, "nvmlDeviceGetMaxPcieLinkWidth")             \
	X(PCIE_REPLAY, "nvmlDeviceGetPcieReplayCounter")               \
	X(CLOCK_EVENT, "nvmlDeviceGetCurrentClocksEventReasons")       \
	X(CLOCK_THROTTLE, "nvmlDeviceGetCurrentClocksThrottleReasons") \
	X(TEMPERATURE, "nvmlDeviceGetTemperature")                     \
	X(CLOCK, "nvmlDeviceGetClockInfo")                             \
	X(CLOCK_MAX, "nvmlDeviceGetMaxClockInfo")                      \
	X(POWER, "nvmlDeviceGetPowerUsage")                            \
	X(POWER_LIMIT, "nvmlDeviceGetEnforcedPowerLimit")              \
	X(POWER_DEFAULT, "nvmlDeviceGetPowerManagementDefaultLimit")   \
	X(APP_CLOCK, "nvmlDeviceGetApplicationsClock")                 \
	X(MINOR, "nvmlDeviceGetMinorNumber")                           \
	X(UTILIZATION, "nvmlDeviceGetUtilizationRates")                \
	X(PSTATE, "nvmlDeviceGetPerformanceState")                     \
	X(MEMORY, "nvmlDeviceGetMemoryInfo")                           \
	X(PROCESSES, "nvmlDeviceGetComputeRunningProcesses_v3")        \
	X(NVLINK_STATE, "nvmlDeviceGetNvLinkState")                    \
	X(NVLINK_ERRORS, "nvmlDeviceGetNvLinkErrorCounter")

enum {
#define SYM_ENUM(id, name) S_##id,
	SYMS(SYM_ENUM)
#undef SYM_ENUM
	S_COUNT_ALL
};
_Static_assert(S_COUNT_ALL <= 64, "one bit per call");

static const char *const sym_name[S_COUNT_ALL] = {
#define SYM_NAME(id, name) name,
	SYMS(SYM_NAME)
#undef SYM_NAME
};

#define BIT(s) ((uint64_t)1 << (s))

/* Short names for groups of calls, for "not_supported", "errors" and "hang". */
static const struct {
	const char *name;
	uint64_t calls;
} groups[] = {
	{"ecc", BIT(S_ECC)},
	{"retired_pages", BIT(S_RETIRED) | BIT(S_RETIRED_PENDING)},
	{"remapped_rows", BIT(S_REMAPPED)},
	{"pcie", BIT(S_PCIE_GEN) | BIT(S_PCIE_WIDTH) | BIT(S_PCIE_GEN_MAX) | BIT(S_PCIE_WIDTH_MAX) |
	                 BIT(S_PCIE_REPLAY)},
	{"pcie_replays", BIT(S_PCIE_REPLAY)},
	{"clock_reasons", BIT(S_CLOCK_EVENT) | BIT(S_CLOCK_THROTTLE)},
	{"temperature", BIT(S_TEMPERATURE)},
	{"clocks", BIT(S_CLOCK) | BIT(S_CLOCK_MAX)},
	{"power", BIT(S_POWER) | BIT(S_POWER_LIMIT) | BIT(S_POWER_DEFAULT)},
	{"nvlink", BIT(S_NVLINK_STATE) | BIT(S_NVLINK_ERRORS)},
};

static const struct {
	const char *name;
	unsigned long long bit;
} clock_reason_names[] = {
	{"gpu_idle", 0x1},     {"applications_clocks_setting", 0x2}, {"sw_power_cap", 0x4},
	{"hw_slowdown", 0x8},  {"sync_boost", 0x10},                  {"sw_thermal", 0x20},
	{"hw_thermal", 0x40},  {"hw_power_brake", 0x80},              {"display_clock_setting", 0x100},
};

static const struct {
	int code;
	const char *name, *text;
} returns[] = {
#define RETURN_ROW(v, name, text) {v, #name, text},
	NG_NVML_RETURNS(RETURN_ROW)
#undef RETURN_ROW
};

/* The PCI bus numbers of an HGX H100 board's eight GPUs, for GPUs given
 * without an address. */
static const unsigned default_bus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

struct synth_link {
	bool active;
	unsigned long long replay, recovery, crc;
};

/* A GPU, and what its nvmlDevice_t points at. */
struct nvmlDevice_st {
	unsigned index;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	unsigned domain, bus, device;
	bool lost;
	unsigned long long ecc[2][2]; /* [volatile, aggregate][corrected, uncorrected] */
	unsigned retired_sbe, retired_dbe;
	bool retired_pending;
	unsigned remap_corrected, remap_uncorrected;
	bool remap_pending, remap_failed;
	unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max, pcie_replays;
	unsigned long long clock_reasons;
	unsigned temperature_c, sm_clock_mhz, sm_clock_max_mhz, power_mw;
	unsigned power_limit_mw, power_default_limit_mw, app_sm_clock_mhz;
	unsigned minor; /* /dev/nvidiaN */
	unsigned utilization_gpu, pstate, memory_used_mib, memory_total_mib;
	unsigned n_processes;
	unsigned process[64]; /* PIDs of compute processes */
	unsigned n_links;
	struct synth_link link[SYNTH_LINKS_MAX];
	uint64_t not_supported, hang; /* BIT(S_...) */
	int error[S_COUNT_ALL];       /* 0: none */
	/* probe.throttle: what NVML says once the process is after_s old (a
	 * GPU that heats up under the probes' synthetic backend). */
	bool throttle;
	double throttle_after_s;
	struct nvmlDevice_st *throttled; /* NULL, or the values to answer then */
};

struct scenario {
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], nvml_version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
	int init_error;
	bool zero_devices;
	uint64_t hang;
	int error[S_COUNT_ALL];
	unsigned n_gpus;
	struct nvmlDevice_st *gpu;
};

static struct scenario *scn; /* while initialized */
static unsigned init_count;

/* ---- reading the scenario ------------------------------------------------------ */

struct reader {
	const char *file;
	char path[256]; /* where in the document, "gpus[2].pcie.width" */
	char msg[768];
};

static bool bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(struct reader *r, const char *fmt, ...)
{
	char what[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (r->path[0])
		snprintf(r->msg, sizeof r->msg, "%s: %s", r->path, what);
	else
		snprintf(r->msg, sizeof r->msg, "%s", what);
	return false;
}

/* Appends ".key" or "[i]" to the path; returns the old length to restore. */
static size_t path_push(struct reader *r, const char *key, int index)
{
	size_t old = strlen(r->path);
	if (key)
		snprintf(r->path + old, sizeof r->path - old, "%s%s", old ? "." : "", key);
	else
		snprintf(r->path + old, sizeof r->path - old, "[%d]", index);
	return old;
}

static void path_pop(struct reader *r, size_t old) { r->path[old] = '\0'; }

/* Every member of obj is one of allowed[], and none appears twice. */
static bool check_keys(struct reader *r, const cJSON *obj, const char *const *allowed, size_t n)
{
	if (!cJSON_IsObject(obj))
		return bad(r, "expected an object");
	for (const cJSON *m = obj->child; m; m = m->next) {
		bool known = false;
		for (size_t i = 0; i < n && !known; i++)
			known = strcmp(m->string, allowed[i]) == 0;
		if (!known) {
			char list[256] = "";
			for (size_t i = 0; i < n; i++) {
				size_t l = strlen(list);
				snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", allowed[i]);
			}
			return bad(r, "unknown key \"%s\" (known: %s)", m->string, list);
		}
		for (const cJSON *p = obj->child; p != m; p = p->next)
			if (strcmp(p->string, m->string) == 0)
				return bad(r, "key \"%s\" appears twice", m->string);
	}
	return true;
}

static bool get_whole(struct reader *r, const cJSON *obj, const char *key, double max, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return true;
	size_t old = path_push(r, key, 0);
	bool ok = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= max &&
	          v->valuedouble == (double)(unsigned long long)v->valuedouble;
	if (!ok)
		bad(r, "expected a whole number from 0 to %.0f", max);
	else
		*out = v->valuedouble;
	if (ok)
		path_pop(r, old);
	return ok;
}

static bool get_uint(struct reader *r, const cJSON *obj, const char *key, unsigned *out)
{
	double d = *out;
	if (!get_whole(r, obj, key, UINT_MAX, &d))
		return false;
	*out = (unsigned)d;
	return true;
}

static bool get_ull(struct reader *r, const cJSON *obj, const char *key, unsigned long long *out)
{
	double d = (double)*out;
	if (!get_whole(r, obj, key, JSON_WHOLE_MAX, &d))
		return false;
	*out = (unsigned long long)d;
	return true;
}

static bool get_bool(struct reader *r, const cJSON *obj, const char *key, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return true;
	size_t old = path_push(r, key, 0);
	if (!cJSON_IsBool(v))
		return bad(r, "expected true or false");
	*out = cJSON_IsTrue(v);
	path_pop(r, old);
	return true;
}

static bool get_string(struct reader *r, const cJSON *obj, const char *key, char *out, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return true;
	size_t old = path_push(r, key, 0);
	if (!cJSON_IsString(v))
		return bad(r, "expected a string");
	if (strlen(v->valuestring) >= size)
		return bad(r, "longer than NVML's %zu-byte buffer", size - 1);
	if (!v->valuestring[0])
		return bad(r, "empty");
	snprintf(out, size, "%s", v->valuestring);
	path_pop(r, old);
	return true;
}

/* The calls a name means: an exported symbol ("nvmlDeviceGetCount_v2"), a
 * name without its version suffix, meaning every version of it
 * ("nvmlDeviceGetCount"), or a group ("remapped_rows"). 0: none. */
static uint64_t calls_named(const char *name)
{
	for (size_t i = 0; i < sizeof groups / sizeof *groups; i++)
		if (strcmp(name, groups[i].name) == 0)
			return groups[i].calls;
	uint64_t calls = 0;
	size_t n = strlen(name);
	for (int s = 0; s < S_COUNT_ALL; s++) {
		const char *sym = sym_name[s];
		if (strcmp(sym, name) == 0) {
			calls |= BIT(s);
		} else if (strncmp(sym, name, n) == 0 && sym[n] == '_' && sym[n + 1] == 'v') {
			const char *d = sym + n + 2;
			bool digits = *d != '\0';
			for (; *d; d++)
				digits = digits && *d >= '0' && *d <= '9';
			if (digits)
				calls |= BIT(s);
		}
	}
	return calls;
}

#define CALL_NAMES_HELP                                                                      \
	"the name of an NVML call (\"nvmlDeviceGetRemappedRows\") or a group (ecc, retired_pages, " \
	"remapped_rows, pcie, pcie_replays, clock_reasons, temperature, clocks, power, nvlink)"

static bool read_call_name(struct reader *r, const char *name, uint64_t *out)
{
	uint64_t calls = calls_named(name);
	if (!calls)
		return bad(r, "\"%s\" is not an NVML call this library answers, nor a group; expected "
		              CALL_NAMES_HELP, name);
	*out |= calls;
	return true;
}

static bool read_calls(struct reader *r, const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsString(v))
		return bad(r, "expected " CALL_NAMES_HELP);
	return read_call_name(r, v->valuestring, out);
}

/* An NVML return code: "GPU_IS_LOST", "NVML_ERROR_GPU_IS_LOST" or 15. */
static bool read_code(struct reader *r, const cJSON *v, int *out)
{
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 1 || v->valuedouble > INT_MAX || v->valuedouble != (double)(int)v->valuedouble)
			return bad(r, "expected an NVML return code other than success (1 to %d)", INT_MAX);
		*out = (int)v->valuedouble;
		return true;
	}
	if (cJSON_IsString(v)) {
		const char *s = v->valuestring;
		if (strncmp(s, "NVML_ERROR_", 11) == 0)
			s += 11;
		for (size_t i = 0; i < sizeof returns / sizeof *returns; i++)
			if (returns[i].code != 0 && strcmp(s, returns[i].name) == 0) {
				*out = returns[i].code;
				return true;
			}
		return bad(r, "\"%s\" is not an NVML error code (such as \"UNKNOWN\", \"GPU_IS_LOST\", "
		              "\"DRIVER_NOT_LOADED\", or a number)", v->valuestring);
	}
	return bad(r, "expected an NVML error code (\"UNKNOWN\", \"GPU_IS_LOST\", ... or a number)");
}

/* "errors": {"nvmlDeviceGetPcieReplayCounter": "UNKNOWN", ...} */
static bool read_errors(struct reader *r, const cJSON *obj, int *error)
{
	size_t old = path_push(r, "errors", 0);
	if (!cJSON_IsObject(obj))
		return bad(r, "expected an object of NVML call names and error codes");
	for (const cJSON *m = obj->child; m; m = m->next) {
		for (const cJSON *p = obj->child; p != m; p = p->next)
			if (strcmp(p->string, m->string) == 0)
				return bad(r, "key \"%s\" appears twice", m->string);
		size_t o2 = path_push(r, m->string, 0);
		uint64_t calls = 0;
		int code = 0;
		if (!read_call_name(r, m->string, &calls) || !read_code(r, m, &code))
			return false;
		for (int s = 0; s < S_COUNT_ALL; s++)
			if (calls & BIT(s))
				error[s] = code;
		path_pop(r, o2);
	}
	path_pop(r, old);
	return true;
}

static bool read_hang(struct reader *r, const cJSON *obj, uint64_t *hang)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "hang");
	if (!v || cJSON_IsNull(v))
		return true;
	size_t old = path_push(r, "hang", 0);
	if (!read_calls(r, v, hang))
		return false;
	path_pop(r, old);
	return true;
}

/* "00000000:18:00.0", "0000:18:00.0", "0000:18:00", "18:00.0" */
static bool parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *device)
{
	unsigned v[3] = {0, 0, 0};
	int digits[3] = {0, 0, 0};
	int part = 0;
	const char *p = s;
	for (; *p && *p != '.'; p++) {
		if (*p == ':') {
			if (++part > 2)
				return false;
			continue;
		}
		int h;
		if (*p >= '0' && *p <= '9')
			h = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			h = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			h = *p - 'A' + 10;
		else
			return false;
		if (++digits[part] > 8)
			return false;
		v[part] = v[part] << 4 | (unsigned)h;
	}
	if (*p == '.' && !(p[1] >= '0' && p[1] <= '7' && p[2] == '\0'))
		return false;
	if (part == 1) { /* bus:device */
		v[2] = v[1];
		v[1] = v[0];
		v[0] = 0;
		digits[2] = digits[1];
		digits[1] = digits[0];
		digits[0] = 1;
	} else if (part != 2) {
		return false;
	}
	if (!digits[0] || digits[1] < 1 || digits[1] > 2 || digits[2] < 1 || digits[2] > 2 || v[2] > 0x1f)
		return false;
	*domain = v[0];
	*bus = v[1];
	*device = v[2];
	return true;
}

static void gpu_defaults(struct nvmlDevice_st *g, unsigned i)
{
	memset(g, 0, sizeof *g);
	g->index = i;
	snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-4000-8000-%012x", i);
	snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
	g->domain = i / 8;
	g->bus = default_bus[i % 8];
	g->device = 0;
	g->pcie_gen = g->pcie_gen_max = 5;
	g->pcie_width = g->pcie_width_max = 16;
	g->clock_reasons = 0x1; /* gpu_idle: nothing runs between jobs */
	g->temperature_c = 34;
	g->sm_clock_mhz = 345;
	g->sm_clock_max_mhz = 1980;
	g->power_mw = 71000;
	g->power_limit_mw = g->power_default_limit_mw = 700000;
	g->app_sm_clock_mhz = 1980;
	g->minor = i;
	/* between jobs: nothing running, the lowest P-state */
	g->pstate = 8;
	g->memory_total_mib = 81559;
	g->n_links = 18;
	for (unsigned l = 0; l < g->n_links; l++)
		g->link[l].active = true;
}

static bool read_clock_reasons(struct reader *r, const cJSON *v, unsigned long long *out)
{
	size_t old = path_push(r, "clock_reasons", 0);
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0 || v->valuedouble > JSON_WHOLE_MAX ||
		    v->valuedouble != (double)(unsigned long long)v->valuedouble)
			return bad(r, "expected a bit mask (a whole number) or a list of names");
		*out = (unsigned long long)v->valuedouble;
		path_pop(r, old);
		return true;
	}
	if (!cJSON_IsArray(v))
		return bad(r, "expected a list of names (gpu_idle, sw_power_cap, hw_slowdown, sw_thermal, "
		              "hw_thermal, hw_power_brake, ...) or a bit mask");
	unsigned long long bits = 0;
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		size_t o2 = path_push(r, NULL, i);
		if (cJSON_IsNumber(e)) {
			if (e->valuedouble < 0 || e->valuedouble > JSON_WHOLE_MAX ||
			    e->valuedouble != (double)(unsigned long long)e->valuedouble)
				return bad(r, "expected a reason name or a whole number");
			bits |= (unsigned long long)e->valuedouble;
		} else if (cJSON_IsString(e)) {
			bool found = false;
			for (size_t k = 0; k < sizeof clock_reason_names / sizeof *clock_reason_names; k++)
				if (strcmp(e->valuestring, clock_reason_names[k].name) == 0) {
					bits |= clock_reason_names[k].bit;
					found = true;
				}
			if (!found)
				return bad(r, "unknown clock reason \"%s\" (known: gpu_idle, "
				              "applications_clocks_setting, sw_power_cap, hw_slowdown, sync_boost, "
				              "sw_thermal, hw_thermal, hw_power_brake, display_clock_setting)",
				           e->valuestring);
		} else {
			return bad(r, "expected a reason name or a whole number");
		}
		path_pop(r, o2);
	}
	*out = bits;
	path_pop(r, old);
	return true;
}

static bool read_object(struct reader *r, const cJSON *parent, const char *key, const cJSON **out,
                        const char *const *allowed, size_t n)
{
	*out = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (!*out)
		return true;
	path_push(r, key, 0);
	return check_keys(r, *out, allowed, n);
}

#define N(a) (sizeof(a) / sizeof *(a))

/* The GPU's probe object belongs to the probes' backend, which checks all of
 * it; NVML reads only what a throttle changes in its own answers:
 * probe.throttle.{after_s, clock_reasons, sm_clock_mhz, temperature_c,
 * power_mw}. From after_s seconds after the process started, those are what
 * NVML answers. */
static bool read_probe(struct reader *r, const cJSON *probe, struct nvmlDevice_st *g)
{
	const cJSON *t = cJSON_IsObject(probe) ? cJSON_GetObjectItemCaseSensitive(probe, "throttle") : NULL;
	if (!cJSON_IsObject(t))
		return true;
	path_push(r, "probe", 0);
	path_push(r, "throttle", 0);
	const cJSON *after = cJSON_GetObjectItemCaseSensitive(t, "after_s");
	if (!cJSON_IsNumber(after) || !(after->valuedouble >= 0) || after->valuedouble > 1e9)
		return bad(r, "after_s: expected seconds from 0");
	g->throttled = malloc(sizeof *g->throttled);
	if (!g->throttled)
		return bad(r, "out of memory");
	*g->throttled = *g;
	g->throttled->throttled = NULL;
	g->throttle = true;
	g->throttle_after_s = after->valuedouble;
	const cJSON *cr = cJSON_GetObjectItemCaseSensitive(t, "clock_reasons");
	if (cr && !read_clock_reasons(r, cr, &g->throttled->clock_reasons))
		return false;
	return get_uint(r, t, "temperature_c", &g->throttled->temperature_c) &&
	       get_uint(r, t, "sm_clock_mhz", &g->throttled->sm_clock_mhz) &&
	       get_uint(r, t, "power_mw", &g->throttled->power_mw);
}

static bool read_gpu(struct reader *r, const cJSON *o, struct nvmlDevice_st *g)
{
	static const char *const keys[] = {
		"uuid", "name", "pci_bus_id", "lost", "ecc", "retired_pages", "remapped_rows", "pcie",
		"clock_reasons", "temperature_c", "sm_clock_mhz", "sm_clock_max_mhz", "power_mw",
		"power_limit_mw", "power_default_limit_mw", "app_sm_clock_mhz", "minor", "utilization_gpu", "pstate",
		"memory_used_mib", "memory_total_mib", "processes", "nvlink",
		"not_supported", "errors", "hang",
		/* The GPU probes' synthetic backend reads this one (src/synth/gpu_probe_synth.c);
		 * NVML reads only probe.throttle's clock fields (read_probe). */
		"probe",
	};
	if (!check_keys(r, o, keys, N(keys)))
		return false;
	size_t base = strlen(r->path);
	if (!get_string(r, o, "uuid", g->uuid, sizeof g->uuid) ||
	    !get_string(r, o, "name", g->name, sizeof g->name))
		return false;
	char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE] = "";
	if (!get_string(r, o, "pci_bus_id", bus_id, sizeof bus_id))
		return false;
	if (bus_id[0] && !parse_bus_id(bus_id, &g->domain, &g->bus, &g->device)) {
		path_push(r, "pci_bus_id", 0);
		return bad(r, "\"%s\" is not a PCI address (write \"00000000:18:00.0\")", bus_id);
	}
	if (!get_bool(r, o, "lost", &g->lost))
		return false;

	const cJSON *ecc;
	static const char *const ecc_keys[] = {"volatile", "aggregate"};
	static const char *const ecc_kinds[] = {"corrected", "uncorrected"};
	if (!read_object(r, o, "ecc", &ecc, ecc_keys, N(ecc_keys)))
		return false;
	if (ecc) {
		size_t at_ecc = strlen(r->path);
		for (int c = 0; c < 2; c++) {
			const cJSON *k;
			if (!read_object(r, ecc, ecc_keys[c], &k, ecc_kinds, N(ecc_kinds)))
				return false;
			if (k)
				for (int t = 0; t < 2; t++)
					if (!get_ull(r, k, ecc_kinds[t], &g->ecc[c][t]))
						return false;
			path_pop(r, at_ecc);
		}
	}
	path_pop(r, base);

	const cJSON *rp;
	static const char *const rp_keys[] = {"sbe", "dbe", "pending"};
	if (!read_object(r, o, "retired_pages", &rp, rp_keys, N(rp_keys)))
		return false;
	if (rp && (!get_uint(r, rp, "sbe", &g->retired_sbe) || !get_uint(r, rp, "dbe", &g->retired_dbe) ||
	           !get_bool(r, rp, "pending", &g->retired_pending)))
		return false;
	path_pop(r, base);

	const cJSON *rr;
	static const char *const rr_keys[] = {"corrected", "uncorrected", "pending", "failed"};
	if (!read_object(r, o, "remapped_rows", &rr, rr_keys, N(rr_keys)))
		return false;
	if (rr && (!get_uint(r, rr, "corrected", &g->remap_corrected) ||
	           !get_uint(r, rr, "uncorrected", &g->remap_uncorrected) ||
	           !get_bool(r, rr, "pending", &g->remap_pending) || !get_bool(r, rr, "failed", &g->remap_failed)))
		return false;
	path_pop(r, base);

	const cJSON *pc;
	static const char *const pc_keys[] = {"gen", "gen_max", "width", "width_max", "replays"};
	if (!read_object(r, o, "pcie", &pc, pc_keys, N(pc_keys)))
		return false;
	if (pc && (!get_uint(r, pc, "gen", &g->pcie_gen) || !get_uint(r, pc, "gen_max", &g->pcie_gen_max) ||
	           !get_uint(r, pc, "width", &g->pcie_width) || !get_uint(r, pc, "width_max", &g->pcie_width_max) ||
	           !get_uint(r, pc, "replays", &g->pcie_replays)))
		return false;
	path_pop(r, base);

	const cJSON *cr = cJSON_GetObjectItemCaseSensitive(o, "clock_reasons");
	if (cr && !read_clock_reasons(r, cr, &g->clock_reasons))
		return false;
	if (!get_uint(r, o, "temperature_c", &g->temperature_c) || !get_uint(r, o, "sm_clock_mhz", &g->sm_clock_mhz) ||
	    !get_uint(r, o, "sm_clock_max_mhz", &g->sm_clock_max_mhz) || !get_uint(r, o, "power_mw", &g->power_mw) ||
	    !get_uint(r, o, "minor", &g->minor) || !get_uint(r, o, "utilization_gpu", &g->utilization_gpu) ||
	    !get_uint(r, o, "pstate", &g->pstate) || !get_uint(r, o, "memory_used_mib", &g->memory_used_mib) ||
	    !get_uint(r, o, "memory_total_mib", &g->memory_total_mib) ||
	    !get_uint(r, o, "power_limit_mw", &g->power_limit_mw) ||
	    !get_uint(r, o, "power_default_limit_mw", &g->power_default_limit_mw) ||
	    !get_uint(r, o, "app_sm_clock_mhz", &g->app_sm_clock_mhz))
		return false;

	const cJSON *nv = cJSON_GetObjectItemCaseSensitive(o, "nvlink");
	if (nv) {
		path_push(r, "nvlink", 0);
		if (!cJSON_IsArray(nv))
			return bad(r, "expected a list of links ([] for a GPU without NVLink)");
		int n = cJSON_GetArraySize(nv);
		if (n > SYNTH_LINKS_MAX)
			return bad(r, "%d links; NVML knows at most %d", n, SYNTH_LINKS_MAX);
		g->n_links = (unsigned)n;
		int i = 0;
		static const char *const link_keys[] = {"active", "replay", "recovery", "crc"};
		for (const cJSON *e = nv->child; e; e = e->next, i++) {
			size_t o2 = path_push(r, NULL, i);
			struct synth_link *l = &g->link[i];
			*l = (struct synth_link){.active = true};
			if (!check_keys(r, e, link_keys, N(link_keys)) || !get_bool(r, e, "active", &l->active) ||
			    !get_ull(r, e, "replay", &l->replay) || !get_ull(r, e, "recovery", &l->recovery) ||
			    !get_ull(r, e, "crc", &l->crc))
				return false;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}

	const cJSON *procs = cJSON_GetObjectItemCaseSensitive(o, "processes");
	if (procs) {
		path_push(r, "processes", 0);
		if (!cJSON_IsArray(procs) || cJSON_GetArraySize(procs) > 64)
			return bad(r, "expected a list of at most 64 process ids");
		int i = 0;
		for (const cJSON *e = procs->child; e; e = e->next, i++) {
			size_t o2 = path_push(r, NULL, i);
			if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > 4194304 ||
			    e->valuedouble != (double)(unsigned)e->valuedouble)
				return bad(r, "expected a process id from 1 to 4194304");
			g->process[g->n_processes++] = (unsigned)e->valuedouble;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}
	if (g->pstate > 15)
		return bad(r, "pstate: expected 0 (P0) to 15 (P15)");
	if (g->utilization_gpu > 100)
		return bad(r, "utilization_gpu: expected a percentage from 0 to 100");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "not_supported");
	if (ns) {
		path_push(r, "not_supported", 0);
		if (!cJSON_IsArray(ns))
			return bad(r, "expected a list of NVML call names or groups");
		int i = 0;
		for (const cJSON *e = ns->child; e; e = e->next, i++) {
			size_t o2 = path_push(r, NULL, i);
			if (!read_calls(r, e, &g->not_supported))
				return false;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}
	const cJSON *er = cJSON_GetObjectItemCaseSensitive(o, "errors");
	if (er && !read_errors(r, er, g->error))
		return false;
	if (!read_probe(r, cJSON_GetObjectItemCaseSensitive(o, "probe"), g))
		return false;
	path_pop(r, base);
	return read_hang(r, o, &g->hang);
}

static bool read_scenario(struct reader *r, const cJSON *doc, struct scenario *s)
{
	static const char *const keys[] = {"schema", "driver", "nvml_version", "fail", "gpus"};
	if (!check_keys(r, doc, keys, N(keys)))
		return false;
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (schema && !(cJSON_IsString(schema) && strcmp(schema->valuestring, SCHEMA) == 0)) {
		path_push(r, "schema", 0);
		return bad(r, "expected \"" SCHEMA "\"");
	}
	snprintf(s->driver, sizeof s->driver, "550.54.15");
	snprintf(s->nvml_version, sizeof s->nvml_version, "12.550.54.15");
	if (!get_string(r, doc, "driver", s->driver, sizeof s->driver) ||
	    !get_string(r, doc, "nvml_version", s->nvml_version, sizeof s->nvml_version))
		return false;

	const cJSON *fail = cJSON_GetObjectItemCaseSensitive(doc, "fail");
	if (fail && !cJSON_IsNull(fail)) {
		static const char *const fail_keys[] = {"init", "hang", "zero_devices", "errors"};
		path_push(r, "fail", 0);
		if (!check_keys(r, fail, fail_keys, N(fail_keys)))
			return false;
		const cJSON *init = cJSON_GetObjectItemCaseSensitive(fail, "init");
		if (init && !cJSON_IsNull(init)) {
			size_t old = path_push(r, "init", 0);
			if (!read_code(r, init, &s->init_error))
				return false;
			path_pop(r, old);
		}
		if (!read_hang(r, fail, &s->hang) || !get_bool(r, fail, "zero_devices", &s->zero_devices))
			return false;
		const cJSON *er = cJSON_GetObjectItemCaseSensitive(fail, "errors");
		if (er && !read_errors(r, er, s->error))
			return false;
		path_pop(r, 0);
	}

	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
	if (gpus && !cJSON_IsArray(gpus)) {
		path_push(r, "gpus", 0);
		return bad(r, "expected a list of GPUs");
	}
	int n = gpus ? cJSON_GetArraySize(gpus) : 8;
	if (n > SYNTH_GPUS_MAX) {
		path_push(r, "gpus", 0);
		return bad(r, "%d GPUs; at most %d", n, SYNTH_GPUS_MAX);
	}
	s->n_gpus = (unsigned)n;
	s->gpu = calloc(n ? (size_t)n : 1, sizeof *s->gpu);
	if (!s->gpu)
		return bad(r, "out of memory");
	for (unsigned i = 0; i < s->n_gpus; i++)
		gpu_defaults(&s->gpu[i], i);
	if (gpus) {
		int i = 0;
		for (const cJSON *e = gpus->child; e; e = e->next, i++) {
			path_push(r, "gpus", 0);
			path_push(r, NULL, i);
			if (!read_gpu(r, e, &s->gpu[i]))
				return false;
			path_pop(r, 0);
		}
	}
	for (unsigned i = 0; i < s->n_gpus; i++)
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(s->gpu[i].uuid, s->gpu[j].uuid) == 0) {
				snprintf(r->path, sizeof r->path, "gpus[%u].uuid", i);
				return bad(r, "\"%s\" is also the uuid of gpus[%u]", s->gpu[i].uuid, j);
			}
			if (s->gpu[i].domain == s->gpu[j].domain && s->gpu[i].bus == s->gpu[j].bus &&
			    s->gpu[i].device == s->gpu[j].device) {
				snprintf(r->path, sizeof r->path, "gpus[%u].pci_bus_id", i);
				return bad(r, "%08X:%02X:%02X.0 is also the address of gpus[%u]", s->gpu[i].domain,
				           s->gpu[i].bus, s->gpu[i].device, j);
			}
		}
	return true;
}

static void scenario_free(struct scenario *s)
{
	if (s) {
		for (unsigned i = 0; s->gpu && i < s->n_gpus; i++)
			free(s->gpu[i].throttled);
		free(s->gpu);
		free(s);
	}
}

/* Seconds since this process started (/proc/self/stat's starttime against
 * the boot clock), or -1 when unreadable. The scenario is read at each
 * session's nvmlInit, so a snapshot sees the time it was taken. */
static double process_age_s(void)
{
	char line[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	if (!f)
		return -1;
	bool ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	const char *p = ok ? strrchr(line, ')') : NULL;
	if (!p)
		return -1;
	/* After the command's closing parenthesis: field 3 on; starttime is 22. */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	unsigned long long start;
	long ticks = sysconf(_SC_CLK_TCK);
	struct timespec now;
	if (!p || sscanf(p + 1, "%llu", &start) != 1 || ticks <= 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &now) != 0)
		return -1;
	return (double)now.tv_sec + (double)now.tv_nsec * 1e-9 - (double)start / (double)ticks;
}

static void apply_throttles(struct scenario *s)
{
	double age = -1;
	for (unsigned i = 0; i < s->n_gpus; i++) {
		struct nvmlDevice_st *g = &s->gpu[i];
		if (!g->throttle)
			continue;
		if (age < 0)
			age = process_age_s();
		if (age >= g->throttle_after_s) {
			g->clock_reasons = g->throttled->clock_reasons;
			g->temperature_c = g->throttled->temperature_c;
			g->sm_clock_mhz = g->throttled->sm_clock_mhz;
			g->power_mw = g->throttled->power_mw;
		}
	}
}

/* The scenario $NODEGATE_SYNTH_GPUS names, or NULL after one line on stderr. */
static struct scenario *scenario_load(void)
{
	struct reader r = {0};
	const char *file = getenv("NODEGATE_SYNTH_GPUS");
	char *text = NULL;
	cJSON *doc = NULL;
	struct scenario *s = NULL;
	if (!file || !*file) {
		fprintf(stderr, "nodegate-nvml-synth: NODEGATE_SYNTH_GPUS is not set; set it to a scenario "
		                "file (docs/synthetic-gpus.md)\n");
		return NULL;
	}
	r.file = file;
	FILE *f = fopen(file, "rb");
	if (!f) {
		bad(&r, "cannot open it: %s", strerror(errno));
		goto fail;
	}
	text = malloc(SCENARIO_BYTES_MAX + 1);
	size_t len = text ? fread(text, 1, SCENARIO_BYTES_MAX + 1, f) : 0;
	bool read_error = text && ferror(f);
	fclose(f);
	if (!text) {
		bad(&r, "out of memory");
		goto fail;
	}
	if (read_error) {
		bad(&r, "cannot read it");
		goto fail;
	}
	if (len > SCENARIO_BYTES_MAX) {
		bad(&r, "larger than %u bytes", SCENARIO_BYTES_MAX);
		goto fail;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		bad(&r, "not JSON: a NUL byte at offset %zu", strlen(text));
		goto fail;
	}
	const char *end = NULL;
	doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	if (!doc) {
		size_t at = end && end >= text ? (size_t)(end - text) : 0;
		size_t line = 1;
		for (size_t i = 0; i < at && i < len; i++)
			line += text[i] == '\n';
		bad(&r, "not valid JSON (near byte %zu, line %zu)", at + 1, line);
		goto fail;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		bad(&r, "out of memory");
		goto fail;
	}
	if (!read_scenario(&r, doc, s))
		goto fail;
	apply_throttles(s);
	cJSON_Delete(doc);
	free(text);
	return s;
fail:
	fprintf(stderr, "nodegate-nvml-synth: %s: %s\n", file, r.msg);
	cJSON_Delete(doc);
	free(text);
	scenario_free(s);
	return NULL;
}

/* ---- answering calls ----------------------------------------------------------- */

static void hang_forever(void)
{
	for (;;)
		pause();
}

/* What a call answers before it looks at its data: a hang, a lost GPU, a
 * configured error or NOT_SUPPORTED. g is NULL for calls on no GPU. */
static nvmlReturn_t enter(int sym, const struct nvmlDevice_st *g)
{
	if (!scn)
		return NVML_ERROR_UNINITIALIZED;
	if ((scn->hang & BIT(sym)) || (g && (g->hang & BIT(sym))))
		hang_forever();
	if (g && g->lost)
		return NVML_ERROR_GPU_IS_LOST;
	if (g && g->error[sym])
		return (nvmlReturn_t)g->error[sym];
	if (scn->error[sym])
		return (nvmlReturn_t)scn->error[sym];
	if (g && (g->not_supported & BIT(sym)))
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

/* The GPU a handle points at, or NULL when it is not one of ours. */
static struct nvmlDevice_st *gpu_of(nvmlDevice_t device)
{
	if (!scn || !device)
		return NULL;
	for (unsigned i = 0; i < scn->n_gpus; i++)
		if (&scn->gpu[i] == device)
			return device;
	return NULL;
}

#define DEVICE_CALL(sym, device, g)                      \
	struct nvmlDevice_st *g = gpu_of(device);        \
	if (!scn)                                        \
		return NVML_ERROR_UNINITIALIZED;         \
	if (!g)                                          \
		return NVML_ERROR_INVALID_ARGUMENT;      \
	nvmlReturn_t rc_ = enter(sym, g);                \
	if (rc_ != NVML_SUCCESS)                         \
		return rc_

static nvmlReturn_t copy_string(char *out, unsigned int length, const char *s)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(out, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

static nvmlReturn_t synth_init(int sym)
{
	if (init_count > 0) {
		nvmlReturn_t rc = enter(sym, NULL);
		if (rc == NVML_SUCCESS)
			init_count++;
		return rc;
	}
	scn = scenario_load();
	if (!scn)
		return NVML_ERROR_UNKNOWN;
	nvmlReturn_t rc = scn->init_error ? (nvmlReturn_t)scn->init_error : enter(sym, NULL);
	if (rc != NVML_SUCCESS) {
		scenario_free(scn);
		scn = NULL;
		return rc;
	}
	init_count = 1;
	return NVML_SUCCESS;
}

#ifndef NG_SYNTH_OLD
nvmlReturn_t nvmlInit_v2(void) { return synth_init(S_INIT_V2); }
#endif

nvmlReturn_t nvmlInit(void) { return synth_init(S_INIT); }

nvmlReturn_t nvmlShutdown(void)
{
	if (!scn)
		return NVML_ERROR_UNINITIALIZED;
	nvmlReturn_t rc = enter(S_SHUTDOWN, NULL);
	if (--init_count == 0) {
		scenario_free(scn);
		scn = NULL;
	}
	return rc;
}

#ifndef NG_SYNTH_MINIMAL
const char *nvmlErrorString(nvmlReturn_t result)
{
	for (size_t i = 0; i < sizeof returns / sizeof *returns; i++)
		if (returns[i].code == (int)result)
			return returns[i].text;
	return "unknown error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	nvmlReturn_t rc = enter(S_DRIVER, NULL);
	return rc != NVML_SUCCESS ? rc : copy_string(version, length, scn->driver);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	nvmlReturn_t rc = enter(S_NVML_VERSION, NULL);
	return rc != NVML_SUCCESS ? rc : copy_string(version, length, scn->nvml_version);
}
#endif

static unsigned visible_gpus(void) { return scn->zero_devices ? 0 : scn->n_gpus; }

static nvmlReturn_t synth_count(int sym, unsigned int *deviceCount)
{
	nvmlReturn_t rc = enter(sym, NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = visible_gpus();
	return NVML_SUCCESS;
}

#ifndef NG_SYNTH_OLD
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) { return synth_count(S_COUNT_V2, deviceCount); }
#endif

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount) { return synth_count(S_COUNT, deviceCount); }

/* A lost GPU still has a handle; every call on it then says it is lost. */
static nvmlReturn_t synth_handle(int sym, unsigned int index, nvmlDevice_t *device)
{
	if (!scn)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= visible_gpus())
		return NVML_ERROR_INVALID_ARGUMENT;
	struct nvmlDevice_st *g = &scn->gpu[index];
	if ((scn->hang & BIT(sym)) || (g->hang & BIT(sym)))
		hang_forever();
	int err = g->error[sym] ? g->error[sym] : scn->error[sym];
	if (err)
		return (nvmlReturn_t)err;
	*device = g;
	return NVML_SUCCESS;
}

#ifndef NG_SYNTH_OLD
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	return synth_handle(S_HANDLE_V2, index, device);
}
#endif

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return synth_handle(S_HANDLE, index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	nvmlReturn_t rc = enter(S_HANDLE_UUID, NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < visible_gpus(); i++)
		if (strcmp(scn->gpu[i].uuid, uuid) == 0) {
			*device = &scn->gpu[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	DEVICE_CALL(S_INDEX, device, g);
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = g->index;
	return NVML_SUCCESS;
}

#ifndef NG_SYNTH_BROKEN
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	DEVICE_CALL(S_UUID, device, g);
	return copy_string(uuid, length, g->uuid);
}
#endif

#ifndef NG_SYNTH_MINIMAL
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	DEVICE_CALL(S_NAME, device, g);
	return copy_string(name, length, g->name);
}
#endif

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	DEVICE_CALL(S_PCI_V3, device, g);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof *pci);
	pci->domain = g->domain;
	pci->bus = g->bus;
	pci->device = g->device;
	pci->pciDeviceId = 0x233010DEu; /* H100 SXM5, NVIDIA */
	pci->pciSubSystemId = 0x16C110DEu;
	snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", g->domain & 0xffffu, g->bus,
	         g->device);
	snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", g->domain, g->bus, g->device);
	return NVML_SUCCESS;
}

/* The optional calls: the minimal variant has none of them. */
#ifndef NG_SYNTH_MINIMAL
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
	DEVICE_CALL(S_ECC, device, g);
	if (!eccCounts || (unsigned)errorType > 1 || (unsigned)counterType > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	*eccCounts = g->ecc[counterType][errorType];
	return NVML_SUCCESS;
}

/* The two-call pattern: *pageCount 0 asks for the count. */
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int *pageCount, unsigned long long *addresses)
{
	DEVICE_CALL(S_RETIRED, device, g);
	if (!pageCount || (unsigned)cause > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned n = cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? g->retired_dbe : g->retired_sbe;
	if (*pageCount < n) {
		*pageCount = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n && !addresses)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < n; i++)
		addresses[i] = 0x1000ull * (i + 1) + (cause ? 0x800000ull : 0);
	*pageCount = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t *isPending)
{
	DEVICE_CALL(S_RETIRED_PENDING, device, g);
	if (!isPending)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isPending = g->retired_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred)
{
	DEVICE_CALL(S_REMAPPED, device, g);
	if (!corrRows || !uncRows || !isPending || !failureOccurred)
		return NVML_ERROR_INVALID_ARGUMENT;
	*corrRows = g->remap_corrected;
	*uncRows = g->remap_uncorrected;
	*isPending = g->remap_pending;
	*failureOccurred = g->remap_failed;
	return NVML_SUCCESS;
}

#define UINT_GETTER(fn, sym, member)                                   \
	nvmlReturn_t fn(nvmlDevice_t device, unsigned int *out)        \
	{                                                              \
		DEVICE_CALL(sym, device, g);                           \
		if (!out)                                              \
			return NVML_ERROR_INVALID_ARGUMENT;            \
		*out = g->member;                                      \
		return NVML_SUCCESS;                                   \
	}

UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, S_PCIE_GEN, pcie_gen)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, S_PCIE_WIDTH, pcie_width)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, S_PCIE_GEN_MAX, pcie_gen_max)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, S_PCIE_WIDTH_MAX, pcie_width_max)
UINT_GETTER(nvmlDeviceGetPcieReplayCounter, S_PCIE_REPLAY, pcie_replays)
UINT_GETTER(nvmlDeviceGetPowerUsage, S_POWER, power_mw)
UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, S_POWER_LIMIT, power_limit_mw)
UINT_GETTER(nvmlDeviceGetPowerManagementDefaultLimit, S_POWER_DEFAULT, power_default_limit_mw)
UINT_GETTER(nvmlDeviceGetMinorNumber, S_MINOR, minor)

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	DEVICE_CALL(S_UTILIZATION, device, g);
	if (!utilization)
		return NVML_ERROR_INVALID_ARGUMENT;
	utilization->gpu = g->utilization_gpu;
	utilization->memory = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState)
{
	DEVICE_CALL(S_PSTATE, device, g);
	if (!pState)
		return NVML_ERROR_INVALID_ARGUMENT;
	*pState = (nvmlPstates_t)g->pstate;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	DEVICE_CALL(S_MEMORY, device, g);
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = (unsigned long long)g->memory_total_mib << 20;
	memory->used = (unsigned long long)g->memory_used_mib << 20;
	memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
	return NVML_SUCCESS;
}

/* As NVML: a list too short for them all answers INSUFFICIENT_SIZE with the count. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
	DEVICE_CALL(S_PROCESSES, device, g);
	if (!infoCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (*infoCount < g->n_processes) {
		*infoCount = g->n_processes;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (g->n_processes && !infos)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < g->n_processes; i++)
		infos[i] = (nvmlProcessInfo_t){.pid = g->process[i], .usedGpuMemory = 0};
	*infoCount = g->n_processes;
	return NVML_SUCCESS;
}

#ifndef NG_SYNTH_OLD
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
	DEVICE_CALL(S_CLOCK_EVENT, device, g);
	if (!clocksEventReasons)
		return NVML_ERROR_INVALID_ARGUMENT;
	*clocksEventReasons = g->clock_reasons;
	return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *clocksThrottleReasons)
{
	DEVICE_CALL(S_CLOCK_THROTTLE, device, g);
	if (!clocksThrottleReasons)
		return NVML_ERROR_INVALID_ARGUMENT;
	*clocksThrottleReasons = g->clock_reasons;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)
{
	DEVICE_CALL(S_TEMPERATURE, device, g);
	if (!temp || sensorType != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*temp = g->temperature_c;
	return NVML_SUCCESS;
}

/* Graphics and SM clocks are the scenario's SM clock; memory and video
 * clocks are an H100's. */
static nvmlReturn_t clock_of(const struct nvmlDevice_st *g, nvmlClockType_t type, bool max, unsigned int *clock)
{
	if (!clock)
		return NVML_ERROR_INVALID_ARGUMENT;
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
	case NVML_CLOCK_SM:
		*clock = max ? g->sm_clock_max_mhz : g->sm_clock_mhz;
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*clock = 2619;
		return NVML_SUCCESS;
	case NVML_CLOCK_VIDEO:
		*clock = max ? 1545 : 765;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	DEVICE_CALL(S_CLOCK, device, g);
	return clock_of(g, type, false, clock);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	DEVICE_CALL(S_CLOCK_MAX, device, g);
	return clock_of(g, type, true, clock);
}

/* The application clock: the SM clock a job is run at unless it asks
 * otherwise; the other domains as their current ones. */
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t type,
                                            unsigned int *clock)
{
	DEVICE_CALL(S_APP_CLOCK, device, g);
	if (clock && type == NVML_CLOCK_SM) {
		*clock = g->app_sm_clock_mhz;
		return NVML_SUCCESS;
	}
	return clock_of(g, type, false, clock);
}

/* No links: NOT_SUPPORTED. A link past the last: INVALID_ARGUMENT. */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
	DEVICE_CALL(S_NVLINK_STATE, device, g);
	if (g->n_links == 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (!isActive || link >= g->n_links)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isActive = g->link[link].active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                             nvmlNvLinkErrorCounter_t counter, unsigned long long *counterValue)
{
	DEVICE_CALL(S_NVLINK_ERRORS, device, g);
	if (g->n_links == 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (!counterValue || link >= g->n_links)
		return NVML_ERROR_INVALID_ARGUMENT;
	const struct synth_link *l = &g->link[link];
	switch (counter) {
	case NVML_NVLINK_ERROR_DL_REPLAY:
		*counterValue = l->replay;
		return NVML_SUCCESS;
	case NVML_NVLINK_ERROR_DL_RECOVERY:
		*counterValue = l->recovery;
		return NVML_SUCCESS;
	case NVML_NVLINK_ERROR_DL_CRC_FLIT:
		*counterValue = l->crc;
		return NVML_SUCCESS;
	case NVML_NVLINK_ERROR_DL_CRC_DATA:
	case NVML_NVLINK_ERROR_DL_ECC_DATA:
		*counterValue = 0;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}
#endif /* NG_SYNTH_MINIMAL */
