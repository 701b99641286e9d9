/* nccl-tests: the -J JSON report (file versions 1-3), whole or behind
 * warning lines, read into runs like the text. */
#include "parse/nccl_tests_int.h"

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
	nt_put_num(o, cpu ? "cputime_us" : "time_us", out->has_time, out->time);
	nt_put_num(o, "algbw", out->has_algbw, out->algbw);
	nt_put_num(o, "busbw", out->has_busbw, out->busbw);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(h, "nwrong");
	if (w) {
		bool num = cJSON_IsNumber(w) && isfinite(w->valuedouble) && w->valuedouble >= 0;
		out->wrong_kind = num ? NT_W_NUM : NT_W_NA;
		out->wrong = num ? w->valuedouble : 0;
		nt_put_num(o, "wrong", num, out->wrong);
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
			nt_put(o, keys[i], cJSON_CreateNumber(v));
	const cJSON *times = cJSON_GetObjectItemCaseSensitive(p, "times_us");
	if (cJSON_IsArray(times)) {
		nt_put(o, "iterations", cJSON_CreateNumber(cJSON_GetArraySize(times)));
		if (keep_times) {
			cJSON *a = cJSON_CreateArray(), *t;
			cJSON_ArrayForEach(t, times) nt_push(a, cJSON_IsNumber(t) && isfinite(t->valuedouble)
			                                           ? cJSON_CreateNumber(t->valuedouble)
			                                           : cJSON_CreateNull());
			nt_put(o, "times_us", a);
		}
	}
	return o;
}

static void json_row(nt_ctx *c, nt_run *r, const cJSON *res, double maxsize)
{
	double size, count = 0;
	if (!cJSON_IsObject(res) || !json_num(res, "size", &size) || size < 0)
		return;
	nt_row *row = nt_add_row(c, r);
	if (!row)
		return;
	row->size = size;
	row->table_start = r->nrows == 1;
	json_num(res, "count", &count);
	const char *s;
	if ((s = json_str(res, "type")))
		nt_copy_clean(ng_span_cstr(s), row->type, sizeof row->type);
	if ((s = json_str(res, "redop")))
		nt_copy_clean(ng_span_trim(ng_span_cstr(s)), row->redop, sizeof row->redop);
	const cJSON *root = cJSON_GetObjectItemCaseSensitive(res, "root");
	if (cJSON_IsString(root) && root->valuestring)
		row->has_root = nt_span_int_signed(ng_span_trim(ng_span_cstr(root->valuestring)), &row->root);
	else if (cJSON_IsNumber(root) && isfinite(root->valuedouble) && fabs(root->valuedouble) < 1e15)
		row->has_root = true, row->root = (long long)root->valuedouble;
	cJSON *d = nt_row_detail_base(row, count);
	nt_put(d, "out_of_place", json_half(cJSON_GetObjectItemCaseSensitive(res, "out_of_place"), &row->oop));
	nt_put(d, "in_place", json_half(cJSON_GetObjectItemCaseSensitive(res, "in_place"), &row->ip));
	double v;
	if (json_num(res, "actual_iterations", &v))
		nt_put(d, "actual_iterations", cJSON_CreateNumber(v));
	if ((s = json_str(res, "experiment_name")) && s[0])
		nt_put(d, "experiment_name", nt_span_str(ng_span_cstr(s)));
	const cJSON *p;
	if (cJSON_IsObject(p = cJSON_GetObjectItemCaseSensitive(res, "out_of_place_per_iter")))
		nt_put(d, "out_of_place_per_iter", json_per_iter(p, size == maxsize));
	if (cJSON_IsObject(p = cJSON_GetObjectItemCaseSensitive(res, "in_place_per_iter")))
		nt_put(d, "in_place_per_iter", json_per_iter(p, size == maxsize));
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
			ng_json_set(r->params, map[i][1], nt_span_str(ng_span_cstr(it->valuestring)));
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
				nt_put(o, keys[i][1], cJSON_CreateNumber(v));
			else if (s)
				nt_put(o, keys[i][1], nt_span_str(ng_span_cstr(s)));
		}
		nt_push(r->devices, o);
	}
}

/* One -J report (file versions 1 to 3) into one run. */
void nt_json_report(nt_ctx *c, const cJSON *doc, const char *tag, nt_pending *pend)
{
	nt_run *r = nt_new_run(c, tag, pend);
	if (!r)
		return;
	r->is_json = true;
	r->seen |= F_JSON;
	r->layout.known = true;
	r->json_meta = cJSON_CreateObject();
	double v;
	const char *s;
	if (json_num(doc, "version", &v))
		nt_put(r->json_meta, "file_version", cJSON_CreateNumber(v));
	if ((s = json_str(doc, "start_time")))
		nt_put(r->json_meta, "start_time", nt_span_str(ng_span_cstr(s)));
	if ((s = json_str(doc, "end_time")))
		nt_put(r->json_meta, "end_time", nt_span_str(ng_span_cstr(s)));
	if (!cJSON_GetObjectItemCaseSensitive(doc, "results") && !cJSON_GetObjectItemCaseSensitive(doc, "config"))
		nt_put(r->json_meta, "not_a_report", cJSON_CreateTrue());
	/* argv, never env: the report dumps the whole environment, secrets too. */
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(doc, "args"), *a;
	if (cJSON_IsArray(args)) {
		r->argv = cJSON_CreateArray();
		cJSON_ArrayForEach(a, args) if (cJSON_IsString(a) && a->valuestring) nt_push(r->argv, nt_span_str(ng_span_cstr(a->valuestring)));
		const cJSON *a0 = cJSON_GetArrayItem(args, 0);
		char prog[64], coll[48];
		if (cJSON_IsString(a0) && a0->valuestring &&
		    nt_program_from_token(ng_span_cstr(a0->valuestring), prog, sizeof prog, coll, sizeof coll))
			nt_set_collective(r, prog, coll, "-J report args");
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
	    nt_push_capped(r->messages, ng_span_cstr(e->valuestring), NT_MAX_MESSAGES);
}

bool nt_looks_like_json(const char *text, size_t len)
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
const char *nt_json_start(const char *text, size_t len)
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
void nt_read_json(nt_ctx *c, const char *text, size_t len, cJSON *out)
{
	const char *p = text, *end = text + len;
	nt_pending pend = {0};
	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end)
			break;
		if (*p != '{') {
			nt_read_stream(c, "", p, (size_t)(end - p));
			break;
		}
		const char *stop = NULL;
		cJSON *doc = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &stop, false);
		if (!doc) {
			cJSON *rec = nt_record_start(c, NULL, NULL, 0);
			if (rec) {
				size_t at = stop && stop >= text && stop <= end ? (size_t)(stop - text) : (size_t)(p - text);
				char why[160];
				snprintf(why, sizeof why,
				         "the input looks like an nccl-tests -J JSON report but is not valid JSON (cut short?) "
				         "near byte %zu",
				         at);
				nt_put(ng_record_detail(rec), "format", cJSON_CreateString("json"));
				nt_finish_reason(c, rec, why);
				nt_add_record(c, out, rec);
			}
			return;
		}
		if (cJSON_IsObject(doc))
			nt_json_report(c, doc, "", &pend);
		cJSON_Delete(doc);
		if (!stop || stop <= p)
			break;
		p = stop;
	}
	cJSON_Delete(pend.messages);
}
