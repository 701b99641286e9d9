/* nccl-tests: from runs to records. The collective, the samples (the
 * out-of-place busbw at the largest size, one per cycle), wrong, and every
 * reason a run holds no sample. */
#include "parse/nccl_tests_int.h"

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
		nt_push(cands, cJSON_CreateString(shapes[i].name));
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
cJSON *nt_record_start(nt_ctx *c, const nt_run *r, const char *collective, size_t run_index)
{
	char metric[80];
	snprintf(metric, sizeof metric, "nccl.%s.busbw", collective ? collective : "unknown");
	cJSON *rec = ng_record_new(metric, NULL, NULL);
	if (!rec) {
		c->oom = true;
		return NULL;
	}
	cJSON *tool = ng_record_tool(rec);
	nt_put(tool, "name", cJSON_CreateString("nccl-tests"));
	if (r && r->version[0])
		nt_put(tool, "version", cJSON_CreateString(r->version));
	if (c->st.exit_status >= 0)
		nt_put(tool, "exit_status", cJSON_CreateNumber(c->st.exit_status));
	if (c->st.signal > 0)
		nt_put(tool, "signal", cJSON_CreateNumber(c->st.signal));
	if (r && r->argv)
		nt_put(tool, "argv", cJSON_Duplicate(r->argv, true));
	cJSON *d = ng_record_detail(rec);
	char note[96];
	status_note(c, note, sizeof note);
	if (note[0])
		nt_put(d, "run_status", cJSON_CreateString(note));
	if (!r)
		return rec;
	nt_put(d, "format", cJSON_CreateString(r->is_json ? "json" : "text"));
	nt_put(d, "run", cJSON_CreateNumber((double)run_index));
	if (r->tag[0])
		nt_put(d, "launcher_label", cJSON_CreateString(r->tag));
	nt_put(d, "program", r->program[0] ? cJSON_CreateString(r->program) : cJSON_CreateNull());
	nt_put(d, "collective", collective ? cJSON_CreateString(collective) : cJSON_CreateNull());
	if (r->git[0])
		nt_put(d, "nccl_tests_git", cJSON_CreateString(r->git));
	char v[32];
	if (r->nccl_lib >= 0) {
		nt_nccl_version_str(r->nccl_lib, v, sizeof v);
		nt_put(d, "nccl_version", cJSON_CreateString(v));
		nt_put(d, "nccl_version_code", cJSON_CreateNumber((double)r->nccl_lib));
	} else if (r->nccl_info[0]) {
		nt_put(d, "nccl_version", cJSON_CreateString(r->nccl_info));
	}
	if (r->nccl_hdr >= 0) {
		nt_nccl_version_str(r->nccl_hdr, v, sizeof v);
		nt_put(d, "nccl_headers_version", cJSON_CreateString(v));
	}
	if (r->json_meta)
		nt_put(d, "json_report", cJSON_Duplicate(r->json_meta, true));
	if (cJSON_GetArraySize(r->params))
		nt_put(d, "parameters", cJSON_Duplicate(r->params, true));
	if (cJSON_GetArraySize(r->devices)) {
		nt_put(d, "devices", cJSON_Duplicate(r->devices, true));
		nt_put(d, "nranks", cJSON_CreateNumber(cJSON_GetArraySize(r->devices)));
	}
	if (r->oob >= 0) {
		cJSON *o = cJSON_CreateObject();
		nt_put(o, "count", cJSON_CreateNumber((double)r->oob));
		if (r->oob_status[0])
			nt_put(o, "status", cJSON_CreateString(r->oob_status));
		nt_put(d, "out_of_bounds", o);
	}
	if ((r->seen & F_AVG) || (r->is_json && (r->avg_is_number || r->avg_check[0]))) {
		nt_put_num(d, "avg_busbw", r->avg_is_number, r->avg);
		if (r->avg_check[0])
			nt_put(d, "avg_busbw_check", cJSON_CreateString(r->avg_check));
	}
	if (r->has_reduced)
		nt_put(d, "reduced_max_bytes", cJSON_CreateNumber((double)r->reduced_max));
	if (r->json_path[0])
		nt_put(d, "json_output", cJSON_CreateString(r->json_path));
	if (cJSON_GetArraySize(r->messages))
		nt_put(d, "messages", cJSON_Duplicate(r->messages, true));
	if (cJSON_GetArraySize(r->notes))
		nt_put(d, "notes", cJSON_Duplicate(r->notes, true));
	return rec;
}

/* Sets the reason, adding the run status when it ended badly. */
void nt_finish_reason(const nt_ctx *c, cJSON *rec, const char *why)
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

void nt_add_record(nt_ctx *c, cJSON *out, cJSON *rec)
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
			nt_push(labels, cJSON_CreateString(o->tag));
			nt_put(d, "launcher_labels", labels);
		}
		nt_push(labels, cJSON_CreateString(r->tag));
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
void nt_nothing_measured(cJSON *rec)
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
const char *nt_cause_line(const cJSON *messages)
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
void nt_cause_words(const cJSON *messages, const char *cause, char *buf, size_t cap)
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
	cJSON *rec = nt_record_start(c, r, r->collective[0] ? r->collective : NULL, ri);
	if (!rec)
		return;
	cJSON *d = ng_record_detail(rec);
	if (r->collective_source)
		nt_put(d, "collective_source", cJSON_CreateString(r->collective_source));
	if (r->usage > 1)
		nt_put(d, "usage_printed", cJSON_CreateNumber(r->usage));
	char why[320];
	if (r->arg_error[0])
		snprintf(why, sizeof why, "nccl-tests refused its arguments (%s): it ran no benchmark", r->arg_error);
	else if (r->usage_why[0])
		snprintf(why, sizeof why, "nccl-tests printed its usage text: %s", r->usage_why);
	else
		snprintf(why, sizeof why,
		         "nccl-tests printed its usage text (-h, or an option it did not accept): it ran no benchmark");
	nt_finish_reason(c, rec, why);
	nt_nothing_measured(rec);
	nt_add_record(c, out, rec);
	if (c->usage_rec)
		c->usage_rec[ri] = rec;
}

static void emit_empty(nt_ctx *c, cJSON *out, const nt_run *r, size_t ri)
{
	cJSON *rec = nt_record_start(c, r, r->collective[0] ? r->collective : NULL, ri);
	if (!rec)
		return;
	cJSON *d = ng_record_detail(rec);
	if (r->collective_source)
		nt_put(d, "collective_source", cJSON_CreateString(r->collective_source));
	char why[640], words[560];
	const char *cause = nt_cause_line(r->messages);
	const char *other = cause ? NULL : first_message(r->messages);
	/* Only a column header is a table; a run that died in its preamble
	 * printed none. */
	const char *what = (r->seen & F_LAYOUT) ? "printed a table with no rows" : "ended before printing its result table";
	if (cause)
		nt_cause_words(r->messages, cause, words, sizeof words);
	if (r->json_meta && cJSON_GetObjectItemCaseSensitive(r->json_meta, "not_a_report"))
		snprintf(why, sizeof why, "JSON that is not an nccl-tests -J report (no results or config)");
	else if (cause)
		snprintf(why, sizeof why, "nccl-tests %s: %s", what, words);
	else if (other)
		snprintf(why, sizeof why, "nccl-tests %s; last error: %s", what, other);
	else
		snprintf(why, sizeof why, "nccl-tests %s: nothing was measured", what);
	if (cause)
		nt_put(d, "cause", cJSON_CreateString(cause));
	nt_finish_reason(c, rec, why);
	nt_nothing_measured(rec);
	if (!r->collective[0])
		nt_put(d, "collective_note", cJSON_CreateString("no 'Collective test starting' line, program name or -J args named the collective"));
	nt_add_record(c, out, rec);
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
		nt_put(o, it->string, cJSON_Duplicate(it, true));
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
	cJSON *rec = nt_record_start(c, r, coll, ri);
	cJSON *d = rec ? ng_record_detail(rec) : NULL;
	if (source)
		nt_put(d, "collective_source", cJSON_CreateString(source));
	if (rec && !coll) {
		nt_put(d, "collective_note",
		    cJSON_CreateString("the collective could not be told: no 'Collective test starting' line, program "
		                       "name or -J args, and the table's shape does not single one out"));
		if (cJSON_GetArraySize(cands))
			nt_put(d, "collective_candidates", cands), cands = NULL;
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
		nt_push(inplace, row->ip.present && row->ip.has_busbw ? cJSON_CreateNumber(row->ip.busbw) : cJSON_CreateNull());
		nt_push(per_iter, per_iter_of(row->detail));
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
	nt_put(d, "cycles", cJSON_CreateNumber(cy.complete));
	if (cy.incomplete)
		nt_put(d, "incomplete_cycles", cJSON_CreateNumber(cy.incomplete));
	nt_put(d, "inplace_busbw_largest", inplace);
	if (cJSON_GetArraySize(per_iter))
		nt_put(d, "per_iteration_largest", per_iter);
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
			nt_push(table, row->detail);
			row->detail = NULL;
			kept++;
		}
	}
	nt_put(d, "table", table);
	if (n > kept)
		nt_put(d, "table_rows_omitted", cJSON_CreateNumber((double)(n - kept)));
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
	nt_put(d, "datatype", cJSON_CreateString(first->type));
	nt_put(d, "redop", first->redop[0] ? cJSON_CreateString(first->redop) : cJSON_CreateNull());
	nt_put_num(d, "root", first->has_root, (double)first->root);
	nt_put(d, "largest_size", cJSON_CreateNumber(maxsize));
	if (r->layout.known && r->layout.cputime)
		nt_put(d, "time_column", cJSON_CreateString("cputime"));
	if (r->layout.per_iter)
		nt_put(d, "per_iteration", cJSON_CreateTrue());

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
		nt_put(cap, "requested_largest_size", cJSON_CreateNumber(expected));
		nt_put(cap, "largest_size", cJSON_CreateNumber(maxsize));
		nt_put(cap, "evidence", cJSON_CreateString(r->seen & F_OOB ? "'Out of bounds values' summary after the table"
		                                                         : "'Avg bus bandwidth' summary after the table"));
		nt_put(d, "sweep_capped", cap);
		cut = false;
	}
	if (cut) {
		nt_put(d, "expected_largest_size", cJSON_CreateNumber(expected));
		const char *cause = nt_cause_line(r->messages);
		snprintf(why, sizeof why,
		         "the table stops at %.0f bytes, short of the largest size the run asked for (%.0f bytes): the run "
		         "ended mid-sweep%s%s",
		         maxsize, expected, cause ? ": " : "", cause ? cause : "");
		if (cause)
			nt_put(d, "cause", cJSON_CreateString(cause));
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
	nt_put(d, "wrong_source", cJSON_CreateString(w.source));
	move_table(d, r, idx, n);
	nt_finish_reason(c, rec, why);
	nt_add_record(c, out, rec);
}

void nt_emit_run(nt_ctx *c, cJSON *out, size_t ri)
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
