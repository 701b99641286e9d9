/* Storing a file of records (flow/ingest.h). */
#include "flow/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/json_file.h"
#include "core/metric.h"
#include "judge/record.h"

static const char *str_member(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* Checks what the store needs of each record, so that a bad record is told
 * apart from a store failure (exit 2, not 3), and names it. */
static int check_records(const cJSON *arr, const char *name, const size_t *lines, ng_err *err)
{
	size_t i = 0;
	for (const cJSON *r = arr->child; r; r = r->next, i++) {
		char at[64];
		if (lines)
			snprintf(at, sizeof at, "line %zu", lines[i]);
		else
			snprintf(at, sizeof at, "record %zu", i);
		if (!cJSON_IsObject(r))
			return ng_fail(err, "%s: %s is not a JSON object", name, at);
		/* Refused, not stored changed: a dropped sample or a clamped count
		 * would be a measurement nobody made. */
		ng_err serr;
		if (ng_record_check_strict(r, false, &serr) < 0)
			return ng_fail(err, "%s: %s: %s", name, at, serr.msg);
		const char *metric = str_member(r, "metric");
		const char *missing = !str_member(r, "node")    ? "node"
		                      : !str_member(r, "class") ? "class"
		                      : !metric                 ? "metric"
		                                                : NULL;
		if (!missing && !str_member(r, "domain") && !ng_metric_lookup(metric))
			missing = "domain (and its metric is not a registered one)";
		if (missing)
			return ng_fail(err, "%s: %s has no %s", name, at, missing);
		const cJSON *sw = ng_json_get(r, "software");
		if (sw && !cJSON_IsString(sw) && !cJSON_IsNull(sw))
			return ng_fail(err, "%s: %s: \"software\" must be a string", name, at);
	}
	if (i == 0)
		return ng_fail(err, "%s holds no records", name);
	return 0;
}

/* Whether a text line is only JSON white space. */
static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/* Grows the line-number list alongside the records. */
static int note_line(size_t **lines, size_t *cap, size_t i, size_t line)
{
	if (i == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		size_t *p = realloc(*lines, c * sizeof *p);
		if (!p)
			return -1;
		*lines = p;
		*cap = c;
	}
	(*lines)[i] = line;
	return 0;
}

/* The records of a file as one array: a JSON array, one object, or JSON
 * Lines. For JSON Lines, *lines gets each record's line number (else NULL).
 * name is how messages call the file. */
static cJSON *read_records(const char *path, const char *name, size_t **lines, ng_err *err)
{
	*lines = NULL;
	size_t len;
	char *text = ng_read_file(path, &len, err);
	if (!text)
		return NULL;
	ng_err perr;
	cJSON *doc = ng_json_parse(text, len, &perr);
	if (doc && !cJSON_IsArray(doc)) {
		cJSON *arr = cJSON_CreateArray();
		if (arr)
			cJSON_AddItemToArray(arr, doc);
		else
			cJSON_Delete(doc);
		doc = arr;
		if (!doc)
			ng_fail(err, "out of memory reading %s", name);
	} else if (!doc) {
		/* JSON Lines, when the first non-blank line is a whole object;
		 * otherwise the whole document's error says what is wrong. */
		const char *p = text, *end = text + len;
		size_t cap = 0, n = 0;
		doc = cJSON_CreateArray();
		if (!doc)
			ng_fail(err, "out of memory reading %s", name);
		for (size_t line = 1; p < end && doc; line++) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (!blank(p, k)) {
				ng_err lerr;
				cJSON *rec = ng_json_parse(p, k, &lerr);
				bool ok = rec && (n > 0 || cJSON_IsObject(rec));
				if (!ok) {
					if (n == 0)
						ng_fail(err, "%s: %s", name, perr.msg);
					else
						ng_fail(err, "%s line %zu: %s", name, line, lerr.msg);
				} else if (note_line(lines, &cap, n, line) < 0) {
					ok = false;
					ng_fail(err, "out of memory reading %s", name);
				}
				if (!ok) {
					cJSON_Delete(rec);
					cJSON_Delete(doc);
					doc = NULL;
					break;
				}
				cJSON_AddItemToArray(doc, rec);
				n++;
			}
			p += k + 1;
		}
		if (!doc) {
			free(*lines);
			*lines = NULL;
		}
	}
	free(text);
	return doc;
}

int ng_ingest_file(const ng_ctx *ctx, const char *path, const char *name,
                   const ng_store_ingest *how, ng_ingested *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	size_t *lines = NULL;
	cJSON *recs = read_records(path, name, &lines, err);
	if (!recs || check_records(recs, name, lines, err) < 0) {
		free(lines);
		cJSON_Delete(recs);
		err->code = NG_ERR_INPUT;
		return -1;
	}
	free(lines);
	size_t n = (size_t)cJSON_GetArraySize(recs);
	int rc = 0;
	out->ids = calloc(n, sizeof *out->ids);
	/* Said as the store's failure: nothing of the file was stored. */
	if (!out->ids)
		rc = ng_fail_as(err, NG_ERR_STORE, "out of memory storing %s", name);
	else if (ng_store_put_json_records(ctx->store, recs, how, out->ids, err) < 0) {
		err->code = NG_ERR_STORE;
		rc = -1;
	}
	if (rc == 0) {
		out->n = n;
		for (const cJSON *r = recs->child; r; r = r->next)
			out->bare += !str_member(r, "software");
	} else {
		ng_ingested_release(out);
	}
	cJSON_Delete(recs);
	return rc;
}

void ng_ingested_release(ng_ingested *r)
{
	if (!r)
		return;
	free(r->ids);
	r->ids = NULL;
	r->n = r->bare = 0;
}

size_t ng_ingest_files(const ng_ctx *ctx, char *const *paths, size_t n,
                       const ng_store_ingest *how, ng_ingest_file_fn fn, void *arg,
                       cJSON **out)
{
	cJSON *doc = out ? cJSON_CreateObject() : NULL;
	cJSON *stored = out ? cJSON_AddArrayToObject(doc, "stored") : NULL;
	cJSON *failed = out ? cJSON_AddArrayToObject(doc, "failed") : NULL;
	size_t n_failed = 0;
	for (size_t i = 0; i < n; i++) {
		const char *path = paths[i];
		const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
		ng_err err;
		ng_ingested got;
		if (ng_ingest_file(ctx, path, name, how, &got, &err) < 0) {
			n_failed++;
			if (fn)
				fn(arg, name, NULL, &err);
			if (out) {
				cJSON *f = cJSON_CreateObject();
				cJSON_AddStringToObject(f, "file", path);
				cJSON_AddStringToObject(f, "error", err.msg);
				cJSON_AddItemToArray(failed, f);
			}
			continue;
		}
		if (out) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "file", path);
			cJSON_AddNumberToObject(f, "records", (double)got.n);
			cJSON_AddStringToObject(f, "run_id", how->run_id);
			cJSON *a = cJSON_AddArrayToObject(f, "ids");
			for (size_t k = 0; k < got.n; k++)
				cJSON_AddItemToArray(a, cJSON_CreateNumber((double)got.ids[k]));
			cJSON_AddItemToArray(stored, f);
		}
		if (fn)
			fn(arg, name, &got, NULL);
		ng_ingested_release(&got);
	}
	if (out)
		*out = doc;
	return n_failed;
}
