/* Records, baselines and cohorts from JSON into the gate's views: each field
 * read as the reference rule reads a Python dict (see judge/record.h), and the
 * buffers behind the views reused from one record to the next. */
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

static cJSON *must_parse(const char *text)
{
	ng_err err = {0};
	cJSON *v = ng_json_parse(text, strlen(text), &err);
	if (!v)
		fail_msg("did not parse: %s: %.200s", err.msg, text);
	return v;
}

/* Reads record text into in, with its source; the parsed document is
 * returned so the views into it stay valid until the caller deletes it. */
static cJSON *read_record(ng_gate_input *in, const char *text)
{
	cJSON *r = must_parse(text);
	ng_json_source src = {text, strlen(text), r};
	ng_err err = {0};
	if (ng_gate_input_record(in, r, &src, &err) != 0)
		fail_msg("record refused: %s: %s", err.msg, text);
	return r;
}

static void assert_same(double got, double want)
{
	if (isnan(want) ? !isnan(got) : memcmp(&got, &want, sizeof got) != 0)
		fail_msg("got %.17g, want %.17g", got, want);
}

/* ---- the record --------------------------------------------------------------------- */

static void test_record_must_be_object(void **state)
{
	(void)state;
	const char *bad[] = {"[]", "[{\"wrong\":0}]", "0", "\"{}\"", "null", "true"};
	ng_gate_input in = {0};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cJSON *v = must_parse(bad[i]);
		ng_err err = {0};
		assert_int_equal(ng_gate_input_record(&in, v, NULL, &err), -1);
		assert_non_null(strstr(err.msg, "JSON object"));
		cJSON_Delete(v);
	}
	ng_err err = {0};
	assert_int_equal(ng_gate_input_record(&in, NULL, NULL, &err), -1);
	/* a NULL err is allowed */
	assert_int_equal(ng_gate_input_record(&in, NULL, NULL, NULL), -1);
	ng_gate_input_free(&in);
}

static void test_wrong_kinds(void **state)
{
	(void)state;
	struct {
		const char *text;
		ng_wrong_kind kind;
		double value;
	} cases[] = {
		{"{}", NG_WRONG_ABSENT, 0},
		{"{\"Wrong\":0}", NG_WRONG_ABSENT, 0},
		{"{\"wrong\":null}", NG_WRONG_NULL, 0},
		{"{\"wrong\":0}", NG_WRONG_VALUE, 0},
		{"{\"wrong\":7}", NG_WRONG_VALUE, 7},
		{"{\"wrong\":-1}", NG_WRONG_VALUE, -1},
		{"{\"wrong\":0.5}", NG_WRONG_VALUE, 0.5},
		{"{\"wrong\":1e400}", NG_WRONG_VALUE, INFINITY},
		{"{\"wrong\":-1e400}", NG_WRONG_VALUE, -INFINITY},
		{"{\"wrong\":\"0\"}", NG_WRONG_INVALID, 0},
		{"{\"wrong\":\"missing\"}", NG_WRONG_INVALID, 0},
		{"{\"wrong\":true}", NG_WRONG_INVALID, 0},
		{"{\"wrong\":false}", NG_WRONG_INVALID, 0},
		{"{\"wrong\":[0]}", NG_WRONG_INVALID, 0},
		{"{\"wrong\":{}}", NG_WRONG_INVALID, 0},
		{"{\"wrong\":null,\"wrong\":3}", NG_WRONG_VALUE, 3},
		{"{\"wrong\":3,\"wrong\":null}", NG_WRONG_NULL, 0},
	};
	ng_gate_input in = {0};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *r = read_record(&in, cases[i].text);
		if (in.rec.wrong_kind != cases[i].kind)
			fail_msg("%s: wrong kind %d, want %d", cases[i].text, in.rec.wrong_kind, cases[i].kind);
		if (cases[i].kind == NG_WRONG_VALUE)
			assert_same(in.rec.wrong, cases[i].value);
		cJSON_Delete(r);
	}
	ng_gate_input_free(&in);
}

static void test_wrong_huge_integer(void **state)
{
	(void)state;
	char text[512];
	ng_gate_input in = {0};
	/* an integer literal past DBL_MAX is a finite count to the reference */
	snprintf(text, sizeof text, "{\"wrong\":1%0400d}", 0);
	cJSON *r = read_record(&in, text);
	assert_int_equal(in.rec.wrong_kind, NG_WRONG_VALUE);
	assert_same(in.rec.wrong, DBL_MAX);
	/* with no source text it cannot be told from 1e400 */
	ng_err err = {0};
	assert_int_equal(ng_gate_input_record(&in, r, NULL, &err), 0);
	assert_true(isinf(in.rec.wrong));
	cJSON_Delete(r);

	snprintf(text, sizeof text, "{\"wrong\":-1%0400d}", 0);
	r = read_record(&in, text);
	assert_same(in.rec.wrong, -DBL_MAX);
	cJSON_Delete(r);
	/* an exponent makes it a float, and infinite */
	r = read_record(&in, "{\"wrong\":1e400}");
	assert_true(isinf(in.rec.wrong));
	cJSON_Delete(r);
	ng_gate_input_free(&in);
}

/* n expected values; NAN where the entry is not a number. */
static void expect_samples(const char *text, size_t n, const double *want)
{
	ng_gate_input in = {0};
	cJSON *r = read_record(&in, text);
	if (in.rec.n_samples != n)
		fail_msg("%s: %zu samples, want %zu", text, in.rec.n_samples, n);
	for (size_t i = 0; i < n; i++)
		assert_same(in.rec.samples[i], want[i]);
	cJSON_Delete(r);
	ng_gate_input_free(&in);
}

static void test_samples_mapping(void **state)
{
	(void)state;
	/* `not record.get("samples")`: absent and every falsy value are empty */
	const char *none[] = {"{}", "{\"samples\":null}", "{\"samples\":[]}", "{\"samples\":false}",
	                      "{\"samples\":0}", "{\"samples\":0.0}", "{\"samples\":\"\"}",
	                      "{\"samples\":{}}", "{\"Samples\":[1]}"};
	for (size_t i = 0; i < sizeof none / sizeof *none; i++)
		expect_samples(none[i], 0, NULL);
	/* truthy but not a list: one non-number, which no measurement is */
	const double one_nan[] = {NAN};
	const char *not_list[] = {"{\"samples\":\"abc\"}", "{\"samples\":{\"a\":1}}",
	                          "{\"samples\":5}", "{\"samples\":true}", "{\"samples\":-1}"};
	for (size_t i = 0; i < sizeof not_list / sizeof *not_list; i++)
		expect_samples(not_list[i], 1, one_nan);
	/* entries that are not numbers are NaN; numbers are kept exactly */
	const double mixed[] = {1, NAN, NAN, NAN, 2.5, NAN, NAN, -0.0, 1e-300, INFINITY};
	expect_samples("{\"samples\":[1,\"x\",null,true,2.5,[3],{},-0.0,1e-300,1e400]}", 10, mixed);
	const double ints[] = {240, 240, 240};
	expect_samples("{\"samples\":[240,240.0,2.4e2]}", 3, ints);
	/* the last samples key wins */
	const double last[] = {7};
	expect_samples("{\"samples\":[1,2,3],\"samples\":[7]}", 1, last);
	expect_samples("{\"samples\":[1,2,3],\"samples\":[]}", 0, NULL);
}

static void test_samples_overflowing_integer(void **state)
{
	(void)state;
	char text[1024];
	ng_gate_input in = {0};
	/* a positive integer literal past DBL_MAX is a finite positive sample to
	 * the reference: held as DBL_MAX and flagged */
	snprintf(text, sizeof text, "{\"samples\":[240.0,1%0400d]}", 0);
	cJSON *r = read_record(&in, text);
	assert_int_equal(in.rec.n_samples, 2);
	assert_same(in.rec.samples[0], 240.0);
	assert_same(in.rec.samples[1], DBL_MAX);
	assert_true(in.rec.samples_overflow);
	cJSON_Delete(r);
	/* the flag does not outlive the record */
	r = read_record(&in, "{\"samples\":[240.0,1e400]}");
	assert_false(in.rec.samples_overflow);
	assert_same(in.rec.samples[1], INFINITY);
	cJSON_Delete(r);
	/* negative: just a non-positive number */
	snprintf(text, sizeof text, "{\"samples\":[-1%0400d]}", 0);
	r = read_record(&in, text);
	assert_false(in.rec.samples_overflow);
	assert_true(in.rec.samples[0] < 0);
	cJSON_Delete(r);

	ng_err err = {0};
	snprintf(text, sizeof text, "{\"median\":1%0400d,\"cv\":0.04}", 0);
	cJSON *b = must_parse(text);
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_true(in.base.median_overflow);
	assert_false(in.base.cv_overflow);
	assert_same(in.base.median, DBL_MAX);
	cJSON_Delete(b);
	snprintf(text, sizeof text, "{\"median\":240,\"cv\":1%0400d}", 0);
	b = must_parse(text);
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_false(in.base.median_overflow);
	assert_true(in.base.cv_overflow);
	assert_same(in.base.cv, DBL_MAX);
	cJSON_Delete(b);
	b = must_parse("{\"median\":1e400,\"cv\":0.04}");
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_false(in.base.median_overflow);
	assert_same(in.base.median, INFINITY);
	cJSON_Delete(b);
	ng_gate_input_free(&in);
}

static void test_diag_mapping(void **state)
{
	(void)state;
	ng_gate_input in = {0};
	/* `record.get("diag") or {}` */
	const char *empty[] = {"{}", "{\"diag\":null}", "{\"diag\":{}}", "{\"diag\":[]}",
	                       "{\"diag\":false}", "{\"diag\":0}", "{\"diag\":\"\"}"};
	for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
		cJSON *r = read_record(&in, empty[i]);
		assert_int_equal(in.rec.n_diag, 0);
		assert_false(in.rec.diag_malformed);
		cJSON_Delete(r);
	}
	/* truthy and not an object: malformed, not empty */
	const char *bad[] = {"{\"diag\":[\"pcie\"]}", "{\"diag\":\"pcie\"}", "{\"diag\":1}",
	                     "{\"diag\":true}", "{\"diag\":[{}]}"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cJSON *r = read_record(&in, bad[i]);
		assert_true(in.rec.diag_malformed);
		assert_int_equal(in.rec.n_diag, 0);
		cJSON_Delete(r);
	}
	/* an object after a malformed one is not malformed */
	cJSON *r = read_record(&in, "{\"diag\":{\"pcie\":\"pass\",\"memory\":\"skip\",\"nccl_tests\":\"fail\","
	                            "\"x\":\"PASS\",\"y\":null,\"z\":1,\"w\":\"\",\"pcie2\":\"pass \"}}");
	assert_false(in.rec.diag_malformed);
	assert_int_equal(in.rec.n_diag, 8);
	struct {
		const char *test;
		ng_diag_status status;
	} want[] = {{"pcie", NG_DIAG_PASS}, {"memory", NG_DIAG_SKIP}, {"nccl_tests", NG_DIAG_FAIL},
	            {"x", NG_DIAG_OTHER},   {"y", NG_DIAG_OTHER},     {"z", NG_DIAG_OTHER},
	            {"w", NG_DIAG_OTHER},   {"pcie2", NG_DIAG_OTHER}};
	for (size_t k = 0; k < 8; k++) {
		bool found = false;
		for (size_t i = 0; i < in.rec.n_diag; i++) {
			if (strcmp(in.rec.diag[i].test, want[k].test) == 0) {
				assert_false(found);
				found = true;
				assert_int_equal(in.rec.diag[i].status, want[k].status);
			}
		}
		if (!found)
			fail_msg("diag test %s missing", want[k].test);
	}
	cJSON_Delete(r);

	/* a repeated test keeps its last status, once */
	r = read_record(&in, "{\"diag\":{\"pcie\":\"fail\",\"memory\":\"pass\",\"pcie\":\"pass\"}}");
	assert_int_equal(in.rec.n_diag, 2);
	for (size_t i = 0; i < in.rec.n_diag; i++)
		assert_int_equal(in.rec.diag[i].status, NG_DIAG_PASS);
	cJSON_Delete(r);

	/* the same with more than 32 members (the sorted path): 40 tests, each
	 * written as "fail" and then as "pass" */
	ng_strbuf s = {0};
	ng_strbuf_adds(&s, "{\"diag\":{");
	for (int i = 0; i < 40; i++)
		ng_strbuf_printf(&s, "%s\"t%02d\":\"fail\"", i ? "," : "", i);
	for (int i = 0; i < 40; i++)
		ng_strbuf_printf(&s, ",\"t%02d\":\"pass\"", i);
	ng_strbuf_adds(&s, "}}");
	r = read_record(&in, s.s);
	assert_int_equal(in.rec.n_diag, 40);
	for (size_t i = 0; i < in.rec.n_diag; i++)
		assert_int_equal(in.rec.diag[i].status, NG_DIAG_PASS);
	cJSON_Delete(r);
	ng_strbuf_free(&s);
	ng_gate_input_free(&in);
}

static void test_class_kinds(void **state)
{
	(void)state;
	struct {
		const char *text;
		ng_class_kind kind;
		const char *cls;
	} cases[] = {
		{"{}", NG_CLASS_NONE, ""},
		{"{\"class\":null}", NG_CLASS_NONE, ""},
		{"{\"class\":\"8xH100\"}", NG_CLASS_STRING, "8xH100"},
		{"{\"class\":\"\"}", NG_CLASS_STRING, ""},
		{"{\"class\":\"1\"}", NG_CLASS_STRING, "1"},
		{"{\"class\":\"a\\\"b\"}", NG_CLASS_STRING, "a\"b"},
		{"{\"class\":1}", NG_CLASS_OTHER, "1"},
		{"{\"class\":1.0}", NG_CLASS_OTHER, "1"},
		{"{\"class\":true}", NG_CLASS_OTHER, "1"},
		{"{\"class\":false}", NG_CLASS_OTHER, "0"},
		{"{\"class\":-0.0}", NG_CLASS_OTHER, "0"},
		{"{\"class\":[1,\"a\"]}", NG_CLASS_OTHER, "[1,\"a\"]"},
		{"{\"class\":[true,\"a\"]}", NG_CLASS_OTHER, "[1,\"a\"]"},
		{"{\"class\":{\"b\":1,\"a\":2}}", NG_CLASS_OTHER, "{\"a\":2,\"b\":1}"},
		{"{\"class\":{\"a\":1,\"a\":2}}", NG_CLASS_OTHER, "{\"a\":2}"},
		{"{\"class\":[]}", NG_CLASS_OTHER, "[]"},
		{"{\"class\":{}}", NG_CLASS_OTHER, "{}"},
		{"{\"class\":\"x\",\"class\":null}", NG_CLASS_NONE, ""},
		{"{\"class\":null,\"class\":\"x\"}", NG_CLASS_STRING, "x"},
	};
	ng_gate_input in = {0};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *r = read_record(&in, cases[i].text);
		if (in.rec.cls.kind != cases[i].kind || strcmp(in.rec.cls.text, cases[i].cls) != 0)
			fail_msg("%s: class (%d, %s), want (%d, %s)", cases[i].text, in.rec.cls.kind,
			         in.rec.cls.text, cases[i].kind, cases[i].cls);
		cJSON_Delete(r);
	}
	/* different spellings of one value give one text; different values don't */
	cJSON *a = read_record(&in, "{\"class\":{\"x\":[1,true],\"y\":null}}");
	char *ta = strdup(in.rec.cls.text);
	cJSON *b = read_record(&in, "{\"class\":{\"y\":null,\"x\":[1.0,1]}}");
	assert_string_equal(in.rec.cls.text, ta);
	cJSON *c = read_record(&in, "{\"class\":{\"y\":null,\"x\":[1.0,2]}}");
	assert_string_not_equal(in.rec.cls.text, ta);
	free(ta);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	ng_gate_input_free(&in);
}

/* ---- the baseline ------------------------------------------------------------------- */

static void test_baseline(void **state)
{
	(void)state;
	ng_gate_input in = {0};
	ng_err err = {0};
	/* none at all: no numbers, no class */
	assert_int_equal(ng_gate_input_baseline(&in, NULL, &err), 0);
	assert_true(isnan(in.base.median) && isnan(in.base.cv));
	assert_int_equal(in.base.cls.kind, NG_CLASS_NONE);
	cJSON *v = must_parse("null");
	assert_int_equal(ng_gate_input_baseline(&in, v, &err), 0);
	assert_true(isnan(in.base.median) && isnan(in.base.cv));
	cJSON_Delete(v);

	/* something that is not an object is an error, not an empty baseline */
	const char *bad[] = {"[]", "[{\"median\":240}]", "240", "\"x\"", "true", "false"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		v = must_parse(bad[i]);
		err.msg[0] = '\0';
		assert_int_equal(ng_gate_input_baseline(&in, v, &err), -1);
		assert_non_null(strstr(err.msg, "baseline must be a JSON object"));
		cJSON_Delete(v);
	}

	struct {
		const char *text;
		double median, cv;
		ng_class_kind kind;
	} cases[] = {
		{"{}", NAN, NAN, NG_CLASS_NONE},
		{"{\"median\":240,\"cv\":0.04,\"class\":\"c\"}", 240, 0.04, NG_CLASS_STRING},
		{"{\"median\":\"240\",\"cv\":true}", NAN, NAN, NG_CLASS_NONE},
		{"{\"median\":null,\"cv\":[0.04]}", NAN, NAN, NG_CLASS_NONE},
		{"{\"median\":0,\"cv\":-0.04}", 0, -0.04, NG_CLASS_NONE},
		{"{\"median\":1e400,\"cv\":1e-400}", INFINITY, 0, NG_CLASS_NONE},
		{"{\"median\":1,\"median\":2,\"class\":[1]}", 2, NAN, NG_CLASS_OTHER},
		{"{\"Median\":240,\"CV\":0.04}", NAN, NAN, NG_CLASS_NONE},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		v = must_parse(cases[i].text);
		assert_int_equal(ng_gate_input_baseline(&in, v, &err), 0);
		assert_same(in.base.median, cases[i].median);
		assert_same(in.base.cv, cases[i].cv);
		assert_int_equal(in.base.cls.kind, cases[i].kind);
		cJSON_Delete(v);
	}
	ng_gate_input_free(&in);
}

/* ---- the cohort ----------------------------------------------------------------------- */

static void expect_cohort(const char *text, size_t n, const double *want)
{
	ng_gate_input in = {0};
	ng_err err = {0};
	cJSON *v = text ? must_parse(text) : NULL;
	assert_int_equal(ng_gate_input_cohort_json(&in, v, &err), 0);
	if (in.n_cohort != n)
		fail_msg("cohort %s: %zu members, want %zu", text ? text : "(none)", in.n_cohort, n);
	for (size_t i = 0; i < n; i++)
		assert_same(in.cohort[i], want[i]);
	cJSON_Delete(v);
	ng_gate_input_free(&in);
}

static void test_cohort_json(void **state)
{
	(void)state;
	expect_cohort(NULL, 0, NULL);
	expect_cohort("null", 0, NULL);
	expect_cohort("[]", 0, NULL);
	expect_cohort("\"\"", 0, NULL); /* iterates as nothing */
	const double mixed[] = {0.1, NAN, NAN, NAN, NAN, -0.2, 1, NAN, INFINITY};
	expect_cohort("[0.1,\"0.1\",null,true,false,-0.2,1,[0.1],1e400]", 9, mixed);
	/* anything else in place of the array is one non-number, so the cohort
	 * can excuse no node; nor can it for the reference, which rejects the
	 * members it iterates (a string's characters, a dict's keys), cannot
	 * iterate a number, or finds no members at all ({}) */
	const double one_nan[] = {NAN};
	const char *other[] = {"\"abc\"", "5", "0.12", "true", "{\"a\":0.12}", "{}"};
	for (size_t i = 0; i < sizeof other / sizeof *other; i++)
		expect_cohort(other[i], 1, one_nan);
}

static void test_cohort_doubles_are_copied(void **state)
{
	(void)state;
	ng_gate_input in = {0};
	ng_err err = {0};
	double drops[5] = {0.12, 0.115, 0.125, 0.118, 0.122};
	assert_int_equal(ng_gate_input_cohort(&in, drops, 5, &err), 0);
	drops[0] = NAN; /* the caller's array may change afterwards */
	assert_int_equal(in.n_cohort, 5);
	assert_same(in.cohort[0], 0.12);
	assert_same(in.cohort[4], 0.122);
	assert_int_equal(ng_gate_input_cohort(&in, NULL, 0, &err), 0);
	assert_int_equal(in.n_cohort, 0);
	/* JSON after doubles, and doubles after JSON, replace each other */
	cJSON *v = must_parse("[0.5,0.25]");
	assert_int_equal(ng_gate_input_cohort_json(&in, v, &err), 0);
	assert_int_equal(in.n_cohort, 2);
	assert_same(in.cohort[1], 0.25);
	assert_int_equal(ng_gate_input_cohort(&in, drops + 1, 3, &err), 0);
	assert_int_equal(in.n_cohort, 3);
	assert_same(in.cohort[0], 0.115);
	cJSON_Delete(v);
	ng_gate_input_free(&in);
}

/* ---- buffers across records --------------------------------------------------------- */

#define DIAG_OK "{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\"}"

static char *record_text(size_t n, double value, int n_extra_diag, const char *cls)
{
	ng_strbuf b = {0};
	ng_strbuf_printf(&b, "{\"wrong\":0,\"class\":%s,\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\","
	                     "\"nccl_tests\":\"pass\"",
	                 cls);
	for (int i = 0; i < n_extra_diag; i++)
		ng_strbuf_printf(&b, ",\"extra%d\":\"pass\"", i);
	ng_strbuf_adds(&b, "},\"samples\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			ng_strbuf_addc(&b, ',');
		/* each sample differs, so stale values would show */
		ng_strbuf_add_double(&b, value + (double)(i % 2 ? 1 : -1) * 0.001 * (double)(i % 7));
	}
	ng_strbuf_adds(&b, "]}");
	assert_false(b.oom);
	return b.s;
}

static void test_buffers_reused_across_records(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err = {0};
	ng_gate_input in = {0};
	cJSON *base = must_parse("{\"class\":\"c\",\"median\":240.0,\"cv\":0.04}");
	assert_int_equal(ng_gate_input_baseline(&in, base, &err), 0);

	const struct {
		size_t n;
		double value;
		int extra_diag;
		const char *cls;
		ng_verdict want;
	} seq[] = {
		{9, 240.0, 0, "\"c\"", NG_V_PASS},
		{1000, 223.2, 40, "\"c\"", NG_V_WARN},
		{3, 240.0, 0, "[\"c\"]", NG_V_INCOMPARABLE},
		{0, 240.0, 2, "\"c\"", NG_V_NO_MEASUREMENT},
		{50000, 211.2, 0, "\"c\"", NG_V_BLOCK},
		{2, 240.0, 100, "\"c\"", NG_V_PASS},
		{17, 1.0, 0, "\"c\"", NG_V_IMPLAUSIBLE},
		{1, 223.2, 0, "\"c\"", NG_V_INSUFFICIENT_SAMPLES},
		{20000, 240.0, 5, "null", NG_V_INCOMPARABLE},
		{4, 240.0, 0, "\"c\"", NG_V_PASS},
	};
	size_t max_n = 0, max_diag = 0;
	for (int round = 0; round < 3; round++) {
		for (size_t k = 0; k < sizeof seq / sizeof *seq; k++) {
			char *text = record_text(seq[k].n, seq[k].value, seq[k].extra_diag, seq[k].cls);
			double *before = in.samples_buf;
			size_t cap_before = in.samples_cap, diag_cap_before = in.diag_cap;
			cJSON *r = read_record(&in, text);
			assert_int_equal(in.rec.n_samples, seq[k].n);
			assert_int_equal(in.rec.n_diag, 3 + (size_t)seq[k].extra_diag);
			for (size_t i = 0; i < seq[k].n; i++)
				assert_same(in.rec.samples[i],
				            seq[k].value + (double)(i % 2 ? 1 : -1) * 0.001 * (double)(i % 7));
			/* capacity only grows, and a record no larger than one before it
			 * reuses the buffer as it is */
			assert_true(in.samples_cap >= cap_before && in.samples_cap >= seq[k].n);
			assert_true(in.diag_cap >= diag_cap_before);
			if (seq[k].n <= max_n) {
				assert_ptr_equal(in.samples_buf, before);
				assert_int_equal(in.samples_cap, cap_before);
			}
			if (3 + (size_t)seq[k].extra_diag <= max_diag)
				assert_int_equal(in.diag_cap, diag_cap_before);
			if (seq[k].n > max_n)
				max_n = seq[k].n;
			if (3 + (size_t)seq[k].extra_diag > max_diag)
				max_diag = 3 + (size_t)seq[k].extra_diag;
			ng_verdict v = ng_gate_input_judge(&in, &pol, NULL);
			if (v != seq[k].want)
				fail_msg("round %d record %zu (n=%zu): %s, want %s", round, k, seq[k].n,
				         ng_verdict_name(v), ng_verdict_name(seq[k].want));
			assert_true(in.work_cap >= seq[k].n);
			cJSON_Delete(r);
			free(text);
		}
	}
	cJSON_Delete(base);
	ng_gate_input_free(&in);
}

static void test_class_buffer_reuse(void **state)
{
	(void)state;
	ng_gate_input in = {0};
	ng_err err = {0};
	cJSON *b = must_parse("{\"class\":[1,2,3],\"median\":240,\"cv\":0.04}");
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	/* the record's canonical text and the baseline's live in separate
	 * buffers: reading a record does not change the baseline's */
	cJSON *r1 = read_record(&in, "{\"class\":{\"a\":[1,2,3,4,5,6,7,8,9,10]}}");
	assert_string_equal(in.base.cls.text, "[1,2,3]");
	assert_string_equal(in.rec.cls.text, "{\"a\":[1,2,3,4,5,6,7,8,9,10]}");
	cJSON *r2 = read_record(&in, "{\"class\":[true]}");
	assert_string_equal(in.rec.cls.text, "[1]");
	assert_string_equal(in.base.cls.text, "[1,2,3]");
	cJSON *r3 = read_record(&in, "{\"class\":\"s\"}");
	assert_int_equal(in.rec.cls.kind, NG_CLASS_STRING);
	assert_string_equal(in.rec.cls.text, "s");
	cJSON *r4 = read_record(&in, "{}");
	assert_int_equal(in.rec.cls.kind, NG_CLASS_NONE);
	cJSON_Delete(r1);
	cJSON_Delete(r2);
	cJSON_Delete(r3);
	cJSON_Delete(r4);
	cJSON_Delete(b);
	ng_gate_input_free(&in);
}

static void test_judge_empty_input_fails_closed(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	ng_gate_input in = {0};
	ng_gate_trace t;
	/* nothing read at all: #wrong is absent */
	assert_int_equal(ng_gate_input_judge(&in, &pol, &t), NG_V_INVALID_INPUT);
	assert_int_equal(t.step, NG_STEP_WRONG_INVALID);
	/* a record with no baseline read: no baseline */
	cJSON *r = read_record(&in, "{\"wrong\":0,\"samples\":[240.0],\"diag\":" DIAG_OK "}");
	assert_int_equal(ng_gate_input_judge(&in, &pol, &t), NG_V_NO_BASELINE);
	cJSON_Delete(r);
	ng_gate_input_free(&in);
}

static void test_input_free(void **state)
{
	(void)state;
	ng_gate_input in = {0};
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err = {0};
	/* freeing what was never used is fine */
	ng_gate_input_free(&in);
	ng_gate_input_free(&in);

	char *text = record_text(100, 240.0, 3, "[\"c\"]");
	cJSON *r = read_record(&in, text);
	cJSON *b = must_parse("{\"class\":[\"c\"],\"median\":240,\"cv\":0.04}");
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	double drops[3] = {0, 0, 0};
	assert_int_equal(ng_gate_input_cohort(&in, drops, 3, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_PASS);
	ng_gate_input_free(&in);
	/* everything is released and zeroed */
	assert_null(in.samples_buf);
	assert_null(in.cohort_buf);
	assert_null(in.work_buf);
	assert_null(in.diag_buf);
	assert_null(in.rec_class.s);
	assert_null(in.base_class.s);
	assert_int_equal(in.samples_cap + in.cohort_cap + in.work_cap + in.diag_cap, 0);
	assert_int_equal(in.rec.n_samples + in.rec.n_diag + in.n_cohort, 0);
	/* twice is harmless, and the input can be used again */
	ng_gate_input_free(&in);
	cJSON *r2 = read_record(&in, text);
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_int_equal(ng_gate_input_judge(&in, &pol, NULL), NG_V_PASS);
	ng_gate_input_free(&in);
	cJSON_Delete(r);
	cJSON_Delete(r2);
	cJSON_Delete(b);
	free(text);
}

static void expect_strict(const char *text, bool zero_ok, const char *said)
{
	cJSON *r = must_parse(text);
	ng_err err = {0};
	int rc = ng_record_check_strict(r, zero_ok, &err);
	if (said) {
		assert_int_equal(rc, -1);
		if (!strstr(err.msg, said))
			fail_msg("%s: \"%s\" does not say \"%s\"", text, err.msg, said);
	} else {
		if (rc != 0)
			fail_msg("%s refused: %s", text, err.msg);
	}
	cJSON_Delete(r);
}

static void test_strict_input(void **state)
{
	(void)state;
	expect_strict("{\"node\":\"a\",\"samples\":[1,2.5],\"wrong\":0}", false, NULL);
	expect_strict("{\"schema\":\"nodegate/record/1\",\"samples\":[],\"wrong\":null}", false, NULL);
	expect_strict("{\"samples\":[1,1e400]}", false, "samples[1] is too large");
	expect_strict("{\"samples\":[1,100000000000000000000000000000000000000000000000000]}", false,
	              "samples[1] is 1000");
	expect_strict("{\"samples\":[\"240\"]}", false, "samples[0] is the string \"240\"");
	expect_strict("{\"samples\":[null]}", false, "samples[0] is null");
	expect_strict("{\"samples\":[true]}", false, "samples[0] is true");
	expect_strict("{\"samples\":[-1]}", false, "samples[0] is -1");
	expect_strict("{\"samples\":[0]}", false, "greater than 0");
	expect_strict("{\"samples\":[0]}", true, NULL); /* a dead path measured, in admission */
	expect_strict("{\"samples\":[-0.5]}", true, "of 0 or more");
	expect_strict("{\"samples\":\"240\"}", false, "not an array");
	expect_strict("{\"wrong\":-1}", false, "wrong is -1");
	expect_strict("{\"wrong\":1.5}", false, "whole number");
	expect_strict("{\"wrong\":\"0\"}", false, "wrong is the string");
	expect_strict("{\"schema\":\"nodegate/record/99\"}", false, "nodegate/record/99");
	expect_strict("{\"schema\":1}", false, "schema is 1");
	expect_strict("{\"node\":\"\"}", false, "node is empty");
	expect_strict("{\"node\":7}", false, "node is 7");
	expect_strict("{\"wrong\":0,\"wrong\":5}", false, "key \"wrong\" is given twice");
	expect_strict("{\"diag\":{\"pcie\":\"fail\",\"pcie\":\"pass\"}}", false,
	              "key \"diag.pcie\" is given twice");
	expect_strict("[]", false, "not a JSON object");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_must_be_object),
		cmocka_unit_test(test_strict_input),
		cmocka_unit_test(test_wrong_kinds),
		cmocka_unit_test(test_wrong_huge_integer),
		cmocka_unit_test(test_samples_mapping),
		cmocka_unit_test(test_samples_overflowing_integer),
		cmocka_unit_test(test_diag_mapping),
		cmocka_unit_test(test_class_kinds),
		cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_cohort_json),
		cmocka_unit_test(test_cohort_doubles_are_copied),
		cmocka_unit_test(test_buffers_reused_across_records),
		cmocka_unit_test(test_class_buffer_reuse),
		cmocka_unit_test(test_judge_empty_input_fails_closed),
		cmocka_unit_test(test_input_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
