/* Workload floors derived from a class's pinned baselines (`nodegate floors
 * suggest`): F x the median of the newest pinned baseline of each metric,
 * for an operator to review and put in the policy. Nothing is changed. */
#ifndef NODEGATE_FLOW_FLOORS_SUGGEST_H
#define NODEGATE_FLOW_FLOORS_SUGGEST_H

#include <cjson/cJSON.h>

#include "flow/ctx.h"
#include "store/store.h"

typedef struct {
	double floor;          /* fraction x the baseline's median, in its unit */
	ng_store_baseline from; /* the pinned baseline it came from */
} ng_floor_suggestion;

/* The suggestions for class_key (only baselines of software, unless NULL)
 * at 0 < fraction <= 1, one per metric, newest pin first: *out malloc'd
 * (free it), *n of them, 0 when the class has no usable pinned baseline.
 * 0, or -1 with err (NG_ERR_STORE; NG_ERR_INTERNAL out of memory). */
int ng_floors_suggest(const ng_ctx *ctx, const char *class_key, const char *software,
                      double fraction, ng_floor_suggestion **out, size_t *n, ng_err *err);

/* The suggestions as `nodegate floors suggest --json` prints them: {class,
 * fraction, policy: {floors: {metric: floor}} (the section to review and
 * commit), from: [{metric, unit, floor, baseline, pinned, software, median,
 * nodes}] (what each floor came from)}. */
cJSON *ng_floors_suggest_json(const char *class_key, double fraction,
                              const ng_floor_suggestion *sug, size_t n);

#endif
