/* libnodegate: nodegate's decisions as a library.
 *
 * The `nodegate` command is one front end over this library; a daemon, a
 * Kubernetes operator or a binding is another. Through this header alone a
 * program can:
 *   - read a tool's output into records (the parsers: nccl-tests, dcgmi,
 *     perftest, nvbandwidth), as `nodegate parse` does;
 *   - judge a record against its class baseline and the cohort of the
 *     class's other nodes (the gate: records to verdicts), as `nodegate gate`
 *     does;
 *   - run an admission of one node from its records (judge each metric,
 *     confirm what was flagged once, land the outcome in the store, open a
 *     case with its evidence), as `nodegate admit --from` does, with the same
 *     store, the same decisions and the same JSON;
 *   - check a node's GPUs after or before a job, or the whole node (the
 *     epilog, prolog and health decisions), as `nodegate epilog` does;
 *   - release a quarantined node to probation once its release condition
 *     holds, or by a named decision, as `nodegate release` does.
 *
 * Conventions for every function:
 *   - a function that can fail takes a nodegate_error * last (NULL: not
 *     wanted) and returns 0, or -1 with the error's class and one-line
 *     message set; a function returning a pointer returns NULL instead;
 *   - documents in and out are JSON text (docs/record.md for records,
 *     schema nodegate/admission/1 for an admission); text this library
 *     returns is the caller's, freed with nodegate_free;
 *   - composite results have a destructor beside them (*_release, *_free)
 *     that accepts NULL;
 *   - nothing is printed: a sentence for the operator goes to the context's
 *     note function, if one is set;
 *   - a context is used by one thread at a time; different contexts may be
 *     used from different threads at once.
 *
 * Link with `pkg-config --cflags --libs nodegate` (libnodegate.so), or
 * `pkg-config --static --cflags --libs nodegate` for libnodegate.a.
 * examples/admit.c and examples/epilog.c are complete programs. */
#ifndef NODEGATE_NODEGATE_H
#define NODEGATE_NODEGATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------------ */

/* The version of this header. NODEGATE_VERSION_NUM is 0xMMmmpp, so a program
 * can test `#if NODEGATE_VERSION_NUM >= 0x000100`. */
#define NODEGATE_VERSION_MAJOR 0
#define NODEGATE_VERSION_MINOR 1
#define NODEGATE_VERSION_PATCH 0
#define NODEGATE_VERSION_STRING "0.1.0"
#define NODEGATE_VERSION_NUM                                                                   \
	((NODEGATE_VERSION_MAJOR << 16) | (NODEGATE_VERSION_MINOR << 8) | NODEGATE_VERSION_PATCH)

/* The version of the library linked at run time ("0.1.0"). */
const char *nodegate_version(void);

/* ---- errors ------------------------------------------------------------------------- */

/* What kind of failure, so a caller can branch on it without reading text.
 * The values are stable. `nodegate` exits 2 for usage and input, 3 for the
 * store. */
typedef enum {
	NODEGATE_ERR_NONE = 0,     /* no error (or one no layer classified) */
	NODEGATE_ERR_USAGE = 1,    /* asked for something that cannot be done as asked */
	NODEGATE_ERR_INPUT = 2,    /* a document or file given to read is unusable */
	NODEGATE_ERR_STORE = 3,    /* the store could not be opened, read or written */
	NODEGATE_ERR_LANDING = 4,  /* the scheduler (scontrol, kubectl, a hook) failed */
	NODEGATE_ERR_INTERNAL = 5, /* out of memory, or a state that should not arise */
} nodegate_error_class;

typedef struct {
	nodegate_error_class code;
	char message[512]; /* one line: what failed, on what input, what to do */
} nodegate_error;

/* "usage", "input", "store", "landing", "internal"; "none" for 0. */
const char *nodegate_error_class_name(nodegate_error_class code);

/* Frees text or a document this library returned. */
void nodegate_free(void *p);

/* ---- context ------------------------------------------------------------------------ */

/* What every decision runs in: the policy (the defaults until a policy is
 * loaded), the store (opened by nodegate_ctx_open_store), who is acting, the
 * clock, and where notes go. */
typedef struct nodegate_ctx nodegate_ctx;

/* A context with the default policy and no store. NULL when out of memory. */
nodegate_ctx *nodegate_ctx_new(void);
/* Closes the store and frees the context. */
void nodegate_ctx_free(nodegate_ctx *ctx);

/* Applies a policy document (JSON text, as a --policy file holds it) over
 * the context's policy. A key given twice, an unknown key or a bad value is
 * an NODEGATE_ERR_INPUT error naming it, and the policy is unchanged. */
int nodegate_ctx_policy_json(nodegate_ctx *ctx, const char *json, nodegate_error *err);
/* The same, from a file. */
int nodegate_ctx_policy_file(nodegate_ctx *ctx, const char *path, nodegate_error *err);

/* Opens the store the decisions are kept in: a SQLite file path, or a
 * postgresql:// URI; NULL or "" for $NODEGATE_STORE, else the default path.
 * A SQLite store is created when missing. Decisions written through it name
 * the policy in force when it was opened, so set the policy first. */
int nodegate_ctx_open_store(nodegate_ctx *ctx, const char *spec, nodegate_error *err);

/* Who is acting, for the audit log (default: the user, from the system). */
int nodegate_ctx_set_actor(nodegate_ctx *ctx, const char *actor);
/* Report only (non-zero): change no scheduler state, run no hook. */
void nodegate_ctx_set_no_land(nodegate_ctx *ctx, int no_land);
/* A program told of each decision, with its JSON on standard input (an argv
 * in one string, never run through a shell); NULL for none. */
int nodegate_ctx_set_on_verdict(nodegate_ctx *ctx, const char *command);
/* The time decisions are taken at, unix seconds; NULL for the system clock
 * ($NODEGATE_NOW where set). */
void nodegate_ctx_set_clock(nodegate_ctx *ctx, int64_t (*now)(void *arg), void *arg);
/* Where notes go: one sentence each, no newline; verb names the decision
 * ("admit"). NULL drops them. */
void nodegate_ctx_set_note(nodegate_ctx *ctx,
                           void (*note)(void *arg, const char *verb, const char *message),
                           void *arg);

/* ---- records to verdicts: the gate ---------------------------------------------------- */

/* One record judged (docs/gate.md). */
typedef struct {
	const char *verdict; /* "pass", "warn", "block", "no-baseline", ... (static) */
	int admissible;      /* may the node take work on this verdict alone */
	const char *lands;   /* where the runbook lands it (static) */
} nodegate_verdict;

/* Judges one record (a JSON object) against a class baseline (a JSON object
 * of schema nodegate/baseline/1, or NULL for none: no-baseline) and the
 * cohort's drops (the class's other nodes' 1 - median / baseline median; n
 * may be 0), under the context's policy. Exactly what `nodegate gate`
 * decides, bit for bit. */
int nodegate_gate(const nodegate_ctx *ctx, const char *record_json, const char *baseline_json,
                  const double *cohort_drops, size_t n_cohort, nodegate_verdict *out,
                  nodegate_error *err);

/* The gate over a stream, as `nodegate gate --batch` (docs/gate.md): one
 * case per line of in (a JSON object: "record", and optionally "baseline",
 * "cohort_drops", "history", "blocked", "clear_after", "escalate_after"), one
 * line out per line in, in order: {"verdict": ...} (with "effective" and
 * "blocked" when a history is given) or {"error": ...}. Returns 0 when every
 * line was judged, 1 when a line was refused (the run goes on), -1 when in
 * could not be read or out written, or memory ran out (err says which). */
int nodegate_gate_batch(const nodegate_ctx *ctx, FILE *in, FILE *out, nodegate_error *err);

/* ---- the parsers -------------------------------------------------------------------- */

/* The tools a parser reads, by index from 0; NULL past the last. */
const char *nodegate_parser_name(size_t i);
/* Reads one run's output of tool ("nccl-tests", "dcgmi", "perftest",
 * "nvbandwidth") into records: a JSON array, in *records_json (free it with
 * nodegate_free). exit_status is the tool's (-1 unknown). What could not be
 * read stays absent, never a number. */
int nodegate_parse(const char *tool, const char *text, size_t len, int exit_status,
                   char **records_json, nodegate_error *err);

/* ---- admission ---------------------------------------------------------------------- */

/* One admission run of one node, decided and stored. */
typedef struct nodegate_admission nodegate_admission;

/* Admits one node from its records (a JSON array of records, or one record,
 * all of one node, class and software identity: what `nodegate probe` and
 * `nodegate run` write), and, when the first run was flagged, from its
 * confirmation's records (NULL: the run ends "suspect" and names what to
 * re-run). The context must have a store. The run is judged, landed and
 * stored as `nodegate admit --from` does; *out is the result, released with
 * nodegate_admission_release. A failure stores nothing when the records are
 * unusable (NODEGATE_ERR_INPUT). */
int nodegate_admit_records(nodegate_ctx *ctx, const char *records_json, const char *confirm_json,
                           nodegate_admission **out, nodegate_error *err);

/* "admitted", "admitted-warn", "suspect", "held" or "quarantined". */
const char *nodegate_admission_outcome(const nodegate_admission *a);
/* 0 for admitted and admitted-warn, 1 otherwise: the exit status `nodegate
 * admit` gives. */
int nodegate_admission_exit_status(const nodegate_admission *a);
/* The case the run opened or counted toward, 0 if none. */
int64_t nodegate_admission_case(const nodegate_admission *a);
/* The decision as JSON (schema nodegate/admission/1: what `admit --json`
 * prints), in *json (free it with nodegate_free). */
int nodegate_admission_json(const nodegate_admission *a, char **json, nodegate_error *err);
void nodegate_admission_release(nodegate_admission *a);

/* ---- GPU checks --------------------------------------------------------------------- */

/* The decision `nodegate epilog`, `prolog` and `health` make (docs/epilog.md),
 * for a front end that wants it without running the command. One call takes
 * a snapshot of the node's GPUs through NVML in a child process under a hard
 * deadline, reads the kernel's Xids, accounts for every GPU the kernel or the
 * store knows, judges them by the context's policy, keeps a record per GPU in
 * the context's store when it has one, tells the context's --on-verdict
 * program, and returns the result. It never drains: that is the caller's,
 * on nodegate_gpu_check_drains.
 *
 * Its two promises are the epilog's: never drain on ignorance (NVML missing,
 * failing, hanging or answering nonsense is "unknown" or "n/a", exit status
 * 0), and only the job's own GPUs (a neighbour's bad card never drains a
 * node for a job that did not touch it). */

typedef enum {
	NODEGATE_CHECK_EPILOG = 0, /* after a job: its GPUs; exit 1 drains (Slurm's Epilog) */
	NODEGATE_CHECK_PROLOG = 1, /* before a job: its GPUs; exit 1 drains and requeues it */
	NODEGATE_CHECK_HEALTH = 2, /* the whole node (HealthCheckProgram, cron, by hand) */
} nodegate_check_mode;

/* What to check, and how: what the command's options say. Start from
 * nodegate_gpu_check_request_init, which sets every field to its default;
 * the strings it points to must outlive the result. */
typedef struct {
	nodegate_check_mode mode;
	const char *gpus;      /* epilog/prolog: the job's GPUs as SLURM_JOB_GPUS gives them
	                          ("0,2"); NULL: $SLURM_JOB_GPUS */
	double deadline_s;     /* the whole run ends within this; <= 0: the policy's
	                          health.deadline_seconds (10) */
	const char *kmsg_path; /* kernel Xids from this file; NULL: /dev/kmsg ($NODEGATE_KMSG) */
	int no_kmsg;           /* non-zero: read no kernel Xids */
	double since_s;        /* only Xids from the last since_s seconds; < 0: the mode's default */
	const char *nvml_library; /* the NVML library; NULL: $NODEGATE_NVML_LIBRARY, libnvidia-ml.so.1 */
	int no_store;          /* non-zero: keep nothing, even with the context's store open */
	const char *smi_file;  /* health only: judge this saved `nvidia-smi -q` instead of NVML */
	const char *node;      /* the Slurm node; NULL: $SLURMD_NODENAME, else the short host name */
	const char *root;      /* the kernel's view of the GPUs under this directory; NULL: / */
} nodegate_gpu_check_request;

/* Every field of req at its default, for mode. */
void nodegate_gpu_check_request_init(nodegate_gpu_check_request *req, nodegate_check_mode mode);

/* One check's result. */
typedef struct nodegate_gpu_check nodegate_gpu_check;

/* Runs the check in ctx (its policy, store, clock, hook and note function).
 * A broken NVML, a hang or a store that fails is a result, never an error:
 * the errors are NODEGATE_ERR_USAGE (no context, request or result to fill,
 * or a mode out of range), NODEGATE_ERR_INPUT (req->smi_file is unusable:
 * nothing was checked) and NODEGATE_ERR_INTERNAL (out of memory before
 * anything ran). A caller standing in for an Epilog exits 0 on each: never
 * drain on ignorance. *out is released with nodegate_gpu_check_release. */
int nodegate_gpu_check_run(nodegate_ctx *ctx, const nodegate_gpu_check_request *req,
                           nodegate_gpu_check **out, nodegate_error *err);

/* "ok", "transient", "degraded", "fatal", "unresponsive" (node-wide),
 * "unknown" (NVML did not answer in time, or a GPU could not be read) or
 * "n/a" (nothing checked). */
const char *nodegate_gpu_check_severity(const nodegate_gpu_check *r);
/* Non-zero when this node should be drained: only for degraded or fatal. */
int nodegate_gpu_check_drains(const nodegate_gpu_check *r);
/* The exit status the command gives: 1 to drain, else 0. */
int nodegate_gpu_check_exit_status(const nodegate_gpu_check *r);
/* The drain reason, or why nothing was (or could be) checked; "" when
 * neither applies. */
const char *nodegate_gpu_check_reason(const nodegate_gpu_check *r);
/* How many GPUs were judged. */
size_t nodegate_gpu_check_count(const nodegate_gpu_check *r);
/* The result as `--json` prints it (schema nodegate/gpu-check/1), as text
 * the caller frees with nodegate_free; NULL when out of memory. */
char *nodegate_gpu_check_json(const nodegate_gpu_check *r);
void nodegate_gpu_check_release(nodegate_gpu_check *r);

/* ---- release ------------------------------------------------------------------------ */

/* Releases a quarantined node to probation, as `nodegate release` does
 * (docs/admission.md, "Probation"): its open case closes when the test that
 * failed has passed again the policy's admission.release_passes times since
 * the case opened, or by an administrator's named decision (manual); a
 * lemon (quarantined quarantine.lemon_count times in lemon_days) is never
 * released unless forced. A reboot alone never releases a node. */

typedef enum {
	NODEGATE_RELEASED = 0,        /* the case is closed; the node is on probation */
	NODEGATE_RELEASE_NO_CASE = 1, /* the node has no open case: nothing to release */
	NODEGATE_RELEASE_NOT_YET = 2, /* too few passing runs of the failed test yet */
	NODEGATE_RELEASE_LEMON = 3,   /* a lemon, and not forced */
} nodegate_release_state;

/* What to release, and how. Zero it, then set node. */
typedef struct {
	const char *node;      /* the node's stable id or its scheduler name */
	const char *by;        /* who releases (at most 63 characters); NULL: the context's actor */
	const char *reason;    /* why (at most 200 characters), kept with the case; NULL: none */
	int manual;            /* without the passing runs: needs by and reason */
	int force;             /* a lemon too, after its repair: needs by and reason */
	int land_slurm;        /* then resume the node through scontrol, only from this
	                          case's drain (an operator's is left alone), audited as
	                          land.resume; nothing when the context does not land */
	const char *land_node; /* the Slurm node name; NULL: the case's, else node */
} nodegate_release_request;

typedef struct {
	nodegate_release_state state;
	char node[128];        /* the stable id node named */
	int64_t case_id;       /* the open case (0 for NO_CASE) */
	int64_t passes;        /* its passing runs of the failed test since it opened */
	int64_t runs;          /* its runs of the failed test since it opened */
	long passes_needed;    /* the policy's release_passes */
	char metric[96];       /* the metric that failed */
	char reason[256];      /* RELEASED: the reason kept with the case; LEMON: why it is one */
	const char *landing;   /* land_slurm: "done", "left-alone" or "failed"; else "" (static) */
	int landing_unaudited; /* the resume happened, its audit entry could not be written */
} nodegate_release_result;

/* Releases req->node in ctx, which must have a store. 0 with *out in every
 * state above (the command exits 0 for NODEGATE_RELEASED, 1 otherwise);
 * -1 with err: NODEGATE_ERR_USAGE (no context, store, request or node; node
 * names two nodes; manual or force without by and reason; by or reason too
 * long), NODEGATE_ERR_STORE. A resume that fails leaves the case closed and
 * says so in out->landing and a note. */
int nodegate_release(nodegate_ctx *ctx, const nodegate_release_request *req,
                     nodegate_release_result *out, nodegate_error *err);

#ifdef __cplusplus
}
#endif

#endif
