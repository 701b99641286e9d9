#include "core/record_build.h"
#include "core/metric.h"

#include <stdarg.h>
#include <stdio.h>

void ng_json_set(cJSON *obj, const char *key, cJSON *value)
{
	if (!obj || !value) {
		cJSON_Delete(value);
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value);
	else
		cJSON_AddItemToObject(obj, key, value);
}

cJSON *ng_record_new(const char *metric, const char *domain, const char *unit)
{
	const struct ng_metric *m = ng_metric_lookup(metric);
	cJSON *r = cJSON_CreateObject();
	if (!r)
		return NULL;
	cJSON_AddStringToObject(r, "schema", NG_RECORD_SCHEMA);
	cJSON_AddStringToObject(r, "domain", domain ? domain : m ? m->domain : "");
	cJSON_AddStringToObject(r, "metric", metric);
	cJSON_AddStringToObject(r, "unit", unit ? unit : m ? m->unit : "");
	cJSON_AddArrayToObject(r, "samples");
	cJSON_AddNullToObject(r, "wrong");
	return r;
}

void ng_record_add_sample(cJSON *rec, double v)
{
	cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "samples");
	if (s)
		cJSON_AddItemToArray(s, cJSON_CreateNumber(v));
}

void ng_record_set_wrong(cJSON *rec, double count) { ng_json_set(rec, "wrong", cJSON_CreateNumber(count)); }

void ng_record_set_wrong_null(cJSON *rec) { ng_json_set(rec, "wrong", cJSON_CreateNull()); }

void ng_record_set_reason(cJSON *rec, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	ng_json_set(rec, "reason", cJSON_CreateString(buf));
}

static cJSON *child_object(cJSON *rec, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(rec, key);
	if (!o) {
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(rec, key, o);
	}
	return o;
}

void ng_record_set_diag(cJSON *rec, const char *test, const char *status)
{
	ng_json_set(child_object(rec, "diag"), test, cJSON_CreateString(status));
}

cJSON *ng_record_tool(cJSON *rec) { return child_object(rec, "tool"); }
cJSON *ng_record_detail(cJSON *rec) { return child_object(rec, "detail"); }
cJSON *ng_record_conditions(cJSON *rec) { return child_object(rec, "conditions"); }

void ng_records_settle_unmeasured(cJSON *records)
{
	for (cJSON *r = records ? records->child : NULL; r; r = r->next) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "samples");
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "wrong");
		if (cJSON_IsArray(s) && s->child)
			continue;
		if (!(cJSON_IsNumber(w) && w->valuedouble > 0))
			ng_record_set_wrong(r, 0);
	}
}
