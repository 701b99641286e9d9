/* A policy in shadow beside the enforcing one (docs/policy-changes.md):
 * evaluated on every admission and GPU check, its would-be outcome kept in
 * the store (shadow_outcomes) and counted by `nodegate metrics`, the report
 * and `nodegate policy shadow`, never landed. Any policy value, floor or
 * health rule runs in shadow as a whole policy file that differs in it.
 *
 * The two hooks are one call each in the admission and GPU-check flows,
 * after the enforcing outcome is known; with no shadow policy they read one
 * row and return. A failure is the caller's note: it never changes the
 * enforcing outcome, the exit status or what is landed. */
#ifndef NODEGATE_FLOW_SHADOW_H
#define NODEGATE_FLOW_SHADOW_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "core/gpu.h"
#include "core/policy.h"
#include "flow/ctx.h"
#include "judge/admit.h"
#include "judge/gpu_health.h"
#include "store/store.h"

/* One admission run as the enforcing policy judged it. */
typedef struct {
	const char *node, *class_key, *run_id;
	int64_t at;
	const ng_admit_result *first, *confirm; /* the run's results per stage */
	size_t n_first, n_confirm;
	const char *enforced; /* the outcome landed ("quarantined", ...) */
} ng_shadow_admit;

int ng_shadow_admission(ng_store *st, const ng_shadow_admit *a, ng_err *err);

/* One GPU check with what its health rules read. */
typedef struct {
	const char *node, *mode; /* the node's scheduler name, epilog|prolog|health */
	int64_t at;
	const ng_gpu_snapshot *snap;
	const ng_gpu_history *history;
	size_t n_history;
	bool enforced_drain;
} ng_shadow_gpu;

int ng_shadow_gpu_check(ng_store *st, const ng_shadow_gpu *g, ng_err *err);

/* Sets a policy in shadow from now (ctx's clock and actor); its text is
 * kept under its digest. */
int ng_flow_shadow_set(const ng_ctx *ctx, const ng_policy *pol, const char *reason, ng_err *err);
/* Ends the shadow run: 1 ended, 0 there was none. */
int ng_flow_shadow_clear(const ng_ctx *ctx, const char *reason, ng_err *err);

/* The shadow run as JSON: the policy (null when none), when and by whom it
 * was set, and over the outcomes since `since` (of the shadow policy
 * `policy`, or of any when NULL, each named): evaluations per kind, would-be quarantines and drains per rule
 * and class ("would": [{kind, class, rule, outcome, count, enforcing_did}]),
 * and per class the day the most nodes would have been out that the
 * enforcing policy kept in (peak_day: nodes, added, share, day). */
int ng_flow_shadow_summary(ng_store *st, int64_t since, const char *policy, cJSON **out,
                           ng_err *err);

/* The summary of the last days of outcomes, of any shadow policy, at ctx's
 * clock: what `nodegate policy shadow` shows. */
int ng_flow_shadow_show(const ng_ctx *ctx, long days, cJSON **out, ng_err *err);

#endif
