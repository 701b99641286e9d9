/* The nccl-tests parser: one input per trap, written here, each of which a
 * naive parser would misread, with the exact record fields it must give; then
 * every published fixture, with figures read off each file by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record_build.h"
#include "fixture_file.h"
#include "launcher_property.h"
#include "parse/parse.h"

static const ng_run_status unknown_status = {-1, 0};

static cJSON *parse_st(const char *text, ng_run_status st)
{
	ng_err err = {0};
	cJSON *a = ng_parse_nccl_tests(text, strlen(text), st, &err);
	if (!a)
		fail_msg("parser returned NULL: %s", err.msg);
	assert_launcher_transparent(ng_parse_nccl_tests, text, strlen(text), st, "a test input");
	assert_true(cJSON_IsArray(a));
	assert_true(cJSON_GetArraySize(a) >= 1);
	return a;
}

static cJSON *parse(const char *text) { return parse_st(text, unknown_status); }

static cJSON *rec_at(cJSON *arr, int i)
{
	cJSON *r = cJSON_GetArrayItem(arr, i);
	if (!r)
		fail_msg("no record %d (have %d)", i, cJSON_GetArraySize(arr));
	return r;
}

static void assert_metric(const cJSON *rec, const char *metric)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(rec, "metric");
	assert_true(cJSON_IsString(m));
	assert_string_equal(m->valuestring, metric);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rec, "unit")->valuestring, "GB/s");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rec, "domain")->valuestring, "fabric");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rec, "schema")->valuestring, "nodegate/record/1");
}

static void assert_samples(const cJSON *rec, const double *want, int n)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "samples");
	assert_true(cJSON_IsArray(s));
	if (cJSON_GetArraySize(s) != n) {
		char *p = cJSON_PrintUnformatted(rec);
		print_error("record: %s\n", p);
		free(p);
	}
	assert_int_equal(cJSON_GetArraySize(s), n);
	for (int i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetArrayItem(s, i);
		assert_true(cJSON_IsNumber(v));
		assert_true(fabs(v->valuedouble - want[i]) < 1e-9);
	}
}

static void assert_no_samples(const cJSON *rec) { assert_samples(rec, NULL, 0); }

static void assert_wrong(const cJSON *rec, double want)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(rec, "wrong");
	assert_true(cJSON_IsNumber(w));
	assert_true(fabs(w->valuedouble - want) < 1e-9);
}

static void assert_wrong_null(const cJSON *rec)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(rec, "wrong");
	assert_non_null(w);
	assert_true(cJSON_IsNull(w));
}

static const char *reason(const cJSON *rec)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(rec, "reason");
	return cJSON_IsString(r) ? r->valuestring : NULL;
}

static void assert_no_reason(const cJSON *rec) { assert_null(reason(rec)); }

static void assert_reason_has(const cJSON *rec, const char *part)
{
	const char *r = reason(rec);
	if (!r || !strstr(r, part))
		fail_msg("reason %s%s%s lacks \"%s\"", r ? "\"" : "", r ? r : "(none)", r ? "\"" : "", part);
}

static const cJSON *det(const cJSON *rec, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "detail"), key);
}

static void assert_det_str(const cJSON *rec, const char *key, const char *want)
{
	const cJSON *v = det(rec, key);
	if (!cJSON_IsString(v))
		fail_msg("detail.%s is not a string", key);
	assert_string_equal(v->valuestring, want);
}

static void assert_det_num(const cJSON *rec, const char *key, double want)
{
	const cJSON *v = det(rec, key);
	if (!cJSON_IsNumber(v))
		fail_msg("detail.%s is not a number", key);
	assert_true(fabs(v->valuedouble - want) < 1e-9);
}

/* A value inside a record by a dotted path: "detail.table.2.in_place.busbw". */
static const cJSON *at(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		char *end;
		long i = strtol(k, &end, 10);
		o = *end == '\0' && cJSON_IsArray(o) ? cJSON_GetArrayItem(o, (int)i)
		                                      : cJSON_GetObjectItemCaseSensitive(o, k);
	}
	return o;
}

static void assert_at_num(const cJSON *o, const char *path, double want)
{
	const cJSON *v = at(o, path);
	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	if (fabs(v->valuedouble - want) > 1e-9)
		fail_msg("%s is %.17g, want %.17g", path, v->valuedouble, want);
}

static void assert_at_str(const cJSON *o, const char *path, const char *want)
{
	const cJSON *v = at(o, path);
	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", path);
	assert_string_equal(v->valuestring, want);
}

static void assert_at_null(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);
	if (!cJSON_IsNull(v))
		fail_msg("%s is not null", path);
}

static const cJSON *tool(const cJSON *rec, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "tool"), key);
}

/* The invariants every record keeps, whatever the input. */
static void assert_sane(const cJSON *arr)
{
	const cJSON *rec;
	cJSON_ArrayForEach(rec, arr)
	{
		assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "metric")));
		assert_true(strncmp(cJSON_GetObjectItemCaseSensitive(rec, "metric")->valuestring, "nccl.", 5) == 0);
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "samples"), *v;
		assert_true(cJSON_IsArray(s));
		cJSON_ArrayForEach(v, s) assert_true(cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0);
		if (cJSON_GetArraySize(s) == 0)
			assert_non_null(reason(rec));
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(rec, "wrong");
		assert_true(cJSON_IsNull(w) || (cJSON_IsNumber(w) && w->valuedouble >= 0));
		assert_string_equal(tool(rec, "name")->valuestring, "nccl-tests");
	}
}

/* A v2.17-style header for one collective over two ranks. */
#define HDR217(prog, validation)                                                                                 \
	"# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902\n"                                     \
	"# Collective test starting: " prog "\n"                                                                 \
	"# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg "  \
	"iters: 1 validation: " validation " graph: 0\n"                                                         \
	"#\n"                                                                                                    \
	"# Using devices\n"                                                                                      \
	"#  Rank  0 Group  0 Pid  11111 on node-a01 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"              \
	"#  Rank  1 Group  0 Pid  22222 on node-a02 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"              \
	"#\n"                                                                                                    \
	"#                                                              out-of-place                       in-place          \n" \
	"#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n" \
	"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"

#define FOOTER(prog, avg)                                                                                        \
	"# Out of bounds values : 0 OK\n"                                                                        \
	"# Avg bus bandwidth    : " avg " \n"                                                                    \
	"#\n"                                                                                                    \
	"# Collective test concluded: " prog "\n"                                                                \
	"#\n\n"

/* ---- the ordinary case ------------------------------------------------ */

static const char *const rows_all_reduce =
    "     1048576        262144     float     sum      -1    30.00   34.95   34.95       0    29.00   36.16   36.16       0\n"
    "     2097152        524288     float     sum      -1    50.00   41.94   41.94       0    49.00   42.80   42.80       0\n"
    "     4194304       1048576     float     sum      -1    90.00   46.60   46.60       0    91.00   46.09   46.09       0\n";

static char *concat(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = malloc(n);
	assert_non_null(s);
	snprintf(s, n, "%s%s%s", a, b, c);
	return s;
}

/* One run of v2.17: the sample, and everything kept beside it. */
static void test_v217_all_reduce(void **state)
{
	(void)state;
	char *in = concat(HDR217("all_reduce_perf", "1"), rows_all_reduce, FOOTER("all_reduce_perf", "41.16"));
	cJSON *a = parse(in);
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.all_reduce.busbw");
	assert_samples(r, (double[]){46.60}, 1);
	assert_wrong(r, 0);
	assert_no_reason(r);
	assert_string_equal(tool(r, "version")->valuestring, "2.17.8");
	assert_null(tool(r, "exit_status"));
	assert_det_str(r, "nccl_version", "2.29.2");
	assert_det_num(r, "nccl_version_code", 22902);
	assert_det_str(r, "collective", "all_reduce");
	assert_det_str(r, "program", "all_reduce_perf");
	assert_det_str(r, "collective_source", "'Collective test starting' line");
	assert_det_num(r, "nranks", 2);
	assert_det_num(r, "largest_size", 4194304);
	assert_det_num(r, "avg_busbw", 41.16);
	assert_det_num(r, "cycles", 1);
	assert_at_num(r, "detail.out_of_bounds.count", 0);
	assert_at_str(r, "detail.out_of_bounds.status", "OK");
	assert_at_num(r, "detail.inplace_busbw_largest.0", 46.09);
	assert_at_num(r, "detail.parameters.iters", 20);
	assert_at_num(r, "detail.parameters.warmup_iters", 5);
	assert_at_num(r, "detail.parameters.agg_iters", 1);
	assert_at_num(r, "detail.parameters.step_factor", 2);
	assert_at_num(r, "detail.parameters.validation", 1);
	assert_at_num(r, "detail.parameters.max_bytes", 4194304);
	assert_at_str(r, "detail.devices.1.host", "node-a02");
	assert_at_num(r, "detail.devices.1.pid", 22222);
	assert_at_num(r, "detail.devices.1.rank", 1);
	assert_at_str(r, "detail.devices.0.bus_id", "0000:1b:00");
	assert_at_str(r, "detail.devices.0.name", "NVIDIA H100 80GB HBM3");
	assert_int_equal(cJSON_GetArraySize(det(r, "table")), 3);
	assert_at_num(r, "detail.table.0.size", 1048576);
	assert_at_num(r, "detail.table.0.count", 262144);
	assert_at_str(r, "detail.table.0.type", "float");
	assert_at_str(r, "detail.table.0.redop", "sum");
	assert_at_num(r, "detail.table.0.root", -1);
	assert_at_num(r, "detail.table.2.out_of_place.time_us", 90.00);
	assert_at_num(r, "detail.table.2.out_of_place.algbw", 46.60);
	assert_at_num(r, "detail.table.2.in_place.busbw", 46.09);
	assert_at_num(r, "detail.table.2.in_place.wrong", 0);
	free(in);
	cJSON_Delete(a);
}

/* ---- layouts: -I per-iteration, -S timestamps, cputime, old formats ---- */

/* v2.19.2 -I adds i_* columns to each half and -S a two-word timestamp:
 * slicing by position would read i_min as the in-place time. */
static void test_per_iteration_and_timestamps(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# nccl-tests version 2.19.2 nccl-headers=22903 nccl-library=22903\n"
	    "# Collective test starting: all_reduce_perf\n"
	    "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
	    "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n"
	    "#\n# Using devices\n"
	    "#  Rank  0 Group  0 Pid   4321 on   node-b07 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
	    "#  Rank  1 Group  0 Pid   4321 on   node-b07 device  1 [0000:43:00] NVIDIA H100 80GB HBM3\n"
	    "#\n"
	    "#                                                    out-of-place (+ per-iteration)                                in-place (+ per-iteration)\n"
	    "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%           timestamp\n"
	    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)  %Y-%m-%d %H:%M:%S\n"
	    "     1048576        262144     float     sum      -1    20.10   52.17   52.17       0    19.80    21.00    20.90     1.50    20.00   52.43   52.43       0    19.70    20.80    20.70     1.40  2026-07-10 10:00:01\n"
	    "     2097152        524288     float     sum      -1    30.10   69.67   69.67       0    29.80    31.00    30.90     1.20    30.00   69.91   69.91       0    29.70    30.80    30.70     1.10  2026-07-10 10:00:02\n"
	    "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 61.045 \n#\n# Collective test concluded: all_reduce_perf\n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.all_reduce.busbw");
	assert_samples(r, (double[]){69.67}, 1);
	assert_wrong(r, 0);
	assert_true(cJSON_IsTrue(det(r, "per_iteration")));
	assert_at_num(r, "detail.table.1.out_of_place.i_min_us", 29.80);
	assert_at_num(r, "detail.table.1.out_of_place.i_max_us", 31.00);
	assert_at_num(r, "detail.table.1.out_of_place.i_cv_pct", 1.20);
	assert_at_num(r, "detail.table.1.in_place.time_us", 30.00);
	assert_at_num(r, "detail.table.1.in_place.i_p99_us", 30.70);
	assert_at_str(r, "detail.table.1.timestamp", "2026-07-10 10:00:02");
	assert_at_num(r, "detail.per_iteration_largest.0.i_p99_us", 30.90);
	assert_at_num(r, "detail.parameters.unalign", 0);
	assert_at_str(r, "detail.notes.0", "Per-Iteration Report: CUDA event timing; i_* uses max over process rows");
	cJSON_Delete(a);
}

/* -C 1 names the time column cputime. */
static void test_cputime_column(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "#       size         count      type   redop    root  cputime   algbw   busbw #wrong  cputime   algbw   busbw #wrong\n"
	    "     1048576        262144     float     sum      -1    41.00   25.57   38.36      0    40.00   26.21   39.32      0\n");
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){38.36}, 1);
	assert_det_str(r, "time_column", "cputime");
	assert_at_num(r, "detail.table.0.out_of_place.cputime_us", 41.00);
	cJSON_Delete(a);
}

/* <= v2.11 prints a maximum relative error ("2e-07"), not a count: wrong
 * comes from the out-of-bounds summary, and is null without one. */
static const char *const old_error_table =
    "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
    "#\n# Using devices\n"
    "#   Rank  0 Pid   4242 on     gpu-n1 device  0 [0x07] Tesla V100-SXM2-32GB\n"
    "#   Rank  1 Pid   4242 on     gpu-n1 device  1 [0x0a] Tesla V100-SXM2-32GB\n"
    "#   Rank  2 Pid   4242 on     gpu-n1 device  2 [0x47] Tesla V100-SXM2-32GB\n"
    "#   Rank  3 Pid   4242 on     gpu-n1 device  3 [0x4d] Tesla V100-SXM2-32GB\n"
    "#\n"
    "#                                                     out-of-place                       in-place\n"
    "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
    "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
    "     1048576        262144   float     sum    40.00   26.21   39.32  2e-07    40.00   26.21   39.32  0e+00\n"
    "     2097152        524288   float     sum    60.00   34.95   52.43  1e-06    60.00   34.95   52.43  2e-07\n";

static void test_old_error_column(void **state)
{
	(void)state;
	char *in = concat(old_error_table, "# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 45.875\n#\n", "");
	cJSON *a = parse(in);
	assert_sane(a);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.all_reduce.busbw"); /* 52.43 / 34.95 = 1.5 = 2(n-1)/n for n = 4 */
	assert_det_str(r, "collective_source", "table shape (busbw/algbw ratio, redop, root)");
	assert_samples(r, (double[]){52.43}, 1);
	assert_wrong(r, 2);
	assert_at_num(r, "detail.table.0.out_of_place.max_rel_error", 2e-07);
	assert_null(at(r, "detail.table.0.out_of_place.wrong"));
	assert_at_str(r, "detail.out_of_bounds.status", "FAILED");
	assert_at_str(r, "detail.devices.3.bus_id", "0x4d");
	assert_null(at(r, "detail.devices.3.group"));
	free(in);
	cJSON_Delete(a);

	a = parse(old_error_table); /* the summary lost */
	r = rec_at(a, 0);
	assert_samples(r, (double[]){52.43}, 1);
	assert_wrong_null(r);
	cJSON_Delete(a);
}

/* Old alltoall: the header names redop, the rows leave it blank. */
static void test_old_blank_redop(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 validation: 0\n"
	    "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
	    "     1048576         65536   float            50.00   20.97   15.73    N/A    50.00   20.97   15.73    N/A\n"
	    "     2097152        131072   float            80.00   26.21   19.66    N/A    80.00   26.21   19.66    N/A\n");
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){19.66}, 1);
	assert_wrong_null(r);
	assert_at_null(r, "detail.table.1.redop");
	assert_at_null(r, "detail.table.1.root");
	assert_det_str(r, "wrong_source", "validation: 0 (-c 0): correctness was not checked");
	cJSON_Delete(a);
}

/* Columns overflow their width: a 16 GiB size, a 7-digit time and an
 * in-place algbw of a no-op copy push every later column right. */
static void test_column_overflow(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "  8589934592    2147483648     float     sum      -1   631816   13.60   23.80      0     0.13  66076419.94   23.80      0\n"
	    " 17179869184    4294967296     float     sum      -1  1263724   13.59   23.78      0     0.14  122713351.31   23.78      0\n");
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){23.78}, 1);
	assert_at_num(r, "detail.table.1.in_place.algbw", 122713351.31);
	assert_at_num(r, "detail.table.1.out_of_place.time_us", 1263724);
	assert_det_num(r, "largest_size", 17179869184.0);
	cJSON_Delete(a);
}

/* ---- cycles, invocations, datatypes ----------------------------------- */

/* -N 3 with -b = -e: three rows of one size are three samples. */
static void test_cycles_one_size(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "  1073741824     268435456     float     sum      -1   4400.0  244.03  427.05      0   4410.0  243.48  426.09      0\n"
	    "  1073741824     268435456     float     sum      -1   4390.0  244.59  428.03      0   4400.0  244.03  427.05      0\n"
	    "  1073741824     268435456     float     sum      -1   4500.0  238.61  417.57      0   4420.0  242.93  425.12      0\n"
	    "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 424.48 \n");
	cJSON *r = rec_at(a, 0);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_samples(r, (double[]){427.05, 428.03, 417.57}, 3);
	assert_det_num(r, "cycles", 3);
	assert_at_num(r, "detail.inplace_busbw_largest.2", 425.12);
	assert_wrong(r, 0);
	cJSON_Delete(a);
}

/* -N sweeps: the sizes start again after the largest; a last sweep that stops
 * early is an incomplete cycle, not a sample at a smaller size. */
static void test_cycles_sweeps(void **state)
{
	(void)state;
	char *in = concat(HDR217("all_reduce_perf", "1"), rows_all_reduce,
	                  "     1048576        262144     float     sum      -1    31.00   33.83   33.83       0    29.00   36.16   36.16       0\n"
	                  "     2097152        524288     float     sum      -1    51.00   41.12   41.12       0    49.00   42.80   42.80       0\n"
	                  "     4194304       1048576     float     sum      -1    88.00   47.66   47.66       0    91.00   46.09   46.09       0\n"
	                  "     1048576        262144     float     sum      -1    31.00   33.83   33.83       0    29.00   36.16   36.16       0\n"
	                  "     2097152        524288     float     sum      -1    51.00   41.12   41.12       0    49.00   42.80   42.80       0\n");
	cJSON *a = parse(in);
	cJSON *r = rec_at(a, 0);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_samples(r, (double[]){46.60, 47.66}, 2);
	assert_det_num(r, "cycles", 2);
	assert_det_num(r, "incomplete_cycles", 1);
	free(in);
	cJSON_Delete(a);
}

/* Two invocations of the same collective are two records, not two cycles. */
static void test_two_invocations(void **state)
{
	(void)state;
	char *one = concat(HDR217("all_reduce_perf", "1"), rows_all_reduce, FOOTER("all_reduce_perf", "41.16"));
	char *two = concat(one, one, "");
	cJSON *a = parse(two);
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 2);
	for (int i = 0; i < 2; i++) {
		cJSON *r = rec_at(a, i);
		assert_metric(r, "nccl.all_reduce.busbw");
		assert_samples(r, (double[]){46.60}, 1);
		assert_det_num(r, "run", i);
	}
	free(one);
	free(two);
	cJSON_Delete(a);

	/* The same without any "#" marker between them but the summary. */
	a = parse("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	          "     1048576        262144     float     sum      -1    30.00   34.95   61.16       0    29.00   36.16   63.28       0\n"
	          "# Avg bus bandwidth    : 61.16 \n"
	          "     1048576        262144     float     sum      -1    31.00   33.83   59.20       0    29.00   36.16   63.28       0\n");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_samples(rec_at(a, 0), (double[]){61.16}, 1);
	assert_samples(rec_at(a, 1), (double[]){59.20}, 1);
	cJSON_Delete(a);
}

/* -d all: one pass per datatype; a float busbw is no sample of a double. */
static void test_datatype_all(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# Collective test starting: all_reduce_perf\n"
	    "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "     1048576        262144     float     sum      -1    40.00   26.21   45.87      0    40.00   26.21   45.87      0\n"
	    "     2097152        524288     float     sum      -1    60.00   34.95   61.16      0    60.00   34.95   61.16      0\n"
	    "     1048576        131072    double     sum      -1    42.00   24.97   43.69      0    42.00   24.97   43.69      0\n"
	    "     2097152        262144    double     sum      -1    63.00   33.29   58.25      3    63.00   33.29   58.25      0\n"
	    "# Out of bounds values : 1 FAILED\n# Avg bus bandwidth    : 52.24 \n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 2);
	cJSON *f = rec_at(a, 0), *d = rec_at(a, 1);
	assert_det_str(f, "datatype", "float");
	assert_samples(f, (double[]){61.16}, 1);
	assert_wrong(f, 0);
	assert_det_str(d, "datatype", "double");
	assert_samples(d, (double[]){58.25}, 1);
	assert_wrong(d, 3);
	cJSON_Delete(a);
}

/* ---- wrong ------------------------------------------------------------ */

static cJSON *one_row(const char *validation, const char *oop_wrong, const char *ip_wrong, const char *summary)
{
	char buf[2048];
	snprintf(buf, sizeof buf,
	         "# nThread 1 nGpus 8 minBytes 4194304 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: %s graph: 0\n"
	         "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
	         "     4194304       1048576     float     sum      -1    90.00   46.60   81.55  %6s    91.00   46.09   80.66  %6s\n"
	         "%s",
	         validation, oop_wrong, ip_wrong, summary);
	return parse(buf);
}

/* #wrong switches to %g past six digits; both halves count. */
static void test_wrong_g_format(void **state)
{
	(void)state;
	cJSON *a = one_row("1", "1.04858e+06", "12", "# Out of bounds values : 1 FAILED\n");
	cJSON *r = rec_at(a, 0);
	assert_wrong(r, 1048580 + 12);
	assert_samples(r, (double[]){81.55}, 1);
	assert_det_str(r, "wrong_source", "sum of the table's #wrong cells");
	cJSON_Delete(a);
}

/* alltoall and sendrecv check no in-place result: N/A there is not "off". */
static void test_inplace_na_is_not_unchecked(void **state)
{
	(void)state;
	cJSON *a = one_row("1", "0", "N/A", "");
	assert_wrong(rec_at(a, 0), 0);
	cJSON_Delete(a);
	a = one_row("1", "5", "N/A", "");
	assert_wrong(rec_at(a, 0), 5);
	cJSON_Delete(a);
}

/* -c 0: N/A everywhere is "not checked", never 0. */
static void test_validation_off_is_null(void **state)
{
	(void)state;
	cJSON *a = one_row("0", "N/A", "N/A", "");
	cJSON *r = rec_at(a, 0);
	assert_wrong_null(r);
	assert_samples(r, (double[]){81.55}, 1);
	assert_at_null(r, "detail.table.0.out_of_place.wrong");
	cJSON_Delete(a);
	a = one_row("1", "N/A", "N/A", ""); /* no cell checked, whatever the header says */
	assert_wrong_null(rec_at(a, 0));
	assert_det_str(rec_at(a, 0), "wrong_source", "every #wrong cell is N/A: correctness was not checked");
	cJSON_Delete(a);
}

/* The summary says a check failed though the table's cells read 0. */
static void test_out_of_bounds_failed_overrides_zero(void **state)
{
	(void)state;
	cJSON *a = one_row("1", "0", "0", "# Out of bounds values : 1 FAILED\n# Avg bus bandwidth    : 81.55 \n");
	assert_wrong(rec_at(a, 0), 1);
	cJSON_Delete(a);
}

/* ---- no measurement --------------------------------------------------- */

/* One rank: busbw is 0.00 everywhere. Not a measurement of anything. */
static void test_single_rank_busbw_zero(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "#\n# Using devices\n"
	    "#  Rank  0 Group  0 Pid    126 on flux-sample-0 device  0 [0000:00:04] Tesla V100-SXM2-16GB\n#\n"
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "     1048576        262144     float     sum      -1     5.81  180.33    0.00      0     0.13  7839.82    0.00      0\n"
	    "     2097152        524288     float     sum      -1     8.39  249.95    0.00      0     0.13  15893.54    0.00      0\n"
	    "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n#\n");
	assert_sane(a);
	cJSON *r = rec_at(a, 0);
	assert_no_samples(r);
	assert_reason_has(r, "busbw is 0 at the largest size (2097152 bytes)");
	assert_wrong(r, 0);
	assert_det_num(r, "avg_busbw", 0);
	cJSON_Delete(a);
}

/* A crash mid-sweep: the largest printed size is not the largest asked for. */
static void test_table_cut_short(void **state)
{
	(void)state;
	char *in = concat(HDR217("all_reduce_perf", "1"),
	                  "     1048576        262144     float     sum      -1    30.00   34.95   34.95       0    29.00   36.16   36.16       0\n"
	                  "     2097152        524288     float     sum      -1    50.00   41.94   41.94       0    49.00   42.80   42.80       0\n",
	                  "node-a01:11111:11200 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion with error 12, opcode 0\n"
	                  "node-a01: Test NCCL failure common.cu:1279 'remote process exited or there was a network error'\n");
	cJSON *a = parse_st(in, (ng_run_status){1, 0});
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.all_reduce.busbw");
	assert_no_samples(r);
	assert_string_equal(reason(r), "the table stops at 2097152 bytes, short of the largest size the run asked for "
	                               "(4194304 bytes): the run ended mid-sweep: node-a01: Test NCCL failure "
	                               "common.cu:1279 'remote process exited or there was a network error'; nccl-tests "
	                               "exited with status 1");
	assert_det_num(r, "expected_largest_size", 4194304);
	assert_at_str(r, "detail.messages.0",
	              "node-a01:11111:11200 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion with error 12, opcode 0");
	assert_int_equal(cJSON_GetArraySize(det(r, "messages")), 2);
	assert_int_equal((int)tool(r, "exit_status")->valuedouble, 1);
	free(in);
	cJSON_Delete(a);
}

/* all_gather over 6 ranks rounds each size down to whole elements per rank:
 * 1999992 under a 2000000 maxBytes is the whole sweep, not a cut. */
static void test_rounded_sizes_are_not_cut_short(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "# Collective test starting: all_gather_perf\n"
	    "# nThread 1 nGpus 6 minBytes 1000000 maxBytes 2000000 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "      999984         41666     float    none      -1    20.00   50.00   41.67      0    20.00   50.00   41.67      0\n"
	    "     1999992         83333     float    none      -1    30.00   66.67   55.56      0    30.00   66.67   55.56      0\n");
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){55.56}, 1);
	assert_no_reason(r);
	assert_null(det(r, "expected_largest_size"));
	cJSON_Delete(a);
}

/* Died in its preamble: no table, so not "a table with no rows"; the cause
 * is the failing call, not the trace frames after it; nothing validated. */
static void test_crash_before_table(void **state)
{
	(void)state;
	char *in = concat("# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902\n"
	                  "# Collective test starting: all_reduce_perf\n"
	                  "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
	                  "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n",
	                  "gpu-c03: Test CUDA failure common.cu:941 'system not yet initialized'\n",
	                  " .. gpu-c03 pid 5150: Test failure common.cu:1072\n"
	                  " .. gpu-c03 pid 5150: Test failure common.cu:1184\n");
	cJSON *a = parse_st(in, (ng_run_status){2, 0});
	assert_sane(a);
	cJSON *r = rec_at(a, 0);
	assert_no_samples(r);
	assert_wrong_null(r);
	assert_string_equal(reason(r), "nccl-tests ended before printing its result table: gpu-c03: Test CUDA failure "
	                               "common.cu:941 'system not yet initialized'; nccl-tests exited with status 2");
	assert_det_str(r, "cause", "gpu-c03: Test CUDA failure common.cu:941 'system not yet initialized'");
	free(in);
	cJSON_Delete(a);

	/* Nothing but the failure: no run began, and the reason still quotes it. */
	a = parse("gpu-c03: Test NCCL failure common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'\n"
	          " .. gpu-c03 pid 5150: Test failure common.cu:1184\n");
	r = rec_at(a, 0);
	assert_no_samples(r);
	assert_wrong_null(r);
	assert_string_equal(reason(r), "nccl-tests failed before printing a result table: gpu-c03: Test NCCL failure "
	                               "common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'");
	cJSON_Delete(a);
}

/* nccl-tests lowers maxBytes to fit GPU memory; the summary after the table
 * shows the sweep completed: a sample, and the cap in detail. */
static void test_capped_sweep_with_summary(void **state)
{
	(void)state;
	char *head = concat("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 17179869184 step: 2(factor) warmup iters: 5 "
	                    "iters: 20 agg iters: 1 validation: 1 graph: 0\n",
	                    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
	                    "time   algbw   busbw  #wrong \n",
	                    rows_all_reduce);
	char *in = concat(head, "# Out of bounds values : 0 OK\n", "# Avg bus bandwidth    : 41.16 \n");
	cJSON *a = parse(in);
	assert_sane(a);
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){46.60}, 1);
	assert_wrong(r, 0);
	assert_no_reason(r);
	assert_at_num(r, "detail.sweep_capped.requested_largest_size", 17179869184.0);
	assert_at_num(r, "detail.sweep_capped.largest_size", 4194304);
	assert_null(det(r, "expected_largest_size"));
	cJSON_Delete(a);
	free(in);

	/* Without the summary the same table was cut short. */
	a = parse(head);
	r = rec_at(a, 0);
	assert_no_samples(r);
	assert_non_null(strstr(reason(r), "ended mid-sweep"));
	assert_null(det(r, "sweep_capped"));
	cJSON_Delete(a);
	free(head);
}

/* A header and then an error: a table with no rows. */
static void test_header_without_rows(void **state)
{
	(void)state;
	char *in = concat(HDR217("alltoall_perf", "1"),
	                  "node-a01:11111:11111 [0] init.cc:1460 NCCL WARN Cuda failure 'out of memory'\n",
	                  "node-a01: Test NCCL failure common.cu:1005 'unhandled cuda error'\n");
	cJSON *a = parse(in);
	assert_sane(a);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.alltoall.busbw");
	assert_no_samples(r);
	/* The cause is nccl-tests' failing call, with NCCL's own account beside it. */
	assert_string_equal(reason(r), "nccl-tests printed a table with no rows: node-a01: Test NCCL failure "
	                               "common.cu:1005 'unhandled cuda error'; first NCCL warning: node-a01:11111:11111 "
	                               "[0] init.cc:1460 NCCL WARN Cuda failure 'out of memory'");
	assert_det_str(r, "cause", "node-a01: Test NCCL failure common.cu:1005 'unhandled cuda error'");
	/* nothing validated: not checked (the harness settles it to no-measurement) */
	assert_wrong_null(r);
	free(in);
	cJSON_Delete(a);
}

/* Trace replay prints only the in-place half. */
static void test_no_out_of_place_half(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "     4194304       1048576     float     sum      -1                                       91.00   46.09   80.66      0\n");
	cJSON *r = rec_at(a, 0);
	assert_no_samples(r);
	assert_string_equal(reason(r), "no out-of-place result at the largest size");
	assert_at_null(r, "detail.table.0.out_of_place");
	assert_at_num(r, "detail.inplace_busbw_largest.0", 80.66);
	cJSON_Delete(a);
}

/* ---- usage text and refused arguments ---------------------------------- */

static const char *const usage_block =
    "USAGE: all_reduce_perf \n"
    "\t[-t,--nthreads <num threads>] \n"
    "\t[-g,--ngpus <gpus per thread>] \n"
    "\t[-c,--check <check iteration count>] \n"
    "\t[-h,--help]\n";

/* An option the build does not know (-I before v2.19.2): usage text, exit 0. */
static void test_usage_invalid_option(void **state)
{
	(void)state;
	char *in = concat("all_reduce_perf: invalid option -- 'I'\n", "invalid option '?'\n", usage_block);
	cJSON *a = parse_st(in, (ng_run_status){0, 0});
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.all_reduce.busbw");
	assert_no_samples(r);
	assert_wrong_null(r); /* nothing validated: the harness settles it to no-measurement */
	assert_string_equal(reason(r), "nccl-tests printed its usage text: an option was not recognised (invalid option '-I')");
	assert_int_equal((int)tool(r, "exit_status")->valuedouble, 0);
	free(in);
	cJSON_Delete(a);

	/* stdout before stderr: the same account. */
	in = concat("invalid option '?'\n", usage_block, "all_reduce_perf: invalid option -- 'I'\n");
	a = parse(in);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_string_equal(reason(rec_at(a, 0)),
	                    "nccl-tests printed its usage text: an option was not recognised (invalid option '-I')");
	free(in);
	cJSON_Delete(a);

	/* stdout alone only says '?'. */
	in = concat("invalid option '?'\n", usage_block, "");
	a = parse(in);
	assert_string_equal(reason(rec_at(a, 0)), "nccl-tests printed its usage text: an option was not recognised "
	                                          "(invalid option '?'; glibc names it on stderr)");
	free(in);
	cJSON_Delete(a);

	a = parse("/opt/nccl-tests/build/sendrecv_perf: unrecognized option '--per_iter_timing'\ninvalid option '?'\n"
	          "USAGE: sendrecv_perf \n\t[-h,--help]\n");
	assert_metric(rec_at(a, 0), "nccl.sendrecv.busbw");
	assert_string_equal(reason(rec_at(a, 0)), "nccl-tests printed its usage text: an option was not recognised "
	                                          "(unrecognized option '--per_iter_timing')");
	cJSON_Delete(a);

	a = parse("all_gather_perf: option requires an argument -- 'b'\ninvalid option '?'\nUSAGE: all_gather_perf \n");
	assert_string_equal(reason(rec_at(a, 0)), "nccl-tests printed its usage text: option '-b' is missing its argument");
	cJSON_Delete(a);
}

/* -h: the usage text alone. */
static void test_usage_help(void **state)
{
	(void)state;
	cJSON *a = parse("USAGE: all_gather_perf \n\t[-t,--nthreads <num threads>] \n\t[-h,--help]\n");
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.all_gather.busbw");
	assert_no_samples(r);
	assert_string_equal(reason(r),
	                    "nccl-tests printed its usage text (-h, or an option it did not accept): it ran no benchmark");
	cJSON_Delete(a);
}

/* mpirun --tag-output: every rank prints the usage text; one record. */
static void test_usage_per_rank(void **state)
{
	(void)state;
	cJSON *a = parse("[1,0]<stderr>:all_reduce_perf: invalid option -- 'I'\n"
	                 "[1,1]<stderr>:all_reduce_perf: invalid option -- 'I'\n"
	                 "[1,0]<stdout>:invalid option '?'\n"
	                 "[1,1]<stdout>:invalid option '?'\n"
	                 "[1,0]<stdout>:USAGE: all_reduce_perf \n"
	                 "[1,1]<stdout>:USAGE: all_reduce_perf \n"
	                 "[1,0]<stdout>:\t[-h,--help]\n"
	                 "[1,1]<stdout>:\t[-h,--help]\n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_string_equal(reason(r), "nccl-tests printed its usage text: an option was not recognised (invalid option '-I')");
	assert_at_str(r, "detail.launcher_labels.0", "[1,0]");
	assert_at_str(r, "detail.launcher_labels.1", "[1,1]");
	assert_det_num(r, "usage_printed", 2);
	cJSON_Delete(a);
}

/* A bad size: exit 255, no usage text, repeated per rank. */
static void test_invalid_size(void **state)
{
	(void)state;
	cJSON *a = parse_st("invalid size specified for 'minbytes'\ninvalid size specified for 'minbytes'\n",
	                    (ng_run_status){255, 0});
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.unknown.busbw");
	assert_no_samples(r);
	assert_string_equal(reason(r), "nccl-tests refused its arguments (invalid size specified for 'minbytes'): it ran "
	                               "no benchmark; nccl-tests exited with status 255");
	cJSON_Delete(a);
}

/* ---- foreign lines, labels, stripped markers --------------------------- */

/* NCCL INFO/WARN, X11 noise and "Reducing maxBytes" anywhere. */
static void test_foreign_lines(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "Authorization required, but no authorization protocol specified\n"
	    "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "node-c3:7:7 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n"
	    "node-c3:7:7 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n"
	    "#\n# Reducing maxBytes to 2097152 due to memory limitation\n#\n"
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "     1048576        262144     float     sum      -1    40.00   26.21   45.87      0    40.00   26.21   45.87      0\n"
	    "node-c3:7:30 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC/read\n"
	    "node-c3:7:31 [5] misc/socket.cc:50 NCCL WARN socket progress: connection closed by peer\n"
	    "     2097152        524288     float     sum      -1    60.00   34.95   61.16      0    60.00   34.95   61.16      0\n"
	    "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 53.515 \n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){61.16}, 1);
	assert_wrong(r, 0);
	assert_det_num(r, "reduced_max_bytes", 2097152);
	assert_det_str(r, "nccl_version", "2.18.5");
	assert_int_equal(cJSON_GetArraySize(det(r, "messages")), 1);
	assert_at_str(r, "detail.messages.0", "node-c3:7:31 [5] misc/socket.cc:50 NCCL WARN socket progress: connection closed by peer");
	assert_int_equal(cJSON_GetArraySize(det(r, "table")), 2);
	cJSON_Delete(a);
}

/* srun -l with a non-MPI build: every task runs its own test, and their
 * lines interleave. One table per label, never one table of both. */
static void test_srun_labels(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "0: # nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "1: # nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "1: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "0:      1048576        262144     float     sum      -1    10.00  104.86  104.86      0    10.00  104.86  104.86      0\n"
	    "1:      1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n"
	    "1:      2097152        524288     float     sum      -1    40.00   52.43   52.43      7    40.00   52.43   52.43      0\n"
	    "0:      2097152        524288     float     sum      -1    15.00  139.81  139.81      0    15.00  139.81  139.81      0\n"
	    "0: # Out of bounds values : 0 OK\n"
	    "1: # Out of bounds values : 1 FAILED\n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 2);
	cJSON *r0 = rec_at(a, 0), *r1 = rec_at(a, 1);
	assert_det_str(r0, "launcher_label", "0:");
	assert_samples(r0, (double[]){139.81}, 1);
	assert_wrong(r0, 0);
	assert_det_str(r1, "launcher_label", "1:");
	assert_samples(r1, (double[]){52.43}, 1);
	assert_wrong(r1, 7);
	cJSON_Delete(a);
}

/* mpirun --tag-output: rank 0 prints the table, the others only chatter. */
static void test_mpirun_tag_output(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "[1,0]<stdout>:# Collective test starting: broadcast_perf\n"
	    "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "[1,1]<stderr>:node-d2:9:9 [1] NCCL INFO cudaDriverVersion 12040\n"
	    "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "[1,1]<stderr>:node-d2:9:9 [1] NCCL INFO Bootstrap : Using ib0:10.1.0.2<0>\n"
	    "[1,0]<stdout>:     1048576        262144     float    none       0    30.00   34.95   34.95      0    30.00   34.95   34.95      0\n"
	    "[1,0]<stdout>:# Out of bounds values : 0 OK\n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.broadcast.busbw");
	assert_samples(r, (double[]){34.95}, 1);
	assert_det_str(r, "launcher_label", "[1,0]");
	assert_det_num(r, "root", 0);
	cJSON_Delete(a);
}

/* A log viewer that strips every "#" prefix. */
static void test_hash_stripped(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "provisioning completed (running)\n"
	    "nThread 1 nGpus 1 minBytes 8388608 maxBytes 16777216 step: 2(factor) warmup iters: 5 iters: 200 agg iters: 1 validation: 0 graph: 0\n"
	    "\n"
	    "                                                             out-of-place                       in-place          \n"
	    "      size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "       (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
	    "     8388608        131072     float    none      -1    166.6   50.34   47.19    N/A    164.1   51.11   47.92    N/A\n"
	    "    16777216        262144     float    none      -1    204.6   82.01   76.89    N/A    203.8   82.30   77.16    N/A\n"
	    "Out of bounds values : 0 OK\n"
	    "Avg bus bandwidth    : 62.04 \n\nDone\n");
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){76.89}, 1);
	assert_wrong_null(r);
	assert_det_num(r, "avg_busbw", 62.04);
	assert_at_num(r, "detail.out_of_bounds.count", 0);
	cJSON_Delete(a);
}

/* ---- naming the collective --------------------------------------------- */

static cJSON *shape(const char *redop, const char *root, const char *algbw, const char *busbw)
{
	char buf[2048];
	snprintf(buf, sizeof buf,
	         "#  Rank  0 Group  0 Pid  1 on h device  0 [0000:1b:00] G\n"
	         "#  Rank  1 Group  0 Pid  2 on h device  1 [0000:43:00] G\n"
	         "#  Rank  2 Group  0 Pid  3 on h device  2 [0000:52:00] G\n"
	         "#  Rank  3 Group  0 Pid  4 on h device  3 [0000:61:00] G\n"
	         "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	         "     4194304        262144     float  %6s  %6s   100.00  %6s  %6s      0   100.00  %6s  %6s      0\n",
	         redop, root, algbw, busbw, algbw, busbw);
	return parse(buf);
}

/* Nothing names it: busbw/algbw, redop and root tell it, or nothing does. */
static void test_collective_from_shape(void **state)
{
	(void)state;
	struct {
		const char *redop, *root, *algbw, *busbw, *metric;
	} cases[] = {
	    {"sum", "-1", "40.00", "60.00", "nccl.all_reduce.busbw"},     /* 2(n-1)/n = 1.5 */
	    {"sum", "-1", "40.00", "30.00", "nccl.reduce_scatter.busbw"}, /* (n-1)/n, a reduction */
	    {"none", "0", "40.00", "40.00", "nccl.broadcast.busbw"},      /* 1, a root, no op */
	    {"sum", "0", "40.00", "40.00", "nccl.reduce.busbw"},          /* 1, a root, an op */
	    {"sum", "-1", "40.00", "40.00", "nccl.sendrecv.busbw"},       /* 1 over 4 ranks */
	    {"none", "-1", "40.00", "30.00", "nccl.unknown.busbw"},       /* all_gather or alltoall */
	    {"none", "0", "40.00", "30.00", "nccl.unknown.busbw"},        /* gather or scatter */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *a = shape(cases[i].redop, cases[i].root, cases[i].algbw, cases[i].busbw);
		assert_metric(rec_at(a, 0), cases[i].metric);
		cJSON_Delete(a);
	}
	cJSON *a = shape("none", "-1", "40.00", "30.00");
	cJSON *r = rec_at(a, 0);
	assert_true(cJSON_IsNull(det(r, "collective")));
	assert_int_equal(cJSON_GetArraySize(det(r, "collective_candidates")), 2);
	assert_at_str(r, "detail.collective_candidates.0", "all_gather");
	assert_at_str(r, "detail.collective_candidates.1", "alltoall");
	assert_samples(r, (double[]){30.00}, 1);
	cJSON_Delete(a);
}

/* The command line echoed before a run that does not name itself. */
static void test_collective_from_program_name(void **state)
{
	(void)state;
	cJSON *a = parse(
	    "+ mpirun -np 4 /opt/nccl-tests/build/reduce_scatter_perf -b 1M -e 1M -g 1\n"
	    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	    "     1048576         65536     float     sum      -1    30.00   34.95   26.21      0    30.00   34.95   26.21      0\n");
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.reduce_scatter.busbw");
	assert_det_str(r, "program", "reduce_scatter_perf");
	assert_det_str(r, "collective_source", "program name printed before the run");
	cJSON_Delete(a);
}

/* A git hash in the version line; an NCCL code from before 2.9. */
static void test_version_lines(void **state)
{
	(void)state;
	cJSON *a = parse("# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=2804\n"
	                 "# Collective test starting: all_reduce_perf\n"
	                 "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	                 "     1048576        262144     float     sum      -1    30.00   34.95   61.16      0    30.00   34.95   61.16      0\n");
	cJSON *r = rec_at(a, 0);
	assert_string_equal(tool(r, "version")->valuestring, "2.20.0");
	assert_det_str(r, "nccl_tests_git", "b4d5bee");
	assert_det_str(r, "nccl_headers_version", "2.31.2");
	assert_det_str(r, "nccl_version", "2.8.4");
	cJSON_Delete(a);
}

/* ---- how the run ended ------------------------------------------------- */

static void test_run_status(void **state)
{
	(void)state;
	char *in = concat(HDR217("all_reduce_perf", "1"), rows_all_reduce, FOOTER("all_reduce_perf", "41.16"));
	cJSON *a = parse_st(in, (ng_run_status){3, 0});
	cJSON *r = rec_at(a, 0);
	assert_samples(r, (double[]){46.60}, 1);
	assert_string_equal(reason(r), "nccl-tests exited with status 3; the figures it printed before that are kept");
	assert_int_equal((int)tool(r, "exit_status")->valuedouble, 3);
	assert_det_str(r, "run_status", "nccl-tests exited with status 3");
	cJSON_Delete(a);

	a = parse_st(in, (ng_run_status){-1, 9});
	r = rec_at(a, 0);
	assert_samples(r, (double[]){46.60}, 1);
	assert_string_equal(reason(r), "nccl-tests was killed by signal 9; the figures it printed before that are kept");
	assert_int_equal((int)tool(r, "signal")->valuedouble, 9);
	assert_null(tool(r, "exit_status"));
	cJSON_Delete(a);

	a = parse_st(in, (ng_run_status){0, 0});
	assert_no_reason(rec_at(a, 0));
	cJSON_Delete(a);
	free(in);
}

static void test_nothing_printed(void **state)
{
	(void)state;
	cJSON *a = parse("");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_metric(rec_at(a, 0), "nccl.unknown.busbw");
	assert_no_samples(rec_at(a, 0));
	assert_string_equal(reason(rec_at(a, 0)), "the output is empty: nccl-tests printed nothing");
	cJSON_Delete(a);

	a = parse_st("\n  \n", (ng_run_status){-1, 9});
	assert_string_equal(reason(rec_at(a, 0)),
	                    "the output is empty: nccl-tests printed nothing; nccl-tests was killed by signal 9");
	cJSON_Delete(a);

	a = parse("srun: error: node-a01: task 0: Exited with exit code 127\n"
	          "/bin/sh: all_reduce_perf: command not found\n");
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.unknown.busbw");
	assert_string_equal(reason(r), "no nccl-tests output found (no result table, usage text or -J report)");
	assert_at_str(r, "detail.messages.0", "srun: error: node-a01: task 0: Exited with exit code 127");
	cJSON_Delete(a);
}

/* ---- the -J JSON report ------------------------------------------------ */

/* One compact line as nccl-tests writes it: -N 2 at one size, -I, -c 0. */
static const char *const json_report =
    "{\"version\":3,\"start_time\":\"2026-07-01 10:00:00\",\"args\":[\"/opt/bin/alltoall_perf\",\"-b\",\"1G\",\"-e\",\"1G\",\"-N\",\"2\",\"-I\",\"1\",\"-c\",\"0\",\"-J\",\"/out/a.json\"],"
    "\"env\":[\"HOME=/root\",\"API_TOKEN=SECRET123\"],\"nccl_version\":22703,"
    "\"config\":{\"nthreads\":1,\"ngpus\":1,\"minimum_bytes\":1073741824,\"maximum_bytes\":1073741824,\"step_factor\":1,"
    "\"warmup_iters\":5,\"iterations\":3,\"aggregated_iterations\":1,\"validation\":0,\"graph\":0,\"blocking_collectives\":\"false\","
    "\"per_iter_timing\":\"true\",\"per_iter_skip\":0,\"parallel_init\":\"false\",\"devices\":["
    "{\"rank\":0,\"group\":0,\"pid\":10,\"hostname\":\"node-e1\",\"device\":0,\"device_hex\":\"0000:1b:00\",\"device_info\":\"NVIDIA H200\"},"
    "{\"rank\":1,\"group\":0,\"pid\":11,\"hostname\":\"node-e1\",\"device\":1,\"device_hex\":\"0000:43:00\",\"device_info\":\"NVIDIA H200\"}]},"
    "\"results\":["
    "{\"size\":1073741824,\"count\":134217728,\"type\":\"float\",\"redop\":\"none\",\"root\":\"    -1\","
    "\"out_of_place\":{\"time\":5000.000000,\"alg_bw\":214.748365,\"bus_bw\":107.374182,\"nwrong\":null},"
    "\"out_of_place_per_iter\":{\"skipped_iterations\":0,\"min_us\":4990.0,\"max_us\":5010.0,\"avg_us\":5000.0,\"p50_us\":5000.0,\"p95_us\":5010.0,\"p99_us\":5010.0,\"stdev_us\":8.2,\"cv_pct\":0.16,\"times_us\":[4990.0,5000.0,5010.0]},"
    "\"in_place\":{\"time\":5100.000000,\"alg_bw\":210.537,\"bus_bw\":105.268,\"nwrong\":null},\"actual_iterations\":3,\"experiment_name\":\"\"},"
    "{\"size\":1073741824,\"count\":134217728,\"type\":\"float\",\"redop\":\"none\",\"root\":\"    -1\","
    "\"out_of_place\":{\"time\":5050.000000,\"alg_bw\":212.622,\"bus_bw\":106.311,\"nwrong\":null},"
    "\"in_place\":{\"time\":5100.000000,\"alg_bw\":210.537,\"bus_bw\":105.268,\"nwrong\":null},\"actual_iterations\":3,\"experiment_name\":\"\"}],"
    "\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},\"average_bus_bandwidth\":{\"bandwidth\":106.842591,\"okay\":\"unchecked\"},"
    "\"errors\":[\"\"],\"end_time\":\"2026-07-01 10:00:05\"}";

static void test_json_report(void **state)
{
	(void)state;
	cJSON *a = parse(json_report);
	assert_sane(a);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON *r = rec_at(a, 0);
	assert_metric(r, "nccl.alltoall.busbw");
	assert_samples(r, (double[]){107.374182, 106.311}, 2);
	assert_wrong_null(r);
	assert_det_str(r, "format", "json");
	assert_det_str(r, "collective_source", "-J report args");
	assert_det_str(r, "nccl_version", "2.27.3");
	assert_det_num(r, "nranks", 2);
	assert_det_num(r, "root", -1);
	assert_det_str(r, "avg_busbw_check", "unchecked");
	assert_at_str(r, "detail.devices.1.bus_id", "0000:43:00");
	assert_at_str(r, "detail.parameters.per_iter_timing", "true");
	assert_at_num(r, "detail.json_report.file_version", 3);
	assert_at_num(r, "detail.per_iteration_largest.0.p99_us", 5010.0);
	assert_at_num(r, "detail.table.0.out_of_place_per_iter.times_us.2", 5010.0);
	assert_at_str(r, "tool.argv.0", "/opt/bin/alltoall_perf");
	assert_null(det(r, "messages")); /* "errors": [""] is no error */
	char *printed = cJSON_PrintUnformatted(r);
	assert_null(strstr(printed, "SECRET123")); /* the environment is never copied */
	free(printed);
	cJSON_Delete(a);

	/* The same report behind warning lines. */
	char *in = concat("WARNING: could not open /dev/infiniband/uverbs0\n", json_report, "\n");
	a = parse(in);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_samples(rec_at(a, 0), (double[]){107.374182, 106.311}, 2);
	free(in);
	cJSON_Delete(a);
}

static void test_json_broken(void **state)
{
	(void)state;
	cJSON *a = parse("{\"version\":3,\"results\":[{\"size\":1073741824,\"count\":26");
	cJSON *r = rec_at(a, 0);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_metric(r, "nccl.unknown.busbw");
	assert_no_samples(r);
	assert_reason_has(r, "not valid JSON");
	cJSON_Delete(a);

	/* bus_bw "nan": a string, never a number. */
	a = parse("{\"version\":3,\"args\":[\"all_reduce_perf\"],\"config\":{\"validation\":1},\"results\":[{\"size\":8,"
	          "\"count\":2,\"type\":\"float\",\"redop\":\"sum\",\"root\":\"    -1\",\"out_of_place\":{\"time\":0.0,"
	          "\"alg_bw\":\"nan\",\"bus_bw\":\"nan\",\"nwrong\":0.0},\"in_place\":null}]}");
	r = rec_at(a, 0);
	assert_metric(r, "nccl.all_reduce.busbw");
	assert_no_samples(r);
	assert_string_equal(reason(r), "busbw at the largest size is not a number (N/A or nan)");
	assert_wrong(r, 0);
	cJSON_Delete(a);

	a = parse("{\"name\":\"something else\"}");
	assert_string_equal(reason(rec_at(a, 0)), "JSON that is not an nccl-tests -J report (no results or config)");
	cJSON_Delete(a);
}

/* ---- the published fixtures -------------------------------------------- */

struct fx_rec {
	const char *metric;
	int nsamples;
	double samples[2];
	int wrong; /* -1: null */
	const char *tool_version, *nccl_version, *reason_has;
	int nrows;
};

struct fx {
	const char *file;
	int nrec;
	struct fx_rec recs[5];
};

/* Read off each file by hand: the out-of-place busbw of its largest row, the
 * #wrong column and the validation field, the version lines. */
static const struct fx fixtures[] = {
    {"old_pre2.13_allgather_a100x8_validation0.txt", 1, {{"nccl.unknown.busbw", 1, {223.39}, -1, NULL, NULL, NULL, 34}}},
    {"old_pre2.13_allreduce_a100x8_validation0.txt", 1, {{"nccl.all_reduce.busbw", 1, {235.26}, -1, NULL, NULL, NULL, 34}}},
    {"old_pre2.13_alltoall_a100x8_validation0.txt", 1, {{"nccl.unknown.busbw", 1, {224.31}, -1, NULL, NULL, NULL, 34}}},
    {"v2.13era_allgather_c0_NA_2x_a3mega_h100x8_hash_stripped_dstack.txt",
     1,
     {{"nccl.unknown.busbw", 1, {188.54}, -1, NULL, NULL, NULL, 11}}},
    {"v2.13era_allreduce_a100_2node_8rank_mpi.txt", 1, {{"nccl.all_reduce.busbw", 1, {9.45}, 0, NULL, NULL, NULL, 29}}},
    {"v2.13era_alltoall_a100_2node_8rank_mpi_inplaceNA.txt",
     1,
     {{"nccl.unknown.busbw", 1, {2.59}, 0, NULL, NULL, NULL, 29}}},
    {"v2.13era_srun_label_allreduce_2x_p5_h100_excerpt.txt",
     1,
     {{"nccl.all_reduce.busbw", 1, {487.09}, 0, NULL, NULL, NULL, 32}}},
    {"v2.14-2.15_all_reduce_perf_help_usage.txt",
     1,
     {{"nccl.all_reduce.busbw", 0, {0}, -1, NULL, NULL, "usage text", 0}}},
    {"v2.14-2.15_allreduce_v100_single_rank_busbw0_algbw_overflow.txt",
     1,
     {{"nccl.unknown.busbw", 0, {0}, 0, NULL, NULL, "busbw is 0 at the largest size (134217728 bytes)", 25}}},
    {"v2.17.6_h100_2node_pairwise_alltoall_sendrecv.txt",
     2,
     {{"nccl.alltoall.busbw", 1, {13.51}, 0, "2.17.6", "2.28.7", NULL, 10},
      {"nccl.sendrecv.busbw", 1, {13.59}, 0, "2.17.6", "2.28.7", NULL, 10}}},
    {"v2.17.8_h100_2node_smoke_sendrecv_inplaceNA.txt",
     2,
     {{"nccl.all_reduce.busbw", 1, {46.32}, 0, "2.17.8", "2.29.2", NULL, 5},
      {"nccl.sendrecv.busbw", 1, {43.57}, 0, "2.17.8", "2.29.2", NULL, 5}}},
    {"v2.17.8_h100x8_single_node_5collectives.txt",
     5,
     {{"nccl.all_reduce.busbw", 1, {482.27}, 0, "2.17.8", "2.29.2", NULL, 10},
      {"nccl.all_gather.busbw", 1, {361.86}, 0, "2.17.8", "2.29.2", NULL, 10},
      {"nccl.reduce_scatter.busbw", 1, {364.76}, 0, "2.17.8", "2.29.2", NULL, 10},
      {"nccl.alltoall.busbw", 1, {348.03}, 0, "2.17.8", "2.29.2", NULL, 10},
      {"nccl.sendrecv.busbw", 1, {367.25}, 0, "2.17.8", "2.29.2", NULL, 10}}},
    {"v2.19.x_json_J_report_h100x8_ndv5_reformatted.json",
     1,
     {{"nccl.all_reduce.busbw", 1, {480.902491}, 0, NULL, "2.23.4", NULL, 1}}},
};


static void check_fixture(const struct fx *fx, const cJSON *a)
{
	if (cJSON_GetArraySize(a) != fx->nrec)
		fail_msg("%s: %d records, want %d", fx->file, cJSON_GetArraySize(a), fx->nrec);
	for (int i = 0; i < fx->nrec; i++) {
		const struct fx_rec *w = &fx->recs[i];
		const cJSON *r = cJSON_GetArrayItem(a, i);
		print_message("  %s record %d: %s\n", fx->file, i, w->metric);
		assert_metric(r, w->metric);
		assert_samples(r, w->samples, w->nsamples);
		if (w->wrong < 0)
			assert_wrong_null(r);
		else
			assert_wrong(r, w->wrong);
		if (w->tool_version)
			assert_string_equal(tool(r, "version")->valuestring, w->tool_version);
		else
			assert_null(tool(r, "version"));
		if (w->nccl_version)
			assert_det_str(r, "nccl_version", w->nccl_version);
		if (w->reason_has)
			assert_reason_has(r, w->reason_has);
		else
			assert_no_reason(r);
		assert_int_equal(cJSON_GetArraySize(det(r, "table")), w->nrows);
	}
}

static bool is_data_file(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && !(n > 11 && strcmp(name + n - 11, ".source.txt") == 0);
}

static void test_fixtures(void **state)
{
	(void)state;
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/nccl-tests", NODEGATE_FIXTURES);
	DIR *d = opendir(dir);
	if (!d) {
		print_message("the fixtures folder %s is absent: skipping the fixture corpus\n", dir);
		skip();
		return;
	}
	struct dirent *e;
	int seen = 0;
	while ((e = readdir(d))) {
		if (!is_data_file(e->d_name))
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		size_t len;
		char *text = slurp(path, &len);
		assert_non_null(text);
		ng_err err;
		cJSON *a = ng_parse_nccl_tests(text, len, unknown_status, &err);
		assert_non_null(a);
		assert_launcher_transparent(ng_parse_nccl_tests, text, len, unknown_status, e->d_name);
		assert_sane(a);
		const struct fx *fx = NULL;
		for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
			if (strcmp(fixtures[i].file, e->d_name) == 0)
				fx = &fixtures[i];
		if (fx) {
			check_fixture(fx, a);
			seen++;
		} else {
			print_message("  %s: no hand-read figures yet; only the invariants were checked\n", e->d_name);
		}
		cJSON_Delete(a);
		free(text);
	}
	closedir(d);
	/* Every file read by hand is still there under its name. */
	assert_int_equal(seen, (int)(sizeof fixtures / sizeof fixtures[0]));
}

/* A few figures beyond the samples, from three of the files. */
static void test_fixture_details(void **state)
{
	(void)state;
	char path[1024];
	size_t len;
	snprintf(path, sizeof path, "%s/nccl-tests", NODEGATE_FIXTURES);
	DIR *dir = opendir(path);
	if (!dir) {
		print_message("the fixtures folder %s is absent: skipping the fixture details\n", path);
		skip();
		return;
	}
	closedir(dir);
	snprintf(path, sizeof path, "%s/nccl-tests/%s", NODEGATE_FIXTURES,
	         "v2.14-2.15_allreduce_v100_single_rank_busbw0_algbw_overflow.txt");
	char *text = slurp(path, &len);
	assert_non_null(text);
	cJSON *a = ng_parse_nccl_tests(text, len, unknown_status, NULL);
	cJSON *r = rec_at(a, 0);
	assert_at_num(r, "detail.table.24.in_place.algbw", 972944.75); /* the overflowing column */
	assert_at_str(r, "detail.devices.0.bus_id", "0000:00:04");
	assert_at_str(r, "detail.devices.0.name", "Tesla V100-SXM2-16GB");
	cJSON_Delete(a);
	free(text);

	snprintf(path, sizeof path, "%s/nccl-tests/%s", NODEGATE_FIXTURES, "v2.17.8_h100x8_single_node_5collectives.txt");
	text = slurp(path, &len);
	assert_non_null(text);
	a = ng_parse_nccl_tests(text, len, unknown_status, NULL);
	r = rec_at(a, 3);
	assert_det_num(r, "reduced_max_bytes", 26549638485.0);
	assert_det_num(r, "nranks", 8);
	assert_at_str(r, "detail.devices.7.bus_id", "0000:df:00");
	assert_at_num(r, "detail.inplace_busbw_largest.0", 347.25);
	assert_at_null(r, "detail.table.9.in_place.wrong");
	assert_det_num(r, "avg_busbw", 313.838);
	cJSON_Delete(a);
	free(text);

	snprintf(path, sizeof path, "%s/nccl-tests/%s", NODEGATE_FIXTURES, "v2.13era_srun_label_allreduce_2x_p5_h100_excerpt.txt");
	text = slurp(path, &len);
	assert_non_null(text);
	a = ng_parse_nccl_tests(text, len, unknown_status, NULL);
	r = rec_at(a, 0);
	assert_det_str(r, "launcher_label", "0:");
	assert_det_str(r, "collective_source", "table shape (busbw/algbw ratio, redop, root)");
	assert_det_num(r, "largest_size", 17179869184.0);
	cJSON_Delete(a);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v217_all_reduce),
	    cmocka_unit_test(test_per_iteration_and_timestamps),
	    cmocka_unit_test(test_cputime_column),
	    cmocka_unit_test(test_old_error_column),
	    cmocka_unit_test(test_old_blank_redop),
	    cmocka_unit_test(test_column_overflow),
	    cmocka_unit_test(test_cycles_one_size),
	    cmocka_unit_test(test_cycles_sweeps),
	    cmocka_unit_test(test_two_invocations),
	    cmocka_unit_test(test_datatype_all),
	    cmocka_unit_test(test_wrong_g_format),
	    cmocka_unit_test(test_inplace_na_is_not_unchecked),
	    cmocka_unit_test(test_validation_off_is_null),
	    cmocka_unit_test(test_out_of_bounds_failed_overrides_zero),
	    cmocka_unit_test(test_single_rank_busbw_zero),
	    cmocka_unit_test(test_table_cut_short),
	    cmocka_unit_test(test_rounded_sizes_are_not_cut_short),
	    cmocka_unit_test(test_header_without_rows),
	    cmocka_unit_test(test_crash_before_table),
	    cmocka_unit_test(test_capped_sweep_with_summary),
	    cmocka_unit_test(test_no_out_of_place_half),
	    cmocka_unit_test(test_usage_invalid_option),
	    cmocka_unit_test(test_usage_help),
	    cmocka_unit_test(test_usage_per_rank),
	    cmocka_unit_test(test_invalid_size),
	    cmocka_unit_test(test_foreign_lines),
	    cmocka_unit_test(test_srun_labels),
	    cmocka_unit_test(test_mpirun_tag_output),
	    cmocka_unit_test(test_hash_stripped),
	    cmocka_unit_test(test_collective_from_shape),
	    cmocka_unit_test(test_collective_from_program_name),
	    cmocka_unit_test(test_version_lines),
	    cmocka_unit_test(test_run_status),
	    cmocka_unit_test(test_nothing_printed),
	    cmocka_unit_test(test_json_report),
	    cmocka_unit_test(test_json_broken),
	    cmocka_unit_test(test_fixtures),
	    cmocka_unit_test(test_fixture_details),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
