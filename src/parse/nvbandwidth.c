/* nvbandwidth: text matrices and -j JSON (v0.5 to v0.10), into records.
 *
 * One record per testcase per invocation, metric "nvbandwidth.<testcase>".
 * A sample is the testcase's SUM figure (the "SUM <testcase> <value>" line, or
 * the JSON "sum"); for the bidirectional device-to-device tests, which print
 * three matrices, it is the "_total" one. The same testcase run twice inside
 * one invocation (`-t X X`) gives two samples of one record; separate
 * invocations (a new "nvbandwidth Version:" banner, or a new JSON document)
 * give separate records. Every matrix is kept in "detail" with null for N/A.
 * Latency testcases (ns) keep their SUM in detail only: the gate reads every
 * sample as higher-is-better.
 *
 * What nvbandwidth never prints is whether it verified the copied data: no
 * version echoes -s/--skipVerification. So "wrong" stays null unless the
 * output shows a verification failure, which versions show differently (see
 * verify_count), or a command line echoed before the invocation shows that
 * verification was on (see echo_line). docs/parsers.md has the details. */
#include "parse/parse.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/metric.h"
#include "core/record_build.h"
#include "parse/launcher.h"
#include "parse/text.h"

#define NVB_NAME_MAX 96     /* longest testcase name we accept (the longest known has 56) */
#define NVB_STR_MAX 400     /* longest message kept in a record */
#define NVB_FIELDS_MAX 4096 /* widest matrix row, in fields */
#define NVB_JSON_TRIES 64   /* failed JSON parse attempts per input, so crafted input stays linear */
#define NVB_LIST_MAX 256    /* testcase names kept from --list output */
#define NVB_KEEP_MAX 16     /* warnings, errors, list names... kept per invocation beyond this are counted */

/* The name of the record for an invocation as a whole: the --list output, a
 * usage text, testcases the text output waives without naming them, or
 * errors not tied to any testcase. No testcase has this name. */
#define NVB_RUN_METRIC "nvbandwidth.run"

/* ---- the parse state ------------------------------------------------------ */

enum mstate { M_NONE, M_HEADER, M_ROWS, M_ENDED };

struct mtx {
	enum mstate state;
	cJSON *obj, *values, *row_labels;
	size_t ncols, nrows;
	size_t header_len, label_w; /* for rows whose wide cells touch (setw(10) with 10 digits) */
	bool bad;
	size_t n, nna;
	double min, max, sum, sumabs;
};

struct run {
	cJSON *obj; /* in its record's detail.runs; NULL when no run is open */
	char name[NVB_NAME_MAX + 1];
	bool done, multi;
	struct mtx m;
};

struct inv {
	cJSON *recs; /* testcase records, in the order nvbandwidth named them */
	cJSON *info; /* what the invocation printed about itself */
	size_t start;
	bool json, list, usage, unparsed;
	int unnamed_waived, orphan_verify, listed;
	int cmd_verify; /* from an echoed command line: 1 verification on, -1 skipped, 0 not shown */
	cJSON *errors, *warnings, *devices, *list_names;
};

struct ctx {
	const char *text;
	size_t len;
	ng_run_status st;
	struct inv **invs;
	size_t ninv, capinv;
	struct inv *cur;     /* where text lines go */
	struct inv *orphans; /* where lines outside any text invocation go, when JSON is near */
	int pending_cmd;     /* an echoed command line waiting for its invocation (as cmd_verify) */
	char pending_line[NVB_STR_MAX + 1];
	struct run run;
	ng_span *fields;
	bool oom;
	bool json_unparsed;
};

/* ---- small helpers -------------------------------------------------------- */

static cJSON *track(struct ctx *c, cJSON *v)
{
	if (!v)
		c->oom = true;
	return v;
}

static void add_item(struct ctx *c, cJSON *obj, const char *key, cJSON *v)
{
	if (!v || !obj) {
		c->oom = true;
		cJSON_Delete(v);
		return;
	}
	bool ok = cJSON_GetObjectItemCaseSensitive(obj, key)
	              ? cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v)
	              : cJSON_AddItemToObject(obj, key, v);
	if (!ok) {
		cJSON_Delete(v);
		c->oom = true;
	}
}

static void push(struct ctx *c, cJSON *arr, cJSON *v)
{
	if (!v || !arr || !cJSON_AddItemToArray(arr, v)) {
		cJSON_Delete(v);
		c->oom = true;
	}
}

static void add_num(struct ctx *c, cJSON *obj, const char *key, double v)
{
	add_item(c, obj, key, cJSON_CreateNumber(v));
}

/* A printable copy of s: control bytes and non-ASCII become '?', so a record
 * is always valid JSON text whatever the log held; long text is cut. */
static cJSON *str_item(ng_span s)
{
	char buf[NVB_STR_MAX + 4];
	size_t n = s.len > NVB_STR_MAX ? NVB_STR_MAX : s.len;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s.s[i];
		buf[i] = (ch < 0x20 && ch != '\t') || ch >= 0x7f ? '?' : (char)ch;
	}
	if (s.len > n)
		memcpy(buf + n, "...", 3), n += 3;
	buf[n] = '\0';
	return cJSON_CreateString(buf);
}

static ng_span span_of(const char *s) { return (ng_span){s, strlen(s)}; }

static void add_str(struct ctx *c, cJSON *obj, const char *key, ng_span s)
{
	add_item(c, obj, key, str_item(s));
}

/* Appends s to arr unless arr already holds NVB_KEEP_MAX entries. */
static void keep(struct ctx *c, cJSON *arr, ng_span s)
{
	if (cJSON_GetArraySize(arr) < NVB_KEEP_MAX)
		push(c, arr, str_item(s));
}

static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* A testcase name as nvbandwidth spells them: letters, digits, '_'. */
static bool valid_name(ng_span s)
{
	if (s.len == 0 || s.len > NVB_NAME_MAX)
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!name_char(s.s[i]))
			return false;
	return true;
}

static void copy_name(char *dst, ng_span s)
{
	memcpy(dst, s.s, s.len);
	dst[s.len] = '\0';
}

static bool span_ends_with(ng_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len >= n && memcmp(s.s + s.len - n, lit, n) == 0;
}

/* Where lit first occurs in s, or s.len. */
static size_t span_find(ng_span s, const char *lit)
{
	size_t n = strlen(lit);
	if (n == 0 || s.len < n)
		return s.len;
	const char *p = memmem(s.s, s.len, lit, n);
	return p ? (size_t)(p - s.s) : s.len;
}

static size_t count_in(ng_span s, const char *lit)
{
	size_t n = 0, at;
	while ((at = span_find(s, lit)) < s.len) {
		n++;
		s = ng_span_skip(s, at + strlen(lit));
	}
	return n;
}

/* How many verification failures a message reports. nvbandwidth's sources
 * show three shapes: the earliest print one " Invalid value when checking
 * the pattern at <addr>" line per wrong word and go on; later host-side
 * checks print it for the first wrong word and abort (text), or put it in the
 * JSON "error"; v0.8 checks on the GPU, whose kernel prints it once per
 * checked buffer before "ASSERT in expression h_errorFlag == 0" ends the run
 * (stderr in text mode, the JSON "error" in -j mode). So the count is a lower
 * bound on wrong words, and at least 1 when either sign is present. */
static size_t verify_count(ng_span s)
{
	size_t n = count_in(s, "Invalid value when checking the pattern");
	if (n == 0 && span_find(s, "h_errorFlag") < s.len)
		n = 1;
	return n;
}

/* Lines nvbandwidth (or the CUDA/NVML asserts it wraps) prints for an error. */
static bool error_line(ng_span t)
{
	return ng_span_starts_with(t, "ERROR") || ng_span_starts_with(t, "Error:") ||
	       ng_span_starts_with(t, "ASSERT in expression") || ng_span_starts_with(t, "NVML_ERROR") ||
	       ng_span_starts_with(t, "[CUDA_ERROR") || ng_span_starts_with(t, "[cuda");
}

/* nvbandwidth's small-buffer NOTE, its multinode "Warning:", and the
 * "WARNING:" lines CUDA and the driver write beside it: kept, not judged. */
static bool warning_line(ng_span t)
{
	return ng_span_starts_with(t, "NOTE: You have chosen") || ng_span_starts_with(t, "Warning:") ||
	       ng_span_starts_with(t, "WARNING:");
}

/* The testcase a SUM or COEFFICIENT_OF_VARIATION key belongs to, and whether
 * the key is the testcase's own figure (the name, or "<name>_total") rather
 * than one direction of a bidirectional test ("_read1", "_write2"...). */
static ng_span key_base(ng_span key, bool *final, bool *part)
{
	static const char *const parts[] = {"_read1", "_read2", "_write1", "_write2"};
	*final = true;
	*part = false;
	if (span_ends_with(key, "_total")) {
		key.len -= strlen("_total");
		return key;
	}
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (span_ends_with(key, parts[i])) {
			*final = false;
			*part = true;
			key.len -= strlen(parts[i]);
			return key;
		}
	return key;
}

/* A shell prompt ("user@host:~/build$", "$", "#"), "+" from set -x, a
 * wrapper, or an environment assignment, before the command itself. */
static bool before_command(ng_span f)
{
	char last = f.s[f.len - 1];
	if (last == '$' || last == '#' || last == '>' || ng_span_eq(f, "+") || ng_span_eq(f, "sudo") ||
	    ng_span_eq(f, "env") || ng_span_eq(f, "time"))
		return true;
	size_t eq = span_find(f, "=");
	if (eq == 0 || eq == f.len || (f.s[0] >= '0' && f.s[0] <= '9'))
		return false;
	for (size_t i = 0; i < eq; i++)
		if (!name_char(f.s[i]))
			return false;
	return true;
}

/* Whether f runs nvbandwidth: "./nvbandwidth", "/opt/nvbandwidth". */
static bool nvb_command(ng_span f)
{
	size_t base = f.len;
	while (base > 0 && f.s[base - 1] != '/')
		base--;
	return ng_span_eq(ng_span_skip(f, base), "nvbandwidth");
}

/* A command line echoed into the capture ("$ ./nvbandwidth -t 0 1", "dell@h:~$
 * CUDA_VISIBLE_DEVICES=0,1 ./nvbandwidth | tee log", "+ /opt/nvbandwidth -s"):
 * nvbandwidth itself never prints whether -s/--skipVerification was given.
 * A bare "nvbandwidth ..." at the start of a line is prose, not an echo.
 * *skip: whether the options skip verification, read the way boost's parser
 * reads them (a unique prefix of a long option, short options stuck
 * together up to one that takes a value). */
static bool echo_line(ng_span t, bool *skip)
{
	ng_span f[64];
	size_t n = ng_split_ws(t, f, 64), k = 0;
	if (n > 64)
		n = 64;
	while (k < n && !nvb_command(f[k])) {
		if (!before_command(f[k]))
			return false;
		k++;
	}
	if (k == n || (k == 0 && span_find(f[0], "/") == f[0].len))
		return false;
	*skip = false;
	for (size_t i = k + 1; i < n; i++) {
		ng_span a = f[i];
		char c0 = a.s[0];
		if (strchr("|&;<>", c0) || (a.len > 1 && c0 >= '0' && c0 <= '9' && a.s[1] == '>') ||
		    ng_span_eq(a, "--"))
			break; /* the shell's, not nvbandwidth's */
		if (ng_span_starts_with(a, "--")) {
			if (a.len >= 3 && a.len <= 18 && memcmp(a.s, "--skipVerification", a.len) == 0)
				*skip = true;
			continue;
		}
		for (size_t j = 1; c0 == '-' && j < a.len; j++) {
			if (a.s[j] == 's')
				*skip = true;
			if (a.s[j] == 's' || !a.s[j] || strchr("btpi", a.s[j]))
				break; /* -b -t -p -i take the rest as their value */
		}
	}
	return true;
}

/* ---- invocations and records ---------------------------------------------- */

static struct inv *inv_new(struct ctx *c, size_t start, bool json)
{
	if (c->ninv == c->capinv) {
		size_t cap = c->capinv ? c->capinv * 2 : 4;
		struct inv **p = realloc(c->invs, cap * sizeof *p);
		if (!p) {
			c->oom = true;
			return NULL;
		}
		c->invs = p;
		c->capinv = cap;
	}
	struct inv *v = calloc(1, sizeof *v);
	if (!v) {
		c->oom = true;
		return NULL;
	}
	v->start = start;
	v->json = json;
	v->recs = track(c, cJSON_CreateArray());
	v->info = track(c, cJSON_CreateObject());
	v->errors = track(c, cJSON_CreateArray());
	v->warnings = track(c, cJSON_CreateArray());
	v->devices = track(c, cJSON_CreateArray());
	v->list_names = track(c, cJSON_CreateArray());
	c->invs[c->ninv++] = v;
	add_item(c, v->info, "format", cJSON_CreateString(json ? "json" : "text"));
	if (!json && c->pending_cmd) {
		v->cmd_verify = c->pending_cmd;
		add_str(c, v->info, "command_line", span_of(c->pending_line));
		c->pending_cmd = 0;
	}
	return v;
}

static void inv_free(struct inv *v)
{
	if (!v)
		return;
	cJSON_Delete(v->recs);
	cJSON_Delete(v->info);
	cJSON_Delete(v->errors);
	cJSON_Delete(v->warnings);
	cJSON_Delete(v->devices);
	cJSON_Delete(v->list_names);
	free(v);
}

/* The record of testcase name in v, created on first use. */
static cJSON *rec_for(struct ctx *c, struct inv *v, const char *name)
{
	char metric[NVB_NAME_MAX + 16];
	snprintf(metric, sizeof metric, "nvbandwidth.%s", name);
	cJSON *r;
	cJSON_ArrayForEach(r, v->recs)
	{
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metric");
		if (cJSON_IsString(m) && strcmp(m->valuestring, metric) == 0)
			return r;
	}
	r = ng_record_new(metric, NULL, NULL);
	if (!r) {
		c->oom = true;
		return NULL;
	}
	push(c, v->recs, r);
	if (c->oom)
		return NULL;
	cJSON *d = ng_record_detail(r);
	add_item(c, d, "testcase", cJSON_CreateString(name));
	add_item(c, d, "runs", cJSON_CreateArray());
	return c->oom ? NULL : r;
}

static cJSON *run_new(struct ctx *c, cJSON *rec)
{
	if (!rec)
		return NULL;
	cJSON *runs = cJSON_GetObjectItemCaseSensitive(ng_record_detail(rec), "runs");
	cJSON *o = track(c, cJSON_CreateObject());
	push(c, runs, o);
	return c->oom ? NULL : o;
}

/* Why this run gives no sample; the first reason found is the one kept. */
static void run_problem(struct ctx *c, cJSON *run, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void run_problem(struct ctx *c, cJSON *run, const char *fmt, ...)
{
	if (!run || cJSON_GetObjectItemCaseSensitive(run, "problem"))
		return;
	char buf[NVB_STR_MAX + 200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	add_str(c, run, "problem", span_of(buf));
}

/* Records a verification failure message on run. The kernel's "Invalid
 * value" line and the ASSERT that follows it report one failure, so a run's
 * count is its "Invalid value" lines, or 1 when there is only the ASSERT. A
 * verification failure is the reason the run gives no sample, whatever else
 * went wrong after it. */
static void run_verify(struct ctx *c, cJSON *run, ng_span msg)
{
	size_t lines = count_in(msg, "Invalid value when checking the pattern");
	bool assert_seen = span_find(msg, "h_errorFlag") < msg.len;
	if (!run || (!lines && !assert_seen))
		return;
	cJSON *v = cJSON_GetObjectItemCaseSensitive(run, "pattern_mismatch_reports");
	double have = cJSON_IsNumber(v) ? v->valuedouble : 0;
	add_num(c, run, "pattern_mismatch_reports", have + (double)lines);
	if (assert_seen)
		add_item(c, run, "verification_assert", cJSON_CreateTrue());
	cJSON *msgs = cJSON_GetObjectItemCaseSensitive(run, "verification_messages");
	if (!msgs) {
		msgs = track(c, cJSON_CreateArray());
		add_item(c, run, "verification_messages", msgs);
	}
	if (msgs && cJSON_GetArraySize(msgs) < NVB_KEEP_MAX)
		push(c, msgs, str_item(ng_span_trim(msg)));
	cJSON_DeleteItemFromObjectCaseSensitive(run, "problem");
	run_problem(c, run, "data verification failed: nvbandwidth read back data that differs from what it "
	                    "copied");
}

/* The wrong count a run reports (see run_verify). */
static double run_wrong(const cJSON *run)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(run, "pattern_mismatch_reports");
	double lines = cJSON_IsNumber(n) ? n->valuedouble : 0;
	if (lines < 1 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "verification_assert")))
		return 1;
	return lines;
}

/* ---- matrices ------------------------------------------------------------- */

static void mtx_stats_reset(struct mtx *m)
{
	m->n = m->nna = 0;
	m->min = INFINITY;
	m->max = -INFINITY;
	m->sum = m->sumabs = 0;
}

static void mtx_cell(struct ctx *c, struct mtx *m, cJSON *row, const double *v)
{
	if (!v) {
		m->nna++;
		push(c, row, cJSON_CreateNull());
		return;
	}
	m->n++;
	m->min = fmin(m->min, *v);
	m->max = fmax(m->max, *v);
	m->sum += *v;
	m->sumabs += fabs(*v);
	push(c, row, cJSON_CreateNumber(*v));
}

/* min/max/mean of the cells that are not N/A, as nvbandwidth's own MIN
 * (text -v) and JSON "min" count N/A as 0 and so read 0 on any matrix with
 * a diagonal. */
static void mtx_finish(struct ctx *c, struct mtx *m)
{
	if (!m->obj)
		return;
	add_num(c, m->obj, "cells", (double)(m->n + m->nna));
	add_num(c, m->obj, "na_cells", (double)m->nna);
	if (m->n) {
		add_num(c, m->obj, "min", m->min);
		add_num(c, m->obj, "max", m->max);
		add_num(c, m->obj, "mean", m->sum / (double)m->n);
	} else {
		add_item(c, m->obj, "min", cJSON_CreateNull());
		add_item(c, m->obj, "max", cJSON_CreateNull());
		add_item(c, m->obj, "mean", cJSON_CreateNull());
	}
}

/* The title names the unit in its last parentheses and the axes as
 * "CPU(row) -> GPU(column)"; the arrow is recorded as printed, since whether
 * it is the direction data moves differs between tests (device_to_device
 * read tests print "->" for a copy from the column GPU into the row GPU). */
static void parse_title(struct ctx *c, cJSON *m, ng_span title)
{
	title = ng_span_trim(title);
	add_str(c, m, "title", title);
	ng_span unit = {0};
	if (title.len >= 3 && title.s[title.len - 1] == ')') {
		size_t open = title.len - 1;
		while (open > 0 && title.s[open] != '(')
			open--;
		if (title.s[open] == '(')
			unit = (ng_span){title.s + open + 1, title.len - open - 2};
	}
	if (unit.len)
		add_str(c, m, "unit", unit);
	else
		add_item(c, m, "unit", cJSON_CreateNull());
	size_t r = span_find(title, "(row)"), col = span_find(title, "(column)");
	size_t rs = r, cs = col;
	while (rs > 0 && r < title.len && title.s[rs - 1] != ' ')
		rs--;
	while (cs > 0 && col < title.len && title.s[cs - 1] != ' ')
		cs--;
	if (r < title.len)
		add_str(c, m, "row_axis", (ng_span){title.s + rs, r - rs});
	else
		add_item(c, m, "row_axis", cJSON_CreateNull());
	if (col < title.len)
		add_str(c, m, "column_axis", (ng_span){title.s + cs, col - cs});
	else
		add_item(c, m, "column_axis", cJSON_CreateNull());
	const char *src = NULL, *dst = NULL, *arrow = NULL;
	if (r < title.len && col < title.len && r + 5 <= cs) {
		ng_span mid = ng_span_trim((ng_span){title.s + r + 5, cs - r - 5});
		if (ng_span_eq(mid, "->"))
			arrow = "->", src = "row", dst = "column";
		else if (ng_span_eq(mid, "<-"))
			arrow = "<-", src = "column", dst = "row";
		else if (ng_span_eq(mid, "<->"))
			arrow = "<->", src = "both", dst = "both";
	}
	add_item(c, m, "arrow", arrow ? cJSON_CreateString(arrow) : cJSON_CreateNull());
	add_item(c, m, "source_as_printed", src ? cJSON_CreateString(src) : cJSON_CreateNull());
	add_item(c, m, "destination_as_printed", dst ? cJSON_CreateString(dst) : cJSON_CreateNull());
}

/* A new matrix object in run's "matrices". */
static cJSON *matrix_new(struct ctx *c, cJSON *run)
{
	cJSON *ms = cJSON_GetObjectItemCaseSensitive(run, "matrices");
	if (!ms) {
		ms = track(c, cJSON_CreateArray());
		add_item(c, run, "matrices", ms);
	}
	cJSON *m = track(c, cJSON_CreateObject());
	push(c, ms, m);
	return c->oom ? NULL : m;
}

/* How far a SUM may sit from the cells it adds up: each printed cell is
 * rounded (half a unit of its last digit), the SUM too, and the additions
 * round. text: 2 decimals; JSON: 6 significant digits. */
static bool sum_agrees(double sum, const struct mtx *m, bool json)
{
	double tol = json ? 1e-5 * m->sumabs + 1e-6 : 0.005 * (double)(m->n + 1) + 1e-9 * m->sumabs;
	return fabs(sum - m->sum) <= tol;
}

/* ---- the text format ------------------------------------------------------ */

static struct inv *text_inv(struct ctx *c, size_t at)
{
	if (!c->cur || c->cur->json)
		c->cur = inv_new(c, at, false);
	return c->cur;
}

static void mtx_close(struct ctx *c)
{
	struct mtx *m = &c->run.m;
	if (m->state == M_NONE)
		return;
	if (m->state == M_HEADER) {
		add_str(c, m->obj, "problem", span_of("no column header after the title"));
		run_problem(c, c->run.obj, "a matrix of %s has a title but no rows", c->run.name);
	} else if (m->nrows == 0) {
		add_str(c, m->obj, "problem", span_of("no rows"));
		run_problem(c, c->run.obj, "a matrix of %s has no rows", c->run.name);
	}
	mtx_finish(c, m);
	memset(m, 0, sizeof *m);
}

/* The open run ends; without its SUM it measured nothing we can read. */
static void run_close(struct ctx *c, const char *why)
{
	struct run *r = &c->run;
	if (!r->obj)
		return;
	mtx_close(c);
	if (!r->done) {
		if (!cJSON_GetObjectItemCaseSensitive(r->obj, "status"))
			add_str(c, r->obj, "status", span_of("incomplete"));
		run_problem(c, r->obj, "no SUM line for %s: %s", r->name, why);
	}
	memset(r, 0, sizeof *r);
}

static void run_open(struct ctx *c, struct inv *v, ng_span name, bool implicit)
{
	run_close(c, "the next testcase started first");
	char buf[NVB_NAME_MAX + 1];
	copy_name(buf, name);
	cJSON *rec = rec_for(c, v, buf);
	cJSON *o = run_new(c, rec);
	if (!o)
		return;
	c->run.obj = o;
	memcpy(c->run.name, buf, name.len + 1);
	if (implicit)
		add_str(c, o, "note", span_of("no \"Running\" line: the run starts at its SUM line"));
}

static void mtx_open(struct ctx *c, ng_span title)
{
	mtx_close(c);
	struct mtx *m = &c->run.m;
	m->obj = matrix_new(c, c->run.obj);
	if (!m->obj)
		return;
	parse_title(c, m->obj, title);
	m->state = M_HEADER;
	mtx_stats_reset(m);
}

static void mtx_header(struct ctx *c, ng_span line)
{
	struct mtx *m = &c->run.m;
	size_t n = ng_split_ws(line, c->fields, NVB_FIELDS_MAX);
	cJSON *cols = track(c, cJSON_CreateArray());
	add_item(c, m->obj, "columns", cols);
	if (n == 0 || n > NVB_FIELDS_MAX) {
		add_str(c, m->obj, "problem", span_of("column header unreadable"));
		run_problem(c, c->run.obj, "a matrix of %s has an unreadable column header", c->run.name);
		m->bad = true;
	}
	for (size_t i = 0; i < n && i < NVB_FIELDS_MAX; i++)
		push(c, cols, str_item(c->fields[i]));
	m->ncols = n;
	m->header_len = line.len;
	m->label_w = line.len >= 10 * n ? line.len - 10 * n : 0;
	m->row_labels = track(c, cJSON_CreateArray());
	add_item(c, m->obj, "rows", m->row_labels);
	m->values = track(c, cJSON_CreateArray());
	add_item(c, m->obj, "values", m->values);
	m->state = M_ROWS;
}

static bool cells_read(const ng_span *f, size_t n)
{
	double v;
	for (size_t i = 0; i < n; i++)
		if (!ng_span_eq(f[i], "N/A") && !ng_span_number(f[i], &v))
			return false;
	return true;
}

/* Splits a matrix row into its label and ncols cells. Cells are right-
 * aligned in 10 characters, so a 10-character value touches its neighbour;
 * such a row has as many characters as the header, and is cut by position. */
static bool row_fields(struct ctx *c, ng_span line, ng_span *label, ng_span *cells)
{
	struct mtx *m = &c->run.m;
	size_t n = ng_split_ws(line, c->fields, NVB_FIELDS_MAX);
	if (n > NVB_FIELDS_MAX || n < 2)
		return false;
	if (n == m->ncols + 1 || (n > m->ncols + 1 && cells_read(c->fields + n - m->ncols, m->ncols))) {
		/* a label with spaces in it takes the extra fields, when what
		 * follows is all cells: a stray sentence is not a row */
		size_t lab = n - m->ncols;
		const char *end = c->fields[lab - 1].s + c->fields[lab - 1].len;
		*label = (ng_span){c->fields[0].s, (size_t)(end - c->fields[0].s)};
		memmove(cells, c->fields + lab, m->ncols * sizeof *cells);
		return true;
	}
	if (line.len != m->header_len || m->label_w == 0)
		return false;
	*label = ng_span_trim((ng_span){line.s, m->label_w});
	for (size_t i = 0; i < m->ncols; i++) {
		cells[i] = ng_span_trim((ng_span){line.s + m->label_w + 10 * i, 10});
		if (cells[i].len == 0)
			return false;
	}
	return label->len > 0;
}

/* Whether line is a row of the open matrix; if so it is taken. */
static bool mtx_row(struct ctx *c, ng_span line)
{
	struct mtx *m = &c->run.m;
	ng_span label;
	ng_span *cells = c->fields + NVB_FIELDS_MAX;
	if (m->bad || m->ncols == 0 || !row_fields(c, line, &label, cells))
		return false;
	cJSON *row = track(c, cJSON_CreateArray());
	push(c, m->values, row);
	push(c, m->row_labels, str_item(label));
	if (c->oom)
		return true;
	for (size_t i = 0; i < m->ncols; i++) {
		double v;
		if (ng_span_eq(cells[i], "N/A")) {
			mtx_cell(c, m, row, NULL);
		} else if (ng_span_number(cells[i], &v)) {
			mtx_cell(c, m, row, &v);
		} else {
			/* "inf", "-nan": kept out of the statistics, and the run with it */
			push(c, row, cJSON_CreateNull());
			if (!cJSON_GetObjectItemCaseSensitive(m->obj, "problem"))
				add_str(c, m->obj, "problem", span_of("a cell that is neither a number nor N/A"));
			run_problem(c, c->run.obj, "a matrix of %s has a cell that is neither a number nor N/A",
			            c->run.name);
		}
	}
	m->nrows++;
	return true;
}

static void text_sum(struct ctx *c, ng_span line, size_t at)
{
	ng_span f[4];
	if (ng_split_ws(line, f, 4) != 3 || !valid_name(f[1]))
		return;
	bool final, part;
	ng_span base = key_base(f[1], &final, &part);
	if (!valid_name(base))
		return;
	struct run *r = &c->run;
	struct inv *v = text_inv(c, at);
	if (!v)
		return;
	char name[NVB_NAME_MAX + 1];
	copy_name(name, base);
	if (!r->obj || r->done || strcmp(r->name, name) != 0)
		run_open(c, v, base, true);
	if (!r->obj)
		return;
	double val;
	bool num = ng_span_number(f[2], &val);
	struct mtx *m = &r->m;
	if (m->state != M_NONE) {
		bool rows = (m->state == M_ROWS || m->state == M_ENDED) && m->nrows;
		add_str(c, m->obj, "sum_key", f[1]);
		if (num)
			add_num(c, m->obj, "sum", val);
		if (final && rows && m->n == 0)
			run_problem(c, r->obj, "every cell of %s's matrix is N/A", name);
		if (num && rows && !sum_agrees(val, m, false))
			run_problem(c, r->obj, "SUM %.*s %.*s disagrees with its matrix, whose cells add to %.2f",
			            (int)f[1].len, f[1].s, (int)(f[2].len > 40 ? 40 : f[2].len), f[2].s, m->sum);
	}
	mtx_close(c);
	cJSON *sums = cJSON_GetObjectItemCaseSensitive(r->obj, "sums");
	if (!sums) {
		sums = track(c, cJSON_CreateObject());
		add_item(c, r->obj, "sums", sums);
	}
	char key[NVB_NAME_MAX + 1];
	copy_name(key, f[1]);
	add_item(c, sums, key, num ? cJSON_CreateNumber(val) : str_item(f[2]));
	if (part)
		r->multi = true;
	if (!final)
		return;
	r->done = true;
	if (!cJSON_GetObjectItemCaseSensitive(r->obj, "status"))
		add_str(c, r->obj, "status", span_of("complete"));
	if (!num) {
		add_item(c, r->obj, "sum", cJSON_CreateNull());
		run_problem(c, r->obj, "SUM %.*s is \"%.*s\", not a number", (int)f[1].len, f[1].s,
		            (int)(f[2].len > 40 ? 40 : f[2].len), f[2].s);
		return;
	}
	add_num(c, r->obj, "sum", val);
	if (!cJSON_GetObjectItemCaseSensitive(r->obj, "matrices") &&
	    !cJSON_GetObjectItemCaseSensitive(r->obj, "note"))
		run_problem(c, r->obj, "%s printed its SUM without a matrix this parser could read", name);
	if (r->multi != span_ends_with(f[1], "_total"))
		run_problem(c, r->obj, "%s printed %s without the matching per-direction SUM lines", name,
		            r->multi ? "per-direction SUM lines but no _total" : "a _total SUM");
	if (!(val > 0))
		run_problem(c, r->obj, "SUM %s is %s: nothing was measured", name, val == 0 ? "0" : "negative");
}

static void text_cv(struct ctx *c, ng_span line)
{
	ng_span f[4];
	double v;
	if (ng_split_ws(line, f, 4) != 3 || !c->run.obj || !ng_span_number(f[2], &v))
		return;
	bool final, part;
	ng_span base = key_base(f[1], &final, &part);
	if (final && base.len == strlen(c->run.name) && memcmp(base.s, c->run.name, base.len) == 0)
		add_num(c, c->run.obj, "coefficient_of_variation", v);
}

static void text_waived(struct ctx *c, ng_span t, size_t at)
{
	struct run *r = &c->run;
	/* nvbandwidth prints "Waived: " without the testcase's name; only a
	 * waiver right after a "Running X." line can be given a name */
	if (r->obj && !r->done && r->m.state == M_NONE &&
	    !cJSON_GetObjectItemCaseSensitive(r->obj, "matrices")) {
		add_str(c, r->obj, "status", span_of("waived"));
		add_str(c, r->obj, "message", t);
		run_problem(c, r->obj, "nvbandwidth waived %s: it does not apply to this system", r->name);
		r->done = true;
		run_close(c, "");
		return;
	}
	run_close(c, "a waiver followed");
	struct inv *v = text_inv(c, at);
	if (v)
		v->unnamed_waived++;
}

static void text_error(struct ctx *c, ng_span t, size_t at)
{
	struct run *r = &c->run;
	/* "ERROR: Testcase foo not found!" names what was asked for */
	if (ng_span_starts_with(t, "ERROR: Testcase ") && span_ends_with(t, " not found!")) {
		ng_span id = {t.s + 16, t.len - 16 - strlen(" not found!")};
		if (valid_name(id)) {
			run_close(c, "an error followed");
			struct inv *v = text_inv(c, at);
			if (!v)
				return;
			char name[NVB_NAME_MAX + 1];
			copy_name(name, id);
			cJSON *o = run_new(c, rec_for(c, v, name));
			if (!o)
				return;
			add_str(c, o, "status", span_of("not found"));
			add_str(c, o, "error", t);
			run_problem(c, o, "nvbandwidth has no testcase %s", name);
			return;
		}
	}
	/* "Error: <why>" ends the testcase printed last; a CUDA assert ends the
	 * whole run */
	if (r->obj && !r->done) {
		add_str(c, r->obj, "error", t);
		add_str(c, r->obj, "status", span_of("error"));
		run_problem(c, r->obj, "nvbandwidth reported an error in %s: %.*s", r->name,
		            (int)(t.len > 200 ? 200 : t.len), t.s);
		r->done = true;
		run_close(c, "");
		return;
	}
	struct inv *v = c->cur ? c->cur : text_inv(c, at);
	if (v)
		keep(c, v->errors, t);
}

static void text_verify(struct ctx *c, ng_span t, size_t at)
{
	struct run *r = &c->run;
	if (r->obj) {
		run_verify(c, r->obj, t);
		add_str(c, r->obj, "status", span_of("verification failed"));
		return;
	}
	struct inv *v = c->cur ? c->cur : text_inv(c, at);
	if (v) {
		v->orphan_verify += (int)verify_count(t);
		keep(c, v->errors, t);
	}
}

/* "Device 0: NVIDIA GH200 480GB (00000009:01:00)", up to v0.8 */
static bool device_line(ng_span t, ng_span *rest)
{
	if (!ng_span_starts_with(t, "Device "))
		return false;
	size_t i = 7;
	while (i < t.len && t.s[i] >= '0' && t.s[i] <= '9')
		i++;
	if (i == 7 || i + 1 >= t.len || t.s[i] != ':' || t.s[i + 1] != ' ')
		return false;
	*rest = ng_span_skip(t, 7);
	return true;
}

/* "12, device_to_device_memcpy_read_ce:" in --list output */
static bool list_line(ng_span t, ng_span *name)
{
	size_t i = 0;
	while (i < t.len && t.s[i] >= '0' && t.s[i] <= '9')
		i++;
	if (i == 0 || i + 2 >= t.len || t.s[i] != ',' || t.s[i + 1] != ' ' || t.s[t.len - 1] != ':')
		return false;
	*name = (ng_span){t.s + i + 2, t.len - i - 3};
	return valid_name(*name);
}

/* A matrix title ends with its unit in parentheses and speaks of bandwidth
 * or latency or of a row/column axis. */
static bool title_line(ng_span t)
{
	ng_span rest;
	if (t.len < 4 || t.s[t.len - 1] != ')' || device_line(t, &rest))
		return false;
	return ng_span_contains(t, "(column)") || ng_span_contains(t, "(row)") ||
	       ng_span_contains(t, "andwidth") || ng_span_contains(t, "atency");
}

static bool info_line(struct ctx *c, struct inv *v, ng_span t, const char *prefix, const char *key)
{
	if (!ng_span_starts_with(t, prefix))
		return false;
	if (v)
		add_str(c, v->info, key, ng_span_trim(ng_span_skip(t, strlen(prefix))));
	return true;
}

/* An echoed command line waits for the invocation that comes next: a
 * banner, or else the JSON document that ends this stretch of text. */
static bool take_echo(struct ctx *c, ng_span t)
{
	bool skip;
	if (!echo_line(t, &skip))
		return false;
	c->pending_cmd = skip ? -1 : 1;
	size_t n = t.len > NVB_STR_MAX ? NVB_STR_MAX : t.len;
	memcpy(c->pending_line, t.s, n);
	c->pending_line[n] = '\0';
	return true;
}

/* Lines of an invocation's preamble; true when t was one. */
static bool text_preamble(struct ctx *c, ng_span t, size_t at)
{
	if (ng_span_starts_with(t, "nvbandwidth Version:")) {
		run_close(c, "a new invocation started");
		c->cur = inv_new(c, at, false);
		info_line(c, c->cur, t, "nvbandwidth Version:", "nvbandwidth_version");
		return true;
	}
	struct inv *v = c->cur && !c->cur->json ? c->cur : NULL;
	if (info_line(c, v, t, "Built from Git version:", "git_version") ||
	    info_line(c, v, t, "CUDA Runtime Version:", "cuda_runtime_version") ||
	    info_line(c, v, t, "CUDA Driver Version (API):", "cuda_driver_version") ||
	    info_line(c, v, t, "CUDA Driver Version:", "cuda_driver_version") ||
	    info_line(c, v, t, "Driver Version:", "driver_version") ||
	    info_line(c, v, t, "MPI version:", "mpi_version"))
		return true;
	ng_span rest;
	if (device_line(t, &rest)) {
		if (v)
			keep(c, v->devices, rest);
		return true;
	}
	if (ng_span_eq(t, "Index, Name:")) {
		run_close(c, "a testcase list followed");
		v = text_inv(c, at);
		if (v)
			v->list = true;
		return true;
	}
	if (v && v->list && list_line(t, &rest)) {
		if (v->listed++ < NVB_LIST_MAX)
			push(c, v->list_names, str_item(rest));
		return true;
	}
	if (ng_span_starts_with(t, "nvbandwidth CLI") || ng_span_starts_with(t, "NVBandwidth CLI")) {
		v = text_inv(c, at);
		if (v)
			v->usage = true;
		return true;
	}
	return false;
}

static void text_line(struct ctx *c, ng_span line, size_t at)
{
	ng_span t = ng_span_trim(line);
	struct run *r = &c->run;
	if (t.len == 0) {
		if (r->m.state == M_ROWS)
			r->m.state = M_ENDED;
		return;
	}
	if (text_preamble(c, t, at))
		return;
	if ((!r->obj || r->done) && take_echo(c, t))
		return;
	if (ng_span_starts_with(t, "Running ") && t.s[t.len - 1] == '.') {
		ng_span name = {t.s + 8, t.len - 9};
		if (ng_span_starts_with(name, "benchmark "))
			name = ng_span_skip(name, 10);
		if (valid_name(name)) {
			struct inv *v = text_inv(c, at);
			if (v)
				run_open(c, v, name, false);
			return;
		}
	}
	if (ng_span_starts_with(t, "SUM ")) {
		text_sum(c, t, at);
		return;
	}
	if (ng_span_starts_with(t, "COEFFICIENT_OF_VARIATION ")) {
		text_cv(c, t);
		return;
	}
	if (ng_span_starts_with(t, "Waived:")) {
		text_waived(c, t, at);
		return;
	}
	if (verify_count(t)) {
		text_verify(c, t, at);
		return;
	}
	if (error_line(t)) {
		text_error(c, t, at);
		return;
	}
	if (warning_line(t)) {
		struct inv *v = c->cur ? c->cur : text_inv(c, at);
		if (v)
			keep(c, v->warnings, t);
		return;
	}
	if (!r->obj || r->done)
		return; /* a foreign line: NOTE footers, "#####", shell noise */
	if (r->m.state == M_HEADER) {
		mtx_header(c, line);
		return;
	}
	if (r->m.state == M_ROWS && mtx_row(c, line))
		return;
	if (title_line(t)) {
		mtx_open(c, t);
		return;
	}
	if (r->m.state == M_ROWS)
		r->m.state = M_ENDED;
}

/* ---- the JSON format ------------------------------------------------------ */

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = ng_json_get(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* JSON versions are numbers (12070) in -j output; kept as text like the
 * text output's "13.2 (13020)". */
static void json_info(struct ctx *c, struct inv *v, const cJSON *nvb, const char *key, const char *as)
{
	const cJSON *x = ng_json_get(nvb, key);
	char buf[64];
	if (cJSON_IsString(x))
		add_str(c, v->info, as, span_of(x->valuestring));
	else if (cJSON_IsNumber(x) && fabs(x->valuedouble) < 1e15) {
		snprintf(buf, sizeof buf, "%.0f", x->valuedouble);
		add_str(c, v->info, as, span_of(buf));
	}
}

/* A cell: "395.085", "N/A", or (leniently) a number. *bad when neither. */
static bool json_cell(const cJSON *x, double *v, bool *bad)
{
	*bad = false;
	if (cJSON_IsNumber(x) && isfinite(x->valuedouble)) {
		*v = x->valuedouble;
		return true;
	}
	if (cJSON_IsString(x)) {
		ng_span s = ng_span_trim(span_of(x->valuestring));
		if (ng_span_number(s, v))
			return true;
		if (ng_span_eq(s, "N/A"))
			return false;
	}
	*bad = true;
	return false;
}

/* One matrix from rows [r0, r0+n) of a JSON bandwidth_matrix. */
static void json_matrix(struct ctx *c, cJSON *run, const cJSON *rows, int r0, int n, int ncols,
                        const char *desc, const char *part, struct mtx *m)
{
	memset(m, 0, sizeof *m);
	mtx_stats_reset(m);
	m->obj = matrix_new(c, run);
	if (!m->obj)
		return;
	if (desc && !part)
		parse_title(c, m->obj, span_of(desc));
	if (part)
		add_str(c, m->obj, "part", span_of(part));
	cJSON *cols = track(c, cJSON_CreateArray()), *labels = track(c, cJSON_CreateArray());
	cJSON *vals = track(c, cJSON_CreateArray());
	add_item(c, m->obj, "columns", cols);
	add_item(c, m->obj, "rows", labels);
	add_item(c, m->obj, "values", vals);
	char buf[24];
	for (int j = 0; j < ncols && !c->oom; j++) {
		snprintf(buf, sizeof buf, "%d", j);
		push(c, cols, cJSON_CreateString(buf));
	}
	for (int i = 0; i < n && !c->oom; i++) {
		snprintf(buf, sizeof buf, "%d", i);
		push(c, labels, cJSON_CreateString(buf));
		cJSON *row = track(c, cJSON_CreateArray());
		push(c, vals, row);
		const cJSON *src = cJSON_GetArrayItem(rows, r0 + i), *x;
		cJSON_ArrayForEach(x, src)
		{
			double v;
			bool bad;
			if (json_cell(x, &v, &bad)) {
				mtx_cell(c, m, row, &v);
			} else if (!bad) {
				mtx_cell(c, m, row, NULL);
			} else {
				m->bad = true;
				push(c, row, cJSON_CreateNull());
			}
		}
	}
	if (m->bad)
		add_str(c, m->obj, "problem", span_of("a cell that is neither a number nor N/A"));
	m->nrows = (size_t)n;
	mtx_finish(c, m);
}

/* The testcase's matrices. nvbandwidth's JSON appends the rows of each
 * matrix a testcase prints to one "bandwidth_matrix", keeping only the last
 * description and sum: the bidirectional device-to-device tests arrive as
 * 3N rows of N cells (read1/write1, read2/write2, total). *last is the matrix
 * the sum belongs to. */
static bool json_matrices(struct ctx *c, cJSON *run, const char *name, const cJSON *tc,
                          struct mtx *last)
{
	const cJSON *rows = ng_json_get(tc, "bandwidth_matrix");
	const char *desc = jstr(tc, "bandwidth_description");
	memset(last, 0, sizeof *last);
	if (!rows)
		return false;
	int nrows = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : -1;
	int ncols = nrows > 0 && cJSON_IsArray(cJSON_GetArrayItem(rows, 0))
	                ? cJSON_GetArraySize(cJSON_GetArrayItem(rows, 0))
	                : -1;
	for (int i = 0; i < nrows && ncols > 0; i++) {
		const cJSON *row = cJSON_GetArrayItem(rows, i);
		if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != ncols)
			ncols = -1;
	}
	if (nrows <= 0 || ncols <= 0) {
		run_problem(c, run, "%s's bandwidth_matrix is not a non-empty table of equal rows", name);
		return true;
	}
	if (desc && strstr(desc, "Total") && nrows == 3 * ncols) {
		bool w = strstr(name, "_write") != NULL;
		json_matrix(c, run, rows, 0, ncols, ncols, NULL, w ? "write1" : "read1", last);
		json_matrix(c, run, rows, ncols, ncols, ncols, NULL, w ? "write2" : "read2", last);
		json_matrix(c, run, rows, 2 * ncols, ncols, ncols, desc, NULL, last);
	} else {
		json_matrix(c, run, rows, 0, nrows, ncols, desc, NULL, last);
	}
	if (last->bad)
		run_problem(c, run, "%s's matrix has a cell that is neither a number nor N/A", name);
	return true;
}

static bool status_is(const char *s, const char *lit) { return s && strcasecmp(s, lit) == 0; }

static void json_testcase(struct ctx *c, struct inv *v, const cJSON *tc)
{
	const char *name = jstr(tc, "name");
	if (!name || !valid_name(span_of(name))) {
		keep(c, v->errors, span_of("a testcase without a usable \"name\""));
		return;
	}
	cJSON *run = run_new(c, rec_for(c, v, name));
	if (!run)
		return;
	const char *status = jstr(tc, "status");
	const char *error = jstr(tc, "error");
	add_item(c, run, "status", status ? str_item(span_of(status)) : cJSON_CreateNull());
	struct mtx last;
	bool have_matrix = json_matrices(c, run, name, tc, &last);
	const cJSON *sum = ng_json_get(tc, "sum");
	bool have_sum = cJSON_IsNumber(sum) && isfinite(sum->valuedouble);
	add_item(c, run, "sum", have_sum ? cJSON_CreateNumber(sum->valuedouble) : cJSON_CreateNull());
	static const char *const reported[] = {"min", "max", "average"};
	for (size_t i = 0; i < 3; i++) {
		const cJSON *x = ng_json_get(tc, reported[i]);
		if (cJSON_IsNumber(x)) {
			char key[32];
			snprintf(key, sizeof key, "reported_%s", reported[i]);
			add_num(c, run, key, x->valuedouble);
		}
	}
	if (error) {
		add_str(c, run, "error", span_of(error));
		run_problem(c, run, "nvbandwidth reported an error in %s: %.200s", name, error);
		run_verify(c, run, span_of(error));
	}
	if (status_is(status, "Waived")) {
		run_problem(c, run, "nvbandwidth waived %s: it does not apply to this system", name);
	} else if (status_is(status, "Running")) {
		run_problem(c, run, "nvbandwidth stopped while %s was running", name);
	} else if (status_is(status, "Not Found")) {
		run_problem(c, run, "nvbandwidth has no testcase %s", name);
	} else if (status_is(status, "Error")) {
		run_problem(c, run, "nvbandwidth reported status %s for %s", status, name);
	} else if (!status_is(status, "Passed")) {
		run_problem(c, run, "status %s of %s is not one nvbandwidth reports for a result",
		            status ? status : "(none)", name);
	} else if (!have_sum) {
		run_problem(c, run, "%s passed but has no numeric sum", name);
	} else if (have_matrix && last.obj && last.n == 0) {
		run_problem(c, run, "every cell of %s's matrix is N/A", name);
	} else if (!(sum->valuedouble > 0)) {
		run_problem(c, run, "sum of %s is %g: nothing was measured", name, sum->valuedouble);
	} else if (!have_matrix) {
		/* nvbandwidth writes the two together: one alone was edited out */
		run_problem(c, run, "%s has a sum but no bandwidth_matrix", name);
	} else if (last.obj && !last.bad && !sum_agrees(sum->valuedouble, &last, true)) {
		run_problem(c, run, "sum %.17g of %s disagrees with its matrix, whose cells add to %.17g",
		            sum->valuedouble, name, last.sum);
	}
}

/* The testcase a document-wide message belongs to: the one left "Running",
 * else the last. */
static cJSON *json_running_run(struct inv *v)
{
	cJSON *rec, *best = NULL;
	cJSON_ArrayForEach(rec, v->recs)
	{
		cJSON *runs = cJSON_GetObjectItemCaseSensitive(ng_record_detail(rec), "runs"), *run;
		cJSON_ArrayForEach(run, runs)
		{
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(run, "status");
			if (cJSON_IsString(s) && strcasecmp(s->valuestring, "Running") == 0)
				best = run;
		}
	}
	if (best)
		return best;
	rec = cJSON_GetArrayItem(v->recs, cJSON_GetArraySize(v->recs) - 1);
	cJSON *runs = rec ? cJSON_GetObjectItemCaseSensitive(ng_record_detail(rec), "runs") : NULL;
	return runs ? cJSON_GetArrayItem(runs, cJSON_GetArraySize(runs) - 1) : NULL;
}

static bool run_is_running(const cJSON *run)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(run, "status");
	return cJSON_IsString(s) && strcasecmp(s->valuestring, "Running") == 0;
}

/* A verification message printed beside a JSON document (the v0.8+ GPU
 * check prints to stdout while the JSON waits for the end). */
static void json_side_message(struct ctx *c, struct inv *v, ng_span t, bool from_error_key)
{
	size_t n = verify_count(t);
	cJSON *run = json_running_run(v);
	if (n && run) {
		run_verify(c, run, t);
		return;
	}
	if (from_error_key && run && run_is_running(run)) {
		add_str(c, run, "error", t);
		cJSON_DeleteItemFromObjectCaseSensitive(run, "problem");
		run_problem(c, run, "nvbandwidth stopped with an error while this testcase ran: %.*s",
		            (int)(t.len > 200 ? 200 : t.len), t.s);
		return;
	}
	v->orphan_verify += (int)n;
	keep(c, v->errors, t);
}

static void json_doc(struct ctx *c, const cJSON *nvb, size_t start)
{
	struct inv *v = inv_new(c, start, true);
	if (!v)
		return;
	json_info(c, v, nvb, "version", "nvbandwidth_version");
	json_info(c, v, nvb, "git_version", "git_version");
	json_info(c, v, nvb, "CUDA Runtime Version", "cuda_runtime_version");
	json_info(c, v, nvb, "CUDA Driver API Version", "cuda_driver_version");
	json_info(c, v, nvb, "Driver Version", "driver_version");
	const cJSON *devs = ng_json_get(nvb, "GPU Device list"), *x;
	cJSON_ArrayForEach(x, devs)
	{
		if (cJSON_IsString(x))
			keep(c, v->devices, span_of(x->valuestring));
	}
	const char *warn = jstr(nvb, "warning");
	if (warn)
		keep(c, v->warnings, span_of(warn));
	const cJSON *tcs = ng_json_get(nvb, "testcases");
	cJSON_ArrayForEach(x, tcs)
	{
		if (cJSON_IsObject(x))
			json_testcase(c, v, x);
	}
	const char *err = jstr(nvb, "error");
	if (err)
		json_side_message(c, v, span_of(err), true);
	c->orphans = v;
}

/* Whether a JSON document of nvbandwidth's starts at p: '{' then, past white
 * space, the "nvbandwidth" key that -j output always begins with. */
static bool json_start(const char *p, const char *end)
{
	if (p >= end || *p != '{')
		return false;
	for (p++; p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'); p++)
		;
	return (size_t)(end - p) >= 13 && memcmp(p, "\"nvbandwidth\"", 13) == 0;
}

/* ---- the walk over the input ---------------------------------------------- */

/* Lines outside any text invocation, next to JSON documents: verification
 * messages and errors go to the document they sit before (or, after the
 * last one, the one they follow); other lines start text output. */
static bool side_line(struct ctx *c, ng_span line)
{
	if (!c->orphans || (c->cur && !c->cur->json))
		return false;
	ng_span t = ng_span_trim(line);
	if (verify_count(t) || error_line(t)) {
		json_side_message(c, c->orphans, t, false);
		return true;
	}
	if (warning_line(t)) {
		keep(c, c->orphans->warnings, t);
		return true;
	}
	if (ng_span_starts_with(t, "nvbandwidth Version:"))
		return false;
	return take_echo(c, t);
}

static void text_span(struct ctx *c, const char *s, size_t len)
{
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, s, len);
	while (!c->oom && ng_lines_next(&it, &line))
		if (!side_line(c, line))
			text_line(c, line, (size_t)(line.s - c->text));
}

struct doc {
	const char *start, *end;
	cJSON *root;
};

/* Finds the JSON documents: each starts at a line whose first non-blank is
 * '{' followed by the "nvbandwidth" key. Returns how many, in *docs (the
 * caller frees them), or sets oom. */
static size_t find_docs(struct ctx *c, struct doc **docs)
{
	size_t n = 0, cap = 0;
	int failed = 0;
	ng_lines it;
	ng_span line;
	const char *end = c->text + c->len;
	*docs = NULL;
	ng_lines_init(&it, c->text, c->len);
	while (!c->oom && failed < NVB_JSON_TRIES && ng_lines_next(&it, &line)) {
		ng_span t = ng_span_trim(line);
		if (!t.len || !json_start(t.s, end))
			continue;
		const char *stop = NULL;
		cJSON *root = cJSON_ParseWithLengthOpts(t.s, (size_t)(end - t.s), &stop, 0);
		const cJSON *nvb = root ? ng_json_get(root, "nvbandwidth") : NULL;
		if (!cJSON_IsObject(nvb) || !stop) {
			cJSON_Delete(root);
			c->json_unparsed = true;
			failed++;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 4;
			struct doc *p = realloc(*docs, cap * sizeof *p);
			if (!p) {
				cJSON_Delete(root);
				c->oom = true;
				break;
			}
			*docs = p;
		}
		(*docs)[n++] = (struct doc){t.s, stop, root};
		ng_lines_init(&it, stop, (size_t)(end - stop));
	}
	return n;
}

/* ---- records out ---------------------------------------------------------- */

static void add_tool(struct ctx *c, cJSON *rec, const struct inv *v)
{
	cJSON *tool = ng_record_tool(rec);
	add_item(c, tool, "name", cJSON_CreateString("nvbandwidth"));
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v->info, "nvbandwidth_version");
	const cJSON *git = cJSON_GetObjectItemCaseSensitive(v->info, "git_version");
	if (cJSON_IsString(ver) && ver->valuestring[0])
		add_item(c, tool, "version", cJSON_CreateString(ver->valuestring));
	if (cJSON_IsString(git) && git->valuestring[0])
		add_item(c, tool, "git_version", cJSON_CreateString(git->valuestring));
	if (c->st.exit_status >= 0)
		add_num(c, tool, "exit_status", c->st.exit_status);
	if (c->st.signal)
		add_num(c, tool, "signal", c->st.signal);
}

static void add_invocation(struct ctx *c, cJSON *rec, const struct inv *v, int index)
{
	cJSON *d = ng_record_detail(rec);
	cJSON *info = track(c, cJSON_Duplicate(v->info, 1));
	add_item(c, d, "invocation", info);
	if (!info)
		return;
	add_num(c, info, "index", index);
	add_item(c, info, "devices",
	         cJSON_GetArraySize(v->devices) ? cJSON_Duplicate(v->devices, 1) : cJSON_CreateNull());
	if (cJSON_GetArraySize(v->warnings))
		add_item(c, info, "warnings", cJSON_Duplicate(v->warnings, 1));
	add_tool(c, rec, v);
}

static const char *exit_words(const struct ctx *c, char *buf, size_t n)
{
	if (c->st.signal)
		snprintf(buf, n, "nvbandwidth was killed by signal %d", c->st.signal);
	else if (c->st.exit_status > 0)
		snprintf(buf, n, "nvbandwidth exited with status %d", c->st.exit_status);
	else
		buf[0] = '\0';
	return buf;
}

/* Samples, wrong and reason from the record's runs. Every run must have
 * given its sum for any to count: a testcase that failed once inside an
 * invocation did not measure cleanly, and its other sums stay in detail. */
/* Whether the invocation printed a version of v0.5 or later: the releases
 * whose sources verify every copy unless -s/--skipVerification is given. */
static bool verifying_version(const struct inv *v)
{
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v->info, "nvbandwidth_version");
	if (!cJSON_IsString(ver))
		return false;
	const char *p = ver->valuestring;
	if (*p == 'v')
		p++;
	char *end;
	long major = strtol(p, &end, 10);
	if (end == p || *end != '.')
		return false;
	const char *q = end + 1;
	long minor = strtol(q, &end, 10);
	return end != q && (major > 0 || minor >= 5);
}

static void rec_finish(struct ctx *c, cJSON *rec, const struct inv *inv, const char *how)
{
	cJSON *d = ng_record_detail(rec);
	cJSON *runs = cJSON_GetObjectItemCaseSensitive(d, "runs"), *run;
	const cJSON *metric = cJSON_GetObjectItemCaseSensitive(rec, "metric");
	const struct ng_metric *reg = ng_metric_lookup(metric->valuestring);
	const char *unit = reg ? reg->unit : "";
	int bad = 0, nruns = 0;
	double wrong = 0;
	const char *first = NULL;
	cJSON_ArrayForEach(run, runs)
	{
		nruns++;
		/* the unit a matrix title prints must be the metric's */
		cJSON *ms = cJSON_GetObjectItemCaseSensitive(run, "matrices");
		cJSON *m = ms ? cJSON_GetArrayItem(ms, cJSON_GetArraySize(ms) - 1) : NULL;
		const cJSON *u = m ? cJSON_GetObjectItemCaseSensitive(m, "unit") : NULL;
		if (cJSON_IsString(u) && strcmp(u->valuestring, unit) != 0)
			run_problem(c, run, "the matrix is in %s but %s is recorded in %s", u->valuestring,
			            metric->valuestring, unit);
		wrong += run_wrong(run);
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(run, "problem");
		if (cJSON_IsString(p)) {
			bad++;
			if (!first)
				first = p->valuestring;
		}
	}
	bool latency = reg && !reg->higher_is_better;
	if (nruns && !bad && latency) {
		/* the gate reads every figure as higher-is-better: a latency
		 * sample would fail the fastest node */
		ng_record_set_reason(rec,
		                     "%s is a latency (lower is better) and the gate judges figures as "
		                     "higher-is-better: its SUM is kept in detail.runs, not in samples",
		                     metric->valuestring);
		if (!cJSON_GetObjectItemCaseSensitive(rec, "reason"))
			c->oom = true;
	} else if (nruns && !bad) {
		cJSON_ArrayForEach(run, runs)
		{
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(run, "sum");
			ng_record_add_sample(rec, s->valuedouble);
		}
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "samples")) != nruns)
			c->oom = true;
	} else if (nruns) {
		char tail[112] = "";
		if (how[0])
			snprintf(tail, sizeof tail, " (%s)", how);
		if (nruns == 1)
			ng_record_set_reason(rec, "%s%s", first, tail);
		else
			ng_record_set_reason(rec, "%d of %d runs of this testcase gave no usable SUM; first: %s%s",
			                     bad, nruns, first, tail);
		if (!cJSON_GetObjectItemCaseSensitive(rec, "reason"))
			c->oom = true;
	}
	if (wrong > 0) {
		ng_record_set_wrong(rec, wrong);
		add_str(c, d, "verification", span_of("failed: the output reports wrong data after a copy"));
	} else if (inv->cmd_verify < 0) {
		add_str(c, d, "verification", span_of("skipped: the echoed command line has -s/--skipVerification"));
	} else if (inv->cmd_verify > 0 && verifying_version(inv) && nruns && !bad && !latency) {
		ng_record_set_wrong(rec, 0);
		add_str(c, d, "verification",
		        span_of("on: the echoed command line has no -s/--skipVerification and no copy was "
		                "reported wrong"));
	} else {
		add_str(c, d, "verification",
		        span_of("not shown: nvbandwidth does not print whether it verified the copies "
		                "(-s/--skipVerification skips it), so wrong stays null"));
	}
}

/* The record for the invocation as a whole, when it needs one. */
static cJSON *run_record(struct ctx *c, const struct inv *v, const char *how)
{
	char why[NVB_STR_MAX + 200];
	int ntc = cJSON_GetArraySize(v->recs), nerr = cJSON_GetArraySize(v->errors);
	bool incomplete = false;
	const cJSON *rec;
	cJSON_ArrayForEach(rec, v->recs)
	{
		if (cJSON_GetObjectItemCaseSensitive(rec, "reason"))
			incomplete = true;
	}
	if (v->unparsed && !ntc)
		snprintf(why, sizeof why,
		         "a JSON document starting with \"nvbandwidth\" could not be parsed (cut short?)");
	else if (v->list)
		snprintf(why, sizeof why, "nvbandwidth --list output: it names %d testcases and measures nothing",
		         v->listed);
	else if (v->usage)
		snprintf(why, sizeof why, "nvbandwidth printed its usage text and measured nothing%s%s",
		         nerr ? ": " : "", nerr ? cJSON_GetArrayItem(v->errors, 0)->valuestring : "");
	else if (v->orphan_verify)
		snprintf(why, sizeof why, "data verification failed outside any named testcase");
	else if (v->unnamed_waived)
		snprintf(why, sizeof why,
		         "%d testcase(s) waived; nvbandwidth's text output does not say which", v->unnamed_waived);
	else if (nerr)
		snprintf(why, sizeof why, "nvbandwidth reported an error outside any testcase: %s",
		         cJSON_GetArrayItem(v->errors, 0)->valuestring);
	else if (!ntc)
		snprintf(why, sizeof why, "this nvbandwidth output holds no testcase");
	else if (how[0] && !incomplete)
		snprintf(why, sizeof why,
		         "%s after its last complete testcase: a later one may have failed before naming itself",
		         how);
	else
		return NULL;
	cJSON *r = ng_record_new(NVB_RUN_METRIC, NULL, NULL);
	if (!r) {
		c->oom = true;
		return NULL;
	}
	if (how[0] && strstr(why, how) == NULL)
		ng_record_set_reason(r, "%s (%s)", why, how);
	else
		ng_record_set_reason(r, "%s", why);
	if (!cJSON_GetObjectItemCaseSensitive(r, "reason"))
		c->oom = true;
	if (v->orphan_verify)
		ng_record_set_wrong(r, v->orphan_verify);
	cJSON *d = ng_record_detail(r);
	if (nerr)
		add_item(c, d, "errors", cJSON_Duplicate(v->errors, 1));
	if (v->unnamed_waived)
		add_num(c, d, "unnamed_waived", v->unnamed_waived);
	if (cJSON_GetArraySize(v->list_names))
		add_item(c, d, "testcases", cJSON_Duplicate(v->list_names, 1));
	return r;
}

static int inv_order(const void *a, const void *b)
{
	const struct inv *x = *(struct inv *const *)a, *y = *(struct inv *const *)b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static cJSON *emit(struct ctx *c)
{
	cJSON *out = track(c, cJSON_CreateArray());
	char ex[96];
	qsort(c->invs, c->ninv, sizeof *c->invs, inv_order);
	for (size_t i = 0; i < c->ninv && !c->oom; i++) {
		struct inv *v = c->invs[i];
		bool last = i + 1 == c->ninv;
		/* how the process ended speaks for its last invocation only */
		const char *how = last ? exit_words(c, ex, sizeof ex) : "";
		cJSON *rec;
		cJSON_ArrayForEach(rec, v->recs)
		{
			rec_finish(c, rec, v, how);
			add_invocation(c, rec, v, (int)i + 1);
		}
		cJSON *r = run_record(c, v, how);
		while ((rec = cJSON_DetachItemFromArray(v->recs, 0)) != NULL)
			push(c, out, rec);
		if (r) {
			add_invocation(c, r, v, (int)i + 1);
			push(c, out, r);
		}
	}
	return out;
}

/* ---- entry point ---------------------------------------------------------- */

static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->ninv; i++)
		inv_free(c->invs[i]);
	free(c->invs);
	free(c->fields);
}

static cJSON *parse_bare(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	struct ctx c = {.text = text, .len = len, .st = st};
	struct doc *docs = NULL;
	/* row fields, then the cells a row is cut into */
	c.fields = malloc(2 * NVB_FIELDS_MAX * sizeof *c.fields);
	if (!c.fields) {
		ng_fail(err, "nvbandwidth: out of memory");
		return NULL;
	}
	size_t ndocs = find_docs(&c, &docs);
	const char *at = text;
	for (size_t i = 0; i < ndocs && !c.oom; i++) {
		/* the document first, so that the lines before it (the GPU
		 * check's message, an echoed command line) can be given to it */
		json_doc(&c, ng_json_get(docs[i].root, "nvbandwidth"), (size_t)(docs[i].start - text));
		c.cur = NULL;
		text_span(&c, at, (size_t)(docs[i].start - at));
		run_close(&c, "a JSON document followed");
		/* an echo no text invocation took was the document's own */
		if (c.pending_cmd && c.orphans && !c.orphans->cmd_verify) {
			c.orphans->cmd_verify = c.pending_cmd;
			add_str(&c, c.orphans->info, "command_line", span_of(c.pending_line));
		}
		c.pending_cmd = 0;
		c.cur = c.orphans;
		at = docs[i].end;
	}
	if (!c.oom)
		text_span(&c, at, (size_t)(text + len - at));
	run_close(&c, "the output ends before it");
	for (size_t i = 0; i < ndocs; i++)
		cJSON_Delete(docs[i].root);
	free(docs);
	if (!c.oom && c.ninv == 0) {
		struct inv *v = inv_new(&c, 0, false);
		if (v)
			v->unparsed = c.json_unparsed;
	}
	cJSON *out = c.oom ? NULL : emit(&c);
	ctx_free(&c);
	if (c.oom || !out) {
		cJSON_Delete(out);
		ng_fail(err, "nvbandwidth: out of memory while building records");
		return NULL;
	}
	return out;
}

/* Launcher prefixes and noise are gone before the nvbandwidth reader sees a line. */
cJSON *ng_parse_nvbandwidth(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	return ng_launch_parse(text, len, st, err, parse_bare);
}
