/* Building a class baseline from the store's accepted runs, and finding the
 * one to judge against: shared by `nodegate baseline build` and `admit`. */
#ifndef NODEGATE_FLOW_CLASS_BASELINE_H
#define NODEGATE_FLOW_CLASS_BASELINE_H

#include <stdbool.h>

#include "core/policy.h"
#include "judge/admit.h"
#include "judge/baseline.h"
#include "store/store.h"

/* The status a baseline row carries: "ok" or the refusal's short name
 * ("too-few-nodes", "too-few-repeats", "no-spread", "invalid-run"). */
const char *ng_baseline_status_name(ng_baseline_status s);

/* The policy's baseline of runs as the row the store keeps, named by key,
 * built at now from the window [since, newest] (newest: the newest run's
 * time; now when there are none). Stores nothing. Returns the status, or -1
 * (out of memory). Admission's classes and the fabric's topologies share it. */
int ng_baseline_row_build(const ng_policy *pol, const ng_baseline_run *runs, size_t n,
                          const char *class_key, const char *software, const char *metric,
                          const char *unit, int64_t now, int64_t since, int64_t newest,
                          ng_store_baseline *out, ng_err *err);

/* Builds and stores the baseline of one (class, software, metric) from the
 * accepted idle runs of the policy's window before now. A refusal is stored
 * only when keep_refusal (so `baseline show` says the class is
 * establishing); out gets the row either way (id 0 when not stored). */
int ng_class_baseline_build(ng_store *st, const ng_policy *pol, const char *class_key,
                            const char *software, const char *metric, const char *unit,
                            int64_t now, const char *actor, bool keep_refusal,
                            ng_store_baseline *out, ng_err *err);

/* The baseline to judge a run of this key against: the current pinned or
 * built one when it is younger than the policy's maximum age (pinned ones
 * never age), else a fresh build. 1 with out an "ok" baseline; 0 when the
 * class has none (out holds the refusal: establishing, and why); -1 error. */
int ng_class_baseline_for(ng_store *st, const ng_policy *pol, const char *class_key,
                          const char *software, const char *metric, const char *unit,
                          int64_t now, const char *actor, ng_store_baseline *out, ng_err *err);

/* The pooled spread of a small class's family (admission.family_parts): the
 * newest "ok" baseline of the metric of every class of the family large
 * enough for an ordinary baseline (its parent classes: the same hardware
 * under other software), built within two baseline ages before now or
 * pinned. The pool is empty (df 0) when the class has no family or its
 * family no baseline; family gets the family key ("" when none). */
int ng_class_family_pool(ng_store *st, const ng_policy *pol, const char *class_key,
                         const char *metric, int64_t now, ng_admit_pool *pool,
                         char family[256], ng_err *err);

#endif
