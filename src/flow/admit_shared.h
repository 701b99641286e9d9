/* Which of the class's nodes share a judged node's drop (admit_shared.c). */
#ifndef NODEGATE_FLOW_ADMIT_SHARED_H
#define NODEGATE_FLOW_ADMIT_SHARED_H

#include <cjson/cJSON.h>

#include "flow/admit.h"

typedef struct {
	size_t peers;   /* the class's other nodes screened since */
	size_t sharing; /* of those, the ones whose newest run shares the drop */
} ng_admit_sharing;

/* Counts the class's other nodes (same software identity) whose newest run
 * of j's metric taken at or after `since` is under their own usual level by
 * (the class baseline for a node with none) by as much as ng_drop_shared
 * asks of j's drop, and appends their ids to
 * `names` when it is not NULL. */
int ng_admit_sharing_peers(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                           const struct ng_admit_judged *j, int64_t since, cJSON *names,
                           ng_admit_sharing *out, ng_err *err);

#endif
