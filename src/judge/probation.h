/* Probation's rule: whether one real job on a released node returns it to
 * service (docs/admission.md, "Probation"). Pure: the epilog's findings and
 * the job's runtimes in, a verdict and its reason out. */
#ifndef NODEGATE_JUDGE_PROBATION_H
#define NODEGATE_JUDGE_PROBATION_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	bool drained;          /* the epilog exited 1: a fault of this node */
	const char *outcome;   /* the epilog's severity: ok, transient, degraded, fatal, unknown, n/a */
	size_t new_xids;       /* Xids the kernel reported for the node's GPUs during the job */
	double runtime_s;      /* the job's runtime; < 0 when not known */
	const double *history; /* earlier clean runtimes of the same job on other nodes */
	size_t n_history;
	long history_min;       /* fewer than this: the runtime is not judged */
	double straggler_ratio; /* slower than this many times the history's median: a straggler */
	/* Its gang: where the job ran steps on this node and on others, this
	 * node's time for the step against the median of its peers' in the same
	 * job (parse/sacct_steps.h). gang_peers 0: no gang to compare with. */
	double gang_ratio, gang_own_s, gang_median_s;
	size_t gang_peers;
	const char *gang_step;
} ng_probation_job;

typedef enum {
	NG_PROBATION_PASS, /* back to admitted */
	NG_PROBATION_FAIL, /* the case opens again */
	NG_PROBATION_WAIT, /* this job says nothing (the check could not read the GPUs): the next decides */
} ng_probation_verdict;

/* A straggler is slower than straggler_ratio times the median of its gang
 * peers in the same job, or of the job's earlier runs elsewhere: either
 * fails it. */
/* The verdict, with one sentence in why (cap bytes) saying what decided it. */
ng_probation_verdict ng_probation_judge(const ng_probation_job *j, char *why, size_t cap);
const char *ng_probation_verdict_name(ng_probation_verdict v);

#endif
