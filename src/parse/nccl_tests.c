/* nccl-tests (all_reduce_perf and its siblings): the per-size result table,
 * read into one record per collective and invocation.
 *
 * Formats: every stdout layout from before v2.13 to v2.19 (the column header
 * names the columns, so -I per-iteration, -S timestamps, -C cputime and the
 * old "error" column are read off it), the same output with its '#' prefixes
 * stripped, behind Slurm (`0: `) or Open MPI (`[1,0]<stdout>:`) labels, with
 * foreign lines anywhere, several invocations back to back; and the -J JSON
 * report (one compact line, or pretty-printed).
 *
 * A sample is the out-of-place busbw at the largest size of the table, one
 * per cycle (-N). Nothing that was not printed becomes a number: N/A stays
 * null, a busbw of 0 is no measurement, usage text is a record with a reason.
 *
 * The input is first split by launcher label, so that lines of different
 * ranks or tasks never mix into one table; each stream is then read line by
 * line into "runs" (one invocation each), and each run becomes records. */
#include "parse/parse.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/record_build.h"
#include "parse/launcher.h"
#include "parse/text.h"

#define NT_MAX_FIELDS 64
#define NT_MAX_MESSAGES 32
#define NT_MAX_NOTES 16
#define NT_MAX_TABLE 4096
#define NT_MAX_STR 240
#define NT_TAG NG_LAUNCH_TAG

/* What a run has seen so far; deciding whether a line starts a new run. */
enum {
	F_VERSION = 1 << 0,
	F_START = 1 << 1,
	F_PARAMS = 1 << 2,
	F_DEVICES = 1 << 3,
	F_LAYOUT = 1 << 4,
	F_ROWS = 1 << 5,
	F_OOB = 1 << 6,
	F_AVG = 1 << 7,
	F_CONCLUDED = 1 << 8,
	F_USAGE = 1 << 9,
	F_JSON = 1 << 10,
};
#define F_ALL 0x7ffu
/* Once a run has any of these, a header line belongs to the next run. */
#define F_TABLE_DONE (F_OOB | F_AVG | F_CONCLUDED | F_USAGE | F_JSON)

enum nt_wrong { NT_W_NONE, NT_W_NA, NT_W_NUM };

typedef struct {
	bool present; /* the half was printed at all */
	bool has_time, has_algbw, has_busbw;
	double time, algbw, busbw;
	enum nt_wrong wrong_kind;
	double wrong;
} nt_half;

typedef struct {
	double size;
	char type[24], redop[24]; /* "" when not printed */
	bool has_root;
	long long root;
	bool table_start; /* first row under a column header */
	nt_half oop, ip;
	cJSON *detail; /* the row as kept in the record */
} nt_row;

/* Where each column sits, read off the column header. */
typedef struct {
	bool known;
	bool pre_redop, pre_root;
	int nhalf; /* columns in each of the two halves */
	int h_algbw, h_busbw, h_wrong, h_imin, h_imax, h_ip99, h_icv, h_bitdiff;
	bool wrong_is_error; /* <= v2.11: a maximum relative error, not a count */
	bool cputime, per_iter;
	int ntrail; /* fields after the halves; a -S timestamp is two */
	bool timestamp;
} nt_layout;

typedef struct {
	unsigned seen;
	bool is_json;
	char tag[NT_TAG]; /* launcher label, "" when none */
	char version[32], git[24];
	long long nccl_lib, nccl_hdr; /* NCCL_VERSION_CODE, -1 unknown */
	char nccl_info[32];           /* "NCCL INFO NCCL version X" */
	char program[64], collective[48];
	const char *collective_source;
	int usage;            /* times the usage text was printed */
	char usage_why[200];  /* the option it refused, as it was said */
	char arg_error[200];  /* "invalid size specified for 'minbytes'" */
	int validation;       /* -1 unknown */
	cJSON *params, *devices, *messages, *notes, *json_meta, *argv;
	nt_layout layout;
	bool table_pending;
	nt_row *rows;
	size_t nrows, caprows;
	long long oob;
	char oob_status[12];
	double avg;
	bool avg_is_number;
	char avg_check[12];
	bool has_reduced;
	long long reduced_max;
	char json_path[200];
} nt_run;

/* Lines kept back for the next run of a stream (printed before it starts). */
typedef struct {
	char program[64];
	char json_path[200];
	char nccl_info[32];
	cJSON *messages;
} nt_pending;

typedef struct {
	nt_run *runs;
	size_t nruns, cap;
	cJSON *orphans; /* error lines no run claimed */
	ng_run_status st;
	cJSON **usage_rec; /* per run: the usage record it produced */
	bool oom;
} nt_ctx;

/* ---- small helpers ---------------------------------------------------- */

/* Copies s into dst as printable ASCII, so a record is valid JSON whatever
 * bytes the tool (or a corrupted log) wrote. */
static void copy_clean(ng_span s, char *dst, size_t cap)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s.s[i];
		dst[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	dst[n] = '\0';
}

static cJSON *span_str(ng_span s)
{
	char buf[NT_MAX_STR + 1];
	copy_clean(s, buf, sizeof buf);
	return cJSON_CreateString(buf);
}

static ng_span cspan(const char *s) { return (ng_span){s, strlen(s)}; }

/* obj[key] = item; the item is freed when it cannot be added. */
static void put(cJSON *obj, const char *key, cJSON *item)
{
	if (item && !cJSON_AddItemToObject(obj, key, item))
		cJSON_Delete(item);
}

static void push(cJSON *arr, cJSON *item)
{
	if (item && !cJSON_AddItemToArray(arr, item))
		cJSON_Delete(item);
}

static void put_num(cJSON *obj, const char *key, bool has, double v)
{
	put(obj, key, has ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

static void push_capped(cJSON *arr, ng_span s, int max)
{
	if (arr && cJSON_GetArraySize(arr) < max)
		push(arr, span_str(s));
}

/* A table cell: 1 (and *v) for a number, 0 for a figure the tool could not
 * give (N/A, nan, inf), -1 for anything that is not a cell at all. */
static int cell(ng_span s, double *v)
{
	if (ng_span_number(s, v))
		return 1;
	if (ng_span_eq(s, "N/A"))
		return 0;
	ng_span t = s;
	if (t.len && (t.s[0] == '-' || t.s[0] == '+'))
		t = ng_span_skip(t, 1);
	if (t.len == 3 && (strncasecmp(t.s, "nan", 3) == 0 || strncasecmp(t.s, "inf", 3) == 0))
		return 0;
	return -1;
}

static bool is_word(ng_span s, size_t max)
{
	if (s.len == 0 || s.len > max || !isalpha((unsigned char)s.s[0]))
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!isalnum((unsigned char)s.s[i]) && s.s[i] != '_')
			return false;
	return true;
}

static bool span_int_signed(ng_span s, long long *out)
{
	bool neg = s.len > 0 && s.s[0] == '-';
	long long v;
	if (!ng_span_integer(ng_span_skip(s, neg ? 1 : 0), &v))
		return false;
	*out = neg ? -v : v;
	return true;
}

static bool span_eq_span(ng_span a, ng_span b) { return a.len == b.len && memcmp(a.s, b.s, a.len) == 0; }

/* The text after the first ':' of s, trimmed. */
static ng_span after_colon(ng_span s)
{
	const char *c = memchr(s.s, ':', s.len);
	if (!c)
		return (ng_span){s.s + s.len, 0};
	return ng_span_trim(ng_span_skip(s, (size_t)(c - s.s) + 1));
}

/* NCCL_VERSION_CODE: 22902 is 2.29.2; before 2.9 it was 2804 for 2.8.4. */
static void nccl_version_str(long long code, char *buf, size_t cap)
{
	if (code >= 20900)
		snprintf(buf, cap, "%lld.%lld.%lld", code / 10000, code % 10000 / 100, code % 100);
	else
		snprintf(buf, cap, "%lld.%lld.%lld", code / 1000, code % 1000 / 100, code % 100);
}

/* "all_reduce_perf" (or a path to it, "all_reduce_perf_mpi") names the
 * program and its collective. */
static bool program_from_token(ng_span tok, char *prog, size_t pcap, char *coll, size_t ccap)
{
	for (size_t i = tok.len; i > 0; i--)
		if (tok.s[i - 1] == '/') {
			tok = ng_span_skip(tok, i);
			break;
		}
	while (tok.len && strchr("'\":,;)", tok.s[tok.len - 1]))
		tok.len--;
	while (tok.len && strchr("'\"(", tok.s[0]))
		tok = ng_span_skip(tok, 1);
	if (tok.len < 6 || tok.len >= pcap)
		return false;
	for (size_t i = 0; i < tok.len; i++)
		if (!isalnum((unsigned char)tok.s[i]) && !strchr("_.-", tok.s[i]))
			return false;
	const char *p = memmem(tok.s, tok.len, "_perf", 5);
	if (!p || p == tok.s)
		return false;
	size_t clen = (size_t)(p - tok.s), rest = tok.len - clen - 5;
	if (rest && p[5] != '_' && p[5] != '.')
		return false;
	ng_span c = {tok.s, clen};
	if (!is_word(c, ccap - 1))
		return false;
	for (size_t i = 0; i < clen; i++)
		if (isupper((unsigned char)c.s[i]))
			return false;
	copy_clean(tok, prog, pcap);
	copy_clean(c, coll, ccap);
	return true;
}

/* ---- runs ------------------------------------------------------------- */

static void run_free(nt_run *r)
{
	for (size_t i = 0; i < r->nrows; i++)
		cJSON_Delete(r->rows[i].detail);
	free(r->rows);
	cJSON_Delete(r->params);
	cJSON_Delete(r->devices);
	cJSON_Delete(r->messages);
	cJSON_Delete(r->notes);
	cJSON_Delete(r->json_meta);
	cJSON_Delete(r->argv);
}

static void layout_default(nt_layout *l)
{
	memset(l, 0, sizeof *l);
	l->pre_redop = l->pre_root = true;
	l->nhalf = 4;
	l->h_algbw = 1;
	l->h_busbw = 2;
	l->h_wrong = 3;
	l->h_imin = l->h_imax = l->h_ip99 = l->h_icv = l->h_bitdiff = -1;
}

/* Starts a run, taking what was printed for it before it began. */
static nt_run *new_run(nt_ctx *c, const char *tag, nt_pending *pend)
{
	if (c->nruns == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		nt_run *n = realloc(c->runs, cap * sizeof *n);
		if (!n) {
			c->oom = true;
			return NULL;
		}
		c->runs = n;
		c->cap = cap;
	}
	nt_run *r = &c->runs[c->nruns++];
	memset(r, 0, sizeof *r);
	snprintf(r->tag, sizeof r->tag, "%s", tag);
	r->nccl_lib = r->nccl_hdr = -1;
	r->validation = -1;
	r->oob = -1;
	layout_default(&r->layout);
	r->params = cJSON_CreateObject();
	r->devices = cJSON_CreateArray();
	r->messages = cJSON_CreateArray();
	r->notes = cJSON_CreateArray();
	if (!r->params || !r->devices || !r->messages || !r->notes)
		c->oom = true;
	if (pend) {
		if (pend->program[0]) {
			char coll[48], prog[64];
			if (program_from_token(cspan(pend->program), prog, sizeof prog, coll, sizeof coll)) {
				snprintf(r->program, sizeof r->program, "%s", prog);
				snprintf(r->collective, sizeof r->collective, "%s", coll);
				r->collective_source = "program name printed before the run";
			}
		}
		snprintf(r->json_path, sizeof r->json_path, "%s", pend->json_path);
		snprintf(r->nccl_info, sizeof r->nccl_info, "%s", pend->nccl_info);
		pend->program[0] = pend->json_path[0] = pend->nccl_info[0] = '\0';
		if (pend->messages) {
			cJSON *m;
			cJSON_ArrayForEach(m, pend->messages) push_capped(r->messages, cspan(m->valuestring), NT_MAX_MESSAGES);
			cJSON_Delete(pend->messages);
			pend->messages = NULL;
		}
	}
	return r;
}

static nt_row *add_row(nt_ctx *c, nt_run *r)
{
	if (r->nrows == r->caprows) {
		size_t cap = r->caprows ? r->caprows * 2 : 32;
		nt_row *n = realloc(r->rows, cap * sizeof *n);
		if (!n) {
			c->oom = true;
			return NULL;
		}
		r->rows = n;
		r->caprows = cap;
	}
	nt_row *row = &r->rows[r->nrows++];
	memset(row, 0, sizeof *row);
	return row;
}

static void set_collective(nt_run *r, const char *prog, const char *coll, const char *source)
{
	snprintf(r->program, sizeof r->program, "%s", prog);
	snprintf(r->collective, sizeof r->collective, "%s", coll);
	r->collective_source = source;
}

/* ---- the column header and the rows ---------------------------------- */

static bool is_time_col(ng_span t) { return ng_span_eq(t, "time") || ng_span_eq(t, "cputime"); }

/* "size count type redop root time algbw busbw #wrong time ..." (the '#'
 * already gone). Refuses anything it cannot map column by column. */
static bool layout_from_header(ng_span line, nt_layout *out)
{
	ng_span f[NT_MAX_FIELDS];
	size_t n = ng_split_ws(line, f, NT_MAX_FIELDS);
	if (n < 7 || n > NT_MAX_FIELDS || !ng_span_eq(f[0], "size") || !ng_span_eq(f[1], "count") ||
	    !ng_span_eq(f[2], "type"))
		return false;
	size_t t1 = 0, t2 = 0;
	for (size_t i = 3; i < n && !t2; i++)
		if (is_time_col(f[i]))
			*(t1 ? &t2 : &t1) = i;
	if (!t1 || !t2)
		return false;
	nt_layout l;
	layout_default(&l);
	l.known = true;
	l.pre_redop = l.pre_root = false;
	l.h_algbw = l.h_busbw = l.h_wrong = -1;
	for (size_t i = 3; i < t1; i++) {
		if (ng_span_eq(f[i], "redop") && !l.pre_redop && !l.pre_root)
			l.pre_redop = true;
		else if (ng_span_eq(f[i], "root") && !l.pre_root)
			l.pre_root = true;
		else
			return false;
	}
	l.nhalf = (int)(t2 - t1);
	if (t2 + (size_t)l.nhalf > n)
		return false;
	for (int k = 0; k < l.nhalf; k++) {
		ng_span a = f[t1 + (size_t)k];
		if (!span_eq_span(a, f[t2 + (size_t)k]))
			return false;
		if (k == 0)
			l.cputime = ng_span_eq(a, "cputime");
		else if (ng_span_eq(a, "algbw"))
			l.h_algbw = k;
		else if (ng_span_eq(a, "busbw"))
			l.h_busbw = k;
		else if (ng_span_eq(a, "#wrong"))
			l.h_wrong = k;
		else if (ng_span_eq(a, "error")) {
			l.h_wrong = k;
			l.wrong_is_error = true;
		} else if (ng_span_eq(a, "i_min"))
			l.h_imin = k;
		else if (ng_span_eq(a, "i_max"))
			l.h_imax = k;
		else if (ng_span_eq(a, "i_p99"))
			l.h_ip99 = k;
		else if (ng_span_eq(a, "i_cv%"))
			l.h_icv = k;
		else if (ng_span_eq(a, "#bitdiff"))
			l.h_bitdiff = k;
	}
	if (l.h_algbw < 0 || l.h_busbw < 0)
		return false;
	l.per_iter = l.h_imin >= 0 || l.h_imax >= 0 || l.h_ip99 >= 0 || l.h_icv >= 0;
	for (size_t i = t2 + (size_t)l.nhalf; i < n; i++) {
		bool ts = ng_span_eq(f[i], "timestamp");
		l.ntrail += ts ? 2 : 1;
		l.timestamp |= ts;
	}
	*out = l;
	return true;
}

/* size, count, type, then whichever of redop and root were printed: old
 * alltoall leaves redop blank under a header that names it. */
static bool row_prefix(const ng_span *f, int pn, const nt_layout *l, nt_row *row)
{
	long long v;
	if (!ng_span_integer(f[0], &v))
		return false;
	row->size = (double)v;
	if (!ng_span_integer(f[1], &v) || !is_word(f[2], sizeof row->type - 1))
		return false;
	copy_clean(f[2], row->type, sizeof row->type);
	int extra = pn - 3, want = (int)l->pre_redop + (int)l->pre_root;
	if (extra < 0 || extra > want)
		return false;
	for (int i = 0; i < extra; i++) {
		ng_span t = f[3 + i];
		long long root;
		bool is_int = span_int_signed(t, &root);
		bool root_slot = extra == want ? (l->pre_root && i == extra - 1) : is_int;
		if (root_slot) {
			if (!is_int)
				return false;
			row->has_root = true;
			row->root = root;
		} else {
			if (!is_word(t, sizeof row->redop - 1))
				return false;
			copy_clean(t, row->redop, sizeof row->redop);
		}
	}
	return true;
}

static bool half_extra(cJSON *o, const char *key, const ng_span *f, int idx)
{
	double v;
	if (idx < 0)
		return true;
	int k = cell(f[idx], &v);
	if (k < 0)
		return false;
	put_num(o, key, k == 1, v);
	return true;
}

/* One half (out-of-place or in-place) of a row, starting at f. */
static bool row_half(const ng_span *f, const nt_layout *l, nt_half *h, cJSON *o)
{
	int k;
	h->present = true;
	if ((k = cell(f[0], &h->time)) < 0)
		return false;
	h->has_time = k == 1;
	if ((k = cell(f[l->h_algbw], &h->algbw)) < 0)
		return false;
	h->has_algbw = k == 1;
	if ((k = cell(f[l->h_busbw], &h->busbw)) < 0)
		return false;
	h->has_busbw = k == 1;
	put_num(o, l->cputime ? "cputime_us" : "time_us", h->has_time, h->time);
	put_num(o, "algbw", h->has_algbw, h->algbw);
	put_num(o, "busbw", h->has_busbw, h->busbw);
	if (l->h_wrong >= 0) {
		if ((k = cell(f[l->h_wrong], &h->wrong)) < 0 || (k == 1 && h->wrong < 0))
			return false;
		h->wrong_kind = k == 1 ? NT_W_NUM : NT_W_NA;
		put_num(o, l->wrong_is_error ? "max_rel_error" : "wrong", k == 1, h->wrong);
	}
	return half_extra(o, "i_min_us", f, l->h_imin) && half_extra(o, "i_max_us", f, l->h_imax) &&
	       half_extra(o, "i_p99_us", f, l->h_ip99) && half_extra(o, "i_cv_pct", f, l->h_icv) &&
	       half_extra(o, "bitdiff", f, l->h_bitdiff);
}

static cJSON *row_detail_base(const nt_row *row, double count)
{
	cJSON *d = cJSON_CreateObject();
	put(d, "size", cJSON_CreateNumber(row->size));
	put(d, "count", cJSON_CreateNumber(count));
	put(d, "type", cJSON_CreateString(row->type));
	put(d, "redop", row->redop[0] ? cJSON_CreateString(row->redop) : cJSON_CreateNull());
	put_num(d, "root", row->has_root, (double)row->root);
	return d;
}

/* A data row under layout l, or false when the line is not one. A row whose
 * out-of-place half is blank (trace replay) has one half fewer. */
static bool parse_row(ng_span line, const nt_layout *l, nt_row *row)
{
	ng_span f[NT_MAX_FIELDS];
	size_t n = ng_split_ws(line, f, NT_MAX_FIELDS);
	if (n > NT_MAX_FIELDS)
		return false;
	int hn = l->nhalf, tn = l->ntrail, pn = (int)n - 2 * hn - tn;
	bool oop = true;
	int maxpre = 3 + (int)l->pre_redop + (int)l->pre_root;
	if (pn < 3 || pn > maxpre) {
		pn = (int)n - hn - tn;
		oop = false;
		if (pn < 3 || pn > maxpre)
			return false;
	}
	memset(row, 0, sizeof *row);
	if (!row_prefix(f, pn, l, row))
		return false;
	long long count;
	ng_span_integer(f[1], &count);
	cJSON *d = row_detail_base(row, (double)count);
	cJSON *ho = cJSON_CreateObject(), *hi = cJSON_CreateObject();
	const ng_span *p = f + pn;
	bool ok = true;
	if (oop) {
		ok = row_half(p, l, &row->oop, ho);
		p += hn;
	}
	ok = ok && row_half(p, l, &row->ip, hi);
	p += hn;
	if (ok && l->timestamp && tn >= 2) {
		char ts[64], b[32];
		copy_clean(p[0], ts, sizeof ts);
		copy_clean(p[1], b, sizeof b);
		size_t used = strlen(ts);
		snprintf(ts + used, sizeof ts - used, " %s", b);
		put(d, "timestamp", cJSON_CreateString(ts));
	}
	if (!ok) {
		cJSON_Delete(d);
		cJSON_Delete(ho);
		cJSON_Delete(hi);
		return false;
	}
	if (oop)
		put(d, "out_of_place", ho);
	else {
		cJSON_Delete(ho);
		put(d, "out_of_place", cJSON_CreateNull());
	}
	put(d, "in_place", hi);
	row->detail = d;
	return true;
}

/* ---- header-ish lines ------------------------------------------------- */

/* "nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup
 * iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0": words
 * up to a number name it, whatever the version added or dropped. */
static void param_name(const char *key, const char *suffix, char *out, size_t cap)
{
	static const char *const map[][2] = {
	    {"nThread", "nthreads"},       {"nGpus", "ngpus"},         {"minBytes", "min_bytes"},
	    {"maxBytes", "max_bytes"},     {"warmup iters", "warmup_iters"}, {"agg iters", "agg_iters"},
	    {"check iters", "check_iters"},
	};
	if (strcmp(key, "step") == 0) {
		snprintf(out, cap, "%s", strcmp(suffix, "bytes") == 0 ? "step_bytes" : "step_factor");
		return;
	}
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(key, map[i][0]) == 0) {
			snprintf(out, cap, "%s", map[i][1]);
			return;
		}
	size_t j = 0;
	for (size_t i = 0; key[i] && j + 1 < cap; i++) {
		char ch = key[i];
		if (isalnum((unsigned char)ch))
			out[j++] = (char)tolower((unsigned char)ch);
		else if (j && out[j - 1] != '_')
			out[j++] = '_';
	}
	out[j] = '\0';
}

static void read_params(nt_run *r, ng_span line)
{
	ng_span f[NT_MAX_FIELDS];
	size_t n = ng_split_ws(line, f, NT_MAX_FIELDS);
	char key[64] = "";
	for (size_t i = 0; i < n && i < NT_MAX_FIELDS; i++) {
		ng_span t = f[i];
		const char *paren = memchr(t.s, '(', t.len);
		ng_span num = paren ? (ng_span){t.s, (size_t)(paren - t.s)} : t;
		double v;
		if (ng_span_number(num, &v)) {
			char suffix[16] = "", name[48];
			if (paren) {
				ng_span sfx = ng_span_skip(t, num.len + 1);
				if (sfx.len && sfx.s[sfx.len - 1] == ')')
					sfx.len--;
				copy_clean(sfx, suffix, sizeof suffix);
			}
			if (key[0]) {
				param_name(key, suffix, name, sizeof name);
				if (name[0])
					ng_json_set(r->params, name, cJSON_CreateNumber(v));
				if (strcmp(name, "validation") == 0)
					r->validation = v == 0 ? 0 : 1;
			}
			key[0] = '\0';
			continue;
		}
		if (t.len && t.s[t.len - 1] == ':')
			t.len--;
		size_t used = strlen(key);
		if (used + t.len + 2 < sizeof key && t.len) {
			if (used)
				key[used++] = ' ';
			copy_clean(t, key + used, sizeof key - used);
		}
	}
}

/* "Rank  0 Group  0 Pid  36291 on host device  0 [0x07] NVIDIA A100-SXM4-40GB"
 * (no Group before v2.13; the bus id became a full BDF in v2.14). */
static void read_device(nt_run *r, ng_span line)
{
	const char *lb = memchr(line.s, '[', line.len);
	const char *rb = lb ? memchr(lb, ']', line.len - (size_t)(lb - line.s)) : NULL;
	/* Only the words before the bus id: the device name after it is free text. */
	ng_span head = lb ? (ng_span){line.s, (size_t)(lb - line.s)} : line;
	ng_span f[16];
	size_t n = ng_split_ws(head, f, 16);
	if (n > 16)
		n = 16;
	cJSON *d = cJSON_CreateObject();
	long long v;
	static const char *const keys[] = {"Rank", "rank", "Group", "group", "Pid", "pid", "device", "device"};
	for (size_t i = 0; i + 1 < n; i++) {
		if (ng_span_eq(f[i], "on") && !cJSON_GetObjectItemCaseSensitive(d, "host")) {
			put(d, "host", span_str(f[i + 1]));
			continue;
		}
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k += 2)
			if (ng_span_eq(f[i], keys[k]) && ng_span_integer(f[i + 1], &v) &&
			    !cJSON_GetObjectItemCaseSensitive(d, keys[k + 1]))
				put(d, keys[k + 1], cJSON_CreateNumber((double)v));
	}
	if (lb && rb) {
		put(d, "bus_id", span_str((ng_span){lb + 1, (size_t)(rb - lb - 1)}));
		ng_span name = ng_span_trim((ng_span){rb + 1, line.len - (size_t)(rb + 1 - line.s)});
		if (name.len)
			put(d, "name", span_str(name));
	}
	if (cJSON_GetObjectItemCaseSensitive(d, "rank"))
		push(r->devices, d);
	else
		cJSON_Delete(d);
}

/* "nccl-tests version 2.17.6 [(b4d5bee)] nccl-headers=22807 nccl-library=22807" */
static void read_version(nt_run *r, ng_span line)
{
	ng_span f[8];
	size_t n = ng_split_ws(line, f, 8);
	for (size_t i = 2; i < n && i < 8; i++) {
		ng_span t = f[i];
		long long v;
		if (i == 2)
			copy_clean(t, r->version, sizeof r->version);
		else if (t.len > 2 && t.s[0] == '(' && t.s[t.len - 1] == ')')
			copy_clean((ng_span){t.s + 1, t.len - 2}, r->git, sizeof r->git);
		else if (ng_span_starts_with(t, "nccl-headers=") && ng_span_integer(ng_span_skip(t, 13), &v))
			r->nccl_hdr = v;
		else if (ng_span_starts_with(t, "nccl-library=") && ng_span_integer(ng_span_skip(t, 13), &v))
			r->nccl_lib = v;
	}
}

/* "Out of bounds values : 0 OK" / "Avg bus bandwidth    : 13.4689 [OK|FAILED]" */
static void read_summary(nt_run *r, ng_span line, bool oob)
{
	ng_span f[4];
	size_t n = ng_split_ws(after_colon(line), f, 4);
	double v;
	if (oob) {
		long long k;
		if (n >= 1 && ng_span_integer(f[0], &k))
			r->oob = k;
		if (n >= 2)
			copy_clean(f[1], r->oob_status, sizeof r->oob_status);
		return;
	}
	if (n >= 1 && ng_span_number(f[0], &v)) {
		r->avg = v;
		r->avg_is_number = true;
	}
	if (n >= 2)
		copy_clean(f[1], r->avg_check, sizeof r->avg_check);
}

/* ---- reading one stream of lines -------------------------------------- */

typedef struct {
	nt_ctx *c;
	const char *tag;
	size_t cur_index; /* an index: the runs array moves as it grows */
	bool has_cur;
	nt_pending pend;
} nt_reader;

static nt_run *cur_run(nt_reader *rd) { return rd->has_cur ? &rd->c->runs[rd->cur_index] : NULL; }

/* The current run, or a new one when the current has seen any of mask. */
static nt_run *run_for(nt_reader *rd, unsigned mask)
{
	nt_run *r = cur_run(rd);
	if (r && !(r->seen & mask))
		return r;
	r = new_run(rd->c, rd->tag, &rd->pend);
	if (!r)
		return NULL;
	rd->cur_index = rd->c->nruns - 1;
	rd->has_cur = true;
	return r;
}

static bool is_message(ng_span t)
{
	static const char *const keys[] = {
	    "NCCL WARN", "error",    "Error",          "ERROR",    "failure",  "Failure",
	    "FAILED",    "failed",   "Test timeout",   "Aborted",  "Segmentation fault",
	    "Killed",    "Bus error", "out of memory", "core dumped", "Bitwise mismatch",
	};
	if (ng_span_contains(t, "NCCL INFO"))
		return false;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (ng_span_contains(t, keys[i]))
			return true;
	return false;
}

static void add_message(nt_reader *rd, ng_span t)
{
	nt_run *r = cur_run(rd);
	if (r) {
		push_capped(r->messages, t, NT_MAX_MESSAGES);
		return;
	}
	if (!rd->pend.messages)
		rd->pend.messages = cJSON_CreateArray();
	push_capped(rd->pend.messages, t, NT_MAX_MESSAGES);
}

/* "USAGE: all_reduce_perf", "all_reduce_perf: invalid option -- 'I'",
 * "invalid option '?'", "unrecognized option '--foo'", "option requires an
 * argument -- 'b'": the usage text, printed instead of a benchmark. */
static void read_usage(nt_reader *rd, ng_span t)
{
	nt_run *r = run_for(rd, F_ALL & ~(unsigned)F_USAGE);
	if (!r)
		return;
	bool usage_line = ng_span_starts_with(t, "USAGE:");
	r->seen |= F_USAGE;
	if (usage_line)
		r->usage++;
	ng_span f[4];
	size_t n = ng_split_ws(t, f, 4);
	char prog[64], coll[48];
	if (n >= 2 && usage_line && !r->collective[0] && program_from_token(f[1], prog, sizeof prog, coll, sizeof coll))
		set_collective(r, prog, coll, "usage text");
	if (n >= 1 && !usage_line && !r->collective[0] &&
	    program_from_token(f[0], prog, sizeof prog, coll, sizeof coll))
		set_collective(r, prog, coll, "program name in its error");
	if (usage_line)
		return;
	/* glibc names the option ("-- 'I'"); nccl-tests only says '?'. */
	const char *q = memchr(t.s, '\'', t.len);
	char opt[48] = "";
	if (q) {
		ng_span rest = {q + 1, t.len - (size_t)(q + 1 - t.s)};
		const char *q2 = memchr(rest.s, '\'', rest.len);
		if (q2)
			copy_clean((ng_span){rest.s, (size_t)(q2 - rest.s)}, opt, sizeof opt);
	}
	char why[200];
	bool glibc_named = opt[0] && strcmp(opt, "?") != 0;
	if (ng_span_contains(t, "requires an argument"))
		snprintf(why, sizeof why, "option '-%s' is missing its argument", opt);
	else if (ng_span_contains(t, "unrecognized option"))
		snprintf(why, sizeof why, "an option was not recognised (unrecognized option '%s')", opt);
	else if (glibc_named)
		snprintf(why, sizeof why, "an option was not recognised (invalid option '-%s')", opt);
	else
		snprintf(why, sizeof why, "an option was not recognised (invalid option '?'; glibc names it on stderr)");
	/* Keep the most specific account: glibc's names the letter. */
	if (!r->usage_why[0] || (glibc_named && strstr(r->usage_why, "'?'")))
		snprintf(r->usage_why, sizeof r->usage_why, "%s", why);
}

static void read_foreign(nt_reader *rd, ng_span t)
{
	nt_run *r = cur_run(rd);
	const char *v = ng_span_contains(t, "NCCL INFO NCCL version ") ? memmem(t.s, t.len, "NCCL version ", 13) : NULL;
	if (v) {
		ng_span f[1];
		ng_span rest = {v + 13, t.len - (size_t)(v + 13 - t.s)};
		if (ng_split_ws(rest, f, 1) >= 1) {
			const char *plus = memchr(f[0].s, '+', f[0].len);
			if (plus)
				f[0].len = (size_t)(plus - f[0].s);
			/* Rank 0 prints it once, after its run began; one before any run
			 * is kept for the next. */
			char *dst = r ? r->nccl_info : rd->pend.nccl_info;
			if (!dst[0])
				copy_clean(f[0], dst, 32);
		}
		return;
	}
	if (is_message(t)) {
		add_message(rd, t);
		return;
	}
	if (!ng_span_contains(t, "_perf"))
		return;
	ng_span f[NT_MAX_FIELDS];
	size_t n = ng_split_ws(t, f, NT_MAX_FIELDS);
	char prog[64], coll[48];
	for (size_t i = 0; i < n && i < NT_MAX_FIELDS; i++) {
		if (!program_from_token(f[i], prog, sizeof prog, coll, sizeof coll))
			continue;
		if (r && !(r->seen & (F_LAYOUT | F_ROWS | F_TABLE_DONE))) {
			if (!r->collective[0])
				set_collective(r, prog, coll, "program name printed before the table");
		} else {
			snprintf(rd->pend.program, sizeof rd->pend.program, "%s", prog);
		}
		return;
	}
}

static void read_data_row(nt_reader *rd, ng_span t)
{
	nt_run *r = cur_run(rd);
	nt_row tmp;
	bool fresh = !r || (r->seen & F_TABLE_DONE);
	nt_layout def;
	layout_default(&def);
	const nt_layout *l = fresh ? &def : &r->layout;
	if (!parse_row(t, l, &tmp)) {
		read_foreign(rd, t);
		return;
	}
	r = run_for(rd, F_TABLE_DONE);
	nt_row *row = r ? add_row(rd->c, r) : NULL;
	if (!row) {
		cJSON_Delete(tmp.detail);
		return;
	}
	*row = tmp;
	row->table_start = r->table_pending || !(r->seen & F_ROWS);
	r->table_pending = false;
	r->seen |= F_ROWS;
}

/* One line of a stream, its launcher label already gone. */
static void read_line(nt_reader *rd, ng_span s)
{
	ng_span t = ng_span_trim(s);
	bool comment = t.len && t.s[0] == '#';
	if (comment)
		t = ng_span_trim(ng_span_skip(t, 1));
	if (!t.len)
		return;
	nt_run *r;
	nt_layout lay;
	if (ng_span_starts_with(t, "nccl-tests version ")) {
		if ((r = run_for(rd, F_ALL)))
			read_version(r, t), r->seen |= F_VERSION;
	} else if (ng_span_starts_with(t, "Collective test starting:")) {
		if ((r = run_for(rd, F_ALL & ~(unsigned)F_VERSION))) {
			char prog[64], coll[48];
			ng_span f[2];
			if (ng_split_ws(after_colon(t), f, 2) >= 1 &&
			    program_from_token(f[0], prog, sizeof prog, coll, sizeof coll))
				set_collective(r, prog, coll, "'Collective test starting' line");
			r->seen |= F_START;
		}
	} else if (ng_span_starts_with(t, "Collective test concluded:")) {
		if ((r = cur_run(rd)))
			r->seen |= F_CONCLUDED;
	} else if (ng_span_starts_with(t, "nThread ")) {
		if ((r = run_for(rd, F_ALL & ~(unsigned)(F_VERSION | F_START))))
			read_params(r, t), r->seen |= F_PARAMS;
	} else if (ng_span_starts_with(t, "Rank ") && ng_span_contains(t, " Pid ")) {
		if ((r = run_for(rd, F_LAYOUT | F_ROWS | F_TABLE_DONE)))
			read_device(r, t), r->seen |= F_DEVICES;
	} else if (ng_span_starts_with(t, "Out of bounds values")) {
		if ((r = run_for(rd, F_OOB | F_CONCLUDED | F_USAGE | F_JSON)))
			read_summary(r, t, true), r->seen |= F_OOB;
	} else if (ng_span_starts_with(t, "Avg bus bandwidth")) {
		if ((r = run_for(rd, F_AVG | F_CONCLUDED | F_USAGE | F_JSON)))
			read_summary(r, t, false), r->seen |= F_AVG;
	} else if (ng_span_starts_with(t, "Reducing maxBytes to ")) {
		long long v;
		ng_span f[4];
		if ((r = run_for(rd, F_LAYOUT | F_ROWS | F_TABLE_DONE)) && ng_split_ws(t, f, 4) >= 4 &&
		    ng_span_integer(f[3], &v))
			r->has_reduced = true, r->reduced_max = v;
	} else if (ng_span_starts_with(t, "Writing JSON output to ")) {
		copy_clean(ng_span_trim(ng_span_skip(t, 23)), rd->pend.json_path, sizeof rd->pend.json_path);
	} else if (layout_from_header(t, &lay)) {
		if ((r = run_for(rd, F_TABLE_DONE))) {
			/* A second header after rows of the same invocation is another
			 * cycle's table; keep the first layout only if they agree. */
			r->layout = lay;
			r->table_pending = true;
			r->seen |= F_LAYOUT;
		}
	} else if (ng_span_starts_with(t, "USAGE:") || ng_span_contains(t, "invalid option") ||
	           ng_span_contains(t, "unrecognized option") || ng_span_contains(t, "option requires an argument")) {
		read_usage(rd, t);
	} else if (ng_span_starts_with(t, "invalid size specified")) {
		if ((r = run_for(rd, F_ALL & ~(unsigned)F_USAGE)))
			copy_clean(t, r->arg_error, sizeof r->arg_error), r->seen |= F_USAGE;
	} else if (ng_span_starts_with(t, "Per-Iteration Report") || ng_span_starts_with(t, "Blocking Enabled") ||
	           ng_span_starts_with(t, "Parallel Init Enabled") || ng_span_starts_with(t, "Bitwise Repeatability")) {
		if ((r = cur_run(rd)))
			push_capped(r->notes, t, NT_MAX_NOTES);
	} else if (comment) {
		if (ng_span_starts_with(t, "error:") || ng_span_starts_with(t, "skipping json output") ||
		    ng_span_starts_with(t, "Bitwise mismatch"))
			add_message(rd, t);
	} else if (isdigit((unsigned char)t.s[0])) {
		read_data_row(rd, t);
	} else {
		read_foreign(rd, t);
	}
}

/* ---- the -J JSON report ----------------------------------------------- */

/* The array, or NULL for anything else, so a loop over it is a loop over
 * nothing when the report has the wrong shape. */
static const cJSON *json_array(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsArray(it) ? it : NULL;
}

static bool json_num(const cJSON *o, const char *key, double *v)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return false;
	*v = it->valuedouble;
	return true;
}

static const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(it) && it->valuestring ? it->valuestring : NULL;
}

/* out_of_place / in_place: {"time"|"cpu_time", "alg_bw", "bus_bw", "nwrong"} */
static cJSON *json_half(const cJSON *h, nt_half *out)
{
	if (!cJSON_IsObject(h))
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	out->present = true;
	bool cpu = cJSON_GetObjectItemCaseSensitive(h, "cpu_time") != NULL;
	out->has_time = json_num(h, cpu ? "cpu_time" : "time", &out->time);
	out->has_algbw = json_num(h, "alg_bw", &out->algbw);
	out->has_busbw = json_num(h, "bus_bw", &out->busbw);
	put_num(o, cpu ? "cputime_us" : "time_us", out->has_time, out->time);
	put_num(o, "algbw", out->has_algbw, out->algbw);
	put_num(o, "busbw", out->has_busbw, out->busbw);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(h, "nwrong");
	if (w) {
		bool num = cJSON_IsNumber(w) && isfinite(w->valuedouble) && w->valuedouble >= 0;
		out->wrong_kind = num ? NT_W_NUM : NT_W_NA;
		out->wrong = num ? w->valuedouble : 0;
		put_num(o, "wrong", num, out->wrong);
	}
	return o;
}

/* The per-iteration block (-I): its statistics; the iteration times only at
 * the largest size, where the sample is taken. */
static cJSON *json_per_iter(const cJSON *p, bool keep_times)
{
	static const char *const keys[] = {"skipped_iterations", "min_us", "max_us", "avg_us", "p50_us",
	                                   "p95_us", "p99_us", "stdev_us", "cv_pct"};
	cJSON *o = cJSON_CreateObject();
	double v;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (json_num(p, keys[i], &v))
			put(o, keys[i], cJSON_CreateNumber(v));
	const cJSON *times = cJSON_GetObjectItemCaseSensitive(p, "times_us");
	if (cJSON_IsArray(times)) {
		put(o, "iterations", cJSON_CreateNumber(cJSON_GetArraySize(times)));
		if (keep_times) {
			cJSON *a = cJSON_CreateArray(), *t;
			cJSON_ArrayForEach(t, times) push(a, cJSON_IsNumber(t) && isfinite(t->valuedouble)
			                                           ? cJSON_CreateNumber(t->valuedouble)
			                                           : cJSON_CreateNull());
			put(o, "times_us", a);
		}
	}
	return o;
}

static void json_row(nt_ctx *c, nt_run *r, const cJSON *res, double maxsize)
{
	double size, count = 0;
	if (!cJSON_IsObject(res) || !json_num(res, "size", &size) || size < 0)
		return;
	nt_row *row = add_row(c, r);
	if (!row)
		return;
	row->size = size;
	row->table_start = r->nrows == 1;
	json_num(res, "count", &count);
	const char *s;
	if ((s = json_str(res, "type")))
		copy_clean(cspan(s), row->type, sizeof row->type);
	if ((s = json_str(res, "redop")))
		copy_clean(ng_span_trim(cspan(s)), row->redop, sizeof row->redop);
	const cJSON *root = cJSON_GetObjectItemCaseSensitive(res, "root");
	if (cJSON_IsString(root) && root->valuestring)
		row->has_root = span_int_signed(ng_span_trim(cspan(root->valuestring)), &row->root);
	else if (cJSON_IsNumber(root) && isfinite(root->valuedouble) && fabs(root->valuedouble) < 1e15)
		row->has_root = true, row->root = (long long)root->valuedouble;
	cJSON *d = row_detail_base(row, count);
	put(d, "out_of_place", json_half(cJSON_GetObjectItemCaseSensitive(res, "out_of_place"), &row->oop));
	put(d, "in_place", json_half(cJSON_GetObjectItemCaseSensitive(res, "in_place"), &row->ip));
	double v;
	if (json_num(res, "actual_iterations", &v))
		put(d, "actual_iterations", cJSON_CreateNumber(v));
	if ((s = json_str(res, "experiment_name")) && s[0])
		put(d, "experiment_name", span_str(cspan(s)));
	const cJSON *p;
	if (cJSON_IsObject(p = cJSON_GetObjectItemCaseSensitive(res, "out_of_place_per_iter")))
		put(d, "out_of_place_per_iter", json_per_iter(p, size == maxsize));
	if (cJSON_IsObject(p = cJSON_GetObjectItemCaseSensitive(res, "in_place_per_iter")))
		put(d, "in_place_per_iter", json_per_iter(p, size == maxsize));
	row->detail = d;
}

static void json_config(nt_run *r, const cJSON *cfg)
{
	static const char *const map[][2] = {
	    {"nthreads", "nthreads"},       {"ngpus", "ngpus"},
	    {"minimum_bytes", "min_bytes"}, {"maximum_bytes", "max_bytes"},
	    {"step_factor", "step_factor"}, {"step_bytes", "step_bytes"},
	    {"warmup_iters", "warmup_iters"}, {"iterations", "iters"},
	    {"aggregated_iterations", "agg_iters"}, {"validation", "validation"},
	    {"graph", "graph"},             {"bitwise_repeats", "bitwise_repeats"},
	    {"per_iter_skip", "per_iter_skip"}, {"blocking_collectives", "blocking_collectives"},
	    {"per_iter_timing", "per_iter_timing"}, {"parallel_init", "parallel_init"},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(cfg, map[i][0]);
		if (cJSON_IsNumber(it) && isfinite(it->valuedouble))
			ng_json_set(r->params, map[i][1], cJSON_CreateNumber(it->valuedouble));
		else if (cJSON_IsString(it) && it->valuestring)
			ng_json_set(r->params, map[i][1], span_str(cspan(it->valuestring)));
	}
	double v;
	if (json_num(cfg, "validation", &v))
		r->validation = v == 0 ? 0 : 1;
	const cJSON *devs = json_array(cfg, "devices"), *d;
	cJSON_ArrayForEach(d, devs)
	{
		if (!cJSON_IsObject(d) || !json_num(d, "rank", &v))
			continue;
		cJSON *o = cJSON_CreateObject();
		static const char *const keys[][2] = {{"rank", "rank"}, {"group", "group"},   {"pid", "pid"},
		                                      {"hostname", "host"}, {"device", "device"},
		                                      {"device_hex", "bus_id"}, {"device_info", "name"}};
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			const char *s = json_str(d, keys[i][0]);
			if (json_num(d, keys[i][0], &v))
				put(o, keys[i][1], cJSON_CreateNumber(v));
			else if (s)
				put(o, keys[i][1], span_str(cspan(s)));
		}
		push(r->devices, o);
	}
}

/* One -J report (file versions 1 to 3) into one run. */
static void json_report(nt_ctx *c, const cJSON *doc, const char *tag, nt_pending *pend)
{
	nt_run *r = new_run(c, tag, pend);
	if (!r)
		return;
	r->is_json = true;
	r->seen |= F_JSON;
	r->layout.known = true;
	r->json_meta = cJSON_CreateObject();
	double v;
	const char *s;
	if (json_num(doc, "version", &v))
		put(r->json_meta, "file_version", cJSON_CreateNumber(v));
	if ((s = json_str(doc, "start_time")))
		put(r->json_meta, "start_time", span_str(cspan(s)));
	if ((s = json_str(doc, "end_time")))
		put(r->json_meta, "end_time", span_str(cspan(s)));
	if (!cJSON_GetObjectItemCaseSensitive(doc, "results") && !cJSON_GetObjectItemCaseSensitive(doc, "config"))
		put(r->json_meta, "not_a_report", cJSON_CreateTrue());
	/* argv, never env: the report dumps the whole environment, secrets too. */
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(doc, "args"), *a;
	if (cJSON_IsArray(args)) {
		r->argv = cJSON_CreateArray();
		cJSON_ArrayForEach(a, args) if (cJSON_IsString(a) && a->valuestring) push(r->argv, span_str(cspan(a->valuestring)));
		const cJSON *a0 = cJSON_GetArrayItem(args, 0);
		char prog[64], coll[48];
		if (cJSON_IsString(a0) && a0->valuestring &&
		    program_from_token(cspan(a0->valuestring), prog, sizeof prog, coll, sizeof coll))
			set_collective(r, prog, coll, "-J report args");
	}
	if (json_num(doc, "nccl_version", &v) && v > 0 && v < 1e9)
		r->nccl_lib = (long long)v;
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(doc, "config");
	if (cJSON_IsObject(cfg))
		json_config(r, cfg);
	const cJSON *results = json_array(doc, "results"), *res;
	double maxsize = -1, sz;
	cJSON_ArrayForEach(res, results) if (json_num(res, "size", &sz) && sz > maxsize) maxsize = sz;
	cJSON_ArrayForEach(res, results)
	{
		size_t at = r - c->runs;
		json_row(c, r, res, maxsize);
		r = &c->runs[at];
	}
	if (r->nrows)
		r->seen |= F_ROWS;
	const cJSON *oob = cJSON_GetObjectItemCaseSensitive(doc, "out_of_bounds");
	if (cJSON_IsObject(oob) && json_num(oob, "count", &v) && v >= 0 && v < 1e15) {
		r->oob = (long long)v;
		s = json_str(oob, "okay");
		snprintf(r->oob_status, sizeof r->oob_status, "%s", s && strcmp(s, "true") == 0 ? "OK" : "FAILED");
	}
	const cJSON *avg = cJSON_GetObjectItemCaseSensitive(doc, "average_bus_bandwidth");
	if (cJSON_IsObject(avg)) {
		r->avg_is_number = json_num(avg, "bandwidth", &r->avg);
		s = json_str(avg, "okay");
		if (s)
			snprintf(r->avg_check, sizeof r->avg_check, "%s",
			         strcmp(s, "true") == 0 ? "OK" : strcmp(s, "false") == 0 ? "FAILED" : "unchecked");
	}
	const cJSON *errs = json_array(doc, "errors"), *e;
	cJSON_ArrayForEach(e, errs) if (cJSON_IsString(e) && e->valuestring && e->valuestring[0])
	    push_capped(r->messages, cspan(e->valuestring), NT_MAX_MESSAGES);
}

/* ---- launcher streams -------------------------------------------------- */

/* One stream's lines, its launcher prefixes already gone. */
static void read_stream(nt_ctx *c, const char *tag, const char *text, size_t len)
{
	nt_reader rd = {.c = c, .tag = tag};
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, text, len);
	while (ng_lines_next(&it, &line))
		read_line(&rd, line);
	if (rd.pend.messages) {
		cJSON *m;
		cJSON_ArrayForEach(m, rd.pend.messages) push_capped(c->orphans, cspan(m->valuestring), NT_MAX_MESSAGES);
		cJSON_Delete(rd.pend.messages);
	}
}

/* Each launcher stream (one rank or task: parse/launcher.h) is read on its
 * own, so lines of different ranks never mix into one table. */
static void read_text(nt_ctx *c, const ng_launch *l)
{
	for (size_t k = 0; k < l->nstreams && !c->oom; k++)
		read_stream(c, l->streams[k].tag, l->streams[k].text, l->streams[k].len);
}

/* ---- from runs to records --------------------------------------------- */

static bool is_reduction(const char *op)
{
	static const char *const ops[] = {"sum", "prod", "min", "max", "avg", "mulsum", "premulsum"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(op, ops[i]) == 0)
			return true;
	return false;
}

/* The collective, told from the table when nothing named it: busbw/algbw is
 * 2(n-1)/n for all_reduce alone, (n-1)/n for the gather/scatter family and 1
 * for broadcast, reduce and sendrecv; redop and root narrow it further.
 * Returns the one collective left, or NULL and the candidates. */
static const char *infer_collective(const nt_row *big, int nranks, cJSON *cands)
{
	static const struct {
		const char *name;
		int ratio;  /* 2: 2(n-1)/n, 1: (n-1)/n, 0: 1 */
		int redop;  /* 1 reduction, 0 none */
		int root;   /* 1 a rank, 0 -1 */
	} shapes[] = {
	    {"all_reduce", 2, 1, 0}, {"reduce_scatter", 1, 1, 0}, {"all_gather", 1, 0, 0},
	    {"alltoall", 1, 0, 0},   {"gather", 1, 0, 1},         {"scatter", 1, 0, 1},
	    {"sendrecv", 0, 1, 0},   {"broadcast", 0, 0, 1},      {"reduce", 0, 1, 1},
	};
	if (!big || !big->oop.has_algbw || !big->oop.has_busbw || big->oop.algbw < 1.0 || big->oop.busbw <= 0)
		return NULL;
	double r = big->oop.busbw / big->oop.algbw;
	int redop = !big->redop[0] ? -1 : strcmp(big->redop, "none") == 0 ? 0 : is_reduction(big->redop) ? 1 : -1;
	int root = !big->has_root ? -1 : big->root >= 0 ? 1 : 0;
	const char *found = NULL;
	int nfound = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int cls = shapes[i].ratio;
		bool fits = cls == 2 ? r > 1.02 && r <= 2.0 : cls == 1 ? r < 0.98 && r >= 0.45 : fabs(r - 1) <= 0.02;
		/* all_reduce over two ranks also moves busbw == algbw */
		if (cls == 2 && fabs(r - 1) <= 0.02 && (nranks == 2 || nranks <= 0))
			fits = true;
		if (!fits || (redop >= 0 && redop != shapes[i].redop) || (root >= 0 && root != shapes[i].root))
			continue;
		push(cands, cJSON_CreateString(shapes[i].name));
		found = shapes[i].name;
		nfound++;
	}
	return nfound == 1 ? found : NULL;
}

typedef struct {
	double wrong;
	bool is_null;
	const char *source;
} nt_wrong_result;

/* wrong: every numeric #wrong cell summed (both halves); null when nothing
 * was checked; from the out-of-bounds summary for builds that print an error
 * magnitude instead of a count. */
static nt_wrong_result compute_wrong(const nt_run *r, const size_t *idx, size_t n)
{
	size_t num = 0, na = 0;
	bool nonint = false;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const nt_half *hs[2] = {&r->rows[idx[i]].oop, &r->rows[idx[i]].ip};
		for (int k = 0; k < 2; k++) {
			if (!hs[k]->present || hs[k]->wrong_kind == NT_W_NONE)
				continue;
			if (hs[k]->wrong_kind == NT_W_NA) {
				na++;
				continue;
			}
			num++;
			sum += hs[k]->wrong;
			nonint |= hs[k]->wrong != floor(hs[k]->wrong);
		}
	}
	bool error_format = r->layout.known ? r->layout.wrong_is_error : nonint;
	if (num + na == 0)
		return (nt_wrong_result){0, true, "no #wrong column: correctness not reported"};
	if (r->validation == 0)
		return (nt_wrong_result){0, true, "validation: 0 (-c 0): correctness was not checked"};
	if (num == 0)
		return (nt_wrong_result){0, true, "every #wrong cell is N/A: correctness was not checked"};
	if (error_format) {
		if (r->oob >= 0)
			return (nt_wrong_result){(double)r->oob, false,
			                         "out-of-bounds summary (this build prints a maximum relative error, not a count)"};
		return (nt_wrong_result){0, true,
		                         "this build prints a maximum relative error, not a count, and no out-of-bounds summary was printed"};
	}
	/* The summary counts the whole invocation: it overrides a table of zeros
	 * only when no row of any datatype explains it. */
	double run_sum = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const nt_row *row = &r->rows[i];
		run_sum += (row->oop.wrong_kind == NT_W_NUM ? row->oop.wrong : 0) +
		           (row->ip.wrong_kind == NT_W_NUM ? row->ip.wrong : 0);
	}
	if (run_sum == 0 && r->oob > 0)
		return (nt_wrong_result){(double)r->oob, false,
		                         "out-of-bounds summary: checks FAILED though the table's #wrong cells read 0"};
	return (nt_wrong_result){sum, false, "sum of the table's #wrong cells"};
}

static void status_note(const nt_ctx *c, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (c->st.signal > 0)
		snprintf(buf, cap, "nccl-tests was killed by signal %d", c->st.signal);
	else if (c->st.exit_status > 0)
		snprintf(buf, cap, "nccl-tests exited with status %d", c->st.exit_status);
}

/* tool, the run status and the run-wide detail every record of a run shares. */
static cJSON *record_start(nt_ctx *c, const nt_run *r, const char *collective, size_t run_index)
{
	char metric[80];
	snprintf(metric, sizeof metric, "nccl.%s.busbw", collective ? collective : "unknown");
	cJSON *rec = ng_record_new(metric, NULL, NULL);
	if (!rec) {
		c->oom = true;
		return NULL;
	}
	cJSON *tool = ng_record_tool(rec);
	put(tool, "name", cJSON_CreateString("nccl-tests"));
	if (r && r->version[0])
		put(tool, "version", cJSON_CreateString(r->version));
	if (c->st.exit_status >= 0)
		put(tool, "exit_status", cJSON_CreateNumber(c->st.exit_status));
	if (c->st.signal > 0)
		put(tool, "signal", cJSON_CreateNumber(c->st.signal));
	if (r && r->argv)
		put(tool, "argv", cJSON_Duplicate(r->argv, true));
	cJSON *d = ng_record_detail(rec);
	char note[96];
	status_note(c, note, sizeof note);
	if (note[0])
		put(d, "run_status", cJSON_CreateString(note));
	if (!r)
		return rec;
	put(d, "format", cJSON_CreateString(r->is_json ? "json" : "text"));
	put(d, "run", cJSON_CreateNumber((double)run_index));
	if (r->tag[0])
		put(d, "launcher_label", cJSON_CreateString(r->tag));
	put(d, "program", r->program[0] ? cJSON_CreateString(r->program) : cJSON_CreateNull());
	put(d, "collective", collective ? cJSON_CreateString(collective) : cJSON_CreateNull());
	if (r->git[0])
		put(d, "nccl_tests_git", cJSON_CreateString(r->git));
	char v[32];
	if (r->nccl_lib >= 0) {
		nccl_version_str(r->nccl_lib, v, sizeof v);
		put(d, "nccl_version", cJSON_CreateString(v));
		put(d, "nccl_version_code", cJSON_CreateNumber((double)r->nccl_lib));
	} else if (r->nccl_info[0]) {
		put(d, "nccl_version", cJSON_CreateString(r->nccl_info));
	}
	if (r->nccl_hdr >= 0) {
		nccl_version_str(r->nccl_hdr, v, sizeof v);
		put(d, "nccl_headers_version", cJSON_CreateString(v));
	}
	if (r->json_meta)
		put(d, "json_report", cJSON_Duplicate(r->json_meta, true));
	if (cJSON_GetArraySize(r->params))
		put(d, "parameters", cJSON_Duplicate(r->params, true));
	if (cJSON_GetArraySize(r->devices)) {
		put(d, "devices", cJSON_Duplicate(r->devices, true));
		put(d, "nranks", cJSON_CreateNumber(cJSON_GetArraySize(r->devices)));
	}
	if (r->oob >= 0) {
		cJSON *o = cJSON_CreateObject();
		put(o, "count", cJSON_CreateNumber((double)r->oob));
		if (r->oob_status[0])
			put(o, "status", cJSON_CreateString(r->oob_status));
		put(d, "out_of_bounds", o);
	}
	if ((r->seen & F_AVG) || (r->is_json && (r->avg_is_number || r->avg_check[0]))) {
		put_num(d, "avg_busbw", r->avg_is_number, r->avg);
		if (r->avg_check[0])
			put(d, "avg_busbw_check", cJSON_CreateString(r->avg_check));
	}
	if (r->has_reduced)
		put(d, "reduced_max_bytes", cJSON_CreateNumber((double)r->reduced_max));
	if (r->json_path[0])
		put(d, "json_output", cJSON_CreateString(r->json_path));
	if (cJSON_GetArraySize(r->messages))
		put(d, "messages", cJSON_Duplicate(r->messages, true));
	if (cJSON_GetArraySize(r->notes))
		put(d, "notes", cJSON_Duplicate(r->notes, true));
	return rec;
}

/* Sets the reason, adding the run status when it ended badly. */
static void finish_reason(const nt_ctx *c, cJSON *rec, const char *why)
{
	char note[96];
	status_note(c, note, sizeof note);
	bool has_samples = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "samples")) > 0;
	if (why && why[0] && note[0])
		ng_record_set_reason(rec, "%s; %s", why, note);
	else if (why && why[0])
		ng_record_set_reason(rec, "%s", why);
	else if (note[0] && has_samples)
		ng_record_set_reason(rec, "%s; the figures it printed before that are kept", note);
	else if (note[0])
		ng_record_set_reason(rec, "%s", note);
}

static void add_record(nt_ctx *c, cJSON *out, cJSON *rec)
{
	if (rec && !cJSON_AddItemToArray(out, rec)) {
		cJSON_Delete(rec);
		c->oom = true;
	}
}

/* Under mpirun --tag-output every rank prints the same usage text on its own
 * labelled stream: one record says it, naming the labels. */
static bool merge_usage(nt_ctx *c, const nt_run *r, size_t ri)
{
	for (size_t j = 0; j < ri && c->usage_rec; j++) {
		const nt_run *o = &c->runs[j];
		cJSON *rec = c->usage_rec[j];
		if (!rec || !strcmp(o->tag, r->tag) || strcmp(o->program, r->program) || strcmp(o->usage_why, r->usage_why) ||
		    strcmp(o->arg_error, r->arg_error))
			continue;
		cJSON *d = ng_record_detail(rec);
		cJSON *labels = cJSON_GetObjectItemCaseSensitive(d, "launcher_labels");
		if (!labels) {
			labels = cJSON_CreateArray();
			push(labels, cJSON_CreateString(o->tag));
			put(d, "launcher_labels", labels);
		}
		push(labels, cJSON_CreateString(r->tag));
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "usage_printed");
		double total = (n ? n->valuedouble : (o->usage ? o->usage : 1)) + (r->usage ? r->usage : 1);
		ng_json_set(d, "usage_printed", cJSON_CreateNumber(total));
		return true;
	}
	return false;
}

/* A run that printed no results validated nothing: wrong is null (not
 * checked). The harness settles such records to no-measurement before the
 * gate (ng_records_settle_unmeasured), so the operator is told to fix the
 * harness, while the record itself never claims a check that did not run. */
static void nothing_measured(cJSON *rec)
{
	ng_record_set_wrong_null(rec);
}

/* nccl-tests' own trace of a failure: ".. host pid 7: Test failure common.cu:1072",
 * one per frame it unwinds, each naming no cause. */
static bool trace_line(const char *m) { return strstr(m, "Test failure") && !strchr(m, '\''); }

/* The line that says why a run died: nccl-tests' own "Test CUDA failure
 * common.cu:941 'system not yet initialized'" (or "Test NCCL failure"),
 * else another CUDA or NCCL failure line, else NCCL's own warning. NULL when
 * the capture holds none. */
static const char *cause_line(const cJSON *messages)
{
	static const char *const tiers[][4] = {
	    {"Test CUDA failure", "Test NCCL failure", NULL, NULL},
	    {"CUDA failure", "Cuda failure", "NCCL failure", "NCCL error"},
	    {"NCCL WARN", NULL, NULL, NULL},
	};
	for (size_t t = 0; t < sizeof tiers / sizeof tiers[0]; t++) {
		const cJSON *m;
		cJSON_ArrayForEach(m, messages)
		{
			for (size_t i = 0; i < 4 && tiers[t][i]; i++)
				if (cJSON_IsString(m) && strstr(m->valuestring, tiers[t][i]) && !trace_line(m->valuestring))
					return m->valuestring;
		}
	}
	return NULL;
}

/* The first NCCL warning other than the cause: NCCL's account of what the
 * failing call hit ("Cuda failure 'out of memory'"). */
static const char *first_warning(const cJSON *messages, const char *cause)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, messages) if (cJSON_IsString(m) && m->valuestring != cause &&
	                                    strstr(m->valuestring, "NCCL WARN")) return m->valuestring;
	return NULL;
}

/* The first message that is not a trace frame, when no cause was printed. */
static const char *first_message(const cJSON *messages)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, messages) if (cJSON_IsString(m) && !trace_line(m->valuestring)) return m->valuestring;
	return NULL;
}

/* "<cause>; first NCCL warning: <warning>" into buf. */
static void cause_words(const cJSON *messages, const char *cause, char *buf, size_t cap)
{
	const char *warn = first_warning(messages, cause);
	if (warn)
		snprintf(buf, cap, "%s; first NCCL warning: %s", cause, warn);
	else
		snprintf(buf, cap, "%s", cause);
}

static void emit_usage(nt_ctx *c, cJSON *out, const nt_run *r, size_t ri)
{
	if (merge_usage(c, r, ri))
		return;
	cJSON *rec = record_start(c, r, r->collective[0] ? r->collective : NULL, ri);
	if (!rec)
		return;
	cJSON *d = ng_record_detail(rec);
	if (r->collective_source)
		put(d, "collective_source", cJSON_CreateString(r->collective_source));
	if (r->usage > 1)
		put(d, "usage_printed", cJSON_CreateNumber(r->usage));
	char why[320];
	if (r->arg_error[0])
		snprintf(why, sizeof why, "nccl-tests refused its arguments (%s): it ran no benchmark", r->arg_error);
	else if (r->usage_why[0])
		snprintf(why, sizeof why, "nccl-tests printed its usage text: %s", r->usage_why);
	else
		snprintf(why, sizeof why,
		         "nccl-tests printed its usage text (-h, or an option it did not accept): it ran no benchmark");
	finish_reason(c, rec, why);
	nothing_measured(rec);
	add_record(c, out, rec);
	if (c->usage_rec)
		c->usage_rec[ri] = rec;
}

static void emit_empty(nt_ctx *c, cJSON *out, const nt_run *r, size_t ri)
{
	cJSON *rec = record_start(c, r, r->collective[0] ? r->collective : NULL, ri);
	if (!rec)
		return;
	cJSON *d = ng_record_detail(rec);
	if (r->collective_source)
		put(d, "collective_source", cJSON_CreateString(r->collective_source));
	char why[640], words[560];
	const char *cause = cause_line(r->messages);
	const char *other = cause ? NULL : first_message(r->messages);
	/* Only a column header is a table; a run that died in its preamble
	 * printed none. */
	const char *what = (r->seen & F_LAYOUT) ? "printed a table with no rows" : "ended before printing its result table";
	if (cause)
		cause_words(r->messages, cause, words, sizeof words);
	if (r->json_meta && cJSON_GetObjectItemCaseSensitive(r->json_meta, "not_a_report"))
		snprintf(why, sizeof why, "JSON that is not an nccl-tests -J report (no results or config)");
	else if (cause)
		snprintf(why, sizeof why, "nccl-tests %s: %s", what, words);
	else if (other)
		snprintf(why, sizeof why, "nccl-tests %s; last error: %s", what, other);
	else
		snprintf(why, sizeof why, "nccl-tests %s: nothing was measured", what);
	if (cause)
		put(d, "cause", cJSON_CreateString(cause));
	finish_reason(c, rec, why);
	nothing_measured(rec);
	if (!r->collective[0])
		put(d, "collective_note", cJSON_CreateString("no 'Collective test starting' line, program name or -J args named the collective"));
	add_record(c, out, rec);
}

static bool param_num(const nt_run *r, const char *key, double *v)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(r->params, key);
	if (!cJSON_IsNumber(it))
		return false;
	*v = it->valuedouble;
	return true;
}

/* Whether the table stops short of the sizes the run asked for (a crash or
 * a kill mid-sweep). nccl-tests steps size = minBytes, size *= factor (or
 * += step) while size <= maxBytes; the last such size is the largest row it
 * prints, less what rounding to whole elements per rank takes off. Unknown,
 * and so false, without the header's parameters. */
static bool table_cut_short(const nt_run *r, double largest, double *expected)
{
	double minb, maxb, f, step, size;
	if (!param_num(r, "min_bytes", &minb) || !param_num(r, "max_bytes", &maxb))
		return false;
	if (r->has_reduced && (double)r->reduced_max < maxb)
		maxb = (double)r->reduced_max;
	if (minb > maxb || minb < 0)
		return false;
	if (param_num(r, "step_factor", &f) && f > 1) {
		size = minb > 0 ? minb : 1;
		for (int i = 0; i < 128 && size * f <= maxb; i++)
			size *= f;
	} else if (param_num(r, "step_bytes", &step) && step > 0) {
		size = minb + floor((maxb - minb) / step) * step;
	} else if (minb == maxb) {
		size = maxb;
	} else {
		return false;
	}
	*expected = size;
	double slack = size * 1e-3 > 65536 ? size * 1e-3 : 65536;
	return largest + slack < size;
}

/* The per-iteration figures (-I) of a row's out-of-place half. */
static cJSON *per_iter_of(const cJSON *row)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(row, "out_of_place_per_iter");
	if (p)
		return cJSON_Duplicate(p, true);
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(row, "out_of_place"), *it;
	const cJSON *half = cJSON_IsObject(h) ? h : NULL;
	cJSON *o = NULL;
	cJSON_ArrayForEach(it, half)
	{
		if (!it->string || strncmp(it->string, "i_", 2) != 0)
			continue;
		if (!o)
			o = cJSON_CreateObject();
		put(o, it->string, cJSON_Duplicate(it, true));
	}
	return o;
}

/* The record for a group, its collective named by the run or else by the
 * table's shape around its largest row. */
static cJSON *group_record(nt_ctx *c, const nt_run *r, size_t ri, const nt_row *big)
{
	const char *coll = r->collective[0] ? r->collective : NULL;
	const char *source = r->collective_source;
	cJSON *cands = cJSON_CreateArray();
	if (!coll) {
		coll = infer_collective(big, cJSON_GetArraySize(r->devices), cands);
		source = coll ? "table shape (busbw/algbw ratio, redop, root)" : NULL;
	}
	cJSON *rec = record_start(c, r, coll, ri);
	cJSON *d = rec ? ng_record_detail(rec) : NULL;
	if (source)
		put(d, "collective_source", cJSON_CreateString(source));
	if (rec && !coll) {
		put(d, "collective_note",
		    cJSON_CreateString("the collective could not be told: no 'Collective test starting' line, program "
		                       "name or -J args, and the table's shape does not single one out"));
		if (cJSON_GetArraySize(cands))
			put(d, "collective_candidates", cands), cands = NULL;
	}
	cJSON_Delete(cands);
	return rec;
}

typedef struct {
	int complete, incomplete, zero, unreadable, no_oop;
} nt_cycles;

/* Cycles: a cycle ends at the largest size; a smaller size than the row
 * before, or a fresh column header, starts the next one. Each complete cycle
 * gives its out-of-place busbw as a sample, when it is one. */
static nt_cycles take_samples(cJSON *rec, const nt_run *r, const size_t *idx, size_t n, double maxsize)
{
	cJSON *d = ng_record_detail(rec);
	cJSON *inplace = cJSON_CreateArray(), *per_iter = cJSON_CreateArray();
	nt_cycles cy = {0};
	bool open = false;
	double prev = -1;
	for (size_t i = 0; i < n; i++) {
		const nt_row *row = &r->rows[idx[i]];
		if (open && (row->table_start || row->size < prev))
			cy.incomplete++, open = false;
		open = true;
		prev = row->size;
		if (row->size != maxsize)
			continue;
		open = false;
		cy.complete++;
		push(inplace, row->ip.present && row->ip.has_busbw ? cJSON_CreateNumber(row->ip.busbw) : cJSON_CreateNull());
		push(per_iter, per_iter_of(row->detail));
		if (!row->oop.present)
			cy.no_oop++;
		else if (!row->oop.has_busbw || row->oop.busbw < 0)
			cy.unreadable++;
		else if (row->oop.busbw == 0)
			cy.zero++;
		else
			ng_record_add_sample(rec, row->oop.busbw);
	}
	cy.incomplete += open;
	put(d, "cycles", cJSON_CreateNumber(cy.complete));
	if (cy.incomplete)
		put(d, "incomplete_cycles", cJSON_CreateNumber(cy.incomplete));
	put(d, "inplace_busbw_largest", inplace);
	if (cJSON_GetArraySize(per_iter))
		put(d, "per_iteration_largest", per_iter);
	else
		cJSON_Delete(per_iter);
	return cy;
}

/* The rows' detail moves into the record's table (at most NT_MAX_TABLE). */
static void move_table(cJSON *d, nt_run *r, const size_t *idx, size_t n)
{
	cJSON *table = cJSON_CreateArray();
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		nt_row *row = &r->rows[idx[i]];
		if (row->detail && kept < NT_MAX_TABLE) {
			push(table, row->detail);
			row->detail = NULL;
			kept++;
		}
	}
	put(d, "table", table);
	if (n > kept)
		put(d, "table_rows_omitted", cJSON_CreateNumber((double)(n - kept)));
}

static void no_sample_reason(const nt_cycles *cy, double maxsize, char *why, size_t cap)
{
	if (cy->zero)
		snprintf(why, cap,
		         "busbw is 0 at the largest size (%.0f bytes): a single rank moves nothing over a bus, so this is "
		         "not a measurement",
		         maxsize);
	else if (cy->unreadable)
		snprintf(why, cap, "busbw at the largest size is not a number (N/A or nan)");
	else if (cy->no_oop)
		snprintf(why, cap, "no out-of-place result at the largest size");
	else
		snprintf(why, cap, "the table stops before the largest size of a cycle: no complete cycle");
}

/* One record: the rows of one datatype and reduction of one run. */
static void emit_group(nt_ctx *c, cJSON *out, nt_run *r, size_t ri, const size_t *idx, size_t n)
{
	double maxsize = -1;
	const nt_row *big = NULL;
	for (size_t i = 0; i < n; i++)
		if (r->rows[idx[i]].size > maxsize)
			maxsize = r->rows[idx[i]].size, big = &r->rows[idx[i]];
	cJSON *rec = group_record(c, r, ri, big);
	if (!rec)
		return;
	cJSON *d = ng_record_detail(rec);
	const nt_row *first = &r->rows[idx[0]];
	put(d, "datatype", cJSON_CreateString(first->type));
	put(d, "redop", first->redop[0] ? cJSON_CreateString(first->redop) : cJSON_CreateNull());
	put_num(d, "root", first->has_root, (double)first->root);
	put(d, "largest_size", cJSON_CreateNumber(maxsize));
	if (r->layout.known && r->layout.cputime)
		put(d, "time_column", cJSON_CreateString("cputime"));
	if (r->layout.per_iter)
		put(d, "per_iteration", cJSON_CreateTrue());

	/* A sweep cut short gives no sample: its largest row is a smaller size
	 * than the baseline measured. */
	char why[640] = "";
	double expected = 0;
	bool cut = table_cut_short(r, maxsize, &expected);
	/* The summary prints only once the sweep is over: a table that stops
	 * below maxBytes and is followed by it was capped (nccl-tests lowers
	 * maxBytes to fit GPU memory, not always saying so), not cut. */
	if (cut && (r->seen & (F_OOB | F_AVG))) {
		cJSON *cap = cJSON_CreateObject();
		put(cap, "requested_largest_size", cJSON_CreateNumber(expected));
		put(cap, "largest_size", cJSON_CreateNumber(maxsize));
		put(cap, "evidence", cJSON_CreateString(r->seen & F_OOB ? "'Out of bounds values' summary after the table"
		                                                         : "'Avg bus bandwidth' summary after the table"));
		put(d, "sweep_capped", cap);
		cut = false;
	}
	if (cut) {
		put(d, "expected_largest_size", cJSON_CreateNumber(expected));
		const char *cause = cause_line(r->messages);
		snprintf(why, sizeof why,
		         "the table stops at %.0f bytes, short of the largest size the run asked for (%.0f bytes): the run "
		         "ended mid-sweep%s%s",
		         maxsize, expected, cause ? ": " : "", cause ? cause : "");
		if (cause)
			put(d, "cause", cJSON_CreateString(cause));
	} else {
		nt_cycles cy = take_samples(rec, r, idx, n, maxsize);
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "samples")) == 0)
			no_sample_reason(&cy, maxsize, why, sizeof why);
	}

	nt_wrong_result w = compute_wrong(r, idx, n);
	if (w.is_null)
		ng_record_set_wrong_null(rec);
	else
		ng_record_set_wrong(rec, w.wrong);
	put(d, "wrong_source", cJSON_CreateString(w.source));
	move_table(d, r, idx, n);
	finish_reason(c, rec, why);
	add_record(c, out, rec);
}

static void emit_run(nt_ctx *c, cJSON *out, size_t ri)
{
	nt_run *r = &c->runs[ri];
	if ((r->seen & F_USAGE) && !r->nrows) {
		emit_usage(c, out, r, ri);
		return;
	}
	if (!r->nrows) {
		emit_empty(c, out, r, ri);
		return;
	}
	/* -d all / -o all print one pass per datatype and op: each is its own
	 * record, because an int8 busbw is no sample of a float one. */
	size_t *idx = malloc(r->nrows * sizeof *idx);
	bool *done = calloc(r->nrows, sizeof *done);
	if (!idx || !done) {
		c->oom = true;
		free(idx);
		free(done);
		return;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		if (done[i])
			continue;
		size_t n = 0;
		for (size_t j = i; j < r->nrows; j++)
			if (!done[j] && strcmp(r->rows[j].type, r->rows[i].type) == 0 &&
			    strcmp(r->rows[j].redop, r->rows[i].redop) == 0)
				idx[n++] = j, done[j] = true;
		emit_group(c, out, r, ri, idx, n);
	}
	free(idx);
	free(done);
}

static bool looks_like_json(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '{')
			return true;
		if (!isspace((unsigned char)text[i]))
			return false;
	}
	return false;
}

/* The first line that starts with '{', as where a JSON report begins. */
static const char *json_start(const char *text, size_t len)
{
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, text, len);
	while (ng_lines_next(&it, &line)) {
		ng_span t = ng_span_trim(line);
		if (t.len && t.s[0] == '{')
			return t.s;
	}
	return NULL;
}

/* Whole-input JSON: one or more reports (-J writes path, path.0, ...). */
static void read_json(nt_ctx *c, const char *text, size_t len, cJSON *out)
{
	const char *p = text, *end = text + len;
	nt_pending pend = {0};
	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end)
			break;
		if (*p != '{') {
			read_stream(c, "", p, (size_t)(end - p));
			break;
		}
		const char *stop = NULL;
		cJSON *doc = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &stop, false);
		if (!doc) {
			cJSON *rec = record_start(c, NULL, NULL, 0);
			if (rec) {
				size_t at = stop && stop >= text && stop <= end ? (size_t)(stop - text) : (size_t)(p - text);
				char why[160];
				snprintf(why, sizeof why,
				         "the input looks like an nccl-tests -J JSON report but is not valid JSON (cut short?) "
				         "near byte %zu",
				         at);
				put(ng_record_detail(rec), "format", cJSON_CreateString("json"));
				finish_reason(c, rec, why);
				add_record(c, out, rec);
			}
			return;
		}
		if (cJSON_IsObject(doc))
			json_report(c, doc, "", &pend);
		cJSON_Delete(doc);
		if (!stop || stop <= p)
			break;
		p = stop;
	}
	cJSON_Delete(pend.messages);
}

cJSON *ng_parse_nccl_tests(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	nt_ctx c = {.st = st};
	ng_launch l;
	bool launched = ng_launch_read(text, len, &l);
	/* With prefixes or noise taken off, the streams one after another are
	 * what the tool printed; otherwise the text is read as it came. */
	const char *t = launched && ng_launch_changed(&l) ? l.joined : text;
	size_t tlen = t == text ? len : l.joined_len;
	cJSON *out = cJSON_CreateArray();
	c.orphans = cJSON_CreateArray();
	if (!out || !c.orphans || !launched)
		c.oom = true;
	else if (looks_like_json(t, tlen))
		read_json(&c, t, tlen, out);
	else {
		read_text(&c, &l);
		/* A -J report behind warning lines: read it only when the text held
		 * no run, so a report catted after its own log is not counted twice. */
		const char *brace = c.nruns ? NULL : json_start(t, tlen);
		if (brace)
			read_json(&c, brace, tlen - (size_t)(brace - t), out);
	}
	if (c.nruns && !(c.usage_rec = calloc(c.nruns, sizeof *c.usage_rec)))
		c.oom = true;
	for (size_t i = 0; i < c.nruns && !c.oom; i++)
		emit_run(&c, out, i);
	free(c.usage_rec);
	if (!c.oom && cJSON_GetArraySize(out) == 0) {
		cJSON *rec = record_start(&c, NULL, NULL, 0);
		if (rec) {
			bool blank = true;
			for (size_t i = 0; i < tlen && blank; i++)
				blank = isspace((unsigned char)t[i]) != 0;
			if (cJSON_GetArraySize(c.orphans))
				put(ng_record_detail(rec), "messages", cJSON_Duplicate(c.orphans, true));
			const char *cause = cause_line(c.orphans);
			char why[640], words[560];
			if (cause) {
				cause_words(c.orphans, cause, words, sizeof words);
				snprintf(why, sizeof why, "nccl-tests failed before printing a result table: %s", words);
				put(ng_record_detail(rec), "cause", cJSON_CreateString(cause));
			}
			finish_reason(&c, rec,
			              blank   ? "the output is empty: nccl-tests printed nothing"
			              : cause ? why
			                      : "no nccl-tests output found (no result table, usage text or -J report)");
			nothing_measured(rec);
			add_record(&c, out, rec);
		}
	}
	for (size_t i = 0; i < c.nruns; i++)
		run_free(&c.runs[i]);
	free(c.runs);
	cJSON_Delete(c.orphans);
	if (!c.oom && !ng_launch_annotate(out, &l))
		c.oom = true;
	ng_launch_free(&l);
	if (c.oom) {
		cJSON_Delete(out);
		ng_fail(err, "nccl-tests parser: out of memory reading %zu bytes of output", len);
		return NULL;
	}
	return out;
}
