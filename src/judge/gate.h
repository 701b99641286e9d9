/* The fail-closed qualification gate: one record against one baseline.
 *
 * This is the fabric-gate runbook's gate() (its Python is the reference
 * behaviour), with every constant taken from the policy. Pure: no I/O, no
 * clock, no globals, no allocation. The inputs are views the JSON layer
 * (judge/record.h) fills in; non-numbers arrive as NaN, which the rule treats
 * exactly as the reference treats a non-finite number. */
#ifndef NODEGATE_JUDGE_GATE_H
#define NODEGATE_JUDGE_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/policy.h"
#include "core/verdict.h"

/* The #wrong field: absent, null (checking was off), or a value. A value that
 * is not a finite number (a string, a boolean, a list) is NG_WRONG_INVALID. */
typedef enum { NG_WRONG_ABSENT, NG_WRONG_NULL, NG_WRONG_INVALID, NG_WRONG_VALUE } ng_wrong_kind;

typedef enum { NG_DIAG_PASS, NG_DIAG_SKIP, NG_DIAG_FAIL, NG_DIAG_OTHER } ng_diag_status;

typedef struct {
	const char *test;
	ng_diag_status status;
} ng_diag_entry;

/* A class compares equal to another exactly when the reference's `==` says
 * so. Absent and null are both NG_CLASS_NONE; text is the string itself for
 * NG_CLASS_STRING and a canonical encoding otherwise. */
typedef enum { NG_CLASS_NONE, NG_CLASS_STRING, NG_CLASS_OTHER } ng_class_kind;

typedef struct {
	ng_class_kind kind;
	const char *text;
} ng_class;

typedef struct {
	ng_wrong_kind wrong_kind;
	double wrong;
	/* Empty when the record's samples are absent or falsy. Entries that are
	 * not numbers are NaN. */
	const double *samples;
	size_t n_samples;
	/* diag: the tests once (a repeated key keeps its last status). diag_malformed
	 * when the field is present, truthy and not an object. */
	const ng_diag_entry *diag;
	size_t n_diag;
	bool diag_malformed;
	ng_class cls;
	/* A sample written as a positive integer too large for a double (10**400):
	 * the reference holds it exactly, so it passes the sample checks as the
	 * finite positive number it is, and raises where arithmetic first turns
	 * it into a float. Its place in samples holds DBL_MAX. */
	bool samples_overflow;
	/* The record's domain when it is a string, else NULL. Policy may exempt a
	 * domain from the required diagnostics (gate.diag_exempt_domains). */
	const char *domain;
	/* The record's metric when it is a string, else NULL
	 * (gate.diag_exempt_metrics), and compared with the baseline's. */
	const char *metric;
	/* The record's unit when it is a string, else NULL. */
	const char *unit;
} ng_gate_record;

typedef struct {
	double median; /* NaN when absent or not a number */
	double cv;
	ng_class cls;
	/* median or cv written as a positive integer too large for a double, as
	 * samples_overflow; the field holds DBL_MAX. */
	bool median_overflow, cv_overflow;
	/* The metric and unit the baseline was built from, when it names them
	 * (strings), else NULL. The reference rule compares the class only; a
	 * baseline of another metric or unit, when both sides say so, is not a
	 * yardstick for the run however the classes match. */
	const char *metric, *unit;
} ng_gate_baseline;

/* Which check decided, in the order the rule makes them. */
typedef enum {
	NG_STEP_WRONG_INVALID,
	NG_STEP_WRONG_NULL,
	NG_STEP_WRONG_NEGATIVE,
	NG_STEP_WRONG_POSITIVE,
	NG_STEP_NO_SAMPLES,
	NG_STEP_SAMPLES_INVALID,
	NG_STEP_BASELINE_INVALID,
	NG_STEP_DIAG_INVALID,
	NG_STEP_DIAG_INCOMPLETE,
	NG_STEP_DIAG_FAILED,
	NG_STEP_CLASS_MISMATCH,
	NG_STEP_METRIC_MISMATCH,
	NG_STEP_UNIT_MISMATCH,
	NG_STEP_UNSTABLE,
	NG_STEP_IMPLAUSIBLE,
	NG_STEP_BIMODAL,
	NG_STEP_UNRESOLVED,
	NG_STEP_PASS,
	NG_STEP_FLEET,
	NG_STEP_BLOCK,
	NG_STEP_WARN,
	NG_STEP_OVERFLOW, /* where the reference's arithmetic meets an overflowing integer */
	NG_STEP_WORK_TOO_SMALL,
	NG_STEP_COUNT
} ng_gate_step;

const char *ng_gate_step_text(ng_gate_step s);

/* The arithmetic behind a verdict, for --explain. Fields the rule never
 * reached are NaN (or 0 for counts). */
typedef struct {
	ng_verdict verdict;
	ng_gate_step step;
	size_t n;                /* samples */
	double median;           /* of the samples */
	double spread;           /* std/mean of the samples */
	double ratio;            /* median / baseline median */
	double drop;             /* 1 - ratio */
	double noise_bar;        /* noise_sigmas * cv / sqrt(n) */
	double slow_fraction;    /* share of samples under (1 - block) * baseline median */
	size_t cohort_n;         /* cohort drops given */
	size_t cohort_valid;     /* of those, finite and within the limit */
	double cohort_median;
	double cohort_past_warn; /* share of the cohort past the warn bar */
	const char *diag_test;   /* the test that decided a diag step, if any */
	/* A metric or unit step: what the record and the baseline each said. */
	const char *record_says, *baseline_says;
} ng_gate_trace;

/* Scratch the rule may overwrite: at least max(n_samples, n_cohort) doubles.
 * Too small a buffer fails closed (invalid-input, NG_STEP_WORK_TOO_SMALL). */
typedef struct {
	double *buf;
	size_t cap;
} ng_work;

ng_verdict ng_gate(const ng_gate_record *rec, const ng_gate_baseline *base,
                   const double *cohort_drops, size_t n_cohort, const ng_policy *pol,
                   ng_work work, ng_gate_trace *trace);

/* The rule's diagnostic checks alone, in its order: invalid-input (a status
 * that is not pass, skip or fail), diag-incomplete (a required test absent,
 * or any skipped), diag-failed; NG_V_PASS when none applies. The gate makes
 * them after it has found a baseline; admission asks them of a run whose
 * class has none yet, so a failed diagnostic is never taken for a class
 * still establishing. t (required) gets the step and the test. */
ng_verdict ng_gate_diagnostics(const ng_gate_record *rec, const ng_policy *pol,
                               ng_gate_trace *t);

#endif
