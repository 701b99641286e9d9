/* Releasing a quarantined node to probation (flow/release.h). */
#include "flow/release.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "flow/lemon.h"
#include "land/kube.h"
#include "land/slurm.h"
#include "store/probation.h"

static const char VERB[] = "release";

/* A store call failed: whatever class the layer below gave, it is the store's. */
static int store_failed(ng_err *err)
{
	if (err)
		err->code = NG_ERR_STORE;
	return -1;
}

cJSON *ng_release_resume_slurm(const ng_ctx *ctx, const ng_store_case *c, const char *node,
                               const char *by, int64_t now, bool *unaudited)
{
	ng_slurm_opts o = {.node = node, .resume_case = c->id};
	ng_slurm_result res;
	ng_err lerr = {0}, err;
	int lrc = ng_slurm_resume(&o, &res, &lerr);
	char *text = ng_slurm_result_json(&res, "resume");
	cJSON *d = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!d)
		d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "case", (double)c->id);
	cJSON_AddStringToObject(d, "result", lrc == 0 ? "done" : lrc == 1 ? "left-alone" : "failed");
	if (lrc < 0) {
		cJSON_ReplaceItemInObject(d, "message", cJSON_CreateString(lerr.msg));
		ng_ctx_note(ctx, VERB, "the case is closed, but the node was not resumed: %s", lerr.msg);
	} else if (lrc == 1) {
		ng_ctx_note(ctx, VERB, "the case is closed; the node is left drained: %s", res.message);
	}
	char *detail = cJSON_PrintUnformatted(d);
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", c->node);
	if (!detail ||
	    ng_store_audit(ctx->store, false, now, by, "land.resume", subject, detail, &err) < 0) {
		ng_ctx_note(ctx, VERB, "audit entry for the resume not written: %s",
		            detail ? err.msg : "out of memory");
		*unaudited = true;
	}
	cJSON_free(detail);
	return d;
}

/* Kubernetes: the node's probation taint, lifting nodegate's own cordon. A
 * failed step leaves the store's probation as it is: a note says how to
 * land it again. */
static void kube_probation(const ng_ctx *ctx, const ng_release_request *req,
                           const ng_store_case *c, const char *node)
{
	if (!ng_kube_node_ok(node)) {
		ng_ctx_note(ctx, VERB, "\"%s\" is not a Kubernetes node name: nothing landed (--node "
		                       "names it)",
		            node);
		return;
	}
	ng_kube_opts o = {.out = req->land_log ? req->land_log : stdout};
	if (ng_kube_probation(node, (long long)c->id, &o) != 0)
		ng_ctx_note(ctx, VERB, "the node is on probation in the store, but a kubectl step "
		                       "failed (above): `nodegate kube probation %s --case %lld` again",
		            node, (long long)c->id);
}

/* The reason kept with the case, prefixed by how it was released. 0, or 1
 * when the condition does not hold. */
static int why_of(const ng_release_request *req, const ng_store_case *c, long needed,
                  char *why, size_t cap)
{
	if (req->manual) {
		snprintf(why, cap, "manual release: %s", req->reason);
		return 0;
	}
	if (c->passes < needed)
		return 1;
	char opened[32];
	ng_format_time(c->opened_at, opened);
	snprintf(why, cap, "%" PRId64 " passing run%s of %s since %s%s%s", c->passes,
	         c->passes == 1 ? "" : "s", c->metric, opened, req->reason ? "; " : "",
	         req->reason ? req->reason : "");
	return 0;
}

/* A forced lemon's release says so in its audit entry. */
static void lemon_detail(const ng_lemon_verdict *lemon, char *detail, size_t cap)
{
	detail[0] = '\0';
	if (!lemon->lemon)
		return;
	cJSON *d = cJSON_CreateObject();
	cJSON_AddBoolToObject(d, "forced", true);
	cJSON_AddStringToObject(d, "lemon", lemon->why);
	char *t = cJSON_PrintUnformatted(d);
	cJSON_Delete(d);
	if (t && strlen(t) < cap)
		memcpy(detail, t, strlen(t) + 1);
	cJSON_free(t);
}

int ng_release(const ng_ctx *ctx, const ng_release_request *req, ng_release_result *out,
               ng_err *err)
{
	memset(out, 0, sizeof *out);
	if (!ctx || !ctx->store || !req || !req->node)
		return ng_fail_as(err, NG_ERR_USAGE, "a release needs a store and a node");
	const char *by = req->by ? req->by : ctx->actor ? ctx->actor : ng_actor();
	if ((req->manual || req->force) && (!req->by || !*req->by || !req->reason || !*req->reason))
		return ng_fail_as(err, NG_ERR_USAGE, "a manual or forced release must say who decided "
		                                     "it and why");
	ng_store *st = ctx->store;
	/* NODE is the stable id or the scheduler name; the case is the id's. */
	ng_store_node_ref ref;
	int r = ng_store_resolve_node(st, req->node, &ref, err);
	if (r < 0)
		return store_failed(err);
	if (r == 2) /* never guess between two nodes: the wrong one would be released */
		return ng_fail_as(err, NG_ERR_USAGE, "\"%s\" names more than one node: %s; name one "
		                  "by its id", req->node, ref.candidates);
	snprintf(out->node, sizeof out->node, "%s", ref.id);
	out->passes_needed = ctx->policy.release_passes;
	r = ng_store_open_case_of(st, out->node, &out->opened, err);
	if (r < 0)
		return store_failed(err);
	if (r == 0) {
		out->state = NG_RELEASE_NO_CASE;
		return 0;
	}
	const ng_store_case *c = &out->opened;
	char why[256];
	if (why_of(req, c, out->passes_needed, why, sizeof why)) {
		out->state = NG_RELEASE_NOT_YET;
		return 0;
	}
	int64_t now = ng_ctx_now(ctx);
	if (ng_lemon_of(st, &ctx->policy, out->node, now, &out->lemon, err) < 0)
		return store_failed(err);
	if (out->lemon.lemon && !req->force) {
		out->state = NG_RELEASE_LEMON;
		return 0;
	}
	char detail[640];
	lemon_detail(&out->lemon, detail, sizeof detail);
	if (ng_store_release_to_probation(st, c->id, now, by, why, detail, err) < 0)
		return store_failed(err);
	out->state = NG_RELEASED;
	const char *land_node = req->land_node ? req->land_node
	                        : c->node_name[0] ? c->node_name
	                                          : req->node;
	if (req->land == NG_RELEASE_LAND_SLURM && !ctx->no_land)
		out->landing = ng_release_resume_slurm(ctx, c, land_node, by, now, &out->landing_unaudited);
	if (req->land == NG_RELEASE_LAND_KUBE && !ctx->no_land)
		kube_probation(ctx, req, c, land_node);
	if (out->landing_unaudited)
		return 0;
	r = ng_store_get_case(st, c->id, &out->closed, err);
	if (r < 0)
		return store_failed(err);
	if (r == 0)
		return ng_fail_as(err, NG_ERR_STORE, "case %" PRId64 " is gone after its release",
		                  c->id);
	out->have_closed = true;
	return 0;
}

void ng_release_result_release(ng_release_result *r)
{
	if (!r)
		return;
	ng_store_case_free(&r->opened);
	if (r->have_closed)
		ng_store_case_free(&r->closed);
	cJSON_Delete(r->landing);
	r->landing = NULL;
	r->have_closed = false;
}

cJSON *ng_release_result_json(const ng_ctx *ctx, const ng_release_result *r, bool manual)
{
	const ng_store_case *c1 = &r->closed;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "node", c1->node);
	cJSON_AddStringToObject(o, "node_name", c1->node_name);
	cJSON_AddNumberToObject(o, "case", (double)c1->id);
	cJSON_AddBoolToObject(o, "manual", manual);
	cJSON_AddNumberToObject(o, "passes", (double)c1->passes);
	cJSON_AddNumberToObject(o, "passes_needed", (double)r->passes_needed);
	cJSON_AddNumberToObject(o, "retries", (double)c1->retries);
	cJSON_AddNumberToObject(o, "closed_at", (double)c1->closed_at);
	cJSON_AddStringToObject(o, "closed_by", c1->closed_by);
	cJSON_AddStringToObject(o, "close_reason", c1->close_reason);
	cJSON_AddStringToObject(o, "state", "probation");
	cJSON_AddStringToObject(o, "canary_job", ctx->policy.canary_job);
	cJSON_AddBoolToObject(o, "forced_lemon", r->lemon.lemon);
	if (r->landing)
		cJSON_AddItemToObject(o, "landing", cJSON_Duplicate(r->landing, true));
	return o;
}
