/* A saved `nvidia-smi -q` (the text form) read into a GPU snapshot
 * (core/gpu.h), so a dump taken by hand, by a vendor or by an older tool can
 * be judged by the same rules as a live NVML read (judge/gpu_health.h).
 *
 * Reads every layout from driver 410 to 590: "Clocks Throttle Reasons" and
 * "Clocks Event Reasons"; the old ECC layout ("Single Bit"/"Double Bit"
 * totals) and the new one (SRAM/DRAM correctable and uncorrectable, summed);
 * retired pages; remapped rows as a block or a single "N/A"; the value column
 * wherever it sits. "N/A" (and "[Not Supported]", "Requested functionality
 * has been deprecated") is NOT_SUPPORTED, never 0; "[Unknown Error]",
 * "[GPU requires reset]", "ERR!", "GPU is lost" and any other unreadable value
 * is FAILED. A field the dump does not show stays UNREAD. NVLink state is not
 * in `-q`, so n_links is 0. Pure: text in, snapshot out. */
#ifndef NODEGATE_PARSE_NVIDIA_SMI_H
#define NODEGATE_PARSE_NVIDIA_SMI_H

#include <stddef.h>

#include "core/error.h"
#include "core/gpu.h"

/* Fills *out (source "nvidia-smi", GPUs in the order of the dump). 0 when
 * the text is an nvidia-smi -q dump, or nvidia-smi's own report that it could
 * not reach NVML or the driver (then out->nvml is FAILED, with its words in
 * nvml_error) or found no devices (no GPUs). -1 with err set when it is
 * neither, names one GPU twice, or holds more than NG_GPU_MAX; *out is then
 * an empty snapshot with nvml FAILED. text may hold NUL bytes. */
int ng_nvidia_smi_parse(const char *text, size_t len, ng_gpu_snapshot *out, ng_err *err);
/* The dump as the snapshot's JSON (schema nodegate/gpus/1) in *out: 0 a dump
 * that reached NVML; 1 nvidia-smi's report that it could not (read, but no
 * GPU: nothing measured); -1 with err set and *out NULL when the text is no
 * dump, or out of memory. */
int ng_nvidia_smi_json(const char *text, size_t len, cJSON **out, ng_err *err);

#endif
