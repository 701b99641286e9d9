/* nccl-tests: the text output, line by line. The column header decides the
 * layout; rows, the header-ish lines around the table and foreign lines are
 * read into runs, one launcher stream at a time. */
#include "parse/nccl_tests_int.h"

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
	nt_layout_default(&l);
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
		if (!ng_span_same(a, f[t2 + (size_t)k]))
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
	if (!ng_span_integer(f[1], &v) || !nt_is_word(f[2], sizeof row->type - 1))
		return false;
	nt_copy_clean(f[2], row->type, sizeof row->type);
	int extra = pn - 3, want = (int)l->pre_redop + (int)l->pre_root;
	if (extra < 0 || extra > want)
		return false;
	for (int i = 0; i < extra; i++) {
		ng_span t = f[3 + i];
		long long root;
		bool is_int = nt_span_int_signed(t, &root);
		bool root_slot = extra == want ? (l->pre_root && i == extra - 1) : is_int;
		if (root_slot) {
			if (!is_int)
				return false;
			row->has_root = true;
			row->root = root;
		} else {
			if (!nt_is_word(t, sizeof row->redop - 1))
				return false;
			nt_copy_clean(t, row->redop, sizeof row->redop);
		}
	}
	return true;
}

static bool half_extra(cJSON *o, const char *key, const ng_span *f, int idx)
{
	double v;
	if (idx < 0)
		return true;
	int k = nt_cell(f[idx], &v);
	if (k < 0)
		return false;
	nt_put_num(o, key, k == 1, v);
	return true;
}

/* One half (out-of-place or in-place) of a row, starting at f. */
static bool row_half(const ng_span *f, const nt_layout *l, nt_half *h, cJSON *o)
{
	int k;
	h->present = true;
	if ((k = nt_cell(f[0], &h->time)) < 0)
		return false;
	h->has_time = k == 1;
	if ((k = nt_cell(f[l->h_algbw], &h->algbw)) < 0)
		return false;
	h->has_algbw = k == 1;
	if ((k = nt_cell(f[l->h_busbw], &h->busbw)) < 0)
		return false;
	h->has_busbw = k == 1;
	nt_put_num(o, l->cputime ? "cputime_us" : "time_us", h->has_time, h->time);
	nt_put_num(o, "algbw", h->has_algbw, h->algbw);
	nt_put_num(o, "busbw", h->has_busbw, h->busbw);
	if (l->h_wrong >= 0) {
		if ((k = nt_cell(f[l->h_wrong], &h->wrong)) < 0 || (k == 1 && h->wrong < 0))
			return false;
		h->wrong_kind = k == 1 ? NT_W_NUM : NT_W_NA;
		nt_put_num(o, l->wrong_is_error ? "max_rel_error" : "wrong", k == 1, h->wrong);
	}
	return half_extra(o, "i_min_us", f, l->h_imin) && half_extra(o, "i_max_us", f, l->h_imax) &&
	       half_extra(o, "i_p99_us", f, l->h_ip99) && half_extra(o, "i_cv_pct", f, l->h_icv) &&
	       half_extra(o, "bitdiff", f, l->h_bitdiff);
}

cJSON *nt_row_detail_base(const nt_row *row, double count)
{
	cJSON *d = cJSON_CreateObject();
	nt_put(d, "size", cJSON_CreateNumber(row->size));
	nt_put(d, "count", cJSON_CreateNumber(count));
	nt_put(d, "type", cJSON_CreateString(row->type));
	nt_put(d, "redop", row->redop[0] ? cJSON_CreateString(row->redop) : cJSON_CreateNull());
	nt_put_num(d, "root", row->has_root, (double)row->root);
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
	cJSON *d = nt_row_detail_base(row, (double)count);
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
		nt_copy_clean(p[0], ts, sizeof ts);
		nt_copy_clean(p[1], b, sizeof b);
		size_t used = strlen(ts);
		snprintf(ts + used, sizeof ts - used, " %s", b);
		nt_put(d, "timestamp", cJSON_CreateString(ts));
	}
	if (!ok) {
		cJSON_Delete(d);
		cJSON_Delete(ho);
		cJSON_Delete(hi);
		return false;
	}
	if (oop)
		nt_put(d, "out_of_place", ho);
	else {
		cJSON_Delete(ho);
		nt_put(d, "out_of_place", cJSON_CreateNull());
	}
	nt_put(d, "in_place", hi);
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
				nt_copy_clean(sfx, suffix, sizeof suffix);
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
			nt_copy_clean(t, key + used, sizeof key - used);
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
			nt_put(d, "host", nt_span_str(f[i + 1]));
			continue;
		}
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k += 2)
			if (ng_span_eq(f[i], keys[k]) && ng_span_integer(f[i + 1], &v) &&
			    !cJSON_GetObjectItemCaseSensitive(d, keys[k + 1]))
				nt_put(d, keys[k + 1], cJSON_CreateNumber((double)v));
	}
	if (lb && rb) {
		nt_put(d, "bus_id", nt_span_str((ng_span){lb + 1, (size_t)(rb - lb - 1)}));
		ng_span name = ng_span_trim((ng_span){rb + 1, line.len - (size_t)(rb + 1 - line.s)});
		if (name.len)
			nt_put(d, "name", nt_span_str(name));
	}
	if (cJSON_GetObjectItemCaseSensitive(d, "rank"))
		nt_push(r->devices, d);
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
			nt_copy_clean(t, r->version, sizeof r->version);
		else if (t.len > 2 && t.s[0] == '(' && t.s[t.len - 1] == ')')
			nt_copy_clean((ng_span){t.s + 1, t.len - 2}, r->git, sizeof r->git);
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
	size_t n = ng_split_ws(nt_after_colon(line), f, 4);
	double v;
	if (oob) {
		long long k;
		if (n >= 1 && ng_span_integer(f[0], &k))
			r->oob = k;
		if (n >= 2)
			nt_copy_clean(f[1], r->oob_status, sizeof r->oob_status);
		return;
	}
	if (n >= 1 && ng_span_number(f[0], &v)) {
		r->avg = v;
		r->avg_is_number = true;
	}
	if (n >= 2)
		nt_copy_clean(f[1], r->avg_check, sizeof r->avg_check);
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
	r = nt_new_run(rd->c, rd->tag, &rd->pend);
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
		nt_push_capped(r->messages, t, NT_MAX_MESSAGES);
		return;
	}
	if (!rd->pend.messages)
		rd->pend.messages = cJSON_CreateArray();
	nt_push_capped(rd->pend.messages, t, NT_MAX_MESSAGES);
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
	if (n >= 2 && usage_line && !r->collective[0] && nt_program_from_token(f[1], prog, sizeof prog, coll, sizeof coll))
		nt_set_collective(r, prog, coll, "usage text");
	if (n >= 1 && !usage_line && !r->collective[0] &&
	    nt_program_from_token(f[0], prog, sizeof prog, coll, sizeof coll))
		nt_set_collective(r, prog, coll, "program name in its error");
	if (usage_line)
		return;
	/* glibc names the option ("-- 'I'"); nccl-tests only says '?'. */
	const char *q = memchr(t.s, '\'', t.len);
	char opt[48] = "";
	if (q) {
		ng_span rest = {q + 1, t.len - (size_t)(q + 1 - t.s)};
		const char *q2 = memchr(rest.s, '\'', rest.len);
		if (q2)
			nt_copy_clean((ng_span){rest.s, (size_t)(q2 - rest.s)}, opt, sizeof opt);
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
				nt_copy_clean(f[0], dst, 32);
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
		if (!nt_program_from_token(f[i], prog, sizeof prog, coll, sizeof coll))
			continue;
		if (r && !(r->seen & (F_LAYOUT | F_ROWS | F_TABLE_DONE))) {
			if (!r->collective[0])
				nt_set_collective(r, prog, coll, "program name printed before the table");
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
	nt_layout_default(&def);
	const nt_layout *l = fresh ? &def : &r->layout;
	if (!parse_row(t, l, &tmp)) {
		read_foreign(rd, t);
		return;
	}
	r = run_for(rd, F_TABLE_DONE);
	nt_row *row = r ? nt_add_row(rd->c, r) : NULL;
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
			if (ng_split_ws(nt_after_colon(t), f, 2) >= 1 &&
			    nt_program_from_token(f[0], prog, sizeof prog, coll, sizeof coll))
				nt_set_collective(r, prog, coll, "'Collective test starting' line");
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
		nt_copy_clean(ng_span_trim(ng_span_skip(t, 23)), rd->pend.json_path, sizeof rd->pend.json_path);
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
			nt_copy_clean(t, r->arg_error, sizeof r->arg_error), r->seen |= F_USAGE;
	} else if (ng_span_starts_with(t, "Per-Iteration Report") || ng_span_starts_with(t, "Blocking Enabled") ||
	           ng_span_starts_with(t, "Parallel Init Enabled") || ng_span_starts_with(t, "Bitwise Repeatability")) {
		if ((r = cur_run(rd)))
			nt_push_capped(r->notes, t, NT_MAX_NOTES);
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

/* ---- launcher streams -------------------------------------------------- */

/* One stream's lines, its launcher prefixes already gone. */
void nt_read_stream(nt_ctx *c, const char *tag, const char *text, size_t len)
{
	nt_reader rd = {.c = c, .tag = tag};
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, text, len);
	while (ng_lines_next(&it, &line))
		read_line(&rd, line);
	if (rd.pend.messages) {
		cJSON *m;
		cJSON_ArrayForEach(m, rd.pend.messages) nt_push_capped(c->orphans, ng_span_cstr(m->valuestring), NT_MAX_MESSAGES);
		cJSON_Delete(rd.pend.messages);
	}
}

/* Each launcher stream (one rank or task: parse/launcher.h) is read on its
 * own, so lines of different ranks never mix into one table. */
void nt_read_text(nt_ctx *c, const ng_launch *l)
{
	for (size_t k = 0; k < l->nstreams && !c->oom; k++)
		nt_read_stream(c, l->streams[k].tag, l->streams[k].text, l->streams[k].len);
}
