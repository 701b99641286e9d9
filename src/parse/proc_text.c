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
