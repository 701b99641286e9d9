/* Records given in files (measured elsewhere: `probe`, `run`, `parse`), read
 * for an admission run, and the DCGM diagnostics a fabric run carries. */
#include <stdbool.h>
#include <stdlib.h>

#include "collect/harness.h"
#include "core/json.h"
#include "core/json_file.h"
#include "judge/record.h"
#include "core/record_build.h"
#include "flow/records_in.h"

/* Loads record files into one array: each file an array of records or one. */
int ng_records_check(const cJSON *doc, const char *what, ng_err *err)
{
	ng_err serr;
	int k = 0;
	for (const cJSON *r = cJSON_IsArray(doc) ? doc->child : doc; r;
	     r = cJSON_IsArray(doc) ? r->next : NULL, k++)
		if (cJSON_IsObject(r) && ng_record_check_strict(r, true, &serr) < 0)
			return ng_fail(err, "%s: record %d: %s", what, k, serr.msg);
	return 0;
}

cJSON *ng_records_load_files(const char *const *files, size_t n, ng_err *err)
{
	cJSON *all = cJSON_CreateArray();
	for (size_t i = 0; all && i < n; i++) {
		char *text;
		size_t len;
		cJSON *doc = ng_load_json_file(files[i], &text, &len, err);
		free(text);
		if (!doc) {
			cJSON_Delete(all);
			return NULL;
		}
		/* Records from a file are checked as ingest checks them (a sample
		 * of 0 may be a dead path measured, so it is kept); this node's own
		 * records are nodegate's. */
		if (ng_records_check(doc, files[i], err) < 0) {
			cJSON_Delete(doc);
			cJSON_Delete(all);
			return NULL;
		}
		if (cJSON_IsObject(doc)) {
			cJSON_AddItemToArray(all, doc);
			continue;
		}
		if (!cJSON_IsArray(doc)) {
			cJSON_Delete(doc);
			cJSON_Delete(all);
			ng_fail(err, "%s: records must be a JSON array of records or one record", files[i]);
			return NULL;
		}
		cJSON *r;
		while ((r = cJSON_DetachItemFromArray(doc, 0)))
			cJSON_AddItemToArray(all, r);
		cJSON_Delete(doc);
	}
	if (!all)
		ng_fail(err, "out of memory");
	return all;
}

/* Copies the worst status per test from the diag records into every record
 * that carries no diag of its own. */
int ng_apply_diag_file(cJSON *records, const char *path, ng_err *err)
{
	char *text;
	size_t len;
	cJSON *doc = ng_load_json_file(path, &text, &len, err);
	if (!doc)
		return -1;
	cJSON *merged = ng_record_new("dcgm.diag", NULL, NULL);
	cJSON_DeleteItemFromObjectCaseSensitive(merged, "diag");
	const cJSON *items = cJSON_IsArray(doc) ? doc->child : doc;
	bool any = false;
	for (const cJSON *r = items; r; r = cJSON_IsArray(doc) ? r->next : NULL) {
		if (!cJSON_IsObject(ng_json_get(r, "diag")))
			continue;
		if (!any) {
			ng_json_set(merged, "diag", cJSON_Duplicate(ng_json_get(r, "diag"), 1));
			any = true;
		} else {
			ng_records_merge(merged, r);
		}
	}
	int rc = 0;
	if (!any) {
		rc = ng_fail(err, "%s holds no record with a \"diag\" map", path);
	} else {
		for (cJSON *r = records->child; r; r = r->next)
			if (!cJSON_GetObjectItemCaseSensitive(r, "diag"))
				ng_json_set(r, "diag", cJSON_Duplicate(ng_json_get(merged, "diag"), 1));
	}
	cJSON_Delete(merged);
	cJSON_Delete(doc);
	free(text);
	return rc;
}
