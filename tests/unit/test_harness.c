/* The harness against a stand-in tool (tests/standins/fake_tool.c) and a toy
 * parser, so each way a tool can fool a harness is reproduced for real:
 * usage text with exit 0, an unknown option, a hang, a crash, a missing
 * binary, a flood of output. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/harness.h"
#include "core/json.h"
#include "core/record_build.h"
#include "core/sha256.h"
#include "parse/text.h"

/* "SAMPLE v" lines are samples, "WRONG n" sets wrong; nothing else counts. */
static cJSON *toy_parse(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	(void)st;
	(void)err;
	cJSON *arr = cJSON_CreateArray();
	cJSON *r = ng_record_new("toy.busbw", "fabric", "GB/s");
	cJSON_AddItemToArray(arr, r);
	ng_lines it;
	ng_span line;
	double v;
	ng_lines_init(&it, text, len);
	while (ng_lines_next(&it, &line)) {
		if (ng_span_starts_with(line, "SAMPLE ") && ng_span_number(ng_span_trim(ng_span_skip(line, 7)), &v))
			ng_record_add_sample(r, v);
		else if (ng_span_starts_with(line, "WRONG ") && ng_span_number(ng_span_trim(ng_span_skip(line, 6)), &v))
			ng_record_set_wrong(r, v);
	}
	if (!cJSON_GetArraySize(cJSON_GetObjectItem(r, "samples")))
		ng_record_set_reason(r, "no SAMPLE lines in the output");
	return arr;
}

static const struct ng_parser toy = {"toy", toy_parse, "SAMPLE lines"};

static cJSON *run(const char *mode, char **argv, size_t argc, unsigned repeat, double timeout,
                  bool probe)
{
	setenv("FAKE_MODE", mode, 1);
	struct ng_harness_opts o = {
		.parser = &toy, .argv = argv, .argc = argc, .repeat = repeat, .timeout_s = timeout,
		.probe = probe, .node = "test-node", .cls = "toy-class", .max_output = 1 << 20,
	};
	ng_err err;
	cJSON *recs = ng_harness_run(&o, &err);
	if (!recs)
		fail_msg("harness failed: %s", err.msg);
	return recs;
}

static size_t n_samples(const cJSON *rec)
{
	return (size_t)cJSON_GetArraySize(ng_json_get(rec, "samples"));
}

static const char *reason(const cJSON *rec)
{
	const cJSON *r = ng_json_get(rec, "reason");
	return cJSON_IsString(r) ? r->valuestring : "";
}

static void repeat_merges_samples_and_keeps_digests(void **state)
{
	(void)state;
	char *argv[] = {FAKE_TOOL, "-b", "8", "-n", "5", NULL};
	cJSON *recs = run("samples", argv, 5, 3, 30, true);
	assert_int_equal(cJSON_GetArraySize(recs), 1);
	const cJSON *r = recs->child;
	assert_int_equal(n_samples(r), 3);
	assert_true(cJSON_IsNumber(ng_json_get(r, "wrong")));
	assert_true((ng_json_get(r, "wrong")->valuedouble) == (0));
	assert_string_equal(ng_json_get(r, "class")->valuestring, "toy-class");
	assert_string_equal(ng_json_get(r, "node")->valuestring, "test-node");
	const cJSON *runs = ng_json_get(ng_json_get(r, "tool"), "runs");
	assert_int_equal(cJSON_GetArraySize(runs), 3);
	char sha[65];
	const char *out = "SAMPLE 240\nWRONG 0\n";
	ng_sha256_hex(out, strlen(out), sha);
	for (const cJSON *x = runs->child; x; x = x->next) {
		assert_int_equal(ng_json_get(x, "exit_status")->valueint, 0);
		assert_string_equal(ng_json_get(x, "stdout_sha256")->valuestring, sha);
		assert_false(cJSON_IsTrue(ng_json_get(x, "timed_out")));
	}
	cJSON_Delete(recs);
}

/* The -I trap: the build does not list -I, so the harness must refuse to run
 * it rather than record the usage text's exit 0 as a measurement. */
static void unknown_option_is_refused_before_running(void **state)
{
	(void)state;
	char *argv[] = {FAKE_TOOL, "-b", "8", "-I", "1", NULL};
	cJSON *recs = run("old", argv, 5, 3, 30, true);
	const cJSON *r = recs->child;
	assert_int_equal(n_samples(r), 0);
	assert_non_null(strstr(reason(r), "-I"));
	assert_non_null(strstr(reason(r), "not run"));
	/* It never ran the measurement. */
	assert_int_equal(cJSON_GetArraySize(ng_json_get(ng_json_get(r, "tool"), "runs")), 0);
	cJSON_Delete(recs);
}

static void long_options_are_checked_too(void **state)
{
	(void)state;
	char *ok[] = {FAKE_TOOL, "--minbytes=8", "--iters", "5", NULL};
	cJSON *recs = run("samples", ok, 4, 1, 30, true);
	assert_int_equal(n_samples(recs->child), 1);
	cJSON_Delete(recs);
	char *bad[] = {FAKE_TOOL, "--per_iter_timing", NULL};
	recs = run("samples", bad, 2, 1, 30, true);
	assert_int_equal(n_samples(recs->child), 0);
	assert_non_null(strstr(reason(recs->child), "--per_iter_timing"));
	cJSON_Delete(recs);
}

/* Without the probe, the usage text with exit 0 still measures nothing. */
static void usage_with_exit_zero_is_no_measurement(void **state)
{
	(void)state;
	char *argv[] = {FAKE_TOOL, "-I", "1", NULL};
	cJSON *recs = run("old", argv, 3, 1, 30, false);
	const cJSON *r = recs->child;
	assert_int_equal(n_samples(r), 0);
	assert_string_equal(reason(r), "no SAMPLE lines in the output");
	const cJSON *run0 = ng_json_get(ng_json_get(r, "tool"), "runs")->child;
	assert_int_equal(ng_json_get(run0, "exit_status")->valueint, 0);
	cJSON_Delete(recs);
}

static void hang_is_killed_and_recorded(void **state)
{
	(void)state;
	char *argv[] = {FAKE_TOOL, NULL};
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	cJSON *recs = run("hang", argv, 1, 1, 0.5, true);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	/* 0.5 s deadline; SIGTERM is ignored, so SIGKILL follows 2 s later. */
	assert_true(took < 6.0);
	const cJSON *r = recs->child;
	assert_int_equal(n_samples(r), 0); /* the SAMPLE it printed does not count */
	assert_non_null(strstr(reason(r), "timed out"));
	const cJSON *run0 = ng_json_get(ng_json_get(r, "tool"), "runs")->child;
	assert_true(cJSON_IsTrue(ng_json_get(run0, "timed_out")));
	assert_int_equal(ng_json_get(run0, "signal")->valueint, 9);
	cJSON_Delete(recs);
}

static void crash_is_not_a_measurement(void **state)
{
	(void)state;
	char *argv[] = {FAKE_TOOL, NULL};
	cJSON *recs = run("crash", argv, 1, 2, 30, true);
	const cJSON *r = recs->child;
	assert_int_equal(n_samples(r), 0);
	assert_non_null(strstr(reason(r), "signal 11"));
	cJSON_Delete(recs);
}

static void missing_binary_is_a_record(void **state)
{
	(void)state;
	char *argv[] = {"/nonexistent/all_reduce_perf", "-b", "8", NULL};
	cJSON *recs = run("samples", argv, 3, 1, 30, true);
	assert_int_equal(n_samples(recs->child), 0);
	assert_non_null(strstr(reason(recs->child), "could not be started"));
	cJSON_Delete(recs);
	recs = run("samples", argv, 3, 1, 30, false);
	assert_int_equal(n_samples(recs->child), 0);
	assert_non_null(strstr(reason(recs->child), "could not be started"));
	cJSON_Delete(recs);
}

static void exit_status_is_kept(void **state)
{
	(void)state;
	char *argv[] = {FAKE_TOOL, NULL};
	cJSON *recs = run("dcgmi226", argv, 1, 1, 30, true);
	const cJSON *run0 = ng_json_get(ng_json_get(recs->child, "tool"), "runs")->child;
	assert_int_equal(ng_json_get(run0, "exit_status")->valueint, 226);
	cJSON_Delete(recs);
}

static void raw_output_is_kept(void **state)
{
	(void)state;
	char dir[] = "/tmp/nodegate-raw-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("FAKE_MODE", "samples", 1);
	setenv("FAKE_VALUE", "123.5", 1);
	char *argv[] = {FAKE_TOOL, NULL};
	struct ng_harness_opts o = {.parser = &toy, .argv = argv, .argc = 1, .repeat = 2,
	                            .timeout_s = 30, .probe = true, .raw_dir = dir,
	                            .max_output = 1 << 20};
	ng_err err;
	cJSON *recs = ng_harness_run(&o, &err);
	unsetenv("FAKE_VALUE");
	assert_non_null(recs);
	assert_true((ng_json_get(recs->child, "samples")->child->valuedouble) == (123.5));
	const cJSON *runs = ng_json_get(ng_json_get(recs->child, "tool"), "runs");
	for (const cJSON *x = runs->child; x; x = x->next) {
		const char *f = ng_json_get(x, "stdout_file")->valuestring;
		FILE *fp = fopen(f, "r");
		assert_non_null(fp);
		char buf[64] = {0};
		assert_true(fread(buf, 1, sizeof buf - 1, fp) > 0);
		fclose(fp);
		assert_string_equal(buf, "SAMPLE 123.5\nWRONG 0\n");
		unlink(f);
		unlink(ng_json_get(x, "stderr_file")->valuestring);
	}
	rmdir(dir);
	cJSON_Delete(recs);
}

static void flood_is_capped(void **state)
{
	(void)state;
	setenv("FAKE_BYTES", "3000000", 1);
	char *argv[] = {FAKE_TOOL, NULL};
	cJSON *recs = run("flood", argv, 1, 1, 30, true);
	unsetenv("FAKE_BYTES");
	const cJSON *run0 = ng_json_get(ng_json_get(recs->child, "tool"), "runs")->child;
	assert_true(cJSON_IsTrue(ng_json_get(run0, "truncated")));
	cJSON_Delete(recs);
}

static cJSON *rec_json(const char *text)
{
	cJSON *r = cJSON_Parse(text);
	assert_non_null(r);
	return r;
}

static void merge_rules(void **state)
{
	(void)state;
	struct {
		const char *a, *b, *wrong;
	} cases[] = {
		{"{\"samples\":[1],\"wrong\":0}", "{\"samples\":[2],\"wrong\":0}", "0"},
		{"{\"samples\":[1],\"wrong\":null}", "{\"samples\":[2],\"wrong\":0}", "null"},
		{"{\"samples\":[1],\"wrong\":null}", "{\"samples\":[2],\"wrong\":3}", "3"},
		{"{\"samples\":[1],\"wrong\":2}", "{\"samples\":[2],\"wrong\":3}", "5"},
		{"{\"samples\":[1],\"wrong\":0}", "{\"samples\":[2]}", "absent"},
		{"{\"samples\":[1],\"wrong\":0}", "{\"samples\":[2],\"wrong\":\"N/A\"}", "absent"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *a = rec_json(cases[i].a), *b = rec_json(cases[i].b);
		ng_records_merge(a, b);
		assert_int_equal(n_samples(a), 2);
		const cJSON *w = ng_json_get(a, "wrong");
		char *got = w ? cJSON_PrintUnformatted(w) : strdup("absent");
		assert_string_equal(got, cases[i].wrong);
		free(got);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	cJSON *a = rec_json("{\"samples\":[],\"wrong\":0,\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\"}}");
	cJSON *b = rec_json("{\"samples\":[],\"wrong\":0,\"diag\":{\"pcie\":\"fail\",\"nccl_tests\":\"pass\"}}");
	ng_records_merge(a, b);
	const cJSON *d = ng_json_get(a, "diag");
	assert_string_equal(ng_json_get(d, "pcie")->valuestring, "fail");
	/* Reported by one run only: not a pass for the run that lacked it. */
	assert_string_equal(ng_json_get(d, "memory")->valuestring, "skip");
	assert_string_equal(ng_json_get(d, "nccl_tests")->valuestring, "skip");
	cJSON_Delete(a);
	cJSON_Delete(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(repeat_merges_samples_and_keeps_digests),
		cmocka_unit_test(unknown_option_is_refused_before_running),
		cmocka_unit_test(long_options_are_checked_too),
		cmocka_unit_test(usage_with_exit_zero_is_no_measurement),
		cmocka_unit_test(hang_is_killed_and_recorded),
		cmocka_unit_test(crash_is_not_a_measurement),
		cmocka_unit_test(missing_binary_is_a_record),
		cmocka_unit_test(exit_status_is_kept),
		cmocka_unit_test(raw_output_is_kept),
		cmocka_unit_test(flood_is_capped),
		cmocka_unit_test(merge_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
