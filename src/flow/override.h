/* An override (`nodegate override`): an operator's named, expiring
 * exception for one node. Until it expires, a node admission would
 * quarantine or hold as suspect is admitted with a warning instead. */
#ifndef NODEGATE_FLOW_OVERRIDE_H
#define NODEGATE_FLOW_OVERRIDE_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "flow/ctx.h"
#include "store/store.h"

/* The longest an override may run. Fixed, not policy: an exception that
 * outlives a quarter is a policy change, and belongs in the policy file. */
#define NG_OVERRIDE_MAX_DAYS 90

typedef enum {
	NG_OVERRIDE_EXPIRY_OK,
	NG_OVERRIDE_EXPIRY_PAST,    /* until is not after now */
	NG_OVERRIDE_EXPIRY_TOO_FAR, /* more than NG_OVERRIDE_MAX_DAYS ahead */
} ng_override_expiry;

/* Whether an override made at now may end at until. */
ng_override_expiry ng_override_check_expiry(int64_t now, int64_t until);

typedef struct {
	const char *node;   /* NODE as given: its stable id or its scheduler name */
	const char *reason; /* each fits the store's field */
	const char *by;
	int64_t created_at, expires_at; /* checked by ng_override_check_expiry */
} ng_override_request;

typedef struct {
	ng_store_override o;  /* as stored: o.node is the stable id, o.id its row */
	ng_store_node_ref ref; /* the node NODE named */
} ng_override_result;

/* Records the override in ctx's store under the stable id req->node names.
 * 0 with *out; -1 with err: NG_ERR_USAGE when NODE names two nodes,
 * NG_ERR_STORE. */
int ng_override_record(const ng_ctx *ctx, const ng_override_request *req,
                       ng_override_result *out, ng_err *err);
/* {id, node, node_name, reason, by, created_at, expires_at}. */
cJSON *ng_override_json(const ng_override_result *r);

#endif
