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
} ng_probation_job;

typedef enum {
	NG_PROBATION_PASS, /* back to admitted */
	NG_PROBATION_FAIL, /* the case opens again */
	NG_PROBATION_WAIT, /* this job says nothing (the check could not read the GPUs): the next decides */
} ng_probation_verdict;

/* The verdict, with one sentence in why (cap bytes) saying what decided it. */
ng_probation_verdict ng_probation_judge(const ng_probation_job *j, char *why, size_t cap);
const char *ng_probation_verdict_name(ng_probation_verdict v);

#endif
