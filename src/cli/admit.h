/* One admission run of one node, shared by cmd_admit.c (the flow and the
 * landing) and admit_report.c (the table and the JSON). */
#ifndef NODEGATE_CLI_ADMIT_H
#define NODEGATE_CLI_ADMIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/cmd.h"
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
};

/* The judged record a decision's named result came from. */
const struct ng_admit_judged *ng_admit_judged_of(const struct ng_admit_run *r,
                                                 const ng_admit_result *res);

/* obj[key] when it is a string, else NULL. */
const char *ng_admit_str(const cJSON *obj, const char *key);

/* admit_judge.c: stores a stage's records ("first" or "confirm") and judges
 * each; then the decision over both stages so far. */
int ng_admit_judge_stage(ng_store *st, const struct ng_cli *cli, struct ng_admit_run *r,
                         const cJSON *records, const char *stage, ng_err *err);
int ng_admit_decide_run(struct ng_admit_run *r, const ng_policy *pol);

/* admit_land.c: lands r->d (sets r->outcome, r->recheck_at, cases and
 * events), then stores the decision. */
int ng_admit_land(ng_store *st, const struct ng_cli *cli, struct ng_admit_run *r, ng_err *err);
int ng_admit_store_decision(ng_store *st, struct ng_admit_run *r, ng_err *err);
/* --land slurm: a quarantined node is drained through scontrol with the
 * case's reason (land/slurm.h: never over an operator's drain), as node
 * (NULL: r->node_name, the scheduler's name for it, never the stable id); what happened is a note and a "land.drain" audit entry.
 * -1 only when the store failed. */
int ng_admit_land_slurm(ng_store *st, const struct ng_cli *cli, struct ng_admit_run *r,
                        const char *node, ng_err *err);

void ng_admit_note(struct ng_admit_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* admit_report.c */
void ng_admit_print_table(FILE *out, const struct ng_admit_run *r);
cJSON *ng_admit_json(const struct ng_admit_run *r);

#endif
