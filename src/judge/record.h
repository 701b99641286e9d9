/* Records, baselines and cohorts from JSON, as the gate sees them.
 *
 * A record is one measurement run of one metric on one node (see
 * docs/record.md). The gate reads four of its fields: class, samples, wrong
 * and diag. This module turns parsed JSON into the gate's views, reading each
 * field exactly as the reference rule reads a Python dict:
 *   wrong    absent or not a finite number -> invalid; null -> unverified
 *   samples  absent or falsy -> none; entries that are not numbers -> NaN;
 *            an integer too large for a double -> samples_overflow (and the
 *            baseline's median and cv likewise), refused where the reference's
 *            arithmetic would raise on it
 *   diag     absent or falsy -> {}; a repeated test keeps its last status
 *   class    absent and null are the same; 1, 1.0 and true are the same
 * Pure: no I/O. Buffers are reused across calls, so judging a stream of
 * records allocates only when a record is larger than any before it. */
#ifndef NODEGATE_JUDGE_RECORD_H
#define NODEGATE_JUDGE_RECORD_H

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/record_build.h" /* NG_RECORD_SCHEMA, NG_BASELINE_SCHEMA */
#include "core/strbuf.h"
#include "judge/gate.h"


typedef struct {
	ng_gate_record rec;
	ng_gate_baseline base;
	const double *cohort;
	size_t n_cohort;

	/* storage behind the views */
	double *samples_buf, *cohort_buf, *work_buf;
	size_t samples_cap, cohort_cap, work_cap;
	ng_diag_entry *diag_buf;
	size_t diag_cap;
	ng_strbuf rec_class, base_class;
} ng_gate_input;

/* The source text the record was parsed from, so a count written as a huge
 * integer literal (finite to the reference, infinite to a double) can be told
 * from an infinite float. Optional: NULL text treats both as infinite. */
typedef struct {
	const char *text;
	size_t len;
	const cJSON *root;
} ng_json_source;

/* record must be a JSON object. Returns -1 (out of memory) with err set. */
int ng_gate_input_record(ng_gate_input *in, const cJSON *record, const ng_json_source *src,
                         ng_err *err);
/* baseline: an object, or NULL/null for none at all (judged as no-baseline). */
int ng_gate_input_baseline(ng_gate_input *in, const cJSON *baseline, ng_err *err);
/* drops: an array of numbers; NULL/null for none. Anything that is not a
 * number, in or instead of the array, is NaN and so invalidates the cohort. */
int ng_gate_input_cohort_json(ng_gate_input *in, const cJSON *drops, ng_err *err);
int ng_gate_input_cohort(ng_gate_input *in, const double *drops, size_t n, ng_err *err);

/* Judges what the input holds. */
ng_verdict ng_gate_input_judge(ng_gate_input *in, const ng_policy *pol, ng_gate_trace *trace);

void ng_gate_input_free(ng_gate_input *in);

/* What nodegate requires of a record it is given to keep (ingest, admit
 * --from), beyond what the gate reads: a known schema ("nodegate/record/1",
 * when given), every sample a finite number greater than 0 (not a string
 * such as "240", not null, not 1e400), "wrong" absent, null or a whole
 * number of 0 or more, a node that is a non-empty string when given, and no
 * key given twice anywhere. The gate's own reader stays the reference's;
 * this refuses what would otherwise be stored silently changed. On failure
 * err names the field ("samples[2] is ..."). zero_ok lets a sample be 0: a
 * run being judged may have measured a dead path, which is evidence, where
 * history being kept for baselines (ingest) has no use for it. */
int ng_record_check_strict(const cJSON *record, bool zero_ok, ng_err *err);

/* A record's samples summed up (samples_summary.c): how many; when every
 * one is a number (numeric; false too when out of memory), their median,
 * smallest and largest. */
typedef struct {
	size_t n;
	bool numeric;
	double median, min, max;
} ng_sample_summary;
void ng_samples_summarize(const cJSON *samples, ng_sample_summary *out);

#endif
