/* The policy as `nodegate policy` shows it (flow/policy_view.h). */
#include "flow/policy_view.h"

#include "core/policy_digest.h"
#include "core/strbuf.h"

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "dev"
#endif

cJSON *ng_policy_view_json(const ng_policy *p)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *values = cJSON_AddObjectToObject(doc, "policy");
	ng_strbuf val = {0};
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		ng_strbuf_reset(&val);
		ng_policy_param_value(p, i, &val);
		cJSON *e = cJSON_AddObjectToObject(values, ng_policy_param_name(i));
		cJSON_AddItemToObject(e, "value", cJSON_Parse(val.s));
		cJSON_AddStringToObject(e, "source", ng_policy_param_source(p, i));
		cJSON_AddStringToObject(e, "meaning", ng_policy_param_description(i));
	}
	ng_strbuf_free(&val);
	cJSON *floors = cJSON_AddObjectToObject(doc, "floors");
	for (size_t i = 0; i < p->n_floors; i++)
		cJSON_AddNumberToObject(floors, p->floors[i].metric, p->floors[i].value);
	/* The policy version stored with every admission decision and case,
	 * which `nodegate report` groups false rejects by. */
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(p, digest);
	cJSON_AddStringToObject(doc, "version", digest);
	return doc;
}

size_t ng_policy_values_set(const ng_policy *p)
{
	size_t set = 0;
	for (size_t i = 0; i < ng_policy_param_count(); i++)
		set += p->from_file[i];
	return set;
}

cJSON *ng_policy_check_json(const char *file, const ng_policy *pol, const char *error)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "file", file);
	cJSON_AddBoolToObject(doc, "valid", pol != NULL);
	cJSON_AddStringToObject(doc, "nodegate", NODEGATE_VERSION);
	if (pol) {
		char digest[NG_POLICY_DIGEST_LEN];
		ng_policy_digest(pol, digest);
		cJSON_AddStringToObject(doc, "version", digest);
		cJSON_AddNumberToObject(doc, "values_set", (double)ng_policy_values_set(pol));
		cJSON_AddNumberToObject(doc, "floors", (double)pol->n_floors);
	} else {
		cJSON_AddStringToObject(doc, "error", error);
	}
	cJSON *w = cJSON_AddArrayToObject(doc, "warnings");
	for (size_t k = 0; pol && ng_policy_warning(pol, k); k++)
		cJSON_AddItemToArray(w, cJSON_CreateString(ng_policy_warning(pol, k)));
	return doc;
}
