/* A policy as a policy file (core/policy_json.h). */
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/policy_json.h"

cJSON *ng_policy_to_json(const ng_policy *p)
{
	cJSON *doc = cJSON_CreateObject();
	ng_strbuf val = {0};
	bool ok = doc && cJSON_AddStringToObject(doc, "schema", "nodegate/policy/1");
	for (size_t i = 0; ok && i < ng_policy_param_count(); i++) {
		const char *name = ng_policy_param_name(i), *dot = strchr(name, '.');
		if (!dot)
			continue;
		char section[64];
		size_t len = (size_t)(dot - name) < sizeof section ? (size_t)(dot - name) : sizeof section - 1;
		memcpy(section, name, len);
		section[len] = '\0';
		cJSON *sec = cJSON_GetObjectItemCaseSensitive(doc, section);
		if (!sec)
			sec = cJSON_AddObjectToObject(doc, section);
		ng_strbuf_reset(&val);
		ng_policy_param_value(p, i, &val);
		cJSON *v = val.s ? cJSON_Parse(val.s) : NULL;
		/* An unset text value ("") is its default; a policy file cannot
		 * say "" (policy.c refuses an empty string), so it is left out. */
		if (cJSON_IsString(v) && !v->valuestring[0]) {
			cJSON_Delete(v);
			continue;
		}
		ok = sec && v && cJSON_AddItemToObject(sec, dot + 1, v);
		if (!ok)
			cJSON_Delete(v);
	}
	ng_strbuf_free(&val);
	cJSON *floors = ok ? cJSON_AddObjectToObject(doc, "floors") : NULL;
	ok = ok && floors;
	for (size_t i = 0; ok && i < p->n_floors; i++)
		ok = cJSON_AddNumberToObject(floors, p->floors[i].metric, p->floors[i].value) != NULL;
	if (!ok) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

char *ng_policy_to_text(const ng_policy *p)
{
	cJSON *doc = ng_policy_to_json(p);
	char *s = doc ? cJSON_PrintUnformatted(doc) : NULL;
	cJSON_Delete(doc);
	return s;
}

int ng_policy_from_text(const char *text, const char *source, ng_policy *out, ng_err *err)
{
	ng_err perr;
	cJSON *doc = ng_json_parse(text, strlen(text), &perr);
	if (!doc)
		return ng_fail(err, "%s: %s", source, perr.msg);
	ng_policy p;
	ng_policy_default(&p);
	int rc = ng_policy_apply_json(&p, doc, source, &perr);
	cJSON_Delete(doc);
	if (rc < 0)
		return ng_fail(err, "%s: %s", source, perr.msg);
	*out = p;
	return 0;
}
