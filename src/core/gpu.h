/* What nodegate knows about a node's GPUs at one moment: the snapshot that
 * collect/nvml.c reads through NVML (or parse/nvidia_smi.c reads from a saved
 * `nvidia-smi -q`), and judge/gpu_health.c judges.
 *
 * Every field says whether it was read: a value NVML could not give is never
 * a zero. NOT_SUPPORTED (the GPU has no such counter) is not a failure;
 * FAILED (the call failed, or never returned) is a monitoring failure, and
 * the rules turn it into `unknown`, never into a fault. */
#ifndef NODEGATE_CORE_GPU_H
#define NODEGATE_CORE_GPU_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"

#define NG_GPU_MAX 64
#define NG_NVLINK_MAX 18
#define NG_GPU_XID_MAX 32

typedef enum {
	NG_FIELD_UNREAD = 0,    /* not asked (the source has no such field) */
	NG_FIELD_OK,            /* value holds what was read */
	NG_FIELD_NOT_SUPPORTED, /* this GPU has no such counter: not applicable */
	NG_FIELD_FAILED,        /* the query failed or did not return: unknown */
} ng_field_state;

typedef struct {
	ng_field_state state;
	uint64_t value;
	int nvml_return; /* the NVML return code when FAILED or NOT_SUPPORTED, else 0 */
} ng_gpu_field;

/* Clock event reasons (NVML's bit values). */
enum {
	NG_CLK_GPU_IDLE = 0x1,
	NG_CLK_SW_POWER_CAP = 0x4,
	NG_CLK_HW_SLOWDOWN = 0x8,
	NG_CLK_SW_THERMAL = 0x20,
	NG_CLK_HW_THERMAL = 0x40,
	NG_CLK_HW_POWER_BRAKE = 0x80,
};

typedef struct {
	ng_gpu_field active; /* 1 when the link is up */
	ng_gpu_field replay_errors, recovery_errors, crc_errors;
} ng_nvlink_state;

/* One Xid the kernel reported for this GPU (parse/xid.h attaches them). */
typedef struct {
	int code;
	int cause;       /* the earlier Xid the line says caused this one ("caused by
	                    previous Xid 149"), 0 when it names none */
	int64_t at_usec; /* kernel monotonic time of the line, or -1 */
	char message[160];
} ng_gpu_xid;

/* Who vouches for a GPU in a snapshot. NVML's own list is the default; the
 * others are GPUs that another witness knows and NVML does not list, added
 * by the check (cli/gpu_check.c) so their evidence is never dropped. */
typedef enum {
	NG_GPU_LISTED = 0, /* NVML listed it: its fields are what NVML said */
	NG_GPU_MISSING,    /* the kernel (bound to nvidia) or the store knows it, and NVML,
	                      answering for its siblings, does not list it: fatal */
	NG_GPU_UNANSWERED, /* NVML failed, hung or listed nothing: only the kernel's
	                      word (its bus, its Xids); nothing else was read */
} ng_gpu_presence;

typedef struct {
	int index;      /* NVML index */
	char uuid[96];  /* "GPU-..." */
	char name[96];
	char bus[16];   /* normalized PCI address: "0000:3b:00" (domain 4 hex, lowercase, no function) */
	bool lost;      /* NVML said GPU_IS_LOST */
	char error[160]; /* why this GPU could not be read, when it could not */

	ng_gpu_field ecc_volatile_uncorrected, ecc_aggregate_uncorrected;
	ng_gpu_field ecc_volatile_corrected, ecc_aggregate_corrected;
	ng_gpu_field retired_pages_sbe, retired_pages_dbe, retired_pending;
	ng_gpu_field remap_corrected, remap_uncorrected, remap_pending, remap_failed;
	ng_gpu_field pcie_gen, pcie_gen_max, pcie_width, pcie_width_max, pcie_replays;
	ng_gpu_field clock_reasons; /* NG_CLK_* bits */
	ng_gpu_field temperature_c, sm_clock_mhz, sm_clock_max_mhz, power_mw;
	ng_gpu_field minor; /* the device minor (/dev/nvidiaN): what Slurm's ordinals name */
	/* whether it is idle, and what a job left behind */
	ng_gpu_field utilization_gpu; /* percent */
	ng_gpu_field pstate;          /* 0 (P0, fastest) to 15; P8 and deeper is idle */
	ng_gpu_field processes;       /* compute processes running on it */
	ng_gpu_field memory_used_mib, memory_total_mib;
	/* what the failing domain's evidence reads (collect/evidence_compute.c) */
	ng_gpu_field power_limit_mw, power_default_limit_mw; /* enforced, and the board's default */
	ng_gpu_field app_sm_clock_mhz;                       /* the application SM clock */
	size_t n_pids;
	uint32_t pid[8]; /* the first of those processes */

	ng_gpu_presence presence;
	char seen_by[48]; /* MISSING, UNANSWERED: "the kernel", "the store", ... */

	size_t n_links; /* links the GPU has (NOT_SUPPORTED: 0) */
	ng_nvlink_state link[NG_NVLINK_MAX];

	size_t n_xid;
	ng_gpu_xid xid[NG_GPU_XID_MAX];
} ng_gpu_state;

typedef struct {
	/* NVML as a whole: OK, or FAILED with why (no library, init failed,
	 * missing symbol, hang). A snapshot that failed here holds no GPUs. */
	ng_field_state nvml;
	char nvml_error[256];
	char driver[80], nvml_version[80];
	size_t n_gpus;
	size_t n_listed; /* the GPUs NVML counts, read or not (a minor filter reads fewer) */
	ng_gpu_state gpu[NG_GPU_MAX];
	char source[32]; /* "nvml", "nvidia-smi", "synthetic" */
	bool after_job;  /* taken right after a job (epilog): what it left behind is a finding */
} ng_gpu_snapshot;

/* Empties a snapshot for filling: its header, and no GPU. Only gpu[0 ..
 * n_gpus) is ever read, and whatever fills a GPU zeroes it first, so the
 * GPUs are left as they are: a snapshot is over 500 KiB (NG_GPU_MAX GPUs
 * with their links and Xids), and zeroing all of it touched some 130 fresh
 * pages per copy, most of what the epilog cost on a node of 8 GPUs. */
void ng_gpu_snapshot_clear(ng_gpu_snapshot *s);

/* core/gpu_wire.c: the snapshot between a child of this process and its
 * parent, as its own bytes (no JSON to print and parse again). pack appends
 * to out (-1: no valid snapshot, or out of memory); unpack checks every
 * count, enumeration and string before the snapshot is used. */
int ng_gpu_snapshot_pack(const ng_gpu_snapshot *s, ng_strbuf *out);
int ng_gpu_snapshot_unpack(const char *buf, size_t len, ng_gpu_snapshot *out, ng_err *err);

/* core/gpu_json.c: the snapshot as JSON (schema "nodegate/gpus/1") and back,
 * for what people and tests read and write. */
cJSON *ng_gpu_snapshot_to_json(const ng_gpu_snapshot *s);
int ng_gpu_snapshot_from_json(const cJSON *doc, ng_gpu_snapshot *out, ng_err *err);

/* "00000000:3B:00.0", "0000:3b:00", "PCI:0000:3B:00" -> "0000:3b:00".
 * -1 when it is not a PCI address. */
int ng_gpu_bus_normalize(const char *in, char out[16]);
/* The normalized form of a PCI address's parts: "%04lx:%02lx:%02lx" of
 * the domain (its low 32 bits), the bus and the device (their low 8). */
void ng_gpu_bus_format(unsigned long domain, unsigned long bus, unsigned long device, char out[16]);

#endif
