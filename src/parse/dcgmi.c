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
 * readable run in which nothing failed.
 *
 * This file holds strings, test names, statuses, foreign lines and the entry;
 * the JSON is read in dcgmi_json.c, the text table in dcgmi_text.c, and the
 * diag map and outcome are decided in dcgmi_outcome.c (dcgmi_int.h). */
#include "parse/dcgmi_int.h"

const char *const dg_rank_names[] = {"pass", "skip", "fail"};

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
char *dg_clean_copy(const char *s, size_t n)
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

cJSON *dg_json_str(const char *s, size_t n)
{
	char *c = dg_clean_copy(s ? s : "", s ? n : 0);
	if (!c)
		return NULL;
	cJSON *v = cJSON_CreateString(c);
	free(c);
	return v;
}

cJSON *dg_json_span(ng_span s) { return dg_json_str(s.s, s.len); }

/* Appends item to arr, or frees it when there is no arr (out of memory). */
void dg_append(cJSON *arr, cJSON *item)
{
	if (!arr || !cJSON_AddItemToArray(arr, item))
		cJSON_Delete(item);
}

bool dg_span_ieq(ng_span s, const char *lit)
{
	return s.len == strlen(lit) && strncasecmp(s.s, lit, s.len) == 0;
}


/* A copy of a JSON value with every string made valid UTF-8, nested no
 * deeper than MAX_COPY_DEPTH (deeper values become null). */
cJSON *dg_copy_clean(const cJSON *v, int depth)
{
	if (depth > MAX_COPY_DEPTH)
		return cJSON_CreateNull();
	if (cJSON_IsString(v))
		return dg_json_str(v->valuestring, strlen(v->valuestring));
	if (cJSON_IsNumber(v))
		return cJSON_CreateNumber(v->valuedouble);
	if (cJSON_IsBool(v))
		return cJSON_CreateBool(cJSON_IsTrue(v));
	if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		cJSON *out = cJSON_IsArray(v) ? cJSON_CreateArray() : cJSON_CreateObject();
		if (!out)
			return NULL;
		for (const cJSON *ch = v->child; ch; ch = ch->next) {
			cJSON *item = dg_copy_clean(ch, depth + 1);
			if (cJSON_IsArray(v)) {
				dg_append(out, item);
			} else {
				char *key = dg_clean_copy(ch->string ? ch->string : "", ch->string ? strlen(ch->string) : 0);
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

cJSON *dg_child_array(cJSON *obj, const char *key)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsArray(a)) {
		a = cJSON_CreateArray();
		ng_json_set(obj, key, a);
		a = cJSON_GetObjectItemCaseSensitive(obj, key);
	}
	return a;
}

void dg_problem(struct dcgm *c, const char *fmt, ...)
{
	if (c->n_problems++ >= MAX_PROBLEMS)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	dg_append(c->problems, dg_json_str(buf, strlen(buf)));
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
enum rank dg_map_status(ng_span raw, bool *known)
{
	ng_span s = ng_span_trim(raw);
	*known = true;
	if (dg_span_ieq(s, "pass"))
		return R_PASS;
	if (dg_span_ieq(s, "fail") || dg_span_ieq(s, "failed") || dg_span_ieq(s, "warn") ||
	    dg_span_ieq(s, "warning"))
		return R_FAIL;
	if (s.len == 0 || dg_span_ieq(s, "skip") || dg_span_ieq(s, "skipped") || dg_span_ieq(s, "not run") ||
	    dg_span_ieq(s, "notrun") || dg_span_ieq(s, "not_run"))
		return R_SKIP;
	*known = false;
	return R_SKIP;
}

int dg_rank_of(const cJSON *status)
{
	if (!cJSON_IsString(status))
		return -1;
	for (int r = R_PASS; r <= R_FAIL; r++)
		if (strcmp(status->valuestring, dg_rank_names[r]) == 0)
			return r;
	return -1;
}

const char *dg_label_of(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : "?";
}

/* Sets obj's "status" (worst of what it had and raw) and keeps the status
 * as DCGM printed it in "dcgm_status". */
void dg_set_status(struct dcgm *c, cJSON *test, cJSON *obj, ng_span raw)
{
	if (!obj)
		return;
	bool known;
	enum rank r = dg_map_status(raw, &known);
	if (!known)
		dg_problem(c, "test %s: status \"%.*s\" is not one DCGM prints; read as skip",
		        dg_label_of(test, "display_name"), (int)(raw.len > 64 ? 64 : raw.len), raw.s);
	int prev = dg_rank_of(ng_json_get(obj, "status"));
	if (prev > (int)r)
		return;
	ng_json_set(obj, "dcgm_status", dg_json_span(ng_span_trim(raw)));
	ng_json_set(obj, "status", cJSON_CreateString(dg_rank_names[r]));
}

/* ---------------------------------------------------------------- tests */

cJSON *dg_test_new(struct dcgm *c, ng_span display, const char *category)
{
	char snake[64];
	display = ng_span_trim(display);
	to_snake(display.s, display.len, snake, sizeof snake);
	if (!snake[0]) {
		dg_problem(c, "a test named \"%.*s\" has no letters or digits; its result is not read",
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
	ng_json_set(t, "display_name", dg_json_span(display));
	if (category)
		ng_json_set(t, "category", dg_json_str(category, strlen(category)));
	return t;
}

void dg_note_gpu(struct dcgm *c, long long id)
{
	for (size_t i = 0; i < c->n_gpus; i++)
		if (c->gpus[i] == id)
			return;
	if (c->n_gpus < MAX_GPUS)
		c->gpus[c->n_gpus++] = id;
}

/* The entity (GPU0, CPU3) of a test, created on first use. id < 0: none. */
cJSON *dg_test_entity(struct dcgm *c, cJSON *test, ng_span group, long long id, ng_span raw_label)
{
	if (!test)
		return NULL;
	char label[80];
	if (id >= 0)
		snprintf(label, sizeof label, "%.*s%lld", (int)(group.len > 16 ? 16 : group.len), group.s, id);
	else
		snprintf(label, sizeof label, "%.*s", (int)(raw_label.len > 64 ? 64 : raw_label.len), raw_label.s);
	char *clean = dg_clean_copy(label, strlen(label));
	if (!clean)
		return NULL;
	cJSON *ents = dg_child_array(test, "entities");
	for (cJSON *e = ents ? ents->child : NULL; e; e = e->next)
		if (strcmp(dg_label_of(e, "entity"), clean) == 0) {
			free(clean);
			return e;
		}
	cJSON *e = cJSON_CreateObject();
	if (e) {
		dg_append(ents, e);
		e = ents ? e : NULL;
		ng_json_set(e, "entity", cJSON_CreateString(clean));
		if (group.len)
			ng_json_set(e, "entity_group", dg_json_span(group));
		if (id >= 0)
			ng_json_set(e, "entity_id", cJSON_CreateNumber((double)id));
	}
	if (id >= 0 && dg_span_ieq(group, "GPU"))
		dg_note_gpu(c, id);
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
bool dg_entity_has_warning(const cJSON *test, const char *text)
{
	const cJSON *ents = ng_json_get(test, "entities");
	for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next)
		if (has_warning_text(e, text))
			return true;
	return false;
}

void dg_add_warning_text(cJSON *target, ng_span text)
{
	if (!target)
		return;
	cJSON *o = cJSON_CreateObject();
	ng_json_set(o, "text", dg_json_span(text));
	dg_append(dg_child_array(target, "warnings"), o);
}

void dg_add_info_text(cJSON *target, ng_span text)
{
	if (target)
		dg_append(dg_child_array(target, "info"), dg_json_span(text));
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
		if (dg_span_ieq(v, names[i]))
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
			ng_json_set(c->detail, "run", dg_json_span(v));
			int lvl = level_of(v);
			if (lvl)
				ng_json_set(c->detail, "run_level", cJSON_CreateNumber(lvl));
			return;
		}
	}
}

void dg_add_message(struct dcgm *c, ng_span t)
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
	dg_append(c->messages, dg_json_str(t.s, t.len > MAX_MESSAGE_LEN ? MAX_MESSAGE_LEN : t.len));
}

/* ---------------------------------------------------------------- entry */

static void finish_detail(struct dcgm *c)
{
	if (c->n_gpus) {
		qsort(c->gpus, c->n_gpus, sizeof c->gpus[0], dg_cmp_ll);
		cJSON *g = cJSON_CreateArray();
		for (size_t i = 0; i < c->n_gpus; i++)
			dg_append(g, cJSON_CreateNumber((double)c->gpus[i]));
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
	enum found f = dg_find_json(text, len, &doc, &js, &je, jwhy, sizeof jwhy);
	if (f == F_FOUND) {
		ng_json_set(c->detail, "format", cJSON_CreateString("json"));
		ng_lines it;
		ng_span line;
		ng_lines_init(&it, text, js);
		while (ng_lines_next(&it, &line))
			dg_add_message(c, ng_span_trim(line));
		ng_lines_init(&it, text + je, len - je);
		while (ng_lines_next(&it, &line))
			dg_add_message(c, ng_span_trim(line));
		dg_read_json(c, doc);
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
	int tables = dg_read_text(c, text, f == F_BROKEN ? js : len, &closed);
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
		char *first = dg_clean_copy(c->first_line.s, c->first_line.len > 160 ? 160 : c->first_line.len);
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
	char *clean = dg_clean_copy(reason, strlen(reason));
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
		int w = snprintf(why + n, cap - n, "%s%s: %s", sep, dg_label_of(t, "name"),
		                 cJSON_IsString(st) && st->valuestring[0] ? st->valuestring : dg_label_of(t, "status"));
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
	c.tests = dg_child_array(c.detail, "tests");
	c.messages = cJSON_CreateArray();
	c.problems = cJSON_CreateArray();
	if (st.exit_status >= 0 && st.signal <= 0)
		ng_json_set(c.detail, "exit_status", cJSON_CreateNumber(st.exit_status));
	if (st.signal > 0)
		ng_json_set(c.detail, "signal", cJSON_CreateNumber(st.signal));

	char why[1024] = "";
	bool readable = read_output(&c, text, len, why, sizeof why);
	struct summary s = {0};
	dg_summarise(&c, &s);
	if (!readable && s.n_tests)
		add_read_before(&c, why, sizeof why);
	ng_json_set(c.detail, "complete", cJSON_CreateBool(readable));
	struct verdict v = {0};
	dg_decide(&c, st, &s, readable, why, &v);
	ng_json_set(rec, "outcome", cJSON_CreateString(v.outcome));
	ng_json_set(c.detail, "outcome", cJSON_CreateString(v.outcome));
	set_reason(rec, v.reason.s ? v.reason.s : v.outcome);
	if (readable && s.n_tests && dg_diag_allowed(st, &s)) {
		ng_json_set(rec, "diag", s.map);
		s.map = NULL;
	} else if (readable && s.n_tests) {
		ng_json_set(c.detail, "diag_withheld",
		            cJSON_CreateString("the exit status voids or contradicts the parsed results, so "
		                               "they are kept in detail.tests and not given to the gate"));
	}
	cJSON_Delete(s.map);
	if (!readable && why[0])
		ng_json_set(c.detail, "unreadable", dg_json_str(why, strlen(why)));
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
		ng_fail_as(err, NG_ERR_INPUT, "out of memory while parsing dcgmi diag output (%zu bytes)", len);
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
