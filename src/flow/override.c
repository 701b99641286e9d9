/* An override (flow/override.h). */
#include "flow/override.h"

#include <stdio.h>
#include <string.h>

ng_override_expiry ng_override_check_expiry(int64_t now, int64_t until)
{
	if (until <= now)
		return NG_OVERRIDE_EXPIRY_PAST;
	if (until - now > (int64_t)NG_OVERRIDE_MAX_DAYS * 86400)
		return NG_OVERRIDE_EXPIRY_TOO_FAR;
	return NG_OVERRIDE_EXPIRY_OK;
}

int ng_override_record(const ng_ctx *ctx, const ng_override_request *req,
                       ng_override_result *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	/* An override is the stable id's, whichever name NODE gave. */
	int r = ng_store_resolve_node(ctx->store, req->node, &out->ref, err);
	if (r < 0) {
		if (err)
			err->code = NG_ERR_STORE;
		return -1;
	}
	if (r == 2) /* never guess between two nodes */
		return ng_fail_as(err, NG_ERR_USAGE, "\"%s\" names more than one node: %s; name one "
		                  "by its id", req->node, out->ref.candidates);
	ng_store_override *o = &out->o;
	snprintf(o->node, sizeof o->node, "%s", out->ref.id);
	snprintf(o->reason, sizeof o->reason, "%s", req->reason);
	snprintf(o->by, sizeof o->by, "%s", req->by);
	o->created_at = req->created_at;
	o->expires_at = req->expires_at;
	if (ng_store_put_override(ctx->store, o, err) < 0) {
		if (err)
			err->code = NG_ERR_STORE;
		return -1;
	}
	return 0;
}

cJSON *ng_override_json(const ng_override_result *r)
{
	const ng_store_override *o = &r->o;
	cJSON *d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "id", (double)o->id);
	cJSON_AddStringToObject(d, "node", o->node);
	cJSON_AddStringToObject(d, "node_name", r->ref.name);
	cJSON_AddStringToObject(d, "reason", o->reason);
	cJSON_AddStringToObject(d, "by", o->by);
	cJSON_AddNumberToObject(d, "created_at", (double)o->created_at);
	cJSON_AddNumberToObject(d, "expires_at", (double)o->expires_at);
	return d;
}
