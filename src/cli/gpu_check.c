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
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/job_gpus.h"
#include "cli/store_cli.h"
#include "collect/nvml.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "judge/gpu_health.h"
#include "land/slurm.h"
#include "parse/nvidia_smi.h"
#include "parse/xid.h"

#define KMSG_MAX_BYTES (32u << 20) /* more than any kernel ring buffer */
#define XID_EVENTS_MAX 4096        /* the newest are kept */
#define SNAPSHOT_MAX_BYTES (16u << 20)
#define REAP_WAIT_S 0.2 /* after SIGKILL: a child stuck in the driver may never die */

struct check {
	struct ng_cli *cli;
	const struct ng_cmd_entry *e;
	ng_check_mode mode;

	/* options */
	const char *gpus_opt;
	double deadline_s;
	const char *kmsg_path;
	bool no_kmsg;
	double since_s; /* < 0: the mode's default */
	const char *library;
	const char *store;
	bool no_store;
	const char *smi_file;
	bool json;
	bool land_slurm;         /* --land slurm: drain through scontrol */
	const char *slurm_conf;  /* --slurm-conf */
	const char *node_name;   /* --node */

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
	size_t n_xid, n_xid_elsewhere;
	/* each GPU's counters at an earlier check, from the store, for rates */
	ng_gpu_history history[NG_GPU_MAX];
	char history_uuid[NG_GPU_MAX][96];
	size_t n_history;
	/* landing through scontrol, when asked */
	bool landed;      /* ng_slurm_drain ran */
	int land_rc;      /* its return */
	ng_slurm_result slurm;
	char land_error[512];
};

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *mode_name(ng_check_mode m)
{
	return m == NG_CHECK_EPILOG ? "epilog" : m == NG_CHECK_PROLOG ? "prolog" : "health";
}

static void note(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct check *c, const char *fmt, ...)
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
		note(c, "%s: %s", c->gpus_from, c->job->note[i]);
	if (c->job->notes_dropped)
		note(c, "%s: %zu more item%s refused or skipped", c->gpus_from, c->job->notes_dropped,
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

/* ---- work in a child, under the deadline ------------------------------------------- */

/* A fork, not a thread or a timer, is how a hang inside a library is
 * bounded: an NVML call that never returns (a GPU fallen off the bus, a
 * driver wedged in an ioctl) cannot be interrupted or cancelled from the
 * same process, and a thread stuck in it would keep the process alive and
 * its locks held. A child can be killed, with everything it started, and
 * the parent still answers in time. A child stuck in uninterruptible sleep
 * inside the driver may not die even on SIGKILL: it is not waited for past
 * a moment, and init reaps it when it finally ends. The store is written
 * the same way, so a locked SQLite file or an unreachable PostgreSQL server
 * cannot hold the node past the deadline either (Slurm would kill the hook,
 * and a killed Epilog drains the node). */

struct bounded {
	ng_strbuf out; /* what the child wrote on its pipe */
	bool finished; /* it closed the pipe before the deadline */
	bool too_big;  /* it wrote more than the cap */
	bool reaped;
	int status; /* its wait status, when reaped */
	int error;  /* errno when no child could be started */
};

typedef void (*child_fn)(int wfd, const struct check *c, const void *arg);

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Waits at most wait_s for pid to end. The pipe's end usually comes a few
 * microseconds before the child can be reaped: the first naps are short. */
static bool reap(pid_t pid, double wait_s, int *status)
{
	double until = mono_now() + wait_s;
	long nap_ns = 20 * 1000;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid;
		if (mono_now() >= until)
			return false;
		struct timespec ts = {0, nap_ns};
		nanosleep(&ts, NULL);
		if (nap_ns < 5 * 1000 * 1000)
			nap_ns *= 2;
	}
}

/* Runs fn in a child of its own process group; collects what it writes
 * until it closes its pipe or c->t_end passes, then makes sure it is gone.
 * -1 (b->error set) only when no child could be started. */
static int run_bounded(struct check *c, const char *what, child_fn fn, const void *arg,
                       size_t max_bytes, struct bounded *b)
{
	memset(b, 0, sizeof *b);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		b->error = errno;
		return -1;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		b->error = errno;
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* Never returns into the command: no atexit handlers, no stdio
		 * buffers of the parent's flushed twice. If the parent is killed
		 * (Slurm's own timeout), so is this. */
		setpgid(0, 0);
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		fn(fds[1], c, arg);
		_exit(0);
	}
	setpgid(pid, pid); /* both sides, so the group exists before either acts */
	close(fds[1]);

	for (;;) {
		double left = c->t_end - mono_now();
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int r = poll(&p, 1, (int)ceil(left * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		char chunk[65536];
		ssize_t n = read(fds[0], chunk, sizeof chunk);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			b->finished = true;
			break;
		}
		if (b->out.len + (size_t)n > max_bytes) {
			b->too_big = true;
			break;
		}
		ng_strbuf_add(&b->out, chunk, (size_t)n);
	}
	close(fds[0]);
	if (b->finished) {
		double left = c->t_end - mono_now();
		b->reaped = reap(pid, left > 0 ? left : 0, &b->status);
	}
	if (!b->reaped) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		b->reaped = reap(pid, REAP_WAIT_S, &b->status);
		if (!b->reaped)
			note(c, "%s (process %d) did not end on SIGKILL: it is left to init (stuck in the "
			        "driver?)",
			     what, (int)pid);
	}
	return 0;
}

/* ---- the snapshot --------------------------------------------------------------------- */

struct nvml_arg {
	const int *idx;
	size_t n_idx;
};

/* The child: NVML, and the snapshot as JSON on the pipe. */
static void nvml_child(int wfd, const struct check *c, const void *arg)
{
	const struct nvml_arg *a = arg;
	ng_gpu_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		_exit(4);
	ng_nvml_opts o = {.lib_path = c->library, .indexes = a->n_idx ? a->idx : NULL,
	                  .n_indexes = a->n_idx};
	ng_err err;
	if (ng_nvml_snapshot(&o, s, &err) < 0) {
		memset(s, 0, sizeof *s);
		s->nvml = NG_FIELD_FAILED;
		snprintf(s->nvml_error, sizeof s->nvml_error, "%.255s", err.msg);
	}
	cJSON *doc = ng_gpu_snapshot_to_json(s);
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
	bool sent = text && write_all(wfd, text, strlen(text)) == 0;
	free(text);
	cJSON_Delete(doc);
	free(s);
	if (!sent)
		_exit(5);
}

/* The snapshot of the GPUs idx names (all when n_idx is 0), read in a child
 * under the deadline. -1 with c->why (and c->timed_out) when there is none. */
static int collect_nvml(struct check *c, const int *idx, size_t n_idx)
{
	struct nvml_arg a = {idx, n_idx};
	struct bounded b;
	int rc = -1;
	if (run_bounded(c, "the NVML query", nvml_child, &a, SNAPSHOT_MAX_BYTES, &b) < 0) {
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

/* Keeps the GPUs keep[] marks, in order. */
static void keep_only(ng_gpu_snapshot *s, const bool keep[NG_GPU_MAX])
{
	size_t o = 0;
	for (size_t i = 0; i < s->n_gpus && i < NG_GPU_MAX; i++) {
		if (!keep[i])
			continue;
		if (o != i)
			s->gpu[o] = s->gpu[i];
		o++;
	}
	s->n_gpus = o;
}

/* ---- kernel Xids ------------------------------------------------------------------ */

struct xid_events {
	ng_xid_event *ev;
	size_t n, cap, dropped;
};

static void collect_xid(const ng_xid_event *e, void *arg)
{
	struct xid_events *x = arg;
	if (x->n == x->cap) {
		if (x->cap < XID_EVENTS_MAX) {
			size_t cap = x->cap ? x->cap * 2 : 64;
			ng_xid_event *ev = realloc(x->ev, cap * sizeof *ev);
			if (!ev) {
				x->dropped++;
				return;
			}
			x->ev = ev;
			x->cap = cap;
		} else {
			/* Full: drop the older half, keep the newest. */
			size_t half = x->n / 2;
			memmove(x->ev, x->ev + half, (x->n - half) * sizeof *x->ev);
			x->n -= half;
			x->dropped += half;
		}
	}
	x->ev[x->n++] = *e;
}

/* Reads the kernel log without ever blocking: /dev/kmsg one record per
 * read until EAGAIN, a file to its end, at most KMSG_MAX_BYTES. */
static char *read_log(struct check *c, const char *path, bool *is_device, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		note(c, "kernel log not read (%s: %s): Xids not checked", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	*is_device = fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
	ng_strbuf b = {0};
	char rec[8192];
	bool cut = false;
	for (;;) {
		if (mono_now() >= c->t_end) {
			cut = true;
			break;
		}
		ssize_t n = read(fd, rec, sizeof rec);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			continue; /* /dev/kmsg: records overwritten while reading */
		if (n < 0 && errno == EAGAIN)
			break; /* the end of the buffer */
		if (n < 0) {
			note(c, "kernel log %s: read failed (%s): Xids only from what was read", path,
			     strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > KMSG_MAX_BYTES) {
			cut = true;
			break;
		}
		ng_strbuf_add(&b, rec, (size_t)n);
		if (*is_device && rec[n - 1] != '\n')
			ng_strbuf_addc(&b, '\n');
	}
	close(fd);
	if (cut)
		note(c, "kernel log %s: read cut short (deadline or size): Xids only from what was read",
		     path);
	if (b.oom) {
		ng_strbuf_free(&b);
		note(c, "kernel log %s: out of memory: Xids not checked", path);
		return NULL;
	}
	*len = b.len;
	return b.s ? b.s : calloc(1, 1);
}

/* The newest kernel time in a saved log: /dev/kmsg records
 * ("6,1234,5678901,-;...") and dmesg's "[ 5678.901234]". -1 when none. */
static int64_t newest_log_usec(const char *text, size_t len)
{
	int64_t newest = -1;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		int64_t t = -1;
		const char *q = p;
		if (q < eol && *q == '[') {
			q++;
			while (q < eol && *q == ' ')
				q++;
			int64_t s = 0, us = 0;
			int nd = 0, nf = 0;
			while (q < eol && *q >= '0' && *q <= '9' && nd < 12)
				s = s * 10 + (*q++ - '0'), nd++;
			if (nd && q < eol && *q == '.') {
				q++;
				while (q < eol && *q >= '0' && *q <= '9' && nf < 6)
					us = us * 10 + (*q++ - '0'), nf++;
				if (nf == 6 && q < eol && *q == ']')
					t = s * 1000000 + us;
			}
		} else {
			/* priority,sequence,time,flags; */
			int field = 0;
			int64_t v = 0;
			int nd = 0;
			while (q < eol && field < 3) {
				if (*q >= '0' && *q <= '9' && nd < 18) {
					v = v * 10 + (*q - '0');
					nd++;
				} else if (*q == ',' && nd) {
					if (field == 2)
						break;
					field++;
					v = 0;
					nd = 0;
				} else {
					break;
				}
				q++;
			}
			if (field == 2 && nd && q < eol && *q == ',')
				t = v;
		}
		if (t > newest)
			newest = t;
		p = eol + 1;
	}
	return newest;
}

static double default_since_s(const struct check *c)
{
	if (c->mode == NG_CHECK_HEALTH)
		return -1; /* the whole buffer */
	/* epilog: the job's run time when Slurm says when it started (and it is
	 * sane); prolog, or no start time: the last hour. */
	const char *start = c->mode == NG_CHECK_EPILOG ? getenv("SLURM_JOB_START_TIME") : NULL;
	if (start && *start) {
		char *endp;
		errno = 0;
		long long t = strtoll(start, &endp, 10);
		time_t now = time(NULL);
		if (!errno && endp != start && !*endp && t > 0 && t <= (long long)now &&
		    (long long)now - t < 366LL * 86400)
			return (double)((long long)now - t) + 60; /* a minute's slack */
	}
	return NG_CHECK_EPILOG_SINCE_S;
}

static void attach_xids(struct check *c)
{
	if (c->no_kmsg)
		return;
	const char *path = c->kmsg_path;
	if (!path) {
		const char *env = getenv("NODEGATE_KMSG");
		path = env && *env ? env : "/dev/kmsg";
	}
	bool is_device = false;
	size_t len = 0;
	char *text = read_log(c, path, &is_device, &len);
	if (!text)
		return;
	double since_s = c->since_s >= 0 ? c->since_s : default_since_s(c);
	int64_t since_usec = -1;
	if (since_s >= 0) {
		int64_t ref = is_device ? (int64_t)(mono_now() * 1e6) : newest_log_usec(text, len);
		if (ref >= 0) {
			since_usec = ref - (int64_t)(since_s * 1e6);
			if (since_usec < 0)
				since_usec = -1;
		}
	}
	struct xid_events x = {0};
	ng_xid_scan(text, len, since_usec, collect_xid, &x);
	free(text);
	c->n_xid = x.n;
	if (x.dropped)
		note(c, "%zu older Xid lines left out (only the newest %zu are attached)", x.dropped,
		     x.n);
	if (x.n) {
		c->n_xid_elsewhere = ng_xid_attach(c->snap, x.ev, x.n);
		if (c->n_xid_elsewhere)
			note(c, "%zu Xid line%s for GPUs this check does not cover: ignored",
			     c->n_xid_elsewhere, c->n_xid_elsewhere == 1 ? "" : "s");
	}
	free(x.ev);
}

/* ---- landing ------------------------------------------------------------------------ */

/* Where a drain lands, as the result's "drain_by". epilog and prolog drain
 * through their exit status: Slurm drains the node when Epilog or Prolog
 * exits non-zero. `health` runs as HealthCheckProgram, whose exit status
 * Slurm only logs: it prints the reason and exits 1 for whoever runs it.
 * The scontrol adapter (`scontrol update NodeName=... State=DRAIN
 * Reason=...` through collect/spawn.h, from src/land/) is to be called from
 * here, for `health` only and only on degraded or fatal; until then a health
 * drain is reported, not landed. */
static const char *land(const struct check *c)
{
	if (!c->drain)
		return "none";
	if (c->landed && c->mode == NG_CHECK_HEALTH)
		return c->land_rc == 0 ? "scontrol" : c->land_rc == 1 ? "scontrol (left alone)"
		                                                      : "scontrol (failed)";
	if (c->landed)
		return "exit status (Slurm drains the node); scontrol set the reason first";
	if (c->mode == NG_CHECK_HEALTH)
		return "reported (the caller drains; --land slurm drains through scontrol)";
	return "exit status (Slurm drains the node)";
}

/* --land slurm: drains the node through scontrol with the specific reason.
 * health needs it (HealthCheckProgram's exit status only logs); epilog and
 * prolog still exit non-zero (Slurm drains with "Epilog error" or "Prolog
 * error"), and set nodegate's reason first so the operator sees why. The
 * hooks run under Slurm's own timeout: their landing gets a shorter budget.
 * An operator's drain is never overwritten (land/slurm.h). */
static void land_slurm(struct check *c)
{
	if (!c->drain || !c->land_slurm || c->cli->no_land)
		return;
	ng_slurm_opts o = {.slurm_conf = c->slurm_conf, .node = c->node_name};
	if (c->mode != NG_CHECK_HEALTH) {
		o.call_timeout_s = 5;
		o.budget_s = 10;
		o.readback_s = 3;
	}
	ng_err err = {{0}};
	c->land_rc = ng_slurm_drain(&o, c->why, &c->slurm, &err);
	c->landed = true;
	if (c->land_rc < 0)
		snprintf(c->land_error, sizeof c->land_error, "%s", err.msg);
}

static cJSON *landing_json(const struct check *c)
{
	cJSON *o = cJSON_CreateObject();
	const ng_slurm_result *r = &c->slurm;
	cJSON_AddStringToObject(o, "to", "slurm");
	cJSON_AddStringToObject(o, "result", c->land_rc == 0   ? "done"
	                                     : c->land_rc == 1 ? "left-alone"
	                                                       : "failed");
	cJSON_AddStringToObject(o, "node", r->node);
	cJSON_AddStringToObject(o, "reason", r->reason);
	cJSON_AddStringToObject(o, "state_before", r->state_before);
	cJSON_AddStringToObject(o, "reason_before", r->reason_before);
	cJSON_AddStringToObject(o, "state_after", r->state_after);
	cJSON_AddStringToObject(o, "reason_after", r->reason_after);
	cJSON_AddBoolToObject(o, "changed", r->changed);
	cJSON_AddBoolToObject(o, "left_alone", r->left_alone);
	cJSON_AddNumberToObject(o, "calls", r->calls);
	cJSON_AddStringToObject(o, "message", c->land_rc < 0 && c->land_error[0] ? c->land_error
	                                                                          : r->message);
	return o;
}

/* ---- output ------------------------------------------------------------------------ */

static const ng_gpu_state *state_of(const struct check *c, size_t i)
{
	return i < c->snap->n_gpus ? &c->snap->gpu[i] : NULL;
}

/* The drain reason: the worst GPU's worst reason, and how many GPUs more. */
static void drain_reason(struct check *c)
{
	const ng_node_health *h = c->health;
	const ng_gpu_verdict *worst = NULL;
	size_t n_bad = 0;
	for (size_t i = 0; i < h->n_gpus; i++) {
		const ng_gpu_verdict *v = &h->gpu[i];
		if (v->severity != NG_HEALTH_DEGRADED && v->severity != NG_HEALTH_FATAL)
			continue;
		n_bad++;
		if (!worst || (v->severity == NG_HEALTH_FATAL && worst->severity != NG_HEALTH_FATAL))
			worst = v;
	}
	if (!worst) {
		snprintf(c->why, sizeof c->why, "nodegate: %s", ng_health_name(h->severity));
		return;
	}
	const ng_health_reason *r = NULL;
	for (size_t k = 0; k < worst->n_reasons; k++)
		if (worst->reason[k].severity == worst->severity) {
			r = &worst->reason[k];
			break;
		}
	char more[48] = "";
	if (n_bad > 1)
		snprintf(more, sizeof more, " (and %zu more GPU%s)", n_bad - 1, n_bad > 2 ? "s" : "");
	snprintf(c->why, sizeof c->why, "nodegate: GPU %d %s %s: %s%s%s%s", worst->index, worst->bus,
	         ng_health_name(worst->severity), r && r->signal ? r->signal : "",
	         r && r->signal ? ": " : "", r ? r->text : "", more);
}

static cJSON *gpu_json(const struct check *c, size_t i)
{
	const ng_gpu_verdict *v = &c->health->gpu[i];
	const ng_gpu_state *g = state_of(c, i);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", v->index);
	cJSON_AddStringToObject(o, "uuid", v->uuid);
	cJSON_AddStringToObject(o, "bus", v->bus);
	if (g)
		cJSON_AddStringToObject(o, "name", g->name);
	cJSON_AddStringToObject(o, "severity", ng_health_name(v->severity));
	cJSON *rs = cJSON_AddArrayToObject(o, "reasons");
	for (size_t k = 0; k < v->n_reasons; k++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "severity", ng_health_name(v->reason[k].severity));
		cJSON_AddStringToObject(r, "signal", v->reason[k].signal ? v->reason[k].signal : "");
		cJSON_AddStringToObject(r, "text", v->reason[k].text);
		cJSON_AddItemToArray(rs, r);
	}
	if (v->reasons_truncated)
		cJSON_AddBoolToObject(o, "reasons_truncated", true);
	if (g && g->n_xid) {
		cJSON *xs = cJSON_AddArrayToObject(o, "xids");
		for (size_t k = 0; k < g->n_xid; k++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "code", g->xid[k].code);
			cJSON_AddStringToObject(x, "message", g->xid[k].message);
			cJSON_AddItemToArray(xs, x);
		}
	}
	return o;
}

static int exit_status(const struct check *c)
{
	return c->drain ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

static cJSON *result_json(const struct check *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", "nodegate/gpu-check/1");
	cJSON_AddStringToObject(o, "mode", mode_name(c->mode));
	cJSON_AddStringToObject(o, "severity", c->outcome);
	cJSON_AddBoolToObject(o, "drain", c->drain);
	cJSON_AddStringToObject(o, "drain_by", land(c));
	if (c->landed)
		cJSON_AddItemToObject(o, "landing", landing_json(c));
	cJSON_AddNumberToObject(o, "exit", exit_status(c));
	cJSON_AddStringToObject(o, "reason", c->why);
	cJSON_AddStringToObject(o, "gpus_from", c->gpus_from);
	cJSON_AddNumberToObject(o, "checked", c->health ? (double)c->health->n_gpus : 0);
	cJSON_AddNumberToObject(o, "deadline_seconds", c->deadline_s);
	cJSON_AddBoolToObject(o, "timed_out", c->timed_out);
	if (c->snap && c->snap->source[0])
		cJSON_AddStringToObject(o, "source", c->snap->source);
	if (c->snap && c->snap->driver[0])
		cJSON_AddStringToObject(o, "driver", c->snap->driver);
	cJSON_AddNumberToObject(o, "xids_read", (double)c->n_xid);
	cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
	for (size_t i = 0; c->health && i < c->health->n_gpus; i++)
		cJSON_AddItemToArray(gs, gpu_json(c, i));
	cJSON_AddItemReferenceToObject(o, "notes", c->notes);
	return o;
}

static void print_text(const struct check *c)
{
	for (size_t i = 0; c->health && i < c->health->n_gpus; i++) {
		const ng_gpu_verdict *v = &c->health->gpu[i];
		printf("GPU %-3d %-10s %-40s %-*s", v->index, v->bus[0] ? v->bus : "-",
		       v->uuid[0] ? v->uuid : "-", v->n_reasons ? 9 : 0, ng_health_name(v->severity));
		for (size_t k = 0; k < v->n_reasons; k++)
			printf("%s%s: %s", k ? "; " : " ", v->reason[k].signal ? v->reason[k].signal : "",
			       v->reason[k].text);
		if (v->reasons_truncated)
			printf("; ...");
		printf("\n");
	}
	const cJSON *n;
	cJSON_ArrayForEach(n, c->notes)
		printf("note: %s\n", n->valuestring);
	size_t checked = c->health ? c->health->n_gpus : 0;
	/* The verdict stays the last line: what landing did comes before it. */
	if (c->landed)
		printf("%s: landing: slurm: %s\n", mode_name(c->mode),
		       c->land_rc < 0 && c->land_error[0] ? c->land_error : c->slurm.message);
	if (c->drain)
		printf("%s: %s: drain: %s\n", mode_name(c->mode), c->outcome, c->why);
	else if (c->why[0])
		printf("%s: %s: %s: no drain\n", mode_name(c->mode), c->outcome, c->why);
	else
		printf("%s: %s: %zu GPU%s checked: no drain\n", mode_name(c->mode), c->outcome, checked,
		       checked == 1 ? "" : "s");
}

/* ---- the store (optional) --------------------------------------------------------- */

static const char *named_store(const struct check *c)
{
	if (c->no_store)
		return NULL;
	if (c->store)
		return c->store;
	if (c->cli->store_spec)
		return c->cli->store_spec;
	const char *env = getenv("NODEGATE_STORE");
	return env && *env ? env : NULL;
}

#define STORE_MIN_S 0.1 /* less of the deadline left than this: the store is skipped */

/* The node as the store knows it between checks. */
static void store_node(char host[256])
{
	host[0] = '\0';
	if (gethostname(host, 255) != 0 || !host[0])
		snprintf(host, 256, "localhost");
	host[255] = '\0';
}

/* A sum of counters the way the rules take it: -1 when one failed or none
 * was read, so a later rate is never taken against a zero that was not. */
static int64_t counter_total(const ng_gpu_field *const *f, size_t n)
{
	uint64_t sum = 0;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (f[i]->state == NG_FIELD_FAILED)
			return -1;
		if (f[i]->state == NG_FIELD_OK) {
			sum += f[i]->value;
			any = true;
		}
	}
	return any && sum <= INT64_MAX ? (int64_t)sum : -1;
}

static void counters_of(const ng_gpu_state *g, int64_t at, ng_store_gpu_counters *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->uuid, sizeof out->uuid, "%s", g->uuid);
	out->at = at;
	const ng_gpu_field *pages[] = {&g->retired_pages_sbe, &g->retired_pages_dbe};
	const ng_gpu_field *rows[] = {&g->remap_corrected, &g->remap_uncorrected};
	const ng_gpu_field *replays[] = {&g->pcie_replays};
	const ng_gpu_field *links[NG_NVLINK_MAX * 3];
	size_t n = 0;
	for (size_t k = 0; k < g->n_links && k < NG_NVLINK_MAX; k++) {
		links[n++] = &g->link[k].replay_errors;
		links[n++] = &g->link[k].recovery_errors;
		links[n++] = &g->link[k].crc_errors;
	}
	out->retired_pages = counter_total(pages, 2);
	out->remapped_rows = counter_total(rows, 2);
	out->pcie_replays = counter_total(replays, 1);
	out->nvlink_errors = n ? counter_total(links, n) : -1;
}

/* The child's side of reading history: one line per GPU with a past
 * sample, "uuid at retired remapped replays nvlink" (-1: not read then). */
static void history_child(int wfd, const struct check *c, const void *arg)
{
	ng_err err;
	ng_store *st;
	if (ng_store_open(arg, &st, &err) < 0)
		return; /* no history: no rates, and keep_records will say why */
	char host[256];
	store_node(host);
	int64_t now = ng_cli_now();
	int64_t before = now - (int64_t)(c->cli->policy.health_rate_min_hours * 3600);
	for (size_t i = 0; i < c->snap->n_gpus; i++) {
		const char *uuid = c->snap->gpu[i].uuid;
		ng_store_gpu_counters p;
		if (!uuid[0] || strchr(uuid, ' ') ||
		    ng_store_gpu_counters_past(st, host, uuid, before, now, &p, &err) != 1)
			continue;
		char line[256];
		int len = snprintf(line, sizeof line, "%s %lld %lld %lld %lld %lld\n", uuid,
		                   (long long)(now - p.at), (long long)p.retired_pages,
		                   (long long)p.remapped_rows, (long long)p.pcie_replays,
		                   (long long)p.nvlink_errors);
		if (len > 0 && (size_t)len < sizeof line)
			write_all(wfd, line, (size_t)len);
	}
	ng_store_close(st);
}

/* Each GPU's counters at an earlier check, for the rules' rates. Bounded
 * like every store access here; no history is no rate, never a fault. */
static void load_history(struct check *c)
{
	const char *spec = named_store(c);
	if (!spec || c->t_end - mono_now() < STORE_MIN_S)
		return;
	struct bounded b;
	if (run_bounded(c, "the history read", history_child, spec, 1u << 20, &b) < 0 ||
	    !b.finished) {
		note(c, "store: earlier counters not read in time: no rates this run");
		ng_strbuf_free(&b.out);
		return;
	}
	for (const char *p = b.out.s; p && *p && c->n_history < NG_GPU_MAX;) {
		char uuid[96];
		long long age, v[4];
		int used = 0;
		if (sscanf(p, "%95s %lld %lld %lld %lld %lld%n", uuid, &age, &v[0], &v[1], &v[2], &v[3],
		           &used) != 6)
			break;
		size_t k = c->n_history++;
		snprintf(c->history_uuid[k], sizeof c->history_uuid[k], "%s", uuid);
		ng_gpu_history *h = &c->history[k];
		*h = (ng_gpu_history){.uuid = c->history_uuid[k], .hours_ago = (double)age / 3600.0};
		uint64_t *dst[] = {&h->retired_pages, &h->remapped_rows, &h->pcie_replays,
		                   &h->nvlink_errors};
		for (int f = 0; f < 4; f++) {
			if (v[f] < 0)
				h->unread |= 1u << f; /* the NG_HIST_UNREAD_* order */
			else
				*dst[f] = (uint64_t)v[f];
		}
		p += used;
		while (*p == '\n')
			p++;
	}
	ng_strbuf_free(&b.out);
}

/* The child's side: one gpu.health record per GPU checked, and what went
 * wrong (if anything) as one line on the pipe. */
static void store_child(int wfd, const struct check *c, const void *arg)
{
	const char *spec = arg;
	char msg[640] = "";
	ng_err err;
	ng_store *st;
	if (ng_store_open(spec, &st, &err) < 0) {
		snprintf(msg, sizeof msg, "store: %.500s: records not kept", err.msg);
		write_all(wfd, msg, strlen(msg));
		return;
	}
	char host[256];
	store_node(host);
	int64_t now = ng_cli_now();
	char run_id[80];
	ng_cli_run_id(run_id, host, now);
	size_t n = c->health->n_gpus;
	ng_store_record *recs = calloc(n, sizeof *recs);
	char **bodies = calloc(n, sizeof *bodies);
	const char *job = getenv("SLURM_JOB_ID");
	int rc = recs && bodies ? 0 : ng_fail(&err, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		cJSON *b = gpu_json(c, i);
		cJSON_AddStringToObject(b, "schema", "nodegate/record/1");
		cJSON_AddStringToObject(b, "node", host);
		cJSON_AddStringToObject(b, "domain", "health");
		cJSON_AddStringToObject(b, "metric", "gpu.health");
		cJSON_AddStringToObject(b, "mode", mode_name(c->mode));
		if (job && *job)
			cJSON_AddStringToObject(b, "job", job);
		bodies[i] = cJSON_PrintUnformatted(b);
		cJSON_Delete(b);
		if (!bodies[i]) {
			rc = ng_fail(&err, "out of memory");
			break;
		}
		recs[i] = (ng_store_record){
			.node = host, .class_key = "", .domain = "health", .metric = "gpu.health",
			.unit = "", .run_id = run_id, .taken_at = now, .body = bodies[i],
		};
	}
	if (rc == 0)
		rc = ng_store_put_records(st, recs, n, NULL, &err);
	/* The wear counters, for the next check's rates. */
	ng_store_gpu_counters *cnt = calloc(c->snap->n_gpus ? c->snap->n_gpus : 1, sizeof *cnt);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && cnt && i < c->snap->n_gpus; i++)
		if (c->snap->gpu[i].uuid[0] && !c->snap->gpu[i].lost)
			counters_of(&c->snap->gpu[i], now, &cnt[k++]);
	if (rc == 0 && cnt)
		rc = ng_store_put_gpu_counters(st, host, cnt, k, &err);
	free(cnt);
	if (rc < 0) {
		snprintf(msg, sizeof msg, "store %.200s: %.400s: records not kept", ng_store_where(st),
		         err.msg);
		write_all(wfd, msg, strlen(msg));
	}
	ng_store_close(st);
	/* The child exits right after: what it allocated goes with it. */
	for (size_t i = 0; bodies && i < n; i++)
		free(bodies[i]);
	free(bodies);
	free(recs);
}

/* One gpu.health record per GPU checked, in a child under what is left of
 * the deadline. Keeping them is a convenience: a store that cannot be
 * opened, written or reached in time is a note, never a drain. */
static void keep_records(struct check *c)
{
	const char *spec = named_store(c);
	if (!spec || !c->health || c->health->n_gpus == 0)
		return;
	if (c->t_end - mono_now() < STORE_MIN_S) {
		note(c, "store: skipped, the deadline is spent: records not kept");
		return;
	}
	struct bounded b;
	if (run_bounded(c, "the store write", store_child, spec, 4096, &b) < 0)
		note(c, "store: could not start the write (%s): records not kept", strerror(b.error));
	else if (!b.finished)
		note(c, "store: not written within the deadline: records not kept");
	else if (b.out.len)
		note(c, "%s", b.out.s);
	else if (!b.reaped || !WIFEXITED(b.status) || WEXITSTATUS(b.status) != 0)
		note(c, "store: the write did not finish cleanly: records may not be kept");
	ng_strbuf_free(&b.out);
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
	if (c->drain)
		drain_reason(c);
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

/* An ordinal the node does not have comes back as a GPU NVML gave no handle
 * for (INVALID_ARGUMENT: no such index): a note, not a GPU to judge. */
static bool absent_gpu(const ng_gpu_state *g, unsigned *count)
{
	if (g->lost || g->uuid[0] || g->bus[0] ||
	    g->ecc_volatile_uncorrected.state != NG_FIELD_FAILED ||
	    g->ecc_volatile_uncorrected.nvml_return != 2 /* NVML_ERROR_INVALID_ARGUMENT */)
		return false;
	const char *p = strstr(g->error, "NVML counts ");
	if (!p || sscanf(p, "NVML counts %u", count) != 1)
		*count = UINT_MAX;
	return true;
}

static size_t drop_absent(struct check *c, bool keep[NG_GPU_MAX])
{
	size_t marked = 0, absent = 0;
	unsigned count = UINT_MAX;
	int first = -1;
	for (size_t i = 0; i < NG_GPU_MAX; i++) {
		keep[i] = i < c->snap->n_gpus && !absent_gpu(&c->snap->gpu[i], &count);
		if (keep[i]) {
			marked++;
		} else if (i < c->snap->n_gpus && absent++ == 0) {
			first = c->snap->gpu[i].index;
		}
	}
	if (absent) {
		char more[48] = "", lists[48] = "";
		if (absent > 1)
			snprintf(more, sizeof more, " (and %zu more)", absent - 1);
		if (count != UINT_MAX)
			snprintf(lists, sizeof lists, " (NVML lists %u GPU%s)", count, count == 1 ? "" : "s");
		note(c, "%s: GPU %d%s not on this node%s: not checked", c->gpus_from, first, more,
		     lists);
	}
	return marked;
}

static void run_nvml(struct check *c)
{
	int idx[NG_GPU_MAX];
	size_t n_idx = 0;
	bool whole = c->mode == NG_CHECK_HEALTH || !ng_job_gpus_ordinals_only(c->job);
	if (!whole) {
		size_t beyond = 0;
		for (size_t i = 0; i < c->job->n; i++) {
			if (c->job->gpu[i].ordinal < NG_GPU_MAX && n_idx < NG_GPU_MAX)
				idx[n_idx++] = c->job->gpu[i].ordinal;
			else
				beyond++;
		}
		if (beyond)
			note(c, "%zu GPU ordinal%s beyond any node's %d: not checked", beyond,
			     beyond == 1 ? "" : "s", NG_GPU_MAX);
		if (!n_idx) {
			snprintf(c->why, sizeof c->why, "no GPUs to check: none of %s is on this node",
			         c->gpus_from);
			return;
		}
	}
	if (collect_nvml(c, idx, whole ? 0 : n_idx) < 0)
		return;
	if (c->snap->nvml != NG_FIELD_OK) {
		snprintf(c->why, sizeof c->why, "nothing checked: NVML: %s",
		         c->snap->nvml_error[0] ? c->snap->nvml_error : "failed");
		c->snap->n_gpus = 0;
		return;
	}
	if (c->snap->nvml_error[0])
		note(c, "NVML: %s", c->snap->nvml_error);
	if (c->mode == NG_CHECK_HEALTH) {
		if (c->snap->n_gpus == 0)
			snprintf(c->why, sizeof c->why, "no GPUs to check: NVML lists none on this node");
		return;
	}
	bool keep[NG_GPU_MAX];
	size_t marked;
	if (whole) {
		/* UUIDs: every GPU was read, the job's are picked by exact UUID. */
		marked = ng_job_gpus_resolve(c->job, c->snap, keep);
		take_job_notes(c);
	} else {
		marked = drop_absent(c, keep);
	}
	keep_only(c->snap, keep);
	if (marked == 0)
		snprintf(c->why, sizeof c->why, "no GPUs to check: none of %s is on this node",
		         c->gpus_from);
}

static int run_smi(struct check *c)
{
	snprintf(c->gpus_from, sizeof c->gpus_from, "nvidia-smi -q file");
	size_t len;
	ng_err err;
	char *text = ng_read_file(c->smi_file, &len, &err);
	if (!text) {
		fprintf(stderr, "nodegate %s: %s\n", c->e->name, err.msg);
		return -1;
	}
	int rc = ng_nvidia_smi_parse(text, len, c->snap, &err);
	free(text);
	if (rc < 0) {
		fprintf(stderr, "nodegate %s: %s: %s\n", c->e->name, c->smi_file, err.msg);
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
	c->t_end = mono_now() + c->deadline_s;
	c->snap->nvml = NG_FIELD_UNREAD;
	int rc = NG_EXIT_OK;
	bool go = true;
	if (c->smi_file) {
		if (run_smi(c) < 0)
			return NG_EXIT_USAGE;
		/* A dump is from some node at some time: its Xids only when a log is named. */
		if (!c->kmsg_path)
			c->no_kmsg = true;
	} else if (c->mode == NG_CHECK_HEALTH) {
		snprintf(c->gpus_from, sizeof c->gpus_from, "node");
		run_nvml(c);
	} else if ((go = job_set(c))) {
		run_nvml(c);
	}
	if (c->timed_out) {
		c->outcome = "unknown";
	} else if (!go || c->snap->n_gpus == 0) {
		c->outcome = "n/a";
		if (!c->why[0])
			snprintf(c->why, sizeof c->why, "no GPUs to check");
	} else {
		attach_xids(c);
		load_history(c);
		finish_judged(c);
		keep_records(c);
		land_slurm(c);
	}
	if (!c->health->n_gpus && c->why[0] == '\0')
		snprintf(c->why, sizeof c->why, "no GPUs to check");
	if (c->json) {
		cJSON *doc = result_json(c);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		print_text(c);
	}
	if (c->cli->on_verdict && !c->cli->no_land)
		ng_cli_on_verdict_stderr(c->cli, c->e->name, result_json(c));
	rc = exit_status(c);
	fflush(stdout);
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

static int parse_opts(struct check *c, int argc, char **argv)
{
	enum { O_GPUS = 256, O_DEADLINE, O_KMSG, O_NO_KMSG, O_SINCE, O_LIBRARY, O_STORE, O_NO_STORE,
	       O_SMI, O_LAND, O_SLURM_CONF, O_NODE };
	const struct option all[] = {
		{"gpus", required_argument, NULL, O_GPUS},
		{"deadline", required_argument, NULL, O_DEADLINE},
		{"kmsg", required_argument, NULL, O_KMSG},
		{"no-kmsg", no_argument, NULL, O_NO_KMSG},
		{"since", required_argument, NULL, O_SINCE},
		{"library", required_argument, NULL, O_LIBRARY},
		{"store", required_argument, NULL, O_STORE},
		{"no-store", no_argument, NULL, O_NO_STORE},
		{"from-nvidia-smi", required_argument, NULL, O_SMI},
		{"land", required_argument, NULL, O_LAND},
		{"slurm-conf", required_argument, NULL, O_SLURM_CONF},
		{"node", required_argument, NULL, O_NODE},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const struct ng_cmd_entry *e = c->e;
	int ch;
	while ((ch = getopt_long(argc, argv, "jh", all, NULL)) != -1) {
		switch (ch) {
		case 'h': ng_cmd_print_help(e, stdout); return NG_EXIT_OK;
		case 'j': c->json = true; break;
		case O_GPUS:
			if (c->mode == NG_CHECK_HEALTH)
				return ng_cmd_usage_error(e, "--gpus is for epilog and prolog: health checks "
				                             "the whole node");
			c->gpus_opt = optarg;
			break;
		case O_DEADLINE:
			if (parse_seconds(optarg, 3600, &c->deadline_s) < 0 || c->deadline_s <= 0)
				return ng_cmd_usage_error(e, "--deadline takes seconds, more than 0 and at most "
				                             "3600");
			break;
		case O_KMSG: c->kmsg_path = optarg; break;
		case O_NO_KMSG: c->no_kmsg = true; break;
		case O_SINCE:
			if (parse_seconds(optarg, 10 * 366 * 86400.0, &c->since_s) < 0)
				return ng_cmd_usage_error(e, "--since takes seconds ago, 0 or more");
			break;
		case O_LIBRARY: c->library = optarg; break;
		case O_STORE: c->store = optarg; break;
		case O_NO_STORE: c->no_store = true; break;
		case O_SMI:
			if (c->mode != NG_CHECK_HEALTH)
				return ng_cmd_usage_error(e, "--from-nvidia-smi is for health: a saved dump is "
				                             "not a job's GPUs");
			c->smi_file = optarg;
			break;
		case O_LAND:
			if (strcmp(optarg, "slurm") == 0)
				c->land_slurm = true;
			else if (strcmp(optarg, "none") == 0)
				c->land_slurm = false;
			else
				return ng_cmd_usage_error(e, "--land takes slurm or none");
			break;
		case O_SLURM_CONF: c->slurm_conf = optarg; break;
		case O_NODE: c->node_name = optarg; break;
		default: return ng_cmd_usage_error(e, "unknown option (see --help)");
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[optind]);
	if (c->no_kmsg && c->kmsg_path)
		return ng_cmd_usage_error(e, "--kmsg and --no-kmsg: use one or the other");
	if (c->land_slurm && c->smi_file)
		return ng_cmd_usage_error(e, "--land slurm with --from-nvidia-smi: a saved dump is not "
		                             "this node's GPUs now; nothing would be drained");
	return -1;
}

int ng_gpu_check_main(struct ng_cli *cli, const struct ng_cmd_entry *e, ng_check_mode mode,
                      int argc, char **argv)
{
	struct check c = {.cli = cli, .e = e, .mode = mode, .since_s = -1};
	c.deadline_s = policy_deadline_s(&cli->policy);
	int rc = parse_opts(&c, argc, argv);
	if (rc >= 0) {
		/* Slurm drains the node on any non-zero Epilog or Prolog status: a
		 * mistake in the hook's command line must not drain the fleet. */
		if (rc == NG_EXIT_USAGE && mode != NG_CHECK_HEALTH && getenv("SLURM_JOB_ID")) {
			fprintf(stderr, "nodegate %s: nothing checked, and not draining the node for a "
			                "usage error (fix the %s command line)\n",
			        e->name, mode == NG_CHECK_EPILOG ? "Epilog" : "Prolog");
			return NG_EXIT_OK;
		}
		return rc;
	}
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
	free(c.job);
	free(c.snap);
	free(c.health);
	return rc;
}
