/* GPU health rules: a snapshot (core/gpu.h) in, a severity per GPU and per
 * node out, with the signals and reasons. Pure: no I/O, no clock, no
 * allocation.
 *
 * The epilog seed's rules, and the fleet seed's signals:
 *   fatal      volatile uncorrectable ECC; row-remap failure; a lost GPU;
 *              a hardware Xid (48, 64, 79, 95, 140, ... by the catalogue)
 *   degraded   PCIe width below its max; PCIe generation below its max while
 *              under load (an idle link drops its generation by design);
 *              hardware slowdown or power brake; NVLink link down; a rising
 *              rate of retired pages, remapped rows, PCIe replays or NVLink
 *              errors against the history
 *   transient  thermal slowdown; a pending row remap or page retirement; an
 *              application Xid (13, 31, 43, 45, ...)
 *   ok         none of these
 *   unknown    the GPU (or NVML) could not be read: never a fault
 * Aggregate uncorrectable ECC alone is not a fault: lifetime errors on a card
 * that has been clean since its last reset justify nothing. Thresholds are
 * policy (the "health" section). */
#ifndef NODEGATE_JUDGE_GPU_HEALTH_H
#define NODEGATE_JUDGE_GPU_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/gpu.h"
#include "core/policy.h"

typedef enum {
	NG_HEALTH_OK,
	NG_HEALTH_TRANSIENT,
	NG_HEALTH_DEGRADED,
	NG_HEALTH_FATAL,
	NG_HEALTH_UNKNOWN, /* ranks below nothing: see ng_health_node */
	NG_HEALTH_UNRESPONSIVE, /* NVML answered for its siblings, not for it: kept, never a drain
	                           until it lasts health.unresponsive_checks checks */
	NG_HEALTH_COUNT
} ng_health;

const char *ng_health_name(ng_health h); /* "ok", "transient", ... */

#define NG_HEALTH_REASONS_MAX 16

typedef struct {
	ng_health severity;
	const char *signal; /* "ecc.volatile_uncorrected", "pcie.width", "xid.79", ... */
	char text[160];     /* for people: what was seen, against what */
} ng_health_reason;

typedef struct {
	int index;
	char uuid[96], bus[16];
	ng_health severity; /* the worst of its reasons; ok when none */
	size_t n_reasons;
	ng_health_reason reason[NG_HEALTH_REASONS_MAX];
	bool reasons_truncated;
	/* this check's place in a run of consecutive checks (0: not now), for
	 * the next check: unresponsive while its siblings answered; in HW
	 * thermal slowdown */
	unsigned unresponsive_run, hw_thermal_run;
} ng_gpu_verdict;

/* The same GPU's counters at an earlier time, for rates (NULL: none). */
typedef struct {
	const char *uuid;
	double hours_ago;
	uint64_t retired_pages, remapped_rows, pcie_replays, nvlink_errors;
	/* NG_HIST_UNREAD_* bits: counters that were not read at that time, so
	 * no rate can be taken for them (a zero there would fake a rise). */
	unsigned unread;
	/* consecutive earlier checks, up to the last, in which it was
	 * unresponsive, or in HW thermal slowdown (0: the last was not) */
	unsigned unresponsive_before, hw_thermal_before;
} ng_gpu_history;

enum {
	NG_HIST_UNREAD_RETIRED_PAGES = 1,
	NG_HIST_UNREAD_REMAPPED_ROWS = 2,
	NG_HIST_UNREAD_PCIE_REPLAYS = 4,
	NG_HIST_UNREAD_NVLINK_ERRORS = 8,
};

typedef struct {
	ng_health severity; /* fatal > degraded > transient > ok; unknown only
	                       when nothing worse was found and something could
	                       not be read */
	bool drain;         /* degraded or fatal */
	size_t n_gpus;
	ng_gpu_verdict gpu[NG_GPU_MAX];
	char unknown_why[256]; /* NVML's failure, when the snapshot holds none */
} ng_node_health;

/* Judges every GPU of the snapshot. history may be NULL. */
void ng_health_judge(const ng_gpu_snapshot *s, const ng_gpu_history *history, size_t n_history,
                     const ng_policy *pol, ng_node_health *out);

/* The Xid catalogue (docs/gpu.md): what a code says about the hardware. */
typedef enum {
	NG_XID_UNLISTED,    /* not in the catalogue: transient, named */
	NG_XID_APPLICATION, /* usually the application's fault: transient */
	NG_XID_INFORMATIONAL,
	NG_XID_HARDWARE,    /* the GPU, its memory, its link: fatal */
	NG_XID_LINK,        /* NVLink or PCIe link trouble: degraded */
} ng_xid_class;

ng_xid_class ng_xid_classify(int code);
const char *ng_xid_mnemonic(int code); /* NULL when unlisted */

#endif
