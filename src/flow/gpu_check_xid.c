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

/* A saved log (NODEGATE_KMSG, --kmsg FILE) is read in one piece into a
 * buffer of its size: grown by doubling as the device's records are, its
 * copies touched twice its pages for nothing. (Not mapped: a log rotated
 * by truncation under a mapping would end the check on SIGBUS.) At most
 * KMSG_MAX_BYTES, as from the device. 0, or -1 to read it as a stream. */
static int read_saved_log(struct ng_gpu_check_result *c, int fd, const struct stat *st, const char *path,
                          ng_strbuf *b)
{
	size_t want = (uintmax_t)st->st_size > KMSG_MAX_BYTES ? KMSG_MAX_BYTES : (size_t)st->st_size;
	char *buf = malloc(want + 1);
	if (!buf)
		return -1;
	size_t got = 0;
	while (got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ng_check_note(c, "kernel log %s: read failed (%s): Xids only from what was read", path,
			              strerror(errno));
			break;
		}
		if (n == 0)
			break; /* it shrank since fstat */
		got += (size_t)n;
	}
	if (got == KMSG_MAX_BYTES && (uintmax_t)st->st_size > KMSG_MAX_BYTES)
		ng_check_note(c, "kernel log %s: read cut short (deadline or size): Xids only from what was read",
		              path);
	buf[got] = '\0';
	b->s = buf;
	b->len = got;
	b->cap = want + 1;
	return 0;
}

/* Reads the kernel log without ever blocking: /dev/kmsg one record per
 * read until EAGAIN, a file to its end, at most KMSG_MAX_BYTES. */
static char *read_log(struct ng_gpu_check_result *c, const char *path, bool *is_device, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ng_check_note(c, "kernel log not read (%s: %s): Xids not checked", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	bool stated = fstat(fd, &st) == 0;
	*is_device = stated && S_ISCHR(st.st_mode);
	ng_strbuf b = {0};
	if (stated && S_ISREG(st.st_mode) && read_saved_log(c, fd, &st, path, &b) == 0) {
		close(fd);
		*len = b.len;
		return b.s;
	}
	char rec[8192];
	bool cut = false;
	for (;;) {
		if (ng_check_now() >= c->t_end) {
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
			ng_check_note(c, "kernel log %s: read failed (%s): Xids only from what was read", path,
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
		ng_check_note(c, "kernel log %s: read cut short (deadline or size): Xids only from what was read",
		     path);
	if (b.oom) {
		ng_strbuf_free(&b);
		ng_check_note(c, "kernel log %s: out of memory: Xids not checked", path);
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
	bool is_device = false;
	size_t len = 0;
	char *text = read_log(c, path, &is_device, &len);
	if (!text)
		return;
	double since_s = c->since_s >= 0 ? c->since_s : default_since_s(c);
	int64_t since_usec = -1;
	if (since_s >= 0) {
		int64_t ref = is_device ? (int64_t)(ng_check_now() * 1e6) : newest_log_usec(text, len);
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
