/* The rows of `nodegate scenarios` and `nodegate selftest` as documents,
 * for their --json and any front end that shows them. */
#include "flow/testing/scenario.h"
#include "flow/testing/selftest.h"

cJSON *ng_scenario_row_json(const char *name, const struct scenario_row *row)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "scenario", name);
	cJSON_AddStringToObject(o, "severity", row->severity);
	cJSON_AddBoolToObject(o, "drain", row->drain);
	cJSON_AddNumberToObject(o, "exit", row->exit);
	cJSON_AddNumberToObject(o, "seconds", row->seconds);
	cJSON_AddBoolToObject(o, "as_expected", row->ok);
	if (!row->ok)
		cJSON_AddStringToObject(o, "problem", row->problem);
	return o;
}

cJSON *ng_selftest_row_json(const char *name, const char *expected, const char *got,
                            const char *problem)
{
	cJSON *r = cJSON_CreateObject();
	if (!r)
		return NULL;
	bool ok = !problem[0];
	cJSON_AddStringToObject(r, "case", name);
	cJSON_AddStringToObject(r, "expected", expected);
	cJSON_AddStringToObject(r, "got", got);
	cJSON_AddBoolToObject(r, "as_expected", ok);
	if (!ok)
		cJSON_AddStringToObject(r, "problem", problem);
	return r;
}

cJSON *ng_selftest_json(const ng_selftest *t, cJSON *rows, bool kept)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc) {
		cJSON_Delete(rows);
		return NULL;
	}
	cJSON_AddItemToObject(doc, "rows", rows);
	cJSON_AddNumberToObject(doc, "failed", (double)t->failed);
	if (t->req->brk)
		cJSON_AddStringToObject(doc, "broken", t->req->brk);
	if (kept)
		cJSON_AddStringToObject(doc, "dir", t->dir);
	return doc;
}
