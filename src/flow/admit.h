/* One admission run of one node: the flow `nodegate admit` runs (collect,
 * judge, confirm, land, store the decision), its result, and the result's
 * JSON. admit_run.c drives it; admit_judge.c, admit_land.c and
 * admit_profile.c are its stages; cli/cmd_admit.c parses the options and
 * cli/admit_report.c draws the table. */
#ifndef NODEGATE_FLOW_ADMIT_H
#define NODEGATE_FLOW_ADMIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "flow/admit_profile.h"
#include "flow/ctx.h"
#include "judge/admit.h"
#include "store/store.h"

/* One record of one stage, judged. */
struct ng_admit_judged {
	const cJSON *rec;
	int64_t record_id;
	const char *stage; /* "first" or "confirm" */
	const char *domain, *metric, *unit;
	ng_store_baseline base; /* base.status says why when there is none */
	bool have_base;
	bool judged;   /* a higher-is-better metric: admission rules on it */
	/* The gate's verdict decides; the runbook's hysteresis over this node's
	 * raw verdicts is kept and reported beside it (see docs/admission.md:
	 * admission's confirm-once rule is its damping, and the block latch
	 * inside it would forbid the recovery the seed's example admits). */
	ng_verdict raw, effective;
	bool blocked;
	unsigned unstable_recent; /* unstable verdicts in the policy's window, this one included */
	double *cohort; /* the other nodes' drops the gate was given (owned) */
	size_t n_cohort;
	double drop;    /* the gate's 1 - value/baseline median (NaN: none) */
	/* Of the class's nodes screened in the last cohort_local_minutes, how
	 * many share this drop (flow/admit_shared.h): computed for a block or warn
	 * only, and a reason to recheck rather than confirm. */
	size_t local_sharing, local_peers;
	/* This run's drop from the node's own level (res.own_level, judge/admit.h;
	 * NaN: not known), which the peers that share it are counted by. */
	double own_drop;
	/* A small class's family and its pooled spread (flow/class_baseline.h):
	 * df 0 when the bar is the class's own. */
	ng_admit_pool pool;
	char family[256];
	ng_admit_result res;
	ng_admit_line line;
};

struct ng_admit_run {
	int64_t now;
	double started; /* CLOCK_MONOTONIC seconds when the run began */
	const char *actor;
	char node[128], class_key[256], software[80], run_id[80];
	char node_name[128]; /* the scheduler name: the records', else the store's; "" unknown */
	struct ng_admit_judged *j;
	size_t n, cap;
	ng_admit_result *first, *confirm; /* the results of each stage, for the decision */
	size_t *first_idx, *confirm_idx;  /* where each result's record is in j[] */
	size_t n_first, n_confirm;
	ng_admit_decision d;
	const char *outcome; /* after landing: overrides, the breaker and open cases */
	int64_t recheck_at;
	int64_t case_id;       /* the case this run opened or counted toward, 0 if none */
	int64_t fleet_event;   /* the class's open fleet-regression event, 0 if none */
	cJSON *notes;          /* sentences for the operator, in order */
	cJSON *records[2];     /* the first stage's and the confirmation's records (owned) */
	cJSON *withdrawn;      /* cases this run withdrew: [{case, node, node_name}], or NULL */
};

/* The judged record a decision's named result came from. */
const struct ng_admit_judged *ng_admit_judged_of(const struct ng_admit_run *r,
                                                 const ng_admit_result *res);

/* The latest judged line of a metric in this run (its confirmation's when
 * it was re-run), or NULL. */
const struct ng_admit_judged *ng_admit_latest_of(const struct ng_admit_run *r, const char *metric);

/* obj[key] when it is a string, else NULL. */
const char *ng_admit_str(const cJSON *obj, const char *key);

/* admit_judge.c: stores a stage's records ("first" or "confirm") and judges
 * each; then the decision over both stages so far. */
int ng_admit_judge_stage(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                         const cJSON *records, const char *stage, ng_err *err);
int ng_admit_decide_run(struct ng_admit_run *r, const ng_policy *pol);

/* admit_land.c: lands r->d (sets r->outcome, r->recheck_at, cases and
 * events), then stores the decision. */
int ng_admit_land(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r, ng_err *err);
int ng_admit_store_decision(ng_store *st, struct ng_admit_run *r, ng_err *err);
/* --land slurm: a quarantined node is drained through scontrol with the
 * case's reason (land/slurm.h: never over an operator's drain), as node
 * (NULL: r->node_name, the scheduler's name for it, never the stable id); what happened is a note and a "land.drain" audit entry.
 * -1 only when the store failed. */
int ng_admit_land_slurm(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                        const char *node, ng_err *err);

void ng_admit_note(struct ng_admit_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* admit_json.c: the decision as JSON (schema nodegate/admission/1), what
 * `admit --json` prints and the --on-verdict program reads. */
cJSON *ng_admit_json(const struct ng_admit_run *r);
/* A judged line's status name, "not-judged" for a record kept out of the
 * outcome (a latency). */
const char *ng_admit_status_of(const struct ng_admit_judged *j);

/* ---- the whole run (admit_run.c) ------------------------------------------------------ */

/* What one run is asked to do. Records come from files (from, confirm_from),
 * from memory (records, confirm_records: borrowed, never changed), or, with
 * neither, from measuring this node with the profile. */
struct ng_admit_request {
	struct ng_admit_profile profile;
	const char *const *from, *const *confirm_from;
	size_t n_from, n_confirm_from;
	const cJSON *records, *confirm_records;
	/* When set, the confirmation re-measures through this instead of the
	 * profile's probes (a front end that measures elsewhere: the fleet
	 * simulator): the records of the named domains, or NULL when they could
	 * not be measured again (the run is held). With records given and no
	 * confirmation's records, it is what confirms. */
	cJSON *(*remeasure)(void *arg, const char *const *domains, size_t n_domains);
	void *remeasure_arg;
	bool land_slurm;       /* drain a quarantined node through scontrol */
	const char *land_node; /* its Slurm name, when not the records' node */
	bool queue;            /* the admission queue's job: land the outcome on the node's
	                        * Slurm features (flow/admit_queue.h) */
};

/* Runs one admission in ctx (ctx->store must be open): reads or measures the
 * first stage's records, judges them, confirms what was flagged (from the
 * request's confirmation records, or live after the exclusivity and
 * environment checks), lands the outcome, stores the decision, and tells
 * ctx->on_verdict. Starts r afresh; release it with ng_admit_run_release
 * whatever this returns. 0 with r->outcome set; -1 with err classed:
 * NG_ERR_INPUT (records unusable: nothing stored), NG_ERR_STORE, or
 * NG_ERR_INTERNAL (out of memory). */
int ng_admit_run_flow(const ng_ctx *ctx, const struct ng_admit_request *req,
                      struct ng_admit_run *r, ng_err *err);
/* The exit status the outcome calls for: 0 admitted or admitted-warn, 1
 * held, suspect or quarantined. */
int ng_admit_exit_status(const struct ng_admit_run *r);
/* Frees what r holds (r itself is the caller's) and zeroes it. */
void ng_admit_run_release(struct ng_admit_run *r);

#endif
