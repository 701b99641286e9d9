/* The store's state as Prometheus text (`nodegate metrics`): what
 * land/metrics.c renders for a scope, and for the fleet the probation and
 * repeat-offender series the policy judges. */
#ifndef NODEGATE_FLOW_METRICS_H
#define NODEGATE_FLOW_METRICS_H

#include "core/strbuf.h"
#include "flow/ctx.h"
#include "land/metrics.h"

/* Appends the text for scope to out, from ctx's store at ctx's clock. node
 * (NG_METRICS_NODE only) is the node's stable id or scheduler name; NULL:
 * this node, as the GPU checks keep it. 0, or -1 with err: NG_ERR_USAGE
 * when node names two nodes ("NODE names more than one node: ID, ID"),
 * NG_ERR_STORE for anything else. */
int ng_flow_metrics(const ng_ctx *ctx, ng_metrics_scope scope, const char *node,
                    ng_strbuf *out, ng_err *err);

#endif
