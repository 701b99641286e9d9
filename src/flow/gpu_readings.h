/* What a GPU check judged from, kept so that it can be judged again
 * (docs/policy-changes.md; store schema 13, table gpu_check_readings):
 * each GPU's fields that the health rules read (judge/gpu_health.h), the
 * Xid lines the check counted (code, cause and the start of the line: not
 * the kernel log), the earlier counters its rates were taken against, and
 * what the run knew of NVML. A few KiB for a node of 8 GPUs; never more
 * than NG_GPU_READINGS_MAX_BYTES.
 *
 * The live check and a replay reach a check's outcome through the same two
 * functions: ng_health_judge (the rules), then ng_gpu_check_outcome (what
 * the run says about the node). Pure: no I/O, no clock. */
#ifndef NODEGATE_FLOW_GPU_READINGS_H
#define NODEGATE_FLOW_GPU_READINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/gpu.h"
#include "core/policy.h"
#include "judge/gpu_health.h"

#define NG_GPU_READINGS_SCHEMA "nodegate/gpu-readings/1"
#define NG_GPU_READINGS_MAX_BYTES (256u << 10)

/* What the run knew beside the snapshot, which the outcome turns on. */
typedef struct {
	bool judged;        /* the rules ran (false: nothing was checked, no GPU in scope) */
	bool nvml_answered; /* NVML listed at least one GPU */
	bool from_dump;     /* judged a saved `nvidia-smi -q`, not NVML */
	bool timed_out;     /* NVML did not answer within the deadline */
} ng_gpu_readings_run;

/* The outcome a check's judgement gives the node: "unknown" (NVML timed
 * out) or "n/a" when the rules never ran; "n/a" when they judged no GPU;
 * "unknown" or "n/a" when NVML never answered and the kernel's evidence
 * drains nothing; else the node's severity. */
const char *ng_gpu_check_outcome(const ng_node_health *h, ng_gpu_readings_run run);

/* The readings as text (malloc'd; NULL when out of memory, or when even
 * without the Xid lines' text they would pass the bound). */
char *ng_gpu_readings_text(const ng_gpu_snapshot *s, const ng_gpu_history *history,
                           size_t n_history, ng_gpu_readings_run run);

/* Readings read back. snap is the caller's (a snapshot is large: a replay
 * reads every check into one); history's uuids point into history_uuid. */
typedef struct {
	ng_gpu_readings_run run;
	ng_gpu_snapshot *snap;
	ng_gpu_history history[NG_GPU_MAX];
	char history_uuid[NG_GPU_MAX][96];
	size_t n_history;
} ng_gpu_readings;

/* 0, or -1 with err (NG_ERR_INPUT) naming what is wrong. r->snap must
 * point to a snapshot to fill. */
int ng_gpu_readings_read(const char *text, ng_gpu_readings *r, ng_err *err);

/* The check judged again under pol, as the live check judges it: h filled,
 * the outcome returned. */
const char *ng_gpu_readings_judge(const ng_gpu_readings *r, const ng_policy *pol,
                                  ng_node_health *h);

#endif
