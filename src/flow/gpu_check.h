/* The flow layer's GPU check: the decision `nodegate epilog`, `prolog` and
 * `health` make, for the command (cli/gpu_check.h) and the public API
 * (include/nodegate/nodegate.h, src/api/gpu_check.c, which is what a front
 * end other than the command uses).
 *
 * One call takes a snapshot of the node's GPUs through NVML in a child
 * process under a hard deadline, reads the kernel's Xids, accounts for
 * every GPU the kernel or the store knows, judges them by the policy, keeps
 * a record per GPU in the store when one is named, drains through scontrol
 * when asked, and returns the result. Nothing is printed: the result holds
 * the verdict, the notes (what was not checked, and why) and the JSON the
 * command prints with --json.
 *
 * Its two promises are the epilog seed's: never drain on ignorance (NVML
 * missing, failing, hanging or answering nonsense is `unknown` or `n/a`,
 * exit status 0), and only the job's own GPUs (a neighbour's bad card never
 * drains a node for a job that did not touch it).
 *
 * Memory: the result is the caller's, freed with ng_gpu_check_result_release.
 * Strings the request points to must outlive the result. */
#ifndef NODEGATE_FLOW_GPU_CHECK_H
#define NODEGATE_FLOW_GPU_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The context a flow runs in (flow/ctx.h: policy, store, clock, actor,
 * landing, note sink); NULL everywhere below means the defaults: the built-in policy, the
 * system clock ($NODEGATE_NOW where set), no store named, no hook, notes
 * dropped. */
typedef struct ng_ctx ng_ctx;

typedef enum {
	NG_CHECK_EPILOG, /* after a job: its GPUs; exit 1 drains (Slurm's Epilog) */
	NG_CHECK_PROLOG, /* before a job: its GPUs; exit 1 drains and requeues the job */
	NG_CHECK_HEALTH, /* the whole node (HealthCheckProgram, cron, by hand) */
} ng_check_mode;

#define NG_CHECK_DEFAULT_DEADLINE_S 10.0
#define NG_CHECK_EPILOG_SINCE_S 3600.0 /* Xids this recent, when the job's run time is not known */

/* What to check, and how: what the command line's options say. Start from
 * ng_gpu_check_request_init, which sets every field to its default. */
typedef struct {
	ng_check_mode mode;
	const char *gpus;       /* epilog/prolog: the job's GPUs as SLURM_JOB_GPUS gives them;
	                           NULL: $SLURM_JOB_GPUS */
	double deadline_s;      /* the whole run ends within this; <= 0: the policy's
	                           health.deadline_seconds (10) */
	const char *kmsg_path;  /* kernel Xids from this file; NULL: /dev/kmsg ($NODEGATE_KMSG) */
	bool no_kmsg;           /* read no kernel Xids */
	double since_s;         /* only Xids from the last since_s seconds; < 0: the mode's default */
	const char *nvml_library; /* the NVML library; NULL: $NODEGATE_NVML_LIBRARY, libnvidia-ml.so.1 */
	const char *store;      /* keep a record per GPU in this store; NULL: the context's, else
	                           $NODEGATE_STORE. A store that fails is a note, never a drain */
	bool no_store;          /* keep nothing, whatever is set */
	const char *smi_file;   /* health only: judge this saved `nvidia-smi -q` instead of NVML */
	bool land_slurm;        /* also drain through scontrol (never over an operator's drain) */
	const char *slurm_conf; /* SLURM_CONF for scontrol */
	const char *node;       /* the Slurm node; NULL: $SLURMD_NODENAME, else the short host name */
	const char *root;       /* the kernel's view of the GPUs under this directory; NULL: / */
} ng_gpu_check_request;

/* The run's result (opaque). */
typedef struct ng_gpu_check_result ng_gpu_check_result;

/* Return values of ng_gpu_check_run. */
#define NG_GPU_CHECK_RAN 0       /* *out holds the result, whatever it found */
#define NG_GPU_CHECK_INPUT (-1)  /* req->smi_file is unusable: *out holds why; nothing checked */
#define NG_GPU_CHECK_NOMEM (-2)  /* out of memory before anything ran: *out is NULL */

/* Every field of req at its default, for mode. */
void ng_gpu_check_request_init(ng_gpu_check_request *req, ng_check_mode mode);

/* Runs the check. ctx may be NULL (the defaults). Returns one of the values
 * above; a result (NG_GPU_CHECK_RAN or NG_GPU_CHECK_INPUT) is the caller's
 * to release. A broken NVML, a hang or an unusable store is a result, never
 * an error. */
int ng_gpu_check_run(const ng_ctx *ctx, const ng_gpu_check_request *req,
                     ng_gpu_check_result **out);

/* Frees r and everything it holds. NULL is a no-op. */
void ng_gpu_check_result_release(ng_gpu_check_result *r);

/* "ok", "transient", "degraded", "fatal", "unresponsive" (node-wide: see
 * docs/epilog.md), "unknown" (NVML did not answer in time, or a GPU could
 * not be read) or "n/a" (nothing checked). */
const char *ng_gpu_check_severity(const ng_gpu_check_result *r);
/* Whether this node should be drained: only for degraded or fatal. */
bool ng_gpu_check_drains(const ng_gpu_check_result *r);
/* The exit status the command gives: 1 to drain, else 0. */
int ng_gpu_check_exit_status(const ng_gpu_check_result *r);
/* The drain reason, or why nothing was (or could be) checked; "" when
 * neither applies. */
const char *ng_gpu_check_reason(const ng_gpu_check_result *r);
/* How many GPUs were judged. */
size_t ng_gpu_check_count(const ng_gpu_check_result *r);
/* The result as `--json` prints it (schema nodegate/gpu-check/1), as text
 * the caller frees with free(); NULL when out of memory. */
char *ng_gpu_check_json(const ng_gpu_check_result *r);
/* Tells the context's --on-verdict program of the result, within what is
 * left of the run's deadline; nothing without one, or with ctx->no_land.
 * Its failure is one note to the context's sink; the verdict stands. */
void ng_gpu_check_tell(const ng_ctx *ctx, const ng_gpu_check_result *r);
/* "epilog", "prolog" or "health". */
const char *ng_gpu_check_mode_name(ng_check_mode mode);

/* Why a health check that found another alive (its run lock, flow/run_lock.h)
 * checked nothing: never a drain, never a failure, the run alive decides. */
#define NG_GPU_CHECK_BUSY "another nodegate health is still running on this node: " \
                          "nothing checked by this one"
/* That run's result as `--json` prints it, lock_path the lock held; as text
 * the caller frees with free(); NULL when out of memory. */
char *ng_gpu_check_busy_json(const char *lock_path);

#ifdef __cplusplus
}
#endif

#endif
