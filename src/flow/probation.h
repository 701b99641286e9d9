/* Probation under a real job: after each GPU check that follows a job
 * (the epilog), the job's runtime is kept as history, and a node on
 * probation is judged by it (judge/probation.h): a clean job returns it to
 * admitted, a failing one opens its case again as a retry. */
#ifndef NODEGATE_FLOW_PROBATION_H
#define NODEGATE_FLOW_PROBATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "store/store.h"

/* What one GPU check found, and the job it followed. */
typedef struct {
	const char *node;    /* the stable id, as the store keys the node */
	const char *mode;    /* epilog, prolog, health: only an epilog follows a job */
	const char *outcome; /* the check's severity name, "unknown" or "n/a" */
	bool drained;        /* it exited 1 */
	size_t new_xids;     /* Xids of the node's GPUs since the job began */
	/* The job, from Slurm's epilog environment when NULL/negative:
	 * SLURM_JOB_ID, SLURM_JOB_NAME, SLURM_JOB_START_TIME. */
	const char *job, *job_name;
	int64_t job_start; /* unix seconds; 0: from the environment */
	/* The node's Slurm name, as sacct lists the job's steps; NULL:
	 * SLURMD_NODENAME, else the short host name. */
	const char *slurm_node;
	int64_t now;
} ng_probation_check;

/* Keeps the job's runtime and, when the node is on probation, judges it:
 * against its gang peers in the same job where the job ran steps on this
 * node and on others (sacct, collect/job_steps.h), and against the job's
 * earlier runs elsewhere.
 * *decided (may be NULL) gets "pass", "fail", "superseded" or "" (nothing
 * ended), why (cap bytes, may be NULL) the sentence. A check without a job
 * (no SLURM_JOB_ID) or not an epilog does nothing. -1 only when the store
 * failed. */
int ng_probation_after_check(ng_store *st, const ng_policy *pol, const ng_probation_check *chk,
                             const char **decided, char *why, size_t cap, ng_err *err);

#endif
