/* The topologies' baselines of nccl.all_reduce.busbw (flow/fabric.h).
 *
 * A topology ("CLASS/8node/8rail") is a class as admission's are: its
 * accepted records (the passing all-reduces of fabric_run.c's
 * ng_fabric_store) build its baseline through the same builder
 * (flow/class_baseline.c over judge/baseline.c: the median of per-node
 * medians, a MAD spread, the policy's minimum of nodes and window), and the
 * same rule keeps it: the current one while younger than the policy's
 * maximum age, else a fresh build. A record's node is the first node of its
 * test, so a topology's "nodes" are its distinct first nodes: the groups of
 * a bisection (disjoint), or a candidate's pairs (one unit per candidate). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "flow/class_baseline.h"
#include "flow/fabric.h"

#define METRIC "nccl.all_reduce.busbw"

int ng_fabric_load_baselines(const ng_ctx *ctx, ng_fabric_opts *o, const size_t *sizes,
                             size_t n_sizes, bool per_rail, ng_err *err)
{
	if (o->expect_busbw > 0 || !ctx->store)
		return 0;
	for (int rail = 0; rail <= (per_rail ? 1 : 0); rail++) {
		for (size_t i = 0; i < n_sizes && o->n_baselines < NG_FABRIC_MAX_BASELINES; i++) {
			struct ng_fabric_baseline *b = &o->baselines[o->n_baselines++];
			b->nodes = sizes[i];
			b->one_rail = rail == 1;
			b->median = NAN;
			ng_fabric_topology_key(o, sizes[i], rail ? "one" : NULL, b->key, sizeof b->key);
			ng_store_baseline sb;
			int got = ng_class_baseline_for(ctx->store, &ctx->policy, b->key, "", METRIC, "GB/s",
			                                ng_ctx_now(ctx), ctx->actor, &sb, err);
			if (got < 0)
				return -1;
			if (got == 1 && sb.median > 0)
				b->median = sb.median;
		}
	}
	return 0;
}

int ng_fabric_build_baselines(const ng_ctx *ctx, const ng_fabric_opts *o, const cJSON *results,
                              cJSON *out, ng_err *err)
{
	(void)o;
	if (!ctx->store)
		return 0;
	const char *done[256];
	size_t n_done = 0;
	for (const cJSON *r = results ? results->child : NULL; r; r = r->next) {
		const cJSON *key = ng_json_get(r, "topology");
		if (!cJSON_IsTrue(ng_json_get(r, "accepted")) || !cJSON_IsString(key))
			continue;
		bool seen = false;
		for (size_t i = 0; i < n_done && !seen; i++)
			seen = strcmp(done[i], key->valuestring) == 0;
		if (seen || n_done == sizeof done / sizeof done[0])
			continue;
		done[n_done++] = key->valuestring;
		const cJSON *unit = ng_json_get(ng_json_get(r, "record"), "unit");
		ng_store_baseline sb;
		int got = ng_class_baseline_for(ctx->store, &ctx->policy, key->valuestring, "", METRIC,
		                                cJSON_IsString(unit) ? unit->valuestring : "GB/s",
		                                ng_ctx_now(ctx), ctx->actor, &sb, err);
		if (got < 0)
			return -1;
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "topology", key->valuestring);
		cJSON_AddStringToObject(b, "status", got == 1 ? "ok" : sb.status[0] ? sb.status : "none");
		ng_json_add_number(b, "median", got == 1 ? sb.median : NAN);
		cJSON_AddNumberToObject(b, "nodes", (double)sb.n_nodes);
		cJSON_AddNumberToObject(b, "runs", (double)sb.n_runs);
		cJSON_AddItemToArray(out, b);
	}
	return 0;
}
