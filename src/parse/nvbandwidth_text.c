/* nvbandwidth: the text output. Matrices (with their sums and the rows whose
 * wide cells touch), testcases, waived and failed ones, verification lines and
 * the banner. */
#include "parse/nvbandwidth_int.h"

/* ---- matrices ------------------------------------------------------------- */

void nvb_mtx_stats_reset(struct mtx *m)
{
	m->n = m->nna = 0;
	m->min = INFINITY;
	m->max = -INFINITY;
	m->sum = m->sumabs = 0;
}

void nvb_mtx_cell(struct ctx *c, struct mtx *m, cJSON *row, const double *v)
{
	if (!v) {
		m->nna++;
		nvb_push(c, row, cJSON_CreateNull());
		return;
	}
	m->n++;
	m->min = fmin(m->min, *v);
	m->max = fmax(m->max, *v);
	m->sum += *v;
	m->sumabs += fabs(*v);
	nvb_push(c, row, cJSON_CreateNumber(*v));
}

/* min/max/mean of the cells that are not N/A, as nvbandwidth's own MIN
 * (text -v) and JSON "min" count N/A as 0 and so read 0 on any matrix with
 * a diagonal. */
void nvb_mtx_finish(struct ctx *c, struct mtx *m)
{
	if (!m->obj)
		return;
	nvb_add_num(c, m->obj, "cells", (double)(m->n + m->nna));
	nvb_add_num(c, m->obj, "na_cells", (double)m->nna);
	if (m->n) {
		nvb_add_num(c, m->obj, "min", m->min);
		nvb_add_num(c, m->obj, "max", m->max);
		nvb_add_num(c, m->obj, "mean", m->sum / (double)m->n);
	} else {
		nvb_add_item(c, m->obj, "min", cJSON_CreateNull());
		nvb_add_item(c, m->obj, "max", cJSON_CreateNull());
		nvb_add_item(c, m->obj, "mean", cJSON_CreateNull());
	}
}

/* The title names the unit in its last parentheses and the axes as
 * "CPU(row) -> GPU(column)"; the arrow is recorded as printed, since whether
 * it is the direction data moves differs between tests (device_to_device
 * read tests print "->" for a copy from the column GPU into the row GPU). */
void nvb_parse_title(struct ctx *c, cJSON *m, ng_span title)
{
	title = ng_span_trim(title);
	nvb_add_str(c, m, "title", title);
	ng_span unit = {0};
	if (title.len >= 3 && title.s[title.len - 1] == ')') {
		size_t open = title.len - 1;
		while (open > 0 && title.s[open] != '(')
			open--;
		if (title.s[open] == '(')
			unit = (ng_span){title.s + open + 1, title.len - open - 2};
	}
	if (unit.len)
		nvb_add_str(c, m, "unit", unit);
	else
		nvb_add_item(c, m, "unit", cJSON_CreateNull());
	size_t r = nvb_span_find(title, "(row)"), col = nvb_span_find(title, "(column)");
	size_t rs = r, cs = col;
	while (rs > 0 && r < title.len && title.s[rs - 1] != ' ')
		rs--;
	while (cs > 0 && col < title.len && title.s[cs - 1] != ' ')
		cs--;
	if (r < title.len)
		nvb_add_str(c, m, "row_axis", (ng_span){title.s + rs, r - rs});
	else
		nvb_add_item(c, m, "row_axis", cJSON_CreateNull());
	if (col < title.len)
		nvb_add_str(c, m, "column_axis", (ng_span){title.s + cs, col - cs});
	else
		nvb_add_item(c, m, "column_axis", cJSON_CreateNull());
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
	nvb_add_item(c, m, "arrow", arrow ? cJSON_CreateString(arrow) : cJSON_CreateNull());
	nvb_add_item(c, m, "source_as_printed", src ? cJSON_CreateString(src) : cJSON_CreateNull());
	nvb_add_item(c, m, "destination_as_printed", dst ? cJSON_CreateString(dst) : cJSON_CreateNull());
}

/* A new matrix object in run's "matrices". */
cJSON *nvb_matrix_new(struct ctx *c, cJSON *run)
{
	cJSON *ms = cJSON_GetObjectItemCaseSensitive(run, "matrices");
	if (!ms) {
		ms = nvb_track(c, cJSON_CreateArray());
		nvb_add_item(c, run, "matrices", ms);
	}
	cJSON *m = nvb_track(c, cJSON_CreateObject());
	nvb_push(c, ms, m);
	return c->oom ? NULL : m;
}

/* How far a SUM may sit from the cells it adds up: each printed cell is
 * rounded (half a unit of its last digit), the SUM too, and the additions
 * round. text: 2 decimals; JSON: 6 significant digits. */
bool nvb_sum_agrees(double sum, const struct mtx *m, bool json)
{
	double tol = json ? 1e-5 * m->sumabs + 1e-6 : 0.005 * (double)(m->n + 1) + 1e-9 * m->sumabs;
	return fabs(sum - m->sum) <= tol;
}

/* ---- the text format ------------------------------------------------------ */

static struct inv *text_inv(struct ctx *c, size_t at)
{
	if (!c->cur || c->cur->json)
		c->cur = nvb_inv_new(c, at, false);
	return c->cur;
}

static void mtx_close(struct ctx *c)
{
	struct mtx *m = &c->run.m;
	if (m->state == M_NONE)
		return;
	if (m->state == M_HEADER) {
		nvb_add_str(c, m->obj, "problem", ng_span_cstr("no column header after the title"));
		nvb_run_problem(c, c->run.obj, "a matrix of %s has a title but no rows", c->run.name);
	} else if (m->nrows == 0) {
		nvb_add_str(c, m->obj, "problem", ng_span_cstr("no rows"));
		nvb_run_problem(c, c->run.obj, "a matrix of %s has no rows", c->run.name);
	}
	nvb_mtx_finish(c, m);
	memset(m, 0, sizeof *m);
}

/* The open run ends; without its SUM it measured nothing we can read. */
void nvb_run_close(struct ctx *c, const char *why)
{
	struct run *r = &c->run;
	if (!r->obj)
		return;
	mtx_close(c);
	if (!r->done) {
		if (!cJSON_GetObjectItemCaseSensitive(r->obj, "status"))
			nvb_add_str(c, r->obj, "status", ng_span_cstr("incomplete"));
		nvb_run_problem(c, r->obj, "no SUM line for %s: %s", r->name, why);
	}
	memset(r, 0, sizeof *r);
}

static void run_open(struct ctx *c, struct inv *v, ng_span name, bool implicit)
{
	nvb_run_close(c, "the next testcase started first");
	char buf[NVB_NAME_MAX + 1];
	nvb_copy_name(buf, name);
	cJSON *rec = nvb_rec_for(c, v, buf);
	cJSON *o = nvb_run_new(c, rec);
	if (!o)
		return;
	c->run.obj = o;
	memcpy(c->run.name, buf, name.len + 1);
	if (implicit)
		nvb_add_str(c, o, "note", ng_span_cstr("no \"Running\" line: the run starts at its SUM line"));
}

static void mtx_open(struct ctx *c, ng_span title)
{
	mtx_close(c);
	struct mtx *m = &c->run.m;
	m->obj = nvb_matrix_new(c, c->run.obj);
	if (!m->obj)
		return;
	nvb_parse_title(c, m->obj, title);
	m->state = M_HEADER;
	nvb_mtx_stats_reset(m);
}

static void mtx_header(struct ctx *c, ng_span line)
{
	struct mtx *m = &c->run.m;
	size_t n = ng_split_ws(line, c->fields, NVB_FIELDS_MAX);
	cJSON *cols = nvb_track(c, cJSON_CreateArray());
	nvb_add_item(c, m->obj, "columns", cols);
	if (n == 0 || n > NVB_FIELDS_MAX) {
		nvb_add_str(c, m->obj, "problem", ng_span_cstr("column header unreadable"));
		nvb_run_problem(c, c->run.obj, "a matrix of %s has an unreadable column header", c->run.name);
		m->bad = true;
	}
	for (size_t i = 0; i < n && i < NVB_FIELDS_MAX; i++)
		nvb_push(c, cols, nvb_str_item(c->fields[i]));
	m->ncols = n;
	m->header_len = line.len;
	m->label_w = line.len >= 10 * n ? line.len - 10 * n : 0;
	m->row_labels = nvb_track(c, cJSON_CreateArray());
	nvb_add_item(c, m->obj, "rows", m->row_labels);
	m->values = nvb_track(c, cJSON_CreateArray());
	nvb_add_item(c, m->obj, "values", m->values);
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
	cJSON *row = nvb_track(c, cJSON_CreateArray());
	nvb_push(c, m->values, row);
	nvb_push(c, m->row_labels, nvb_str_item(label));
	if (c->oom)
		return true;
	for (size_t i = 0; i < m->ncols; i++) {
		double v;
		if (ng_span_eq(cells[i], "N/A")) {
			nvb_mtx_cell(c, m, row, NULL);
		} else if (ng_span_number(cells[i], &v)) {
			nvb_mtx_cell(c, m, row, &v);
		} else {
			/* "inf", "-nan": kept out of the statistics, and the run with it */
			nvb_push(c, row, cJSON_CreateNull());
			if (!cJSON_GetObjectItemCaseSensitive(m->obj, "problem"))
				nvb_add_str(c, m->obj, "problem", ng_span_cstr("a cell that is neither a number nor N/A"));
			nvb_run_problem(c, c->run.obj, "a matrix of %s has a cell that is neither a number nor N/A",
			            c->run.name);
		}
	}
	m->nrows++;
	return true;
}

static void text_sum(struct ctx *c, ng_span line, size_t at)
{
	ng_span f[4];
	if (ng_split_ws(line, f, 4) != 3 || !nvb_valid_name(f[1]))
		return;
	bool final, part;
	ng_span base = nvb_key_base(f[1], &final, &part);
	if (!nvb_valid_name(base))
		return;
	struct run *r = &c->run;
	struct inv *v = text_inv(c, at);
	if (!v)
		return;
	char name[NVB_NAME_MAX + 1];
	nvb_copy_name(name, base);
	if (!r->obj || r->done || strcmp(r->name, name) != 0)
		run_open(c, v, base, true);
	if (!r->obj)
		return;
	double val;
	bool num = ng_span_number(f[2], &val);
	struct mtx *m = &r->m;
	if (m->state != M_NONE) {
		bool rows = (m->state == M_ROWS || m->state == M_ENDED) && m->nrows;
		nvb_add_str(c, m->obj, "sum_key", f[1]);
		if (num)
			nvb_add_num(c, m->obj, "sum", val);
		if (final && rows && m->n == 0)
			nvb_run_problem(c, r->obj, "every cell of %s's matrix is N/A", name);
		if (num && rows && !nvb_sum_agrees(val, m, false))
			nvb_run_problem(c, r->obj, "SUM %.*s %.*s disagrees with its matrix, whose cells add to %.2f",
			            (int)f[1].len, f[1].s, (int)(f[2].len > 40 ? 40 : f[2].len), f[2].s, m->sum);
	}
	mtx_close(c);
	cJSON *sums = cJSON_GetObjectItemCaseSensitive(r->obj, "sums");
	if (!sums) {
		sums = nvb_track(c, cJSON_CreateObject());
		nvb_add_item(c, r->obj, "sums", sums);
	}
	char key[NVB_NAME_MAX + 1];
	nvb_copy_name(key, f[1]);
	nvb_add_item(c, sums, key, num ? cJSON_CreateNumber(val) : nvb_str_item(f[2]));
	if (part)
		r->multi = true;
	if (!final)
		return;
	r->done = true;
	if (!cJSON_GetObjectItemCaseSensitive(r->obj, "status"))
		nvb_add_str(c, r->obj, "status", ng_span_cstr("complete"));
	if (!num) {
		nvb_add_item(c, r->obj, "sum", cJSON_CreateNull());
		nvb_run_problem(c, r->obj, "SUM %.*s is \"%.*s\", not a number", (int)f[1].len, f[1].s,
		            (int)(f[2].len > 40 ? 40 : f[2].len), f[2].s);
		return;
	}
	nvb_add_num(c, r->obj, "sum", val);
	if (!cJSON_GetObjectItemCaseSensitive(r->obj, "matrices") &&
	    !cJSON_GetObjectItemCaseSensitive(r->obj, "note"))
		nvb_run_problem(c, r->obj, "%s printed its SUM without a matrix this parser could read", name);
	if (r->multi != nvb_span_ends_with(f[1], "_total"))
		nvb_run_problem(c, r->obj, "%s printed %s without the matching per-direction SUM lines", name,
		            r->multi ? "per-direction SUM lines but no _total" : "a _total SUM");
	if (!(val > 0))
		nvb_run_problem(c, r->obj, "SUM %s is %s: nothing was measured", name, val == 0 ? "0" : "negative");
}

static void text_cv(struct ctx *c, ng_span line)
{
	ng_span f[4];
	double v;
	if (ng_split_ws(line, f, 4) != 3 || !c->run.obj || !ng_span_number(f[2], &v))
		return;
	bool final, part;
	ng_span base = nvb_key_base(f[1], &final, &part);
	if (final && base.len == strlen(c->run.name) && memcmp(base.s, c->run.name, base.len) == 0)
		nvb_add_num(c, c->run.obj, "coefficient_of_variation", v);
}

static void text_waived(struct ctx *c, ng_span t, size_t at)
{
	struct run *r = &c->run;
	/* nvbandwidth prints "Waived: " without the testcase's name; only a
	 * waiver right after a "Running X." line can be given a name */
	if (r->obj && !r->done && r->m.state == M_NONE &&
	    !cJSON_GetObjectItemCaseSensitive(r->obj, "matrices")) {
		nvb_add_str(c, r->obj, "status", ng_span_cstr("waived"));
		nvb_add_str(c, r->obj, "message", t);
		nvb_run_problem(c, r->obj, "nvbandwidth waived %s: it does not apply to this system", r->name);
		r->done = true;
		nvb_run_close(c, "");
		return;
	}
	nvb_run_close(c, "a waiver followed");
	struct inv *v = text_inv(c, at);
	if (v)
		v->unnamed_waived++;
}

static void text_error(struct ctx *c, ng_span t, size_t at)
{
	struct run *r = &c->run;
	/* "ERROR: Testcase foo not found!" names what was asked for */
	if (ng_span_starts_with(t, "ERROR: Testcase ") && nvb_span_ends_with(t, " not found!")) {
		ng_span id = {t.s + 16, t.len - 16 - strlen(" not found!")};
		if (nvb_valid_name(id)) {
			nvb_run_close(c, "an error followed");
			struct inv *v = text_inv(c, at);
			if (!v)
				return;
			char name[NVB_NAME_MAX + 1];
			nvb_copy_name(name, id);
			cJSON *o = nvb_run_new(c, nvb_rec_for(c, v, name));
			if (!o)
				return;
			nvb_add_str(c, o, "status", ng_span_cstr("not found"));
			nvb_add_str(c, o, "error", t);
			nvb_run_problem(c, o, "nvbandwidth has no testcase %s", name);
			return;
		}
	}
	/* "Error: <why>" ends the testcase printed last; a CUDA assert ends the
	 * whole run */
	if (r->obj && !r->done) {
		nvb_add_str(c, r->obj, "error", t);
		nvb_add_str(c, r->obj, "status", ng_span_cstr("error"));
		nvb_run_problem(c, r->obj, "nvbandwidth reported an error in %s: %.*s", r->name,
		            (int)(t.len > 200 ? 200 : t.len), t.s);
		r->done = true;
		nvb_run_close(c, "");
		return;
	}
	struct inv *v = c->cur ? c->cur : text_inv(c, at);
	if (v)
		nvb_keep(c, v->errors, t);
}

static void text_verify(struct ctx *c, ng_span t, size_t at)
{
	struct run *r = &c->run;
	if (r->obj) {
		nvb_run_verify(c, r->obj, t);
		nvb_add_str(c, r->obj, "status", ng_span_cstr("verification failed"));
		return;
	}
	struct inv *v = c->cur ? c->cur : text_inv(c, at);
	if (v) {
		v->orphan_verify += (int)nvb_verify_count(t);
		nvb_keep(c, v->errors, t);
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
	return nvb_valid_name(*name);
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
		nvb_add_str(c, v->info, key, ng_span_trim(ng_span_skip(t, strlen(prefix))));
	return true;
}

/* An echoed command line waits for the invocation that comes next: a
 * banner, or else the JSON document that ends this stretch of text. */
bool nvb_take_echo(struct ctx *c, ng_span t)
{
	bool skip;
	if (!nvb_echo_line(t, &skip))
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
		nvb_run_close(c, "a new invocation started");
		c->cur = nvb_inv_new(c, at, false);
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
			nvb_keep(c, v->devices, rest);
		return true;
	}
	if (ng_span_eq(t, "Index, Name:")) {
		nvb_run_close(c, "a testcase list followed");
		v = text_inv(c, at);
		if (v)
			v->list = true;
		return true;
	}
	if (v && v->list && list_line(t, &rest)) {
		if (v->listed++ < NVB_LIST_MAX)
			nvb_push(c, v->list_names, nvb_str_item(rest));
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

void nvb_text_line(struct ctx *c, ng_span line, size_t at)
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
	if ((!r->obj || r->done) && nvb_take_echo(c, t))
		return;
	if (ng_span_starts_with(t, "Running ") && t.s[t.len - 1] == '.') {
		ng_span name = {t.s + 8, t.len - 9};
		if (ng_span_starts_with(name, "benchmark "))
			name = ng_span_skip(name, 10);
		if (nvb_valid_name(name)) {
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
	if (nvb_verify_count(t)) {
		text_verify(c, t, at);
		return;
	}
	if (nvb_error_line(t)) {
		text_error(c, t, at);
		return;
	}
	if (nvb_warning_line(t)) {
		struct inv *v = c->cur ? c->cur : text_inv(c, at);
		if (v)
			nvb_keep(c, v->warnings, t);
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
