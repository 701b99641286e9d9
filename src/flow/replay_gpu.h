/* A replay's GPU checks (docs/policy-changes.md): each GPU check run of the
 * window whose readings the store keeps (schema 13) judged again from them,
 * under the policy that judged it (the control) and under the proposed
 * one, by the live check's own functions (flow/gpu_readings.h). Runs kept
 * without readings are counted and named as such, never as unchanged.
 * Internal to the replay. */
#ifndef NODEGATE_FLOW_REPLAY_GPU_H
#define NODEGATE_FLOW_REPLAY_GPU_H

#include <cjson/cJSON.h>

#include "flow/replay.h"
#include "store/store.h"

/* The policy a run names by its digest, read from its kept text: NULL with
 * *why set when the store cannot give it back. */
typedef const ng_policy *(*ng_replay_own_policy)(void *arg, const char *digest,
                                                  const char **why);

/* Adds "gpu_checks" to doc and "drained" to doc's "summary". */
int ng_replay_gpu_checks(ng_store *st, const ng_replay_opts *o, int64_t since,
                         const ng_policy *enforcing, ng_replay_own_policy own, void *arg,
                         cJSON *doc, ng_err *err);

#endif
