/* `nodegate policy history`: every policy digest the store has seen (in a
 * decision, a case, a shadow run or a promotion), when it was first and last
 * used, who promoted it and why, and how many admission decisions it made
 * of each kind. */
#ifndef NODEGATE_FLOW_POLICY_HISTORY_H
#define NODEGATE_FLOW_POLICY_HISTORY_H

#include <cjson/cJSON.h>

#include "flow/ctx.h"

/* {"enforcing": digest, "shadow": digest|null, "policies": [{version,
 * first_used, last_used, kept_since, text_kept, promoted_by, promoted_at,
 * promote_reason, decisions: {outcome: n}, total}]}, oldest first. */
int ng_flow_policy_history(const ng_ctx *ctx, cJSON **out, ng_err *err);

#endif
