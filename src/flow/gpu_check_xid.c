/* The kernel's Xids, attached to the checked GPUs by PCI address. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/gpu_check_run.h"
#include "judge/gpu_health.h"
#include "parse/xid.h"
#include "parse/xid_stream.h"

#define KMSG_MAX_BYTES (32u << 20) /* more than any kernel ring buffer */
#define XID_EVENTS_MAX 4096        /* the newest are kept */

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

/* ---- reading the log ------------------------------------------------------------- */

/* The log is scanned as it is read (parse/xid_stream.h), through one
 * buffer of KMSG_CHUNK, grown only for a line longer than it holds. */
#define KMSG_CHUNK (32u << 10)
#define KMSG_RECORD_MAX 8192 /* /dev/kmsg refuses a read too small for its record */
#define KMSG_READ_MIN 4096   /* a file's reads: grown below this much room */
#define XID_PENDING_MAX (2 * XID_EVENTS_MAX)

/* One read of the log. The window (--since) is counted back from the
 * newest time in a saved log, or from the clock once the device is read,
 * so it is known only at the end: the Xids are held until then, and the
 * window judged on them as ng_xid_scan judged it on the whole text. */
struct log_read {
	struct ng_gpu_check_result *c;
	const char *path;
	bool is_device, is_file;
	bool file_cut;            /* a file larger than KMSG_MAX_BYTES */
	int64_t window_usec;      /* -1: every Xid, no window */
	int64_t start_usec;       /* a window's start once fixed; -1 none */
	bool start_fixed;
	struct xid_events *x;     /* the Xids judged */
	ng_xid_event *pend;       /* before the window is known */
	size_t n_pend, cap_pend;
	bool pend_full;           /* a file: read it again once the window is known */
	ng_xid_stream st;
};

static int64_t window_start(int64_t ref_usec, int64_t window_usec)
{
	if (ref_usec < 0 || window_usec < 0)
		return -1;
	int64_t start = ref_usec - window_usec;
	return start < 0 ? -1 : start;
}

/* The newest time seen yet: the clock for the device, the log's own for a
 * file. It only moves later, so a window counted back from it starts no
 * later than the final one: an Xid before it is never judged. */
static int64_t reference_usec(const struct log_read *r)
{
	return r->is_device ? (int64_t)(ng_check_now() * 1e6) : r->st.newest_usec;
}

static bool in_window(const ng_xid_event *e, int64_t start)
{
	return start < 0 || e->at_usec < 0 || e->at_usec >= start;
}

/* Room for one more held Xid: those already before the window as it is
 * now are let go, then the list grows, to XID_PENDING_MAX. When it is
 * full of Xids that may still be judged, a saved file is read a second
 * time with the window known; what is not a file (the device, a pipe) has
 * its window fixed now from what was read so far (for the device, the
 * clock a moment early: an Xid logged within that moment, a whole window
 * ago, is judged rather than left out). */
static bool pend_room(struct log_read *r)
{
	int64_t start = window_start(reference_usec(r), r->window_usec);
	size_t o = 0;
	for (size_t i = 0; i < r->n_pend; i++)
		if (in_window(&r->pend[i], start))
			r->pend[o++] = r->pend[i];
	size_t freed = r->n_pend - o;
	r->n_pend = o;
	if (r->cap_pend < XID_PENDING_MAX) {
		size_t cap = r->cap_pend ? r->cap_pend * 2 : 64;
		ng_xid_event *ev = realloc(r->pend, cap * sizeof *ev);
		if (ev) {
			r->pend = ev;
			r->cap_pend = cap;
			return true;
		}
	} else if (freed >= r->cap_pend / 4) {
		return true; /* a quarter let go: not let go again a few Xids on */
	}
	if (r->n_pend < r->cap_pend && r->cap_pend < XID_PENDING_MAX)
		return true; /* out of memory: what room there is */
	if (r->is_file) {
		r->pend_full = true;
		return false;
	}
	r->start_usec = start;
	r->start_fixed = true;
	for (size_t i = 0; i < r->n_pend; i++)
		if (in_window(&r->pend[i], start))
			collect_xid(&r->pend[i], r->x);
	r->n_pend = 0;
	return false;
}

static void hold_xid(const ng_xid_event *e, void *arg)
{
	struct log_read *r = arg;
	if (r->start_fixed) {
		if (in_window(e, r->start_usec))
			collect_xid(e, r->x);
		return;
	}
	if (r->pend_full || (r->n_pend == r->cap_pend && !pend_room(r))) {
		if (r->start_fixed && in_window(e, r->start_usec))
			collect_xid(e, r->x);
		return;
	}
	r->pend[r->n_pend++] = *e;
}

/* Room for the next read: a record of the device, or a file's chunk. */
static int make_room(struct log_read *r, size_t need)
{
	if (r->st.cap - r->st.used >= need)
		return 0;
	size_t cap = r->st.cap * 2;
	while (cap - r->st.used < need)
		cap *= 2;
	char *buf = realloc(r->st.buf, cap);
	if (!buf)
		return -1;
	r->st.buf = buf;
	r->st.cap = cap;
	return 0;
}

/* Reads the log from fd through the stream without ever blocking: a file
 * to want bytes (its size when opened, at most KMSG_MAX_BYTES), anything
 * else (/dev/kmsg one record per read) until EAGAIN, the deadline or
 * KMSG_MAX_BYTES. -1 out of memory. */
static int read_log(struct log_read *r, int fd, size_t want, bool quiet)
{
	struct ng_gpu_check_result *c = r->c;
	bool cut = false;
	size_t got = 0;
	for (;;) {
		size_t need = r->is_file ? KMSG_READ_MIN : KMSG_RECORD_MAX + 1;
		if (make_room(r, need) < 0)
			return -1;
		if (r->is_file && got == want)
			break;
		if (!r->is_file && ng_check_now() >= c->t_end) {
			cut = true;
			break;
		}
		size_t ask = r->is_file ? r->st.cap - r->st.used : KMSG_RECORD_MAX;
		if (r->is_file && ask > want - got)
			ask = want - got;
		ssize_t n = read(fd, r->st.buf + r->st.used, ask);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !r->is_file && errno == EPIPE)
			continue; /* /dev/kmsg: records overwritten while reading */
		if (n < 0 && !r->is_file && errno == EAGAIN)
			break; /* the end of the buffer */
		if (n < 0) {
			if (!quiet)
				ng_check_note(c, "kernel log %s: read failed (%s): Xids only from what was read",
				              r->path, strerror(errno));
			break;
		}
		if (n == 0)
			break; /* a file shrank since fstat */
		if (r->is_file) {
			got += (size_t)n;
			ng_xid_stream_feed(&r->st, (size_t)n);
			continue;
		}
		if (r->st.fed + (size_t)n > KMSG_MAX_BYTES) {
			cut = true;
			break;
		}
		if (r->is_device)
			ng_xid_stream_feed_record(&r->st, (size_t)n);
		else
			ng_xid_stream_feed(&r->st, (size_t)n);
	}
	ng_xid_stream_end(&r->st);
	if (r->is_file && got == KMSG_MAX_BYTES && r->file_cut)
		cut = true;
	if (cut && !quiet)
		ng_check_note(c, "kernel log %s: read cut short (deadline or size): Xids only from what was read",
		              r->path);
	return 0;
}

/* The Xids of the log at path in the window of window_usec (-1: all),
 * into x. false when none could be read (a note says why). */
static bool read_xids(struct ng_gpu_check_result *c, const char *path, int64_t window_usec,
                      struct xid_events *x)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ng_check_note(c, "kernel log not read (%s: %s): Xids not checked", path, strerror(errno));
		return false;
	}
	struct stat st;
	bool stated = fstat(fd, &st) == 0;
	struct log_read r = {.c = c, .path = path, .is_device = stated && S_ISCHR(st.st_mode),
	                     .is_file = stated && S_ISREG(st.st_mode), .window_usec = window_usec,
	                     .start_usec = -1, .x = x};
	/* The size when opened: a log that grows while it is read is read to
	 * there, as the device is read to its end at the time. */
	r.file_cut = r.is_file && (uintmax_t)st.st_size > KMSG_MAX_BYTES;
	size_t want = r.file_cut ? KMSG_MAX_BYTES : r.is_file ? (size_t)st.st_size : 0;
	bool held = window_usec >= 0;
	char *buf = malloc(KMSG_CHUNK);
	int rc = -1;
	if (buf) {
		ng_xid_stream_init(&r.st, buf, KMSG_CHUNK, -1, held ? hold_xid : collect_xid, held ? (void *)&r : x,
		                   held && !r.is_device);
		rc = read_log(&r, fd, want, false);
	}
	if (rc == 0 && held && !r.start_fixed) {
		int64_t start = window_start(reference_usec(&r), window_usec);
		if (!r.pend_full) {
			size_t o = 0;
			for (size_t i = 0; i < r.n_pend; i++)
				if (in_window(&r.pend[i], start))
					r.pend[o++] = r.pend[i];
			if (o <= XID_EVENTS_MAX) {
				/* what collect_xid would have kept: all of them, in order */
				x->ev = r.pend;
				x->n = o;
				x->cap = r.cap_pend;
				r.pend = NULL;
			} else {
				for (size_t i = 0; i < o; i++)
					collect_xid(&r.pend[i], x);
			}
		} else if (lseek(fd, 0, SEEK_SET) == 0) {
			/* Too many Xids to hold: the file again, the window known. */
			size_t first = r.st.fed;
			ng_xid_stream_init(&r.st, r.st.buf, r.st.cap, start, collect_xid, x, false);
			rc = read_log(&r, fd, first, true);
		} else {
			ng_check_note(c, "kernel log %s: too many Xids to hold and the file cannot be read again (%s): "
			                 "Xids not checked", path, strerror(errno));
			x->n = 0;
			rc = 1;
		}
	}
	close(fd);
	free(r.st.buf ? r.st.buf : buf);
	free(r.pend);
	if (rc < 0) {
		ng_check_note(c, "kernel log %s: out of memory: Xids not checked", path);
		x->n = 0;
	}
	return rc == 0;
}

static double default_since_s(const struct ng_gpu_check_result *c)
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

static bool evidence(int code)
{
	ng_xid_class k = ng_xid_classify(code);
	return k == NG_XID_HARDWARE || k == NG_XID_LINK;
}

/* The whole node: a hardware or link Xid for a bus that no GPU in the
 * snapshot has is still this node's GPU (NVML may not list it, or may not
 * have answered at all). It becomes a GPU of its own, known only from the
 * kernel log, so the Xid is judged instead of dropped. A GPU the kernel
 * shows bound to another driver (a VM's) is not this node's to judge. */
static void add_log_ghosts(struct ng_gpu_check_result *c, const ng_xid_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!evidence(ev[i].code) && !(ev[i].cause > 0 && evidence(ev[i].cause)))
			continue;
		bool known = false;
		for (size_t g = 0; g < c->snap->n_gpus && !known; g++)
			known = strcmp(c->snap->gpu[g].bus, ev[i].bus) == 0;
		const ng_kernel_gpu *k = c->kview_read ? ng_kernel_view_find(c->kview, ev[i].bus) : NULL;
		if (known || (k && k->driver[0] && strcmp(k->driver, "nvidia") != 0))
			continue;
		ng_check_add_ghost(c, NG_GPU_UNANSWERED, ev[i].bus, k ? k->minor : -1, k ? k->uuid : "",
		                   "the kernel log");
	}
}

static const char *boot_id(const struct ng_gpu_check_result *c)
{
	return c->kview && c->kview->boot_id[0] ? c->kview->boot_id : NULL;
}

/* Xids an earlier check of this boot already judged (the store's mark for
 * their bus) are not judged again: an operator who resumed a node after
 * one must not see it drained on the same line still in the kernel's
 * buffer. A new boot starts afresh; without a boot id nothing is dropped.
 * Returns how many are left, in order. */
static size_t drop_judged(struct ng_gpu_check_result *c, ng_xid_event *ev, size_t n)
{
	const char *boot = boot_id(c);
	if (!boot || !c->n_marks)
		return n;
	size_t o = 0, dropped = 0;
	for (size_t i = 0; i < n; i++) {
		bool judged = false;
		for (size_t k = 0; k < c->n_marks && !judged; k++)
			judged = ev[i].at_usec >= 0 && strcmp(c->marks[k].bus, ev[i].bus) == 0 &&
			         strcmp(c->marks[k].boot_id, boot) == 0 && ev[i].at_usec <= c->marks[k].at_usec;
		if (judged)
			dropped++;
		else
			ev[o++] = ev[i];
	}
	if (dropped)
		ng_check_note(c, "%zu Xid line%s already judged by an earlier check in this boot: not judged again",
		              dropped, dropped == 1 ? "" : "s");
	return o;
}

/* The newest kernel time of the Xids judged now, per GPU bus in the
 * snapshot, for the store. */
static void mark_judged(struct ng_gpu_check_result *c, const ng_xid_event *ev, size_t n)
{
	const char *boot = boot_id(c);
	if (!boot)
		return;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].at_usec < 0)
			continue;
		bool ours = false;
		for (size_t g = 0; g < c->snap->n_gpus && !ours; g++)
			ours = strcmp(c->snap->gpu[g].bus, ev[i].bus) == 0;
		if (!ours)
			continue; /* a neighbour's Xid, not judged here: not marked either */
		ng_store_kmsg_mark *m = NULL;
		for (size_t k = 0; k < c->n_new_marks && !m; k++)
			if (strcmp(c->new_marks[k].bus, ev[i].bus) == 0)
				m = &c->new_marks[k];
		if (!m && c->n_new_marks < NG_GPU_MAX) {
			m = &c->new_marks[c->n_new_marks++];
			memset(m, 0, sizeof *m);
			snprintf(m->bus, sizeof m->bus, "%s", ev[i].bus);
			snprintf(m->boot_id, sizeof m->boot_id, "%s", boot);
			m->at_usec = -1;
		}
		if (m && ev[i].at_usec > m->at_usec)
			m->at_usec = ev[i].at_usec;
	}
}

void ng_check_attach_xids(struct ng_gpu_check_result *c)
{
	if (c->no_kmsg)
		return;
	const char *path = c->kmsg_path;
	if (!path) {
		const char *env = getenv("NODEGATE_KMSG");
		path = env && *env ? env : "/dev/kmsg";
	}
	double since_s = c->since_s >= 0 ? c->since_s : default_since_s(c);
	struct xid_events x = {0};
	if (!read_xids(c, path, since_s >= 0 ? (int64_t)(since_s * 1e6) : -1, &x)) {
		free(x.ev);
		return;
	}
	c->n_xid = x.n;
	if (x.dropped)
		ng_check_note(c, "%zu older Xid lines left out (only the newest %zu are attached)", x.dropped,
		     x.n);
	x.n = drop_judged(c, x.ev, x.n);
	if (x.n && c->mode == NG_CHECK_HEALTH)
		add_log_ghosts(c, x.ev, x.n);
	mark_judged(c, x.ev, x.n);
	if (x.n) {
		c->n_xid_elsewhere = ng_xid_attach(c->snap, x.ev, x.n);
		if (c->n_xid_elsewhere)
			ng_check_note(c, "%zu Xid line%s for GPUs this check does not cover: ignored",
			     c->n_xid_elsewhere, c->n_xid_elsewhere == 1 ? "" : "s");
	}
	free(x.ev);
}
