/* Forgetting a GPU taken out of a node on purpose (flow/gpu_forget.h). */
#include "flow/gpu_forget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/gpu.h"
#include "core/json.h"
#include "core/strbuf.h"

/* Which of the node's GPUs `gpu` names: a UUID (exactly, any case) or a
 * PCI bus (normalized). -1 none, -2 more than one. */
static long find(const ng_store_gpu *inv, size_t n, const char *gpu)
{
	char bus[16] = "";
	bool is_bus = ng_gpu_bus_normalize(gpu, bus) == 0;
	long hit = -1;
	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(inv[i].uuid, gpu) != 0 && !(is_bus && strcmp(inv[i].bus, bus) == 0))
			continue;
		if (hit >= 0)
			return -2;
		hit = (long)i;
	}
	return hit;
}

static void known_list(const ng_store_gpu *inv, size_t n, char *out, size_t cap)
{
	ng_strbuf b = {0};
	for (size_t i = 0; i < n && i < 8; i++)
		ng_strbuf_printf(&b, "%s%s at %s", i ? ", " : "", inv[i].uuid, inv[i].bus);
	if (n > 8)
		ng_strbuf_printf(&b, " and %zu more", n - 8);
	snprintf(out, cap, "%s", b.s ? b.s : "none");
	ng_strbuf_free(&b);
}

int ng_gpu_forget(const ng_ctx *ctx, const char *node, const char *gpu, const char *reason,
                  ng_gpu_forgotten *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	if (!ctx || !ctx->store)
		return ng_fail_as(err, NG_ERR_USAGE, "forgetting a GPU needs a store");
	if (!reason || !*reason)
		return ng_fail_as(err, NG_ERR_USAGE, "forgetting a GPU needs a reason");
	ng_store_gpu *inv = NULL;
	size_t n = 0;
	if (ng_store_gpus_of(ctx->store, node, &inv, &n, err) < 0)
		return -1;
	long k = find(inv, n, gpu);
	if (k < 0) {
		char known[600];
		known_list(inv, n, known, sizeof known);
		free(inv);
		if (k == -2)
			return ng_fail_as(err, NG_ERR_USAGE, "\"%s\" names more than one GPU of node %s "
			                  "(known: %s): name it by its UUID", gpu, node, known);
		return ng_fail_as(err, NG_ERR_USAGE, "node %s has no GPU \"%s\" in the inventory "
		                  "(known: %s)", node, gpu, known);
	}
	out->gpu = inv[k];
	free(inv);
	snprintf(out->node, sizeof out->node, "%s", node);
	snprintf(out->reason, sizeof out->reason, "%s", reason);
	snprintf(out->actor, sizeof out->actor, "%s", ctx->actor ? ctx->actor : ng_actor());
	out->at = ng_ctx_now(ctx);
	/* The audit entry keeps the row as it was: what was forgotten, and why. */
	ng_strbuf d = {0};
	ng_strbuf_adds(&d, "{\"uuid\":");
	ng_strbuf_add_json_string(&d, out->gpu.uuid);
	ng_strbuf_adds(&d, ",\"bus\":");
	ng_strbuf_add_json_string(&d, out->gpu.bus);
	ng_strbuf_printf(&d, ",\"minor\":%lld,\"first_seen\":%lld,\"last_seen\":%lld,\"reason\":",
	                 (long long)out->gpu.minor, (long long)out->gpu.first_seen,
	                 (long long)out->gpu.last_seen);
	ng_strbuf_add_json_string(&d, reason);
	ng_strbuf_adds(&d, "}");
	int rc = d.oom ? ng_fail_as(err, NG_ERR_INTERNAL, "out of memory")
	               : ng_store_forget_gpu(ctx->store, node, out->gpu.uuid, out->at, out->actor,
	                                     d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

static cJSON *gpu_json(const ng_store_gpu *g, const char *node)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "node", node);
	cJSON_AddStringToObject(o, "uuid", g->uuid);
	cJSON_AddStringToObject(o, "bus", g->bus);
	cJSON_AddNumberToObject(o, "minor", (double)g->minor);
	ng_json_add_time(o, "first_seen", g->first_seen);
	ng_json_add_time(o, "last_seen", g->last_seen);
	return o;
}

cJSON *ng_gpu_list_json(const ng_store_gpu *gpus, const char (*nodes)[256], size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "gpus");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, gpu_json(&gpus[i], nodes[i]));
	return doc;
}

cJSON *ng_gpu_forgotten_json(const ng_gpu_forgotten *f, const char *node_name)
{
	cJSON *doc = gpu_json(&f->gpu, f->node);
	cJSON_AddStringToObject(doc, "node_name", node_name);
	cJSON_AddStringToObject(doc, "reason", f->reason);
	cJSON_AddStringToObject(doc, "actor", f->actor);
	cJSON_AddNumberToObject(doc, "forgotten_at", (double)f->at);
	cJSON_AddStringToObject(doc, "audit", "gpu.forget");
	return doc;
}
