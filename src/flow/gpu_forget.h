/* Forgetting a GPU taken out of a node on purpose.
 *
 * The GPU checks keep each node's GPUs between checks (the store's
 * gpu_inventory): a GPU the node had and NVML no longer lists is
 * `gpu.missing`, fatal, a drain. That is right for a GPU fallen off the bus
 * and wrong for one an operator pulled: forgetting it removes its row, with
 * an audit entry naming who and why, so the next check starts from the GPUs
 * the node has now. */
#ifndef NODEGATE_FLOW_GPU_FORGET_H
#define NODEGATE_FLOW_GPU_FORGET_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "flow/ctx.h"
#include "store/store.h"

typedef struct {
	ng_store_gpu gpu; /* the row as it was */
	char node[256];
	char reason[256];
	char actor[128];
	int64_t at;
} ng_gpu_forgotten;

/* Forgets the GPU of node (the store's id) that gpu names: its UUID, or
 * its PCI bus in any form NVML, lspci or the kernel write it. ctx->store is
 * the store; reason is required. 0 with *out; -1 with err: NG_ERR_USAGE
 * when the node has no such GPU (the message lists those it has) or the
 * bus names more than one, NG_ERR_STORE on a store failure. */
int ng_gpu_forget(const ng_ctx *ctx, const char *node, const char *gpu, const char *reason,
                  ng_gpu_forgotten *out, ng_err *err);

/* What `nodegate gpus` prints as JSON: the GPUs kept (gpus[i] of nodes[i]),
 * {"gpus": [{node, uuid, bus, minor, first_seen, last_seen}...]}, and one
 * GPU forgotten, that row with the node's scheduler name, the reason, the
 * actor, the time and the audit entry's action. */
cJSON *ng_gpu_list_json(const ng_store_gpu *gpus, const char (*nodes)[256], size_t n);
cJSON *ng_gpu_forgotten_json(const ng_gpu_forgotten *f, const char *node_name);

#endif
