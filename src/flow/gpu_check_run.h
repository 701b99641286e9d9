/* What the parts of the GPU health check share (flow/gpu_check.h
 * is its public entry, cli/gpu_check.h the verbs' side): the run's state,
 * which is also the result a front end prints, and the functions one part
 * of the run calls in another. gpu_check.c runs the check (the work in a
 * child under the deadline is collect/bounded.h); gpu_check_xid.c attaches
 * the kernel's Xids; gpu_check_inventory.c accounts for every GPU;
 * gpu_check_result.c lands, sets the exit status and builds the result's
 * JSON; gpu_check_store.c reads history from and keeps records in the
 * store. Nothing here prints. */
#ifndef NODEGATE_FLOW_GPU_CHECK_RUN_H
#define NODEGATE_FLOW_GPU_CHECK_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "flow/gpu_check.h"
#include "collect/bounded.h"
#include "collect/gpu_kernel.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "flow/ctx.h"
#include "parse/job_gpus.h"
#include "judge/gpu_health.h"
#include "flow/gpu_readings.h"
#include "land/slurm.h"
#include "store/store.h"

/* The run, and the result it leaves (ng_gpu_check_result publicly). */
struct ng_gpu_check_result {
	ng_ctx ctx; /* the caller's, copied (or the defaults) */
	ng_check_mode mode;

	/* options */
	const char *gpus_opt;
	double deadline_s;
	const char *kmsg_path;
	bool no_kmsg;
	double since_s; /* < 0: the mode's default */
	const char *nvml_library;
	const char *store;
	bool no_store;
	const char *smi_file;
	bool land_slurm;         /* --land slurm: drain through scontrol */
	const char *slurm_conf;  /* --slurm-conf */
	const char *node_name;   /* --node */
	const char *root;        /* --root (NODEGATE_ROOT): the kernel's view under it */

	/* the run */
	double t_end; /* CLOCK_MONOTONIC seconds at which the deadline expires */
	ng_job_gpus *job;
	ng_gpu_snapshot *snap;
	ng_node_health *health;
	cJSON *notes;
	char gpus_from[64];
	const char *outcome; /* a severity name, "unknown" or "n/a" */
	char why[512];       /* the reason behind unknown, n/a or a drain */
	bool timed_out, drain;
	bool nvml_answered;     /* NVML listed at least one GPU */
	ng_kernel_view *kview;  /* the kernel's view of the GPUs, when read */
	bool kview_read;
	size_t n_xid, n_xid_elsewhere;
	/* each GPU's counters at an earlier check, from the store, for rates */
	ng_gpu_history history[NG_GPU_MAX];
	char history_uuid[NG_GPU_MAX][96];
	size_t n_history;
	/* the node's previous GPU check, from the store: is Slurm's Epilog or
	 * Prolog error drain nodegate's own (land/slurm.h)? */
	char last_mode[16];
	bool last_drain;
	long long last_at; /* 0: none known */
	/* the node's GPUs as the store last saw them, and the kernel-log marks */
	bool store_read;
	ng_store_gpu inv[NG_GPU_MAX];
	size_t n_inv;
	ng_store_kmsg_mark marks[NG_GPU_MAX];
	size_t n_marks;
	/* what this run adds: GPUs replaced at their bus, newest Xid judged per bus */
	char replaced[NG_GPU_MAX][96];
	size_t n_replaced;
	ng_store_kmsg_mark new_marks[NG_GPU_MAX];
	size_t n_new_marks;
	/* landing through scontrol, when asked */
	bool landed;      /* ng_slurm_drain ran */
	int land_rc;      /* its return */
	ng_slurm_result slurm;
	char land_error[512];
	bool input_error; /* the --from-nvidia-smi file is unusable: nothing ran (why says why) */
	bool judged;      /* the rules ran: the readings kept say so */
};

const char *ng_check_mode_name(ng_check_mode m);
/* What the run knew beside its snapshot, for the outcome and the readings
 * kept (flow/gpu_readings.h). */
ng_gpu_readings_run ng_check_readings_run(const struct ng_gpu_check_result *c, bool judged);
/* CLOCK_MONOTONIC, in seconds: the deadline's clock (collect/bounded.h). */
#define ng_check_now ng_monotonic_now
/* Adds one line to the run's notes (what was not checked, and why): they
 * are part of the result, which the front end prints. */
void ng_check_note(struct ng_gpu_check_result *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs fn(wfd, arg) in a child under the check's deadline (collect/bounded.h),
 * and notes a child that would not die. */
typedef void (*child_fn)(int wfd, const struct ng_gpu_check_result *c, const void *arg);
int ng_check_run_bounded(struct ng_gpu_check_result *c, const char *what, child_fn fn, const void *arg,
                         size_t max, ng_bounded *b);
/* The same for n children at once (collect/bounded.h's ng_run_bounded_each). */
size_t ng_check_run_bounded_each(struct ng_gpu_check_result *c, const char *what, child_fn fn,
                                 const void *const *args, size_t n, size_t max, ng_bounded *b);

/* What the NVML child reads (gpu_check.c). */
struct ng_check_nvml_arg {
	const int *idx; /* only these NVML indexes */
	size_t n_idx;
	const int *minors; /* read past their identity only these minors' GPUs */
	size_t n_minors;
	bool identity_only; /* each GPU's identity and minor, nothing that may hang */
};
/* The child: NVML, and the snapshot on its pipe (core/gpu_wire.c). */
void ng_check_nvml_child(int wfd, const struct ng_gpu_check_result *c, const void *arg);
/* The snapshot an NVML child that finished sent, into *into; -1 with why
 * when it failed, died or sent something unreadable. */
int ng_check_nvml_answer(const ng_bounded *b, ng_gpu_snapshot *into, char *why, size_t cap);

/* ---- gpu_check_each.c ---- */
/* After the whole node's query hung: the GPUs listed (identity only), then
 * each GPU in scope read in a child of its own, all under c->t_end. A GPU
 * whose child does not answer is kept with every field failed (the rules
 * call it unresponsive while its siblings answer). 0 with c->snap filled
 * when NVML listed the GPUs and answered for at least one in scope (or
 * none was in scope); -1, c->snap untouched, for a node-wide hang. */
int ng_check_nvml_each(struct ng_gpu_check_result *c, const int *minors, size_t n_minors);

/* ---- gpu_check_xid.c ---- */
/* Reads the kernel log and attaches the Xids since the job began to the
 * GPUs by PCI address; a log that cannot be read is a note. */
void ng_check_attach_xids(struct ng_gpu_check_result *c);

/* ---- gpu_check_inventory.c ---- */
/* After NVML, whatever it did: reads the kernel's view of the GPUs, picks
 * the job's GPUs by device minor, and adds to the snapshot every GPU in
 * scope that the kernel knows and NVML does not list (missing when NVML
 * answered for its siblings, unanswered when it did not). */
void ng_check_account_gpus(struct ng_gpu_check_result *c);
/* A GPU known only from elsewhere, appended to the snapshot; NULL when full. */
ng_gpu_state *ng_check_add_ghost(struct ng_gpu_check_result *c, ng_gpu_presence presence, const char *bus,
                                 int minor, const char *uuid, const char *seen_by);

/* ---- gpu_check_result.c ---- */
void ng_check_drain_reason(struct ng_gpu_check_result *c);
void ng_check_land_slurm(struct ng_gpu_check_result *c);
/* The result as `--json` prints it and the --on-verdict program reads it. */
cJSON *ng_check_result_json(const struct ng_gpu_check_result *c);
/* One checked GPU as the result and the store's record show it. */
cJSON *ng_check_gpu_json(const struct ng_gpu_check_result *c, size_t i);
int ng_check_exit_status(const struct ng_gpu_check_result *c);

/* ---- gpu_check_store.c ---- */
void ng_check_load_history(struct ng_gpu_check_result *c);
void ng_check_keep_records(struct ng_gpu_check_result *c);

#endif
