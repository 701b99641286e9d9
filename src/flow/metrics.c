/* The store's state as Prometheus text (flow/metrics.h). */
#include "flow/metrics.h"

#include <stdio.h>
#include <stdlib.h>

#include "collect/identity.h"
#include "flow/lemon.h"

static int store_failed(ng_err *err)
{
	if (err)
		err->code = NG_ERR_STORE;
	return -1;
}

int ng_flow_metrics(const ng_ctx *ctx, ng_metrics_scope scope, const char *node,
                    ng_strbuf *out, ng_err *err)
{
	ng_store *st = ctx->store;
	/* The node as the GPU checks keep it: its stable id (docs/naming.md). */
	char id[256] = "", name[128];
	if (scope == NG_METRICS_NODE && !node) {
		ng_node_names(id, sizeof id, name, sizeof name);
		node = id;
	} else if (node) {
		/* --node takes the id or the scheduler name, as every NODE does. */
		ng_store_node_ref ref;
		int found = ng_store_resolve_node(st, node, &ref, err);
		if (found < 0)
			return store_failed(err);
		if (found == 2)
			return ng_fail_as(err, NG_ERR_USAGE, "%s names more than one node: %s", node,
			                  ref.candidates);
		snprintf(id, sizeof id, "%s", ref.id);
		node = id;
	}
	int64_t now = ng_ctx_now(ctx);
	if (ng_metrics_render_scope(st, now, scope, node, out, err) < 0)
		return store_failed(err);
	if (scope == NG_METRICS_NODE)
		return 0;
	/* Probation and repeat offenders are the fleet's, judged by the policy. */
	char(*lemon_nodes)[256] = NULL;
	ng_lemon_verdict *lemons = NULL;
	size_t n_lemons = 0;
	int rc = ng_lemon_all(st, &ctx->policy, now, &lemon_nodes, &lemons, &n_lemons, err);
	if (rc == 0)
		rc = ng_metrics_render_repeat(st, (const char(*)[256])lemon_nodes, lemons, n_lemons,
		                              out, err);
	free(lemon_nodes);
	free(lemons);
	return rc < 0 ? store_failed(err) : 0;
}
