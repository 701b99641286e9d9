/* The /proc files the failing domain's evidence reads (parse/proc_text.h). */
#include "parse/proc_text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The next line of text[*pos..len) into line (cap bytes, NUL-terminated);
 * false at the end. A line longer than cap is cut: *cut says so. */
static bool next_line(const char *text, size_t len, size_t *pos, char *line, size_t cap,
                      bool *cut)
{
	if (*pos >= len)
		return false;
	size_t start = *pos, end = start;
	while (end < len && text[end] != '\n')
		end++;
	*pos = end < len ? end + 1 : end;
	size_t n = end - start;
	*cut = n >= cap;
	if (n >= cap)
		n = cap - 1;
	memcpy(line, text + start, n);
	line[n] = '\0';
	/* a NUL inside the line ends it: what follows is not text */
	*cut = *cut || strlen(line) != n;
	return true;
}

/* Splits line on spaces and tabs, in place: up to cap fields. */
static size_t fields(char *line, char **f, size_t cap)
{
	size_t n = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r", &save); t && n < cap; t = strtok_r(NULL, " \t\r", &save))
		f[n++] = t;
	return n;
}

static bool u64(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return false;
	*out = (uint64_t)v;
	return true;
}

size_t ng_diskstats_parse(const char *text, size_t len, ng_diskstat *out, size_t cap,
                          size_t *bad)
{
	size_t n = 0, pos = 0;
	*bad = 0;
	char line[1024];
	bool cut;
	while (text && n < cap && next_line(text, len, &pos, line, sizeof line, &cut)) {
		char *f[32];
		size_t k = fields(line, f, 32);
		if (k == 0 && !cut)
			continue;
		uint64_t major, minor;
		ng_diskstat *d = &out[n];
		uint64_t *c[] = {&d->reads, &d->reads_merged, &d->sectors_read, &d->ms_reading,
		                 &d->writes, &d->writes_merged, &d->sectors_written, &d->ms_writing,
		                 &d->in_flight, &d->ms_io, &d->ms_weighted};
		bool ok = !cut && k >= 14 && u64(f[0], &major) && u64(f[1], &minor) &&
		          strlen(f[2]) < sizeof d->name;
		for (size_t i = 0; ok && i < 11; i++)
			ok = u64(f[3 + i], c[i]);
		if (!ok) {
			(*bad)++;
			continue;
		}
		memcpy(d->name, f[2], strlen(f[2]) + 1);
		n++;
	}
	return n;
}

/* Undoes the kernel's \ooo escapes into dst (cap bytes); false when it does not fit. */
static bool unescape(const char *src, char *dst, size_t cap)
{
	size_t o = 0;
	for (const char *p = src; *p; p++) {
		char ch = *p;
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			ch = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		}
		if (o + 1 >= cap || ch == '\0')
			return false;
		dst[o++] = ch;
	}
	dst[o] = '\0';
	return true;
}

size_t ng_mounts_parse(const char *text, size_t len, ng_mount *out, size_t cap, size_t *bad)
{
	size_t n = 0, pos = 0;
	*bad = 0;
	char line[2048];
	bool cut;
	while (text && n < cap && next_line(text, len, &pos, line, sizeof line, &cut)) {
		char *f[8];
		size_t k = fields(line, f, 8);
		if (k == 0 && !cut)
			continue;
		ng_mount *m = &out[n];
		if (cut || k < 4 || !unescape(f[0], m->device, sizeof m->device) ||
		    !unescape(f[1], m->mountpoint, sizeof m->mountpoint) ||
		    !unescape(f[2], m->fstype, sizeof m->fstype) ||
		    !unescape(f[3], m->options, sizeof m->options) || m->mountpoint[0] != '/') {
			(*bad)++;
			continue;
		}
		n++;
	}
	return n;
}

const ng_mount *ng_mount_of(const ng_mount *m, size_t n, const char *path)
{
	const ng_mount *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; path && i < n; i++) {
		size_t l = strlen(m[i].mountpoint);
		bool root = l == 1 && m[i].mountpoint[0] == '/';
		if (strncmp(path, m[i].mountpoint, l) != 0 ||
		    (!root && path[l] != '\0' && path[l] != '/'))
			continue;
		if (!best || l >= best_len) {
			best = &m[i];
			best_len = l;
		}
	}
	return best;
}

/* "device D mounted on M with fstype T[ statvers=V]" into m; false when the
 * line is a device line that does not read. */
static bool device_line(char *line, ng_nfs_mount *m, bool *nfs)
{
	char *f[16];
	size_t k = fields(line, f, 16);
	*nfs = false;
	if (k < 7 || strcmp(f[0], "device") != 0 || strcmp(f[2], "mounted") != 0 ||
	    strcmp(f[3], "on") != 0 || strcmp(f[5], "with") != 0 || strcmp(f[6], "fstype") != 0)
		return false;
	if (k < 8)
		return false;
	*nfs = strcmp(f[7], "nfs") == 0 || strcmp(f[7], "nfs4") == 0;
	if (!*nfs)
		return true;
	memset(m, 0, sizeof *m);
	return unescape(f[1], m->device, sizeof m->device) &&
	       unescape(f[4], m->mountpoint, sizeof m->mountpoint) && m->mountpoint[0] == '/' &&
	       unescape(f[7], m->fstype, sizeof m->fstype);
}

/* "NAME: n n n n n n n n [n]" into op; false when it does not read. */
static bool op_line(char *line, ng_nfs_op *op)
{
	char *f[16];
	size_t k = fields(line, f, 16);
	size_t nl = k ? strlen(f[0]) : 0;
	if (k < 9 || k > 10 || nl < 2 || f[0][nl - 1] != ':' || nl > sizeof op->name)
		return false;
	memset(op, 0, sizeof *op);
	memcpy(op->name, f[0], nl - 1);
	op->name[nl - 1] = '\0';
	for (const char *c = op->name; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	uint64_t *v[] = {&op->ops,        &op->transmissions, &op->major_timeouts,
	                 &op->bytes_sent, &op->bytes_received, &op->queue_ms,
	                 &op->rtt_ms,     &op->execute_ms,     &op->errors};
	for (size_t i = 1; i < k; i++)
		if (!u64(f[i], v[i - 1]))
			return false;
	op->has_errors = k == 10;
	return true;
}

size_t ng_mountstats_parse(const char *text, size_t len, ng_nfs_mount *out, size_t cap,
                           size_t *bad)
{
	size_t n = 0, pos = 0;
	*bad = 0;
	char line[2048];
	bool cut, in_nfs = false, in_ops = false;
	while (text && next_line(text, len, &pos, line, sizeof line, &cut)) {
		const char *t = line + strspn(line, " \t");
		if (strncmp(t, "device ", 7) == 0) {
			in_nfs = in_ops = false;
			if (n == cap)
				break;
			bool nfs;
			if (cut || !device_line(line, &out[n], &nfs)) {
				(*bad)++;
				continue;
			}
			if (nfs) {
				in_nfs = true;
				n++;
			}
			continue;
		}
		if (!in_nfs)
			continue;
		ng_nfs_mount *m = &out[n - 1];
		if (strncmp(t, "age:", 4) == 0) {
			char *f[4];
			size_t k = fields(line, f, 4);
			m->has_age = !cut && k == 2 && u64(f[1], &m->age_s);
		} else if (strncmp(t, "per-op statistics", 17) == 0) {
			in_ops = true;
		} else if (in_ops && *t) {
			ng_nfs_op op;
			if (cut || !op_line(line, &op) || m->n_ops == NG_NFS_OPS_MAX)
				m->ops_unread++;
			else if (op.ops > 0)
				m->op[m->n_ops++] = op;
		}
	}
	return n;
}
