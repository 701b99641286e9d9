/* The public release of a quarantined node (include/nodegate/nodegate.h),
 * over flow/release.h. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "flow/release.h"

_Static_assert((int)NODEGATE_RELEASED == (int)NG_RELEASED &&
                   (int)NODEGATE_RELEASE_NO_CASE == (int)NG_RELEASE_NO_CASE &&
                   (int)NODEGATE_RELEASE_NOT_YET == (int)NG_RELEASE_NOT_YET &&
                   (int)NODEGATE_RELEASE_LEMON == (int)NG_RELEASE_LEMON,
               "the public release states are flow/release.h's");

static const char *landing_of(const cJSON *landing)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(landing, "result");
	if (!cJSON_IsString(r))
		return "";
	/* The flow's words, as static text. */
	static const char *const words[] = {"done", "left-alone", "failed"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (strcmp(r->valuestring, words[i]) == 0)
			return words[i];
	return "";
}

int nodegate_release(nodegate_ctx *c, const nodegate_release_request *req,
                     nodegate_release_result *out, nodegate_error *eout)
{
	if (!c || !req || !req->node || !*req->node || !out)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE, "no context, node or result to fill");
	memset(out, 0, sizeof *out);
	out->landing = "";
	if (!c->ctx.store)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE,
		                      "a release needs a store: nodegate_ctx_open_store first");
	/* What the store keeps: a closer of at most 63 characters, a reason that
	 * fits with the words saying how the case was released. */
	if ((req->by && (!*req->by || strlen(req->by) > 63)) ||
	    (req->reason && (!*req->reason || strlen(req->reason) > 200)))
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE,
		                      "by must be 1 to 63 characters and reason 1 to 200");
	ng_release_request q = {.node = req->node, .by = req->by, .reason = req->reason,
	                        .manual = req->manual != 0, .force = req->force != 0,
	                        .land = req->land_slurm ? NG_RELEASE_LAND_SLURM
	                                                : NG_RELEASE_LAND_NONE,
	                        .land_node = req->land_node};
	ng_release_result r;
	ng_err err = {0};
	if (ng_release(&c->ctx, &q, &r, &err) < 0) {
		ng_release_result_release(&r);
		return ng_api_fail(eout, &err);
	}
	out->state = (nodegate_release_state)r.state;
	snprintf(out->node, sizeof out->node, "%s", r.node);
	out->passes_needed = r.passes_needed;
	if (r.state != NG_RELEASE_NO_CASE) {
		out->case_id = r.opened.id;
		out->passes = r.opened.passes;
		out->runs = r.opened.retries;
		snprintf(out->metric, sizeof out->metric, "%s", r.opened.metric);
	}
	if (r.state == NG_RELEASE_LEMON)
		snprintf(out->reason, sizeof out->reason, "%s", r.lemon.why);
	else if (r.have_closed)
		snprintf(out->reason, sizeof out->reason, "%s", r.closed.close_reason);
	out->landing = landing_of(r.landing);
	out->landing_unaudited = r.landing_unaudited;
	ng_release_result_release(&r);
	return 0;
}
