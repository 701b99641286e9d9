/* What a replay counts as it walks the decisions, and the JSON it makes of
 * them (flow/replay.h describes the document). Internal to the replay. */
#ifndef NODEGATE_FLOW_REPLAY_MODEL_H
#define NODEGATE_FLOW_REPLAY_MODEL_H

#include <cjson/cJSON.h>

#include "flow/redecide.h"
#include "flow/replay.h"
#include "store/policies.h"

typedef struct ng_replay_model ng_replay_model;

/* One decision decided again under both policies. results[i] and the two
 * lines of it under each policy, first stage first. */
typedef struct {
	const ng_store_replay_decision *d;
	const ng_redecision *cur, *prop;
	const ng_admit_result *results;          /* as the run's own policy sees them */
	const ng_admit_result *results_proposed; /* the same, the gate judged under the proposed */
	size_t n_results, n_first;
	const ng_admit_line *cur_line, *prop_line;
	const ng_policy *own, *proposed;
} ng_replay_decided;

ng_replay_model *ng_replay_model_new(const ng_replay_opts *o, const char *proposed_digest,
                                     int64_t since, int64_t until, const ng_policy *enforcing);
/* A decision its own policy cannot decide again, and why: never unchanged. */
int ng_replay_model_unreplayed(ng_replay_model *m, const ng_store_replay_decision *d,
                               const char *why);
int ng_replay_model_add(ng_replay_model *m, const ng_replay_decided *dd);
/* After the walk: what later happened to the changed nodes and the peak
 * day (the GPU checks are flow/replay_gpu.h's). */
int ng_replay_model_finish(ng_replay_model *m, ng_store *st, ng_err *err);
cJSON *ng_replay_model_take(ng_replay_model *m);
void ng_replay_model_free(ng_replay_model *m);

#endif
