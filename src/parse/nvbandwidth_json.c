/* nvbandwidth -j: the JSON document, its testcases and matrices, read into
 * the same invocations as the text. */
#include "parse/nvbandwidth_int.h"

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
		nvb_add_str(c, v->info, as, ng_span_cstr(x->valuestring));
	else if (cJSON_IsNumber(x) && fabs(x->valuedouble) < 1e15) {
		snprintf(buf, sizeof buf, "%.0f", x->valuedouble);
		nvb_add_str(c, v->info, as, ng_span_cstr(buf));
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
		ng_span s = ng_span_trim(ng_span_cstr(x->valuestring));
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
	nvb_mtx_stats_reset(m);
	m->obj = nvb_matrix_new(c, run);
	if (!m->obj)
		return;
	if (desc && !part)
		nvb_parse_title(c, m->obj, ng_span_cstr(desc));
	if (part)
		nvb_add_str(c, m->obj, "part", ng_span_cstr(part));
	cJSON *cols = nvb_track(c, cJSON_CreateArray()), *labels = nvb_track(c, cJSON_CreateArray());
	cJSON *vals = nvb_track(c, cJSON_CreateArray());
	nvb_add_item(c, m->obj, "columns", cols);
	nvb_add_item(c, m->obj, "rows", labels);
	nvb_add_item(c, m->obj, "values", vals);
	char buf[24];
	for (int j = 0; j < ncols && !c->oom; j++) {
		snprintf(buf, sizeof buf, "%d", j);
		nvb_push(c, cols, cJSON_CreateString(buf));
	}
	for (int i = 0; i < n && !c->oom; i++) {
		snprintf(buf, sizeof buf, "%d", i);
		nvb_push(c, labels, cJSON_CreateString(buf));
		cJSON *row = nvb_track(c, cJSON_CreateArray());
		nvb_push(c, vals, row);
		const cJSON *src = cJSON_GetArrayItem(rows, r0 + i), *x;
		cJSON_ArrayForEach(x, src)
		{
			double v;
			bool bad;
			if (json_cell(x, &v, &bad)) {
				nvb_mtx_cell(c, m, row, &v);
			} else if (!bad) {
				nvb_mtx_cell(c, m, row, NULL);
			} else {
				m->bad = true;
				nvb_push(c, row, cJSON_CreateNull());
			}
		}
	}
	if (m->bad)
		nvb_add_str(c, m->obj, "problem", ng_span_cstr("a cell that is neither a number nor N/A"));
	m->nrows = (size_t)n;
	nvb_mtx_finish(c, m);
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
		nvb_run_problem(c, run, "%s's bandwidth_matrix is not a non-empty table of equal rows", name);
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
		nvb_run_problem(c, run, "%s's matrix has a cell that is neither a number nor N/A", name);
	return true;
}

static bool status_is(const char *s, const char *lit) { return s && strcasecmp(s, lit) == 0; }

static void json_testcase(struct ctx *c, struct inv *v, const cJSON *tc)
{
	const char *name = jstr(tc, "name");
	if (!name || !nvb_valid_name(ng_span_cstr(name))) {
		nvb_keep(c, v->errors, ng_span_cstr("a testcase without a usable \"name\""));
		return;
	}
	cJSON *run = nvb_run_new(c, nvb_rec_for(c, v, name));
	if (!run)
		return;
	const char *status = jstr(tc, "status");
	const char *error = jstr(tc, "error");
	nvb_add_item(c, run, "status", status ? nvb_str_item(ng_span_cstr(status)) : cJSON_CreateNull());
	struct mtx last;
	bool have_matrix = json_matrices(c, run, name, tc, &last);
	const cJSON *sum = ng_json_get(tc, "sum");
	bool have_sum = cJSON_IsNumber(sum) && isfinite(sum->valuedouble);
	nvb_add_item(c, run, "sum", have_sum ? cJSON_CreateNumber(sum->valuedouble) : cJSON_CreateNull());
	static const char *const reported[] = {"min", "max", "average"};
	for (size_t i = 0; i < 3; i++) {
		const cJSON *x = ng_json_get(tc, reported[i]);
		if (cJSON_IsNumber(x)) {
			char key[32];
			snprintf(key, sizeof key, "reported_%s", reported[i]);
			nvb_add_num(c, run, key, x->valuedouble);
		}
	}
	if (error) {
		nvb_add_str(c, run, "error", ng_span_cstr(error));
		nvb_run_problem(c, run, "nvbandwidth reported an error in %s: %.200s", name, error);
		nvb_run_verify(c, run, ng_span_cstr(error));
	}
	if (status_is(status, "Waived")) {
		nvb_run_problem(c, run, "nvbandwidth waived %s: it does not apply to this system", name);
	} else if (status_is(status, "Running")) {
		nvb_run_problem(c, run, "nvbandwidth stopped while %s was running", name);
	} else if (status_is(status, "Not Found")) {
		nvb_run_problem(c, run, "nvbandwidth has no testcase %s", name);
	} else if (status_is(status, "Error")) {
		nvb_run_problem(c, run, "nvbandwidth reported status %s for %s", status, name);
	} else if (!status_is(status, "Passed")) {
		nvb_run_problem(c, run, "status %s of %s is not one nvbandwidth reports for a result",
		            status ? status : "(none)", name);
	} else if (!have_sum) {
		nvb_run_problem(c, run, "%s passed but has no numeric sum", name);
	} else if (have_matrix && last.obj && last.n == 0) {
		nvb_run_problem(c, run, "every cell of %s's matrix is N/A", name);
	} else if (!(sum->valuedouble > 0)) {
		nvb_run_problem(c, run, "sum of %s is %g: nothing was measured", name, sum->valuedouble);
	} else if (!have_matrix) {
		/* nvbandwidth writes the two together: one alone was edited out */
		nvb_run_problem(c, run, "%s has a sum but no bandwidth_matrix", name);
	} else if (last.obj && !last.bad && !nvb_sum_agrees(sum->valuedouble, &last, true)) {
		nvb_run_problem(c, run, "sum %.17g of %s disagrees with its matrix, whose cells add to %.17g",
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
void nvb_json_side_message(struct ctx *c, struct inv *v, ng_span t, bool from_error_key)
{
	size_t n = nvb_verify_count(t);
	cJSON *run = json_running_run(v);
	if (n && run) {
		nvb_run_verify(c, run, t);
		return;
	}
	if (from_error_key && run && run_is_running(run)) {
		nvb_add_str(c, run, "error", t);
		cJSON_DeleteItemFromObjectCaseSensitive(run, "problem");
		nvb_run_problem(c, run, "nvbandwidth stopped with an error while this testcase ran: %.*s",
		            (int)(t.len > 200 ? 200 : t.len), t.s);
		return;
	}
	v->orphan_verify += (int)n;
	nvb_keep(c, v->errors, t);
}

void nvb_json_doc(struct ctx *c, const cJSON *nvb, size_t start)
{
	struct inv *v = nvb_inv_new(c, start, true);
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
			nvb_keep(c, v->devices, ng_span_cstr(x->valuestring));
	}
	const char *warn = jstr(nvb, "warning");
	if (warn)
		nvb_keep(c, v->warnings, ng_span_cstr(warn));
	const cJSON *tcs = ng_json_get(nvb, "testcases");
	cJSON_ArrayForEach(x, tcs)
	{
		if (cJSON_IsObject(x))
			json_testcase(c, v, x);
	}
	const char *err = jstr(nvb, "error");
	if (err)
		nvb_json_side_message(c, v, ng_span_cstr(err), true);
	c->orphans = v;
}

/* Whether a JSON document of nvbandwidth's starts at p: '{' then, past white
 * space, the "nvbandwidth" key that -j output always begins with. */
bool nvb_json_start(const char *p, const char *end)
{
	if (p >= end || *p != '{')
		return false;
	for (p++; p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'); p++)
		;
	return (size_t)(end - p) >= 13 && memcmp(p, "\"nvbandwidth\"", 13) == 0;
}
