/* Draining and resuming a node through scontrol: read the node, act, read
 * it back. See land/slurm.h for the promises. */
#include "land/slurm.h"

#include "core/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "collect/spawn.h"

#define OUTPUT_MAX (64u << 10)
#define KILL_GRACE_S 2.0    /* SIGTERM to SIGKILL, with no deadline to keep */
#define DEADLINE_MIN_S 0.1  /* less than this left: no call is started */

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- names, reasons, states ------------------------------------------------------ */

void ng_slurm_sanitize_reason(const char *in, char out[NG_SLURM_REASON_MAX + 1])
{
	size_t n = 0;
	const size_t prefix = sizeof NG_SLURM_REASON_PREFIX - 1, mark = sizeof NG_SLURM_REASON_MARK - 1;
	/* The mark goes last, after any cut, so a cut reason is still ours. */
	const size_t cap = NG_SLURM_REASON_MAX - mark;
	if (!in)
		in = "";
	while (*in == ' ' || (unsigned char)*in < 0x20 || *in == 0x7f) {
		if (!*in)
			break;
		in++;
	}
	/* A reason given already marked (either spelling) is not marked twice. */
	if (strncmp(in, NG_SLURM_LEGACY_PREFIX, sizeof NG_SLURM_LEGACY_PREFIX - 1) == 0)
		in += sizeof NG_SLURM_LEGACY_PREFIX - 1;
	else if (strncmp(in, NG_SLURM_REASON_PREFIX, prefix) == 0)
		in += prefix;
	while (*in == ' ' || (*in && ((unsigned char)*in < 0x20 || *in == 0x7f)))
		in++;
	memcpy(out, NG_SLURM_REASON_PREFIX, prefix);
	n = prefix;
	bool space = false, cut = false;
	size_t body_len = strlen(in);
	if (body_len >= mark && strcmp(in + body_len - mark, NG_SLURM_REASON_MARK) == 0)
		body_len -= mark;
	for (size_t i = 0; i < body_len; i++) {
		unsigned char ch = (unsigned char)in[i];
		if (ch < 0x20 || ch == 0x7f || ch == ' ') {
			space = true;
			continue;
		}
		if (ch >= 0x80)
			ch = '?';
		size_t need = (space && n > prefix ? 1 : 0) + 1;
		if (n + need > cap) {
			cut = true;
			break;
		}
		if (space && n > prefix)
			out[n++] = ' ';
		space = false;
		out[n++] = (char)ch;
	}
	if (cut) {
		n = n > cap - 3 ? cap - 3 : n;
		memcpy(out + n, "...", 3);
		n += 3;
	}
	while (n > prefix && out[n - 1] == ' ')
		n--;
	if (n == prefix) {
		memcpy(out + n, "no reason given", 15);
		n += 15;
	}
	memcpy(out + n, NG_SLURM_REASON_MARK, mark);
	n += mark;
	out[n] = '\0';
}

static bool node_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '.' || ch == '-' || ch == '_';
}

int ng_slurm_node_name(const ng_slurm_opts *o, char out[NG_SLURM_NODE_MAX + 1], ng_err *err)
{
	const char *name = o ? o->node : NULL, *from = "the node name given";
	char host[256];
	if (!name || !*name) {
		name = getenv("SLURMD_NODENAME");
		from = "SLURMD_NODENAME";
	}
	if (!name || !*name) {
		if (gethostname(host, sizeof host - 1) != 0 || !host[0])
			return ng_fail_as(err, NG_ERR_LANDING, "no node name: SLURMD_NODENAME is not set and the host name "
			                    "cannot be read (%s); name the node", strerror(errno));
		host[sizeof host - 1] = '\0';
		char *dot = strchr(host, '.');
		if (dot)
			*dot = '\0';
		name = host;
		from = "the short host name";
	}
	size_t len = strlen(name);
	bool ok = len > 0 && len <= NG_SLURM_NODE_MAX && name[0] != '-';
	for (size_t i = 0; ok && i < len; i++)
		ok = node_char(name[i]);
	if (!ok) {
		/* The name came from outside: a newline in it must not forge a
		 * line of the report or the log. */
		char cut[81];
		snprintf(cut, sizeof cut, "%.80s", name);
		ng_strbuf shown = {0};
		ng_strbuf_add_printable(&shown, cut);
		int rc = ng_fail_as(err, NG_ERR_LANDING, "%s \"%s\" is not a single Slurm node name (letters, digits, '.', "
		                      "'-', '_'; at most %d; no lists or ranges): nothing landed",
		                 from, shown.s ? shown.s : "", NG_SLURM_NODE_MAX);
		ng_strbuf_free(&shown);
		return rc;
	}
	memcpy(out, name, len + 1);
	return 0;
}

/* The value of "Key=" in text, where Key starts the text or follows a space
 * or newline. NULL when absent. */
static const char *find_key(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; (p = strstr(p, key)) != NULL; p += kl)
		if ((p == text || p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t') && p[kl] == '=')
			return p + kl + 1;
	return NULL;
}

static void copy_span(char *dst, size_t len, const char *s, size_t n)
{
	if (!len)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* Keys that may follow Reason= on the same line in some Slurm versions. */
static const char *const AFTER_REASON[] = {
	" Comment=", " Extra=", " ResumeAfterTime=", " InstanceId=", " InstanceType=",
	" LastBusyTime=", " CapWatts=", " CurrentWatts=", " AveWatts=", " ExtSensorsJoules=",
	" ExtSensorsWatts=", " ExtSensorsTemp=", " NextState=",
};

int ng_slurm_parse_node(const char *text, char *state, size_t state_len, char *reason,
                        size_t reason_len)
{
	if (state_len)
		state[0] = '\0';
	if (reason_len)
		reason[0] = '\0';
	const char *s = text ? find_key(text, "State") : NULL;
	if (!s)
		return -1;
	size_t n = strcspn(s, " \t\r\n");
	if (n == 0)
		return -1;
	copy_span(state, state_len, s, n);
	const char *r = find_key(text, "Reason");
	if (!r)
		return 0;
	size_t end = strcspn(r, "\r\n");
	for (size_t k = 0; k < sizeof AFTER_REASON / sizeof *AFTER_REASON; k++) {
		const char *q = strstr(r, AFTER_REASON[k]);
		if (q && (size_t)(q - r) < end)
			end = (size_t)(q - r);
	}
	/* The stamp Slurm adds: " [user@time]", the last bracket on the line. */
	for (size_t i = end; i > 1; i--) {
		if (r[i - 1] == '[' && r[i - 2] == ' ') {
			const char *close = memchr(r + i, ']', end - i);
			const char *at = memchr(r + i, '@', end - i);
			if (close && at && at < close) {
				end = i - 2;
				break;
			}
		}
	}
	while (end && r[end - 1] == ' ')
		end--;
	if (end == 6 && strncmp(r, "(null)", 6) == 0)
		end = 0;
	copy_span(reason, reason_len, r, end);
	return 0;
}

bool ng_slurm_hook_drain_is_ours(const char *reason, long long stamp, const char *last_mode,
                                 bool last_drained, long long last_at)
{
	if (!reason || !last_mode || !last_drained || stamp <= 0 || last_at <= 0)
		return false;
	const char *mode = strcmp(reason, "Epilog error") == 0   ? "epilog"
	                   : strcmp(reason, "Prolog error") == 0 ? "prolog"
	                                                        : NULL;
	/* The record is kept before the hook exits; Slurm stamps the drain
	 * after. A second of slack for the two clocks' rounding. */
	return mode && strcmp(mode, last_mode) == 0 && stamp >= last_at - 1 &&
	       stamp <= last_at + NG_SLURM_HOOK_DRAIN_WINDOW_S;
}

int ng_slurm_parse_stamp(const char *text, long long *at)
{
	const char *r = text ? find_key(text, "Reason") : NULL;
	if (!r)
		return -1;
	size_t end = strcspn(r, "\r\n");
	/* the last " [user@" on the line, as ng_slurm_parse_node strips it */
	const char *best = NULL;
	for (size_t i = end; i > 1; i--)
		if (r[i - 1] == '[' && r[i - 2] == ' ') {
			const char *close = memchr(r + i, ']', end - i);
			const char *atsign = memchr(r + i, '@', end - i);
			if (close && atsign && atsign < close) {
				best = atsign + 1;
				break;
			}
		}
	int y, mo, d, h, mi, se;
	char tail;
	if (!best || sscanf(best, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &tail) != 7 ||
	    tail != ']')
		return -1;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
	                .tm_min = mi, .tm_sec = se, .tm_isdst = -1};
	time_t t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*at = (long long)t;
	return 0;
}

static bool has_word(const char *state, const char *word)
{
	/* the flags are '+'-separated words: IDLE+DRAIN, MIXED+DRAIN+NOT_RESPONDING */
	size_t wl = strlen(word);
	for (const char *p = state; *p;) {
		size_t n = strcspn(p, "+");
		size_t m = n;
		while (m && (p[m - 1] == '*' || p[m - 1] == '~' || p[m - 1] == '#' || p[m - 1] == '$' ||
		             p[m - 1] == '@' || p[m - 1] == '^' || p[m - 1] == '!' || p[m - 1] == '%'))
			m--;
		if (m >= wl && strncasecmp(p, word, wl) == 0 &&
		    (m == wl || strcasecmp(word, "DRAIN") == 0))
			return true; /* DRAIN also matches sinfo's drained, draining */
		p += n;
		if (*p == '+')
			p++;
	}
	return false;
}

bool ng_slurm_state_drain(const char *state)
{
	return state && (has_word(state, "DRAIN") || has_word(state, "DRNG") ||
	                 has_word(state, "DRAINED") || has_word(state, "DRAINING"));
}

bool ng_slurm_state_down(const char *state)
{
	return state && (has_word(state, "DOWN") || has_word(state, "FAIL") ||
	                 has_word(state, "FAILING"));
}

bool ng_slurm_state_not_responding(const char *state)
{
	return state && (strchr(state, '*') != NULL || has_word(state, "NOT_RESPONDING"));
}

bool ng_slurm_reason_ours(const char *reason)
{
	if (!reason)
		return false;
	/* Before reasons were made to read in sinfo's 20 columns. */
	if (strncmp(reason, NG_SLURM_LEGACY_PREFIX, sizeof NG_SLURM_LEGACY_PREFIX - 1) == 0)
		return true;
	/* Both ends: "ng:" alone an operator could write; with the mark at the
	 * end, no one writes it by accident. */
	size_t n = strlen(reason), mark = sizeof NG_SLURM_REASON_MARK - 1;
	return strncmp(reason, NG_SLURM_REASON_PREFIX, sizeof NG_SLURM_REASON_PREFIX - 1) == 0 &&
	       n >= mark && strcmp(reason + n - mark, NG_SLURM_REASON_MARK) == 0;
}

bool ng_slurm_reason_of_case(const char *reason, long long case_id)
{
	char tag[48];
	snprintf(tag, sizeof tag, " case %lld:", case_id);
	if (!ng_slurm_reason_ours(reason))
		return false;
	if (strncmp(reason, NG_SLURM_LEGACY_PREFIX, sizeof NG_SLURM_LEGACY_PREFIX - 1) == 0) {
		char legacy[64];
		snprintf(legacy, sizeof legacy, "nodegate: quarantined case %lld:", case_id);
		return strncmp(reason, legacy, strlen(legacy)) == 0;
	}
	return strncmp(reason, NG_SLURM_REASON_PREFIX "quarantine ",
	               sizeof NG_SLURM_REASON_PREFIX "quarantine " - 1) == 0 &&
	       strstr(reason, tag) != NULL;
}

/* ---- calling scontrol ------------------------------------------------------------------ */

struct call {
	const ng_slurm_opts *o;
	const char *scontrol;
	double timeout_s, budget_s, readback_s;
	ng_slurm_result *out;
	long long stamp; /* the last read's reason stamp, 0 none */
};

/* Text that says slurmctld could not be reached (or the node is not yet
 * registered): worth another try within the budget. */
static bool unreachable(const char *text)
{
	static const char *const signs[] = {
		"Unable to contact slurm controller", "Unable to establish Slurm connection",
		"Connection refused", "Connection timed out", "Socket timed out", "connect failure",
		"Zero Bytes were transmitted", "Transport endpoint is not connected",
		"Communication connection failure", "Slurm backup controller in standby mode",
	};
	for (size_t i = 0; i < sizeof signs / sizeof *signs; i++)
		if (text && strcasestr(text, signs[i]))
			return true;
	return false;
}

static void first_line(const char *text, char *buf, size_t len)
{
	while (text && (*text == ' ' || *text == '\n'))
		text++;
	size_t n = text ? strcspn(text, "\r\n") : 0;
	if (n > 200)
		n = 200;
	copy_span(buf, len, text ? text : "", n);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

/* Runs scontrol with args, retrying while slurmctld is unreachable (or the
 * call timed out) until the budget is spent. Returns 0 with r holding a run
 * that exited 0, 1 with r holding the last failed run and why[] set, -1 when
 * nodegate itself failed (err). */
static int scontrol(struct call *k, const char *const *args, size_t n_args, ng_spawn_result *r,
                    char *why, size_t why_len, ng_err *err)
{
	char *argv[8];
	argv[0] = (char *)k->scontrol;
	for (size_t i = 0; i < n_args && i < 6; i++)
		argv[i + 1] = (char *)args[i];
	argv[n_args + 1] = NULL;

	double start = mono_now(), backoff = 0.25;
	for (int attempt = 1;; attempt++) {
		double left = k->budget_s - (mono_now() - start);
		double t = k->timeout_s, grace = KILL_GRACE_S;
		if (attempt > 1 && left < t)
			t = left > 0.5 ? left : 0.5;
		/* A deadline: the call, its SIGTERM and its SIGKILL all before it. */
		if (k->o->deadline > 0) {
			double room = k->o->deadline - mono_now();
			if (room < DEADLINE_MIN_S) {
				if (attempt == 1) {
					snprintf(why, why_len, "%s %s not run: the check's deadline is spent",
					         k->scontrol, args[0]);
				} else {
					size_t l = strlen(why);
					snprintf(why + l, why_len - l,
					         "; slurmctld unreachable for %.1f s (%d tries): gave up at "
					         "the check's deadline",
					         mono_now() - start, attempt - 1);
				}
				*r = (ng_spawn_result){.exit_status = -1};
				return 1;
			}
			grace = room / 4 < 1.0 ? room / 4 : 1.0;
			if (t + grace > room)
				t = room - grace;
		}
		/* SLURM_CONF from the options, for this call only: a health check
		 * has none in its environment. */
		char *saved = NULL;
		bool set_conf = k->o && k->o->slurm_conf && *k->o->slurm_conf;
		if (set_conf) {
			const char *cur = getenv("SLURM_CONF");
			saved = cur ? strdup(cur) : NULL;
			setenv("SLURM_CONF", k->o->slurm_conf, 1);
		}
		char ebuf[256];
		int rc = ng_spawn_capture_until(argv, -1, t + grace, grace, OUTPUT_MAX, r, ebuf,
		                                sizeof ebuf);
		if (set_conf) {
			if (saved)
				setenv("SLURM_CONF", saved, 1);
			else
				unsetenv("SLURM_CONF");
			free(saved);
		}
		k->out->calls++;
		if (rc < 0)
			return ng_fail_as(err, NG_ERR_LANDING, "cannot run %s: %s", k->scontrol, ebuf);
		if (!r->spawned) {
			snprintf(why, why_len, "cannot run %s: %s (set NODEGATE_SCONTROL or put scontrol "
			                       "on PATH)",
			         k->scontrol, strerror(r->spawn_errno));
			return 1;
		}
		if (!r->timed_out && r->exit_status == 0)
			return 0;
		bool retry = r->timed_out || unreachable(r->err) || unreachable(r->out);
		if (r->timed_out) {
			snprintf(why, why_len, "%s %s did not answer within %.1f s", k->scontrol, args[0], t);
		} else {
			char line[256];
			first_line(r->err && *r->err ? r->err : r->out, line, sizeof line);
			snprintf(why, why_len, "%s %s failed (exit status %d%s%s)", k->scontrol, args[0],
			         r->exit_status, line[0] ? ": " : "", line);
		}
		left = k->budget_s - (mono_now() - start);
		if (!retry || left <= 0.05) {
			if (retry) {
				size_t l = strlen(why);
				snprintf(why + l, why_len - l,
				         "; slurmctld unreachable for %.1f s (%d tries): gave up",
				         mono_now() - start, attempt);
			}
			return 1;
		}
		ng_spawn_result_free(r);
		if (k->o->deadline > 0 && k->o->deadline - mono_now() < left)
			left = k->o->deadline - mono_now();
		nap(backoff < left ? backoff : left);
		backoff = backoff * 2 > 4 ? 4 : backoff * 2;
		if (k->budget_s - (mono_now() - start) <= 0.05) {
			snprintf(why + strlen(why), why_len - strlen(why),
			         "; slurmctld unreachable for %.1f s (%d tries): gave up",
			         mono_now() - start, attempt);
			*r = (ng_spawn_result){.exit_status = -1};
			return 1;
		}
	}
}

/* Reads the node's state and reason. 0, or -1 with out->message and err. */
static int read_node(struct call *k, char *state, size_t state_len, char *reason,
                     size_t reason_len, ng_err *err)
{
	const char *args[] = {"show", "node", k->out->node, "-o"};
	ng_spawn_result r;
	char why[400] = "";
	int rc = scontrol(k, args, 4, &r, why, sizeof why, err);
	if (rc < 0)
		return -1;
	k->stamp = 0;
	if (rc == 0 && ng_slurm_parse_stamp(r.out, &k->stamp) < 0)
		k->stamp = 0;
	if (rc == 0 && ng_slurm_parse_node(r.out, state, state_len, reason, reason_len) < 0) {
		char line[256];
		first_line(r.out, line, sizeof line);
		snprintf(why, sizeof why, "%s show node %s: no State= in its answer (\"%s\")",
		         k->scontrol, k->out->node, line);
		rc = 1;
	}
	ng_spawn_result_free(&r);
	if (rc) {
		snprintf(k->out->message, sizeof k->out->message, "%s", why);
		return ng_fail_as(err, NG_ERR_LANDING, "cannot read node %s: %s", k->out->node, why);
	}
	return 0;
}

/* The node's reason as read first: nodegate's own, or Slurm's drain after
 * nodegate's epilog or prolog exited 1 there (the caller's store says so). */
static bool ours_before(struct call *k)
{
	ng_slurm_result *out = k->out;
	out->stamp_before = k->stamp;
	if (ng_slurm_reason_ours(out->reason_before))
		return true;
	bool hook = strcmp(out->reason_before, "Epilog error") == 0 ||
	            strcmp(out->reason_before, "Prolog error") == 0;
	if (hook && k->stamp && k->o->hook_drain_ours &&
	    k->o->hook_drain_ours(out->reason_before, k->stamp, k->o->hook_arg))
		out->hook_drain = true;
	return out->hook_drain;
}

static int setup(struct call *k, const ng_slurm_opts *o, ng_slurm_result *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	static const ng_slurm_opts none;
	k->o = o ? o : &none;
	k->out = out;
	k->scontrol = k->o->scontrol && *k->o->scontrol ? k->o->scontrol : getenv("NODEGATE_SCONTROL");
	if (!k->scontrol || !*k->scontrol)
		k->scontrol = "scontrol";
	k->timeout_s = k->o->call_timeout_s > 0 ? k->o->call_timeout_s : NG_SLURM_DEFAULT_CALL_TIMEOUT_S;
	k->budget_s = k->o->budget_s > 0 ? k->o->budget_s : NG_SLURM_DEFAULT_BUDGET_S;
	k->readback_s = k->o->readback_s > 0 ? k->o->readback_s : NG_SLURM_DEFAULT_READBACK_S;
	if (ng_slurm_node_name(k->o, out->node, err) < 0) {
		snprintf(out->message, sizeof out->message, "%s", err->msg);
		return -1;
	}
	return 0;
}

static int fail(ng_slurm_result *out, ng_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(ng_slurm_result *out, ng_err *err, const char *fmt, ...)
{
	char buf[sizeof out->message];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	memcpy(out->message, buf, sizeof buf);
	return ng_fail_as(err, NG_ERR_LANDING, "%s", out->message);
}

typedef bool (*done_fn)(const char *state, const char *reason, const void *arg);

/* Polls the node until done() or the read-back time is spent; leaves the
 * last state read in out->state_after/reason_after. 1 done, 0 not, -1 when
 * it could not be read. */
static int read_back(struct call *k, done_fn done, const void *arg, ng_err *err)
{
	double until = mono_now() + k->readback_s, wait = 0.1;
	if (k->o->deadline > 0 && k->o->deadline < until)
		until = k->o->deadline;
	for (;;) {
		if (read_node(k, k->out->state_after, sizeof k->out->state_after, k->out->reason_after,
		              sizeof k->out->reason_after, err) < 0)
			return -1;
		if (done(k->out->state_after, k->out->reason_after, arg))
			return 1;
		double left = until - mono_now();
		if (left <= 0)
			return 0;
		nap(wait < left ? wait : left);
		wait = wait * 2 > 1 ? 1 : wait * 2;
	}
}

static bool drained_with(const char *state, const char *reason, const void *arg)
{
	return ng_slurm_state_drain(state) && strcmp(reason, (const char *)arg) == 0;
}

int ng_slurm_drain(const ng_slurm_opts *o, const char *reason, ng_slurm_result *out,
                   ng_err *err)
{
	struct call k;
	if (setup(&k, o, out, err) < 0)
		return -1;
	ng_slurm_sanitize_reason(reason, out->reason);
	if (read_node(&k, out->state_before, sizeof out->state_before, out->reason_before,
	              sizeof out->reason_before, err) < 0)
		return -1;
	bool held = ng_slurm_state_drain(out->state_before) || ng_slurm_state_down(out->state_before);
	if (held && !ours_before(&k)) {
		out->left_alone = true;
		snprintf(out->state_after, sizeof out->state_after, "%s", out->state_before);
		snprintf(out->reason_after, sizeof out->reason_after, "%s", out->reason_before);
		snprintf(out->message, sizeof out->message, NG_SLURM_OPERATOR_DRAIN " (%s, \"%.200s\")",
		         out->state_before, out->reason_before);
		return 1;
	}
	if (ng_slurm_state_drain(out->state_before) && strcmp(out->reason_before, out->reason) == 0) {
		snprintf(out->state_after, sizeof out->state_after, "%s", out->state_before);
		snprintf(out->reason_after, sizeof out->reason_after, "%s", out->reason_before);
		snprintf(out->message, sizeof out->message, "already drained by nodegate: %s",
		         out->reason_before);
		return 0;
	}
	char name_arg[16 + NG_SLURM_NODE_MAX], reason_arg[16 + NG_SLURM_REASON_MAX];
	snprintf(name_arg, sizeof name_arg, "NodeName=%s", out->node);
	snprintf(reason_arg, sizeof reason_arg, "Reason=%s", out->reason);
	const char *args[] = {"update", name_arg, "State=DRAIN", reason_arg};
	ng_spawn_result r;
	char why[400] = "";
	int rc = scontrol(&k, args, 4, &r, why, sizeof why, err);
	if (rc < 0)
		return -1;
	ng_spawn_result_free(&r);
	if (rc)
		return fail(out, err, "drain of %s not done: %s", out->node, why);
	out->acted = true;
	int back = read_back(&k, drained_with, out->reason, err);
	if (back < 0)
		return fail(out, err, "drain of %s sent, but the node could not be read back: %s",
		            out->node, out->message);
	if (back == 0)
		return fail(out, err,
		            "scontrol accepted the drain of %s, but the node still reads %s (reason "
		            "\"%.120s\") after %g s: not drained",
		            out->node, out->state_after, out->reason_after, k.readback_s);
	out->changed = !ng_slurm_state_drain(out->state_before);
	snprintf(out->message, sizeof out->message, "%s %s: %s -> %s, reason \"%s\"",
	         out->changed         ? "drained"
	         : out->hook_drain    ? "nodegate's reason set in place of Slurm's own on"
	                              : "reason updated on",
	         out->node, out->state_before, out->state_after, out->reason_after);
	return 0;
}

static bool resumed(const char *state, const char *reason, const void *arg)
{
	(void)reason;
	(void)arg;
	/* Right after RESUME the node shows idle* for a moment: wait it out. */
	return !ng_slurm_state_drain(state) && !ng_slurm_state_not_responding(state);
}

int ng_slurm_resume(const ng_slurm_opts *o, ng_slurm_result *out, ng_err *err)
{
	struct call k;
	if (setup(&k, o, out, err) < 0)
		return -1;
	if (read_node(&k, out->state_before, sizeof out->state_before, out->reason_before,
	              sizeof out->reason_before, err) < 0)
		return -1;
	snprintf(out->state_after, sizeof out->state_after, "%s", out->state_before);
	snprintf(out->reason_after, sizeof out->reason_after, "%s", out->reason_before);
	bool drained = ng_slurm_state_drain(out->state_before);
	if ((drained || ng_slurm_state_down(out->state_before)) && !ours_before(&k)) {
		out->left_alone = true;
		snprintf(out->message, sizeof out->message,
		         NG_SLURM_OPERATOR_DRAIN ", not resumed (%s, \"%.200s\")", out->state_before,
		         out->reason_before);
		return 1;
	}
	const char *own = k.o->resume_prefix;
	bool other = (own && *own && strncmp(out->reason_before, own, strlen(own)) != 0) ||
	             (k.o->resume_case > 0 &&
	              !ng_slurm_reason_of_case(out->reason_before, k.o->resume_case));
	if (drained && other) {
		out->left_alone = true;
		snprintf(out->message, sizeof out->message,
		         "drained by nodegate for another reason (\"%.200s\"): not resumed",
		         out->reason_before);
		return 1;
	}
	if (!drained && ng_slurm_state_down(out->state_before)) {
		out->left_alone = true;
		snprintf(out->message, sizeof out->message,
		         "node %s is %s (nodegate never sets DOWN): not resumed", out->node,
		         out->state_before);
		return 1;
	}
	if (!drained) {
		snprintf(out->message, sizeof out->message, "node %s is not drained (%s): nothing to "
		                                            "resume",
		         out->node, out->state_before);
		return 0;
	}
	char name_arg[16 + NG_SLURM_NODE_MAX];
	snprintf(name_arg, sizeof name_arg, "NodeName=%s", out->node);
	const char *args[] = {"update", name_arg, "State=RESUME"};
	ng_spawn_result r;
	char why[400] = "";
	int rc = scontrol(&k, args, 3, &r, why, sizeof why, err);
	if (rc < 0)
		return -1;
	ng_spawn_result_free(&r);
	if (rc)
		return fail(out, err, "resume of %s not done: %s", out->node, why);
	out->acted = true;
	int back = read_back(&k, resumed, NULL, err);
	if (back < 0)
		return fail(out, err, "resume of %s sent, but the node could not be read back: %s",
		            out->node, out->message);
	if (ng_slurm_state_drain(out->state_after))
		return fail(out, err,
		            "scontrol accepted the resume of %s, but the node still reads %s after %g s: "
		            "not resumed",
		            out->node, out->state_after, k.readback_s);
	out->changed = true;
	snprintf(out->message, sizeof out->message, "resumed %s: %s -> %s%s", out->node,
	         out->state_before, out->state_after,
	         back == 0 ? " (still not responding when the read-back ended)" : "");
	return 0;
}

char *ng_slurm_result_json(const ng_slurm_result *r, const char *action)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "node", r->node);
	cJSON_AddStringToObject(o, "action", action);
	if (r->reason[0])
		cJSON_AddStringToObject(o, "reason", r->reason);
	cJSON *b = cJSON_AddObjectToObject(o, "before");
	cJSON_AddStringToObject(b, "state", r->state_before);
	cJSON_AddStringToObject(b, "reason", r->reason_before);
	cJSON *a = cJSON_AddObjectToObject(o, "after");
	cJSON_AddStringToObject(a, "state", r->state_after);
	cJSON_AddStringToObject(a, "reason", r->reason_after);
	cJSON_AddBoolToObject(o, "acted", r->acted);
	cJSON_AddBoolToObject(o, "changed", r->changed);
	cJSON_AddBoolToObject(o, "left_alone", r->left_alone);
	cJSON_AddBoolToObject(o, "hook_drain", r->hook_drain);
	cJSON_AddNumberToObject(o, "calls", r->calls);
	cJSON_AddStringToObject(o, "message", r->message);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

int ng_slurm_scontrol(const ng_slurm_opts *o, const char *const *args, size_t n_args,
                      ng_slurm_result *out, char **text, char *why, size_t why_len, ng_err *err)
{
	struct call k;
	*text = NULL;
	if (n_args > 6)
		return ng_fail(err, "scontrol: at most 6 arguments");
	if (setup(&k, o, out, err) < 0)
		return -1;
	ng_spawn_result r;
	int rc = scontrol(&k, args, n_args, &r, why, why_len, err);
	if (rc == 0) {
		*text = r.out;
		r.out = NULL;
	}
	if (rc >= 0)
		ng_spawn_result_free(&r);
	return rc;
}
