/* The counters of ng_gpu_state (core/gpu.h) as one list, so the code that
 * fills, writes and reads them (collect/nvml.c, core/gpu_json.c) names each
 * once and none is forgotten. X(member) for each ng_gpu_field member, in the
 * order of the struct. */
#ifndef NODEGATE_CORE_GPU_FIELDS_H
#define NODEGATE_CORE_GPU_FIELDS_H

#define NG_GPU_FIELDS(X)                                                          \
	X(ecc_volatile_uncorrected) X(ecc_aggregate_uncorrected)                  \
	X(ecc_volatile_corrected) X(ecc_aggregate_corrected)                      \
	X(retired_pages_sbe) X(retired_pages_dbe) X(retired_pending)              \
	X(remap_corrected) X(remap_uncorrected) X(remap_pending) X(remap_failed)  \
	X(pcie_gen) X(pcie_gen_max) X(pcie_width) X(pcie_width_max) X(pcie_replays) \
	X(clock_reasons)                                                          \
	X(temperature_c) X(sm_clock_mhz) X(sm_clock_max_mhz) X(power_mw) X(minor) \
	X(utilization_gpu) X(pstate) X(processes) X(memory_used_mib) X(memory_total_mib) \
	X(power_limit_mw) X(power_default_limit_mw) X(app_sm_clock_mhz)

/* The counters of ng_nvlink_state, likewise. */
#define NG_NVLINK_FIELDS(X) X(active) X(replay_errors) X(recovery_errors) X(crc_errors)

#endif
