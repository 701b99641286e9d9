/* Building records (docs/record.md) as cJSON objects, for parsers and probes.
 *
 * A new record starts honest: no samples and `wrong: null` (not checked). A
 * parser adds what it actually read and nothing else; whatever it could not
 * read stays absent or null, so the gate can never mistake it for a pass. */
#ifndef NODEGATE_CORE_RECORD_BUILD_H
#define NODEGATE_CORE_RECORD_BUILD_H

#include <cjson/cJSON.h>

/* The schemas of a record and of a class baseline, as documents carry them. */
#define NG_RECORD_SCHEMA "nodegate/record/1"
#define NG_BASELINE_SCHEMA "nodegate/baseline/1"

/* {"schema": "nodegate/record/1", "domain", "metric", "unit", "samples": [],
 * "wrong": null}. domain and unit come from the metric registry when NULL.
 * Returns NULL when out of memory. */
cJSON *ng_record_new(const char *metric, const char *domain, const char *unit);

void ng_record_add_sample(cJSON *rec, double v);
void ng_record_set_wrong(cJSON *rec, double count);
void ng_record_set_wrong_null(cJSON *rec);
/* Why the record has no samples (or why it cannot be trusted), for people. */
void ng_record_set_reason(cJSON *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* diag[test] = status ("pass", "skip", "fail"). */
void ng_record_set_diag(cJSON *rec, const char *test, const char *status);
/* The record's "tool" object, created on first use: {"name", "version", ...}. */
cJSON *ng_record_tool(cJSON *rec);
/* The record's "detail" object, created on first use: parser-specific
 * evidence (per-size tables, per-GPU messages) kept beside the samples. */
cJSON *ng_record_detail(cJSON *rec);
/* The record's "conditions" object, created on first use. */
cJSON *ng_record_conditions(cJSON *rec);
/* For every record of a measuring probe or tool run that holds no samples:
 * nothing was measured, so nothing was checked. Its wrong becomes 0 unless it
 * already counts corruption (which outranks everything), so the gate answers
 * no-measurement ("fix the harness"), as the runbook's "exit 0, nothing
 * parsed" row does, not correctness-unverified ("re-run with checking on"). */
void ng_records_settle_unmeasured(cJSON *records);
/* obj[key] = value, replacing any existing key. */
void ng_json_set(cJSON *obj, const char *key, cJSON *value);

#endif
