/* The GPU health check behind `nodegate epilog`, `prolog` and `health`.
 *
 * 1. Which GPUs: the job's (SLURM_JOB_GPUS or --gpus, cli/job_gpus.h), or
 *    the whole node. An empty or unusable set checks nothing and exits 0.
 * 2. A snapshot through NVML, in a child process, under a hard deadline.
 * 3. The kernel's Xids since the job started (or as --since says), attached
 *    to the GPUs by PCI address. A log that cannot be read is a note.
 * 4. The rules (judge/gpu_health.h), one line per GPU or JSON, a record per
 *    GPU in the store when one is named, and the exit status the mode calls
 *    for: only degraded or fatal drains; anything not measured never does.
 *
 * What the run says about the node as a whole:
 *   ok, transient, degraded, fatal  what the rules found on the GPUs checked
 *   unknown  NVML did not answer in time, or a GPU could not be read and
 *            nothing worse was found: someone should look; no drain
 *   n/a      nothing was checked: no GPUs named, NVML missing or failing,
 *            none of the job's GPUs on this node: a safe no-op, no drain */
#include "cli/gpu_check.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/config_error.h"
#include "cli/gpu_check_run.h"
#include "cli/store_cli.h"
#include "collect/nvml.h"
#include "core/json.h"
#include "parse/nvidia_smi.h"

#define SNAPSHOT_MAX_BYTES (16u << 20)
#define TEARDOWN_WAIT_S 0.5 /* before reading again what a job seems to have left behind */
#define NVML_KEEP_BACK_S 1.0 /* of the deadline, for the kernel's view and Xids after a hang */

double ng_check_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *ng_check_mode_name(ng_check_mode m)
{
	return m == NG_CHECK_EPILOG ? "epilog" : m == NG_CHECK_PROLOG ? "prolog" : "health";
}

void ng_check_note(struct check *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(c->notes, cJSON_CreateString(buf));
}

static void take_job_notes(struct check *c)
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

struct nvml_arg {
	const int *idx;
	size_t n_idx;
	const int *minors; /* read past their identity only these minors' GPUs */
	size_t n_minors;
};

/* The child: NVML, and the snapshot as JSON on the pipe. */
static void nvml_child(int wfd, const struct check *c, const void *arg)
{
	const struct nvml_arg *a = arg;
	ng_gpu_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		_exit(4);
	ng_nvml_opts o = {.lib_path = c->library, .indexes = a->n_idx ? a->idx : NULL,
	                  .n_indexes = a->n_idx, .minors = a->n_minors ? a->minors : NULL,
	                  .n_minors = a->n_minors};
	ng_err err;
	if (ng_nvml_snapshot(&o, s, &err) < 0) {
		memset(s, 0, sizeof *s);
		s->nvml = NG_FIELD_FAILED;
		snprintf(s->nvml_error, sizeof s->nvml_error, "%.255s", err.msg);
	}
	cJSON *doc = ng_gpu_snapshot_to_json(s);
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
	bool sent = text && ng_check_write_all(wfd, text, strlen(text)) == 0;
	free(text);
	cJSON_Delete(doc);
	free(s);
	if (!sent)
		_exit(5);
}

/* The snapshot of the node's GPUs (past their identity, only those of the
 * given minors, when any are given), read in a child
 * under the deadline. -1 with c->why (and c->timed_out) when there is none. */
static int collect_nvml(struct check *c, const int *minors, size_t n_minors)
{
	struct nvml_arg a = {NULL, 0, minors, n_minors};
	struct bounded b;
	int rc = -1;
	/* A hung NVML must leave time for the evidence that does not need it:
	 * the kernel's view and its Xids are read after, in what is kept back. */
	double t_end = c->t_end, keep_back = c->deadline_s * 0.25;
	c->t_end -= keep_back < NVML_KEEP_BACK_S ? keep_back : NVML_KEEP_BACK_S;
	int started = ng_check_run_bounded(c, "the NVML query", nvml_child, &a, SNAPSHOT_MAX_BYTES, &b);
	c->t_end = t_end;
	if (started < 0) {
		snprintf(c->why, sizeof c->why, "could not start the NVML query: %s", strerror(b.error));
	} else if (!b.finished && !b.too_big) {
		c->timed_out = true;
		snprintf(c->why, sizeof c->why, "NVML did not answer within %g s", c->deadline_s);
	} else if (b.too_big || b.out.oom) {
		snprintf(c->why, sizeof c->why, "the NVML query's answer was too large to read");
	} else if (b.reaped && WIFSIGNALED(b.status)) {
		snprintf(c->why, sizeof c->why, "the NVML query ended on signal %d (%s)",
		         WTERMSIG(b.status), strsignal(WTERMSIG(b.status)));
	} else if (b.reaped && WIFEXITED(b.status) && WEXITSTATUS(b.status) != 0) {
		snprintf(c->why, sizeof c->why, "the NVML query failed (exit status %d)",
		         WEXITSTATUS(b.status));
	} else {
		ng_err err;
		cJSON *doc = b.out.s ? ng_json_parse(b.out.s, b.out.len, &err) : NULL;
		if (!b.out.s)
			ng_fail(&err, "nothing came back");
		rc = doc ? ng_gpu_snapshot_from_json(doc, c->snap, &err) : -1;
		if (rc < 0)
			snprintf(c->why, sizeof c->why,
			         "the NVML query's answer could not be read: %.400s", err.msg);
		cJSON_Delete(doc);
	}
	ng_strbuf_free(&b.out);
	return rc < 0 ? -1 : 0;
}

/* ---- the run ------------------------------------------------------------------------ */

static void finish_judged(struct check *c)
{
	ng_health_judge(c->snap, c->history, c->n_history, &c->cli->policy, c->health);
	c->drain = c->health->drain;
	if (c->health->n_gpus == 0) {
		c->outcome = "n/a";
		c->drain = false;
		if (!c->why[0])
			snprintf(c->why, sizeof c->why, "no GPUs to check");
		return;
	}
	c->outcome = ng_health_name(c->health->severity);
	if (!c->drain && !c->nvml_answered && !c->smi_file) {
		/* NVML did not answer and the kernel's evidence found nothing to
		 * drain for: what it would have been without that evidence. */
		c->outcome = c->timed_out ? "unknown" : "n/a";
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
static bool job_set(struct check *c)
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

static bool leftovers(const struct check *c)
{
	for (size_t i = 0; i < c->snap->n_gpus; i++) {
		const ng_gpu_state *g = &c->snap->gpu[i];
		if (g->processes.state == NG_FIELD_OK && g->processes.value > 0)
			return true;
		if (g->memory_used_mib.state == NG_FIELD_OK && g->memory_total_mib.state == NG_FIELD_OK &&
		    (double)g->memory_used_mib.value >
		        c->cli->policy.health_memory_used_share * (double)g->memory_total_mib.value)
			return true;
	}
	return false;
}

/* A job's processes may still be exiting when the Epilog starts: what
 * looks left behind is read once more, a moment later, within the
 * deadline. If that second reading fails, what was left behind is not
 * known, and is not judged (the first reading alone is no evidence). */
static void reread_after_teardown(struct check *c, const int *minors, size_t n_minors)
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
static void run_nvml(struct check *c)
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

static int run_smi(struct check *c)
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

static int run_check(struct check *c)
{
	c->t_end = ng_check_now() + c->deadline_s;
	c->snap->nvml = NG_FIELD_UNREAD;
	int rc = NG_EXIT_OK;
	bool go = true;
	if (c->smi_file) {
		if (run_smi(c) < 0) {
			ng_config_guard g;
			bool npd = c->e == &ng_cmd_npd_entry;
			ng_config_guard_for_check(c->cli, c->e->name, npd, c->store, c->no_store && !npd, &g);
			return ng_config_error(&g, NG_CONFIG_INPUT, "%s", c->why);
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
		c->outcome = c->timed_out ? "unknown" : "n/a";
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
	if (c->json) {
		cJSON *doc = ng_check_result_json(c);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		ng_check_print_text(c);
	}
	/* The hook has what is left of the deadline, like the store and the
	 * landing before it: Slurm kills an Epilog past its own timeout, and a
	 * killed Epilog drains the node. */
	if (c->cli->on_verdict && !c->cli->no_land)
		ng_cli_on_verdict_stderr(c->cli, c->e->name, ng_check_result_json(c),
		                         c->t_end - ng_check_now());
	rc = ng_check_exit_status(c);
	/* A reader that went away (SIGPIPE is ignored: src/cli/main.c) is an
	 * output error, a note; the verdict's exit status stands. */
	if (fflush(stdout) == EOF || ferror(stdout))
		fprintf(stderr, "nodegate %s: note: the report could not be written to standard output "
		                "(%s); the exit status is the verdict's\n",
		        c->e->name, strerror(errno));
	return rc;
}

/* ---- options ------------------------------------------------------------------------ */

static int parse_seconds(const char *s, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A mistake on the command line: kept in c->why for ng_gpu_check_main,
 * which reports it as a configuration error (cli/config_error.h). */
static int opt_error(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int opt_error(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return NG_EXIT_USAGE;
}

static int parse_opts(struct check *c, int argc, char **argv)
{
	const struct ng_cmd_entry *e = c->e;
	bool health = c->mode == NG_CHECK_HEALTH;
	struct ng_opt_parser op;
	ng_opt_begin_table(&op, e, health ? ng_check_health_opts : ng_check_job_opts, argc, argv);
	op.keep_errors = true; /* reported as a configuration error (cli/config_error.h) */
	int ch;
	while ((ch = ng_opt_next(&op)) != NG_OPT_END) {
		if (ch == NG_OPT_ERROR) {
			/* The other kind of check's option says whose it is. */
			const char *typed = argv[op.next - 1];
			if (health && strncmp(typed, "--gpus", 6) == 0 && (!typed[6] || typed[6] == '='))
				return opt_error(c, "--gpus is for epilog and prolog: health checks "
				                    "the whole node");
			if (!health && strncmp(typed, "--from-nvidia-smi", 17) == 0 &&
			    (!typed[17] || typed[17] == '='))
				return opt_error(c, "--from-nvidia-smi is for health: a saved dump is "
				                    "not a job's GPUs");
			return opt_error(c, "%s", op.why);
		}
		switch (ch) {
		case NG_OPT_EXIT: return op.status;
		case 'j': c->json = true; break;
		case NG_CHECK_O_GPUS: c->gpus_opt = op.arg; break;
		case NG_CHECK_O_DEADLINE:
			if (parse_seconds(op.arg, 3600, &c->deadline_s) < 0 || c->deadline_s <= 0)
				return opt_error(c, "--deadline takes seconds, more than 0 and at most "
				                             "3600");
			break;
		case NG_CHECK_O_KMSG: c->kmsg_path = op.arg; break;
		case NG_CHECK_O_NO_KMSG: c->no_kmsg = true; break;
		case NG_CHECK_O_SINCE:
			if (parse_seconds(op.arg, 10 * 366 * 86400.0, &c->since_s) < 0)
				return opt_error(c, "--since takes seconds ago, 0 or more");
			break;
		case NG_CHECK_O_LIBRARY: c->library = op.arg; break;
		case 's': c->store = op.arg; break;
		case NG_CHECK_O_NO_STORE: c->no_store = true; break;
		case NG_CHECK_O_SMI: c->smi_file = op.arg; break;
		case NG_CHECK_O_LAND:
			if (strcmp(op.arg, "slurm") == 0)
				c->land_slurm = true;
			else if (strcmp(op.arg, "none") == 0)
				c->land_slurm = false;
			else
				return opt_error(c, "--land takes slurm or none");
			break;
		case NG_CHECK_O_SLURM_CONF: c->slurm_conf = op.arg; break;
		case NG_CHECK_O_NODE: c->node_name = op.arg; break;
		case NG_CHECK_O_ROOT: c->root = op.arg; break;
		}
	}
	if (op.next < argc)
		return opt_error(c, "unexpected argument \"%s\"", argv[op.next]);
	if (c->no_kmsg && c->kmsg_path)
		return opt_error(c, "--kmsg and --no-kmsg: use one or the other");
	if (c->land_slurm && c->smi_file)
		return opt_error(c, "--land slurm with --from-nvidia-smi: a saved dump is not "
		                             "this node's GPUs now; nothing would be drained");
	return -1;
}

int ng_gpu_check_main(struct ng_cli *cli, const struct ng_cmd_entry *e, ng_check_mode mode,
                      int argc, char **argv)
{
	struct check c = {.cli = cli, .e = e, .mode = mode, .since_s = -1};
	c.deadline_s = policy_deadline_s(&cli->policy);
	int rc = parse_opts(&c, argc, argv);
	if (rc == NG_EXIT_USAGE) {
		/* Slurm drains the node on any non-zero Epilog or Prolog status: a
		 * mistake in the hook's command line must not drain the fleet. */
		ng_config_guard g;
		bool npd = e == &ng_cmd_npd_entry; /* npd adds --no-store for the check, not for this */
		ng_config_guard_for_check(cli, e->name, npd, c.store, c.no_store && !npd, &g);
		return ng_config_error(&g, NG_CONFIG_OPTION, "%s", c.why);
	}
	if (rc >= 0)
		return rc;
	c.job = calloc(1, sizeof *c.job);
	c.snap = calloc(1, sizeof *c.snap);
	c.health = calloc(1, sizeof *c.health);
	c.notes = cJSON_CreateArray();
	if (!c.job || !c.snap || !c.health || !c.notes) {
		fprintf(stderr, "nodegate %s: out of memory: nothing checked\n", e->name);
		rc = NG_EXIT_OK;
	} else {
		rc = run_check(&c);
	}
	cJSON_Delete(c.notes);
	free(c.kview);
	free(c.job);
	free(c.snap);
	free(c.health);
	return rc;
}
