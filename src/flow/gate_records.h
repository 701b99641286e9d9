/* The gate over records a verb holds (`nodegate gate FILE...`, and --baseline
 * of `run` and `probe`): a baseline file and a --cohort-drops list as the
 * gate's input, and the records judged against it. */
#ifndef NODEGATE_FLOW_GATE_RECORDS_H
#define NODEGATE_FLOW_GATE_RECORDS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/policy.h"
#include "judge/record.h"

/* The gate's input with a baseline loaded from a file: release with
 * ng_baseline_file_release, also after a failed load. */
typedef struct {
	ng_gate_input in;
	cJSON *doc;  /* the baseline document */
	char *text;  /* its text */
	const char *path;
} ng_baseline_file;

/* How a load failed, each said its own way by the verbs. */
enum {
	NG_GATE_BASELINE_UNREAD = -1,  /* the file could not be read or parsed */
	NG_GATE_BASELINE_INVALID = -2, /* it is no baseline */
	NG_GATE_COHORT_LIST = -3,      /* the cohort's list does not read */
	NG_GATE_COHORT_NOMEM = -4,     /* out of memory taking the cohort */
};
/* Loads the baseline at path into b->in, and cohort ("0.12,0.1", NULL for
 * none) as its cohort's drops. 0, or one of the failures above with err. */
int ng_baseline_file_load(ng_baseline_file *b, const char *path, const char *cohort, ng_err *err);
void ng_baseline_file_release(ng_baseline_file *b);

/* Whether a record is a measurement: it has samples, or it is a diagnostic
 * whose outcome is clean. */
bool ng_record_measured(const cJSON *record);

/* One judged record: its metric ("(no metric)" when it names none), the
 * input it was judged from, the gate's path and the verdict. */
typedef void (*ng_gate_judged_fn)(void *arg, const char *metric, const ng_gate_input *in,
                                  const ng_gate_trace *t, ng_verdict v);

/* Judges, in order, the records the baseline is for (its metric, when it
 * names one) and every record that measured nothing, telling fn of each.
 * 1 when every one judged was admissible, 0 when one was not, -1 with err
 * at a record that could not be read (fn told of those before it). */
int ng_gate_records_judge(ng_baseline_file *b, const ng_policy *pol, const cJSON *records,
                          ng_gate_judged_fn fn, void *arg, ng_err *err);

/* One record of a file `nodegate gate` judges (ng_gate_file_judge): its
 * label (FILE, or FILE[i] in an array), whether it came from an array, and
 * either its verdict (bad NULL) or why it could not be read (in and t then
 * NULL). */
typedef void (*ng_gate_file_fn)(void *arg, const char *label, bool element,
                                const ng_gate_input *in, const ng_gate_trace *t, ng_verdict v,
                                const ng_err *bad);

enum {
	NG_GATE_FILE_UNREAD = -1, /* the file could not be read or parsed (err) */
	NG_GATE_FILE_EMPTY = -2,  /* it holds an empty array: no record to judge */
};

/* Judges a record file against the baseline in in: one record, or an
 * array of them (what --out of `nodegate run` and `nodegate probe`
 * writes), telling fn of each in order. 0, or NG_GATE_FILE_*. */
int ng_gate_file_judge(ng_gate_input *in, const ng_policy *pol, const char *path,
                       ng_gate_file_fn fn, void *arg, ng_err *err);

/* A gate verdict with its arithmetic as a document (gate_trace_json.c):
 * {"record": label, "verdict", "admissible", "decided_by", "diag_test",
 * "record_says" and "baseline_says" when they disagree, "lands", "explain":
 * {n, median, spread, ratio, drop, noise_bar, slow_fraction, cohort_n,
 * cohort_valid, cohort_median, cohort_past_warn}}; NULL when out of memory. */
cJSON *ng_gate_trace_json(const char *label, const ng_gate_trace *t);
/* One record's verdict, as a measuring verb's --json lists it: {"metric",
 * "verdict", "admissible", "decided_by"}. */
cJSON *ng_gate_verdict_json(const char *metric, const ng_gate_trace *t, ng_verdict v);

#endif
