/* NVML through dlopen: the node's GPUs as a snapshot (core/gpu.h).
 *
 * The library is opened with RTLD_NOW | RTLD_LOCAL and every function is
 * resolved by the name the NVML header maps its API to (nvmlInit_v2,
 * nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
 * nvmlDeviceGetPciInfo_v3), with a fallback to the older name where the
 * older one has the same prototype and meaning (nvmlInit, nvmlDeviceGetCount,
 * nvmlDeviceGetHandleByIndex, nvmlDeviceGetCurrentClocksThrottleReasons).
 * nvmlDeviceGetPciInfo without a suffix fills a smaller, older struct and is
 * never called.
 *
 * What a failure becomes:
 *   no library, a missing required function (init, count, handle, UUID, PCI
 *   info, shutdown), a failed init or count
 *                       nvml FAILED with the reason; no GPUs
 *   a missing optional function
 *                       its fields FAILED with FUNCTION_NOT_FOUND, and
 *                       nvml_error (nvml still OK) names the function
 *   NOT_SUPPORTED       the field NOT_SUPPORTED (not applicable)
 *   GPU_IS_LOST         gpu.lost, nothing more is asked of that GPU, and its
 *                       unread fields FAILED with GPU_IS_LOST
 *   any other error     that field FAILED with the code
 * gpu.error says why a GPU could not be read or identified (no handle, lost,
 * no UUID, no PCI address); a field's own failure is its nvml_return.
 *
 * Prints nothing and decides nothing. A call that never returns blocks
 * this function: callers that need a deadline run it in a child process. */
#include "collect/nvml.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/nvml_abi.h"
#include "core/gpu_fields.h"

#define DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define SYNTH_PREFIX "libnodegate-nvml-synth"

/* A pointer to the function NVML declares under this name. */
#define FN(name) __typeof__(name) *

struct nvml {
	void *lib;
	const char *path;
	/* required */
	FN(nvmlInit_v2) init;
	FN(nvmlDeviceGetCount_v2) count;
	FN(nvmlDeviceGetHandleByIndex_v2) handle;
	FN(nvmlDeviceGetUUID) uuid;
	FN(nvmlDeviceGetPciInfo_v3) pci;
	FN(nvmlShutdown) shutdown;
	const char *init_name, *count_name, *handle_name, *clock_reasons_name;
	/* optional */
	FN(nvmlErrorString) error_string;
	FN(nvmlSystemGetDriverVersion) driver;
	FN(nvmlSystemGetNVMLVersion) nvml_version;
	FN(nvmlDeviceGetName) name;
	FN(nvmlDeviceGetTotalEccErrors) ecc;
	FN(nvmlDeviceGetRetiredPages) retired;
	FN(nvmlDeviceGetRetiredPagesPendingStatus) retired_pending;
	FN(nvmlDeviceGetRemappedRows) remapped;
	FN(nvmlDeviceGetCurrPcieLinkGeneration) pcie_gen;
	FN(nvmlDeviceGetCurrPcieLinkWidth) pcie_width;
	FN(nvmlDeviceGetMaxPcieLinkGeneration) pcie_gen_max;
	FN(nvmlDeviceGetMaxPcieLinkWidth) pcie_width_max;
	FN(nvmlDeviceGetPcieReplayCounter) pcie_replays;
	FN(nvmlDeviceGetCurrentClocksEventReasons) clock_reasons;
	FN(nvmlDeviceGetTemperature) temperature;
	FN(nvmlDeviceGetClockInfo) clock;
	FN(nvmlDeviceGetMaxClockInfo) clock_max;
	FN(nvmlDeviceGetPowerUsage) power;
	FN(nvmlDeviceGetEnforcedPowerLimit) power_limit;
	FN(nvmlDeviceGetPowerManagementDefaultLimit) power_default;
	FN(nvmlDeviceGetApplicationsClock) app_clock;
	FN(nvmlDeviceGetMinorNumber) minor;
	FN(nvmlDeviceGetUtilizationRates) utilization;
	FN(nvmlDeviceGetPerformanceState) pstate;
	FN(nvmlDeviceGetMemoryInfo) memory;
	FN(nvmlDeviceGetComputeRunningProcesses_v3) processes;
	FN(nvmlDeviceGetNvLinkState) nvlink_state;
	FN(nvmlDeviceGetNvLinkErrorCounter) nvlink_errors;
};

/* The same function types under the older names, checked here so the
 * fallbacks stay sound. */
_Static_assert(__builtin_types_compatible_p(FN(nvmlInit), FN(nvmlInit_v2)), "nvmlInit");
_Static_assert(__builtin_types_compatible_p(FN(nvmlDeviceGetCount), FN(nvmlDeviceGetCount_v2)), "count");
_Static_assert(__builtin_types_compatible_p(FN(nvmlDeviceGetHandleByIndex), FN(nvmlDeviceGetHandleByIndex_v2)),
               "handle");
_Static_assert(__builtin_types_compatible_p(FN(nvmlDeviceGetCurrentClocksThrottleReasons),
                                            FN(nvmlDeviceGetCurrentClocksEventReasons)),
               "clock reasons");

/* ---- return codes -------------------------------------------------------------- */

static const struct {
	int code;
	const char *symbol; /* "GPU_IS_LOST" */
	const char *name;   /* "GPU_IS_LOST (the GPU has fallen off the bus ...)" */
} returns[] = {
#define RETURN_ROW(v, sym, text) {v, #sym, #sym " (" text ")"},
	NG_NVML_RETURNS(RETURN_ROW)
#undef RETURN_ROW
};

const char *ng_nvml_return_name(int rc)
{
	for (size_t i = 0; i < sizeof returns / sizeof *returns; i++)
		if (returns[i].code == rc)
			return returns[i].name;
	return "a return code this build of nodegate does not know (a newer driver's)";
}

/* "nvmlInit_v2 failed: DRIVER_NOT_LOADED (the NVIDIA driver is not loaded)";
 * for a code outside the table, the library's own text. */
static void describe(const struct nvml *n, nvmlReturn_t rc, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof returns / sizeof *returns; i++)
		if (returns[i].code == (int)rc) {
			snprintf(buf, size, "%s", returns[i].name);
			return;
		}
	const char *lib = n->error_string ? n->error_string(rc) : NULL;
	snprintf(buf, size, "return code %d (%.80s)", (int)rc, lib ? lib : "not in NVML's table as nodegate knows it");
}

static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 3 >= size)
		return;
	if (len) {
		memcpy(buf + len, "; ", 3);
		len += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* ---- the library --------------------------------------------------------------- */

static void *sym(const struct nvml *n, const char *name)
{
	(void)dlerror();
	return dlsym(n->lib, name);
}

/* Resolves name into *slot; 0 when the library lacks it. */
#define RESOLVE(slot, name) ((n->slot = (__typeof__(n->slot))sym(n, name)) != NULL)

static void nvml_failed(ng_gpu_snapshot *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nvml_failed(ng_gpu_snapshot *out, const char *fmt, ...)
{
	out->nvml = NG_FIELD_FAILED;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->nvml_error, sizeof out->nvml_error, fmt, ap);
	va_end(ap);
	out->n_gpus = 0;
}

/* The required functions, then the optional ones (a missing one is noted in
 * nvml_error). False when a required one is missing (out says which). */
static bool resolve(struct nvml *n, ng_gpu_snapshot *out)
{
	const char *missing = NULL;
	n->init_name = "nvmlInit_v2";
	if (!RESOLVE(init, n->init_name)) {
		n->init_name = "nvmlInit";
		if (!RESOLVE(init, n->init_name))
			missing = "nvmlInit_v2 (and nvmlInit)";
	}
	n->count_name = "nvmlDeviceGetCount_v2";
	if (!missing && !RESOLVE(count, n->count_name)) {
		n->count_name = "nvmlDeviceGetCount";
		if (!RESOLVE(count, n->count_name))
			missing = "nvmlDeviceGetCount_v2 (and nvmlDeviceGetCount)";
	}
	n->handle_name = "nvmlDeviceGetHandleByIndex_v2";
	if (!missing && !RESOLVE(handle, n->handle_name)) {
		n->handle_name = "nvmlDeviceGetHandleByIndex";
		if (!RESOLVE(handle, n->handle_name))
			missing = "nvmlDeviceGetHandleByIndex_v2 (and nvmlDeviceGetHandleByIndex)";
	}
	if (!missing && !RESOLVE(uuid, "nvmlDeviceGetUUID"))
		missing = "nvmlDeviceGetUUID";
	if (!missing && !RESOLVE(pci, "nvmlDeviceGetPciInfo_v3"))
		missing = "nvmlDeviceGetPciInfo_v3";
	if (!missing && !RESOLVE(shutdown, "nvmlShutdown"))
		missing = "nvmlShutdown";
	if (missing) {
		nvml_failed(out, "libnvidia-ml lacks %s (loaded from %.120s): not an NVML library nodegate can use",
		            missing, n->path);
		return false;
	}

	const char *lacks[32];
	size_t n_lacks = 0;
#define OPTIONAL(slot, name)                            \
	do {                                            \
		if (!RESOLVE(slot, name))               \
			lacks[n_lacks++] = name;        \
	} while (0)
	OPTIONAL(error_string, "nvmlErrorString");
	OPTIONAL(driver, "nvmlSystemGetDriverVersion");
	OPTIONAL(nvml_version, "nvmlSystemGetNVMLVersion");
	OPTIONAL(name, "nvmlDeviceGetName");
	OPTIONAL(ecc, "nvmlDeviceGetTotalEccErrors");
	OPTIONAL(retired, "nvmlDeviceGetRetiredPages");
	OPTIONAL(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
	OPTIONAL(remapped, "nvmlDeviceGetRemappedRows");
	OPTIONAL(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
	OPTIONAL(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
	OPTIONAL(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
	OPTIONAL(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
	OPTIONAL(pcie_replays, "nvmlDeviceGetPcieReplayCounter");
	OPTIONAL(temperature, "nvmlDeviceGetTemperature");
	OPTIONAL(clock, "nvmlDeviceGetClockInfo");
	OPTIONAL(clock_max, "nvmlDeviceGetMaxClockInfo");
	OPTIONAL(power, "nvmlDeviceGetPowerUsage");
	OPTIONAL(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
	OPTIONAL(power_default, "nvmlDeviceGetPowerManagementDefaultLimit");
	OPTIONAL(app_clock, "nvmlDeviceGetApplicationsClock");
	OPTIONAL(minor, "nvmlDeviceGetMinorNumber");
	OPTIONAL(utilization, "nvmlDeviceGetUtilizationRates");
	OPTIONAL(pstate, "nvmlDeviceGetPerformanceState");
	OPTIONAL(memory, "nvmlDeviceGetMemoryInfo");
	OPTIONAL(processes, "nvmlDeviceGetComputeRunningProcesses_v3");
	OPTIONAL(nvlink_state, "nvmlDeviceGetNvLinkState");
	OPTIONAL(nvlink_errors, "nvmlDeviceGetNvLinkErrorCounter");
#undef OPTIONAL
	n->clock_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
	if (!RESOLVE(clock_reasons, n->clock_reasons_name)) {
		n->clock_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
		if (!RESOLVE(clock_reasons, n->clock_reasons_name))
			lacks[n_lacks++] = "nvmlDeviceGetCurrentClocksEventReasons (and ...ThrottleReasons)";
	}
	if (n_lacks == 0)
		return true;
	/* "libnvidia-ml lacks 3 optional functions (their fields read as
	 * failed): a, b and 1 more": as many names as fit */
	char *msg = out->nvml_error;
	size_t size = sizeof out->nvml_error, len, shown = 0;
	len = (size_t)snprintf(msg, size, "libnvidia-ml lacks %zu optional function%s (their fields read as failed): ",
	                       n_lacks, n_lacks == 1 ? "" : "s");
	for (; shown < n_lacks; shown++) {
		size_t need = strlen(lacks[shown]) + 2 + (shown + 1 < n_lacks ? sizeof " and 99 more" : 0);
		if (len + need >= size)
			break;
		len += (size_t)snprintf(msg + len, size - len, "%s%s", shown ? ", " : "", lacks[shown]);
	}
	if (shown < n_lacks)
		snprintf(msg + len, size - len, " and %zu more", n_lacks - shown);
	return true;
}

/* ---- one GPU ------------------------------------------------------------------- */

struct gpu_reader {
	const struct nvml *n;
	ng_gpu_state *g;
	nvmlDevice_t dev;
};

/* The GPU fell off the bus during call: nothing more is asked of it. */
static void gpu_lost(struct gpu_reader *r, const char *call)
{
	r->g->lost = true;
	append(r->g->error, sizeof r->g->error, "GPU is lost: %s returned GPU_IS_LOST", call);
}

/* Records a call's answer in f. False when the GPU is lost (stop). */
static bool settle(struct gpu_reader *r, ng_gpu_field *f, nvmlReturn_t rc, uint64_t value, const char *call)
{
	f->value = 0;
	f->nvml_return = (int)rc;
	switch (rc) {
	case NVML_SUCCESS:
		f->state = NG_FIELD_OK;
		f->value = value;
		return true;
	case NVML_ERROR_NOT_SUPPORTED:
		f->state = NG_FIELD_NOT_SUPPORTED;
		return true;
	case NVML_ERROR_GPU_IS_LOST:
		f->state = NG_FIELD_FAILED;
		gpu_lost(r, call);
		return false;
	default:
		f->state = NG_FIELD_FAILED;
		return true;
	}
}

static bool absent(ng_gpu_field *f)
{
	f->state = NG_FIELD_FAILED;
	f->value = 0;
	f->nvml_return = NVML_ERROR_FUNCTION_NOT_FOUND;
	return true;
}

typedef FN(nvmlDeviceGetPowerUsage) uint_getter;
_Static_assert(__builtin_types_compatible_p(uint_getter, FN(nvmlDeviceGetCurrPcieLinkGeneration)), "getter");
_Static_assert(__builtin_types_compatible_p(uint_getter, FN(nvmlDeviceGetPcieReplayCounter)), "getter");
_Static_assert(__builtin_types_compatible_p(uint_getter, FN(nvmlDeviceGetMinorNumber)), "getter");
_Static_assert(__builtin_types_compatible_p(uint_getter, FN(nvmlDeviceGetEnforcedPowerLimit)), "getter");
_Static_assert(__builtin_types_compatible_p(uint_getter, FN(nvmlDeviceGetPowerManagementDefaultLimit)),
               "getter");

static bool read_uint(struct gpu_reader *r, ng_gpu_field *f, uint_getter fn, const char *call)
{
	if (!fn)
		return absent(f);
	unsigned int v = 0;
	nvmlReturn_t rc = fn(r->dev, &v);
	return settle(r, f, rc, v, call);
}

static bool read_ecc(struct gpu_reader *r, ng_gpu_field *f, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter)
{
	if (!r->n->ecc)
		return absent(f);
	unsigned long long v = 0;
	nvmlReturn_t rc = r->n->ecc(r->dev, type, counter, &v);
	return settle(r, f, rc, v, "nvmlDeviceGetTotalEccErrors");
}

/* The count only: *pageCount 0 asks for the size, and INSUFFICIENT_SIZE
 * means there are that many. */
static bool read_retired(struct gpu_reader *r, ng_gpu_field *f, nvmlPageRetirementCause_t cause)
{
	if (!r->n->retired)
		return absent(f);
	unsigned int count = 0;
	nvmlReturn_t rc = r->n->retired(r->dev, cause, &count, NULL);
	if (rc == NVML_ERROR_INSUFFICIENT_SIZE)
		rc = NVML_SUCCESS;
	return settle(r, f, rc, count, "nvmlDeviceGetRetiredPages");
}

static bool read_retired_pending(struct gpu_reader *r, ng_gpu_field *f)
{
	if (!r->n->retired_pending)
		return absent(f);
	nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
	nvmlReturn_t rc = r->n->retired_pending(r->dev, &pending);
	return settle(r, f, rc, pending == NVML_FEATURE_ENABLED, "nvmlDeviceGetRetiredPagesPendingStatus");
}

static bool read_remapped(struct gpu_reader *r)
{
	ng_gpu_state *g = r->g;
	if (!r->n->remapped)
		return absent(&g->remap_corrected) && absent(&g->remap_uncorrected) && absent(&g->remap_pending) &&
		       absent(&g->remap_failed);
	unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
	nvmlReturn_t rc = r->n->remapped(r->dev, &corr, &unc, &pending, &failed);
	const char *call = "nvmlDeviceGetRemappedRows";
	return settle(r, &g->remap_corrected, rc, corr, call) && settle(r, &g->remap_uncorrected, rc, unc, call) &&
	       settle(r, &g->remap_pending, rc, pending != 0, call) &&
	       settle(r, &g->remap_failed, rc, failed != 0, call);
}

static bool read_clock_reasons(struct gpu_reader *r)
{
	if (!r->n->clock_reasons)
		return absent(&r->g->clock_reasons);
	unsigned long long v = 0;
	nvmlReturn_t rc = r->n->clock_reasons(r->dev, &v);
	return settle(r, &r->g->clock_reasons, rc, v, r->n->clock_reasons_name);
}

static bool read_temperature(struct gpu_reader *r)
{
	if (!r->n->temperature)
		return absent(&r->g->temperature_c);
	unsigned int v = 0;
	nvmlReturn_t rc = r->n->temperature(r->dev, NVML_TEMPERATURE_GPU, &v);
	return settle(r, &r->g->temperature_c, rc, v, "nvmlDeviceGetTemperature");
}

/* Utilization, P-state, memory in use and compute processes: whether the
 * GPU is idle, and what a job left behind. */
static bool read_activity(struct gpu_reader *r)
{
	const struct nvml *n = r->n;
	ng_gpu_state *g = r->g;
	if (!n->utilization) {
		absent(&g->utilization_gpu);
	} else {
		/* The call first: the order a function's arguments are evaluated
		 * in is unspecified, and u.gpu must be read after it. */
		nvmlUtilization_t u = {0};
		nvmlReturn_t rc = n->utilization(r->dev, &u);
		if (!settle(r, &g->utilization_gpu, rc, u.gpu, "nvmlDeviceGetUtilizationRates"))
			return false;
	}
	if (!n->pstate) {
		absent(&g->pstate);
	} else {
		nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
		nvmlReturn_t rc = n->pstate(r->dev, &p);
		if (!settle(r, &g->pstate, rc, (uint64_t)p, "nvmlDeviceGetPerformanceState"))
			return false;
		if (g->pstate.state == NG_FIELD_OK && g->pstate.value > 15)
			g->pstate.state = NG_FIELD_NOT_SUPPORTED; /* NVML_PSTATE_UNKNOWN */
	}
	if (!n->memory) {
		absent(&g->memory_used_mib);
		absent(&g->memory_total_mib);
	} else {
		nvmlMemory_t m = {0};
		nvmlReturn_t rc = n->memory(r->dev, &m);
		if (!settle(r, &g->memory_used_mib, rc, m.used >> 20, "nvmlDeviceGetMemoryInfo") ||
		    !settle(r, &g->memory_total_mib, rc, m.total >> 20, "nvmlDeviceGetMemoryInfo"))
			return false;
	}
	if (!n->processes)
		return absent(&g->processes);
	nvmlProcessInfo_t p[64];
	unsigned int count = 64;
	nvmlReturn_t rc = n->processes(r->dev, &count, p);
	bool filled = rc == NVML_SUCCESS;
	if (rc == NVML_ERROR_INSUFFICIENT_SIZE)
		rc = NVML_SUCCESS; /* more than 64: count says how many, and none is named */
	if (!settle(r, &g->processes, rc, count, "nvmlDeviceGetComputeRunningProcesses_v3"))
		return false;
	for (unsigned int i = 0; filled && i < count && i < 64 && g->n_pids < 8; i++)
		g->pid[g->n_pids++] = p[i].pid;
	return true;
}

static bool read_sm_clock(struct gpu_reader *r, ng_gpu_field *f, FN(nvmlDeviceGetClockInfo) fn, const char *call)
{
	if (!fn)
		return absent(f);
	unsigned int v = 0;
	nvmlReturn_t rc = fn(r->dev, NVML_CLOCK_SM, &v);
	return settle(r, f, rc, v, call);
}
_Static_assert(__builtin_types_compatible_p(FN(nvmlDeviceGetClockInfo), FN(nvmlDeviceGetMaxClockInfo)), "clock");
_Static_assert(__builtin_types_compatible_p(FN(nvmlDeviceGetClockInfo), FN(nvmlDeviceGetApplicationsClock)),
               "clock");

static bool read_link_counter(struct gpu_reader *r, ng_gpu_field *f, unsigned int l, nvmlNvLinkErrorCounter_t c)
{
	if (!r->n->nvlink_errors)
		return absent(f);
	unsigned long long v = 0;
	nvmlReturn_t rc = r->n->nvlink_errors(r->dev, l, c, &v);
	return settle(r, f, rc, v, "nvmlDeviceGetNvLinkErrorCounter");
}

/* Links 0, 1, ... until the GPU says there is no such link (INVALID_ARGUMENT)
 * or no NVLink at all (NOT_SUPPORTED). A link whose state cannot be read
 * ends the walk too, recorded as FAILED, so the unknown is seen. Without
 * nvmlDeviceGetNvLinkState, one link with every field FAILED says the same. */
static bool read_nvlink(struct gpu_reader *r)
{
	ng_gpu_state *g = r->g;
	g->n_links = 0;
	if (!r->n->nvlink_state) {
		ng_nvlink_state *ls = &g->link[0];
		g->n_links = 1;
		return absent(&ls->active) && absent(&ls->replay_errors) && absent(&ls->recovery_errors) &&
		       absent(&ls->crc_errors);
	}
	for (unsigned int l = 0; l < NG_NVLINK_MAX; l++) {
		nvmlEnableState_t active = NVML_FEATURE_DISABLED;
		nvmlReturn_t rc = r->n->nvlink_state(r->dev, l, &active);
		if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_SUPPORTED)
			return true;
		ng_nvlink_state *ls = &g->link[l];
		g->n_links = l + 1;
		if (!settle(r, &ls->active, rc, active == NVML_FEATURE_ENABLED, "nvmlDeviceGetNvLinkState"))
			return false;
		if (rc != NVML_SUCCESS) {
			ls->replay_errors = ls->recovery_errors = ls->crc_errors = ls->active;
			return true;
		}
		if (!read_link_counter(r, &ls->replay_errors, l, NVML_NVLINK_ERROR_DL_REPLAY) ||
		    !read_link_counter(r, &ls->recovery_errors, l, NVML_NVLINK_ERROR_DL_RECOVERY) ||
		    !read_link_counter(r, &ls->crc_errors, l, NVML_NVLINK_ERROR_DL_CRC_FLIT))
			return false;
	}
	return true;
}

/* Every field not read yet becomes FAILED with rc (the GPU was lost, or
 * never had a handle). */
static void fail_if_unread(ng_gpu_field *f, int rc)
{
	if (f->state == NG_FIELD_UNREAD) {
		f->state = NG_FIELD_FAILED;
		f->value = 0;
		f->nvml_return = rc;
	}
}

static void fail_unread(ng_gpu_state *g, int rc)
{
#define FAIL_GPU_FIELD(m) fail_if_unread(&g->m, rc);
	NG_GPU_FIELDS(FAIL_GPU_FIELD)
#undef FAIL_GPU_FIELD
	for (size_t l = 0; l < g->n_links; l++) {
#define FAIL_LINK_FIELD(m) fail_if_unread(&g->link[l].m, rc);
		NG_NVLINK_FIELDS(FAIL_LINK_FIELD)
#undef FAIL_LINK_FIELD
	}
}

static void read_identity(struct gpu_reader *r, char *why, size_t why_size)
{
	const struct nvml *n = r->n;
	ng_gpu_state *g = r->g;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
	nvmlReturn_t rc = n->uuid(r->dev, uuid, sizeof uuid);
	if (rc == NVML_SUCCESS) {
		uuid[sizeof uuid - 1] = '\0';
		snprintf(g->uuid, sizeof g->uuid, "%s", uuid);
	} else if (rc == NVML_ERROR_GPU_IS_LOST) {
		gpu_lost(r, "nvmlDeviceGetUUID");
		return;
	} else {
		describe(n, rc, why, why_size);
		append(g->error, sizeof g->error, "no UUID: nvmlDeviceGetUUID: %.100s", why);
	}

	if (n->name) {
		char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
		rc = n->name(r->dev, name, sizeof name);
		if (rc == NVML_SUCCESS) {
			name[sizeof name - 1] = '\0';
			snprintf(g->name, sizeof g->name, "%s", name);
		} else if (rc == NVML_ERROR_GPU_IS_LOST) {
			gpu_lost(r, "nvmlDeviceGetName");
			return;
		}
	}

	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof pci);
	rc = n->pci(r->dev, &pci);
	if (rc == NVML_ERROR_GPU_IS_LOST) {
		gpu_lost(r, "nvmlDeviceGetPciInfo_v3");
		return;
	}
	if (rc != NVML_SUCCESS) {
		describe(n, rc, why, why_size);
		append(g->error, sizeof g->error, "no PCI address: nvmlDeviceGetPciInfo_v3: %.100s", why);
		return;
	}
	pci.busId[sizeof pci.busId - 1] = '\0';
	pci.busIdLegacy[sizeof pci.busIdLegacy - 1] = '\0';
	if (ng_gpu_bus_normalize(pci.busId, g->bus) == 0 || ng_gpu_bus_normalize(pci.busIdLegacy, g->bus) == 0)
		return;
	if (pci.bus <= 0xff && pci.device <= 0x1f && pci.domain <= 0xffff) {
		snprintf(g->bus, sizeof g->bus, "%04x:%02x:%02x", pci.domain, pci.bus, pci.device);
		return;
	}
	g->bus[0] = '\0';
	append(g->error, sizeof g->error, "no PCI address: NVML gave busId \"%.32s\"", pci.busId);
}

/* Whether a GPU of this minor is wanted (every one, without a filter). */
static bool minor_wanted(const ng_nvml_opts *o, const ng_gpu_field *minor)
{
	if (!o || !o->minors || minor->state != NG_FIELD_OK)
		return true;
	for (size_t i = 0; i < o->n_minors; i++)
		if (o->minors[i] >= 0 && (uint64_t)o->minors[i] == minor->value)
			return true;
	return false;
}

/* false: read only as far as its identity, and not the caller's. */
static bool read_gpu(const struct nvml *n, unsigned int idx, unsigned int count, ng_gpu_state *g,
                     const ng_nvml_opts *o)
{
	char why[160];
	memset(g, 0, sizeof *g);
	g->index = (int)idx;
	if (idx >= count) {
		snprintf(g->error, sizeof g->error, "no GPU at NVML index %u (NVML counts %u)", idx, count);
		fail_unread(g, NVML_ERROR_INVALID_ARGUMENT);
		return true;
	}
	struct gpu_reader r = {.n = n, .g = g, .dev = NULL};
	nvmlReturn_t rc = n->handle(idx, &r.dev);
	if (rc != NVML_SUCCESS) {
		if (rc == NVML_ERROR_GPU_IS_LOST) {
			gpu_lost(&r, n->handle_name);
		} else {
			describe(n, rc, why, sizeof why);
			snprintf(g->error, sizeof g->error, "%s(%u) failed: %.100s", n->handle_name, idx, why);
		}
		fail_unread(g, (int)rc);
		return true;
	}

	read_identity(&r, why, sizeof why);
	if (!g->lost)
		(void)read_uint(&r, &g->minor, n->minor, "nvmlDeviceGetMinorNumber");
	if (!g->lost && !minor_wanted(o, &g->minor))
		return false;
	if (o && o->identity_only)
		return true;
	bool alive = !g->lost &&
		read_ecc(&r, &g->ecc_volatile_uncorrected, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC) &&
		read_ecc(&r, &g->ecc_aggregate_uncorrected, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC) &&
		read_ecc(&r, &g->ecc_volatile_corrected, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC) &&
		read_ecc(&r, &g->ecc_aggregate_corrected, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC) &&
		read_retired(&r, &g->retired_pages_sbe, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS) &&
		read_retired(&r, &g->retired_pages_dbe, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR) &&
		read_retired_pending(&r, &g->retired_pending) &&
		read_remapped(&r) &&
		read_uint(&r, &g->pcie_gen, n->pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration") &&
		read_uint(&r, &g->pcie_gen_max, n->pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration") &&
		read_uint(&r, &g->pcie_width, n->pcie_width, "nvmlDeviceGetCurrPcieLinkWidth") &&
		read_uint(&r, &g->pcie_width_max, n->pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth") &&
		read_uint(&r, &g->pcie_replays, n->pcie_replays, "nvmlDeviceGetPcieReplayCounter") &&
		read_clock_reasons(&r) &&
		read_temperature(&r) &&
		read_sm_clock(&r, &g->sm_clock_mhz, n->clock, "nvmlDeviceGetClockInfo") &&
		read_sm_clock(&r, &g->sm_clock_max_mhz, n->clock_max, "nvmlDeviceGetMaxClockInfo") &&
		read_uint(&r, &g->power_mw, n->power, "nvmlDeviceGetPowerUsage") &&
		read_uint(&r, &g->power_limit_mw, n->power_limit, "nvmlDeviceGetEnforcedPowerLimit") &&
		read_uint(&r, &g->power_default_limit_mw, n->power_default,
		          "nvmlDeviceGetPowerManagementDefaultLimit") &&
		read_sm_clock(&r, &g->app_sm_clock_mhz, n->app_clock, "nvmlDeviceGetApplicationsClock") &&
		read_activity(&r) &&
		read_nvlink(&r);
	if (!alive)
		fail_unread(g, NVML_ERROR_GPU_IS_LOST);
	return true;
}

/* ---- the snapshot -------------------------------------------------------------- */

static int check_opts(const ng_nvml_opts *o, ng_err *err)
{
	if (!o || o->n_indexes == 0)
		return 0;
	if (!o->indexes)
		return ng_fail(err, "ng_nvml_snapshot: %zu GPU indexes asked for, but no list of them", o->n_indexes);
	if (o->n_indexes > NG_GPU_MAX)
		return ng_fail(err, "ng_nvml_snapshot: %zu GPU indexes asked for; a snapshot holds at most %d",
		               o->n_indexes, NG_GPU_MAX);
	for (size_t i = 0; i < o->n_indexes; i++) {
		if (o->indexes[i] < 0)
			return ng_fail(err, "ng_nvml_snapshot: GPU index %d is negative", o->indexes[i]);
		for (size_t j = 0; j < i; j++)
			if (o->indexes[j] == o->indexes[i])
				return ng_fail(err, "ng_nvml_snapshot: GPU index %d asked for twice", o->indexes[i]);
	}
	return 0;
}

static void read_version(const struct nvml *n, FN(nvmlSystemGetDriverVersion) fn, const char *call, char *out,
                         size_t size, ng_gpu_snapshot *s)
{
	if (!fn)
		return;
	char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
	nvmlReturn_t rc = fn(buf, sizeof buf);
	if (rc == NVML_SUCCESS) {
		buf[sizeof buf - 1] = '\0';
		snprintf(out, size, "%s", buf);
		return;
	}
	char why[160];
	describe(n, rc, why, sizeof why);
	append(s->nvml_error, sizeof s->nvml_error, "%s failed: %.100s", call, why);
}
_Static_assert(__builtin_types_compatible_p(FN(nvmlSystemGetDriverVersion), FN(nvmlSystemGetNVMLVersion)), "ver");

int ng_nvml_snapshot(const ng_nvml_opts *o, ng_gpu_snapshot *out, ng_err *err)
{
	if (!out)
		return ng_fail(err, "ng_nvml_snapshot: no snapshot to fill");
	ng_gpu_snapshot_clear(out);
	snprintf(out->source, sizeof out->source, "nvml");
	ng_err usage;
	if (check_opts(o, &usage) < 0) {
		nvml_failed(out, "%.250s", usage.msg);
		return ng_fail(err, "%s", usage.msg);
	}

	struct nvml n;
	memset(&n, 0, sizeof n);
	const char *env = getenv("NODEGATE_NVML_LIBRARY");
	n.path = o && o->lib_path && *o->lib_path ? o->lib_path : env && *env ? env : DEFAULT_LIBRARY;
	const char *base = strrchr(n.path, '/');
	base = base ? base + 1 : n.path;
	if (strncmp(base, SYNTH_PREFIX, strlen(SYNTH_PREFIX)) == 0)
		snprintf(out->source, sizeof out->source, "synthetic");

	(void)dlerror();
	n.lib = dlopen(n.path, RTLD_NOW | RTLD_LOCAL);
	if (!n.lib) {
		const char *why = dlerror();
		nvml_failed(out, "cannot load the NVML library %.100s (%.110s); without it no GPU can be read",
		            n.path, why ? why : "no reason given");
		return 0;
	}
	if (!resolve(&n, out)) {
		dlclose(n.lib);
		return 0;
	}

	char why[160];
	nvmlReturn_t rc = n.init();
	if (rc != NVML_SUCCESS) {
		describe(&n, rc, why, sizeof why);
		nvml_failed(out, "%s failed: %s", n.init_name, why);
		dlclose(n.lib);
		return 0;
	}
	read_version(&n, n.driver, "nvmlSystemGetDriverVersion", out->driver, sizeof out->driver, out);
	read_version(&n, n.nvml_version, "nvmlSystemGetNVMLVersion", out->nvml_version, sizeof out->nvml_version, out);

	unsigned int count = 0;
	rc = n.count(&count);
	if (rc != NVML_SUCCESS) {
		describe(&n, rc, why, sizeof why);
		nvml_failed(out, "%s failed: %s", n.count_name, why);
	} else {
		out->nvml = NG_FIELD_OK;
		out->n_listed = count;
		if (o && o->n_indexes) {
			for (size_t i = 0; i < o->n_indexes; i++)
				read_gpu(&n, (unsigned int)o->indexes[i], count, &out->gpu[i], NULL);
			out->n_gpus = o->n_indexes;
		} else {
			unsigned int n_read = count < NG_GPU_MAX ? count : NG_GPU_MAX;
			if (count > NG_GPU_MAX)
				append(out->nvml_error, sizeof out->nvml_error,
				       "NVML counts %u GPUs; the snapshot holds the first %d", count, NG_GPU_MAX);
			size_t kept = 0;
			for (unsigned int i = 0; i < n_read; i++)
				kept += read_gpu(&n, i, count, &out->gpu[kept], o);
			out->n_gpus = kept;
		}
	}
	(void)n.shutdown();
	dlclose(n.lib);
	return 0;
}
