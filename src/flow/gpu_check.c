/* The GPU health check behind `nodegate epilog`, `prolog` and `health`.
 *
 * 1. Which GPUs: the job's (SLURM_JOB_GPUS or --gpus, parse/job_gpus.h), or
 *    the whole node. An empty or unusable set checks nothing and exits 0.
 * 2. A snapshot through NVML, in a child process, under a hard deadline.
 * 3. The kernel's Xids since the job started (or as --since says), attached
 *    to the GPUs by PCI address. A log that cannot be read is a note.
 * 4. The rules (judge/gpu_health.h), a record per GPU in the store when one
 *    is named, and the exit status the mode calls for: only degraded or
 *    fatal drains; anything not measured never does. The result is the
 *    caller's to print (cli/gpu_check_print.c); nothing here prints.
 *
 * What the run says about the node as a whole:
 *   ok, transient, degraded, fatal  what the rules found on the GPUs checked
 *   unknown  NVML did not answer in time, or a GPU could not be read and
 *            nothing worse was found: someone should look; no drain
 *   n/a      nothing was checked: no GPUs named, NVML missing or failing,
 *            none of the job's GPUs on this node: a safe no-op, no drain */
#include "flow/gpu_check.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flow/gpu_check_run.h"
#include "collect/nvml.h"
#include "core/json.h"
#include "core/read_file.h"
#include "land/hook.h"
#include "parse/nvidia_smi.h"

#define SNAPSHOT_MAX_BYTES (16u << 20)
#define TEARDOWN_WAIT_S 0.5 /* before reading again what a job seems to have left behind */
#define NVML_KEEP_BACK_S 1.0 /* of the deadline, for the kernel's view and Xids after a hang */

const char *ng_check_mode_name(ng_check_mode m)
{
	return m == NG_CHECK_EPILOG ? "epilog" : m == NG_CHECK_PROLOG ? "prolog" : "health";
}

struct bounded_call {
	child_fn fn;
	const struct ng_gpu_check_result *c;
	const void *arg;
};

static void bounded_trampoline(int wfd, const void *arg)
{
	const struct bounded_call *k = arg;
	k->fn(wfd, k->c, k->arg);
}

size_t ng_check_run_bounded_each(struct ng_gpu_check_result *c, const char *what, child_fn fn,
                                 const void *const *args, size_t n, size_t max, ng_bounded *b)
{
	struct bounded_call k[NG_BOUNDED_MAX];
	const void *kp[NG_BOUNDED_MAX] = {0}; /* zeroed: GCC cannot see n bounds the reads */
	if (n > NG_BOUNDED_MAX)
		n = NG_BOUNDED_MAX;
	for (size_t i = 0; i < n; i++) {
		k[i] = (struct bounded_call){fn, c, args[i]};
		kp[i] = &k[i];
	}
	size_t started = ng_run_bounded_each(c->t_end, n, bounded_trampoline, kp, max, b);
	for (size_t i = 0; i < n; i++)
		if (b[i].stuck_pid > 0)
			ng_check_note(c, "%s (process %d) did not end on SIGKILL: it is left to init (stuck in "
			                 "the driver?)",
			              what, b[i].stuck_pid);
	return started;
}

int ng_check_run_bounded(struct ng_gpu_check_result *c, const char *what, child_fn fn,
                         const void *arg, size_t max, ng_bounded *b)
{
	return ng_check_run_bounded_each(c, what, fn, &arg, 1, max, b) == 1 ? 0 : -1;
}

void ng_check_note(struct ng_gpu_check_result *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(c->notes, cJSON_CreateString(buf));
}

static void take_job_notes(struct ng_gpu_check_result *c)
{
	for (size_t i = 0; i < c->job->n_notes; i++)
		ng_check_note(c, "%s: %s", c->gpus_from, c->job->note[i]);
	if (c->job->notes_dropped)
		ng_check_note(c, "%s: %zu more item%s refused or skipped", c->gpus_from, c->job->notes_dropped,
		     c->job->notes_dropped == 1 ? "" : "s");
	c->job->n_notes = 0;
	c->job->notes_dropped = 0;
}

/* health.deadline_seconds (10 unless the policy says otherwise). */
static double policy_deadline_s(const ng_policy *pol)
{
	return pol->health_deadline_seconds > 0 ? (double)pol->health_deadline_seconds
	                                        : NG_CHECK_DEFAULT_DEADLINE_S;
}


/* ---- the snapshot --------------------------------------------------------------------- */

/* The child: NVML, and the snapshot on the pipe (core/gpu_wire.c). */
void ng_check_nvml_child(int wfd, const struct ng_gpu_check_result *c, const void *arg)
{
	const struct ng_check_nvml_arg *a = arg;
	ng_gpu_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		_exit(4);
	ng_nvml_opts o = {.lib_path = c->nvml_library, .indexes = a->n_idx ? a->idx : NULL,
	                  .n_indexes = a->n_idx, .minors = a->n_minors ? a->minors : NULL,
	                  .n_minors = a->n_minors, .identity_only = a->identity_only};
	ng_err err;
	if (ng_nvml_snapshot(&o, s, &err) < 0) {
		ng_gpu_snapshot_clear(s);
		s->nvml = NG_FIELD_FAILED;
		snprintf(s->nvml_error, sizeof s->nvml_error, "%.255s", err.msg);
	}
	ng_strbuf wire = {0};
	bool sent = ng_gpu_snapshot_pack(s, &wire) == 0 && ng_write_all(wfd, wire.s, wire.len) == 0;
	ng_strbuf_free(&wire);
	free(s);
	if (!sent)
		_exit(5);
}

int ng_check_nvml_answer(const ng_bounded *b, ng_gpu_snapshot *into, char *why, size_t cap)
{
	if (b->too_big || b->out.oom) {
		snprintf(why, cap, "the NVML query's answer was too large to read");
	} else if (b->reaped && WIFSIGNALED(b->status)) {
		snprintf(why, cap, "the NVML query ended on signal %d (%s)", WTERMSIG(b->status),
		         strsignal(WTERMSIG(b->status)));
	} else if (b->reaped && WIFEXITED(b->status) && WEXITSTATUS(b->status) != 0) {
		snprintf(why, cap, "the NVML query failed (exit status %d)", WEXITSTATUS(b->status));
	} else {
		ng_err err;
		int rc = b->out.s ? ng_gpu_snapshot_unpack(b->out.s, b->out.len, into, &err)
		                  : ng_fail(&err, "nothing came back");
		if (rc == 0)
			return 0;
		snprintf(why, cap, "the NVML query's answer could not be read: %.400s", err.msg);
	}
	return -1;
}

/* The snapshot of the node's GPUs (past their identity, only those of the
 * given minors, when any are given), read in a child
 * under the deadline. -1 with c->why (and c->timed_out) when there is none. */
static int collect_nvml(struct ng_gpu_check_result *c, const int *minors, size_t n_minors)
{
	struct ng_check_nvml_arg a = {.minors = minors, .n_minors = n_minors};
	ng_bounded b;
	int rc = -1;
	/* A hung NVML must leave time for the evidence that does not need it:
	 * the kernel's view and its Xids are read after, in what is kept back. */
	double t_end = c->t_end, keep_back = c->deadline_s * 0.25;
	double nvml_end = t_end - (keep_back < NVML_KEEP_BACK_S ? keep_back : NVML_KEEP_BACK_S);
	/* The whole node at once, in half of NVML's time: when a query hangs,
	 * the other half reads each GPU in a child of its own, so that one
	 * GPU's hang is that GPU's (unresponsive), not the node's. */
	double now = ng_check_now();
	c->t_end = now + (nvml_end - now) / 2;
	int started = ng_check_run_bounded(c, "the NVML query", ng_check_nvml_child, &a,
	                                   SNAPSHOT_MAX_BYTES, &b);
	c->t_end = nvml_end;
	if (started < 0) {
		snprintf(c->why, sizeof c->why, "could not start the NVML query: %s", strerror(b.error));
	} else if (!b.finished && !b.too_big) {
		if (ng_check_nvml_each(c, minors, n_minors) == 0) {
			rc = 0;
		} else {
			c->timed_out = true;
			snprintf(c->why, sizeof c->why, "NVML did not answer within %g s", c->deadline_s);
		}
	} else {
		rc = ng_check_nvml_answer(&b, c->snap, c->why, sizeof c->why);
	}
	c->t_end = t_end;
	ng_strbuf_free(&b.out);
	return rc < 0 ? -1 : 0;
}

/* ---- the run ------------------------------------------------------------------------ */

static void finish_judged(struct ng_gpu_check_result *c)
{
	/* The rules and the outcome they give, as a replay of the kept
	 * readings takes them again (flow/gpu_readings.h). */
	ng_health_judge(c->snap, c->history, c->n_history, &c->ctx.policy, c->health);
	c->judged = true;
	c->drain = c->health->drain;
	c->outcome = ng_gpu_check_outcome(c->health, ng_check_readings_run(c, true));
	if (c->health->n_gpus == 0) {
		c->drain = false;
		if (!c->why[0])
			snprintf(c->why, sizeof c->why, "no GPUs to check");
		return;
	}
	if (!c->drain && !c->nvml_answered && !c->smi_file) {
		if (!c->why[0])
			snprintf(c->why, sizeof c->why, "%s", c->health->unknown_why);
		return;
	}
	if (c->drain)
		ng_check_drain_reason(c);
	else if (c->health->severity == NG_HEALTH_UNKNOWN)
		snprintf(c->why, sizeof c->why, "%s",
		         c->health->unknown_why[0] ? c->health->unknown_why
		                                   : "a GPU could not be read: nothing was found wrong "
		                                     "with what could");
}

/* Which GPUs: sets c->gpus_from and fills c->job. Returns false when
 * nothing is to be checked (c->why says why). */
static bool job_set(struct ng_gpu_check_result *c)
{
	const char *text = c->gpus_opt;
	snprintf(c->gpus_from, sizeof c->gpus_from, "--gpus");
	if (!text) {
		text = getenv("SLURM_JOB_GPUS");
		snprintf(c->gpus_from, sizeof c->gpus_from, "SLURM_JOB_GPUS");
		if (!text) {
			snprintf(c->why, sizeof c->why,
			         "no GPUs to check: SLURM_JOB_GPUS is not set and no --gpus was given");
			return false;
		}
	}
	ng_job_gpus_parse(text, c->job);
	take_job_notes(c);
	if (c->job->n == 0) {
		if (c->job->n_items == 0)
			snprintf(c->why, sizeof c->why, "no GPUs to check: %s is empty", c->gpus_from);
		else
			snprintf(c->why, sizeof c->why, "no GPUs to check: %s names none this check can use",
			         c->gpus_from);
		return false;
	}
	return true;
}

static bool leftovers(const struct ng_gpu_check_result *c)
{
	for (size_t i = 0; i < c->snap->n_gpus; i++) {
		const ng_gpu_state *g = &c->snap->gpu[i];
		if (g->processes.state == NG_FIELD_OK && g->processes.value > 0)
			return true;
		if (g->memory_used_mib.state == NG_FIELD_OK && g->memory_total_mib.state == NG_FIELD_OK &&
		    (double)g->memory_used_mib.value >
		        c->ctx.policy.health_memory_used_share * (double)g->memory_total_mib.value)
			return true;
	}
	return false;
}

/* A job's processes may still be exiting when the Epilog starts: what
 * looks left behind is read once more, a moment later, within the
 * deadline. If that second reading fails, what was left behind is not
 * known, and is not judged (the first reading alone is no evidence). */
static void reread_after_teardown(struct ng_gpu_check_result *c, const int *minors, size_t n_minors)
{
	if (!leftovers(c))
		return;
	double left = c->t_end - ng_check_now() - NVML_KEEP_BACK_S;
	double nap = left / 4 < TEARDOWN_WAIT_S ? left / 4 : TEARDOWN_WAIT_S;
	ng_gpu_snapshot *first = malloc(sizeof *first);
	if (!first || nap < 0.05) {
		free(first);
		return;
	}
	memcpy(first, c->snap, sizeof *first);
	struct timespec ts = {(time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9)};
	nanosleep(&ts, NULL);
	if (collect_nvml(c, minors, n_minors) < 0 || c->snap->nvml != NG_FIELD_OK) {
		memcpy(c->snap, first, sizeof *first);
		c->timed_out = false;
		c->why[0] = '\0';
		for (size_t i = 0; i < c->snap->n_gpus; i++) {
			ng_gpu_state *g = &c->snap->gpu[i];
			g->processes = g->memory_used_mib = (ng_gpu_field){0};
			g->n_pids = 0;
		}
		ng_check_note(c, "GPU memory or processes left after the job, and the second reading (to let "
		                 "teardown finish) failed: not judged");
	} else {
		ng_check_note(c, "GPU memory or processes were left after the job: read again %.2f s later",
		              nap);
	}
	free(first);
}

/* The whole node from NVML, whatever the job: the job's GPUs are picked
 * afterwards by device minor (gpu_check_inventory.c), never by NVML's
 * order, which shifts when a GPU vanishes. */
static void run_nvml(struct ng_gpu_check_result *c)
{
	int minors[NG_GPU_MAX];
	size_t n_minors = 0;
	if (c->mode != NG_CHECK_HEALTH && ng_job_gpus_ordinals_only(c->job))
		for (size_t i = 0; i < c->job->n && n_minors < NG_GPU_MAX; i++)
			minors[n_minors++] = c->job->gpu[i].ordinal;
	if (collect_nvml(c, minors, n_minors) < 0)
		return;
	if (c->mode == NG_CHECK_EPILOG && c->snap->nvml == NG_FIELD_OK)
		reread_after_teardown(c, minors, n_minors);
	c->snap->after_job = c->mode == NG_CHECK_EPILOG;
	if (c->snap->nvml != NG_FIELD_OK) {
		snprintf(c->why, sizeof c->why, "nothing checked: NVML: %s",
		         c->snap->nvml_error[0] ? c->snap->nvml_error : "failed");
		c->snap->n_gpus = 0;
		return;
	}
	if (c->snap->nvml_error[0])
		ng_check_note(c, "NVML: %s", c->snap->nvml_error);
	if (c->snap->n_gpus == 0)
		snprintf(c->why, sizeof c->why, "no GPUs to check: NVML lists none on this node");
}

static int run_smi(struct ng_gpu_check_result *c)
{
	snprintf(c->gpus_from, sizeof c->gpus_from, "nvidia-smi -q file");
	size_t len;
	ng_err err;
	char *text = ng_read_file(c->smi_file, &len, &err);
	if (!text) {
		snprintf(c->why, sizeof c->why, "--from-nvidia-smi: %.480s", err.msg);
		return -1;
	}
	int rc = ng_nvidia_smi_parse(text, len, c->snap, &err);
	free(text);
	if (rc < 0) {
		snprintf(c->why, sizeof c->why, "--from-nvidia-smi %.200s: %.280s", c->smi_file, err.msg);
		return -1;
	}
	if (c->snap->nvml != NG_FIELD_OK && c->snap->n_gpus == 0)
		snprintf(c->why, sizeof c->why, "nothing checked: %.400s",
		         c->snap->nvml_error[0] ? c->snap->nvml_error : "nvidia-smi reached no GPU");
	else if (c->snap->n_gpus == 0)
		snprintf(c->why, sizeof c->why, "no GPUs to check: %.400s holds none", c->smi_file);
	return 0;
}

static void run_check(struct ng_gpu_check_result *c)
{
	c->t_end = ng_check_now() + c->deadline_s;
	c->snap->nvml = NG_FIELD_UNREAD;
	bool go = true;
	if (c->smi_file) {
		if (run_smi(c) < 0) {
			c->input_error = true;
			return;
		}
		/* A dump is from some node at some time: its Xids only when a log is named. */
		if (!c->kmsg_path)
			c->no_kmsg = true;
	} else if (c->mode == NG_CHECK_HEALTH) {
		snprintf(c->gpus_from, sizeof c->gpus_from, "node");
		run_nvml(c);
	} else if ((go = job_set(c))) {
		run_nvml(c);
	}
	if (go && !c->smi_file) {
		ng_check_load_history(c); /* the inventory and marks too: before the accounting */
		ng_check_account_gpus(c);
	}
	/* The kernel's Xids are read whatever NVML did: a fatal one is evidence
	 * of its own, for the GPUs in scope. */
	if (go && (c->snap->n_gpus || c->mode == NG_CHECK_HEALTH))
		ng_check_attach_xids(c);
	if (!go || c->snap->n_gpus == 0) {
		c->outcome = ng_gpu_check_outcome(c->health, ng_check_readings_run(c, false));
		if (!c->why[0])
			snprintf(c->why, sizeof c->why, "no GPUs to check");
		if (go)
			ng_check_keep_records(c); /* the run, whatever it found */
	} else {
		if (c->smi_file)
			ng_check_load_history(c);
		finish_judged(c);
		ng_check_keep_records(c);
		ng_check_land_slurm(c);
	}
	if (!c->health->n_gpus && c->why[0] == '\0')
		snprintf(c->why, sizeof c->why, "no GPUs to check");
}

ng_gpu_readings_run ng_check_readings_run(const struct ng_gpu_check_result *c, bool judged)
{
	return (ng_gpu_readings_run){.judged = judged, .nvml_answered = c->nvml_answered,
	                             .from_dump = c->smi_file != NULL, .timed_out = c->timed_out};
}

/* ---- the public entry (flow/gpu_check.h) ------------------------------- */

const char *ng_gpu_check_mode_name(ng_check_mode mode)
{
	return ng_check_mode_name(mode);
}

void ng_gpu_check_request_init(ng_gpu_check_request *req, ng_check_mode mode)
{
	*req = (ng_gpu_check_request){.mode = mode, .since_s = -1};
}

void ng_gpu_check_result_release(ng_gpu_check_result *c)
{
	if (!c)
		return;
	cJSON_Delete(c->notes);
	free(c->kview);
	free(c->job);
	free(c->snap);
	free(c->health);
	free(c);
}

int ng_gpu_check_run(const ng_ctx *ctx, const ng_gpu_check_request *req,
                     ng_gpu_check_result **out)
{
	*out = NULL;
	struct ng_gpu_check_result *c = calloc(1, sizeof *c);
	if (!c)
		return NG_GPU_CHECK_NOMEM;
	if (ctx)
		c->ctx = *ctx;
	else
		ng_policy_default(&c->ctx.policy);
	c->mode = req->mode;
	c->gpus_opt = req->gpus;
	c->deadline_s = req->deadline_s > 0 ? req->deadline_s : policy_deadline_s(&c->ctx.policy);
	c->kmsg_path = req->kmsg_path;
	c->no_kmsg = req->no_kmsg;
	c->since_s = req->since_s;
	c->nvml_library = req->nvml_library;
	c->store = req->store;
	c->no_store = req->no_store;
	c->smi_file = req->smi_file;
	c->land_slurm = req->land_slurm;
	c->slurm_conf = req->slurm_conf;
	c->node_name = req->node;
	c->root = req->root;
	c->job = calloc(1, sizeof *c->job);
	c->snap = calloc(1, sizeof *c->snap);
	c->health = calloc(1, sizeof *c->health);
	c->notes = cJSON_CreateArray();
	if (!c->job || !c->snap || !c->health || !c->notes) {
		ng_gpu_check_result_release(c);
		return NG_GPU_CHECK_NOMEM;
	}
	run_check(c);
	*out = c;
	return c->input_error ? NG_GPU_CHECK_INPUT : NG_GPU_CHECK_RAN;
}

const char *ng_gpu_check_severity(const ng_gpu_check_result *c)
{
	return c->outcome ? c->outcome : "n/a";
}

bool ng_gpu_check_drains(const ng_gpu_check_result *c)
{
	return c->drain;
}

int ng_gpu_check_exit_status(const ng_gpu_check_result *c)
{
	return ng_check_exit_status(c);
}

const char *ng_gpu_check_reason(const ng_gpu_check_result *c)
{
	return c->why;
}

size_t ng_gpu_check_count(const ng_gpu_check_result *c)
{
	return c->health ? c->health->n_gpus : 0;
}

char *ng_gpu_check_json(const ng_gpu_check_result *c)
{
	cJSON *doc = ng_check_result_json(c);
	char *text = doc ? cJSON_Print(doc) : NULL;
	cJSON_Delete(doc);
	if (!text)
		return NULL;
	/* cJSON's allocator is the C library's (cJSON_InitHooks is never
	 * called), so free() is the right release for the caller. */
	return text;
}

/* The hook has what is left of the deadline, like the store and the landing
 * before it: Slurm kills an Epilog past its own timeout, and a killed
 * Epilog drains the node. */
void ng_gpu_check_tell(const ng_ctx *ctx, const ng_gpu_check_result *c)
{
	if (!ctx || ctx->no_land || !ctx->on_verdict || !*ctx->on_verdict)
		return;
	const char *verb = ng_check_mode_name(c->mode);
	double left = c->t_end - ng_check_now();
	if (left < NG_HOOK_MIN_S) {
		ng_ctx_note(ctx, verb, "--on-verdict: not run: the deadline is spent (the verdict stands)");
		return;
	}
	cJSON *doc = ng_check_result_json(c);
	char *json = doc ? cJSON_PrintUnformatted(doc) : NULL;
	cJSON_Delete(doc);
	char note[512];
	int rc = ng_land_hook_run(ctx->on_verdict, json ? json : "{}", left, note, sizeof note);
	cJSON_free(json);
	if (rc != 0)
		ng_ctx_note(ctx, verb, "%s", note);
}
