/* The part of NVML's C ABI nodegate uses, declared here from the facts in
 * the NVML reference (no NVIDIA header is needed to build): return codes,
 * the handful of enums, nvmlPciInfo_t (the _v3 layout) and the prototypes
 * of every function collect/nvml.c resolves by name.
 *
 * Two users: collect/nvml.c, which never calls these names directly (it
 * takes their types for the pointers dlsym gives it), and the synthetic
 * library (synth/nvml_synth.c), which defines them. Both reading one set of
 * declarations keeps the two sides of the ABI in step. */
#ifndef NODEGATE_COLLECT_NVML_ABI_H
#define NODEGATE_COLLECT_NVML_ABI_H

/* nvmlReturn_t: value, name (without NVML_ERROR_), the header's text. */
#define NG_NVML_RETURNS(X)                                                                          \
	X(0, SUCCESS, "the operation was successful")                                               \
	X(1, UNINITIALIZED, "NVML was not first initialized with nvmlInit")                         \
	X(2, INVALID_ARGUMENT, "a supplied argument is invalid")                                    \
	X(3, NOT_SUPPORTED, "the requested operation is not available on the target device")       \
	X(4, NO_PERMISSION, "the current user does not have permission for the operation")         \
	X(5, ALREADY_INITIALIZED, "NVML was already initialized")                                   \
	X(6, NOT_FOUND, "a query to find an object was unsuccessful")                               \
	X(7, INSUFFICIENT_SIZE, "an input argument is not large enough")                            \
	X(8, INSUFFICIENT_POWER, "a device's external power cables are not properly attached")     \
	X(9, DRIVER_NOT_LOADED, "the NVIDIA driver is not loaded")                                  \
	X(10, TIMEOUT, "a user provided timeout passed")                                            \
	X(11, IRQ_ISSUE, "the NVIDIA kernel driver detected an interrupt issue with a GPU")         \
	X(12, LIBRARY_NOT_FOUND, "the NVML shared library could not be found or loaded")           \
	X(13, FUNCTION_NOT_FOUND, "the local version of NVML does not implement this function")    \
	X(14, CORRUPTED_INFOROM, "the infoROM is corrupted")                                        \
	X(15, GPU_IS_LOST, "the GPU has fallen off the bus or has otherwise become inaccessible")   \
	X(16, RESET_REQUIRED, "the GPU requires a reset before it can be used again")               \
	X(17, OPERATING_SYSTEM, "the GPU control device has been blocked by the operating system or cgroups") \
	X(18, LIB_RM_VERSION_MISMATCH, "the driver and libnvidia-ml versions do not match")         \
	X(19, IN_USE, "the GPU is currently in use")                                                \
	X(20, MEMORY, "insufficient memory")                                                        \
	X(21, NO_DATA, "no data")                                                                   \
	X(22, VGPU_ECC_NOT_SUPPORTED, "the vGPU operation is not available because ECC is enabled") \
	X(23, INSUFFICIENT_RESOURCES, "ran out of critical resources, other than memory")           \
	X(24, FREQ_NOT_SUPPORTED, "the frequency is not supported")                                 \
	X(25, ARGUMENT_VERSION_MISMATCH, "the provided version is invalid or unsupported")          \
	X(26, DEPRECATED, "the requested functionality has been deprecated")                        \
	X(27, NOT_READY, "the system is not ready for the request")                                 \
	X(28, GPU_NOT_FOUND, "no GPUs were found")                                                  \
	X(29, INVALID_STATE, "the resource is not in the state the operation needs")                \
	X(30, RESET_TYPE_NOT_SUPPORTED, "the reset type is not supported for the device")           \
	X(999, UNKNOWN, "an internal driver error occurred")

typedef enum nvmlReturn_enum {
#define NG_NVML_RETURN_ENUM(v, name, text) NVML_ERROR_##name = v,
	NG_NVML_RETURNS(NG_NVML_RETURN_ENUM)
#undef NG_NVML_RETURN_ENUM
} nvmlReturn_t;
#define NVML_SUCCESS NVML_ERROR_SUCCESS

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef enum nvmlEnableState_enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

typedef enum nvmlMemoryErrorType_enum {
	NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
	NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 } nvmlEccCounterType_t;

typedef enum nvmlPageRetirementCause_enum {
	NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
	NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
} nvmlPageRetirementCause_t;

typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum nvmlNvLinkErrorCounter_enum {
	NVML_NVLINK_ERROR_DL_REPLAY = 0,
	NVML_NVLINK_ERROR_DL_RECOVERY = 1,
	NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
	NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
	NVML_NVLINK_ERROR_DL_ECC_DATA = 4,
} nvmlNvLinkErrorCounter_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80

/* The layout nvmlDeviceGetPciInfo_v3 fills (never pass it to an older symbol). */
typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* "%04X:%02X:%02X.0" */
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;    /* device id << 16 | vendor id */
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

_Static_assert(sizeof(nvmlReturn_t) == 4, "nvmlReturn_t is a 4-byte enum");
_Static_assert(sizeof(nvmlEnableState_t) == 4, "nvmlEnableState_t is a 4-byte enum");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t (v3) is 68 bytes");
_Static_assert(_Alignof(nvmlPciInfo_t) == 4, "nvmlPciInfo_t is 4-byte aligned");
_Static_assert(__builtin_offsetof(nvmlPciInfo_t, domain) == 16, "nvmlPciInfo_t.domain at 16");
_Static_assert(__builtin_offsetof(nvmlPciInfo_t, pciSubSystemId) == 32, "nvmlPciInfo_t.pciSubSystemId at 32");
_Static_assert(__builtin_offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t.busId at 36");

/* Init and system. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length);

/* Enumeration and identity. */
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);

/* Memory errors. */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts);
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int *pageCount, unsigned long long *addresses);
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t *isPending);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred);

/* PCIe. */
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth);
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value);

/* Clocks, thermal, power. */
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *clocksThrottleReasons);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *defaultLimit);
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                            unsigned int *clockMHz);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber);

/* Whether a GPU is idle, and what a job left behind. */
typedef struct nvmlUtilization_st {
	unsigned int gpu, memory; /* percent of the last sample period */
} nvmlUtilization_t;
typedef enum nvmlPStates_enum { NVML_PSTATE_0 = 0, NVML_PSTATE_15 = 15, NVML_PSTATE_UNKNOWN = 32 } nvmlPstates_t;
typedef struct nvmlMemory_st {
	unsigned long long total, free, used; /* bytes */
} nvmlMemory_t;
typedef struct nvmlProcessInfo_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos);

/* NVLink. */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive);
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                             nvmlNvLinkErrorCounter_t counter, unsigned long long *counterValue);

/* Peer access between two GPUs (the P2P matrix nvidia-smi topo -p2p shows). */
typedef enum nvmlGpuP2PStatus_enum {
	NVML_P2P_STATUS_OK = 0,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
	NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
	NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
	NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
	NVML_P2P_STATUS_NOT_SUPPORTED = 5,
	NVML_P2P_STATUS_UNKNOWN = 6,
} nvmlGpuP2PStatus_t;
typedef enum nvmlGpuP2PCapsIndex_enum {
	NVML_P2P_CAPS_INDEX_READ = 0,
	NVML_P2P_CAPS_INDEX_WRITE = 1,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
	NVML_P2P_CAPS_INDEX_ATOMICS = 3,
	NVML_P2P_CAPS_INDEX_PCI = 4,
} nvmlGpuP2PCapsIndex_t;
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus);

#endif
