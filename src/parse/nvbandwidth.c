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
 * verification was on (see echo_line). docs/parsers.md has the details.
 *
 * This file holds the helpers, invocations, the walk over the input and the
 * entry; matrices and the text format are in nvbandwidth_text.c, the JSON in
 * nvbandwidth_json.c, and records in nvbandwidth_records.c
 * (nvbandwidth_int.h). */
#include "parse/nvbandwidth_int.h"

/* ---- small helpers -------------------------------------------------------- */

cJSON *nvb_track(struct ctx *c, cJSON *v)
{
	if (!v)
		c->oom = true;
	return v;
}

void nvb_add_item(struct ctx *c, cJSON *obj, const char *key, cJSON *v)
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

void nvb_push(struct ctx *c, cJSON *arr, cJSON *v)
{
	if (!v || !arr || !cJSON_AddItemToArray(arr, v)) {
		cJSON_Delete(v);
		c->oom = true;
	}
}

void nvb_add_num(struct ctx *c, cJSON *obj, const char *key, double v)
{
	nvb_add_item(c, obj, key, cJSON_CreateNumber(v));
}

/* A printable copy of s: control bytes and non-ASCII become '?', so a record
 * is always valid JSON text whatever the log held; long text is cut. */
cJSON *nvb_str_item(ng_span s)
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


void nvb_add_str(struct ctx *c, cJSON *obj, const char *key, ng_span s)
{
	nvb_add_item(c, obj, key, nvb_str_item(s));
}

/* Appends s to arr unless arr already holds NVB_KEEP_MAX entries. */
void nvb_keep(struct ctx *c, cJSON *arr, ng_span s)
{
	if (cJSON_GetArraySize(arr) < NVB_KEEP_MAX)
		nvb_push(c, arr, nvb_str_item(s));
}

static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* A testcase name as nvbandwidth spells them: letters, digits, '_'. */
bool nvb_valid_name(ng_span s)
{
	if (s.len == 0 || s.len > NVB_NAME_MAX)
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!name_char(s.s[i]))
			return false;
	return true;
}

void nvb_copy_name(char *dst, ng_span s)
{
	memcpy(dst, s.s, s.len);
	dst[s.len] = '\0';
}

bool nvb_span_ends_with(ng_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len >= n && memcmp(s.s + s.len - n, lit, n) == 0;
}

/* Where lit first occurs in s, or s.len. */
size_t nvb_span_find(ng_span s, const char *lit)
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
	while ((at = nvb_span_find(s, lit)) < s.len) {
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
size_t nvb_verify_count(ng_span s)
{
	size_t n = count_in(s, "Invalid value when checking the pattern");
	if (n == 0 && nvb_span_find(s, "h_errorFlag") < s.len)
		n = 1;
	return n;
}

/* Lines nvbandwidth (or the CUDA/NVML asserts it wraps) prints for an error. */
bool nvb_error_line(ng_span t)
{
	return ng_span_starts_with(t, "ERROR") || ng_span_starts_with(t, "Error:") ||
	       ng_span_starts_with(t, "ASSERT in expression") || ng_span_starts_with(t, "NVML_ERROR") ||
	       ng_span_starts_with(t, "[CUDA_ERROR") || ng_span_starts_with(t, "[cuda");
}

/* nvbandwidth's small-buffer NOTE, its multinode "Warning:", and the
 * "WARNING:" lines CUDA and the driver write beside it: kept, not judged. */
bool nvb_warning_line(ng_span t)
{
	return ng_span_starts_with(t, "NOTE: You have chosen") || ng_span_starts_with(t, "Warning:") ||
	       ng_span_starts_with(t, "WARNING:");
}

/* The testcase a SUM or COEFFICIENT_OF_VARIATION key belongs to, and whether
 * the key is the testcase's own figure (the name, or "<name>_total") rather
 * than one direction of a bidirectional test ("_read1", "_write2"...). */
ng_span nvb_key_base(ng_span key, bool *final, bool *part)
{
	static const char *const parts[] = {"_read1", "_read2", "_write1", "_write2"};
	*final = true;
	*part = false;
	if (nvb_span_ends_with(key, "_total")) {
		key.len -= strlen("_total");
		return key;
	}
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (nvb_span_ends_with(key, parts[i])) {
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
	size_t eq = nvb_span_find(f, "=");
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
bool nvb_echo_line(ng_span t, bool *skip)
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
	if (k == n || (k == 0 && nvb_span_find(f[0], "/") == f[0].len))
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

struct inv *nvb_inv_new(struct ctx *c, size_t start, bool json)
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
	v->recs = nvb_track(c, cJSON_CreateArray());
	v->info = nvb_track(c, cJSON_CreateObject());
	v->errors = nvb_track(c, cJSON_CreateArray());
	v->warnings = nvb_track(c, cJSON_CreateArray());
	v->devices = nvb_track(c, cJSON_CreateArray());
	v->list_names = nvb_track(c, cJSON_CreateArray());
	c->invs[c->ninv++] = v;
	nvb_add_item(c, v->info, "format", cJSON_CreateString(json ? "json" : "text"));
	if (!json && c->pending_cmd) {
		v->cmd_verify = c->pending_cmd;
		nvb_add_str(c, v->info, "command_line", ng_span_cstr(c->pending_line));
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
cJSON *nvb_rec_for(struct ctx *c, struct inv *v, const char *name)
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
	nvb_push(c, v->recs, r);
	if (c->oom)
		return NULL;
	cJSON *d = ng_record_detail(r);
	nvb_add_item(c, d, "testcase", cJSON_CreateString(name));
	nvb_add_item(c, d, "runs", cJSON_CreateArray());
	return c->oom ? NULL : r;
}

cJSON *nvb_run_new(struct ctx *c, cJSON *rec)
{
	if (!rec)
		return NULL;
	cJSON *runs = cJSON_GetObjectItemCaseSensitive(ng_record_detail(rec), "runs");
	cJSON *o = nvb_track(c, cJSON_CreateObject());
	nvb_push(c, runs, o);
	return c->oom ? NULL : o;
}

/* Why this run gives no sample; the first reason found is the one kept. */
void nvb_run_problem(struct ctx *c, cJSON *run, const char *fmt, ...)
{
	if (!run || cJSON_GetObjectItemCaseSensitive(run, "problem"))
		return;
	char buf[NVB_STR_MAX + 200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	nvb_add_str(c, run, "problem", ng_span_cstr(buf));
}

/* Records a verification failure message on run. The kernel's "Invalid
 * value" line and the ASSERT that follows it report one failure, so a run's
 * count is its "Invalid value" lines, or 1 when there is only the ASSERT. A
 * verification failure is the reason the run gives no sample, whatever else
 * went wrong after it. */
void nvb_run_verify(struct ctx *c, cJSON *run, ng_span msg)
{
	size_t lines = count_in(msg, "Invalid value when checking the pattern");
	bool assert_seen = nvb_span_find(msg, "h_errorFlag") < msg.len;
	if (!run || (!lines && !assert_seen))
		return;
	cJSON *v = cJSON_GetObjectItemCaseSensitive(run, "pattern_mismatch_reports");
	double have = cJSON_IsNumber(v) ? v->valuedouble : 0;
	nvb_add_num(c, run, "pattern_mismatch_reports", have + (double)lines);
	if (assert_seen)
		nvb_add_item(c, run, "verification_assert", cJSON_CreateTrue());
	cJSON *msgs = cJSON_GetObjectItemCaseSensitive(run, "verification_messages");
	if (!msgs) {
		msgs = nvb_track(c, cJSON_CreateArray());
		nvb_add_item(c, run, "verification_messages", msgs);
	}
	if (msgs && cJSON_GetArraySize(msgs) < NVB_KEEP_MAX)
		nvb_push(c, msgs, nvb_str_item(ng_span_trim(msg)));
	cJSON_DeleteItemFromObjectCaseSensitive(run, "problem");
	nvb_run_problem(c, run, "data verification failed: nvbandwidth read back data that differs from what it "
	                    "copied");
}

/* The wrong count a run reports (see run_verify). */
double nvb_run_wrong(const cJSON *run)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(run, "pattern_mismatch_reports");
	double lines = cJSON_IsNumber(n) ? n->valuedouble : 0;
	if (lines < 1 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "verification_assert")))
		return 1;
	return lines;
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
	if (nvb_verify_count(t) || nvb_error_line(t)) {
		nvb_json_side_message(c, c->orphans, t, false);
		return true;
	}
	if (nvb_warning_line(t)) {
		nvb_keep(c, c->orphans->warnings, t);
		return true;
	}
	if (ng_span_starts_with(t, "nvbandwidth Version:"))
		return false;
	return nvb_take_echo(c, t);
}

static void text_span(struct ctx *c, const char *s, size_t len)
{
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, s, len);
	while (!c->oom && ng_lines_next(&it, &line))
		if (!side_line(c, line))
			nvb_text_line(c, line, (size_t)(line.s - c->text));
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
		if (!t.len || !nvb_json_start(t.s, end))
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
		ng_fail_as(err, NG_ERR_INPUT, "nvbandwidth: out of memory");
		return NULL;
	}
	size_t ndocs = find_docs(&c, &docs);
	const char *at = text;
	for (size_t i = 0; i < ndocs && !c.oom; i++) {
		/* the document first, so that the lines before it (the GPU
		 * check's message, an echoed command line) can be given to it */
		nvb_json_doc(&c, ng_json_get(docs[i].root, "nvbandwidth"), (size_t)(docs[i].start - text));
		c.cur = NULL;
		text_span(&c, at, (size_t)(docs[i].start - at));
		nvb_run_close(&c, "a JSON document followed");
		/* an echo no text invocation took was the document's own */
		if (c.pending_cmd && c.orphans && !c.orphans->cmd_verify) {
			c.orphans->cmd_verify = c.pending_cmd;
			nvb_add_str(&c, c.orphans->info, "command_line", ng_span_cstr(c.pending_line));
		}
		c.pending_cmd = 0;
		c.cur = c.orphans;
		at = docs[i].end;
	}
	if (!c.oom)
		text_span(&c, at, (size_t)(text + len - at));
	nvb_run_close(&c, "the output ends before it");
	for (size_t i = 0; i < ndocs; i++)
		cJSON_Delete(docs[i].root);
	free(docs);
	if (!c.oom && c.ninv == 0) {
		struct inv *v = nvb_inv_new(&c, 0, false);
		if (v)
			v->unparsed = c.json_unparsed;
	}
	cJSON *out = c.oom ? NULL : nvb_emit(&c);
	ctx_free(&c);
	if (c.oom || !out) {
		cJSON_Delete(out);
		ng_fail_as(err, NG_ERR_INPUT, "nvbandwidth: out of memory while building records");
		return NULL;
	}
	return out;
}

/* Launcher prefixes and noise are gone before the nvbandwidth reader sees a line. */
cJSON *ng_parse_nvbandwidth(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	return ng_launch_parse(text, len, st, err, parse_bare);
}
