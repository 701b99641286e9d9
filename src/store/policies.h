/* Policies the store has seen (schema 10): each policy's text under its
 * digest, who promoted it, the one running in shadow beside the enforcing
 * policy, what that shadow would have done, and the reads a replay of the
 * recorded decisions needs (docs/policy-changes.md). */
#ifndef NODEGATE_STORE_POLICIES_H
#define NODEGATE_STORE_POLICIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* ng_store_set_policy, and the policy's text (core/policy_json.h): written
 * under the digest with the first decision or case this handle writes, so a
 * replay can decide again with it. text NULL keeps no text. */
void ng_store_set_policy_text(ng_store *st, const char *digest, const char *text);
/* Keeps a policy's text now, in a transaction of its own (a policy set in
 * shadow, or promoted, before it decided anything). */
int ng_store_put_policy_text(ng_store *st, const char *digest, const char *text, int64_t at,
                             ng_err *err);

typedef struct {
	const char *digest, *body;
	int64_t first_seen;
	const char *promoted_by, *promote_reason;
	int64_t promoted_at;
} ng_store_policy_row;

/* Every kept policy, oldest first; fn non-zero stops and is returned. */
int ng_store_policies(ng_store *st, int (*fn)(const ng_store_policy_row *p, void *arg), void *arg,
                      ng_err *err);

/* What each policy digest decided: per (policy, outcome), how many
 * admission decisions, the first and the last. */
int ng_store_policy_usage(ng_store *st,
                          int (*fn)(const char *policy, const char *outcome, int64_t n,
                                    int64_t first, int64_t last, void *arg),
                          void *arg, ng_err *err);

/* ---- shadow ---------------------------------------------------------------------- */

typedef struct {
	char digest[32];
	ng_strbuf body; /* the policy's text; ng_strbuf_free it */
	int64_t set_at;
	char set_by[64], reason[256];
} ng_store_shadow;

/* Runs text (digest) in shadow from `at`, replacing any shadow policy; audited
 * (policy.shadow) with the reason. */
int ng_store_set_shadow(ng_store *st, const char *digest, const char *text, int64_t at,
                        const char *actor, const char *reason, ng_err *err);
/* Ends the shadow run: 1 ended, 0 none was running, -1 error; audited. */
int ng_store_clear_shadow(ng_store *st, int64_t at, const char *actor, const char *reason,
                          ng_err *err);
/* The policy in shadow now: 1 (out filled), 0 none, -1 error. */
int ng_store_get_shadow(ng_store *st, ng_store_shadow *out, ng_err *err);

/* What the shadow policy would have done on one admission or GPU check:
 * kind "admit" or a GPU check's mode; enforced and shadow are outcomes
 * ("quarantined", "drain", ...); rule is what decided the shadow's (the
 * metric or the health signal). */
typedef struct {
	const char *kind, *run_id, *node, *class_key, *policy, *enforced, *shadow, *rule;
	int64_t at;
} ng_store_shadow_outcome;

int ng_store_put_shadow_outcome(ng_store *st, const ng_store_shadow_outcome *o, ng_err *err);
/* Shadow outcomes at or after since, oldest first. */
int ng_store_shadow_outcomes(ng_store *st, int64_t since,
                             int (*fn)(const ng_store_shadow_outcome *o, void *arg), void *arg,
                             ng_err *err);

/* Records that digest (text) was promoted to enforcing by actor for reason,
 * with detail (a JSON object's text: the replay's figures, the guard) in
 * the audit log (policy.promote); a shadow run of the same digest ends. */
int ng_store_promote_policy(ng_store *st, const char *digest, const char *text, int64_t at,
                            const char *actor, const char *reason, const char *detail,
                            ng_err *err);

/* ---- the reads of a replay ------------------------------------------------------------ */

typedef struct {
	const char *stage, *domain, *metric, *unit;
	double value, baseline_median, floor;
	const char *gate_verdict, *status;
	int64_t record_id; /* the record the gate judged; 0 when the line names none */
} ng_store_replay_line;

typedef struct {
	int64_t id;
	const char *run_id, *node, *node_name, *class_key, *software, *outcome, *policy;
	int64_t at;
	const ng_store_replay_line *lines;
	size_t n_lines;
} ng_store_replay_decision;

/* Admission decisions taken at or after since (of one class when class_key
 * is set), oldest first, each with the verdict lines of its run; valid
 * during the call only. */
int ng_store_replay_decisions(ng_store *st, int64_t since, const char *class_key,
                              int (*fn)(const ng_store_replay_decision *d, void *arg), void *arg,
                              ng_err *err);

/* What came after a decision of a node (named node, or name): its next
 * recorded decision, its first later recorded quarantine, and its first
 * later GPU check record of a degraded or fatal GPU (a failed job's
 * epilog). 0 (and "") where there is none. */
typedef struct {
	char next_outcome[24];
	int64_t next_at, quarantined_at, fault_at;
} ng_store_after;

int ng_store_node_after(ng_store *st, const char *node, const char *name, int64_t after,
                        ng_store_after *out, ng_err *err);

/* GPU check runs at or after since, per mode and outcome (a severity name,
 * "unknown" or "n/a"). */
int ng_store_gpu_check_counts(ng_store *st, int64_t since,
                              int (*fn)(const char *mode, const char *outcome, int64_t n, void *arg),
                              void *arg, ng_err *err);

/* What a replay needs to run the gate again on one verdict line: */
/* the record's body as stored (into out): 1, 0 when it is not in the store. */
int ng_store_record_body(ng_store *st, int64_t id, ng_strbuf *out, ng_err *err);
/* The class baseline a run judged against: the newest of the key built at
 * or before `at` whose median is `median` (the verdict line keeps the
 * median, not the baseline): 1 with its cv, metric and unit; 0 when there
 * is none. */
int ng_store_baseline_as_of(ng_store *st, const char *class_key, const char *software,
                            const char *metric, int64_t at, double median, double *cv,
                            char *metric_out, size_t metric_cap, char *unit_out, size_t unit_cap,
                            ng_err *err);
/* The cohort the gate read for a run, as it stood then: for each other
 * node of the class, its newest record with samples of (class, software,
 * metric) among those stored before record `before_id` (cohort_runs as it
 * was), taken at or after since; as drops against median (*drops
 * malloc'd). */
int ng_store_cohort_as_of(ng_store *st, const char *class_key, const char *software,
                          const char *metric, const char *exclude_node, int64_t before_id,
                          int64_t since, double median, double **drops, size_t *n, ng_err *err);

/* A GPU check run of the window with what it judged from (schema 13), for
 * a replay that judges it again: policy and readings are NULL for a run
 * whose readings were not kept (written before schema 13, or the readings
 * could not be written). class_key is the node's class as its admission
 * last kept it ("" when none), node_name its scheduler name ("" when not
 * known). Valid during the call only. */
typedef struct {
	int64_t id, at;
	const char *node, *node_name, *class_key, *mode, *outcome, *reason;
	const char *policy, *readings;
} ng_store_replay_gpu_check;

/* GPU check runs at or after since, oldest first; fn non-zero stops and is
 * returned. */
int ng_store_replay_gpu_checks(ng_store *st, int64_t since,
                               int (*fn)(const ng_store_replay_gpu_check *c, void *arg),
                               void *arg, ng_err *err);

#endif
