/* dcgmi diag -j: the JSON of DCGM 3.x and 4.x, found among foreign lines,
 * read into the tests of the record. */
#include "parse/dcgmi_int.h"

static const char *const severity_names[] = {"NONE", "MONITOR", "ISOLATE", "UNKNOWN",
                                             "TRIAGE", "CONFIG", "RESET"};
static const char *const category_names[] = {
	"NONE", "PERF_THRESHOLD", "PERF_VIOLATION", "SOFTWARE_CONFIG", "SOFTWARE_LIBRARY",
	"SOFTWARE_XID", "SOFTWARE_CUDA", "SOFTWARE_EUD", "SOFTWARE_OTHER", "HARDWARE_THERMAL",
	"HARDWARE_MEMORY", "HARDWARE_NVLINK", "HARDWARE_NVSWITCH", "HARDWARE_PCIE", "HARDWARE_POWER",
	"HARDWARE_OTHER", "INTERNAL_OTHER"};
/* ----------------------------------------------------------------- JSON */

static void copy_code(cJSON *o, const cJSON *w, const char *key, const char *name_key,
                      const char *const *names, size_t n_names)
{
	const cJSON *v = ng_json_get(w, key);
	if (!v)
		return;
	ng_json_set(o, key, dg_copy_clean(v, 0));
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < (double)n_names &&
	    v->valuedouble == (double)(int)v->valuedouble)
		ng_json_set(o, name_key, cJSON_CreateString(names[(int)v->valuedouble]));
}

/* One warning as DCGM prints it: a bare string, or an object whose text is
 * "warning" (or "warnings" in 3.x software checks) with numeric codes. */
static void add_json_warning(cJSON *target, const cJSON *w, const cJSON *dedupe_test)
{
	const cJSON *text = w;
	if (cJSON_IsObject(w)) {
		text = ng_json_get(w, "warning");
		if (!cJSON_IsString(text))
			text = ng_json_get(w, "warnings");
		if (!cJSON_IsString(text))
			text = ng_json_get(w, "message");
	} else if (!cJSON_IsString(w)) {
		return;
	}
	if (dedupe_test && cJSON_IsString(text) && dg_entity_has_warning(dedupe_test, text->valuestring))
		return;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return;
	if (cJSON_IsString(text))
		ng_json_set(o, "text", dg_json_str(text->valuestring, strlen(text->valuestring)));
	if (cJSON_IsObject(w)) {
		copy_code(o, w, "error_id", "error_id", NULL, 0);
		copy_code(o, w, "error_category", "category_name", category_names,
		          sizeof category_names / sizeof category_names[0]);
		copy_code(o, w, "error_severity", "severity_name", severity_names,
		          sizeof severity_names / sizeof severity_names[0]);
	}
	dg_append(dg_child_array(target, "warnings"), o);
}

static void add_json_warnings(cJSON *target, const cJSON *v, const cJSON *dedupe_test)
{
	if (!target || !v)
		return;
	if (cJSON_IsArray(v)) {
		for (const cJSON *w = v->child; w; w = w->next)
			add_json_warning(target, w, dedupe_test);
	} else {
		add_json_warning(target, v, dedupe_test);
	}
}

static void add_json_info(cJSON *target, const cJSON *v)
{
	if (!target || !v)
		return;
	if (cJSON_IsString(v)) {
		dg_add_info_text(target, ng_span_cstr(v->valuestring));
	} else if (cJSON_IsArray(v)) {
		for (const cJSON *i = v->child; i; i = i->next)
			if (cJSON_IsString(i))
				dg_add_info_text(target, ng_span_cstr(i->valuestring));
	}
}

static bool json_integer(const cJSON *v, long long *out)
{
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 &&
	    v->valuedouble == (double)(long long)v->valuedouble) {
		*out = (long long)v->valuedouble;
		return true;
	}
	return cJSON_IsString(v) && ng_span_integer(ng_span_cstr(v->valuestring), out);
}

/* Which entity a result belongs to: 4.x entity_group + entity_id, 3.x gpu_id
 * or gpu_ids (strings, sometimes a list), or cpu_id; NULL for a result that
 * names none (the test itself). */
static cJSON *json_result_entity(struct dcgm *c, cJSON *test, const cJSON *r)
{
	long long id;
	const cJSON *grp = ng_json_get(r, "entity_group");
	const cJSON *eid = ng_json_get(r, "entity_id");
	if (eid && json_integer(eid, &id))
		return dg_test_entity(c, test, cJSON_IsString(grp) ? ng_span_cstr(grp->valuestring) : ng_span_cstr("GPU"), id,
		                   (ng_span){0});
	static const char *const keys[][2] = {{"gpu_id", "GPU"}, {"gpu_ids", "GPU"}, {"cpu_id", "CPU"}};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		const cJSON *v = ng_json_get(r, keys[k][0]);
		if (!v)
			continue;
		if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 1)
			v = v->child;
		if (json_integer(v, &id))
			return dg_test_entity(c, test, ng_span_cstr(keys[k][1]), id, (ng_span){0});
		char *txt = cJSON_PrintUnformatted(v);
		char raw[96];
		snprintf(raw, sizeof raw, "%s%s", keys[k][1], txt ? txt : "?");
		free(txt);
		return dg_test_entity(c, test, ng_span_cstr(keys[k][1]), -1, ng_span_cstr(raw));
	}
	return NULL;
}

static void read_json_result(struct dcgm *c, cJSON *test, const cJSON *r)
{
	if (!cJSON_IsObject(r)) {
		dg_problem(c, "test %s: a result that is not an object", dg_label_of(test, "display_name"));
		return;
	}
	cJSON *ent = json_result_entity(c, test, r);
	cJSON *target = ent ? ent : test;
	const cJSON *st = ng_json_get(r, "status");
	if (cJSON_IsString(st))
		dg_set_status(c, test, target, ng_span_cstr(st->valuestring));
	else
		dg_problem(c, "test %s: a result without a status string", dg_label_of(test, "display_name"));
	add_json_warnings(target, ng_json_get(r, "warnings"), NULL);
	add_json_info(target, ng_json_get(r, "info"));
}

static void read_json_test(struct dcgm *c, const cJSON *t, const char *category)
{
	const cJSON *name = ng_json_get(t, "name");
	if (!cJSON_IsString(name)) {
		dg_problem(c, "a test in category %s has no name; its result is not read",
		        category ? category : "(none)");
		return;
	}
	cJSON *test = dg_test_new(c, ng_span_cstr(name->valuestring), category);
	if (!test)
		return;
	const cJSON *st = ng_json_get(t, "status");
	if (cJSON_IsString(st))
		dg_set_status(c, test, test, ng_span_cstr(st->valuestring));
	const cJSON *results = ng_json_get(t, "results");
	if (cJSON_IsArray(results)) {
		for (const cJSON *r = results->child; r; r = r->next)
			read_json_result(c, test, r);
	} else if (results) {
		dg_problem(c, "test %s: \"results\" is not a list", dg_label_of(test, "display_name"));
	}
	const cJSON *sum = ng_json_get(t, "test_summary");
	if (cJSON_IsObject(sum)) {
		const cJSON *ss = ng_json_get(sum, "status");
		if (cJSON_IsString(ss))
			dg_set_status(c, test, test, ng_span_cstr(ss->valuestring));
		add_json_warnings(test, ng_json_get(sum, "warnings"), test);
		add_json_info(test, ng_json_get(sum, "info"));
	}
}

static void read_json_categories(struct dcgm *c, const cJSON *cats)
{
	if (!cats)
		return;
	if (!cJSON_IsArray(cats)) {
		dg_problem(c, "\"test_categories\" is not a list");
		return;
	}
	for (const cJSON *cat = cats->child; cat; cat = cat->next) {
		const cJSON *name = ng_json_get(cat, "category");
		const char *category = cJSON_IsString(name) ? name->valuestring : NULL;
		const cJSON *tests = ng_json_get(cat, "tests");
		if (!cJSON_IsArray(tests)) {
			/* DCGM never prints a category without tests; a paste that
			 * elided one ({"..."}) did. */
			dg_problem(c, "a test category (%s) without a list of tests", category ? category : "unnamed");
			continue;
		}
		for (const cJSON *t = tests->child; t; t = t->next)
			read_json_test(c, t, category);
	}
}

static const cJSON *first_string(const cJSON *a, const cJSON *b, const cJSON *cc, const char *key)
{
	const cJSON *objs[] = {a, b, cc};
	for (size_t i = 0; i < 3; i++) {
		const cJSON *v = ng_json_get(objs[i], key);
		if (cJSON_IsString(v) && v->valuestring[0])
			return v;
	}
	return NULL;
}

void dg_set_detail_once(struct dcgm *c, const char *key, cJSON *v)
{
	if (cJSON_GetObjectItemCaseSensitive(c->detail, key))
		cJSON_Delete(v);
	else
		ng_json_set(c->detail, key, v);
}

static void read_json_entities(struct dcgm *c, const cJSON *doc)
{
	const cJSON *groups = ng_json_get(doc, "entity_groups");
	if (cJSON_IsArray(groups)) {
		dg_set_detail_once(c, "entity_groups", dg_copy_clean(groups, 0));
		cJSON *ids = cJSON_CreateArray();
		for (const cJSON *g = groups->child; g; g = g->next) {
			const cJSON *name = ng_json_get(g, "entity_group");
			bool gpu = !cJSON_IsString(name) || strcmp(name->valuestring, "GPU") == 0;
			const cJSON *ents = ng_json_get(g, "entities");
			for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; gpu && e; e = e->next) {
				long long id;
				if (json_integer(ng_json_get(e, "entity_id"), &id))
					dg_note_gpu(c, id);
				const cJSON *dev = ng_json_get(e, "device_id");
				if (cJSON_IsString(dev))
					dg_append(ids, dg_json_str(dev->valuestring, strlen(dev->valuestring)));
			}
		}
		if (cJSON_GetArraySize(ids))
			dg_set_detail_once(c, "device_ids", ids);
		else
			cJSON_Delete(ids);
	}
	/* DCGM 3.x: "GPU Device IDs": [...], "GPU Device Serials": {"0": ...}. */
	const cJSON *dev = ng_json_get(doc, "GPU Device IDs");
	if (cJSON_IsArray(dev))
		dg_set_detail_once(c, "device_ids", dg_copy_clean(dev, 0));
	const cJSON *ser = ng_json_get(doc, "GPU Device Serials");
	if (cJSON_IsObject(ser)) {
		dg_set_detail_once(c, "serials", dg_copy_clean(ser, 0));
		for (const cJSON *s = ser->child; s; s = s->next) {
			long long id;
			if (s->string && ng_span_integer(ng_span_cstr(s->string), &id))
				dg_note_gpu(c, id);
		}
	}
}

static void read_json_doc(struct dcgm *c, const cJSON *doc)
{
	const char *key = "DCGM Diagnostic";
	const cJSON *d = ng_json_get(doc, key);
	if (!cJSON_IsObject(d)) {
		key = "DCGM GPU Diagnostic";
		d = ng_json_get(doc, key);
	}
	if (!cJSON_IsObject(d)) {
		dg_problem(c, "a JSON iteration without a \"DCGM Diagnostic\" object");
		return;
	}
	dg_set_detail_once(c, "json_key", cJSON_CreateString(key));
	const cJSON *meta = ng_json_get(doc, "metadata");
	if (cJSON_IsObject(meta))
		dg_set_detail_once(c, "metadata", dg_copy_clean(meta, 0));
	/* 4.x: metadata.version; 3.x: the version beside the diagnostic object
	 * or inside it, depending on the release. */
	const cJSON *ver = first_string(meta, d, doc, "version");
	if (ver)
		dg_set_detail_once(c, "dcgm_version", dg_json_str(ver->valuestring, strlen(ver->valuestring)));
	const cJSON *drv = first_string(meta, doc, d, "Driver Version Detected");
	if (drv)
		dg_set_detail_once(c, "driver_version", dg_json_str(drv->valuestring, strlen(drv->valuestring)));
	read_json_entities(c, doc);
	const cJSON *rt = ng_json_get(d, "runtime_error");
	if (!rt)
		rt = ng_json_get(doc, "runtime_error");
	if (cJSON_IsString(rt)) {
		c->runtime_error = true;
		dg_append(dg_child_array(c->detail, "runtime_errors"), dg_json_str(rt->valuestring, strlen(rt->valuestring)));
	}
	read_json_categories(c, ng_json_get(d, "test_categories"));
}

static bool is_dcgm_doc(const cJSON *v)
{
	return cJSON_IsObject(ng_json_get(v, "DCGM Diagnostic")) ||
	       cJSON_IsObject(ng_json_get(v, "DCGM GPU Diagnostic")) ||
	       cJSON_IsArray(ng_json_get(v, "iterations"));
}

/* dcgmi diag -j --iterations N prints {"iterations": [doc, ...],
 * "Overall Result": ..., "warning": ...}; each doc is one run. */
void dg_read_json(struct dcgm *c, const cJSON *doc)
{
	const cJSON *its = ng_json_get(doc, "iterations");
	if (!cJSON_IsArray(its)) {
		read_json_doc(c, doc);
		return;
	}
	int n = 0;
	for (const cJSON *it = its->child; it; it = it->next, n++)
		read_json_doc(c, it);
	ng_json_set(c->detail, "iterations", cJSON_CreateNumber(n));
	const cJSON *overall = ng_json_get(doc, "Overall Result");
	if (overall)
		ng_json_set(c->detail, "overall_result", dg_copy_clean(overall, 0));
	const cJSON *w = ng_json_get(doc, "warning");
	if (cJSON_IsString(w))
		dg_append(dg_child_array(c->detail, "runtime_errors"), dg_json_str(w->valuestring, strlen(w->valuestring)));
}

/* One past the bracket that closes the JSON value opening at text[i], or 0
 * when the input ends first (a truncated capture). */
static size_t json_end(const char *text, size_t len, size_t i)
{
	size_t depth = 0;
	bool in_str = false;
	for (; i < len; i++) {
		char ch = text[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if ((ch == '}' || ch == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* Whether the object opening at s is dcgmi's: one of its keys, quoted,
 * near the brace. ("DCGM Version" in a text table is not quoted.) */
static bool looks_dcgm(const char *s, size_t n)
{
	ng_span sp = {s, n > 512 ? 512 : n};
	return ng_span_contains(sp, "\"DCGM") || ng_span_contains(sp, "\"test_categories\"") ||
	       ng_span_contains(sp, "\"iterations\"");
}

/* The dcgmi JSON object among the lines: the first line that starts with
 * '{' and opens an object with a DCGM diagnostic inside. Noise lines may
 * come before and after it. F_BROKEN: a DCGM-looking object that is cut off
 * or is not valid JSON (why says which). */
enum found dg_find_json(const char *text, size_t len, cJSON **doc, size_t *start, size_t *end,
                            char *why, size_t why_len)
{
	ng_lines it;
	ng_span line;
	int tries = 0;
	enum found res = F_NONE;
	ng_lines_init(&it, text, len);
	while (tries < MAX_JSON_CANDIDATES && ng_lines_next(&it, &line)) {
		ng_span t = ng_span_trim(line);
		if (!t.len || t.s[0] != '{')
			continue;
		tries++;
		size_t s = (size_t)(t.s - text), e = json_end(text, len, s);
		if (!e) {
			if (!looks_dcgm(text + s, len - s))
				continue;
			/* Everything after an object that never closes is inside
			 * it: a complete iteration there is part of a cut capture. */
			if (res == F_NONE) {
				snprintf(why, why_len, "the dcgmi diag JSON is truncated: its opening brace is never closed");
				*start = s;
			}
			return F_BROKEN;
		}
		char *buf = malloc(e - s + 1);
		if (!buf)
			return res;
		memcpy(buf, text + s, e - s);
		buf[e - s] = '\0';
		ng_err perr = {0};
		cJSON *v = ng_json_parse(buf, e - s, &perr);
		free(buf);
		if (v && is_dcgm_doc(v)) {
			*doc = v;
			*start = s;
			*end = e;
			return F_FOUND;
		}
		if (!v && res == F_NONE && looks_dcgm(text + s, e - s)) {
			snprintf(why, why_len, "the dcgmi diag JSON is invalid: %.300s", perr.msg);
			res = F_BROKEN;
			*start = s;
		}
		cJSON_Delete(v);
		it.p = text + e; /* a foreign object: go on after it */
	}
	return res;
}
