/* A replay's gate (docs/policy-changes.md): where the proposed policy
 * differs from the one that decided a run in a value the gate reads
 * (gate.*, admission.cohort_window_hours and cohort_local_minutes), each
 * verdict line of the run is judged again by the gate (judge/gate.h through
 * judge/record.h), under both policies, from what the store keeps of what
 * it judged: the record (records, by the line's record id), the class
 * baseline (baselines: the one of the key built by then with the line's
 * median) and the cohort as it stood (each other node's newest run stored
 * before the run's record). The control must give the recorded verdict:
 * where it does not, or where the record or baseline is gone, the line
 * keeps its recorded verdict under both policies and the reason is
 * counted. Internal to the replay. */
#ifndef NODEGATE_FLOW_REPLAY_GATE_H
#define NODEGATE_FLOW_REPLAY_GATE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/policy.h"
#include "core/verdict.h"
#include "store/policies.h"

typedef struct ng_replay_gate ng_replay_gate;

ng_replay_gate *ng_replay_gate_new(const ng_policy *proposed);
void ng_replay_gate_free(ng_replay_gate *g);

/* Whether the gate reads the policy value param. */
bool ng_replay_gate_reads(size_t param);
/* Whether own and the proposed policy differ in a value the gate reads. */
bool ng_replay_gate_needed(ng_replay_gate *g, const ng_policy *own);

/* Line l of decision d judged again: 1 with *cur (under own) and *prop set;
 * 0 when it cannot be (the reason counted); -1 with err. */
int ng_replay_gate_line(ng_replay_gate *g, ng_store *st, const ng_store_replay_decision *d,
                        const ng_store_replay_line *l, const ng_policy *own, ng_verdict recorded,
                        ng_verdict *cur, ng_verdict *prop, ng_err *err);

/* Adds "gate" to doc: the values judged again, lines judged again, verdicts
 * that change, and the lines that could not be, by reason. */
int ng_replay_gate_report(const ng_replay_gate *g, cJSON *doc);

#endif
