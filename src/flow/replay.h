/* `nodegate policy replay`: what a proposed policy would have done to the
 * fleet's recorded admission runs and GPU checks, beside what the policy
 * that decided them does when it decides them again the same way (the
 * control), so that a policy replayed against itself differs in nothing.
 * Reads only: nothing is landed, nothing is written to the store.
 * docs/policy-changes.md describes the model. */
#ifndef NODEGATE_FLOW_REPLAY_H
#define NODEGATE_FLOW_REPLAY_H

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/policy.h"
#include "flow/ctx.h"

typedef struct {
	const ng_policy *proposed;
	const char *source; /* where the proposed policy came from, for the output */
	long days;          /* the window: decisions of the last this many days */
	const char *class_key; /* one class, or NULL for all */
} ng_replay_opts;

/* The replay as a JSON model (schema nodegate/replay/1): summary (per
 * outcome: current, proposed, recorded), classes, quarantines added and
 * removed with what later happened to their nodes, changed (one entry per
 * decision that differs, with the decisive metric and values), not_replayed
 * (runs whose own policy the store does not keep, and why), not_re_evaluated
 * (values that differ but that a replay cannot judge again), gpu_checks, and
 * peak_day (per class, the largest share of its nodes the proposed policy
 * quarantines in one day that the current one did not: the promotion
 * guard's figure). */
int ng_flow_replay(const ng_ctx *ctx, const ng_replay_opts *o, cJSON **out, ng_err *err);

#endif
