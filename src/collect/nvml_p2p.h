/* Peer access between the node's GPUs, as NVML reports it: for each pair
 * of GPUs, nvmlDeviceGetP2PStatus for reads, writes, NVLink, atomics and
 * PCI ("ok", "disabled_by_regkey", "chipset_not_supported", ...). The
 * fabric domain's evidence (collect/evidence_fabric.c). */
#ifndef NODEGATE_COLLECT_NVML_P2P_H
#define NODEGATE_COLLECT_NVML_P2P_H

#include <cjson/cJSON.h>

/* The first GPUs read (64: 2,016 pairs, five calls each). */
#define NG_P2P_GPUS_MAX 64

/* {"gpus": N, "pairs": [{"gpus": [i, j], "read": "ok", "write": ...}],
 * "pairs_not_ok": K} where K counts a pair's caps that are not ok (NVLink's
 * not_supported excepted: a PCIe-only pair). A cap the driver does not
 * answer (NOT_SUPPORTED) is absent; a failed call reads "failed: ...".
 * NULL, with the reason added to unreadable, when NVML or its
 * nvmlDeviceGetP2PStatus cannot be used. lib_path as ng_nvml_opts's. */
cJSON *ng_nvml_p2p_read(const char *lib_path, cJSON *unreadable);

#endif
