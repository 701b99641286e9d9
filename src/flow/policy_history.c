/* The policies the store has seen (flow/policy_history.h). */
#include <string.h>

#include "core/policy_digest.h"
#include "flow/policy_history.h"
#include "store/policies.h"

static cJSON *entry(cJSON *list, const char *digest)
{
	cJSON *e;
	cJSON_ArrayForEach(e, list)
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "version")), digest) == 0)
			return e;
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "version", digest);
	cJSON_AddNullToObject(e, "first_used");
	cJSON_AddNullToObject(e, "last_used");
	cJSON_AddNullToObject(e, "kept_since");
	cJSON_AddBoolToObject(e, "text_kept", false);
	cJSON_AddStringToObject(e, "promoted_by", "");
	cJSON_AddNullToObject(e, "promoted_at");
	cJSON_AddStringToObject(e, "promote_reason", "");
	cJSON_AddObjectToObject(e, "decisions");
	cJSON_AddNumberToObject(e, "total", 0);
	cJSON_AddItemToArray(list, e);
	return e;
}

static void set_time(cJSON *e, const char *key, int64_t t, bool keep_min)
{
	cJSON *v = cJSON_GetObjectItem(e, key);
	if (cJSON_IsNumber(v) && (keep_min ? v->valuedouble <= (double)t : v->valuedouble >= (double)t))
		return;
	cJSON_ReplaceItemInObject(e, key, cJSON_CreateNumber((double)t));
}

static int usage_row(const char *policy, const char *outcome, int64_t n, int64_t first,
                     int64_t last, void *arg)
{
	cJSON *e = entry(arg, *policy ? policy : "(none)");
	cJSON_AddNumberToObject(cJSON_GetObjectItem(e, "decisions"), outcome, (double)n);
	cJSON *t = cJSON_GetObjectItem(e, "total");
	cJSON_SetNumberValue(t, t->valuedouble + (double)n);
	set_time(e, "first_used", first, true);
	set_time(e, "last_used", last, false);
	return 0;
}

static int policy_row(const ng_store_policy_row *p, void *arg)
{
	cJSON *e = entry(arg, p->digest);
	set_time(e, "kept_since", p->first_seen, true);
	cJSON_ReplaceItemInObject(e, "text_kept", cJSON_CreateBool(true));
	if (p->promoted_at) {
		cJSON_ReplaceItemInObject(e, "promoted_by", cJSON_CreateString(p->promoted_by));
		cJSON_ReplaceItemInObject(e, "promoted_at", cJSON_CreateNumber((double)p->promoted_at));
		cJSON_ReplaceItemInObject(e, "promote_reason", cJSON_CreateString(p->promote_reason));
	}
	return 0;
}

int ng_flow_policy_history(const ng_ctx *ctx, cJSON **out, ng_err *err)
{
	*out = NULL;
	if (!ctx->store)
		return ng_fail_as(err, NG_ERR_STORE, "the history is the store's: name one");
	cJSON *doc = cJSON_CreateObject();
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(&ctx->policy, digest);
	cJSON_AddStringToObject(doc, "enforcing", digest);
	cJSON *list = cJSON_AddArrayToObject(doc, "policies");
	ng_store_shadow s;
	int r = ng_store_get_shadow(ctx->store, &s, err);
	if (r == 1) {
		cJSON_AddStringToObject(doc, "shadow", s.digest);
		ng_strbuf_free(&s.body);
	} else {
		cJSON_AddNullToObject(doc, "shadow");
	}
	if (r < 0 || ng_store_policy_usage(ctx->store, usage_row, list, err) < 0 ||
	    ng_store_policies(ctx->store, policy_row, list, err) < 0) {
		cJSON_Delete(doc);
		return -1;
	}
	*out = doc;
	return 0;
}
