/* nccl-tests (all_reduce_perf and its siblings): the per-size result table,
 * read into one record per collective and invocation.
 *
 * Formats: every stdout layout from before v2.13 to v2.19 (the column header
 * names the columns, so -I per-iteration, -S timestamps, -C cputime and the
 * old "error" column are read off it), the same output with its '#' prefixes
 * stripped, behind any launcher parse/launcher.h reads (srun -l, mpirun
 * --tag-output, kubectl, ts, journald), with foreign lines anywhere, several
 * invocations back to back; and the -J JSON report (one compact line, or
 * pretty-printed).
 *
 * A sample is the out-of-place busbw at the largest size of the table, one
 * per cycle (-N). Nothing that was not printed becomes a number: N/A stays
 * null, a busbw of 0 is no measurement, usage text is a record with a reason.
 *
 * The input is first split by launcher label, so that lines of different
 * ranks or tasks never mix into one table; each stream is then read line by
 * line into "runs" (one invocation each), and each run becomes records.
 *
 * This file holds the entry, the helpers and the runs; the text is read in
 * nccl_tests_text.c, the -J report in nccl_tests_json.c, and records are
 * made in nccl_tests_records.c (their types: nccl_tests_int.h). */
#include "parse/nccl_tests_int.h"

/* ---- small helpers ---------------------------------------------------- */

/* Copies s into dst as printable ASCII, so a record is valid JSON whatever
 * bytes the tool (or a corrupted log) wrote. */
void nt_copy_clean(ng_span s, char *dst, size_t cap)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s.s[i];
		dst[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	dst[n] = '\0';
}

cJSON *nt_span_str(ng_span s)
{
	char buf[NT_MAX_STR + 1];
	nt_copy_clean(s, buf, sizeof buf);
	return cJSON_CreateString(buf);
}


/* obj[key] = item; the item is freed when it cannot be added. */
void nt_put(cJSON *obj, const char *key, cJSON *item)
{
	if (item && !cJSON_AddItemToObject(obj, key, item))
		cJSON_Delete(item);
}

void nt_push(cJSON *arr, cJSON *item)
{
	if (item && !cJSON_AddItemToArray(arr, item))
		cJSON_Delete(item);
}

void nt_put_num(cJSON *obj, const char *key, bool has, double v)
{
	nt_put(obj, key, has ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

void nt_push_capped(cJSON *arr, ng_span s, int max)
{
	if (arr && cJSON_GetArraySize(arr) < max)
		nt_push(arr, nt_span_str(s));
}

/* A table cell: 1 (and *v) for a number, 0 for a figure the tool could not
 * give (N/A, nan, inf), -1 for anything that is not a cell at all. */
int nt_cell(ng_span s, double *v)
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

bool nt_is_word(ng_span s, size_t max)
{
	if (s.len == 0 || s.len > max || !isalpha((unsigned char)s.s[0]))
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!isalnum((unsigned char)s.s[i]) && s.s[i] != '_')
			return false;
	return true;
}

bool nt_span_int_signed(ng_span s, long long *out)
{
	bool neg = s.len > 0 && s.s[0] == '-';
	long long v;
	if (!ng_span_integer(ng_span_skip(s, neg ? 1 : 0), &v))
		return false;
	*out = neg ? -v : v;
	return true;
}


/* The text after the first ':' of s, trimmed. */
ng_span nt_after_colon(ng_span s)
{
	const char *c = memchr(s.s, ':', s.len);
	if (!c)
		return (ng_span){s.s + s.len, 0};
	return ng_span_trim(ng_span_skip(s, (size_t)(c - s.s) + 1));
}

/* NCCL_VERSION_CODE: 22902 is 2.29.2; before 2.9 it was 2804 for 2.8.4. */
void nt_nccl_version_str(long long code, char *buf, size_t cap)
{
	if (code >= 20900)
		snprintf(buf, cap, "%lld.%lld.%lld", code / 10000, code % 10000 / 100, code % 100);
	else
		snprintf(buf, cap, "%lld.%lld.%lld", code / 1000, code % 1000 / 100, code % 100);
}

/* "all_reduce_perf" (or a path to it, "all_reduce_perf_mpi") names the
 * program and its collective. */
bool nt_program_from_token(ng_span tok, char *prog, size_t pcap, char *coll, size_t ccap)
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
	if (!nt_is_word(c, ccap - 1))
		return false;
	for (size_t i = 0; i < clen; i++)
		if (isupper((unsigned char)c.s[i]))
			return false;
	nt_copy_clean(tok, prog, pcap);
	nt_copy_clean(c, coll, ccap);
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

void nt_layout_default(nt_layout *l)
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
nt_run *nt_new_run(nt_ctx *c, const char *tag, nt_pending *pend)
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
	nt_layout_default(&r->layout);
	r->params = cJSON_CreateObject();
	r->devices = cJSON_CreateArray();
	r->messages = cJSON_CreateArray();
	r->notes = cJSON_CreateArray();
	if (!r->params || !r->devices || !r->messages || !r->notes)
		c->oom = true;
	if (pend) {
		if (pend->program[0]) {
			char coll[48], prog[64];
			if (nt_program_from_token(ng_span_cstr(pend->program), prog, sizeof prog, coll, sizeof coll)) {
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
			cJSON_ArrayForEach(m, pend->messages) nt_push_capped(r->messages, ng_span_cstr(m->valuestring), NT_MAX_MESSAGES);
			cJSON_Delete(pend->messages);
			pend->messages = NULL;
		}
	}
	return r;
}

nt_row *nt_add_row(nt_ctx *c, nt_run *r)
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

void nt_set_collective(nt_run *r, const char *prog, const char *coll, const char *source)
{
	snprintf(r->program, sizeof r->program, "%s", prog);
	snprintf(r->collective, sizeof r->collective, "%s", coll);
	r->collective_source = source;
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
	else if (nt_looks_like_json(t, tlen))
		nt_read_json(&c, t, tlen, out);
	else {
		nt_read_text(&c, &l);
		/* A -J report behind warning lines: read it only when the text held
		 * no run, so a report catted after its own log is not counted twice. */
		const char *brace = c.nruns ? NULL : nt_json_start(t, tlen);
		if (brace)
			nt_read_json(&c, brace, tlen - (size_t)(brace - t), out);
	}
	if (c.nruns && !(c.usage_rec = calloc(c.nruns, sizeof *c.usage_rec)))
		c.oom = true;
	for (size_t i = 0; i < c.nruns && !c.oom; i++)
		nt_emit_run(&c, out, i);
	free(c.usage_rec);
	if (!c.oom && cJSON_GetArraySize(out) == 0) {
		cJSON *rec = nt_record_start(&c, NULL, NULL, 0);
		if (rec) {
			bool blank = true;
			for (size_t i = 0; i < tlen && blank; i++)
				blank = isspace((unsigned char)t[i]) != 0;
			if (cJSON_GetArraySize(c.orphans))
				nt_put(ng_record_detail(rec), "messages", cJSON_Duplicate(c.orphans, true));
			const char *cause = nt_cause_line(c.orphans);
			char why[640], words[560];
			if (cause) {
				nt_cause_words(c.orphans, cause, words, sizeof words);
				snprintf(why, sizeof why, "nccl-tests failed before printing a result table: %s", words);
				nt_put(ng_record_detail(rec), "cause", cJSON_CreateString(cause));
			}
			nt_finish_reason(&c, rec,
			              blank   ? "the output is empty: nccl-tests printed nothing"
			              : cause ? why
			                      : "no nccl-tests output found (no result table, usage text or -J report)");
			nt_nothing_measured(rec);
			nt_add_record(&c, out, rec);
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
		ng_fail_as(err, NG_ERR_INPUT, "nccl-tests parser: out of memory reading %zu bytes of output", len);
		return NULL;
	}
	return out;
}
