#include "collect/harness.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "core/record_build.h"
#include "core/sha256.h"
#include "core/strbuf.h"
#include "parse/help.h"

#define PROBE_TIMEOUT_S 30.0

/* dcgmi lists a subcommand's options only under that subcommand. */
static size_t probe_prefix(const char *tool) { return strcmp(tool, "dcgmi") == 0 ? 1 : 0; }

static int diag_rank(const char *s)
{
	if (!s)
		return 1; /* unreported in some run: as good as skipped */
	if (strcmp(s, "pass") == 0)
		return 0;
	if (strcmp(s, "skip") == 0)
		return 1;
	if (strcmp(s, "fail") == 0)
		return 2;
	return 3; /* an unknown status stays visible: the gate refuses it */
}

static const char *status_of(const cJSON *diag, const char *test)
{
	const cJSON *v = ng_json_get(diag, test);
	return cJSON_IsString(v) ? v->valuestring : v ? "?" : NULL;
}

static void merge_diag(cJSON *into, const cJSON *from)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(into, "diag");
	const cJSON *b = ng_json_get(from, "diag");
	if (!a && !b)
		return;
	cJSON *merged = cJSON_CreateObject();
	const cJSON *sides[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		for (const cJSON *t = sides[k] ? sides[k]->child : NULL; t; t = t->next) {
			if (ng_json_get(merged, t->string))
				continue;
			const char *x = status_of(a, t->string), *y = status_of(b, t->string);
			const char *worst = diag_rank(x) >= diag_rank(y) ? x : y;
			cJSON_AddStringToObject(merged, t->string, worst ? worst : "skip");
		}
	}
	ng_json_set(into, "diag", merged);
}

void ng_records_merge(cJSON *into, const cJSON *from)
{
	cJSON *s = cJSON_GetObjectItemCaseSensitive(into, "samples");
	const cJSON *fs = cJSON_GetObjectItemCaseSensitive(from, "samples");
	if (cJSON_IsArray(s) && cJSON_IsArray(fs))
		for (const cJSON *v = fs->child; v; v = v->next)
			cJSON_AddItemToArray(s, cJSON_Duplicate(v, 1));

	const cJSON *wa = cJSON_GetObjectItemCaseSensitive(into, "wrong");
	const cJSON *wb = cJSON_GetObjectItemCaseSensitive(from, "wrong");
	bool usable_a = wa && (cJSON_IsNull(wa) || (cJSON_IsNumber(wa) && isfinite(wa->valuedouble)));
	bool usable_b = wb && (cJSON_IsNull(wb) || (cJSON_IsNumber(wb) && isfinite(wb->valuedouble)));
	if (!usable_a || !usable_b) {
		cJSON_DeleteItemFromObjectCaseSensitive(into, "wrong");
	} else {
		double sum = (cJSON_IsNumber(wa) ? wa->valuedouble : 0) +
		             (cJSON_IsNumber(wb) ? wb->valuedouble : 0);
		/* Corruption in any run outranks a run that did not check. */
		if (sum > 0)
			ng_record_set_wrong(into, sum);
		else if (cJSON_IsNull(wa) || cJSON_IsNull(wb))
			ng_record_set_wrong_null(into);
		else
			ng_record_set_wrong(into, 0);
	}
	merge_diag(into, from);

	const cJSON *rb = ng_json_get(from, "reason");
	const cJSON *ra = ng_json_get(into, "reason");
	if (cJSON_IsString(rb) && !(cJSON_IsString(ra) && strstr(ra->valuestring, rb->valuestring))) {
		char *joined = NULL;
		if (cJSON_IsString(ra) && asprintf(&joined, "%s; %s", ra->valuestring, rb->valuestring) > 0) {
			ng_json_set(into, "reason", cJSON_CreateString(joined));
			free(joined);
		} else if (!cJSON_IsString(ra)) {
			ng_json_set(into, "reason", cJSON_CreateString(rb->valuestring));
		}
	}
}

static cJSON *run_info(const ng_spawn_result *r, const char *out_file, const char *err_file)
{
	cJSON *o = cJSON_CreateObject();
	char sha[65];
	if (r->spawned) {
		if (r->signal)
			cJSON_AddNumberToObject(o, "signal", r->signal);
		else
			cJSON_AddNumberToObject(o, "exit_status", r->exit_status);
	} else {
		cJSON_AddStringToObject(o, "spawn_error", strerror(r->spawn_errno));
	}
	cJSON_AddBoolToObject(o, "timed_out", r->timed_out);
	cJSON_AddNumberToObject(o, "seconds", round(r->seconds * 1000) / 1000);
	ng_sha256_hex(r->out, r->out_len, sha);
	cJSON_AddStringToObject(o, "stdout_sha256", sha);
	ng_sha256_hex(r->err, r->err_len, sha);
	cJSON_AddStringToObject(o, "stderr_sha256", sha);
	if (r->truncated)
		cJSON_AddBoolToObject(o, "truncated", true);
	if (out_file)
		cJSON_AddStringToObject(o, "stdout_file", out_file);
	if (err_file)
		cJSON_AddStringToObject(o, "stderr_file", err_file);
	return o;
}

static cJSON *argv_json(char *const *argv, size_t argc)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < argc; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
	return a;
}

/* A run that did not finish measured nothing: no samples, and why (its wrong
 * is then settled by ng_records_settle_unmeasured). */
static void unmeasured(cJSON *rec, const char *why)
{
	ng_json_set(rec, "samples", cJSON_CreateArray());
	ng_record_set_reason(rec, "%s", why);
}

/* A record for a run that never got to measure: no samples, and why. */
static cJSON *refusal(const struct ng_harness_opts *o, const char *why)
{
	cJSON *arr = o->parser->parse("", 0, NG_RUN_STATUS_UNKNOWN, NULL);
	if (!arr)
		return NULL;
	for (cJSON *r = arr->child; r; r = r->next)
		unmeasured(r, why);
	ng_records_settle_unmeasured(arr);
	return arr;
}

/* Checks the command's options against its own help text. Returns NULL when
 * all are listed, else the records that refuse the run. */
static cJSON *probe_options(const struct ng_harness_opts *o, ng_err *err, bool *failed)
{
	*failed = false;
	size_t prefix = probe_prefix(o->parser->tool);
	if (prefix + 1 > o->argc)
		prefix = 0;
	char **hargv = calloc(prefix + 3, sizeof *hargv);
	if (!hargv) {
		*failed = true;
		ng_fail(err, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i <= prefix; i++)
		hargv[i] = o->argv[i];
	hargv[prefix + 1] = "-h";
	ng_spawn_result r;
	char ebuf[256];
	double t = o->timeout_s < PROBE_TIMEOUT_S ? o->timeout_s : PROBE_TIMEOUT_S;
	if (ng_spawn_capture(hargv, t, 1 << 20, &r, ebuf, sizeof ebuf) < 0) {
		free(hargv);
		*failed = true;
		ng_fail(err, "%s", ebuf);
		return NULL;
	}
	free(hargv);
	cJSON *out = NULL;
	char how[256], opt[128];
	if (!r.spawned || r.timed_out || r.signal) {
		ng_spawn_describe(&r, how, sizeof how);
		char msg[512];
		snprintf(msg, sizeof msg, "not run: %s -h %s", o->argv[0], how);
		out = refusal(o, msg);
	} else {
		bool oom = false;
		const char *bad = ng_harness_unlisted_option(&r, o->argv + prefix + 1, o->argc - prefix - 1,
		                                             opt, sizeof opt, &oom);
		if (bad) {
			char msg[512];
			snprintf(msg, sizeof msg,
			         "not run: %s does not list the option %s in its help text, and a "
			         "build that does not know an option may print usage and exit 0 "
			         "without measuring",
			         o->argv[0], bad);
			out = refusal(o, msg);
		} else if (oom) {
			*failed = true;
			ng_fail(err, "out of memory");
		}
	}
	ng_spawn_result_free(&r);
	return out;
}

static int keep_raw(const struct ng_harness_opts *o, unsigned run, const ng_spawn_result *r,
                    char **out_file, char **err_file, ng_err *err)
{
	*out_file = *err_file = NULL;
	if (!o->raw_dir)
		return 0;
	/* 0700: raw output is evidence, and may hold what the tool printed of
	 * its environment; the writer refuses the directory if others can
	 * change names in it. */
	if (mkdir(o->raw_dir, 0700) < 0 && errno != EEXIST)
		return ng_fail(err, "cannot create the raw output directory %s: %s", o->raw_dir,
		               strerror(errno));
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	/* A random part in each name: a name nobody can guess is a name nobody
	 * can plant a link or a FIFO at beforehand. */
	unsigned long long tag;
	if (ng_random_u64(&tag) < 0)
		return ng_fail(err, "cannot name the raw output files: no random numbers from the "
		                    "kernel: %s",
		               strerror(errno));
	if (asprintf(out_file, "%s/%s-%s-%ld-%u-%016llx.stdout", o->raw_dir, o->parser->tool,
	             stamp, (long)getpid(), run, tag) < 0 ||
	    asprintf(err_file, "%s/%s-%s-%ld-%u-%016llx.stderr", o->raw_dir, o->parser->tool,
	             stamp, (long)getpid(), run, tag) < 0)
		return ng_fail(err, "out of memory");
	if (ng_write_file_atomic_mode(*out_file, r->out, r->out_len, 0600, err) < 0 ||
	    ng_write_file_atomic_mode(*err_file, r->err, r->err_len, 0600, err) < 0)
		return -1;
	return 0;
}

/* One run: spawn, keep the raw output, parse. */
static cJSON *one_run(const struct ng_harness_opts *o, unsigned run, cJSON *runs, ng_err *err)
{
	ng_spawn_result r;
	char ebuf[256];
	if (ng_spawn_capture(o->argv, o->timeout_s, o->max_output, &r, ebuf, sizeof ebuf) < 0) {
		ng_fail(err, "%s", ebuf);
		return NULL;
	}
	char *out_file, *err_file;
	cJSON *recs = NULL;
	if (keep_raw(o, run, &r, &out_file, &err_file, err) < 0)
		goto out;
	cJSON_AddItemToArray(runs, run_info(&r, out_file, err_file));

	/* The parsers read the command line the way a captured session shows it
	 * ("$ nvbandwidth -t 0"): what was asked for (verification skipped or not,
	 * the collective, the run level) is evidence the output itself may lack. */
	ng_strbuf text = {0};
	ng_strbuf_adds(&text, "$");
	for (size_t i = 0; i < o->argc; i++) {
		ng_strbuf_addc(&text, ' ');
		ng_strbuf_adds(&text, o->argv[i]);
	}
	ng_strbuf_addc(&text, '\n');
	ng_strbuf_add(&text, r.out, r.out_len);
	ng_strbuf_addc(&text, '\n');
	ng_strbuf_add(&text, r.err, r.err_len);
	if (text.oom || !text.s) {
		ng_strbuf_free(&text);
		ng_fail(err, "out of memory");
		goto out;
	}
	ng_run_status st = {r.signal || !r.spawned ? -1 : r.exit_status, r.signal};
	recs = o->parser->parse(text.s, text.len, st, err);
	ng_strbuf_free(&text);
	bool unfinished = !r.spawned || r.timed_out || r.signal;
	if (recs && unfinished) {
		/* Numbers printed by a run that did not finish are not a measurement. */
		char how[256], why[768];
		ng_spawn_describe(&r, how, sizeof how);
		snprintf(why, sizeof why, "run %u: %s %s", run + 1, o->argv[0], how);
		for (cJSON *rec = recs->child; rec; rec = rec->next)
			unmeasured(rec, why);
	}
	/* A parser says wrong: null (not checked) for a run that printed no
	 * results; for the gate that run measured nothing: no-measurement, fix
	 * the harness (the runbook's "exit 0, nothing parsed"). A finished
	 * dcgmi run is no measurement by design: its record keeps wrong null. */
	if (unfinished || strcmp(o->parser->tool, "dcgmi") != 0)
		ng_records_settle_unmeasured(recs);
out:
	free(out_file);
	free(err_file);
	ng_spawn_result_free(&r);
	return recs;
}

static cJSON *find_metric(cJSON *arr, const char *metric)
{
	for (cJSON *r = arr->child; r; r = r->next) {
		const cJSON *m = ng_json_get(r, "metric");
		if (cJSON_IsString(m) && strcmp(m->valuestring, metric) == 0)
			return r;
	}
	return NULL;
}

static void stamp_records(const struct ng_harness_opts *o, cJSON *arr, cJSON *runs)
{
	char id[96];
	time_t now = time(NULL);
	int k = 0;
	for (cJSON *r = arr->child; r; r = r->next, k++) {
		snprintf(id, sizeof id, "%s-%ld-%ld-%d", o->parser->tool, (long)now, (long)getpid(), k);
		ng_json_set(r, "id", cJSON_CreateString(id));
		if (o->node)
			ng_json_set(r, "node", cJSON_CreateString(o->node));
		if (o->cls)
			ng_json_set(r, "class", cJSON_CreateString(o->cls));
		cJSON *tool = ng_record_tool(r);
		ng_json_set(tool, "argv", argv_json(o->argv, o->argc));
		ng_json_set(tool, "runs", cJSON_Duplicate(runs, 1));
	}
}

cJSON *ng_harness_run(const struct ng_harness_opts *o, ng_err *err)
{
	if (o->probe && o->argc > 1) {
		bool failed;
		cJSON *refused = probe_options(o, err, &failed);
		if (failed)
			return NULL;
		if (refused) {
			cJSON *runs = cJSON_CreateArray();
			stamp_records(o, refused, runs);
			cJSON_Delete(runs);
			return refused;
		}
	}
	cJSON *all = cJSON_CreateArray(), *runs = cJSON_CreateArray();
	unsigned repeat = o->repeat ? o->repeat : 1;
	for (unsigned i = 0; i < repeat; i++) {
		cJSON *recs = one_run(o, i, runs, err);
		if (!recs) {
			cJSON_Delete(all);
			cJSON_Delete(runs);
			return NULL;
		}
		while (recs->child) {
			cJSON *rec = cJSON_DetachItemViaPointer(recs, recs->child);
			const cJSON *m = ng_json_get(rec, "metric");
			cJSON *same = cJSON_IsString(m) ? find_metric(all, m->valuestring) : NULL;
			if (same) {
				ng_records_merge(same, rec);
				cJSON_Delete(rec);
			} else {
				cJSON_AddItemToArray(all, rec);
			}
		}
		cJSON_Delete(recs);
	}
	stamp_records(o, all, runs);
	cJSON_Delete(runs);
	return all;
}

const char *ng_harness_unlisted_option(const ng_spawn_result *r, char *const *args, size_t n,
                                       char *buf, size_t buflen, bool *oom)
{
	size_t len = r->out_len + 1 + r->err_len;
	char *help = malloc(len + 1);
	*oom = !help;
	if (!help)
		return NULL;
	if (r->out_len)
		memcpy(help, r->out, r->out_len);
	help[r->out_len] = '\n';
	if (r->err_len)
		memcpy(help + r->out_len + 1, r->err, r->err_len);
	help[len] = '\0';
	const char *bad = ng_help_first_unknown_option(help, len, args, n, buf, buflen);
	free(help);
	return bad;
}
