/* NVML through dlopen: the node's GPUs as a snapshot (core/gpu.h).
 *
 * libnvidia-ml.so.1 (or the library $NODEGATE_NVML_LIBRARY names, such as
 * nodegate's synthetic GPUs) is loaded at run time; every function of the
 * subset in docs/gpu.md is resolved by its versioned name, newer ones first
 * with a fallback (nvmlDeviceGetCurrentClocksEventReasons, then ...Throttle...).
 * No library, a failed init or a missing required symbol is a snapshot with
 * nvml FAILED and the reason; a lost GPU or a failed call marks that GPU or
 * field, never the rest. This module never decides and never waits forever
 * on its own: callers that need a deadline run it in a child process
 * (flow/gpu_check.c). */
#ifndef NODEGATE_COLLECT_NVML_H
#define NODEGATE_COLLECT_NVML_H

#include <stdbool.h>

#include "core/gpu.h"

typedef struct {
	const char *lib_path; /* NULL: $NODEGATE_NVML_LIBRARY, else "libnvidia-ml.so.1" */
	/* Only these GPUs, by NVML index (NULL: every GPU). A caller holding
	 * UUIDs takes a full snapshot and picks them by exact UUID. */
	const int *indexes;
	size_t n_indexes;
	/* With indexes NULL: only the GPUs with these device minors (the N of
	 * /dev/nvidiaN), and any whose minor cannot be read, are read past
	 * their identity. Slurm's ordinals are minors; a neighbour's hung GPU
	 * must not hold the job's check. NULL: every GPU. */
	const int *minors;
	size_t n_minors;
	/* Each GPU only as far as its identity and minor (UUID, bus, name),
	 * every other field unread: the GPUs NVML lists, without the queries a
	 * GPU in trouble hangs in. */
	bool identity_only;
} ng_nvml_opts;

/* Fills *out. Returns 0 even when NVML failed (out->nvml says so); -1 only
 * for a usage error (err set). */
int ng_nvml_snapshot(const ng_nvml_opts *o, ng_gpu_snapshot *out, ng_err *err);

/* The NVML text for a return code ("GPU is lost", ...), from nvml.md's
 * table, without calling into the library. */
const char *ng_nvml_return_name(int rc);

#endif
