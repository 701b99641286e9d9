/* The synthetic NVML library's parts (nvml_synth.c answers the calls,
 * nvml_synth_scenario.c reads the scenario file): the NVML names it
 * implements, the errors and return codes a scenario can name, and the GPUs
 * and scenario it answers from. */
#ifndef NODEGATE_SYNTH_NVML_SYNTH_H
#define NODEGATE_SYNTH_NVML_SYNTH_H

#include <cjson/cJSON.h>

#include "core/json_path.h"
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
	X(NVLINK_ERRORS, "nvmlDeviceGetNvLinkErrorCounter")            \
	X(P2P, "nvmlDeviceGetP2PStatus")

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
	{"p2p", BIT(S_P2P)},
};

/* The peer-access answers a scenario can plant ("p2p": {"3":
 * "disabled_by_regkey"}), as NVML's nvmlGpuP2PStatus_t. */
static const char *const p2p_status_names[] = {
	"ok", "chipset_not_supported", "gpu_not_supported", "ioh_topology_not_supported",
	"disabled_by_regkey", "not_supported", "unknown",
};
#define SYNTH_P2P_MAX 16 /* planted peers per GPU */

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
	/* Peers whose access to or from this GPU is not ok, and what it is
	 * (every other pair: ok, NVLink only when both GPUs have an active link). */
	unsigned n_p2p, p2p_peer[SYNTH_P2P_MAX], p2p_status[SYNTH_P2P_MAX];
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


/* Reads $NODEGATE_SYNTH_GPUS; NULL (one line said on stderr) when it cannot
 * be used. */
struct scenario *ng_synth_scenario_load(void);
void ng_synth_scenario_free(struct scenario *s);

#endif
