/* Promotion of a proposed policy, behind its guard (flow/promote.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/policy_digest.h"
#include "core/policy_json.h"
#include "flow/promote.h"
#include "flow/replay.h"
#include "flow/shadow.h"
#include "store/policies.h"

static cJSON *take(cJSON *from, const char *key)
{
	return cJSON_DetachItemFromObjectCaseSensitive(from, key);
}

/* Classes of which the evidence would take more than share out in one day
 * beyond what the enforcing policy took out. */
static void over_guard(cJSON *over, const cJSON *peak, const char *what, double share)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, peak)
	{
		double s = cJSON_GetNumberValue(cJSON_GetObjectItem(c, "share"));
		if (!(s > share))
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "class", c->string);
		cJSON_AddStringToObject(e, "evidence", what);
		cJSON_AddStringToObject(e, "day", cJSON_GetStringValue(cJSON_GetObjectItem(c, "day")));
		cJSON_AddNumberToObject(e, "added", cJSON_GetNumberValue(cJSON_GetObjectItem(c, "added")));
		cJSON_AddNumberToObject(e, "nodes", cJSON_GetNumberValue(cJSON_GetObjectItem(c, "nodes")));
		cJSON_AddNumberToObject(e, "share", s);
		cJSON_AddItemToArray(over, e);
	}
}

static cJSON *replay_figures(cJSON *replay)
{
	cJSON *r = cJSON_CreateObject();
	static const char *const keys[] = {"window", "decisions", "replayed", "unchanged",
	                                   "changed_count", "summary", "quarantines", "not_replayed",
	                                   "not_re_evaluated", "peak_day"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		cJSON *v = take(replay, keys[i]);
		if (v)
			cJSON_AddItemToObject(r, keys[i], v);
	}
	return r;
}

int ng_flow_promote(const ng_ctx *ctx, const ng_promote_opts *o, cJSON **out, bool *refused,
                    ng_err *err)
{
	*out = NULL;
	*refused = false;
	if (!o->reason || !*o->reason)
		return ng_fail(err, "a promotion says why: give a reason");
	char digest[NG_POLICY_DIGEST_LEN], previous[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(o->proposed, digest);
	ng_policy_digest(&ctx->policy, previous);
	ng_replay_opts ro = {.proposed = o->proposed, .source = o->source, .days = o->days};
	cJSON *replay = NULL, *shadow = NULL;
	if (ng_flow_replay(ctx, &ro, &replay, err) < 0)
		return -1;
	int64_t since = ng_ctx_now(ctx) - (int64_t)o->days * 86400;
	if (ng_flow_shadow_summary(ctx->store, since, digest, &shadow, err) < 0) {
		cJSON_Delete(replay);
		return -1;
	}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "policy", digest);
	cJSON_AddStringToObject(doc, "previous", previous);
	cJSON_AddStringToObject(doc, "source", o->source ? o->source : "");
	cJSON_AddStringToObject(doc, "actor", ctx->actor ? ctx->actor : "");
	cJSON_AddStringToObject(doc, "reason", o->reason);
	cJSON *guard = cJSON_AddObjectToObject(doc, "guard");
	cJSON_AddNumberToObject(guard, "share", o->guard_share);
	cJSON *over = cJSON_AddArrayToObject(guard, "over");
	over_guard(over, cJSON_GetObjectItem(replay, "peak_day"), "replay", o->guard_share);
	over_guard(over, cJSON_GetObjectItem(shadow, "peak_day"), "shadow", o->guard_share);
	bool over_any = cJSON_GetArraySize(over) > 0;
	*refused = over_any && !o->force;
	cJSON_AddBoolToObject(doc, "forced", over_any && o->force);
	cJSON_AddBoolToObject(doc, "refused", *refused);
	cJSON_AddItemToObject(doc, "replay", replay_figures(replay));
	cJSON_AddItemToObject(doc, "shadow", shadow);
	cJSON_Delete(replay);
	if (!*refused && o->install)
		cJSON_AddStringToObject(doc, "installed", o->install);
	else
		cJSON_AddNullToObject(doc, "installed");
	char *detail = cJSON_PrintUnformatted(doc);
	int rc = detail ? 0 : ng_fail(err, "out of memory");
	char subject[64];
	snprintf(subject, sizeof subject, "policy:%s", digest);
	if (rc == 0 && *refused) {
		/* The refusal is evidence too: who tried, and what the guard saw. */
		rc = ng_store_audit(ctx->store, false, ng_ctx_now(ctx), ctx->actor,
		                    "policy.promote-refused", subject, detail, err);
	} else if (rc == 0) {
		if (o->install && ng_write_file_atomic(o->install, o->text, strlen(o->text), err) < 0)
			rc = -1;
		char *text = rc == 0 ? ng_policy_to_text(o->proposed) : NULL;
		if (rc == 0 && !text)
			rc = ng_fail(err, "out of memory");
		if (rc == 0)
			rc = ng_store_promote_policy(ctx->store, digest, text, ng_ctx_now(ctx), ctx->actor,
			                             o->reason, detail, err);
		free(text);
		if (rc == 0 && over_any)
			ng_ctx_note(ctx, "policy", "note: promoted over the guard (forced): the audit log keeps "
			            "the reason and the figures");
	}
	free(detail);
	if (rc < 0) {
		cJSON_Delete(doc);
		return -1;
	}
	*out = doc;
	return 0;
}

const char *ng_promote_install_path(const char *install, bool no_install)
{
	if (no_install)
		return NULL;
	if (install)
		return install;
	/* Where this nodegate reads the enforcing policy from. */
	const char *env = getenv("NODEGATE_POLICY");
	return env && *env ? env : "/etc/nodegate/policy.json";
}
