/* The evidence of a failing domain (seed 000: "follow the failing domain
 * instead of rerunning everything"), captured when admission flags the
 * domain, before its confirmation, and kept with the case (store/probation.h).
 * One collector per domain:
 *   evidence_compute.c  each GPU's processes, current, maximum and application
 *                       clocks, power draw and limit, temperature, clock event
 *                       reasons, ECC, the kernel log's Xids since boot
 *                       (evidence_xid.c); this process's CPU affinity and cgroup;
 *                       the CPU frequency governor
 *   evidence_memory.c   the diagnostic's error code and test (from the flagged
 *                       records), each GPU's ECC, retired pages and remapped
 *                       rows, the host's EDAC counters and HardwareCorrupted
 *   evidence_storage.c  /proc/diskstats twice (latency, queue and the other
 *                       I/O on each device between), the target's file system,
 *                       mount options, shared-service mounts, the page cache,
 *                       each NFS mount's RPC retransmissions, timeouts and
 *                       mean round-trip and execution time per operation
 *   evidence_fabric.c   every InfiniBand/RoCE port's state, rate and error
 *                       counters, each HCA's NUMA node, the transport the
 *                       environment selects (NCCL_IB_HCA, NCCL_SOCKET_IFNAME...);
 *                       the GPUs' peer access (collect/nvml_p2p.h);
 *                       each counter's change since the node's earlier read
 *                       (ng_evidence_fabric_since, from the store)
 * Files are read under a root (tests plant them); NVML through collect/nvml.c
 * (the synthetic NVML in tests). Never a shell, never a decision: what a file
 * or call could not give is listed under "unreadable". */
#ifndef NODEGATE_COLLECT_EVIDENCE_H
#define NODEGATE_COLLECT_EVIDENCE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/gpu.h"

typedef struct {
	const char *root;       /* NULL: $NODEGATE_ROOT, else "/" */
	const char *nvml_lib;   /* NULL: as collect/nvml.h finds it */
	const cJSON *records;   /* the flagged run's records (an array), or NULL */
	double settle_s;        /* storage: seconds between the two reads; <= 0: 1 */
} ng_evidence_opts;

/* Each returns an object {"domain": ..., ...}; NULL only when out of memory. */
cJSON *ng_evidence_compute(const ng_evidence_opts *o);
cJSON *ng_evidence_memory(const ng_evidence_opts *o);
cJSON *ng_evidence_storage(const ng_evidence_opts *o);
cJSON *ng_evidence_fabric(const ng_evidence_opts *o);
/* Marks each port's error counters in ev (ng_evidence_fabric's) with
 * their change since previous, an earlier capture of the node's fabric
 * evidence ({"run_id", "captured_at", "evidence"}, store/probation.h): ev
 * gains "previous_read" {"run_id", "captured_at"} and each port
 * "counters_since_previous" {name: change}; a counter lower than before
 * (the HCA was reset or replaced) is named in the port's "counters_reset"
 * instead, and a port the earlier read did not have says so in
 * "previous_port": "absent". Pure: JSON in, JSON out. Nothing happens when
 * previous is NULL or not fabric evidence. */
void ng_evidence_fabric_since(cJSON *ev, const cJSON *previous);
/* The collector of a domain by name; NULL for a domain that has none. */
cJSON *ng_evidence_collect(const char *domain, const ng_evidence_opts *o);
/* Whether ng_evidence_collect has a collector for the domain. */
bool ng_evidence_has_collector(const char *domain);

/* evidence_compute.c, shared: the root in force; a domain's evidence begun
 * ({"domain": domain}) with its list of files it could not read, which the
 * collector adds as "unreadable" (NULL, both, only out of memory); and one
 * NVML field as a number (absent when it was not read). */
const char *ng_evidence_root(const ng_evidence_opts *o);
cJSON *ng_evidence_begin(const char *domain, cJSON **unreadable);
/* The GPUs NVML lists, one(g) each, as ev's "gpus" (and NVML's "driver"
 * when asked); NVML that cannot be read is named in unreadable. */
void ng_evidence_add_gpus(cJSON *ev, const ng_evidence_opts *o,
                          cJSON *(*one)(const ng_gpu_state *g), bool driver,
                          cJSON *unreadable);
void ng_evidence_add_field(cJSON *obj, const char *key, const void *field);
/* evidence_xid.c: ev's "xids_since_boot" {"count", "newest": [{"bus",
 * "code", "at_s", "pid", "message"}], "cut"} from root's /dev/kmsg, or
 * "/dev/kmsg" in unreadable. */
void ng_evidence_add_xids(cJSON *ev, const char *root, cJSON *unreadable);

#endif
