/* The gate against the fabric-gate runbook's decision rule.
 *
 * The first part is the runbook's Python, assertion for assertion, numbered
 * like its comments. Records are JSON text, read the way the command line
 * reads them: parsed, turned into the gate's views by core/record, judged
 * with the default policy. rec(kw) is the runbook's rec(**kw): the default
 * record with kw written after it, and since a repeated key means its last
 * value, that is exactly r.update(kw).
 *
 * The second part is the runbook's 15-row "Executed output" table.
 *
 * The rest goes past the runbook: every expected verdict there was checked
 * against the runbook's gate() run with /usr/bin/python3 (numpy 1.24) on the
 * same JSON text, except where a test says the reference has no answer (it
 * raises) or uses a policy the reference cannot express. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/policy.h"
#include "judge/record.h"
#include "core/strbuf.h"
#include "judge/gate.h"

#define CLASS "8xH100-SXM/2node/1rail"
#define BASE "{\"class\":\"" CLASS "\",\"median\":240.0,\"cv\":0.04}"
#define DIAG_OK "{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\"}"
#define S9(x) "[" x "," x "," x "," x "," x "," x "," x "," x "," x "]"
#define S5(x) "[" x "," x "," x "," x "," x "]"
/* A baseline of the runbook's class with another median and cv. */
#define BASE_MC(m, cv) "{\"class\":\"" CLASS "\",\"median\":" m ",\"cv\":" cv "}"

/* ---- helpers ---------------------------------------------------------------- */

/* Texts built by rec() and friends live in a small ring, so a test can build
 * a few records in one expression; the group teardown frees them. */
#define RING 16
static ng_strbuf ring[RING];
static unsigned ring_next;

static ng_strbuf *ring_buf(void)
{
	ng_strbuf *b = &ring[ring_next++ % RING];
	ng_strbuf_reset(b);
	return b;
}

static const char *rec(const char *kw)
{
	ng_strbuf *b = ring_buf();
	ng_strbuf_adds(b, "{\"class\":\"" CLASS "\",\"samples\":" S9("240.0") ",\"wrong\":0,\"diag\":" DIAG_OK);
	if (kw && kw[0]) {
		ng_strbuf_addc(b, ',');
		ng_strbuf_adds(b, kw);
	}
	ng_strbuf_addc(b, '}');
	assert_false(b->oom);
	return b->s;
}

/* printf-style rec(): rec_f("\"samples\":%s", reps(...)). */
static const char *rec_f(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *rec_f(const char *fmt, ...)
{
	char *kw = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&kw, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	const char *r = rec(kw);
	free(kw);
	return r;
}

/* A JSON array of n copies of the number v, written so it reads back exactly. */
static const char *reps(double v, size_t n)
{
	ng_strbuf *b = ring_buf();
	ng_strbuf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			ng_strbuf_addc(b, ',');
		ng_strbuf_add_double(b, v);
	}
	ng_strbuf_addc(b, ']');
	assert_false(b->oom);
	return b->s;
}

/* The diag_test a trace names points into the parsed record or the policy;
 * the record is gone when judge() returns, so the name is copied here. */
static char trace_diag_test[NG_DIAG_NAME_MAX + 64];

static cJSON *parse_or_fail(const char *text)
{
	ng_err err = {0};
	cJSON *v = ng_json_parse(text, strlen(text), &err);
	if (!v)
		fail_msg("test JSON did not parse: %s: %.200s", err.msg, text);
	return v;
}

/* Judges JSON texts: baseline and cohort may be NULL (none given). */
static ng_verdict judge(const char *record, const char *baseline, const char *cohort,
                        const ng_policy *pol, ng_gate_trace *trace)
{
	ng_policy def;
	ng_policy_default(&def);
	ng_err err = {0};
	cJSON *r = parse_or_fail(record);
	cJSON *b = baseline ? parse_or_fail(baseline) : NULL;
	cJSON *c = cohort ? parse_or_fail(cohort) : NULL;
	ng_json_source src = {record, strlen(record), r};
	ng_gate_input in = {0};
	assert_int_equal(ng_gate_input_record(&in, r, &src, &err), 0);
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_int_equal(ng_gate_input_cohort_json(&in, c, &err), 0);
	ng_gate_trace local;
	ng_gate_trace *t = trace ? trace : &local;
	ng_verdict v = ng_gate_input_judge(&in, pol ? pol : &def, t);
	assert_int_equal(t->verdict, v);
	if (t->diag_test) {
		snprintf(trace_diag_test, sizeof trace_diag_test, "%s", t->diag_test);
		t->diag_test = trace_diag_test;
	}
	ng_gate_input_free(&in);
	cJSON_Delete(r);
	cJSON_Delete(b);
	cJSON_Delete(c);
	return v;
}

static const char *gate(const char *record, const char *baseline)
{
	return ng_verdict_name(judge(record, baseline, NULL, NULL, NULL));
}

static const char *gate_c(const char *record, const char *baseline, const char *cohort)
{
	return ng_verdict_name(judge(record, baseline, cohort, NULL, NULL));
}

static const char *gate_p(const char *record, const char *baseline, const char *cohort,
                          const ng_policy *pol)
{
	return ng_verdict_name(judge(record, baseline, cohort, pol, NULL));
}

/* A policy with a document applied over the defaults. */
static ng_policy policy(const char *doc)
{
	ng_policy p;
	ng_policy_default(&p);
	cJSON *d = parse_or_fail(doc);
	ng_err err = {0};
	if (ng_policy_apply_json(&p, d, "test", &err) != 0)
		fail_msg("policy refused: %s", err.msg);
	cJSON_Delete(d);
	return p;
}

static void assert_double_bits(double got, double want)
{
	if (memcmp(&got, &want, sizeof got) != 0)
		fail_msg("got %a (%.17g), want %a (%.17g)", got, got, want, want);
}

static int teardown_ring(void **state)
{
	(void)state;
	for (int i = 0; i < RING; i++)
		ng_strbuf_free(&ring[i]);
	return 0;
}

/* The runbook's named cohorts. */
#define FLEET "[0.12,0.115,0.125,0.118,0.122]"
#define MILD "[0.06,0.055,0.051,0.06,0.058]"
#define HEALTHY "[0.0,0.01,0.0,0.005,0.0]"

/* The runbook's `bare`: the default record with its diag block deleted. */
#define BARE "{\"class\":\"" CLASS "\",\"samples\":" S9("240.0") ",\"wrong\":0}"

/* ---- the runbook's assertions ------------------------------------------------- */

static void test_01_at_baseline_passes(void **state)
{
	(void)state;
	assert_string_equal(gate(rec(""), BASE), "pass");
}

static void test_02_no_samples_is_no_measurement(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":[]"), BASE), "no-measurement");
}

static void test_03_absent_diag_is_incomplete(void **state)
{
	(void)state;
	assert_string_equal(gate(BARE, BASE), "diag-incomplete");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\"}"), BASE),
	                    "diag-incomplete");
}

/* The node's own probes carry no DCGM results: policy exempts their domains,
 * and metrics of other domains that nodegate verifies itself (the GPU copy
 * probe's paths are fabric). Nothing else is exempt. */
#define BARE_WITH(extra) "{\"class\":\"" CLASS "\",\"samples\":" S9("240.0") ",\"wrong\":0," extra "}"
static void test_03_diag_exemptions(void **state)
{
	(void)state;
	assert_string_equal(gate(BARE_WITH("\"domain\":\"storage\""), BASE), "pass");
	assert_string_equal(gate(BARE_WITH("\"domain\":\"fabric\",\"metric\":\"gpucopy.p2p.gbps\""), BASE),
	                    "pass");
	assert_string_equal(gate(BARE_WITH("\"metric\":\"gpucopy.h2d.gbps\""), BASE), "pass");
	assert_string_equal(gate(BARE_WITH("\"domain\":\"fabric\",\"metric\":\"nccl.all_reduce.busbw\""),
	                         BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(BARE_WITH("\"domain\":\"fabric\",\"metric\":\"gpucopy\""), BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(BARE_WITH("\"domain\":\"fabric\",\"metric\":7"), BASE), "diag-incomplete");
	/* exemption spares absent tests, never a failed one */
	assert_string_equal(gate(BARE_WITH("\"metric\":\"gpucopy.p2p.gbps\",\"diag\":{\"pcie\":\"fail\"}"),
	                         BASE),
	                    "diag-failed");
}

static void test_04_skipped_diag_is_incomplete(void **state)
{
	(void)state;
	assert_string_equal(
		gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"skip\"}"), BASE),
		"diag-incomplete");
}

static void test_05_wrong_null_is_unverified(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"wrong\":null"), BASE), "correctness-unverified");
}

static void test_06_corrupt_outranks_class_mismatch(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"wrong\":3,\"class\":\"8xH100-SXM/8node/4rail\""), BASE),
	                    "corrupt");
}

static void test_07_other_topology_is_incomparable(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"class\":\"8xH100-SXM/8node/4rail\""), BASE), "incomparable");
}

static void test_08_zero_baseline_is_no_baseline(void **state)
{
	(void)state;
	assert_string_equal(gate(rec(""), BASE_MC("0.0", "0.04")), "no-baseline");
}

static void test_09_self_disagreeing_run_is_unstable(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":[100.0,100.0,240.0,380.0,380.0]"), BASE), "unstable");
}

static void test_10_too_fast_and_too_slow_are_implausible(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":" S9("380.0")), BASE), "implausible");
	assert_string_equal(gate(rec("\"samples\":" S9("1.0")), BASE), "implausible");
}

static void test_11_one_sample_7pct_down_is_insufficient(void **state)
{
	(void)state;
	const char *one = rec("\"samples\":[223.2]");
	ng_gate_trace t;
	ng_verdict v = judge(one, BASE, NULL, NULL, &t);
	/* _drop(one["samples"], BASE["median"]) > WARN: the bar says warn */
	assert_true(t.drop > 0.05);
	/* and one sample cannot settle it */
	assert_string_equal(ng_verdict_name(v), "insufficient-samples");
}

static void test_12_nine_samples_7pct_down_warn(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":" S9("223.2")), BASE), "warn");
}

/* (12b) `_significant(0.08000001, WARN, 0.04, 1) and not _significant(0.08, ...)`:
 * the noise bar is a strict inequality. The gate's _significant is internal, so
 * this is shown through the gate on numbers where "exactly on the bar" is exact
 * in binary: baseline median 1, cv 0.0625, four samples, so the bar is
 * 2 * 0.0625 / sqrt(4) = 0.0625, and samples of 0.9375 drop exactly 0.0625. */
static void test_12b_noise_bar_is_strict(void **state)
{
	(void)state;
	const char *base = BASE_MC("1.0", "0.0625");
	ng_gate_trace t;

	/* exactly on the bar: not significant, and 4 samples cannot resolve it */
	ng_verdict v = judge(rec_f("\"samples\":%s", reps(0.9375, 4)), base, NULL, NULL, &t);
	assert_double_bits(t.drop, 0.0625);
	assert_double_bits(t.noise_bar, 0.0625);
	assert_string_equal(ng_verdict_name(v), "insufficient-samples");
	assert_int_equal(t.step, NG_STEP_UNRESOLVED);

	/* one rounding past it: significant against both bars, a warning */
	v = judge(rec_f("\"samples\":%s", reps(nextafter(0.9375, 0), 4)), base, NULL, NULL, &t);
	assert_true(t.drop > t.noise_bar);
	assert_string_equal(ng_verdict_name(v), "warn");

	/* one rounding short of it */
	v = judge(rec_f("\"samples\":%s", reps(nextafter(0.9375, 1), 4)), base, NULL, NULL, &t);
	assert_true(t.drop < t.noise_bar && t.drop > 0);
	assert_string_equal(ng_verdict_name(v), "insufficient-samples");
}

static void test_13_cohort_shares_drop_is_fleet_regression(void **state)
{
	(void)state;
	assert_string_equal(gate_c(rec("\"samples\":" S9("211.2")), BASE, FLEET), "fleet-regression");
}

static void test_14_fleet_is_no_alibi_for_a_bad_node(void **state)
{
	(void)state;
	assert_string_equal(gate_c(rec("\"samples\":" S9("120.0")), BASE, MILD), "block");
}

static void test_15_three_member_cohort_is_too_small(void **state)
{
	(void)state;
	assert_string_equal(gate_c(rec("\"samples\":" S9("211.2")), BASE, "[0.12,0.11,0.0]"), "block");
}

static void test_16_healthy_cohort_blocks(void **state)
{
	(void)state;
	assert_string_equal(gate_c(rec("\"samples\":" S9("211.2")), BASE, HEALTHY), "block");
}

/* (17)..(17d) are hysteresis: tests/unit/test_hysteresis.c. */

static void test_17e_failed_diag_is_not_missing(void **state)
{
	(void)state;
	assert_string_equal(
		gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"fail\"}"), BASE),
		"diag-failed");
	assert_string_equal(
		gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"bogus\"}"), BASE),
		"invalid-input");
}

static void test_17f_cohort_validated_strictly(void **state)
{
	(void)state;
	/* Five infinities: JSON has no literal for them, but 1e400 reads as one,
	 * exactly as Python's json module reads it. */
	assert_string_equal(gate_c(rec("\"samples\":" S9("120.0")), BASE, S5("1e400")), "block");
	assert_string_equal(gate_c(rec("\"samples\":" S9("120.0")), BASE, S5("true")), "block");
}

static void test_17g_half_slow_run_is_bimodal(void **state)
{
	(void)state;
	/* split = [240.0] * 501 + [204.0] * 499 */
	ng_strbuf kw = {0};
	ng_strbuf_adds(&kw, "\"samples\":[");
	for (int i = 0; i < 1000; i++)
		ng_strbuf_adds(&kw, i == 0 ? "240.0" : i < 501 ? ",240.0" : ",204.0");
	ng_strbuf_addc(&kw, ']');
	assert_string_equal(gate(rec(kw.s), BASE), "bimodal");
	ng_strbuf_free(&kw);
	/* A uniformly slow run is not bimodal; it is slow. */
	assert_string_equal(gate_c(rec("\"samples\":" S9("211.2")), BASE, HEALTHY), "block");
}

static void test_17h_negative_wrong_is_invalid(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"wrong\":-1"), BASE), "invalid-input");
}

/* (18) NaN must fail closed. JSON has no NaN: a sample that is not a number
 * (here null, which the reference also rejects as not a finite number) takes
 * the same path, and the views carry it as NaN. ng_gate is then given a real
 * NaN directly, in test_18_nan_views_fail_closed. */
static void test_18_nan_fails_closed(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":" S9("null")), BASE), "invalid-input");
	assert_string_equal(gate(rec(""), BASE_MC("null", "0.04")), "no-baseline");
	assert_string_equal(gate(rec(""), BASE_MC("240.0", "null")), "no-baseline");
	assert_string_equal(gate(rec("\"wrong\":\"NaN\""), BASE), "invalid-input");
}

static void test_18_nan_views_fail_closed(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	ng_diag_entry diag[] = {{"pcie", NG_DIAG_PASS}, {"memory", NG_DIAG_PASS},
	                        {"nccl_tests", NG_DIAG_PASS}};
	double samples[9];
	for (int i = 0; i < 9; i++)
		samples[i] = 240.0;
	ng_gate_record r = {.wrong_kind = NG_WRONG_VALUE, .wrong = 0, .samples = samples,
	                    .n_samples = 9, .diag = diag, .n_diag = 3,
	                    .cls = {NG_CLASS_STRING, CLASS}};
	ng_gate_baseline b = {.median = 240.0, .cv = 0.04, .cls = {NG_CLASS_STRING, CLASS}};
	double work[16];
	ng_work w = {work, 16};
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_PASS);

	for (int i = 0; i < 9; i++)
		samples[i] = NAN;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_INVALID_INPUT);
	/* one NaN among numbers is as bad as nine */
	for (int i = 0; i < 9; i++)
		samples[i] = i == 4 ? NAN : 240.0;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_INVALID_INPUT);
	for (int i = 0; i < 9; i++)
		samples[i] = 240.0;

	b.median = NAN;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_NO_BASELINE);
	b.median = 240.0;
	b.cv = NAN;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_NO_BASELINE);
	b.cv = INFINITY;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_NO_BASELINE);
	b.cv = 0.04;

	r.wrong = NAN;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_INVALID_INPUT);
	r.wrong = -INFINITY;
	assert_int_equal(ng_gate(&r, &b, NULL, 0, &pol, w, NULL), NG_V_INVALID_INPUT);
}

static void test_19_corrupt_outranks_everything(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"wrong\":7,\"samples\":[]"), BASE), "corrupt");
	assert_string_equal(gate(rec("\"wrong\":3"), BASE_MC("0.0", "0.04")), "corrupt");
}

static void test_20_implausibility_bounds_inclusive(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":" S9("360.0")), BASE), "implausible"); /* 1.5 */
	assert_string_equal(gate(rec("\"samples\":" S9("60.0")), BASE), "implausible");  /* 0.25 */
}

static void test_21_non_positive_inputs(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":" S9("0.0")), BASE), "invalid-input");
	assert_string_equal(gate(rec("\"samples\":" S9("-240.0")), BASE), "invalid-input");
	assert_string_equal(gate(rec(""), BASE_MC("240.0", "0.0")), "no-baseline");
	assert_string_equal(gate(rec(""), BASE_MC("240.0", "-0.04")), "no-baseline");
}

static void test_22_missing_sentinel_cannot_be_spoofed(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"wrong\":\"missing\""), BASE), "invalid-input");
	assert_string_equal(gate(rec("\"wrong\":true"), BASE), "invalid-input");
}

static void test_23_one_sample_far_under_blocks(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":[120.0]"), BASE), "block");
}

/* ---- the runbook's executed output --------------------------------------------- */

static void test_executed_output_table(void **state)
{
	(void)state;
	struct row {
		const char *label;
		const char *record;
		const char *cohort;
		size_t n;
		const char *verdict;
	} rows[] = {
		{"at baseline", rec(""), NULL, 9, "pass"},
		{"exit 0, nothing parsed", rec("\"samples\":[]"), NULL, 0, "no-measurement"},
		{"diag block absent", BARE, NULL, 9, "diag-incomplete"},
		{"nccl_tests skipped",
		 rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"skip\"}"), NULL, 9,
		 "diag-incomplete"},
		{"#wrong read N/A", rec("\"wrong\":null"), NULL, 9, "correctness-unverified"},
		{"corrupt + wrong baseline", rec("\"wrong\":3,\"class\":\"other\""), NULL, 9, "corrupt"},
		{"run disagrees with itself", rec("\"samples\":[100.0,100.0,240.0,380.0,380.0]"), NULL, 5,
		 "unstable"},
		{"0.4% of baseline", rec("\"samples\":" S9("1.0")), NULL, 9, "implausible"},
		{"7% down, 1 sample", rec("\"samples\":[223.2]"), NULL, 1, "insufficient-samples"},
		{"NaN in samples", rec("\"samples\":" S9("null")), NULL, 9, "invalid-input"},
		{"corrupt with no samples", rec("\"wrong\":7,\"samples\":[]"), NULL, 0, "corrupt"},
		{"7% down, 9 samples", rec("\"samples\":" S9("223.2")), NULL, 9, "warn"},
		{"12% down, cohort also down", rec("\"samples\":" S9("211.2")), FLEET, 9,
		 "fleet-regression"},
		{"50% down, cohort mildly down", rec("\"samples\":" S9("120.0")), MILD, 9, "block"},
		{"12% down, cohort healthy", rec("\"samples\":" S9("211.2")), HEALTHY, 9, "block"},
	};
	/* rec() texts live in a ring of RING (16); the table holds fourteen */
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		ng_gate_trace t;
		ng_verdict v = judge(rows[i].record, BASE, rows[i].cohort, NULL, &t);
		if (strcmp(ng_verdict_name(v), rows[i].verdict) != 0 || t.n != rows[i].n)
			fail_msg("row \"%s\": %s with n=%zu, runbook says %s with n=%zu", rows[i].label,
			         ng_verdict_name(v), t.n, rows[i].verdict, rows[i].n);
	}
	assert_int_equal(sizeof rows / sizeof *rows, 15);
}

/* ---- bars and boundaries ------------------------------------------------------ */

/* The warn and block bars are strict too. With warn 0.0625 and block 0.125
 * (exact in binary), baseline median 1 and 64 samples (noise bar 0.01), a
 * drop exactly on a bar does not clear it. The reference's WARN and BLOCK,
 * set to the same values, give the same four verdicts. */
static void test_bars_are_strict(void **state)
{
	(void)state;
	ng_policy p = policy("{\"gate\":{\"warn\":0.0625,\"block\":0.125}}");
	const char *base = BASE_MC("1.0", "0.04");
	assert_string_equal(gate_p(rec_f("\"samples\":%s", reps(0.9375, 64)), base, NULL, &p), "pass");
	assert_string_equal(
		gate_p(rec_f("\"samples\":%s", reps(nextafter(0.9375, 0), 64)), base, NULL, &p), "warn");
	/* on the block bar: the samples sit exactly on the slow line, which is
	 * strict as well, so this is not bimodal either */
	assert_string_equal(gate_p(rec_f("\"samples\":%s", reps(0.875, 64)), base, NULL, &p), "warn");
	assert_string_equal(
		gate_p(rec_f("\"samples\":%s", reps(nextafter(0.875, 0), 64)), base, NULL, &p), "block");
}

static void test_ratio_just_inside_fast_and_slow(void **state)
{
	(void)state;
	assert_string_equal(gate(rec_f("\"samples\":%s", reps(nextafter(360.0, 0), 9)), BASE), "pass");
	assert_string_equal(gate(rec_f("\"samples\":%s", reps(nextafter(60.0, 1000), 9)), BASE), "block");
	ng_gate_trace t;
	judge(rec("\"samples\":" S9("360.0")), BASE, NULL, NULL, &t);
	assert_double_bits(t.ratio, 1.5);
	assert_int_equal(t.step, NG_STEP_IMPLAUSIBLE);
	assert_true(isnan(t.drop)); /* the rule stopped before the drop */
}

/* spread = std/mean. Samples 1 -+ 0.1875 have a spread of exactly 0.1875, and
 * with cv 0.0625 the instability bar 3 * cv is exactly 0.1875 too. */
static void test_unstable_bar_is_strict(void **state)
{
	(void)state;
	const char *base = BASE_MC("1.0", "0.0625");
	ng_gate_trace t;
	ng_verdict v = judge(rec("\"samples\":[0.8125,1.1875]"), base, NULL, NULL, &t);
	assert_double_bits(t.spread, 0.1875);
	/* not unstable; half its samples are under the slow line, so bimodal */
	assert_string_equal(ng_verdict_name(v), "bimodal");
}

static void test_unstable_just_past_bar(void **state)
{
	(void)state;
	const char *base = BASE_MC("1.0", "0.0625");
	ng_strbuf kw = {0};
	ng_strbuf_adds(&kw, "\"samples\":[");
	ng_strbuf_add_double(&kw, 0.8125 - 0x1p-20);
	ng_strbuf_addc(&kw, ',');
	ng_strbuf_add_double(&kw, 1.1875 + 0x1p-20);
	ng_strbuf_addc(&kw, ']');
	assert_string_equal(gate(rec(kw.s), base), "unstable");
	ng_strbuf_free(&kw);
}

/* The slow fraction and the slow line: two of eight slow samples is exactly
 * the bimodal share (>=), two of nine is not; a sample exactly on
 * 0.9 * median is not slow (strict <), one rounding under it is. */
static void test_bimodal_boundaries(void **state)
{
	(void)state;
	ng_gate_trace t;
	ng_verdict v = judge(rec("\"samples\":[240.0,240.0,240.0,240.0,240.0,240.0,204.0,204.0]"), BASE,
	                     NULL, NULL, &t);
	assert_string_equal(ng_verdict_name(v), "bimodal");
	assert_double_bits(t.slow_fraction, 0.25);
	assert_string_equal(
		gate(rec("\"samples\":[240.0,240.0,240.0,240.0,240.0,240.0,240.0,204.0,204.0]"), BASE), "pass");
	assert_string_equal(
		gate(rec("\"samples\":[240.0,240.0,240.0,240.0,240.0,240.0,216.0,216.0]"), BASE), "pass");
	double under = nextafter(216.0, 0);
	assert_string_equal(gate(rec_f("\"samples\":[240.0,240.0,240.0,240.0,240.0,240.0,%.17g,%.17g]",
	                               under, under),
	                         BASE),
	                    "bimodal");
}

/* ---- one sample against many ----------------------------------------------------- */

static void test_one_sample_vs_many(void **state)
{
	(void)state;
	/* 7% down: one sample's noise bar is 8%, two samples' 5.7%, four's 4% */
	assert_string_equal(gate(rec("\"samples\":[223.2]"), BASE), "insufficient-samples");
	assert_string_equal(gate(rec("\"samples\":[223.2,223.2]"), BASE), "warn");
	assert_string_equal(gate(rec("\"samples\":[223.2,223.2,223.2,223.2]"), BASE), "warn");
	/* a single sample at or above baseline passes; a hair under it cannot be
	 * resolved, which is not a pass */
	assert_string_equal(gate(rec("\"samples\":[240.0]"), BASE), "pass");
	assert_string_equal(gate(rec("\"samples\":[240.1]"), BASE), "pass");
	assert_string_equal(gate(rec("\"samples\":[239.9]"), BASE), "insufficient-samples");
	/* past the one-sample noise bar, a single sample is a finding */
	assert_string_equal(gate(rec("\"samples\":[220.0]"), BASE), "warn");
	assert_string_equal(gate(rec("\"samples\":[192.0]"), BASE), "block");
	/* one sample never has a spread to be unstable with */
	ng_gate_trace t;
	judge(rec("\"samples\":[239.9]"), BASE, NULL, NULL, &t);
	assert_true(isnan(t.spread));
	assert_int_equal(t.n, 1);
}

/* ---- many samples ------------------------------------------------------------- */

static const char *samples_formula(size_t n, double (*f)(size_t))
{
	ng_strbuf *b = ring_buf();
	ng_strbuf_adds(b, "\"samples\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			ng_strbuf_addc(b, ',');
		ng_strbuf_add_double(b, f(i));
	}
	ng_strbuf_addc(b, ']');
	assert_false(b->oom);
	return b->s;
}

static double at_baseline(size_t i) { (void)i; return 240.0; }
static double down_7pct(size_t i) { (void)i; return 223.2; }
/* 240 * (1 +- 10%), spread about 5.8%: inside the instability bar 12% */
static double wobble(size_t i) { return 240.0 * (1.0 + 0.2 * ((double)((i * 7919) % 1000) / 999.0 - 0.5)); }
/* 240 * (1 +- 25%): spread about 14%, past it */
static double wide(size_t i) { return 240.0 * (1.0 + 0.5 * ((double)((i * 7919) % 1000) / 999.0 - 0.5)); }
/* every third sample 15% down: median at baseline, a third slow */
static double thirds(size_t i) { return i % 3 == 0 ? 204.0 : 240.0; }

static void test_huge_sample_counts(void **state)
{
	(void)state;
	ng_gate_trace t;
	ng_verdict v = judge(rec(samples_formula(200000, at_baseline)), BASE, NULL, NULL, &t);
	assert_string_equal(ng_verdict_name(v), "pass");
	assert_int_equal(t.n, 200000);
	assert_string_equal(gate(rec(samples_formula(200000, down_7pct)), BASE), "warn");
	assert_string_equal(gate(rec(samples_formula(200000, thirds)), BASE), "bimodal");
	/* more than numpy's 8192-element reduction buffer */
	assert_string_equal(gate(rec(samples_formula(8193, wobble)), BASE), "pass");
	assert_string_equal(gate(rec(samples_formula(20000, wobble)), BASE), "pass");
	assert_string_equal(gate(rec(samples_formula(20000, wide)), BASE), "unstable");
	assert_string_equal(gate(rec(samples_formula(8193, down_7pct)), BASE), "warn");
}

/* ---- tiny and huge values ------------------------------------------------------ */

static void test_tiny_and_huge_values(void **state)
{
	(void)state;
	assert_string_equal(gate(rec("\"samples\":" S9("1e-300")), BASE_MC("1e-300", "0.04")), "pass");
	assert_string_equal(gate(rec("\"samples\":" S9("1e300")), BASE_MC("1e300", "0.04")), "pass");
	/* squared deviations of 1e299 overflow: spread inf, unstable */
	assert_string_equal(gate(rec("\"samples\":[1e300,1.1e300,0.9e300,1e300,1e300]"),
	                         BASE_MC("1e300", "0.04")),
	                    "unstable");
	/* squared deviations of 1e-302 underflow to zero: spread 0 */
	assert_string_equal(gate(rec("\"samples\":[1e-300,1.01e-300,0.99e-300,1e-300,1e-300]"),
	                         BASE_MC("1e-300", "0.04")),
	                    "pass");
	/* nine DBL_MAX overflow the mean: spread is inf/inf = NaN, which is not
	 * past the instability bar; the reference does the same and passes */
	assert_string_equal(gate(rec("\"samples\":" S9("1.7976931348623157e308")),
	                         BASE_MC("1.7976931348623157e308", "0.04")),
	                    "pass");
	assert_string_equal(gate(rec("\"samples\":[1.7976931348623157e308,1.7976931348623157e308,1.6e308]"),
	                         BASE_MC("1.7976931348623157e308", "0.04")),
	                    "bimodal");
	assert_string_equal(gate(rec("\"samples\":" S9("1e-300")), BASE), "implausible");
	assert_string_equal(gate(rec("\"samples\":" S9("1e300")), BASE), "implausible");
	assert_string_equal(gate(rec(""), BASE_MC("1e-300", "0.04")), "implausible");
	/* the smallest subnormal is still a positive number */
	assert_string_equal(gate(rec(""), BASE_MC("240.0", "5e-324")), "pass");
	assert_string_equal(gate(rec("\"samples\":" S9("5e-324")), BASE_MC("5e-324", "0.04")), "pass");
	/* a cv of 1e300 makes every shortfall unresolvable, even over nine samples */
	assert_string_equal(gate(rec("\"samples\":" S9("223.2")), BASE_MC("240.0", "1e300")),
	                    "insufficient-samples");
	/* 1e400 reads as infinity, which is not a measurement */
	assert_string_equal(gate(rec("\"samples\":" S9("1e400")), BASE), "invalid-input");
	assert_string_equal(gate(rec(""), BASE_MC("1e400", "0.04")), "no-baseline");
}

/* ---- degenerate cohorts -------------------------------------------------------- */

#define NODE_12 "\"samples\":" S9("211.2")

static void test_cohort_size(void **state)
{
	(void)state;
	/* exactly cohort_min members excuse; four do not; six (one healthy) do */
	assert_string_equal(gate_c(rec(NODE_12), BASE, FLEET), "fleet-regression");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.115,0.125,0.118]"), "block");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.115,0.125,0.118,0.122,0.0]"),
	                    "fleet-regression");
	/* none at all, null and [] are the same empty cohort */
	assert_string_equal(gate_c(rec(NODE_12), BASE, "null"), "block");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[]"), "block");
}

static void test_cohort_majority_boundary(void **state)
{
	(void)state;
	ng_gate_trace t;
	/* 3 of 5 past the warn bar is exactly 0.6, and the majority test is >= */
	ng_verdict v = judge(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.0,0.0]", NULL, &t);
	assert_string_equal(ng_verdict_name(v), "fleet-regression");
	assert_double_bits(t.cohort_past_warn, 0.6);
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.0,0.0,0.0]"), "block");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,0.12,0.12,0,0,0,0]"),
	                    "fleet-regression");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,0.12,0,0,0,0]"), "block");
	/* past the warn bar is strict: drops of exactly 0.05 are not past it */
	v = judge(rec(NODE_12), BASE, S5("0.05"), NULL, &t);
	assert_string_equal(ng_verdict_name(v), "block");
	assert_double_bits(t.cohort_past_warn, 0.0);
}

static void test_cohort_drop_limits(void **state)
{
	(void)state;
	/* +-1.0 are inside the limit; one rounding past either invalidates all */
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,1.0]"), "fleet-regression");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,-1.0]"), "fleet-regression");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,1.0000000000000002]"),
	                    "block");
	assert_string_equal(gate_c(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,-1.0000000000000002]"),
	                    "block");
	ng_gate_trace t;
	judge(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,0.12,1.0000000000000002]", NULL, &t);
	assert_int_equal(t.cohort_n, 6);
	assert_int_equal(t.cohort_valid, 5);
	assert_int_equal(t.step, NG_STEP_BLOCK);
}

static void test_cohort_non_numbers(void **state)
{
	(void)state;
	/* one member that is not a finite number spoils the cohort, even when
	 * five valid members remain */
	const char *bad[] = {
		"[0.12,0.12,0.12,0.12,0.12,\"0.12\"]", "[0.12,0.12,0.12,0.12,0.12,true]",
		"[0.12,0.12,0.12,0.12,0.12,false]",    "[0.12,0.12,0.12,0.12,0.12,null]",
		"[0.12,0.12,0.12,0.12,0.12,[0.12]]",   "[0.12,0.12,0.12,0.12,0.12,{}]",
		"[0.12,0.12,0.12,0.12,0.12,1e400]",    "[0.12,0.12,0.12,0.12,0.12,-1e400]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *v = gate_c(rec(NODE_12), BASE, bad[i]);
		if (strcmp(v, "block") != 0)
			fail_msg("cohort %s: %s, want block", bad[i], v);
	}
	/* integers are numbers: a fleet that lost everything excuses a node that
	 * lost half (one-sided), as the reference does */
	assert_string_equal(gate_c(rec("\"samples\":" S9("120.0")), BASE, "[1,1,1,1,1]"),
	                    "fleet-regression");
	/* a node better than the cohort is explained by it */
	assert_string_equal(gate_c(rec("\"samples\":" S9("223.2")), BASE, FLEET), "fleet-regression");
}

/* NaN and infinities cannot be written in JSON; give them as numbers. */
static void test_cohort_nan_and_inf_doubles(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err = {0};
	cJSON *r = parse_or_fail(rec(NODE_12));
	cJSON *b = parse_or_fail(BASE);
	ng_gate_input in = {0};
	assert_int_equal(ng_gate_input_record(&in, r, NULL, &err), 0);
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);

	double ok[] = {0.12, 0.115, 0.125, 0.118, 0.122};
	assert_int_equal(ng_gate_input_cohort(&in, ok, 5, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_FLEET_REGRESSION);

	double spoilers[] = {NAN, INFINITY, -INFINITY, 1.5, -1.5};
	for (size_t k = 0; k < sizeof spoilers / sizeof *spoilers; k++) {
		double c[6] = {0.12, 0.115, 0.125, 0.118, 0.122, spoilers[k]};
		assert_int_equal(ng_gate_input_cohort(&in, c, 6, &err), 0);
		assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_BLOCK);
	}
	double all_nan[] = {NAN, NAN, NAN, NAN, NAN};
	assert_int_equal(ng_gate_input_cohort(&in, all_nan, 5, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_BLOCK);

	ng_gate_input_free(&in);
	cJSON_Delete(r);
	cJSON_Delete(b);
}

/* ---- duplicate keys: the last one wins --------------------------------------------- */

#define SAMP9 "\"samples\":" S9("240.0")

static void test_duplicate_keys_last_wins(void **state)
{
	(void)state;
	assert_string_equal(gate("{\"class\":\"" CLASS "\"," SAMP9 ",\"wrong\":3,\"diag\":" DIAG_OK
	                         ",\"wrong\":0}",
	                         BASE),
	                    "pass");
	assert_string_equal(gate("{\"class\":\"" CLASS "\"," SAMP9 ",\"wrong\":0,\"diag\":" DIAG_OK
	                         ",\"wrong\":3}",
	                         BASE),
	                    "corrupt");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"fail\",\"memory\":\"pass\","
	                             "\"nccl_tests\":\"pass\",\"pcie\":\"pass\"}"),
	                         BASE),
	                    "pass");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\","
	                             "\"nccl_tests\":\"pass\",\"pcie\":\"skip\"}"),
	                         BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"bogus\",\"memory\":\"pass\","
	                             "\"nccl_tests\":\"pass\",\"pcie\":\"pass\"}"),
	                         BASE),
	                    "pass");
	assert_string_equal(gate(rec("\"samples\":[],\"samples\":[240.0]"), BASE), "pass");
	assert_string_equal(gate(rec("\"samples\":[240.0],\"samples\":[]"), BASE), "no-measurement");
	assert_string_equal(gate(rec(""), "{\"class\":\"" CLASS "\",\"median\":0,\"cv\":0.04,\"median\":240.0}"),
	                    "pass");
	assert_string_equal(gate(rec(""), "{\"class\":\"x\",\"median\":240.0,\"cv\":0.04,\"class\":\"" CLASS "\"}"),
	                    "pass");
	assert_string_equal(gate(rec(""), "{\"class\":\"" CLASS "\",\"median\":240.0,\"cv\":0.04,\"class\":\"x\"}"),
	                    "incomparable");
}

static void test_keys_are_case_sensitive(void **state)
{
	(void)state;
	/* "Wrong" is not "wrong": wrong is absent, which is invalid */
	assert_string_equal(gate("{\"class\":\"" CLASS "\"," SAMP9 ",\"Wrong\":0,\"diag\":" DIAG_OK "}", BASE),
	                    "invalid-input");
	assert_string_equal(gate(rec("\"Class\":\"x\""), BASE), "pass");
	assert_string_equal(gate(rec("\"diag\":{\"PCIE\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\"}"),
	                         BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"PASS\",\"memory\":\"pass\",\"nccl_tests\":\"pass\"}"),
	                         BASE),
	                    "invalid-input");
}

/* ---- class equality -------------------------------------------------------------- */

/* A record at baseline with class cls (NULL: absent) against a baseline with
 * class bcls (NULL: absent). */
static const char *gate_classes(const char *cls, const char *bcls)
{
	ng_strbuf *r = ring_buf();
	ng_strbuf_adds(r, "{" SAMP9 ",\"wrong\":0,\"diag\":" DIAG_OK);
	if (cls)
		ng_strbuf_printf(r, ",\"class\":%s", cls);
	ng_strbuf_addc(r, '}');
	ng_strbuf *b = ring_buf();
	ng_strbuf_adds(b, "{\"median\":240.0,\"cv\":0.04");
	if (bcls)
		ng_strbuf_printf(b, ",\"class\":%s", bcls);
	ng_strbuf_addc(b, '}');
	return gate(r->s, b->s);
}

static void test_class_absent_vs_null(void **state)
{
	(void)state;
	assert_string_equal(gate_classes(NULL, NULL), "pass");
	assert_string_equal(gate_classes("null", NULL), "pass");
	assert_string_equal(gate_classes(NULL, "null"), "pass");
	assert_string_equal(gate_classes("null", "null"), "pass");
	assert_string_equal(gate_classes("null", "\"x\""), "incomparable");
	assert_string_equal(gate_classes("\"x\"", NULL), "incomparable");
	assert_string_equal(gate_classes("\"\"", NULL), "incomparable");
	assert_string_equal(gate_classes("0", "null"), "incomparable");
	assert_string_equal(gate_classes("false", NULL), "incomparable");
	/* no baseline object at all: its class is absent, but so is its median */
	assert_string_equal(gate(rec(""), NULL), "no-baseline");
}

static void test_class_python_equality(void **state)
{
	(void)state;
	assert_string_equal(gate_classes("1", "1.0"), "pass");
	assert_string_equal(gate_classes("true", "1"), "pass");
	assert_string_equal(gate_classes("true", "1e0"), "pass");
	assert_string_equal(gate_classes("false", "0"), "pass");
	assert_string_equal(gate_classes("0", "-0.0"), "pass");
	assert_string_equal(gate_classes("\"1\"", "1"), "incomparable");
	assert_string_equal(gate_classes("true", "\"true\""), "incomparable");
	assert_string_equal(gate_classes("1", "2"), "incomparable");
	assert_string_equal(gate_classes("[1,\"a\"]", "[1.0,\"a\"]"), "pass");
	assert_string_equal(gate_classes("[1,\"a\"]", "[\"a\",1]"), "incomparable");
	assert_string_equal(gate_classes("[[true]]", "[[1]]"), "pass");
	assert_string_equal(gate_classes("{\"a\":1,\"b\":2}", "{\"b\":2.0,\"a\":true}"), "pass");
	assert_string_equal(gate_classes("{\"a\":1,\"a\":2}", "{\"a\":2}"), "pass");
	assert_string_equal(gate_classes("{\"a\":1,\"a\":2}", "{\"a\":1}"), "incomparable");
	assert_string_equal(gate_classes("[]", "{}"), "incomparable");
	assert_string_equal(gate_classes("[]", "[]"), "pass");
	assert_string_equal(gate_classes("1e400", "1e401"), "pass");
	assert_string_equal(gate_classes("\"" CLASS "\"", "\"" CLASS " \""), "incomparable");
	/* Python keeps an integer literal exactly and compares it with a float
	 * by exact value: 2**53 + 1 is neither 2**53 nor the float 2**53 + 1.0
	 * (which rounds to 2**53), while 10**22 is exactly 1e22 */
	assert_string_equal(gate_classes("9007199254740993", "9007199254740992"), "incomparable");
	assert_string_equal(gate_classes("9007199254740993", "9007199254740992.0"), "incomparable");
	assert_string_equal(gate_classes("[9007199254740993]", "[9007199254740993.0]"), "incomparable");
	assert_string_equal(gate_classes("9007199254740992", "9007199254740992.0"), "pass");
	assert_string_equal(gate_classes("10000000000000000000000", "1e22"), "pass");
	assert_string_equal(gate_classes("-10000000000000000000000", "-1e22"), "pass");
	assert_string_equal(gate_classes("12345678901234567890", "12345678901234567890"), "pass");
	assert_string_equal(gate_classes("12345678901234567890", "12345678901234567891"), "incomparable");
	char big[512];
	snprintf(big, sizeof big, "1%0400d", 0);
	assert_string_equal(gate_classes(big, "1e400"), "incomparable");
}

/* ---- the diag block -------------------------------------------------------------- */

static void test_diag_shapes(void **state)
{
	(void)state;
	/* `record.get("diag") or {}`: every falsy diag is an empty one */
	const char *empty[] = {"[]", "null", "{}", "0", "false", "\"\""};
	for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
		const char *v = gate(rec_f("\"diag\":%s", empty[i]), BASE);
		if (strcmp(v, "diag-incomplete") != 0)
			fail_msg("diag %s: %s, want diag-incomplete", empty[i], v);
	}
	/* A truthy diag that is not an object makes the reference raise
	 * (AttributeError: no .values()); the gate fails closed instead. */
	const char *malformed[] = {"[\"pcie\",\"memory\",\"nccl_tests\"]", "\"pcie\"", "1", "true"};
	for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
		ng_gate_trace t;
		ng_verdict v = judge(rec_f("\"diag\":%s", malformed[i]), BASE, NULL, NULL, &t);
		if (v != NG_V_INVALID_INPUT || t.step != NG_STEP_DIAG_INVALID)
			fail_msg("diag %s: %s, want invalid-input", malformed[i], ng_verdict_name(v));
	}
}

static void test_diag_statuses(void **state)
{
	(void)state;
	/* every status counts, required or not */
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\","
	                             "\"extra\":\"skip\"}"),
	                         BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\","
	                             "\"extra\":\"fail\"}"),
	                         BASE),
	                    "diag-failed");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\","
	                             "\"extra\":\"bogus\"}"),
	                         BASE),
	                    "invalid-input");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":null}"),
	                         BASE),
	                    "invalid-input");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":true}"),
	                         BASE),
	                    "invalid-input");
	/* order: an unknown status, then absent or skipped, then failed */
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"fail\",\"memory\":\"skip\",\"nccl_tests\":\"pass\"}"),
	                         BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"fail\",\"memory\":\"pass\"}"), BASE),
	                    "diag-incomplete");
	assert_string_equal(gate(rec("\"diag\":{\"pcie\":\"bogus\"}"), BASE), "invalid-input");
}

/* ---- the #wrong field -------------------------------------------------------------- */

static void test_wrong_huge_integer_vs_1e400(void **state)
{
	(void)state;
	char kw[512];
	/* 10**400 is a finite int to the reference, so the run is corrupt;
	 * -10**400 is a negative count. Both need the source text. */
	snprintf(kw, sizeof kw, "\"wrong\":1%0400d", 0);
	assert_string_equal(gate(rec(kw), BASE), "corrupt");
	snprintf(kw, sizeof kw, "\"wrong\":-1%0400d", 0);
	assert_string_equal(gate(rec(kw), BASE), "invalid-input");
	snprintf(kw, sizeof kw, "\"wrong\":1%0400d,\"samples\":[]", 0);
	assert_string_equal(gate(rec(kw), BASE), "corrupt");
	/* 1e400 is float('inf') to the reference: not a finite count */
	assert_string_equal(gate(rec("\"wrong\":1e400"), BASE), "invalid-input");
	assert_string_equal(gate(rec("\"wrong\":-1e400"), BASE), "invalid-input");
	assert_string_equal(gate(rec("\"wrong\":1E400"), BASE), "invalid-input");

	/* Without the source text the two cannot be told apart, and both are
	 * infinite: fail closed. */
	snprintf(kw, sizeof kw, "\"wrong\":1%0400d", 0);
	const char *text = rec(kw);
	cJSON *r = parse_or_fail(text);
	cJSON *b = parse_or_fail(BASE);
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err = {0};
	ng_gate_input in = {0};
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_int_equal(ng_gate_input_record(&in, r, NULL, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_INVALID_INPUT);
	ng_json_source src = {text, strlen(text), r};
	assert_int_equal(ng_gate_input_record(&in, r, &src, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_CORRUPT);
	ng_json_source no_text = {NULL, 0, r};
	assert_int_equal(ng_gate_input_record(&in, r, &no_text, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_INVALID_INPUT);
	ng_gate_input_free(&in);
	cJSON_Delete(r);
	cJSON_Delete(b);
}

/* 10**400 as a sample or a baseline value: a finite int to the reference,
 * so every check that only compares it passes it, and the reference raises
 * (OverflowError) where its arithmetic first makes it a float. Where the
 * reference answers, the gate gives the same answer; where it raises, the
 * gate fails closed. */
static void test_integer_too_large_for_a_double(void **state)
{
	(void)state;
	char big[512], kw[1024];
	snprintf(big, sizeof big, "1%0400d", 0);
	/* the reference answers before any arithmetic */
	snprintf(kw, sizeof kw, "\"wrong\":3,\"samples\":[%s]", big);
	assert_string_equal(gate(rec(kw), BASE), "corrupt");
	snprintf(kw, sizeof kw, "\"class\":\"x\",\"samples\":[%s]", big);
	assert_string_equal(gate(rec(kw), BASE), "incomparable");
	snprintf(kw, sizeof kw, "\"diag\":{},\"samples\":[%s]", big);
	assert_string_equal(gate(rec(kw), BASE), "diag-incomplete");
	snprintf(kw, sizeof kw, "\"samples\":[-%s]", big);
	assert_string_equal(gate(rec(kw), BASE), "invalid-input");
	/* the reference raises: the gate refuses, and says where */
	const char *raising[2];
	char t1[1024], t2[1024];
	snprintf(t1, sizeof t1, "\"samples\":[%s]", big);
	snprintf(t2, sizeof t2, "\"samples\":[240.0,%s]", big);
	raising[0] = rec(t1);
	raising[1] = rec(t2);
	for (int i = 0; i < 2; i++) {
		ng_gate_trace t;
		ng_verdict v = judge(raising[i], BASE, NULL, NULL, &t);
		assert_int_equal(v, NG_V_INVALID_INPUT);
		assert_int_equal(t.step, NG_STEP_OVERFLOW);
	}
	char base[1024];
	snprintf(base, sizeof base, "{\"class\":\"" CLASS "\",\"median\":%s,\"cv\":0.04}", big);
	assert_string_equal(gate(rec(""), base), "invalid-input");
	snprintf(base, sizeof base, "{\"class\":\"" CLASS "\",\"median\":240,\"cv\":%s}", big);
	assert_string_equal(gate(rec(""), base), "invalid-input");
	assert_string_equal(gate(rec("\"samples\":[240.0]"), base), "invalid-input");
}

static void test_wrong_values(void **state)
{
	(void)state;
	struct {
		const char *wrong, *verdict;
	} cases[] = {
		{"0", "pass"},          {"0.0", "pass"},       {"-0.0", "pass"},
		{"-0", "pass"},         {"1e-400", "pass"},    {"0.5", "corrupt"},
		{"1e-300", "corrupt"},  {"1", "corrupt"},      {"-1e-300", "invalid-input"},
		{"\"0\"", "invalid-input"}, {"[0]", "invalid-input"}, {"{}", "invalid-input"},
		{"false", "invalid-input"}, {"true", "invalid-input"}, {"null", "correctness-unverified"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *v = gate(rec_f("\"wrong\":%s", cases[i].wrong), BASE);
		if (strcmp(v, cases[i].verdict) != 0)
			fail_msg("wrong=%s: %s, want %s", cases[i].wrong, v, cases[i].verdict);
	}
	/* absent */
	assert_string_equal(gate("{\"class\":\"" CLASS "\"," SAMP9 ",\"diag\":" DIAG_OK "}", BASE),
	                    "invalid-input");
}

static void test_samples_shapes(void **state)
{
	(void)state;
	struct {
		const char *samples, *verdict;
	} cases[] = {
		{"false", "no-measurement"},   {"null", "no-measurement"},
		{"0", "no-measurement"},       {"{}", "no-measurement"},
		{"\"\"", "no-measurement"},    {"\"abc\"", "invalid-input"},
		{"{\"a\":1}", "invalid-input"}, {"[240.0,true]", "invalid-input"},
		{"[240.0,\"240\"]", "invalid-input"}, {"[[240.0]]", "invalid-input"},
		{"[240,240,240]", "pass"},      {"[240.0,-0.0]", "invalid-input"},
		{"[240.0,5e-324]", "unstable"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *v = gate(rec_f("\"samples\":%s", cases[i].samples), BASE);
		if (strcmp(v, cases[i].verdict) != 0)
			fail_msg("samples=%s: %s, want %s", cases[i].samples, v, cases[i].verdict);
	}
}

static void test_baseline_shapes(void **state)
{
	(void)state;
	assert_string_equal(gate(rec(""), BASE_MC("\"240\"", "0.04")), "no-baseline");
	assert_string_equal(gate(rec(""), BASE_MC("true", "0.04")), "no-baseline");
	assert_string_equal(gate(rec(""), BASE_MC("240", "true")), "no-baseline");
	assert_string_equal(gate(rec(""), BASE_MC("240", "0.04")), "pass");
	assert_string_equal(gate(rec(""), "{\"class\":\"" CLASS "\",\"median\":240}"), "no-baseline");
	assert_string_equal(gate(rec(""), "{}"), "no-baseline");
	assert_string_equal(gate(rec(""), "null"), "no-baseline");
	/* the sample and wrong checks come first */
	assert_string_equal(gate(rec("\"samples\":[]"), "{}"), "no-measurement");
	assert_string_equal(gate(rec("\"samples\":[-1]"), "{}"), "invalid-input");
}

/* ---- policy overrides ---------------------------------------------------------------- */

static void test_policy_overrides_change_verdicts(void **state)
{
	(void)state;
	const char *down7 = rec("\"samples\":" S9("223.2"));
	ng_policy p = policy("{\"gate\":{\"block\":0.06}}");
	assert_string_equal(gate_p(down7, BASE, NULL, &p), "block");
	p = policy("{\"gate\":{\"warn\":0.08,\"block\":0.2}}");
	assert_string_equal(gate_p(down7, BASE, NULL, &p), "pass");
	/* no noise allowance: one sample 7% down is a finding */
	p = policy("{\"gate\":{\"noise_sigmas\":0}}");
	assert_string_equal(gate_p(rec("\"samples\":[223.2]"), BASE, NULL, &p), "warn");

	/* required_diag empty: an absent diag block no longer holds the node,
	 * but a status present is still read */
	p = policy("{\"gate\":{\"required_diag\":[]}}");
	assert_string_equal(gate_p(BARE, BASE, NULL, &p), "pass");
	assert_string_equal(gate_p(rec("\"diag\":[]"), BASE, NULL, &p), "pass");
	assert_string_equal(gate_p(rec("\"diag\":{\"x\":\"skip\"}"), BASE, NULL, &p), "diag-incomplete");
	assert_string_equal(gate_p(rec("\"diag\":{\"x\":\"fail\"}"), BASE, NULL, &p), "diag-failed");
	p = policy("{\"gate\":{\"required_diag\":[\"pcie\"]}}");
	assert_string_equal(gate_p(rec("\"diag\":{\"pcie\":\"pass\"}"), BASE, NULL, &p), "pass");
	p = policy("{\"gate\":{\"required_diag\":[\"pcie\",\"nvbandwidth\"]}}");
	ng_gate_trace t;
	ng_verdict v = judge(rec(""), BASE, NULL, &p, &t);
	assert_string_equal(ng_verdict_name(v), "diag-incomplete");
	assert_string_equal(t.diag_test, "nvbandwidth");

	/* a cohort of three may excuse a node when the policy says so */
	p = policy("{\"gate\":{\"cohort_min\":3}}");
	assert_string_equal(gate_p(rec(NODE_12), BASE, "[0.12,0.11,0.0]", &p), "fleet-regression");
	p = policy("{\"gate\":{\"cohort_majority\":1}}");
	assert_string_equal(gate_p(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,0.0]", &p), "block");
	p = policy("{\"gate\":{\"cohort_drop_limit\":2}}");
	assert_string_equal(gate_p(rec(NODE_12), BASE, "[0.12,0.12,0.12,0.12,1.5]", &p),
	                    "fleet-regression");

	p = policy("{\"gate\":{\"fast\":2}}");
	assert_string_equal(gate_p(rec("\"samples\":" S9("360.0")), BASE, NULL, &p), "pass");
	p = policy("{\"gate\":{\"slow\":0.5}}");
	assert_string_equal(gate_p(rec("\"samples\":" S9("120.0")), BASE, NULL, &p), "implausible");
	p = policy("{\"gate\":{\"unstable_cv_multiple\":100}}");
	assert_string_equal(gate_p(rec("\"samples\":[100.0,100.0,240.0,380.0,380.0]"), BASE, NULL, &p),
	                    "bimodal");
	p = policy("{\"gate\":{\"bimodal_fraction\":0.5}}");
	assert_string_equal(
		gate_p(rec("\"samples\":[240.0,240.0,240.0,240.0,240.0,240.0,204.0,204.0]"), BASE, NULL, &p),
		"pass");
}

/* ---- the trace -------------------------------------------------------------------- */

/* Expected values from the runbook's own expressions in numpy 1.24 (ratio =
 * float(np.median(s)) / 240.0, drop = 1.0 - that, noise = 2.0 * 0.04 /
 * np.sqrt(n), slow = float(np.mean(np.asarray(s) < 240.0 * 0.9)), spread =
 * float(np.std(s) / np.mean(s))), printed with float.hex(). */
static void test_trace_warn(void **state)
{
	(void)state;
	ng_gate_trace t;
	ng_verdict v = judge(rec("\"samples\":" S9("223.2")), BASE, NULL, NULL, &t);
	assert_int_equal(v, NG_V_WARN);
	assert_int_equal(t.step, NG_STEP_WARN);
	assert_int_equal(t.n, 9);
	assert_double_bits(t.median, 0x1.be66666666666p+7);
	assert_double_bits(t.spread, 0x0.0p+0);
	assert_double_bits(t.ratio, 0x1.dc28f5c28f5c2p-1);
	assert_double_bits(t.drop, 0x1.1eb851eb851f0p-4);
	assert_double_bits(t.noise_bar, 0x1.b4e81b4e81b4fp-6);
	assert_double_bits(t.slow_fraction, 0.0);
	assert_int_equal(t.cohort_n, 0);
	assert_int_equal(t.cohort_valid, 0);
	assert_true(isnan(t.cohort_median));
	assert_true(isnan(t.cohort_past_warn));
	assert_null(t.diag_test);
	assert_string_equal(ng_gate_step_text(t.step),
	                    "the drop clears the warn bar and the noise bar, not the block bar");
}

static void test_trace_fleet_and_mild(void **state)
{
	(void)state;
	ng_gate_trace t;
	ng_verdict v = judge(rec(NODE_12), BASE, FLEET, NULL, &t);
	assert_int_equal(v, NG_V_FLEET_REGRESSION);
	assert_int_equal(t.step, NG_STEP_FLEET);
	assert_double_bits(t.drop, 0x1.eb851eb851eb8p-4);
	assert_double_bits(t.ratio, 0x1.c28f5c28f5c29p-1);
	assert_double_bits(t.slow_fraction, 1.0);
	assert_int_equal(t.cohort_n, 5);
	assert_int_equal(t.cohort_valid, 5);
	assert_double_bits(t.cohort_past_warn, 1.0);
	assert_double_bits(t.cohort_median, 0x1.eb851eb851eb8p-4); /* np.median(fleet) = 0.12 */

	v = judge(rec("\"samples\":" S9("120.0")), BASE, MILD, NULL, &t);
	assert_int_equal(v, NG_V_BLOCK);
	assert_int_equal(t.step, NG_STEP_BLOCK);
	assert_double_bits(t.drop, 0.5);
	assert_double_bits(t.cohort_median, 0x1.db22d0e560419p-5); /* 0.058 */
	assert_double_bits(t.cohort_past_warn, 1.0);
	assert_true(t.drop - t.cohort_median > t.noise_bar);

	/* (15): too small a cohort is judged no further than its size */
	v = judge(rec(NODE_12), BASE, "[0.12,0.11,0.0]", NULL, &t);
	assert_int_equal(v, NG_V_BLOCK);
	assert_int_equal(t.cohort_n, 3);
	assert_int_equal(t.cohort_valid, 3);
	assert_true(isnan(t.cohort_past_warn));
	assert_true(isnan(t.cohort_median));

	/* (17f): five infinities, none valid */
	v = judge(rec("\"samples\":" S9("120.0")), BASE, S5("1e400"), NULL, &t);
	assert_int_equal(t.cohort_n, 5);
	assert_int_equal(t.cohort_valid, 0);
}

static void test_trace_bimodal_and_single(void **state)
{
	(void)state;
	ng_strbuf kw = {0};
	ng_strbuf_adds(&kw, "\"samples\":[");
	for (int i = 0; i < 1000; i++)
		ng_strbuf_adds(&kw, i == 0 ? "240.0" : i < 501 ? ",240.0" : ",204.0");
	ng_strbuf_addc(&kw, ']');
	ng_gate_trace t;
	ng_verdict v = judge(rec(kw.s), BASE, NULL, NULL, &t);
	ng_strbuf_free(&kw);
	assert_int_equal(v, NG_V_BIMODAL);
	assert_int_equal(t.step, NG_STEP_BIMODAL);
	assert_int_equal(t.n, 1000);
	assert_double_bits(t.median, 240.0);
	assert_double_bits(t.spread, 0x1.4c0db88e849f8p-4);
	assert_double_bits(t.drop, 0.0);
	assert_double_bits(t.noise_bar, 0x1.4b96be9c2da2cp-9);
	assert_double_bits(t.slow_fraction, 0x1.fef9db22d0e56p-2); /* 0.499 */

	v = judge(rec("\"samples\":[223.2]"), BASE, NULL, NULL, &t);
	assert_int_equal(v, NG_V_INSUFFICIENT_SAMPLES);
	assert_int_equal(t.step, NG_STEP_UNRESOLVED);
	assert_double_bits(t.noise_bar, 0x1.47ae147ae147bp-4); /* 0.08 */
	assert_double_bits(t.drop, 0x1.1eb851eb851f0p-4);
}

static void test_trace_unmeasured_steps(void **state)
{
	(void)state;
	struct {
		const char *record, *base;
		ng_verdict v;
		ng_gate_step step;
		const char *diag_test;
	} cases[] = {
		{"{\"samples\":[240.0]}", BASE, NG_V_INVALID_INPUT, NG_STEP_WRONG_INVALID, NULL},
		{NULL, BASE, NG_V_CORRECTNESS_UNVERIFIED, NG_STEP_WRONG_NULL, NULL},
		{NULL, BASE, NG_V_INVALID_INPUT, NG_STEP_WRONG_NEGATIVE, NULL},
		{NULL, BASE, NG_V_CORRUPT, NG_STEP_WRONG_POSITIVE, NULL},
		{NULL, BASE, NG_V_NO_MEASUREMENT, NG_STEP_NO_SAMPLES, NULL},
		{NULL, BASE, NG_V_INVALID_INPUT, NG_STEP_SAMPLES_INVALID, NULL},
		{NULL, "{}", NG_V_NO_BASELINE, NG_STEP_BASELINE_INVALID, NULL},
		{NULL, BASE, NG_V_INVALID_INPUT, NG_STEP_DIAG_INVALID, "memory"},
		{NULL, BASE, NG_V_DIAG_INCOMPLETE, NG_STEP_DIAG_INCOMPLETE, "nccl_tests"},
		{NULL, BASE, NG_V_DIAG_INCOMPLETE, NG_STEP_DIAG_INCOMPLETE, "pcie"},
		{NULL, BASE, NG_V_DIAG_FAILED, NG_STEP_DIAG_FAILED, "memory"},
		{NULL, BASE, NG_V_INCOMPARABLE, NG_STEP_CLASS_MISMATCH, NULL},
		{NULL, BASE, NG_V_UNSTABLE, NG_STEP_UNSTABLE, NULL},
		{NULL, BASE, NG_V_PASS, NG_STEP_PASS, NULL},
	};
	const char *kws[] = {
		NULL,
		"\"wrong\":null",
		"\"wrong\":-2",
		"\"wrong\":2",
		"\"samples\":[]",
		"\"samples\":[240.0,0]",
		"",
		"\"diag\":{\"pcie\":\"pass\",\"memory\":\"?\",\"nccl_tests\":\"pass\"}",
		"\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\"}",
		"\"diag\":{\"pcie\":\"skip\",\"memory\":\"pass\",\"nccl_tests\":\"pass\"}",
		"\"diag\":{\"pcie\":\"pass\",\"memory\":\"fail\",\"nccl_tests\":\"pass\"}",
		"\"class\":\"x\"",
		"\"samples\":[100.0,100.0,240.0,380.0,380.0]",
		"",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *r = cases[i].record ? cases[i].record : rec(kws[i]);
		ng_gate_trace t;
		ng_verdict v = judge(r, cases[i].base, NULL, NULL, &t);
		if (v != cases[i].v || t.step != cases[i].step)
			fail_msg("case %zu: %s at step %d, want %s at step %d", i, ng_verdict_name(v),
			         (int)t.step, ng_verdict_name(cases[i].v), (int)cases[i].step);
		if (cases[i].diag_test)
			assert_string_equal(t.diag_test, cases[i].diag_test);
		else
			assert_null(t.diag_test);
		/* unmeasured verdicts stop before any arithmetic on the median */
		if (t.step < NG_STEP_UNSTABLE) {
			assert_true(isnan(t.median) && isnan(t.ratio) && isnan(t.drop));
			assert_true(isnan(t.noise_bar) && isnan(t.slow_fraction));
		}
		assert_true(strlen(ng_gate_step_text(t.step)) > 0);
	}
	assert_string_equal(ng_gate_step_text(NG_STEP_COUNT), "unknown step");
	for (int s = 0; s < NG_STEP_COUNT; s++)
		assert_string_not_equal(ng_gate_step_text((ng_gate_step)s), "unknown step");
}

/* ---- ng_gate on hand-built views, with the caller's scratch ------------------------- */

struct views {
	ng_diag_entry diag[3];
	double samples[9];
	double cohort[5];
	ng_gate_record r;
	ng_gate_baseline b;
	ng_policy pol;
};

static void views_init(struct views *v, double sample)
{
	*v = (struct views){
		.diag = {{"pcie", NG_DIAG_PASS}, {"memory", NG_DIAG_PASS}, {"nccl_tests", NG_DIAG_PASS}},
		.cohort = {0.12, 0.115, 0.125, 0.118, 0.122},
	};
	for (int i = 0; i < 9; i++)
		v->samples[i] = sample;
	v->r = (ng_gate_record){.wrong_kind = NG_WRONG_VALUE, .samples = v->samples, .n_samples = 9,
	                        .diag = v->diag, .n_diag = 3, .cls = {NG_CLASS_STRING, CLASS}};
	v->b = (ng_gate_baseline){.median = 240.0, .cv = 0.04, .cls = {NG_CLASS_STRING, CLASS}};
	ng_policy_default(&v->pol);
}

static void test_gate_caller_scratch(void **state)
{
	(void)state;
	struct views v;
	views_init(&v, 211.2);
	double work[9];
	ng_gate_trace t;

	/* exactly max(n_samples, n_cohort) doubles is enough */
	assert_int_equal(ng_gate(&v.r, &v.b, v.cohort, 5, &v.pol, (ng_work){work, 9}, &t),
	                 NG_V_FLEET_REGRESSION);
	/* one short fails closed, and says why */
	assert_int_equal(ng_gate(&v.r, &v.b, v.cohort, 5, &v.pol, (ng_work){work, 8}, &t),
	                 NG_V_INVALID_INPUT);
	assert_int_equal(t.step, NG_STEP_WORK_TOO_SMALL);
	assert_int_equal(ng_gate(&v.r, &v.b, v.cohort, 5, &v.pol, (ng_work){NULL, 0}, &t),
	                 NG_V_INVALID_INPUT);
	assert_int_equal(t.step, NG_STEP_WORK_TOO_SMALL);

	/* the cohort counts as well as the samples */
	double big_cohort[12] = {0.12, 0.115, 0.125, 0.118, 0.122, 0.12, 0.12, 0.12, 0.12, 0.12, 0.12, 0.12};
	double work12[12];
	assert_int_equal(ng_gate(&v.r, &v.b, big_cohort, 12, &v.pol, (ng_work){work12, 11}, &t),
	                 NG_V_INVALID_INPUT);
	assert_int_equal(t.step, NG_STEP_WORK_TOO_SMALL);
	assert_int_equal(ng_gate(&v.r, &v.b, big_cohort, 12, &v.pol, (ng_work){work12, 12}, &t),
	                 NG_V_FLEET_REGRESSION);

	/* with no scratch, verdicts decided before any arithmetic still come out */
	v.r.wrong = 2;
	assert_int_equal(ng_gate(&v.r, &v.b, v.cohort, 5, &v.pol, (ng_work){NULL, 0}, &t), NG_V_CORRUPT);
	v.r.wrong = 0;
	v.r.n_samples = 0;
	assert_int_equal(ng_gate(&v.r, &v.b, NULL, 0, &v.pol, (ng_work){NULL, 0}, NULL),
	                 NG_V_NO_MEASUREMENT);
}

static void test_gate_leaves_inputs_alone(void **state)
{
	(void)state;
	struct views v;
	views_init(&v, 0);
	/* unsorted samples and cohort, so a median taken in place would show */
	double s[9] = {250.0, 200.0, 240.0, 230.0, 210.0, 245.0, 205.0, 220.0, 215.0};
	double c[5] = {0.2, 0.1, 0.15, 0.12, 0.18};
	memcpy(v.samples, s, sizeof s);
	memcpy(v.cohort, c, sizeof c);
	double work[16];
	for (int i = 0; i < 16; i++)
		work[i] = -1.0;
	ng_gate_trace t;
	ng_verdict verdict = ng_gate(&v.r, &v.b, v.cohort, 5, &v.pol, (ng_work){work, 16}, &t);
	assert_int_equal(verdict, NG_V_FLEET_REGRESSION);
	assert_double_bits(t.median, 220.0);
	assert_double_bits(t.cohort_median, 0.15);
	assert_memory_equal(v.samples, s, sizeof s);
	assert_memory_equal(v.cohort, c, sizeof c);
	/* a NULL trace is allowed and changes nothing */
	assert_int_equal(ng_gate(&v.r, &v.b, v.cohort, 5, &v.pol, (ng_work){work, 16}, NULL),
	                 NG_V_FLEET_REGRESSION);
}

static void test_gate_class_views(void **state)
{
	(void)state;
	struct views v;
	views_init(&v, 240.0);
	double work[9];
	ng_work w = {work, 9};
	v.r.cls = (ng_class){NG_CLASS_NONE, ""};
	v.b.cls = (ng_class){NG_CLASS_NONE, ""};
	assert_int_equal(ng_gate(&v.r, &v.b, NULL, 0, &v.pol, w, NULL), NG_V_PASS);
	/* NONE ignores its text */
	v.b.cls = (ng_class){NG_CLASS_NONE, "whatever"};
	assert_int_equal(ng_gate(&v.r, &v.b, NULL, 0, &v.pol, w, NULL), NG_V_PASS);
	/* same text, different kinds: "1" the string is not 1 the number */
	v.r.cls = (ng_class){NG_CLASS_STRING, "1"};
	v.b.cls = (ng_class){NG_CLASS_OTHER, "1"};
	assert_int_equal(ng_gate(&v.r, &v.b, NULL, 0, &v.pol, w, NULL), NG_V_INCOMPARABLE);
	v.b.cls = (ng_class){NG_CLASS_STRING, "1"};
	assert_int_equal(ng_gate(&v.r, &v.b, NULL, 0, &v.pol, w, NULL), NG_V_PASS);
	v.r.cls = (ng_class){NG_CLASS_STRING, ""};
	v.b.cls = (ng_class){NG_CLASS_NONE, ""};
	assert_int_equal(ng_gate(&v.r, &v.b, NULL, 0, &v.pol, w, NULL), NG_V_INCOMPARABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_01_at_baseline_passes),
		cmocka_unit_test(test_02_no_samples_is_no_measurement),
		cmocka_unit_test(test_03_absent_diag_is_incomplete),
		cmocka_unit_test(test_03_diag_exemptions),
		cmocka_unit_test(test_04_skipped_diag_is_incomplete),
		cmocka_unit_test(test_05_wrong_null_is_unverified),
		cmocka_unit_test(test_06_corrupt_outranks_class_mismatch),
		cmocka_unit_test(test_07_other_topology_is_incomparable),
		cmocka_unit_test(test_08_zero_baseline_is_no_baseline),
		cmocka_unit_test(test_09_self_disagreeing_run_is_unstable),
		cmocka_unit_test(test_10_too_fast_and_too_slow_are_implausible),
		cmocka_unit_test(test_11_one_sample_7pct_down_is_insufficient),
		cmocka_unit_test(test_12_nine_samples_7pct_down_warn),
		cmocka_unit_test(test_12b_noise_bar_is_strict),
		cmocka_unit_test(test_13_cohort_shares_drop_is_fleet_regression),
		cmocka_unit_test(test_14_fleet_is_no_alibi_for_a_bad_node),
		cmocka_unit_test(test_15_three_member_cohort_is_too_small),
		cmocka_unit_test(test_16_healthy_cohort_blocks),
		cmocka_unit_test(test_17e_failed_diag_is_not_missing),
		cmocka_unit_test(test_17f_cohort_validated_strictly),
		cmocka_unit_test(test_17g_half_slow_run_is_bimodal),
		cmocka_unit_test(test_17h_negative_wrong_is_invalid),
		cmocka_unit_test(test_18_nan_fails_closed),
		cmocka_unit_test(test_18_nan_views_fail_closed),
		cmocka_unit_test(test_19_corrupt_outranks_everything),
		cmocka_unit_test(test_20_implausibility_bounds_inclusive),
		cmocka_unit_test(test_21_non_positive_inputs),
		cmocka_unit_test(test_22_missing_sentinel_cannot_be_spoofed),
		cmocka_unit_test(test_23_one_sample_far_under_blocks),
		cmocka_unit_test(test_executed_output_table),
		cmocka_unit_test(test_bars_are_strict),
		cmocka_unit_test(test_ratio_just_inside_fast_and_slow),
		cmocka_unit_test(test_unstable_bar_is_strict),
		cmocka_unit_test(test_unstable_just_past_bar),
		cmocka_unit_test(test_bimodal_boundaries),
		cmocka_unit_test(test_one_sample_vs_many),
		cmocka_unit_test(test_huge_sample_counts),
		cmocka_unit_test(test_tiny_and_huge_values),
		cmocka_unit_test(test_cohort_size),
		cmocka_unit_test(test_cohort_majority_boundary),
		cmocka_unit_test(test_cohort_drop_limits),
		cmocka_unit_test(test_cohort_non_numbers),
		cmocka_unit_test(test_cohort_nan_and_inf_doubles),
		cmocka_unit_test(test_duplicate_keys_last_wins),
		cmocka_unit_test(test_keys_are_case_sensitive),
		cmocka_unit_test(test_class_absent_vs_null),
		cmocka_unit_test(test_class_python_equality),
		cmocka_unit_test(test_diag_shapes),
		cmocka_unit_test(test_diag_statuses),
		cmocka_unit_test(test_wrong_huge_integer_vs_1e400),
		cmocka_unit_test(test_integer_too_large_for_a_double),
		cmocka_unit_test(test_wrong_values),
		cmocka_unit_test(test_samples_shapes),
		cmocka_unit_test(test_baseline_shapes),
		cmocka_unit_test(test_policy_overrides_change_verdicts),
		cmocka_unit_test(test_trace_warn),
		cmocka_unit_test(test_trace_fleet_and_mild),
		cmocka_unit_test(test_trace_bimodal_and_single),
		cmocka_unit_test(test_trace_unmeasured_steps),
		cmocka_unit_test(test_gate_caller_scratch),
		cmocka_unit_test(test_gate_leaves_inputs_alone),
		cmocka_unit_test(test_gate_class_views),
	};
	return cmocka_run_group_tests(tests, NULL, teardown_ring);
}
