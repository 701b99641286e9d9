/* Synthetic GPUs: a stand-in for libnvidia-ml.so.1 that answers the NVML
 * calls nodegate makes from a scenario file ($NODEGATE_SYNTH_GPUS), so every
 * fault a GPU node can show (and every way NVML itself can fail) runs on a
 * machine without a GPU. The format is docs/synthetic-gpus.md.
 *
 * Built four times from this file and nvml_synth_scenario.c:
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
#include "synth/nvml_synth.h"

static struct scenario *scn; /* while initialized */
static unsigned init_count;

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
	scn = ng_synth_scenario_load();
	if (!scn)
		return NVML_ERROR_UNKNOWN;
	nvmlReturn_t rc = scn->init_error ? (nvmlReturn_t)scn->init_error : enter(sym, NULL);
	if (rc != NVML_SUCCESS) {
		ng_synth_scenario_free(scn);
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
		ng_synth_scenario_free(scn);
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

/* The status planted for the pair on either GPU, or -1. */
static int planted_p2p(const struct nvmlDevice_st *a, const struct nvmlDevice_st *b)
{
	for (unsigned i = 0; i < a->n_p2p; i++)
		if (a->p2p_peer[i] == b->index)
			return (int)a->p2p_status[i];
	for (unsigned i = 0; i < b->n_p2p; i++)
		if (b->p2p_peer[i] == a->index)
			return (int)b->p2p_status[i];
	return -1;
}

static bool any_active_link(const struct nvmlDevice_st *g)
{
	for (unsigned i = 0; i < g->n_links; i++)
		if (g->link[i].active)
			return true;
	return false;
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus)
{
	DEVICE_CALL(S_P2P, device1, a);
	struct nvmlDevice_st *b = gpu_of(device2);
	if (!b || !p2pStatus || (unsigned)p2pIndex > NVML_P2P_CAPS_INDEX_PCI)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t rb = enter(S_P2P, b);
	if (rb != NVML_SUCCESS)
		return rb;
	int planted = planted_p2p(a, b);
	if (p2pIndex == NVML_P2P_CAPS_INDEX_NVLINK && planted < 0)
		*p2pStatus = any_active_link(a) && any_active_link(b) ? NVML_P2P_STATUS_OK
		                                                       : NVML_P2P_STATUS_NOT_SUPPORTED;
	else
		*p2pStatus = planted < 0 ? NVML_P2P_STATUS_OK : (nvmlGpuP2PStatus_t)planted;
	return NVML_SUCCESS;
}
#endif /* NG_SYNTH_MINIMAL */
