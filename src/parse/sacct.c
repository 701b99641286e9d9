/* sacct --parsable2 output, and Slurm host lists. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "parse/sacct.h"
#include "parse/text.h"

#define NAME_MAX_LEN 255
#define GROUPS_MAX 8
#define FIELDS 7

/* ---- host lists --------------------------------------------------------------------- */

struct hl {
	const char *seg[GROUPS_MAX + 1]; /* literal text before each group, and after the last */
	size_t seg_len[GROUPS_MAX + 1];
	const char *grp[GROUPS_MAX]; /* the text inside each [ ] */
	size_t grp_len[GROUPS_MAX];
	size_t n_grp;
	size_t max, count;
	int (*fn)(const char *name, size_t len, void *arg);
	void *arg;
};

static bool read_uint(const char *s, size_t len, unsigned long *out)
{
	if (len == 0 || len > 9)
		return false;
	unsigned long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	*out = v;
	return true;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

/* Appends s to buf at *len, or false when it would not fit. */
static bool put(char *buf, size_t *len, const char *s, size_t n)
{
	if (*len + n > NAME_MAX_LEN)
		return false;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
	return true;
}

/* 1 done, 0 malformed or too many, or fn's non-zero value (as 2 + it). */
static int expand_from(struct hl *h, size_t g, char *buf, size_t len, int *stop)
{
	if (!put(buf, &len, h->seg[g], h->seg_len[g]))
		return 0;
	if (g == h->n_grp) {
		if (len == 0)
			return 0;
		if (++h->count > h->max)
			return 0;
		int r = h->fn ? h->fn(buf, len, h->arg) : 0;
		if (r) {
			*stop = r;
			return 1;
		}
		return 1;
	}
	const char *p = h->grp[g], *end = p + h->grp_len[g];
	if (p == end)
		return 0;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *item_end = comma ? comma : end;
		const char *dash = memchr(p, '-', (size_t)(item_end - p));
		unsigned long lo, hi;
		size_t width = (size_t)((dash ? dash : item_end) - p);
		if (!read_uint(p, width, &lo))
			return 0;
		if (dash) {
			if (!read_uint(dash + 1, (size_t)(item_end - dash - 1), &hi) || hi < lo)
				return 0;
		} else {
			hi = lo;
		}
		if (hi - lo >= h->max)
			return 0;
		for (unsigned long v = lo; v <= hi; v++) {
			char num[24];
			int n = snprintf(num, sizeof num, "%0*lu", (int)width, v);
			size_t keep = len;
			if (n < 0 || !put(buf, &keep, num, (size_t)n))
				return 0;
			int r = expand_from(h, g + 1, buf, keep, stop);
			buf[len] = '\0';
			if (r == 0 || *stop)
				return r;
		}
		p = comma ? comma + 1 : end;
		if (comma && p == end)
			return 0; /* "[1,]" */
	}
	return 1;
}

/* One item of the list (no top-level commas): literal text and [groups]. */
static int expand_item(struct hl *h, const char *s, size_t len, int *stop)
{
	h->n_grp = 0;
	const char *p = s, *end = s + len, *lit = s;
	while (p < end) {
		if (*p == '[') {
			const char *close = memchr(p, ']', (size_t)(end - p));
			if (!close || h->n_grp == GROUPS_MAX)
				return 0;
			h->seg[h->n_grp] = lit;
			h->seg_len[h->n_grp] = (size_t)(p - lit);
			h->grp[h->n_grp] = p + 1;
			h->grp_len[h->n_grp] = (size_t)(close - p - 1);
			for (const char *q = p + 1; q < close; q++)
				if (!((*q >= '0' && *q <= '9') || *q == ',' || *q == '-'))
					return 0;
			h->n_grp++;
			p = lit = close + 1;
		} else if (name_char(*p)) {
			p++;
		} else {
			return 0;
		}
	}
	h->seg[h->n_grp] = lit;
	h->seg_len[h->n_grp] = (size_t)(end - lit);
	char buf[NAME_MAX_LEN + 1] = "";
	return expand_from(h, 0, buf, 0, stop);
}

long ng_hostlist_expand(const char *list, size_t len, size_t max,
                        int (*fn)(const char *name, size_t len, void *arg), void *arg)
{
	struct hl h = {.max = max, .fn = fn, .arg = arg};
	const char *p = list, *end = list + len;
	if (len == 0)
		return -1;
	while (p < end) {
		/* The item ends at the first comma outside brackets. */
		const char *q = p;
		int depth = 0;
		while (q < end && (depth || *q != ',')) {
			if (*q == '[')
				depth++;
			else if (*q == ']' && depth)
				depth--;
			q++;
		}
		if (q == p)
			return -1;
		int stop = 0;
		int r = expand_item(&h, p, (size_t)(q - p), &stop);
		if (stop)
			return -2;
		if (r == 0)
			return -1;
		p = q < end ? q + 1 : end;
		if (q < end && p == end)
			return -1; /* a trailing comma */
	}
	return (long)h.count;
}

/* ---- job lines ---------------------------------------------------------------------- */

/* "2026-11-03T04:05:06" as UTC; 0 for Unknown/None; -1 unreadable. */
static int64_t read_time(ng_span s)
{
	if (ng_span_eq(s, "Unknown") || ng_span_eq(s, "None") || s.len == 0)
		return 0;
	unsigned long v[6];
	static const size_t at[6] = {0, 5, 8, 11, 14, 17}, w[6] = {4, 2, 2, 2, 2, 2};
	if (s.len != 19 || s.s[4] != '-' || s.s[7] != '-' || s.s[10] != 'T' || s.s[13] != ':' ||
	    s.s[16] != ':')
		return -1;
	for (int i = 0; i < 6; i++)
		if (!read_uint(s.s + at[i], w[i], &v[i]))
			return -1;
	if (v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 60)
		return -1;
	int64_t days = ng_days_from_civil((int64_t)v[0], (int64_t)v[1], (int64_t)v[2]);
	return days * 86400 + (int64_t)v[3] * 3600 + (int64_t)v[4] * 60 + (int64_t)v[5];
}

/* AllocTRES "billing=8,cpu=64,gres/gpu=8,mem=500G,node=1": the GPUs. A
 * typed count ("gres/gpu:h100=8") is added up when no plain one is given.
 * -1 when a gpu entry is unreadable. */
static int64_t read_gpus(ng_span s)
{
	int64_t plain = -1, typed = 0;
	const char *p = s.s, *end = s.s + s.len;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		const char *eq = memchr(p, '=', (size_t)(e - p));
		if (eq) {
			ng_span key = {p, (size_t)(eq - p)};
			bool is_plain = ng_span_eq(key, "gres/gpu");
			bool is_typed = !is_plain && ng_span_starts_with(key, "gres/gpu:");
			if (is_plain || is_typed) {
				unsigned long v;
				if (!read_uint(eq + 1, (size_t)(e - eq - 1), &v))
					return -1;
				if (is_plain)
					plain = (int64_t)v;
				else
					typed += (int64_t)v;
			}
		}
		p = comma ? comma + 1 : end;
	}
	return plain >= 0 ? plain : typed;
}

static bool is_step(ng_span id)
{
	return memchr(id.s, '.', id.len) != NULL;
}

static bool id_ok(ng_span id)
{
	if (id.len == 0 || id.len >= sizeof(((ng_sacct_job *)0)->id))
		return false;
	for (size_t i = 0; i < id.len; i++) {
		char c = id.s[i];
		if (!((c >= '0' && c <= '9') || c == '_' || c == '+' || c == '[' || c == ']' ||
		      c == '-' || c == '%'))
			return false;
	}
	return id.s[0] >= '0' && id.s[0] <= '9';
}

struct names_ctx {
	ng_sacct *s;
	bool oom;
};

static int add_name(const char *name, size_t len, void *arg)
{
	struct names_ctx *c = arg;
	ng_sacct *s = c->s;
	if (s->names_len + len + 1 > s->names_cap) {
		size_t cap = s->names_cap ? s->names_cap * 2 : 4096;
		while (cap < s->names_len + len + 1)
			cap *= 2;
		char *p = realloc(s->names, cap);
		if (!p) {
			c->oom = true;
			return 1;
		}
		s->names = p;
		s->names_cap = cap;
	}
	if (s->n_names == s->name_at_cap) {
		size_t cap = s->name_at_cap ? s->name_at_cap * 2 : 1024;
		size_t *p = realloc(s->name_at, cap * sizeof *p);
		if (!p) {
			c->oom = true;
			return 1;
		}
		s->name_at = p;
		s->name_at_cap = cap;
	}
	memcpy(s->names + s->names_len, name, len + 1);
	s->name_at[s->n_names++] = s->names_len;
	s->names_len += len + 1;
	return 0;
}

static void refuse(ng_sacct *s, size_t line_no, const char *why, ng_span field)
{
	if (s->bad++ == 0) {
		s->first_bad = line_no;
		char shown[48];
		size_t n = 0;
		for (size_t i = 0; i < field.len && n + 4 < sizeof shown; i++) {
			unsigned char c = (unsigned char)field.s[i];
			if (c >= 0x20 && c < 0x7f)
				shown[n++] = (char)c;
			else
				n += (size_t)snprintf(shown + n, sizeof shown - n, "\\x%02x", c);
		}
		shown[n < sizeof shown ? n : sizeof shown - 1] = '\0';
		snprintf(s->bad_why, sizeof s->bad_why, "%s: \"%s\"", why, shown);
	}
}

/* 0 read or skipped, -1 out of memory. */
static int read_line(ng_sacct *s, ng_span line, size_t line_no, ng_err *err)
{
	ng_span f[FIELDS];
	size_t n = 0;
	const char *p = line.s, *end = line.s + line.len;
	for (;;) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		if (n == FIELDS) {
			refuse(s, line_no, "more than 7 fields", line);
			return 0;
		}
		f[n++] = (ng_span){p, (size_t)((bar ? bar : end) - p)};
		if (!bar)
			break;
		p = bar + 1;
	}
	if (n != FIELDS) {
		refuse(s, line_no, "not 7 '|'-separated fields (JobID,NodeList,AllocTRES,Start,End,"
		                   "State,ExitCode)",
		       line);
		return 0;
	}
	if (ng_span_eq(f[0], "JobID"))
		return 0; /* a header: --noheader was left out */
	if (is_step(f[0])) {
		s->steps++;
		return 0;
	}
	if (!id_ok(f[0])) {
		refuse(s, line_no, "not a job id", f[0]);
		return 0;
	}
	ng_sacct_job j = {.first_name = s->n_names};
	memcpy(j.id, f[0].s, f[0].len);
	j.id[f[0].len] = '\0';
	j.gpus = read_gpus(f[2]);
	if (j.gpus < 0) {
		refuse(s, line_no, "unreadable GPU count in AllocTRES", f[2]);
		return 0;
	}
	j.start = read_time(f[3]);
	j.end = read_time(f[4]);
	if (j.start < 0 || j.end < 0) {
		refuse(s, line_no, "unreadable time", j.start < 0 ? f[3] : f[4]);
		return 0;
	}
	ng_span st = f[5];
	size_t w = 0;
	while (w < st.len && st.s[w] != ' ')
		w++;
	if (w == 0 || w >= sizeof j.state) {
		refuse(s, line_no, "unreadable state", st);
		return 0;
	}
	for (size_t i = 0; i < w; i++) {
		char c = st.s[i];
		if (!((c >= 'A' && c <= 'Z') || c == '_')) {
			refuse(s, line_no, "unreadable state", st);
			return 0;
		}
	}
	memcpy(j.state, st.s, w);
	j.state[w] = '\0';
	const char *colon = memchr(f[6].s, ':', f[6].len);
	unsigned long code, sig;
	if (colon && read_uint(f[6].s, (size_t)(colon - f[6].s), &code) && code <= 255 &&
	    read_uint(colon + 1, (size_t)(f[6].s + f[6].len - colon - 1), &sig) && sig <= 255) {
		j.exit_code = (int)code;
		j.exit_signal = (int)sig;
	} else {
		j.exit_code = j.exit_signal = -1;
	}
	/* Pending jobs say "None assigned": no nodes, no hours. */
	if (f[1].len && !ng_span_eq(f[1], "None assigned") && !ng_span_eq(f[1], "None")) {
		struct names_ctx c = {s, false};
		size_t before = s->names_len, before_n = s->n_names;
		long got = ng_hostlist_expand(f[1].s, f[1].len, NG_SACCT_MAX_NODES, add_name, &c);
		if (c.oom)
			return ng_fail_as(err, NG_ERR_INPUT, "out of memory reading sacct host lists");
		if (got < 0) {
			s->names_len = before;
			s->n_names = before_n;
			refuse(s, line_no, "unreadable host list", f[1]);
			return 0;
		}
		j.n_nodes = (size_t)got;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		ng_sacct_job *p2 = realloc(s->jobs, cap * sizeof *p2);
		if (!p2)
			return ng_fail_as(err, NG_ERR_INPUT, "out of memory reading sacct jobs");
		s->jobs = p2;
		s->cap = cap;
	}
	s->jobs[s->n++] = j;
	return 0;
}

int ng_sacct_parse(const char *text, size_t len, ng_sacct *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_lines it;
	ng_lines_init(&it, text, len);
	ng_span line;
	size_t no = 0;
	while (ng_lines_next(&it, &line)) {
		no++;
		line = ng_span_trim(line);
		if (line.len == 0)
			continue;
		out->lines++;
		if (read_line(out, line, no, err) < 0)
			return -1;
	}
	return 0;
}

void ng_sacct_free(ng_sacct *s)
{
	free(s->jobs);
	free(s->names);
	free(s->name_at);
	memset(s, 0, sizeof *s);
}

const char *ng_sacct_node(const ng_sacct *s, const ng_sacct_job *j, size_t k)
{
	return s->names + s->name_at[j->first_name + k];
}
