/* dcgmi diag: the -j JSON of DCGM 3.x ("DCGM GPU Diagnostic") and 4.x
 * ("DCGM Diagnostic"), and the boxed text table of both, into one record:
 * metric dcgm.diag, no samples, wrong null (a diagnostic run is not a count
 * of wrong elements), and diag = {test: "pass" | "skip" | "fail"}.
 *
 * Three things are kept apart on purpose. A test absent from the output is
 * absent from diag (DCGM registers no nccl_tests test at all when its binary
 * path is unset); a test that was skipped or not run is "skip"; a test that
 * failed or warned is "fail". A per-GPU test takes the worst of its GPUs
 * (fail > skip > pass). Output that is neither the JSON nor a complete table
 * gets no diag at all, never an empty one that could read as "nothing failed".
 *
 * The exit status decides who is told (detail.outcome and "outcome"): "node"
 * for 205 (isolate) or 226 with a failing test, "harness" for 217, 204, 203,
 * 226 without a failing test, a signal or unreadable output, "clean" for a
 * readable run in which nothing failed. */
#include "parse/parse.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/json.h"
#include "core/record_build.h"
#include "core/strbuf.h"
#include "parse/launcher.h"
#include "parse/text.h"

/* dcgmi wraps warning and info text at this many characters per table row
 * (DATA_INFO_TAG_LEN in dcgmi/Diag.cpp), mid-word. */
#define CHUNK 45
#define MAX_MESSAGES 64        /* foreign lines kept in detail.messages */
#define MAX_MESSAGE_LEN 1024   /* bytes kept of one foreign line */
#define MAX_PROBLEMS 32        /* unreadable parts listed in detail.problems */
#define MAX_JSON_CANDIDATES 16 /* lines starting with '{' tried as the JSON */
#define MAX_GPUS 256
#define MAX_COPY_DEPTH 32

enum rank { R_PASS, R_SKIP, R_FAIL };
static const char *const rank_names[] = {"pass", "skip", "fail"};

/* dcgmErrorSeverity_t and dcgmErrorCategory_t (dcgm_errors.h), for people
 * reading the record: the numbers are kept as printed. */
enum { SEV_ISOLATE = 2, SEV_CONFIG = 5 };
static const char *const severity_names[] = {"NONE", "MONITOR", "ISOLATE", "UNKNOWN",
                                             "TRIAGE", "CONFIG", "RESET"};
static const char *const category_names[] = {
	"NONE", "PERF_THRESHOLD", "PERF_VIOLATION", "SOFTWARE_CONFIG", "SOFTWARE_LIBRARY",
	"SOFTWARE_XID", "SOFTWARE_CUDA", "SOFTWARE_EUD", "SOFTWARE_OTHER", "HARDWARE_THERMAL",
	"HARDWARE_MEMORY", "HARDWARE_NVLINK", "HARDWARE_NVSWITCH", "HARDWARE_PCIE", "HARDWARE_POWER",
	"HARDWARE_OTHER", "INTERNAL_OTHER"};

/* DCGM's display names, in lower_snake_case, to the names the gate's policy
 * uses. Names not listed keep their lower_snake_case form ("PCIe" -> "pcie",
 * "Targeted Stress" -> "targeted_stress", "NCCL Tests" -> "nccl_tests"). */
static const struct {
	const char *from, *to;
} aliases[] = {
	{"gpu_memory", "memory"},
	{"eud_test", "eud"},
	{"cpu_eud_test", "cpu_eud"},
	{"nv_bandwidth", "nvbandwidth"},
	/* DCGM 3.x prints each level-1 software check as its own row; 4.x runs
	 * them all as the one "software" plugin. */
	{"denylist", "software"},
	{"blacklist", "software"},
	{"nvml_library", "software"},
	{"cuda_main_library", "software"},
	{"cuda_toolkit_library", "software"},
	{"cuda_toolkit_libraries", "software"},
	{"cuda_runtime_library", "software"},
	{"permissions_and_os_blocks", "software"},
	{"permissions_and_os_related_blocks", "software"},
	{"persistence_mode", "software"},
	{"environment_variables", "software"},
	{"page_retirement_row_remap", "software"},
	{"graphics_processes", "software"},
	{"inforom", "software"},
};

struct dcgm {
	cJSON *rec, *detail, *tests, *messages, *problems;
	size_t n_messages, n_dropped, n_problems, n_nonblank;
	ng_span first_line; /* the first foreign line, for the reason */
	bool runtime_error;
	long long gpus[MAX_GPUS];
	size_t n_gpus;
};

/* ---------------------------------------------------------------- strings */

/* Length of the valid UTF-8 character at s, or 0 for a NUL byte or bytes
 * that are not UTF-8 (overlong forms and surrogates included). */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	size_t k;
	uint32_t cp, min;
	if ((c & 0xE0) == 0xC0) {
		k = 2, cp = c & 0x1Fu, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		k = 3, cp = c & 0x0Fu, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		k = 4, cp = c & 0x07u, min = 0x10000;
	} else {
		return 0;
	}
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3Fu);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return k;
}

/* The tool's bytes as a C string that is valid UTF-8: a NUL byte or a byte
 * that is not UTF-8 becomes '?', so the record stays valid JSON whatever
 * the tool printed. NULL when out of memory. */
static char *clean_copy(const char *s, size_t n)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_char((const unsigned char *)s + i, n - i);
		if (k == 0) {
			out[o++] = '?';
			i++;
		} else {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		}
	}
	out[o] = '\0';
	return out;
}

static cJSON *json_str(const char *s, size_t n)
{
	char *c = clean_copy(s ? s : "", s ? n : 0);
	if (!c)
		return NULL;
	cJSON *v = cJSON_CreateString(c);
	free(c);
	return v;
}

static cJSON *json_span(ng_span s) { return json_str(s.s, s.len); }

/* Appends item to arr, or frees it when there is no arr (out of memory). */
static void append(cJSON *arr, cJSON *item)
{
	if (!arr || !cJSON_AddItemToArray(arr, item))
		cJSON_Delete(item);
}

static bool span_ieq(ng_span s, const char *lit)
{
	return s.len == strlen(lit) && strncasecmp(s.s, lit, s.len) == 0;
}

static ng_span cspan(const char *s) { return (ng_span){s, strlen(s)}; }

/* A copy of a JSON value with every string made valid UTF-8, nested no
 * deeper than MAX_COPY_DEPTH (deeper values become null). */
static cJSON *copy_clean(const cJSON *v, int depth)
{
	if (depth > MAX_COPY_DEPTH)
		return cJSON_CreateNull();
	if (cJSON_IsString(v))
		return json_str(v->valuestring, strlen(v->valuestring));
	if (cJSON_IsNumber(v))
		return cJSON_CreateNumber(v->valuedouble);
	if (cJSON_IsBool(v))
		return cJSON_CreateBool(cJSON_IsTrue(v));
	if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		cJSON *out = cJSON_IsArray(v) ? cJSON_CreateArray() : cJSON_CreateObject();
		if (!out)
			return NULL;
		for (const cJSON *ch = v->child; ch; ch = ch->next) {
			cJSON *item = copy_clean(ch, depth + 1);
			if (cJSON_IsArray(v)) {
				append(out, item);
			} else {
				char *key = clean_copy(ch->string ? ch->string : "", ch->string ? strlen(ch->string) : 0);
				if (key)
					cJSON_AddItemToObject(out, key, item);
				else
					cJSON_Delete(item);
				free(key);
			}
		}
		return out;
	}
	return cJSON_CreateNull();
}

static cJSON *child_array(cJSON *obj, const char *key)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsArray(a)) {
		a = cJSON_CreateArray();
		ng_json_set(obj, key, a);
		a = cJSON_GetObjectItemCaseSensitive(obj, key);
	}
	return a;
}

static void problem(struct dcgm *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct dcgm *c, const char *fmt, ...)
{
	if (c->n_problems++ >= MAX_PROBLEMS)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	append(c->problems, json_str(buf, strlen(buf)));
}

/* ----------------------------------------------------------- test names */

/* Lower-case letters and digits; every other run of bytes becomes one '_'. */
static void to_snake(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	bool gap = false;
	for (size_t i = 0; i < n && o + 2 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x80 && isalnum(ch)) {
			if (gap && o > 0)
				out[o++] = '_';
			out[o++] = (char)tolower(ch);
			gap = false;
		} else {
			gap = true;
		}
	}
	out[o] = '\0';
}

static const char *canonical_name(const char *snake, const char *category)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcmp(snake, aliases[i].from) == 0)
			return aliases[i].to;
	/* A software check this table does not know yet is still a software
	 * check: the Deployment category holds nothing else. */
	if (category && strcasecmp(category, "Deployment") == 0)
		return "software";
	return snake;
}

/* ------------------------------------------------------------- statuses */

/* DCGM prints Pass, Skip, Warn and Fail (4.x text prints "" for a test that
 * did not run). A warning is a failure. Anything else is not a pass either:
 * it reads as skip, and *known says the status was not one DCGM prints. */
static enum rank map_status(ng_span raw, bool *known)
{
	ng_span s = ng_span_trim(raw);
	*known = true;
	if (span_ieq(s, "pass"))
		return R_PASS;
	if (span_ieq(s, "fail") || span_ieq(s, "failed") || span_ieq(s, "warn") ||
	    span_ieq(s, "warning"))
		return R_FAIL;
	if (s.len == 0 || span_ieq(s, "skip") || span_ieq(s, "skipped") || span_ieq(s, "not run") ||
	    span_ieq(s, "notrun") || span_ieq(s, "not_run"))
		return R_SKIP;
	*known = false;
	return R_SKIP;
}

static int rank_of(const cJSON *status)
{
	if (!cJSON_IsString(status))
		return -1;
	for (int r = R_PASS; r <= R_FAIL; r++)
		if (strcmp(status->valuestring, rank_names[r]) == 0)
			return r;
	return -1;
}

static const char *label_of(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : "?";
}

/* Sets obj's "status" (worst of what it had and raw) and keeps the status
 * as DCGM printed it in "dcgm_status". */
static void set_status(struct dcgm *c, cJSON *test, cJSON *obj, ng_span raw)
{
	if (!obj)
		return;
	bool known;
	enum rank r = map_status(raw, &known);
	if (!known)
		problem(c, "test %s: status \"%.*s\" is not one DCGM prints; read as skip",
		        label_of(test, "display_name"), (int)(raw.len > 64 ? 64 : raw.len), raw.s);
	int prev = rank_of(ng_json_get(obj, "status"));
	if (prev > (int)r)
		return;
	ng_json_set(obj, "dcgm_status", json_span(ng_span_trim(raw)));
	ng_json_set(obj, "status", cJSON_CreateString(rank_names[r]));
}

/* ---------------------------------------------------------------- tests */

static cJSON *test_new(struct dcgm *c, ng_span display, const char *category)
{
	char snake[64];
	display = ng_span_trim(display);
	to_snake(display.s, display.len, snake, sizeof snake);
	if (!snake[0]) {
		problem(c, "a test named \"%.*s\" has no letters or digits; its result is not read",
		        (int)(display.len > 64 ? 64 : display.len), display.s);
		return NULL;
	}
	cJSON *t = cJSON_CreateObject();
	if (!t)
		return NULL;
	if (!c->tests) {
		cJSON_Delete(t);
		return NULL;
	}
	cJSON_AddItemToArray(c->tests, t);
	ng_json_set(t, "name", cJSON_CreateString(canonical_name(snake, category)));
	ng_json_set(t, "display_name", json_span(display));
	if (category)
		ng_json_set(t, "category", json_str(category, strlen(category)));
	return t;
}

static void note_gpu(struct dcgm *c, long long id)
{
	for (size_t i = 0; i < c->n_gpus; i++)
		if (c->gpus[i] == id)
			return;
	if (c->n_gpus < MAX_GPUS)
		c->gpus[c->n_gpus++] = id;
}

/* The entity (GPU0, CPU3) of a test, created on first use. id < 0: none. */
static cJSON *test_entity(struct dcgm *c, cJSON *test, ng_span group, long long id, ng_span raw_label)
{
	if (!test)
		return NULL;
	char label[80];
	if (id >= 0)
		snprintf(label, sizeof label, "%.*s%lld", (int)(group.len > 16 ? 16 : group.len), group.s, id);
	else
		snprintf(label, sizeof label, "%.*s", (int)(raw_label.len > 64 ? 64 : raw_label.len), raw_label.s);
	char *clean = clean_copy(label, strlen(label));
	if (!clean)
		return NULL;
	cJSON *ents = child_array(test, "entities");
	for (cJSON *e = ents ? ents->child : NULL; e; e = e->next)
		if (strcmp(label_of(e, "entity"), clean) == 0) {
			free(clean);
			return e;
		}
	cJSON *e = cJSON_CreateObject();
	if (e) {
		append(ents, e);
		e = ents ? e : NULL;
		ng_json_set(e, "entity", cJSON_CreateString(clean));
		if (group.len)
			ng_json_set(e, "entity_group", json_span(group));
		if (id >= 0)
			ng_json_set(e, "entity_id", cJSON_CreateNumber((double)id));
	}
	if (id >= 0 && span_ieq(group, "GPU"))
		note_gpu(c, id);
	free(clean);
	return e;
}

static bool has_warning_text(const cJSON *obj, const char *text)
{
	const cJSON *ws = ng_json_get(obj, "warnings");
	for (const cJSON *w = cJSON_IsArray(ws) ? ws->child : NULL; w; w = w->next) {
		const cJSON *t = ng_json_get(w, "text");
		if (cJSON_IsString(t) && strcmp(t->valuestring, text) == 0)
			return true;
	}
	return false;
}

/* Whether any entity of test already carries this warning: DCGM 4.5 copies
 * every entity's warnings into test_summary.warnings. */
static bool entity_has_warning(const cJSON *test, const char *text)
{
	const cJSON *ents = ng_json_get(test, "entities");
	for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next)
		if (has_warning_text(e, text))
			return true;
	return false;
}

static void add_warning_text(cJSON *target, ng_span text)
{
	if (!target)
		return;
	cJSON *o = cJSON_CreateObject();
	ng_json_set(o, "text", json_span(text));
	append(child_array(target, "warnings"), o);
}

static void add_info_text(cJSON *target, ng_span text)
{
	if (target)
		append(child_array(target, "info"), json_span(text));
}

/* ----------------------------------------------------------------- JSON */

static void copy_code(cJSON *o, const cJSON *w, const char *key, const char *name_key,
                      const char *const *names, size_t n_names)
{
	const cJSON *v = ng_json_get(w, key);
	if (!v)
		return;
	ng_json_set(o, key, copy_clean(v, 0));
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
	if (dedupe_test && cJSON_IsString(text) && entity_has_warning(dedupe_test, text->valuestring))
		return;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return;
	if (cJSON_IsString(text))
		ng_json_set(o, "text", json_str(text->valuestring, strlen(text->valuestring)));
	if (cJSON_IsObject(w)) {
		copy_code(o, w, "error_id", "error_id", NULL, 0);
		copy_code(o, w, "error_category", "category_name", category_names,
		          sizeof category_names / sizeof category_names[0]);
		copy_code(o, w, "error_severity", "severity_name", severity_names,
		          sizeof severity_names / sizeof severity_names[0]);
	}
	append(child_array(target, "warnings"), o);
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
		add_info_text(target, cspan(v->valuestring));
	} else if (cJSON_IsArray(v)) {
		for (const cJSON *i = v->child; i; i = i->next)
			if (cJSON_IsString(i))
				add_info_text(target, cspan(i->valuestring));
	}
}

static bool json_integer(const cJSON *v, long long *out)
{
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 &&
	    v->valuedouble == (double)(long long)v->valuedouble) {
		*out = (long long)v->valuedouble;
		return true;
	}
	return cJSON_IsString(v) && ng_span_integer(cspan(v->valuestring), out);
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
		return test_entity(c, test, cJSON_IsString(grp) ? cspan(grp->valuestring) : cspan("GPU"), id,
		                   (ng_span){0});
	static const char *const keys[][2] = {{"gpu_id", "GPU"}, {"gpu_ids", "GPU"}, {"cpu_id", "CPU"}};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		const cJSON *v = ng_json_get(r, keys[k][0]);
		if (!v)
			continue;
		if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 1)
			v = v->child;
		if (json_integer(v, &id))
			return test_entity(c, test, cspan(keys[k][1]), id, (ng_span){0});
		char *txt = cJSON_PrintUnformatted(v);
		char raw[96];
		snprintf(raw, sizeof raw, "%s%s", keys[k][1], txt ? txt : "?");
		free(txt);
		return test_entity(c, test, cspan(keys[k][1]), -1, cspan(raw));
	}
	return NULL;
}

static void read_json_result(struct dcgm *c, cJSON *test, const cJSON *r)
{
	if (!cJSON_IsObject(r)) {
		problem(c, "test %s: a result that is not an object", label_of(test, "display_name"));
		return;
	}
	cJSON *ent = json_result_entity(c, test, r);
	cJSON *target = ent ? ent : test;
	const cJSON *st = ng_json_get(r, "status");
	if (cJSON_IsString(st))
		set_status(c, test, target, cspan(st->valuestring));
	else
		problem(c, "test %s: a result without a status string", label_of(test, "display_name"));
	add_json_warnings(target, ng_json_get(r, "warnings"), NULL);
	add_json_info(target, ng_json_get(r, "info"));
}

static void read_json_test(struct dcgm *c, const cJSON *t, const char *category)
{
	const cJSON *name = ng_json_get(t, "name");
	if (!cJSON_IsString(name)) {
		problem(c, "a test in category %s has no name; its result is not read",
		        category ? category : "(none)");
		return;
	}
	cJSON *test = test_new(c, cspan(name->valuestring), category);
	if (!test)
		return;
	const cJSON *st = ng_json_get(t, "status");
	if (cJSON_IsString(st))
		set_status(c, test, test, cspan(st->valuestring));
	const cJSON *results = ng_json_get(t, "results");
	if (cJSON_IsArray(results)) {
		for (const cJSON *r = results->child; r; r = r->next)
			read_json_result(c, test, r);
	} else if (results) {
		problem(c, "test %s: \"results\" is not a list", label_of(test, "display_name"));
	}
	const cJSON *sum = ng_json_get(t, "test_summary");
	if (cJSON_IsObject(sum)) {
		const cJSON *ss = ng_json_get(sum, "status");
		if (cJSON_IsString(ss))
			set_status(c, test, test, cspan(ss->valuestring));
		add_json_warnings(test, ng_json_get(sum, "warnings"), test);
		add_json_info(test, ng_json_get(sum, "info"));
	}
}

static void read_json_categories(struct dcgm *c, const cJSON *cats)
{
	if (!cats)
		return;
	if (!cJSON_IsArray(cats)) {
		problem(c, "\"test_categories\" is not a list");
		return;
	}
	for (const cJSON *cat = cats->child; cat; cat = cat->next) {
		const cJSON *name = ng_json_get(cat, "category");
		const char *category = cJSON_IsString(name) ? name->valuestring : NULL;
		const cJSON *tests = ng_json_get(cat, "tests");
		if (!cJSON_IsArray(tests)) {
			/* DCGM never prints a category without tests; a paste that
			 * elided one ({"..."}) did. */
			problem(c, "a test category (%s) without a list of tests", category ? category : "unnamed");
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

static void set_detail_once(struct dcgm *c, const char *key, cJSON *v)
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
		set_detail_once(c, "entity_groups", copy_clean(groups, 0));
		cJSON *ids = cJSON_CreateArray();
		for (const cJSON *g = groups->child; g; g = g->next) {
			const cJSON *name = ng_json_get(g, "entity_group");
			bool gpu = !cJSON_IsString(name) || strcmp(name->valuestring, "GPU") == 0;
			const cJSON *ents = ng_json_get(g, "entities");
			for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; gpu && e; e = e->next) {
				long long id;
				if (json_integer(ng_json_get(e, "entity_id"), &id))
					note_gpu(c, id);
				const cJSON *dev = ng_json_get(e, "device_id");
				if (cJSON_IsString(dev))
					append(ids, json_str(dev->valuestring, strlen(dev->valuestring)));
			}
		}
		if (cJSON_GetArraySize(ids))
			set_detail_once(c, "device_ids", ids);
		else
			cJSON_Delete(ids);
	}
	/* DCGM 3.x: "GPU Device IDs": [...], "GPU Device Serials": {"0": ...}. */
	const cJSON *dev = ng_json_get(doc, "GPU Device IDs");
	if (cJSON_IsArray(dev))
		set_detail_once(c, "device_ids", copy_clean(dev, 0));
	const cJSON *ser = ng_json_get(doc, "GPU Device Serials");
	if (cJSON_IsObject(ser)) {
		set_detail_once(c, "serials", copy_clean(ser, 0));
		for (const cJSON *s = ser->child; s; s = s->next) {
			long long id;
			if (s->string && ng_span_integer(cspan(s->string), &id))
				note_gpu(c, id);
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
		problem(c, "a JSON iteration without a \"DCGM Diagnostic\" object");
		return;
	}
	set_detail_once(c, "json_key", cJSON_CreateString(key));
	const cJSON *meta = ng_json_get(doc, "metadata");
	if (cJSON_IsObject(meta))
		set_detail_once(c, "metadata", copy_clean(meta, 0));
	/* 4.x: metadata.version; 3.x: the version beside the diagnostic object
	 * or inside it, depending on the release. */
	const cJSON *ver = first_string(meta, d, doc, "version");
	if (ver)
		set_detail_once(c, "dcgm_version", json_str(ver->valuestring, strlen(ver->valuestring)));
	const cJSON *drv = first_string(meta, doc, d, "Driver Version Detected");
	if (drv)
		set_detail_once(c, "driver_version", json_str(drv->valuestring, strlen(drv->valuestring)));
	read_json_entities(c, doc);
	const cJSON *rt = ng_json_get(d, "runtime_error");
	if (!rt)
		rt = ng_json_get(doc, "runtime_error");
	if (cJSON_IsString(rt)) {
		c->runtime_error = true;
		append(child_array(c->detail, "runtime_errors"), json_str(rt->valuestring, strlen(rt->valuestring)));
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
static void read_json(struct dcgm *c, const cJSON *doc)
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
		ng_json_set(c->detail, "overall_result", copy_clean(overall, 0));
	const cJSON *w = ng_json_get(doc, "warning");
	if (cJSON_IsString(w))
		append(child_array(c->detail, "runtime_errors"), json_str(w->valuestring, strlen(w->valuestring)));
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

enum found { F_NONE, F_FOUND, F_BROKEN };

/* The dcgmi JSON object among the lines: the first line that starts with
 * '{' and opens an object with a DCGM diagnostic inside. Noise lines may
 * come before and after it. F_BROKEN: a DCGM-looking object that is cut off
 * or is not valid JSON (why says which). */
static enum found find_json(const char *text, size_t len, cJSON **doc, size_t *start, size_t *end,
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
		ng_err perr = {{0}};
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

/* ----------------------------------------------------------- foreign lines */

static int level_of(ng_span v)
{
	long long n;
	if (ng_span_integer(v, &n) && n >= 1 && n <= 4)
		return (int)n;
	static const char *const names[] = {"quick", "short", "medium", "long", "xlong"};
	static const int levels[] = {1, 1, 2, 3, 4};
	for (size_t i = 0; i < 5; i++)
		if (span_ieq(v, names[i]))
			return levels[i];
	return 0;
}

/* A command line echoed into the capture ("$ dcgmi diag -r 3 -j") names the
 * run level or the tests asked for; dcgmi itself never prints them. */
static void scan_run(struct dcgm *c, ng_span t)
{
	if (cJSON_GetObjectItemCaseSensitive(c->detail, "run") || !ng_span_contains(t, "dcgmi"))
		return;
	ng_span f[48];
	size_t n = ng_split_ws(t, f, 48);
	if (n > 48)
		n = 48;
	for (size_t k = 0; k + 1 < n; k++) {
		size_t L = f[k].len;
		if (L < 5 || memcmp(f[k].s + L - 5, "dcgmi", 5) != 0 || !ng_span_eq(f[k + 1], "diag"))
			continue;
		for (size_t i = k + 2; i < n; i++) {
			ng_span v = {0};
			if ((ng_span_eq(f[i], "-r") || ng_span_eq(f[i], "--run")) && i + 1 < n)
				v = f[i + 1];
			else if (ng_span_starts_with(f[i], "--run="))
				v = ng_span_skip(f[i], 6);
			else if (ng_span_starts_with(f[i], "-r") && f[i].len > 2)
				v = ng_span_skip(f[i], 2);
			if (!v.len)
				continue;
			ng_json_set(c->detail, "run", json_span(v));
			int lvl = level_of(v);
			if (lvl)
				ng_json_set(c->detail, "run_level", cJSON_CreateNumber(lvl));
			return;
		}
	}
}

static void add_message(struct dcgm *c, ng_span t)
{
	if (!t.len)
		return;
	if (!c->first_line.s)
		c->first_line = t;
	scan_run(c, t);
	if (c->n_messages >= MAX_MESSAGES) {
		c->n_dropped++;
		return;
	}
	c->n_messages++;
	append(c->messages, json_str(t.s, t.len > MAX_MESSAGE_LEN ? MAX_MESSAGE_LEN : t.len));
}

/* ---------------------------------------------------------------- text */

struct table {
	int tables;       /* tables begun */
	int closed;       /* tables that reached their closing border */
	bool in, content; /* inside a table; saw its header or a section */
	char section[32];
	bool meta; /* in the Metadata section */
	cJSON *test;
	/* the warning or info being put back together from 45-character rows */
	bool msg_open, msg_warning;
	cJSON *msg_target;
	ng_strbuf msg;
	size_t msg_chunk; /* where the last row's text starts in msg */
};

static void msg_flush(struct dcgm *c, struct table *tb)
{
	if (!tb->msg_open)
		return;
	tb->msg_open = false;
	ng_span text = {tb->msg.s ? tb->msg.s : "", tb->msg.len};
	text = ng_span_trim(text);
	if (!tb->msg_target)
		add_message(c, text);
	else if (tb->msg_warning)
		add_warning_text(tb->msg_target, text);
	else
		add_info_text(tb->msg_target, text);
	ng_strbuf_reset(&tb->msg);
}

static void msg_start(struct table *tb, cJSON *target, bool warning, ng_span first)
{
	tb->msg_open = true;
	tb->msg_warning = warning;
	tb->msg_target = target;
	ng_strbuf_reset(&tb->msg);
	tb->msg_chunk = 0;
	first = ng_span_trim(first);
	ng_strbuf_add(&tb->msg, first.s, first.len);
}

/* A row that continues the message: the previous row held exactly CHUNK
 * characters, so whatever spaces it ended with were part of the message
 * and were lost only to the table's padding. */
static void msg_continue(struct table *tb, ng_span cell)
{
	while (tb->msg.len - tb->msg_chunk < CHUNK && !tb->msg.oom)
		ng_strbuf_addc(&tb->msg, ' ');
	tb->msg_chunk = tb->msg.len;
	if (cell.len && cell.s[0] == ' ')
		cell = ng_span_skip(cell, 1); /* the cell's own left margin */
	while (cell.len && (cell.s[cell.len - 1] == ' ' || cell.s[cell.len - 1] == '\t'))
		cell.len--;
	ng_strbuf_add(&tb->msg, cell.s, cell.len);
}

/* "+-----+-----+" and "+=====+=====+". */
static bool is_border(ng_span t)
{
	if (t.len < 3 || t.s[0] != '+' || t.s[t.len - 1] != '+')
		return false;
	for (size_t i = 0; i < t.len; i++)
		if (!strchr("+-=", t.s[i]))
			return false;
	return true;
}

/* "|-----  Metadata  ----------+----...|" (or with '+' ends). */
static bool section_row(ng_span t, ng_span *name)
{
	if (t.len < 8 || (t.s[0] != '|' && t.s[0] != '+'))
		return false;
	ng_span r = ng_span_skip(t, 1);
	if (!ng_span_starts_with(r, "-----"))
		return false;
	while (r.len && r.s[0] == '-')
		r = ng_span_skip(r, 1);
	r = ng_span_trim(r);
	if (!r.len || !isalpha((unsigned char)r.s[0]))
		return false; /* the closing border "+-----+-----+" */
	size_t n = 0;
	while (n < r.len && r.s[n] != '-' && !(r.s[n] == ' ' && n + 1 < r.len && r.s[n + 1] == ' '))
		n++;
	if (n == 0 || n == r.len)
		return false;
	*name = ng_span_trim((ng_span){r.s, n});
	return name->len > 0;
}

/* "| name | cell |": name between the first two bars, the cell (untrimmed)
 * between the second and the last. */
static bool data_row(ng_span t, ng_span *name, ng_span *cell)
{
	if (t.len < 3 || t.s[0] != '|' || t.s[t.len - 1] != '|')
		return false;
	const char *bar = memchr(t.s + 1, '|', t.len - 1);
	if (!bar || bar == t.s + t.len - 1)
		return false;
	*name = ng_span_trim((ng_span){t.s + 1, (size_t)(bar - t.s - 1)});
	*cell = (ng_span){bar + 1, (size_t)(t.s + t.len - 1 - (bar + 1))};
	if (cell->len && cell->s[cell->len - 1] == ' ')
		cell->len--;
	return true;
}

/* "GPU0: Pass" (4.x): an entity's result under its test's row. */
static bool entity_cell(ng_span cell, ng_span *group, long long *id, ng_span *status)
{
	size_t i = 0, j;
	while (i < cell.len && isalpha((unsigned char)cell.s[i]))
		i++;
	if (i == 0 || i > 16)
		return false;
	for (j = i; j < cell.len && isdigit((unsigned char)cell.s[j]); j++)
		;
	if (j == i || j >= cell.len || cell.s[j] != ':' || !ng_span_integer((ng_span){cell.s + i, j - i}, id))
		return false;
	*group = (ng_span){cell.s, i};
	*status = ng_span_trim(ng_span_skip(cell, j + 1));
	return true;
}

/* "Pass - All", "Fail - GPU: 4", "Pass - GPUs: 0, 1, 2" (3.x). */
static bool list_cell(ng_span cell, ng_span *word, ng_span *ids, bool *all)
{
	const char *dash = cell.len >= 3 ? memmem(cell.s, cell.len, " - ", 3) : NULL;
	if (!dash)
		return false;
	*word = ng_span_trim((ng_span){cell.s, (size_t)(dash - cell.s)});
	ng_span rest = ng_span_trim(ng_span_skip(cell, (size_t)(dash - cell.s) + 3));
	*all = span_ieq(rest, "All");
	if (*all)
		return true;
	if (ng_span_starts_with(rest, "GPUs:"))
		*ids = ng_span_trim(ng_span_skip(rest, 5));
	else if (ng_span_starts_with(rest, "GPU:"))
		*ids = ng_span_trim(ng_span_skip(rest, 4));
	else
		return false;
	return true;
}

static void list_statuses(struct dcgm *c, cJSON *test, ng_span word, ng_span ids)
{
	while (ids.len) {
		const char *comma = memchr(ids.s, ',', ids.len);
		size_t n = comma ? (size_t)(comma - ids.s) : ids.len;
		ng_span one = ng_span_trim((ng_span){ids.s, n});
		long long id;
		if (ng_span_integer(one, &id))
			set_status(c, test, test_entity(c, test, cspan("GPU"), id, (ng_span){0}), word);
		else if (one.len)
			problem(c, "test %s: \"%.*s\" is not a GPU id", label_of(test, "display_name"),
			        (int)(one.len > 32 ? 32 : one.len), one.s);
		ids = comma ? ng_span_skip(ids, n + 1) : (ng_span){ids.s + ids.len, 0};
	}
}

static bool known_word(ng_span w)
{
	bool known;
	map_status(w, &known);
	return known;
}

static const char *const meta_names[] = {
	"DCGM Version",     "Driver Version Detected", "GPU Device IDs Detected", "CPU Device IDs Detected",
	"Number of CPUs Detected", "EUD Test Version", "CPU EUD Test Version"};

static bool is_meta_name(ng_span name)
{
	for (size_t i = 0; i < sizeof meta_names / sizeof meta_names[0]; i++)
		if (ng_span_eq(name, meta_names[i]))
			return true;
	return false;
}

static void text_metadata(struct dcgm *c, ng_span name, ng_span value)
{
	if (!name.len)
		return;
	char *key = clean_copy(name.s, name.len);
	if (!key)
		return;
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(c->detail, "metadata");
	if (!cJSON_IsObject(meta)) {
		meta = cJSON_CreateObject();
		ng_json_set(c->detail, "metadata", meta);
	}
	if (!cJSON_GetObjectItemCaseSensitive(meta, key))
		ng_json_set(meta, key, json_span(value));
	free(key);
	if (ng_span_eq(name, "DCGM Version") && value.len)
		set_detail_once(c, "dcgm_version", json_span(value));
	else if (ng_span_eq(name, "Driver Version Detected") && value.len)
		set_detail_once(c, "driver_version", json_span(value));
	else if (ng_span_eq(name, "GPU Device IDs Detected")) {
		/* "20b2,20b2" in 3.x, "26b9, 26b9" in 4.x */
		cJSON *ids = cJSON_CreateArray();
		while (value.len) {
			const char *comma = memchr(value.s, ',', value.len);
			size_t n = comma ? (size_t)(comma - value.s) : value.len;
			ng_span one = ng_span_trim((ng_span){value.s, n});
			if (one.len)
				append(ids, json_span(one));
			value = comma ? ng_span_skip(value, n + 1) : (ng_span){value.s + value.len, 0};
		}
		set_detail_once(c, "device_ids", ids);
	}
}

/* "Warning", "Info", "Error" (3.x software checks), or "Warning: GPU0". */
static bool message_name(ng_span name, bool *warning, ng_span *entity)
{
	static const struct {
		const char *word;
		bool warning;
	} kinds[] = {{"Warning", true}, {"Error", true}, {"Info", false}};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(kinds[i].word);
		if (!ng_span_starts_with(name, kinds[i].word))
			continue;
		*warning = kinds[i].warning;
		if (name.len == n) {
			*entity = (ng_span){0};
			return true;
		}
		if (name.s[n] == ':') {
			*entity = ng_span_trim(ng_span_skip(name, n + 1));
			return true;
		}
	}
	return false;
}

static void text_test_row(struct dcgm *c, struct table *tb, ng_span name, ng_span cell)
{
	tb->test = test_new(c, name, tb->section[0] ? tb->section : NULL);
	if (!tb->test)
		return;
	ng_span word, ids = {0};
	bool all;
	if (list_cell(cell, &word, &ids, &all)) {
		if (all)
			set_status(c, tb->test, tb->test, word);
		else
			list_statuses(c, tb->test, word, ids);
		ng_json_set(tb->test, "dcgm_status", json_span(cell));
	} else {
		set_status(c, tb->test, tb->test, cell);
	}
}

static void text_message_row(struct dcgm *c, struct table *tb, bool warning, ng_span entity, ng_span cell)
{
	cJSON *target = tb->test;
	if (tb->test && entity.len) {
		/* "Warning: GPU1": letters, then the entity's number */
		size_t i = 0;
		long long id;
		while (i < entity.len && isalpha((unsigned char)entity.s[i]))
			i++;
		if (i > 0 && i <= 16 && ng_span_integer(ng_span_skip(entity, i), &id))
			target = test_entity(c, tb->test, (ng_span){entity.s, i}, id, (ng_span){0});
		else
			target = test_entity(c, tb->test, (ng_span){0}, -1, entity);
	}
	msg_start(tb, target, warning, cell);
}

/* A row with an empty name under a test: an entity's result, more GPUs of a
 * 3.x result, or the next 45 characters of a wrapped message. */
static void text_continuation(struct dcgm *c, struct table *tb, ng_span cell)
{
	ng_span t = ng_span_trim(cell), group, status, word, ids = {0};
	long long id;
	bool all;
	if (!t.len)
		return;
	if (entity_cell(t, &group, &id, &status) && (known_word(status) || !tb->msg_open)) {
		msg_flush(c, tb);
		set_status(c, tb->test, test_entity(c, tb->test, group, id, (ng_span){0}), status);
	} else if (list_cell(t, &word, &ids, &all) && known_word(word)) {
		msg_flush(c, tb);
		if (all)
			set_status(c, tb->test, tb->test, word);
		else
			list_statuses(c, tb->test, word, ids);
	} else if (tb->msg_open && !ng_span_starts_with(t, "Code: (")) {
		msg_continue(tb, cell);
	} else {
		/* "  Code: (000000000012)" under a 3.x Diagnostic warning, or a
		 * line the table does not explain: kept with the test. */
		msg_flush(c, tb);
		if (tb->test)
			add_info_text(tb->test, t);
		else
			add_message(c, t);
	}
}

static void text_row(struct dcgm *c, struct table *tb, ng_span name, ng_span cell)
{
	bool warning;
	ng_span entity;
	if (ng_span_eq(name, "Diagnostic") && ng_span_eq(ng_span_trim(cell), "Result"))
		return;
	if (tb->meta || (!tb->test && is_meta_name(name))) {
		msg_flush(c, tb);
		text_metadata(c, name, ng_span_trim(cell));
	} else if (!name.len) {
		text_continuation(c, tb, cell);
	} else if (message_name(name, &warning, &entity)) {
		msg_flush(c, tb);
		text_message_row(c, tb, warning, entity, cell);
	} else {
		msg_flush(c, tb);
		text_test_row(c, tb, name, ng_span_trim(cell));
	}
}

static void text_section(struct dcgm *c, struct table *tb, ng_span name)
{
	msg_flush(c, tb);
	tb->content = true;
	tb->test = NULL;
	tb->meta = ng_span_eq(name, "Metadata");
	snprintf(tb->section, sizeof tb->section, "%.*s", (int)(name.len > 31 ? 31 : name.len), name.s);
	for (char *p = tb->section; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x80)
			*p = '?';
}

static void text_line(struct dcgm *c, struct table *tb, ng_span line)
{
	ng_span t = ng_span_trim(line), name, cell;
	bool sec = section_row(t, &name);
	bool row = !sec && data_row(t, &name, &cell);
	bool header = row && ng_span_eq(name, "Diagnostic") && ng_span_eq(ng_span_trim(cell), "Result");
	if (!tb->in) {
		if (!header && !sec) {
			if (!is_border(t))
				add_message(c, t);
			return;
		}
		*tb = (struct table){.tables = tb->tables + 1, .closed = tb->closed, .in = true, .msg = tb->msg};
	}
	if (header) {
		tb->content = true;
	} else if (sec) {
		text_section(c, tb, name);
	} else if (is_border(t)) {
		/* The "+====+" under the header, or the closing border. */
		if (tb->content && !memchr(t.s, '=', t.len)) {
			msg_flush(c, tb);
			tb->in = false;
			tb->closed++;
		}
	} else if (row) {
		text_row(c, tb, name, cell);
	} else {
		msg_flush(c, tb);
		add_message(c, t);
	}
}

/* Returns how many tables began; *closed how many of them ended. */
static int read_text(struct dcgm *c, const char *text, size_t len, int *closed)
{
	struct table tb = {0};
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, text, len);
	while (ng_lines_next(&it, &line))
		text_line(c, &tb, line);
	msg_flush(c, &tb);
	ng_strbuf_free(&tb.msg);
	*closed = tb.closed;
	if (tb.tables > 1)
		ng_json_set(c->detail, "tables", cJSON_CreateNumber(tb.tables));
	return tb.tables;
}

/* ----------------------------------------------------------- summarising */

struct summary {
	cJSON *map; /* test name -> worst status */
	int n_tests, n_fail;
	int n_harness;    /* Fail results that are DCGM's own fault */
	bool isolate;     /* a failing result carries severity ISOLATE */
	bool config_only; /* every failure is the node's configuration */
	bool config_coded; /* ... and DCGM coded every one severity CONFIG */
	const char *config_what; /* the configuration a failure names, or NULL */
	ng_strbuf failed, skipped, passed, harness;
};

/* DCGM's words for a fault of its own harness, not of the GPU: DCGM's
 * documentation and the runbook warn these come from host software,
 * permissions and other processes on the node. */
static bool harness_words(const char *t)
{
	return strstr(t, "There was an internal error during the test") || strstr(t, "internal error") ||
	       strstr(t, "couldn't be parsed") || strstr(t, "could not be parsed") ||
	       (strstr(t, "child process") && strstr(t, "exited with non-zero status"));
}

/* The node-side configuration a failure names (not its hardware), or NULL. */
static const char *config_words(const char *t)
{
	if (strcasestr(t, "persistence mode") &&
	    (strcasestr(t, "disabled") || strcasestr(t, "not enabled") || strcasestr(t, " off")))
		return "persistence mode is off";
	if (strcasestr(t, "fabric manager") || strcasestr(t, "fabricmanager"))
		return "the fabric manager is not running";
	if (strstr(t, "cuInit"))
		return "cuInit fails (on NVSwitch systems, the fabric manager is not running)";
	return NULL;
}

/* The first warning of obj whose text matches, or NULL. */
static const char *warning_matching(const cJSON *obj, bool harness, const char **what)
{
	const cJSON *ws = ng_json_get(obj, "warnings");
	for (const cJSON *w = cJSON_IsArray(ws) ? ws->child : NULL; w; w = w->next) {
		const cJSON *t = ng_json_get(w, "text");
		if (!cJSON_IsString(t))
			continue;
		if (harness && harness_words(t->valuestring))
			return t->valuestring;
		if (!harness && (*what = config_words(t->valuestring)))
			return t->valuestring;
	}
	return NULL;
}

/* How one Fail result reads: DCGM's own fault, the node's configuration,
 * or neither (a failure of the GPU). */
enum fault { FAULT_NONE, FAULT_GPU, FAULT_HARNESS, FAULT_CONFIG };

static void note_harness(struct summary *s, const cJSON *test, const char *h)
{
	const char *name = label_of(test, "name");
	if (s->n_harness++ && s->harness.s && strstr(s->harness.s, name))
		return;
	if (s->harness.len)
		ng_strbuf_adds(&s->harness, ", ");
	ng_strbuf_printf(&s->harness, "%s (\"%.120s\")", name, h);
}

/* A Fail whose words are DCGM's internal error did not test the GPU: it
 * becomes skip (not completed), keeping DCGM's status and words beside it.
 * A Fail naming a configuration stays fail and is given its cause. inherit
 * is how the result's own entities read, for a test-wide Fail with no words
 * of its own. */
static enum fault classify_one(cJSON *obj, const cJSON *test, struct summary *s, enum fault inherit)
{
	if (rank_of(ng_json_get(obj, "status")) != R_FAIL)
		return FAULT_NONE;
	const char *what = NULL;
	const char *h = warning_matching(obj, true, &what);
	const char *cfg = h ? NULL : warning_matching(obj, false, &what);
	bool own_words = cJSON_GetArraySize(ng_json_get(obj, "warnings")) > 0;
	enum fault f = h ? FAULT_HARNESS : cfg ? FAULT_CONFIG : own_words ? FAULT_GPU : inherit;
	if (f == FAULT_HARNESS) {
		ng_json_set(obj, "status", cJSON_CreateString("skip"));
		ng_json_set(obj, "cause", cJSON_CreateString("harness"));
		if (h) {
			ng_json_set(obj, "harness_fault", json_str(h, strlen(h)));
			note_harness(s, test, h);
		}
	} else if (f == FAULT_CONFIG) {
		ng_json_set(obj, "cause", cJSON_CreateString("configuration"));
		if (what && !s->config_what)
			s->config_what = what;
	}
	return f == FAULT_NONE ? FAULT_GPU : f;
}

/* Entities first: a test-wide Fail without words of its own reads as its
 * entities do when they all agree (a GPU's failure whenever one is). */
static void classify_faults(struct dcgm *c, struct summary *s, int *config_fails, int *fails)
{
	for (cJSON *t = c->tests ? c->tests->child : NULL; t; t = t->next) {
		enum fault agreed = FAULT_NONE;
		bool mixed = false;
		cJSON *ents = cJSON_GetObjectItemCaseSensitive(t, "entities");
		for (cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next) {
			enum fault f = classify_one(e, t, s, FAULT_GPU);
			if (f == FAULT_NONE)
				continue;
			if (f == FAULT_GPU || f == FAULT_CONFIG)
				(*fails)++, *config_fails += f == FAULT_CONFIG;
			if (agreed != FAULT_NONE && agreed != f)
				mixed = true;
			agreed = f;
		}
		enum fault f = classify_one(t, t, s, mixed || agreed == FAULT_NONE ? FAULT_GPU : agreed);
		/* A test-wide Fail echoing its entities is not a failure more. */
		if ((f == FAULT_GPU || f == FAULT_CONFIG) && agreed == FAULT_NONE)
			(*fails)++, *config_fails += f == FAULT_CONFIG;
		else if (f == FAULT_GPU && mixed)
			(*fails)++;
	}
}

static int entity_worst(const cJSON *test, int worst)
{
	const cJSON *ents = ng_json_get(test, "entities");
	for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next) {
		int r = rank_of(ng_json_get(e, "status"));
		if (r > worst)
			worst = r;
	}
	return worst;
}

/* Severity facts and the first warning text of one failing test or entity. */
static void scan_failure(const cJSON *obj, struct summary *s, const char **first, int *coded,
                         int *config)
{
	const cJSON *ws = ng_json_get(obj, "warnings");
	for (const cJSON *w = cJSON_IsArray(ws) ? ws->child : NULL; w; w = w->next) {
		const cJSON *t = ng_json_get(w, "text"), *sev = ng_json_get(w, "error_severity");
		if (!*first && cJSON_IsString(t))
			*first = t->valuestring;
		if (cJSON_IsNumber(sev)) {
			(*coded)++;
			if (sev->valuedouble == SEV_ISOLATE)
				s->isolate = true;
			if (sev->valuedouble == SEV_CONFIG)
				(*config)++;
		}
	}
}

static void describe_failure(const cJSON *test, struct summary *s, int *coded, int *config)
{
	const char *first = NULL;
	if (rank_of(ng_json_get(test, "status")) == R_FAIL)
		scan_failure(test, s, &first, coded, config);
	const cJSON *ents = ng_json_get(test, "entities");
	for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next)
		if (rank_of(ng_json_get(e, "status")) == R_FAIL)
			scan_failure(e, s, &first, coded, config);
	if (s->failed.len)
		ng_strbuf_adds(&s->failed, ", ");
	ng_strbuf_adds(&s->failed, label_of(test, "name"));
	const char *disp = label_of(test, "display_name");
	if (first)
		ng_strbuf_printf(&s->failed, " (%s%s%.120s%s)", strcmp(disp, label_of(test, "name")) ? disp : "",
		                 strcmp(disp, label_of(test, "name")) ? ": " : "", first,
		                 strlen(first) > 120 ? "..." : "");
}

/* Gives every test its worst status and merges them by name into s->map
 * (the diag the record gets when the run may be judged on it). */
static void summarise(struct dcgm *c, struct summary *s)
{
	int coded = 0, config = 0, config_fails = 0, fails = 0;
	classify_faults(c, s, &config_fails, &fails);
	s->map = cJSON_CreateObject();
	for (cJSON *t = c->tests ? c->tests->child : NULL; t; t = t->next) {
		int worst = entity_worst(t, rank_of(ng_json_get(t, "status")));
		if (worst < 0) {
			problem(c, "test %s: no status was printed for it; read as skip", label_of(t, "display_name"));
			worst = R_SKIP;
		}
		ng_json_set(t, "status", cJSON_CreateString(rank_names[worst]));
		s->n_tests++;
		if (worst == R_FAIL)
			describe_failure(t, s, &coded, &config);
		const char *name = label_of(t, "name");
		if (rank_of(ng_json_get(s->map, name)) < worst)
			ng_json_set(s->map, name, cJSON_CreateString(rank_names[worst]));
	}
	s->config_coded = coded > 0 && coded == config;
	s->config_only = s->config_coded || (fails > 0 && fails == config_fails);
	if (s->config_only)
		ng_json_set(c->detail, "cause", cJSON_CreateString("configuration"));
	else
		s->config_what = NULL;
	for (const cJSON *d = s->map ? s->map->child : NULL; d; d = d->next) {
		int r = rank_of(d);
		if (r == R_FAIL)
			s->n_fail++;
		ng_strbuf *b = r == R_PASS ? &s->passed : r == R_SKIP ? &s->skipped : NULL;
		if (b) {
			if (b->len)
				ng_strbuf_adds(b, ", ");
			ng_strbuf_adds(b, d->string);
		}
	}
}

/* Whether the gate may read the parsed results as this run's diag. Not when
 * the exit status voids them (a signal, 203, 204, 217, 226 without a failing
 * test, any other error) nor when it contradicts passes (205 with nothing
 * failed): a diag of passes there would let the gate pass the node, while
 * no diag holds it as diag-incomplete. */
static bool diag_allowed(ng_run_status st, const struct summary *s)
{
	int x = st.exit_status;
	if (st.signal > 0)
		return false;
	/* DCGM's own fault explains a 226: the diag then says which tests did
	 * not complete. */
	return x <= 0 || ((x == 205 || x == 226) && s->n_fail > 0) || (x == 226 && s->n_harness > 0);
}

/* "; DCGM's own harness failed in ...": the tests counted as not completed. */
static void harness_note(const struct summary *s, ng_strbuf *b, bool lead)
{
	if (!s->n_harness)
		return;
	ng_strbuf_printf(b, "%sDCGM's own harness failed in %s, so %s not completed, not failed; fix the "
	                    "harness (host software, permissions, other processes on the GPUs: run it with the "
	                    "node to itself) and rerun",
	                 lead ? "" : "; ", s->harness.s, s->n_harness > 1 ? "those tests are" : "that test is");
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* ------------------------------------------------------------- outcome */

struct verdict {
	const char *outcome; /* "node", "harness", "clean" */
	ng_strbuf reason;
};

static const char *or_none(const ng_strbuf *b) { return b->len ? b->s : "none"; }

/* The outcome when the exit status says nothing beyond the results (0 or
 * unknown): what the parsed tests show. */
static void from_results(struct dcgm *c, const struct summary *s, bool readable, const char *unreadable,
                         struct verdict *v)
{
	if (!readable) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "%s; fix the harness or DCGM and rerun, the node was not judged",
		                 unreadable);
	} else if (s->n_fail) {
		v->outcome = "node";
		ng_strbuf_printf(&v->reason, "DCGM reported failing tests: %s; route the node to its owner",
		                 s->failed.s);
		if (s->isolate)
			ng_strbuf_adds(&v->reason, " and drain it (DCGM rates a failure ISOLATE)");
		harness_note(s, &v->reason, false);
	} else if (s->n_harness) {
		v->outcome = "harness";
		harness_note(s, &v->reason, true);
	} else if (c->n_problems || c->runtime_error) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason,
		                 "no DCGM test failed, but part of the output could not be read (%s); rerun "
		                 "and capture the complete output before trusting the passes",
		                 c->runtime_error ? "DCGM reported a runtime error" : "see detail.problems");
	} else {
		v->outcome = "clean";
		ng_strbuf_printf(&v->reason, "no DCGM test failed (passed: %s", or_none(&s->passed));
		if (s->skipped.len)
			ng_strbuf_printf(&v->reason, "; skipped: %s, and a skip is not a pass, so rerun "
			                             "those the gate requires)",
			                 s->skipped.s);
		else
			ng_strbuf_adds(&v->reason, ")");
	}
}

static void decide(struct dcgm *c, ng_run_status st, const struct summary *s, bool readable,
                   const char *unreadable, struct verdict *v)
{
	int x = st.exit_status;
	const char *basis = "exit status";
	if (st.signal > 0) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi was killed by signal %d, so nothing it printed is a "
		                             "verdict; rerun it and check for a timeout or an interrupt",
		                 st.signal);
	} else if (x == 205) {
		v->outcome = "node";
		ng_strbuf_adds(&v->reason, "dcgmi exited 205: DCGM reports a condition that requires isolating "
		                           "the GPU; drain the node and hand it to its owner");
		if (s->n_fail)
			ng_strbuf_printf(&v->reason, " (failed: %s)", s->failed.s);
		else if (!readable)
			ng_strbuf_printf(&v->reason, " (%s; keep the raw output as evidence)", unreadable);
	} else if (x == 226 && s->n_fail) {
		v->outcome = "node";
		ng_strbuf_printf(&v->reason, "dcgmi exited 226 and DCGM reported failing tests: %s; route the "
		                             "node to its owner",
		                 s->failed.s);
		if (!readable)
			ng_strbuf_printf(&v->reason, " (%s)", unreadable);
		harness_note(s, &v->reason, false);
	} else if (x == 226 && s->n_harness) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 226: ");
		harness_note(s, &v->reason, true);
	} else if (x == 226) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi exited 226 but no test failed in its output (%s): DCGM "
		                             "returns 226 for harness faults too, such as a failed child wait "
		                             "or a malformed response; check the host engine log and rerun",
		                 readable ? "all results read" : unreadable);
	} else if (x == 217) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 217: another DCGM diagnostic was already running; "
		                           "wait for it to finish and rerun");
	} else if (x == 204) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 204: the NVVS binary was not found; repair the DCGM "
		                           "installation and rerun");
	} else if (x == 203) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 203: the NVVS process was killed; rerun, and check "
		                           "for a timeout, an OOM kill or an interrupt");
	} else if (x > 128 && x <= 128 + 64) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi exited %d (128+%d: killed by signal %d), which describes "
		                             "the process and not the GPUs; rerun it",
		                 x, x - 128, x - 128);
	} else if (x > 0) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi exited %d, which is not a diagnostic result (%s); fix the "
		                             "cause and rerun",
		                 x, readable ? "a DCGM error code" : unreadable);
	} else {
		basis = "results";
		from_results(c, s, readable, unreadable, v);
		if (x == 0 && s->n_fail && readable)
			ng_strbuf_adds(&v->reason, ", although dcgmi exited 0");
	}
	if (!strcmp(v->outcome, "node") && s->config_only && s->config_what)
		ng_strbuf_printf(&v->reason, "; the failure is the node's configuration, not its hardware (%s%s): "
		                             "fix the configuration and rerun",
		                 s->config_what, s->config_coded ? "; DCGM rates it severity CONFIG" : "");
	else if (!strcmp(v->outcome, "node") && s->config_only)
		ng_strbuf_adds(&v->reason, "; DCGM classes every coded failure as a configuration problem "
		                           "(severity CONFIG), so fix the node's configuration, not its hardware");
	if (x < 0 && st.signal <= 0)
		ng_strbuf_adds(&v->reason, " (exit status unknown: outcome derived from the parsed results alone)");
	ng_json_set(c->detail, "outcome_basis", cJSON_CreateString(basis));
}

/* ---------------------------------------------------------------- entry */

static void finish_detail(struct dcgm *c)
{
	if (c->n_gpus) {
		qsort(c->gpus, c->n_gpus, sizeof c->gpus[0], cmp_ll);
		cJSON *g = cJSON_CreateArray();
		for (size_t i = 0; i < c->n_gpus; i++)
			append(g, cJSON_CreateNumber((double)c->gpus[i]));
		ng_json_set(c->detail, "gpus", g);
	}
	if (c->n_dropped)
		ng_json_set(c->detail, "messages_dropped", cJSON_CreateNumber((double)c->n_dropped));
	if (c->n_problems > MAX_PROBLEMS)
		ng_json_set(c->detail, "problems_dropped", cJSON_CreateNumber((double)(c->n_problems - MAX_PROBLEMS)));
	const cJSON *ver = ng_json_get(c->detail, "dcgm_version");
	if (cJSON_IsString(ver))
		ng_json_set(ng_record_tool(c->rec), "version", cJSON_CreateString(ver->valuestring));
}

/* Reads the output into c; returns whether it could be read as a complete
 * result, with why set when it could not. */
static bool read_output(struct dcgm *c, const char *text, size_t len, char *why, size_t why_len)
{
	cJSON *doc = NULL;
	size_t js = 0, je = 0;
	char jwhy[400] = "";
	enum found f = find_json(text, len, &doc, &js, &je, jwhy, sizeof jwhy);
	if (f == F_FOUND) {
		ng_json_set(c->detail, "format", cJSON_CreateString("json"));
		ng_lines it;
		ng_span line;
		ng_lines_init(&it, text, js);
		while (ng_lines_next(&it, &line))
			add_message(c, ng_span_trim(line));
		ng_lines_init(&it, text + je, len - je);
		while (ng_lines_next(&it, &line))
			add_message(c, ng_span_trim(line));
		read_json(c, doc);
		cJSON_Delete(doc);
		if (!cJSON_GetArraySize(c->tests)) {
			snprintf(why, why_len, "%s", c->runtime_error ? "DCGM reported a runtime error instead of results"
			                                               : "the dcgmi diag JSON lists no test results");
			return false;
		}
		return true;
	}
	/* Before a broken DCGM JSON only its preamble is read: the lines of the
	 * JSON itself are not messages, and dcgmi never prints the text table
	 * after -j output. */
	int closed = 0;
	int tables = read_text(c, text, f == F_BROKEN ? js : len, &closed);
	if (f == F_BROKEN && !(tables && closed == tables && cJSON_GetArraySize(c->tests))) {
		ng_json_set(c->detail, "format", cJSON_CreateString("json"));
		snprintf(why, why_len, "%s", jwhy);
		return false;
	}
	if (tables) {
		ng_json_set(c->detail, "format", cJSON_CreateString("text"));
		if (closed < tables) {
			snprintf(why, why_len, "the dcgmi diag result table ends before its closing border, so the "
			                       "output was cut short");
			return false;
		}
		if (!cJSON_GetArraySize(c->tests)) {
			snprintf(why, why_len, "the dcgmi diag result table lists no test results");
			return false;
		}
		return true;
	}
	ng_json_set(c->detail, "format", cJSON_CreateString("none"));
	if (!c->first_line.s) {
		snprintf(why, why_len, "dcgmi printed nothing");
	} else {
		char *first = clean_copy(c->first_line.s, c->first_line.len > 160 ? 160 : c->first_line.len);
		snprintf(why, why_len, "dcgmi printed neither the diag JSON nor its result table (first line: \"%s\")",
		         first ? first : "?");
		free(first);
	}
	return false;
}

/* The reason, valid UTF-8 (it quotes the tool's bytes) and cut at a
 * character boundary before ng_record_set_reason's own limit could split one. */
static void set_reason(cJSON *rec, const char *reason)
{
	char *clean = clean_copy(reason, strlen(reason));
	if (!clean)
		return;
	size_t n = strlen(clean);
	if (n > 1000) {
		n = 1000;
		while (n > 0 && ((unsigned char)clean[n] & 0xC0) == 0x80)
			n--;
		clean[n] = '\0';
	}
	ng_record_set_reason(rec, "%s", clean);
	free(clean);
}

/* What a cut capture showed before the cut ("pcie: Fail, memory: Pass"), as
 * DCGM printed it: withheld from the gate, but a person must see it. */
static void add_read_before(const struct dcgm *c, char *why, size_t cap)
{
	size_t n = strlen(why);
	const char *sep = " (read before that: ";
	for (const cJSON *t = c->tests ? c->tests->child : NULL; t && n + 1 < cap; t = t->next) {
		const cJSON *st = ng_json_get(t, "dcgm_status");
		int w = snprintf(why + n, cap - n, "%s%s: %s", sep, label_of(t, "name"),
		                 cJSON_IsString(st) && st->valuestring[0] ? st->valuestring : label_of(t, "status"));
		if (w < 0 || (size_t)w >= cap - n) {
			why[n] = '\0';
			break;
		}
		n += (size_t)w;
		sep = ", ";
	}
	if (strcmp(sep, ", ") == 0 && n + 2 < cap)
		snprintf(why + n, cap - n, ")");
}

static cJSON *build(const char *text, size_t len, ng_run_status st)
{
	cJSON *rec = ng_record_new("dcgm.diag", NULL, NULL);
	if (!rec)
		return NULL;
	ng_record_set_wrong_null(rec);
	ng_json_set(ng_record_tool(rec), "name", cJSON_CreateString("dcgmi"));
	struct dcgm c = {.rec = rec, .detail = ng_record_detail(rec)};
	c.tests = child_array(c.detail, "tests");
	c.messages = cJSON_CreateArray();
	c.problems = cJSON_CreateArray();
	if (st.exit_status >= 0 && st.signal <= 0)
		ng_json_set(c.detail, "exit_status", cJSON_CreateNumber(st.exit_status));
	if (st.signal > 0)
		ng_json_set(c.detail, "signal", cJSON_CreateNumber(st.signal));

	char why[1024] = "";
	bool readable = read_output(&c, text, len, why, sizeof why);
	struct summary s = {0};
	summarise(&c, &s);
	if (!readable && s.n_tests)
		add_read_before(&c, why, sizeof why);
	ng_json_set(c.detail, "complete", cJSON_CreateBool(readable));
	struct verdict v = {0};
	decide(&c, st, &s, readable, why, &v);
	ng_json_set(rec, "outcome", cJSON_CreateString(v.outcome));
	ng_json_set(c.detail, "outcome", cJSON_CreateString(v.outcome));
	set_reason(rec, v.reason.s ? v.reason.s : v.outcome);
	if (readable && s.n_tests && diag_allowed(st, &s)) {
		ng_json_set(rec, "diag", s.map);
		s.map = NULL;
	} else if (readable && s.n_tests) {
		ng_json_set(c.detail, "diag_withheld",
		            cJSON_CreateString("the exit status voids or contradicts the parsed results, so "
		                               "they are kept in detail.tests and not given to the gate"));
	}
	cJSON_Delete(s.map);
	if (!readable && why[0])
		ng_json_set(c.detail, "unreadable", json_str(why, strlen(why)));
	ng_json_set(c.detail, "messages", c.messages);
	ng_json_set(c.detail, "problems", c.problems);
	finish_detail(&c);
	bool oom = s.failed.oom || s.skipped.oom || s.passed.oom || s.harness.oom || v.reason.oom;
	ng_strbuf_free(&s.failed);
	ng_strbuf_free(&s.skipped);
	ng_strbuf_free(&s.passed);
	ng_strbuf_free(&s.harness);
	ng_strbuf_free(&v.reason);
	if (oom || !cJSON_IsString(ng_json_get(rec, "reason")) || !cJSON_IsString(ng_json_get(rec, "outcome"))) {
		cJSON_Delete(rec);
		return NULL;
	}
	return rec;
}

static cJSON *parse_bare(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	cJSON *arr = cJSON_CreateArray();
	cJSON *rec = arr ? build(text ? text : "", text ? len : 0, st) : NULL;
	if (!rec) {
		cJSON_Delete(arr);
		ng_fail(err, "out of memory while parsing dcgmi diag output (%zu bytes)", len);
		return NULL;
	}
	cJSON_AddItemToArray(arr, rec);
	return arr;
}

/* Launcher prefixes and noise are gone before the dcgmi reader sees a line. */
cJSON *ng_parse_dcgmi(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	return ng_launch_parse(text, len, st, err, parse_bare);
}
