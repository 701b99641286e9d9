/* Repeat offenders, from the store: the node's quarantines and those of its
 * GPUs (by UUID, on whatever node they were) judged by judge/lemon.h. */
#ifndef NODEGATE_FLOW_LEMON_H
#define NODEGATE_FLOW_LEMON_H

#include "core/policy.h"
#include "judge/lemon.h"
#include "store/store.h"

/* The node's lemon verdict at now. 0, or -1 when the store failed. */
int ng_lemon_of(ng_store *st, const ng_policy *pol, const char *node, int64_t now,
                ng_lemon_verdict *out, ng_err *err);

/* The same for every node with a case, from one read of the cases: nodes[i]
 * (256 bytes each) and out[i], *n of them (both malloc'd; free() them). */
int ng_lemon_all(ng_store *st, const ng_policy *pol, int64_t now, char (**nodes)[256],
                 ng_lemon_verdict **out, size_t *n, ng_err *err);

/* The GPUs a case's evidence blames (the record's GPUs that stood out from
 * their siblings, else the one GPU a record names): up to cap UUIDs copied
 * into uuids (96 bytes each). */
size_t ng_lemon_case_gpus(const char *evidence, char (*uuids)[96], size_t cap);

#endif
