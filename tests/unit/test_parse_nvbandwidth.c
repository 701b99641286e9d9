/* The nvbandwidth parser: each trap with an input written to fool a naive
 * parser, then every published fixture with figures read off it by hand.
 *
 * Inputs here imitate nvbandwidth's layout (banner, "Running X.", a title,
 * setw(10) columns, "SUM X v"; JsonCpp's tabbed -j output) with numbers of
 * our own. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metric.h"
#include "launcher_property.h"
#include "parse/parse.h"

/* ---- helpers ---------------------------------------------------------------- */

/* What must hold for any record the parser returns. */
static void check_invariants(const cJSON *arr)
{
	assert_true(cJSON_IsArray(arr));
	assert_true(cJSON_GetArraySize(arr) > 0);
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
		const cJSON *metric = cJSON_GetObjectItemCaseSensitive(r, "metric");
		const cJSON *unit = cJSON_GetObjectItemCaseSensitive(r, "unit");
		const cJSON *samples = cJSON_GetObjectItemCaseSensitive(r, "samples");
		const cJSON *wrong = cJSON_GetObjectItemCaseSensitive(r, "wrong");
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(r, "reason");
		const cJSON *tool = cJSON_GetObjectItemCaseSensitive(r, "tool");
		assert_string_equal(schema->valuestring, "nodegate/record/1");
		assert_true(cJSON_IsString(metric));
		assert_memory_equal(metric->valuestring, "nvbandwidth.", 12);
		const struct ng_metric *m = ng_metric_lookup(metric->valuestring);
		assert_non_null(m);
		assert_string_equal(unit->valuestring, m->unit);
		assert_true(cJSON_IsArray(samples));
		const cJSON *s;
		cJSON_ArrayForEach(s, samples)
		{
			assert_true(cJSON_IsNumber(s));
			assert_true(isfinite(s->valuedouble) && s->valuedouble > 0);
		}
		assert_non_null(wrong);
		assert_true(cJSON_IsNull(wrong) || (cJSON_IsNumber(wrong) && wrong->valuedouble >= 0));
		/* 0 wrong claims a verified measurement: never on a record without one */
		if (cJSON_IsNumber(wrong) && wrong->valuedouble == 0)
			assert_true(cJSON_GetArraySize(samples) > 0);
		if (cJSON_GetArraySize(samples) == 0) {
			assert_true(cJSON_IsString(reason));
			assert_true(strlen(reason->valuestring) > 0);
		}
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(tool, "name")->valuestring, "nvbandwidth");
	}
}

static cJSON *parse_st(const char *text, ng_run_status st)
{
	ng_err err = {0};
	cJSON *a = ng_parse_nvbandwidth(text, strlen(text), st, &err);
	if (!a)
		fail_msg("parser failed: %s", err.msg);
	assert_launcher_transparent(ng_parse_nvbandwidth, text, strlen(text), st, "a test input");
	check_invariants(a);
	return a;
}

static cJSON *parse(const char *text) { return parse_st(text, NG_RUN_STATUS_UNKNOWN); }

/* A value at a dotted path: "detail.runs.0.matrices.1.min". */
static const cJSON *at(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
		if (cJSON_IsArray(o))
			o = cJSON_GetArrayItem(o, atoi(tok));
		else
			o = cJSON_GetObjectItemCaseSensitive(o, tok);
	}
	return o;
}

static double num(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);
	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);
	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", path);
	return v->valuestring;
}

static void assert_null_at(const cJSON *o, const char *path) { assert_true(cJSON_IsNull(at(o, path))); }

/* The record of metric in invocation inv (1-based), or of any when 0. */
static const cJSON *rec(const cJSON *arr, const char *metric, int inv)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		if (strcmp(str(r, "metric"), metric) != 0)
			continue;
		if (inv == 0 || (int)num(r, "detail.invocation.index") == inv)
			return r;
	}
	fail_msg("no record %s in invocation %d", metric, inv);
	return NULL;
}

static int count_metric(const cJSON *arr, const char *metric)
{
	int n = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, arr) n += strcmp(str(r, "metric"), metric) == 0;
	return n;
}

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-9 * fmax(1, fabs(want)))
		fail_msg("got %.17g, want %.17g", got, want);
}

/* samples equal exactly these n values */
static void assert_samples(const cJSON *r, int n, ...)
{
	const cJSON *s = at(r, "samples");
	if (cJSON_GetArraySize(s) != n)
		fail_msg("%s: %d samples, want %d", str(r, "metric"), cJSON_GetArraySize(s), n);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		assert_near(cJSON_GetArrayItem(s, i)->valuedouble, va_arg(ap, double));
	va_end(ap);
}

static void assert_no_samples(const cJSON *r, const char *reason_part)
{
	assert_int_equal(cJSON_GetArraySize(at(r, "samples")), 0);
	const char *reason = str(r, "reason");
	if (!strstr(reason, reason_part))
		fail_msg("reason \"%s\" lacks \"%s\"", reason, reason_part);
}

static void assert_wrong_null(const cJSON *r) { assert_true(cJSON_IsNull(at(r, "wrong"))); }

static void assert_wrong(const cJSON *r, double w) { assert_near(num(r, "wrong"), w); }

/* ---- inputs ----------------------------------------------------------------- */

#define BANNER10                                                                                   \
	"nvbandwidth Version: v0.10.0\n"                                                               \
	"Built from Git version: v0.10.0\n"                                                            \
	"\n"                                                                                           \
	"CUDA Runtime Version: 13.0 (13000)\n"                                                         \
	"CUDA Driver Version (API): 13.0 (13000)\n"                                                    \
	"Driver Version: 580.65.06\n"                                                                  \
	"\n"

#define BANNER6                                                                                    \
	"nvbandwidth Version: v0.6\n"                                                                  \
	"Built from Git version: v0.6\n"                                                               \
	"\n"                                                                                           \
	"CUDA Runtime Version: 12020\n"                                                                \
	"CUDA Driver Version: 12020\n"                                                                 \
	"Driver Version: 535.104.05\n"                                                                 \
	"\n"                                                                                           \
	"Device 0: NVIDIA A100-SXM4-80GB (00000000:07:00)\n"                                           \
	"Device 1: NVIDIA A100-SXM4-80GB (00000000:0b:00)\n"                                           \
	"\n"

#define FOOTER                                                                                     \
	"NOTE: The reported results may not reflect the full capabilities of the platform.\n"          \
	"Performance can vary with software drivers, hardware clocks, and system topology.\n"

/* 4 GPUs, N/A diagonal; cells add to 3601.00 */
#define D2D_READ4                                                                                  \
	"Running device_to_device_memcpy_read_ce.\n"                                                   \
	"memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"                                         \
	"           0         1         2         3\n"                                                 \
	" 0       N/A    300.00    300.50    301.00\n"                                                 \
	" 1    299.00       N/A    300.00    300.00\n"                                                 \
	" 2    300.00    300.00       N/A    302.00\n"                                                 \
	" 3    300.00    298.50    300.00       N/A\n"                                                 \
	"\n"                                                                                           \
	"SUM device_to_device_memcpy_read_ce 3601.00\n"                                                \
	"COEFFICIENT_OF_VARIATION device_to_device_memcpy_read_ce 0.01\n"                              \
	"\n"

#define H2D2(a, b, sum)                                                                            \
	"Running host_to_device_memcpy_ce.\n"                                                          \
	"memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"                                         \
	"           0         1\n"                                                                     \
	" 0    " a "    " b "\n"                                                                       \
	"\n"                                                                                           \
	"SUM host_to_device_memcpy_ce " sum "\n"                                                       \
	"\n"

/* ---- text: the plain case, N/A and orientation --------------------------------- */

static void text_basic_matrix(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 D2D_READ4 FOOTER);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1);
	assert_string_equal(str(r, "unit"), "GB/s");
	assert_string_equal(str(r, "domain"), "fabric");
	assert_samples(r, 1, 3601.0);
	/* nvbandwidth never says whether it verified: wrong is not 0 */
	assert_wrong_null(r);
	assert_non_null(strstr(str(r, "detail.verification"), "not shown"));
	assert_string_equal(str(r, "tool.version"), "v0.10.0");
	assert_string_equal(str(r, "tool.git_version"), "v0.10.0");
	assert_string_equal(str(r, "detail.invocation.cuda_runtime_version"), "13.0 (13000)");
	assert_string_equal(str(r, "detail.invocation.cuda_driver_version"), "13.0 (13000)");
	assert_string_equal(str(r, "detail.invocation.driver_version"), "580.65.06");
	assert_null_at(r, "detail.invocation.devices");
	const cJSON *m = at(r, "detail.runs.0.matrices.0");
	assert_string_equal(str(m, "title"), "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)");
	assert_string_equal(str(m, "row_axis"), "GPU");
	assert_string_equal(str(m, "column_axis"), "GPU");
	assert_string_equal(str(m, "arrow"), "->");
	assert_string_equal(str(m, "source_as_printed"), "row");
	assert_string_equal(str(m, "destination_as_printed"), "column");
	/* N/A is null, never 0 */
	assert_null_at(m, "values.0.0");
	assert_null_at(m, "values.3.3");
	assert_near(num(m, "values.0.1"), 300.0);
	assert_near(num(m, "values.3.1"), 298.5);
	assert_string_equal(str(m, "rows.2"), "2");
	assert_string_equal(str(m, "columns.3"), "3");
	/* statistics over the 12 measured cells only: a min of 0 would be N/A read as 0 */
	assert_near(num(m, "min"), 298.5);
	assert_near(num(m, "max"), 302.0);
	assert_near(num(m, "mean"), 3601.0 / 12);
	assert_near(num(m, "na_cells"), 4);
	assert_near(num(m, "cells"), 16);
	assert_near(num(r, "detail.runs.0.coefficient_of_variation"), 0.01);
	cJSON_Delete(a);
}

static void text_orientation_arrows(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10
	                 "Running device_to_host_memcpy_ce.\n"
	                 "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)\n"
	                 "           0\n"
	                 " 0     55.00\n"
	                 "\n"
	                 "SUM device_to_host_memcpy_ce 55.00\n"
	                 "\n"
	                 "Running host_device_latency_sm.\n"
	                 "memory latency SM CPU(row) <-> GPU(column) (ns)\n"
	                 "           0\n"
	                 " 0    700.25\n"
	                 "\n"
	                 "SUM host_device_latency_sm 700.25\n"
	                 "\n"
	                 "Running device_local_copy.\n"
	                 "memcpy local GPU(column) bandwidth (GB/s)\n"
	                 "           0\n"
	                 " 0   1500.00\n"
	                 "\n"
	                 "SUM device_local_copy 1500.00\n");
	const cJSON *d2h = rec(a, "nvbandwidth.device_to_host_memcpy_ce", 1);
	assert_string_equal(str(d2h, "detail.runs.0.matrices.0.source_as_printed"), "column");
	assert_string_equal(str(d2h, "detail.runs.0.matrices.0.destination_as_printed"), "row");
	assert_string_equal(str(d2h, "detail.runs.0.matrices.0.row_axis"), "CPU");
	/* latency is read in ns, recorded under its own ns metric, and kept out
	 * of samples: the gate reads every figure as higher-is-better */
	const cJSON *lat = rec(a, "nvbandwidth.host_device_latency_sm", 1);
	assert_string_equal(str(lat, "unit"), "ns");
	assert_no_samples(lat, "is a latency");
	assert_near(num(lat, "detail.runs.0.sum"), 700.25);
	assert_wrong_null(lat);
	assert_string_equal(str(lat, "detail.runs.0.matrices.0.arrow"), "<->");
	assert_string_equal(str(lat, "detail.runs.0.matrices.0.unit"), "ns");
	/* a title with a column axis and no row axis */
	const cJSON *loc = rec(a, "nvbandwidth.device_local_copy", 1);
	assert_null_at(loc, "detail.runs.0.matrices.0.row_axis");
	assert_string_equal(str(loc, "detail.runs.0.matrices.0.column_axis"), "GPU");
	assert_null_at(loc, "detail.runs.0.matrices.0.arrow");
	assert_samples(loc, 1, 1500.0);
	cJSON_Delete(a);
}

/* The matrix says which unit it is in: never assume GB/s. */
static void text_unit_is_read_from_the_title(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10
	                 "Running host_to_device_memcpy_ce.\n"
	                 "memcpy CE CPU(row) -> GPU(column) bandwidth (MB/s)\n"
	                 "           0\n"
	                 " 0  55000.00\n"
	                 "\n"
	                 "SUM host_to_device_memcpy_ce 55000.00\n"
	                 "\n"
	                 "Running device_to_device_latency_sm.\n"
	                 "Device to Device Latency SM GPU(row) <-> GPU(column) (GB/s)\n"
	                 "           0         1\n"
	                 " 0       N/A    800.00\n"
	                 " 1    800.00       N/A\n"
	                 "\n"
	                 "SUM device_to_device_latency_sm 1600.00\n");
	assert_no_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "the matrix is in MB/s");
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_latency_sm", 1), "is recorded in ns");
	cJSON_Delete(a);
}

/* ---- text: what measured nothing ----------------------------------------------- */

static void text_all_na_matrix(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10
	                 "Running device_to_device_memcpy_write_ce.\n"
	                 "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
	                 "           0         1\n"
	                 " 0       N/A       N/A\n"
	                 " 1       N/A       N/A\n"
	                 "\n"
	                 "SUM device_to_device_memcpy_write_ce 0.00\n"
	                 "COEFFICIENT_OF_VARIATION device_to_device_memcpy_write_ce 0.00\n");
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_write_ce", 1);
	assert_no_samples(r, "every cell");
	assert_wrong_null(r);
	assert_null_at(r, "detail.runs.0.matrices.0.min");
	assert_null_at(r, "detail.runs.0.matrices.0.mean");
	assert_near(num(r, "detail.runs.0.sum"), 0);
	cJSON_Delete(a);
}

/* v0.6 prints "Waived:" with no name: no record can claim it */
static void text_unnamed_waivers(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER6 H2D2("25.00", "25.50", "50.50") "Waived: \nWaived: \n" FOOTER);
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 50.5);
	const cJSON *w = rec(a, "nvbandwidth.run", 1);
	assert_no_samples(w, "2 testcase(s) waived");
	assert_near(num(w, "detail.unnamed_waived"), 2);
	assert_string_equal(str(w, "detail.invocation.devices.1"), "1: NVIDIA A100-SXM4-80GB (00000000:0b:00)");
	cJSON_Delete(a);
}

/* a waiver right after "Running X." can be given X's name */
static void text_named_waiver(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 "Running device_to_device_memcpy_read_tma.\nWaived: \n" FOOTER);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_read_tma", 1);
	assert_no_samples(r, "waived");
	assert_string_equal(str(r, "detail.runs.0.status"), "waived");
	cJSON_Delete(a);
}

static void text_cut_short_and_exit_status(void **state)
{
	(void)state;
	const char *in = BANNER10 H2D2("55.00", "55.10", "110.10")
	    "Running device_to_device_memcpy_read_ce.\n"
	    "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
	    "           0         1\n"
	    " 0       N/A    300.00\n";
	cJSON *a = parse(in);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 110.1);
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1), "no SUM line");
	assert_int_equal(count_metric(a, "nvbandwidth.run"), 0);
	cJSON_Delete(a);

	a = parse_st(in, (ng_run_status){-1, 9});
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1);
	assert_no_samples(r, "killed by signal 9");
	assert_near(num(r, "tool.signal"), 9);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 110.1);
	cJSON_Delete(a);
}

/* everything finished, yet the process failed: say so in a record */
static void text_failed_exit_after_complete_testcases(void **state)
{
	(void)state;
	cJSON *a = parse_st(BANNER10 H2D2("55.00", "55.10", "110.10"), (ng_run_status){1, 0});
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 110.1);
	assert_near(num(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "tool.exit_status"), 1);
	assert_no_samples(rec(a, "nvbandwidth.run", 1), "exited with status 1 after its last complete testcase");
	cJSON_Delete(a);
	a = parse_st(BANNER10 H2D2("55.00", "55.10", "110.10"), (ng_run_status){0, 0});
	assert_int_equal(cJSON_GetArraySize(a), 1);
	cJSON_Delete(a);
}

static void text_errors(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10
	                 "Running device_to_device_memcpy_read_sm.\n"
	                 "Error: peer access could not be enabled\n"
	                 "Running host_to_device_memcpy_sm.\n"
	                 "[CUDA_ERROR_OUT_OF_MEMORY] out of memory in expression cuMemAlloc(&ptr, size) in "
	                 "DeviceBuffer::DeviceBuffer(size_t, int)() : memcpy.cpp:240\n"
	                 "\n"
	                 "ERROR: Testcase host_to_device_memcpy_xx not found!\n"
	                 "ERROR: Testcase index 99 out of bound!\n");
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_memcpy_read_sm", 1), "peer access could not be");
	const cJSON *oom = rec(a, "nvbandwidth.host_to_device_memcpy_sm", 1);
	assert_no_samples(oom, "CUDA_ERROR_OUT_OF_MEMORY");
	/* an error is not a verification failure */
	assert_wrong_null(oom);
	assert_no_samples(rec(a, "nvbandwidth.host_to_device_memcpy_xx", 1), "no testcase host_to_device_memcpy_xx");
	assert_no_samples(rec(a, "nvbandwidth.run", 1), "out of bound");
	cJSON_Delete(a);
}

static void text_invalid_arguments_and_usage(void **state)
{
	(void)state;
	cJSON *a = parse("nvbandwidth Version: v0.8\n"
	                 "Built from Git version: v0.8\n"
	                 "\n"
	                 "ERROR: Invalid Arguments \n"
	                 "./nvbandwidth --bogus :\n"
	                 "\n"
	                 "nvbandwidth CLI:\n"
	                 "  -h [ --help ]                 Produce help message\n"
	                 "  -s [ --skipVerification ]     Skips data verification after copy\n");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.run", 1);
	assert_no_samples(r, "usage text");
	assert_non_null(strstr(str(r, "reason"), "Invalid Arguments"));
	assert_string_equal(str(r, "tool.version"), "v0.8");
	cJSON_Delete(a);
}

static void text_list_output(void **state)
{
	(void)state;
	cJSON *a = parse("nvbandwidth Version: v0.7\n"
	                 "Built from Git version: v0.7\n"
	                 "\n"
	                 "Index, Name:\n"
	                 "\tDescription\n"
	                 "=======================\n"
	                 "0, host_to_device_memcpy_ce:\n"
	                 "\tHost to device CE memcpy using cuMemcpyAsync\n"
	                 "\n"
	                 "1, device_to_host_memcpy_ce:\n"
	                 "\tDevice to host CE memcpy using cuMemcpyAsync\n"
	                 "\n"
	                 "2, host_device_latency_sm:\n"
	                 "\tHost device pointer-chase latency\n");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.run", 1);
	assert_no_samples(r, "--list output: it names 3 testcases");
	assert_string_equal(str(r, "detail.testcases.2"), "host_device_latency_sm");
	cJSON_Delete(a);
}

static void text_nothing_at_all(void **state)
{
	(void)state;
	const char *inputs[] = {"", "\n\n", "bash: ./nvbandwidth: No such file or directory\n",
	                        "SUM\nSUM x\nRunning .\n"};
	for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		cJSON *a = parse(inputs[i]);
		assert_int_equal(cJSON_GetArraySize(a), 1);
		assert_no_samples(rec(a, "nvbandwidth.run", 1), "holds no testcase");
		cJSON_Delete(a);
	}
}

/* ---- text: SUM lines that must not be believed ------------------------------------ */

static void text_sum_disagrees_with_matrix(void **state)
{
	(void)state;
	/* cells add to 50.50; a SUM from elsewhere (an edited log) must not pass */
	cJSON *a = parse(BANNER10 H2D2("25.00", "25.50", "505.00"));
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_no_samples(r, "disagrees with its matrix");
	assert_near(num(r, "detail.runs.0.sum"), 505.0);
	cJSON_Delete(a);
	/* rounding: 2-decimal cells of full-precision values are within tolerance */
	a = parse(BANNER10 H2D2("25.00", "25.50", "50.51"));
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 50.51);
	cJSON_Delete(a);
}

static void text_non_numbers(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 H2D2("inf", "25.50", "inf"));
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_no_samples(r, "neither a number nor N/A");
	assert_null_at(r, "detail.runs.0.matrices.0.values.0.0");
	cJSON_Delete(a);
	a = parse(BANNER10 H2D2("25.00", "25.50", "-nan"));
	assert_no_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "not a number");
	cJSON_Delete(a);
}

/* a "Running" testcase whose matrix could not be read gives no sample */
static void text_sum_without_matrix(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 "Running host_to_device_memcpy_ce.\n"
	                          "some line this parser does not know\n"
	                          "SUM host_to_device_memcpy_ce 110.00\n");
	assert_no_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "without a matrix");
	cJSON_Delete(a);
}

/* `nvbandwidth | grep SUM` keeps only SUM lines: each is a run of its own */
static void text_sum_lines_only(void **state)
{
	(void)state;
	cJSON *a = parse("SUM host_to_device_memcpy_ce 110.00\n"
	                 "SUM host_to_device_memcpy_ce 111.00\n"
	                 "SUM device_to_device_bidirectional_memcpy_write_ce_write1 500.00\n"
	                 "SUM device_to_device_bidirectional_memcpy_write_ce_write2 498.00\n"
	                 "SUM device_to_device_bidirectional_memcpy_write_ce_total 998.00\n");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	const cJSON *h = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(h, 2, 110.0, 111.0);
	assert_non_null(strstr(str(h, "detail.runs.0.note"), "no \"Running\" line"));
	assert_null(at(h, "tool.version"));
	assert_samples(rec(a, "nvbandwidth.device_to_device_bidirectional_memcpy_write_ce", 1), 1, 998.0);
	cJSON_Delete(a);
}

/* Cells are setw(10): a 10-character value touches its neighbour. */
static void text_touching_cells(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 "Running device_to_device_memcpy_write_ce.\n"
	                          "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
	                          "           0         1\n"
	                          " 0       N/A1234567.89\n"
	                          " 1   1000.00       N/A\n"
	                          "\n"
	                          "SUM device_to_device_memcpy_write_ce 1235567.89\n");
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_write_ce", 1);
	assert_samples(r, 1, 1235567.89);
	assert_near(num(r, "detail.runs.0.matrices.0.values.0.1"), 1234567.89);
	assert_null_at(r, "detail.runs.0.matrices.0.values.0.0");
	cJSON_Delete(a);
}

/* ---- text: bidirectional tests print three matrices -------------------------------- */

#define BIDIR2(total_sum)                                                                          \
	"Running device_to_device_bidirectional_memcpy_read_ce.\n"                                     \
	"memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)\n"                                  \
	"           0         1\n"                                                                     \
	" 0       N/A    380.00\n"                                                                     \
	" 1    381.00       N/A\n"                                                                     \
	"\n"                                                                                           \
	"SUM device_to_device_bidirectional_memcpy_read_ce_read1 761.00\n"                             \
	"\n"                                                                                           \
	"memcpy CE GPU(row) <-> GPU(column) Read2 bandwidth (GB/s)\n"                                  \
	"           0         1\n"                                                                     \
	" 0       N/A    379.00\n"                                                                     \
	" 1    378.00       N/A\n"                                                                     \
	"\n"                                                                                           \
	"SUM device_to_device_bidirectional_memcpy_read_ce_read2 757.00\n"                             \
	"\n"                                                                                           \
	"memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)\n"                                  \
	"           0         1\n"                                                                     \
	" 0       N/A    759.00\n"                                                                     \
	" 1    759.00       N/A\n"                                                                     \
	"\n"                                                                                           \
	"SUM device_to_device_bidirectional_memcpy_read_ce_total " total_sum "\n"                      \
	"COEFFICIENT_OF_VARIATION device_to_device_bidirectional_memcpy_read_ce_total 0.00\n"          \
	"\n"

static void text_bidirectional_three_matrices(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 BIDIR2("1518.00") FOOTER);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_bidirectional_memcpy_read_ce", 1);
	/* the sample is the total, not read1 (the first SUM a naive parser meets) */
	assert_samples(r, 1, 1518.0);
	assert_near(num(r, "detail.runs.0.sums.device_to_device_bidirectional_memcpy_read_ce_read1"), 761.0);
	assert_near(num(r, "detail.runs.0.sums.device_to_device_bidirectional_memcpy_read_ce_read2"), 757.0);
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.runs.0.matrices")), 3);
	assert_near(num(r, "detail.runs.0.matrices.1.max"), 379.0);
	assert_near(num(r, "detail.runs.0.matrices.2.min"), 759.0);
	assert_string_equal(str(r, "detail.runs.0.matrices.2.sum_key"),
	                    "device_to_device_bidirectional_memcpy_read_ce_total");
	cJSON_Delete(a);
}

static void text_bidirectional_without_total(void **state)
{
	(void)state;
	/* cut after Read2: two SUM lines, no testcase figure */
	const char *full = BANNER10 BIDIR2("1518.00");
	const char *cut = strstr(full, "memcpy CE GPU(row) <-> GPU(column) Total");
	char *in = strndup(full, (size_t)(cut - full));
	cJSON *a = parse(in);
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_bidirectional_memcpy_read_ce", 1), "no SUM line");
	cJSON_Delete(a);
	free(in);
}

/* ---- text: invocations and repetitions ---------------------------------------------- */

/* Runs pasted together (with the author's "#####" lines) are separate records. */
static void text_separate_invocations(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 H2D2("55.00", "55.10", "110.10") FOOTER "\n\n#############\n\n" BANNER10
	                     H2D2("54.00", "54.10", "108.10") FOOTER "\n#############\n" BANNER6 D2D_READ4);
	assert_int_equal(cJSON_GetArraySize(a), 3);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 110.1);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 2), 1, 108.1);
	const cJSON *r3 = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 3);
	assert_samples(r3, 1, 3601.0);
	assert_string_equal(str(r3, "tool.version"), "v0.6");
	assert_string_equal(str(r3, "detail.invocation.cuda_runtime_version"), "12020");
	assert_string_equal(str(r3, "detail.invocation.devices.0"), "0: NVIDIA A100-SXM4-80GB (00000000:07:00)");
	cJSON_Delete(a);
}

/* `-t X X` runs X twice in one invocation: two samples of one record */
static void text_repeated_within_invocation(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 H2D2("55.00", "55.10", "110.10") H2D2("55.20", "55.30", "110.50") FOOTER);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(r, 2, 110.1, 110.5);
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.runs")), 2);
	cJSON_Delete(a);

	/* one repetition failing spoils the record: its sums stay in detail */
	a = parse(BANNER10 H2D2("55.00", "55.10", "110.10") "Running host_to_device_memcpy_ce.\nError: busy\n");
	r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_no_samples(r, "1 of 2 runs");
	assert_near(num(r, "detail.runs.0.sum"), 110.1);
	cJSON_Delete(a);
}

/* ---- text: verification --------------------------------------------------------------- */

/* v0.8 and later: the GPU check prints once, the ASSERT ends the run */
static void text_verification_failure_v08(void **state)
{
	(void)state;
	cJSON *a = parse_st(BANNER10 H2D2("55.00", "55.10", "110.10")
	                 "Running device_to_device_memcpy_read_ce.\n"
	                 " Invalid value when checking the pattern at 0x7f3a00000000\n"
	                 " Current offset : 4096 \n"
	                 "ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper(CUstream, "
	                 "CUdeviceptr, long long unsigned int, unsigned int, CompareKernelFunc, "
	                 "std::shared_ptr<NodeHelper>)() : memcpy.cpp:165\n",
	                 (ng_run_status){1, 0});
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1);
	assert_no_samples(r, "data verification failed");
	/* one message and its ASSERT are one failure, not two */
	assert_wrong(r, 1);
	assert_non_null(strstr(str(r, "detail.verification"), "failed"));
	/* the testcase that passed before it is untouched */
	const cJSON *h = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(h, 1, 110.1);
	assert_wrong_null(h);
	cJSON_Delete(a);

	/* stdout only: the kernel's line without the ASSERT still counts */
	a = parse(BANNER10 "Running device_to_device_memcpy_read_ce.\n"
	                   " Invalid value when checking the pattern at 0x7f3a00000000\n"
	                   " Current offset : 4096 \n");
	assert_wrong(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1), 1);
	cJSON_Delete(a);
}

/* up to v0.3: one line per wrong word, and the run goes on to print a SUM */
static void text_verification_failure_old(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER6 "Running host_to_device_memcpy_ce.\n"
	                         " Invalid value when checking the pattern at <0x7f0000001000>\n"
	                         " Current offset [ 4096/536870912]\n"
	                         " Invalid value when checking the pattern at <0x7f0000001004>\n"
	                         " Current offset [ 4100/536870912]\n"
	                         " Invalid value when checking the pattern at <0x7f0000001008>\n"
	                         " Current offset [ 4104/536870912]\n"
	                         "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
	                         "           0         1\n"
	                         " 0     25.00     25.50\n"
	                         "\n"
	                         "SUM host_to_device_memcpy_ce 50.50\n");
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_wrong(r, 3);
	assert_no_samples(r, "data verification failed");
	assert_near(num(r, "detail.runs.0.sum"), 50.5);
	cJSON_Delete(a);
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* JsonCpp StyledWriter: tabs, '"key" : ', trailing space in the description */
#define JSON_TABS                                                                                  \
	"{\n\t\"nvbandwidth\" : \n\t{\n"                                                               \
	"\t\t\"CUDA Runtime Version\" : 12080,\n"                                                      \
	"\t\t\"Driver Version\" : \"570.86.15\",\n"                                                    \
	"\t\t\"git_version\" : \"v0.7\",\n"                                                            \
	"\t\t\"testcases\" : \n\t\t[\n"                                                                \
	"\t\t\t{\n"                                                                                    \
	"\t\t\t\t\"bandwidth_description\" : \"memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s) \",\n" \
	"\t\t\t\t\"bandwidth_matrix\" : \n\t\t\t\t[\n\t\t\t\t\t[\n"                                    \
	"\t\t\t\t\t\t\"55.1234\",\n\t\t\t\t\t\t\"55.4321\"\n"                                          \
	"\t\t\t\t\t]\n\t\t\t\t],\n"                                                                    \
	"\t\t\t\t\"name\" : \"host_to_device_memcpy_ce\",\n"                                           \
	"\t\t\t\t\"status\" : \"Passed\",\n"                                                           \
	"\t\t\t\t\"sum\" : 110.55549999999999\n"                                                       \
	"\t\t\t},\n"                                                                                   \
	"\t\t\t{\n"                                                                                    \
	"\t\t\t\t\"name\" : \"device_to_device_memcpy_read_ce\",\n"                                    \
	"\t\t\t\t\"status\" : \"Waived\"\n"                                                            \
	"\t\t\t}\n"                                                                                    \
	"\t\t],\n"                                                                                     \
	"\t\t\"version\" : \"v0.7\"\n"                                                                 \
	"\t}\n}\n"

static void json_tabs_and_waived(void **state)
{
	(void)state;
	cJSON *a = parse(JSON_TABS);
	assert_int_equal(cJSON_GetArraySize(a), 2);
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(r, 1, 110.55549999999999);
	assert_wrong_null(r);
	assert_string_equal(str(r, "tool.version"), "v0.7");
	assert_string_equal(str(r, "detail.invocation.format"), "json");
	assert_string_equal(str(r, "detail.invocation.cuda_runtime_version"), "12080");
	assert_string_equal(str(r, "detail.invocation.driver_version"), "570.86.15");
	/* the description's trailing space is not part of the unit */
	assert_string_equal(str(r, "detail.runs.0.matrices.0.unit"), "GB/s");
	assert_near(num(r, "detail.runs.0.matrices.0.values.0.1"), 55.4321);
	const cJSON *w = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1);
	assert_no_samples(w, "waived");
	assert_wrong_null(w);
	cJSON_Delete(a);
}

/* stdout mixes WARNING lines, braces and all, around the document */
static void json_noise_around(void **state)
{
	(void)state;
	cJSON *a = parse("WARNING: something happened {\n"
	                 "{ not json at all\n"
	                 "{\"nvbandwidth\": \"a decoy that is not an object\"}\n" JSON_TABS
	                 "WARNING: trailing noise }}}\n"
	                 "}\n");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(r, 1, 110.55549999999999);
	assert_string_equal(str(r, "detail.invocation.warnings.0"), "WARNING: something happened {");
	cJSON_Delete(a);
}

static void json_all_na_and_bad_sums(void **state)
{
	(void)state;
	cJSON *a = parse("{\"nvbandwidth\":{\"version\":\"v0.9\",\"testcases\":["
	                 "{\"name\":\"device_to_device_memcpy_read_ce\",\"status\":\"Passed\",\"sum\":0,"
	                 "\"bandwidth_description\":\"memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\","
	                 "\"bandwidth_matrix\":[[\"N/A\",\"N/A\"],[\"N/A\",\"N/A\"]]},"
	                 "{\"name\":\"device_to_device_memcpy_write_ce\",\"status\":\"Passed\",\"sum\":9000,"
	                 "\"bandwidth_description\":\"memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\","
	                 "\"bandwidth_matrix\":[[\"N/A\",\"400\"],[\"401\",\"N/A\"]]},"
	                 "{\"name\":\"host_to_device_memcpy_ce\",\"status\":\"Passed\",\"sum\":\"55.5\","
	                 "\"bandwidth_matrix\":[[\"55.5\"]]},"
	                 "{\"name\":\"device_to_host_memcpy_ce\",\"status\":\"Passed\",\"sum\":55.5,"
	                 "\"bandwidth_matrix\":[[\"55.5\",\"1\"],[\"2\"]]},"
	                 "{\"name\":\"host_to_all_memcpy_ce\",\"status\":\"ERROR\"},"
	                 "{\"name\":\"all_to_host_memcpy_ce\",\"status\":\"Error\",\"error\":\"peer lost\"},"
	                 "{\"name\":\"host_to_all_memcpy_sm\",\"status\":\"Weird\",\"sum\":5}"
	                 "]}}");
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1), "every cell");
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_memcpy_write_ce", 1), "disagrees with its matrix");
	assert_no_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "no numeric sum");
	assert_no_samples(rec(a, "nvbandwidth.device_to_host_memcpy_ce", 1), "equal rows");
	assert_no_samples(rec(a, "nvbandwidth.host_to_all_memcpy_ce", 1), "status ERROR");
	assert_no_samples(rec(a, "nvbandwidth.all_to_host_memcpy_ce", 1), "peer lost");
	assert_no_samples(rec(a, "nvbandwidth.host_to_all_memcpy_sm", 1), "status Weird");
	cJSON_Delete(a);
}

/* JSON appends a bidirectional test's three matrices into one 3N x N table */
static void json_bidirectional_rows_appended(void **state)
{
	(void)state;
	cJSON *a = parse("{\"nvbandwidth\":{\"version\":\"v0.10.0\",\"testcases\":[{"
	                 "\"name\":\"device_to_device_bidirectional_memcpy_write_ce\",\"status\":\"Passed\","
	                 "\"bandwidth_description\":\"memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)\","
	                 "\"bandwidth_matrix\":[[\"N/A\",\"100.5\"],[\"100.25\",\"N/A\"],"
	                 "[\"N/A\",\"99.5\"],[\"99.75\",\"N/A\"],"
	                 "[\"N/A\",\"200\"],[\"200\",\"N/A\"]],"
	                 "\"sum\":400.0}]}}");
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_bidirectional_memcpy_write_ce", 1);
	assert_samples(r, 1, 400.0);
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.runs.0.matrices")), 3);
	assert_string_equal(str(r, "detail.runs.0.matrices.0.part"), "write1");
	assert_near(num(r, "detail.runs.0.matrices.1.min"), 99.5);
	assert_near(num(r, "detail.runs.0.matrices.2.mean"), 200.0);
	assert_string_equal(str(r, "detail.runs.0.matrices.2.arrow"), "<->");
	cJSON_Delete(a);
}

/* v0.8+ -j: the kernel's line reaches stdout before the document, the
 * ASSERT lands in "error" and the testcase is left "Running" */
static void json_verification_failure(void **state)
{
	(void)state;
	cJSON *a = parse(" Invalid value when checking the pattern at 0x7f3a00000000\n"
	                 " Current offset : 4096 \n"
	                 "{\"nvbandwidth\":{\"version\":\"v0.8\",\"git_version\":\"v0.8\","
	                 "\"CUDA Runtime Version\":12040,\"Driver Version\":\"550.54.15\","
	                 "\"error\":\"ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper() : "
	                 "memcpy.cpp:165\\n\",\"testcases\":["
	                 "{\"name\":\"host_to_device_memcpy_ce\",\"status\":\"Passed\",\"sum\":50.5,"
	                 "\"bandwidth_description\":\"memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\","
	                 "\"bandwidth_matrix\":[[\"25\",\"25.5\"]]},"
	                 "{\"name\":\"device_to_host_memcpy_ce\",\"status\":\"Running\"}]}}\n");
	const cJSON *r = rec(a, "nvbandwidth.device_to_host_memcpy_ce", 1);
	assert_no_samples(r, "data verification failed");
	assert_wrong(r, 1);
	const cJSON *h = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(h, 1, 50.5);
	assert_wrong_null(h);
	cJSON_Delete(a);

	/* v0.4-v0.7 put the first wrong word's message in the document's "error" */
	a = parse("{\"nvbandwidth\":{\"version\":\"v0.6\",\"testcases\":["
	          "{\"name\":\"device_to_host_memcpy_sm\",\"status\":\"Running\"}],"
	          "\"error\":\" Invalid value when checking the pattern at <0x7f0000000010>: "
	          " Current offset [ 16/536870912]\"}}");
	assert_wrong(rec(a, "nvbandwidth.device_to_host_memcpy_sm", 1), 1);
	cJSON_Delete(a);
}

static void json_error_while_running(void **state)
{
	(void)state;
	cJSON *a = parse_st("{\"nvbandwidth\":{\"version\":\"v0.8\",\"error\":\"[CUDA_ERROR_ILLEGAL_ADDRESS] an "
	                    "illegal memory access was encountered in expression cuStreamSynchronize(stream)\","
	                    "\"testcases\":[{\"name\":\"all_to_one_read_sm\",\"status\":\"Running\"}]}}",
	                    (ng_run_status){1, 0});
	const cJSON *r = rec(a, "nvbandwidth.all_to_one_read_sm", 1);
	assert_no_samples(r, "CUDA_ERROR_ILLEGAL_ADDRESS");
	assert_non_null(strstr(str(r, "reason"), "exited with status 1"));
	assert_wrong_null(r);
	cJSON_Delete(a);
}

static void json_cut_short(void **state)
{
	(void)state;
	const char *full = JSON_TABS;
	char *in = strndup(full, strlen(full) / 2);
	cJSON *a = parse(in);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_no_samples(rec(a, "nvbandwidth.run", 1), "could not be parsed");
	cJSON_Delete(a);
	free(in);
}

static void json_several_documents(void **state)
{
	(void)state;
	cJSON *a = parse(JSON_TABS "\n" BANNER10 D2D_READ4 JSON_TABS);
	assert_int_equal(count_metric(a, "nvbandwidth.host_to_device_memcpy_ce"), 2);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 110.55549999999999);
	assert_samples(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 2), 1, 3601.0);
	assert_string_equal(str(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 3), "detail.invocation.format"),
	                    "json");
	cJSON_Delete(a);
}

/* ---- the command line, the only place -s can show ------------------------- */

static void echo_verification_on(void **state)
{
	(void)state;
	cJSON *a = parse("$ ./nvbandwidth -t host_to_device_memcpy_ce\n" BANNER10 H2D2("55.00", "55.10", "110.10"));
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(r, 1, 110.1);
	assert_wrong(r, 0);
	assert_non_null(strstr(str(r, "detail.verification"), "on:"));
	assert_string_equal(str(r, "detail.invocation.command_line"), "$ ./nvbandwidth -t host_to_device_memcpy_ce");
	cJSON_Delete(a);

	/* a prompt, an environment assignment, a pipe: "-t s" is a testcase named s */
	a = parse("dell@node:~/nvbandwidth/build$ CUDA_VISIBLE_DEVICES=0,1 ./nvbandwidth -ts 2>&1 | tee -s x.log\n" BANNER10
	              D2D_READ4);
	assert_wrong(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1), 0);
	cJSON_Delete(a);
}

static void echo_verification_skipped(void **state)
{
	(void)state;
	static const char *const echoes[] = {
	    "$ ./nvbandwidth -s -t 0\n",
	    "root@h:/# nvbandwidth -vs\n",
	    "+ /opt/nvbandwidth/nvbandwidth --skipVer -t 0\n",
	    "$ sudo ./nvbandwidth --skipVerification\n",
	};
	for (size_t i = 0; i < sizeof echoes / sizeof echoes[0]; i++) {
		char in[2048];
		snprintf(in, sizeof in, "%s%s%s", echoes[i], BANNER10, H2D2("55.00", "55.10", "110.10"));
		cJSON *a = parse(in);
		const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
		assert_samples(r, 1, 110.1);
		assert_wrong_null(r);
		assert_non_null(strstr(str(r, "detail.verification"), "skipped"));
		cJSON_Delete(a);
	}
}

static void echo_not_trusted(void **state)
{
	(void)state;
	/* prose that starts with the word is not a command line */
	cJSON *a = parse("nvbandwidth results for node 7\n" BANNER10 H2D2("55.00", "55.10", "110.10"));
	assert_wrong_null(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1));
	cJSON_Delete(a);
	/* a version older than v0.5 (or none): its sources are not known to verify */
	a = parse("$ ./nvbandwidth\nnvbandwidth Version: v0.4\n\n" H2D2("55.00", "55.10", "110.10"));
	assert_wrong_null(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1));
	cJSON_Delete(a);
	a = parse("$ ./nvbandwidth\n" H2D2("55.00", "55.10", "110.10"));
	assert_wrong_null(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1));
	cJSON_Delete(a);
	/* nothing measured: no "0 wrong" to claim */
	a = parse("$ ./nvbandwidth\n" BANNER10 "Running device_to_device_memcpy_read_tma.\nWaived: \n");
	assert_wrong_null(rec(a, "nvbandwidth.device_to_device_memcpy_read_tma", 1));
	cJSON_Delete(a);
	/* a failure outranks the command line */
	a = parse("$ ./nvbandwidth\n" BANNER10 "Running device_to_device_memcpy_read_ce.\n"
	          " Invalid value when checking the pattern at 0x7f3a00000000\n");
	assert_wrong(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1), 1);
	cJSON_Delete(a);
}

/* each echo speaks for the invocation after it, text or JSON */
static void echo_per_invocation(void **state)
{
	(void)state;
	cJSON *a = parse(BANNER10 H2D2("55.00", "55.10", "110.10") "\n$ ./nvbandwidth -t 0\n" BANNER10
	                     H2D2("54.00", "54.10", "108.10") "$ ./nvbandwidth -j -s\n"
	                     "{\"nvbandwidth\":{\"version\":\"v0.8\",\"testcases\":[{\"name\":\"host_to_device_memcpy_ce\","
	                     "\"status\":\"Passed\",\"sum\":50.5,\"bandwidth_description\":\"memcpy CE CPU(row) -> "
	                     "GPU(column) bandwidth (GB/s)\",\"bandwidth_matrix\":[[\"25\",\"25.5\"]]}]}}\n"
	                     "$ ./nvbandwidth -j\n"
	                     "{\"nvbandwidth\":{\"version\":\"v0.8\",\"testcases\":[{\"name\":\"host_to_device_memcpy_ce\","
	                     "\"status\":\"Passed\",\"sum\":50.5,\"bandwidth_description\":\"memcpy CE CPU(row) -> "
	                     "GPU(column) bandwidth (GB/s)\",\"bandwidth_matrix\":[[\"25\",\"25.5\"]]}]}}\n");
	assert_wrong_null(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1));
	assert_wrong(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 2), 0);
	assert_wrong_null(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 3));
	assert_string_equal(str(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 3), "detail.invocation.command_line"),
	                    "$ ./nvbandwidth -j -s");
	assert_wrong(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 4), 0);
	cJSON_Delete(a);

	/* an echo before a text banner is the banner's, even with JSON after it */
	a = parse("$ ./nvbandwidth -s\n" BANNER10 H2D2("55.00", "55.10", "110.10") "$ ./nvbandwidth -j\n" JSON_TABS);
	assert_wrong_null(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1));
	assert_string_equal(str(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "detail.invocation.command_line"),
	                    "$ ./nvbandwidth -s");
	assert_wrong(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 2), 0);
	cJSON_Delete(a);
}

/* ---- odd bytes ---------------------------------------------------------------------------- */

static void crlf_and_nul_bytes(void **state)
{
	(void)state;
	const char crlf[] = "nvbandwidth Version: v0.10.0\r\n\r\n"
	                    "Running host_to_device_memcpy_ce.\r\n"
	                    "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\r\n"
	                    "           0\r\n"
	                    " 0     55.00\r\n"
	                    "\r\n"
	                    "SUM host_to_device_memcpy_ce 55.00\r\n";
	cJSON *a = parse(crlf);
	assert_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), 1, 55.0);
	cJSON_Delete(a);

	const char nul[] = "nvbandwidth Version: v0.1\0\x01\xff\n"
	                   "Running host_to_device_memcpy_ce.\n"
	                   "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
	                   "           0\n"
	                   " 0     5\0.00\n"
	                   "\n"
	                   "SUM host_to_device_memcpy_ce 5.00\n";
	ng_err err;
	a = ng_parse_nvbandwidth(nul, sizeof nul - 1, NG_RUN_STATUS_UNKNOWN, &err);
	assert_non_null(a);
	check_invariants(a);
	/* a NUL inside a cell does not leave "5" behind */
	assert_no_samples(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "neither a number nor N/A");
	/* the version's stray bytes are made printable */
	assert_string_equal(str(rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1), "tool.version"), "v0.1???");
	cJSON_Delete(a);
}

/* ---- the published fixtures ------------------------------------------------------------------ */

#ifndef NODEGATE_FIXTURES
#define NODEGATE_FIXTURES "fixtures-not-configured"
#endif
#define FIXDIR NODEGATE_FIXTURES "/nvbandwidth"

static cJSON *parse_file(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", FIXDIR, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	ng_err err;
	cJSON *a = ng_parse_nvbandwidth(buf, (size_t)n, NG_RUN_STATUS_UNKNOWN, &err);
	assert_launcher_transparent(ng_parse_nvbandwidth, buf, (size_t)n, NG_RUN_STATUS_UNKNOWN, name);
	free(buf);
	if (!a)
		fail_msg("%s: %s", name, err.msg);
	check_invariants(a);
	return a;
}

static int with_samples(const cJSON *a)
{
	int n = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, a) n += cJSON_GetArraySize(at(r, "samples")) > 0;
	return n;
}

/* Every record of a file leaves wrong null: none of them shows verification. */
static void all_wrong_null(const cJSON *a)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, a) assert_wrong_null(r);
}

static void fx_v010_json_d2d(const cJSON *a)
{
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1);
	assert_samples(r, 1, 22122.870670938501);
	assert_string_equal(str(r, "tool.version"), "v0.10.0");
	assert_string_equal(str(r, "tool.git_version"), "v0.10");
	assert_string_equal(str(r, "detail.invocation.cuda_runtime_version"), "12060");
	assert_string_equal(str(r, "detail.invocation.cuda_driver_version"), "13000");
	assert_string_equal(str(r, "detail.invocation.driver_version"), "580.159.04");
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.invocation.devices")), 8);
	assert_string_equal(str(r, "detail.invocation.devices.7"),
	                    "7: NVIDIA H100 80GB HBM3 (0000000c:00:00): (nvbw-peer)");
	const cJSON *m = at(r, "detail.runs.0.matrices.0");
	assert_near(num(m, "na_cells"), 8);
	assert_near(num(m, "cells"), 64);
	assert_near(num(m, "min"), 394.967);
	assert_near(num(m, "max"), 395.094);
	assert_null_at(m, "values.5.5");
	assert_near(num(m, "values.1.5"), 395.03);
	assert_string_equal(str(m, "source_as_printed"), "row");
	all_wrong_null(a);
}

static void fx_v010_list(const cJSON *a)
{
	assert_int_equal(cJSON_GetArraySize(a), 1);
	const cJSON *r = rec(a, "nvbandwidth.run", 1);
	assert_no_samples(r, "names 44 testcases");
	assert_string_equal(str(r, "detail.testcases.0"), "host_to_device_memcpy_ce");
	assert_string_equal(str(r, "detail.testcases.43"), "device_local_copy_tma");
	assert_string_equal(str(r, "tool.version"), "v0.10.0");
	assert_string_equal(str(r, "tool.git_version"), "v0.10");
}

static void fx_v010_b300(const cJSON *a)
{
	static const struct {
		const char *metric;
		double sum;
	} want[] = {
	    {"nvbandwidth.host_to_device_memcpy_ce", 389.15},
	    {"nvbandwidth.device_to_host_memcpy_ce", 399.86},
	    {"nvbandwidth.host_to_device_bidirectional_memcpy_ce", 359.96},
	    {"nvbandwidth.device_to_host_bidirectional_memcpy_ce", 340.60},
	    {"nvbandwidth.device_to_device_memcpy_read_ce", 32140.19},
	    {"nvbandwidth.device_to_device_memcpy_write_ce", 32521.50},
	    {"nvbandwidth.device_to_device_bidirectional_memcpy_read_ce", 63869.90},
	    {"nvbandwidth.device_to_device_bidirectional_memcpy_write_ce", 64669.78},
	};
	assert_int_equal(cJSON_GetArraySize(a), 8);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const cJSON *r = cJSON_GetArrayItem(a, (int)i);
		assert_string_equal(str(r, "metric"), want[i].metric);
		assert_samples(r, 1, want[i].sum);
		assert_string_equal(str(r, "tool.version"), "v0.10.0");
		assert_string_equal(str(r, "tool.git_version"), "v0.10");
		assert_string_equal(str(r, "detail.invocation.cuda_runtime_version"), "13.3 (13030)");
		assert_string_equal(str(r, "detail.invocation.driver_version"), "610.57.04");
		assert_null_at(r, "detail.invocation.devices");
	}
	const cJSON *h = rec(a, "nvbandwidth.device_to_host_bidirectional_memcpy_ce", 1);
	assert_near(num(h, "detail.runs.0.coefficient_of_variation"), 0.01);
	assert_int_equal(cJSON_GetArraySize(at(h, "detail.runs.0.matrices.0.columns")), 7);
	const cJSON *br = rec(a, "nvbandwidth.device_to_device_bidirectional_memcpy_read_ce", 1);
	assert_near(num(br, "detail.runs.0.sums.device_to_device_bidirectional_memcpy_read_ce_read1"), 31945.78);
	assert_near(num(br, "detail.runs.0.sums.device_to_device_bidirectional_memcpy_read_ce_read2"), 31924.12);
	assert_near(num(br, "detail.runs.0.matrices.2.max"), 1522.36);
	assert_near(num(br, "detail.runs.0.matrices.2.min"), 1517.86);
	const cJSON *bw = rec(a, "nvbandwidth.device_to_device_bidirectional_memcpy_write_ce", 1);
	assert_near(num(bw, "detail.runs.0.sums.device_to_device_bidirectional_memcpy_write_ce_write2"),
	            32333.92);
	/* the paste stops before the last COEFFICIENT_OF_VARIATION line */
	assert_null(at(bw, "detail.runs.0.coefficient_of_variation"));
	const cJSON *rd = rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1);
	assert_near(num(rd, "detail.runs.0.matrices.0.min"), 764.16);
	assert_near(num(rd, "detail.runs.0.matrices.0.max"), 766.34);
	assert_near(num(rd, "detail.runs.0.matrices.0.na_cells"), 7);
	all_wrong_null(a);
}

static void fx_v010_5runs(const cJSON *a)
{
	assert_int_equal(cJSON_GetArraySize(a), 5);
	const cJSON *lat = rec(a, "nvbandwidth.device_to_device_latency_sm", 1);
	assert_string_equal(str(lat, "unit"), "ns");
	assert_no_samples(lat, "is a latency");
	assert_near(num(lat, "detail.runs.0.sum"), 46287.84);
	assert_string_equal(str(lat, "detail.runs.0.matrices.0.unit"), "ns");
	assert_near(num(lat, "detail.runs.0.matrices.0.max"), 829.52);
	assert_near(num(lat, "detail.runs.0.matrices.0.min"), 821.94);
	/* no COEFFICIENT_OF_VARIATION for latency */
	assert_null(at(lat, "detail.runs.0.coefficient_of_variation"));
	assert_samples(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 2), 1, 22126.64);
	assert_samples(rec(a, "nvbandwidth.device_to_device_memcpy_write_ce", 3), 1, 22258.35);
	const cJSON *d2h = rec(a, "nvbandwidth.device_to_host_memcpy_ce", 4);
	assert_samples(d2h, 1, 441.72);
	assert_string_equal(str(d2h, "detail.runs.0.matrices.0.source_as_printed"), "column");
	assert_int_equal(cJSON_GetArraySize(at(d2h, "detail.runs.0.matrices.0.rows")), 1);
	const cJSON *h2d = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 5);
	assert_samples(h2d, 1, 442.87);
	assert_near(num(h2d, "detail.runs.0.coefficient_of_variation"), 0.0);
	assert_string_equal(str(h2d, "detail.invocation.cuda_driver_version"), "13.2 (13020)");
	assert_string_equal(str(h2d, "detail.invocation.driver_version"), "595.71.05");
	all_wrong_null(a);
}

/* The v0.5 document: 32 testcases, 15 passed (one a latency) and 17 waived
 * on one GPU. */
static void v05_document(const cJSON *a)
{
	assert_int_equal(cJSON_GetArraySize(a), 32);
	assert_int_equal(with_samples(a), 14);
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_samples(r, 1, 12.396361291250001);
	assert_string_equal(str(r, "tool.version"), "v0.5");
	assert_null(at(r, "tool.git_version"));
	assert_string_equal(str(r, "detail.invocation.cuda_runtime_version"), "12070");
	assert_string_equal(str(r, "detail.invocation.driver_version"), "565.02");
	assert_near(num(r, "detail.runs.0.matrices.0.values.0.0"), 12.3964);
	assert_near(num(r, "detail.runs.0.reported_average"), 12.396361291250001);
	assert_samples(rec(a, "nvbandwidth.all_to_host_bidirectional_memcpy_sm", 1), 1, 9.836789567);
	const cJSON *lat = rec(a, "nvbandwidth.host_device_latency_sm", 1);
	assert_string_equal(str(lat, "unit"), "ns");
	assert_no_samples(lat, "is a latency");
	assert_near(num(lat, "detail.runs.0.sum"), 649.87858038348088);
	assert_string_equal(str(lat, "detail.runs.0.matrices.0.unit"), "ns");
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_memcpy_read_ce", 1), "waived");
	assert_no_samples(rec(a, "nvbandwidth.one_to_all_read_sm", 1), "waived");
	assert_no_samples(rec(a, "nvbandwidth.device_to_device_latency_sm", 1), "waived");
	all_wrong_null(a);
}

static void fx_v05_verbose(const cJSON *a) { v05_document(a); }

static void fx_v05_noise(const cJSON *a)
{
	v05_document(a);
	const cJSON *r = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	assert_string_equal(str(r, "detail.invocation.warnings.0"),
	                    "WARNING: Failed to acquire log file lock. File is in use by a different instance");
}

static void fx_v06_gh200(const cJSON *a)
{
	assert_int_equal(cJSON_GetArraySize(a), 16);
	assert_int_equal(with_samples(a), 14);
	const cJSON *h = rec(a, "nvbandwidth.host_to_device_memcpy_ce", 1);
	/* the hand-edited 2x3 matrix still adds up to its SUM */
	assert_samples(h, 1, 1985.60);
	assert_int_equal(cJSON_GetArraySize(at(h, "detail.runs.0.matrices.0.values")), 2);
	assert_near(num(h, "detail.runs.0.matrices.0.values.1.2"), 312.11);
	assert_string_equal(str(h, "tool.version"), "v0.6");
	assert_string_equal(str(h, "detail.invocation.cuda_runtime_version"), "12040");
	assert_string_equal(str(h, "detail.invocation.cuda_driver_version"), "12040");
	assert_string_equal(str(h, "detail.invocation.driver_version"), "550.54.15");
	assert_string_equal(str(h, "detail.invocation.devices.0"), "0: NVIDIA GH200 480GB (00000009:01:00)");
	assert_samples(rec(a, "nvbandwidth.device_to_host_memcpy_ce", 1), 1, 607.26);
	assert_samples(rec(a, "nvbandwidth.host_to_all_bidirectional_memcpy_sm", 1), 1, 247.56);
	const cJSON *lat = rec(a, "nvbandwidth.host_device_latency_sm", 1);
	assert_string_equal(str(lat, "unit"), "ns");
	assert_no_samples(lat, "is a latency");
	assert_near(num(lat, "detail.runs.0.sum"), 772.58);
	const cJSON *w = rec(a, "nvbandwidth.run", 1);
	assert_no_samples(w, "17 testcase(s) waived");
	all_wrong_null(a);
}

static const struct {
	const char *file;
	void (*check)(const cJSON *);
} fixtures[] = {
	{"v0.10.0_json_j_h100x8_d2d_read_ce_raw_tabs.json", fx_v010_json_d2d},
	{"v0.10.0_list_testcases_tab_expanded.txt", fx_v010_list},
	{"v0.10.0_text_b300x7_full_run_TRUNCATED_by_author.txt", fx_v010_b300},
	{"v0.10.0_text_h100x8_5runs_hash_separated.txt", fx_v010_5runs},
	{"v0.5_json_j_verbose_single_gpu_driver565.json", fx_v05_verbose},
	{"v0.5_json_j_with_warning_noise_around.txt", fx_v05_noise},
	{"v0.6_text_gh200_all_testcases_superbench_EDITED.txt", fx_v06_gh200},
};

/* Every file of the folder, each with the figures read off it by hand; a
 * file with none fails, so a new fixture cannot go unchecked. */
static void fixtures_corpus(void **state)
{
	(void)state;
	DIR *d = opendir(FIXDIR);
	if (!d) {
		printf("fixtures folder %s is absent: skipping the fixture corpus\n", FIXDIR);
		skip();
	}
	struct dirent *e;
	int seen = 0;
	while ((e = readdir(d)) != NULL) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		if (n[0] == '.' || (len > 11 && strcmp(n + len - 11, ".source.txt") == 0))
			continue;
		size_t i = 0;
		while (i < sizeof fixtures / sizeof fixtures[0] && strcmp(fixtures[i].file, n) != 0)
			i++;
		if (i == sizeof fixtures / sizeof fixtures[0])
			fail_msg("fixture %s has no hand-read assertions in this test", n);
		cJSON *a = parse_file(n);
		fixtures[i].check(a);
		cJSON_Delete(a);
		seen++;
	}
	closedir(d);
	assert_int_equal(seen, (int)(sizeof fixtures / sizeof fixtures[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(text_basic_matrix),
	    cmocka_unit_test(text_orientation_arrows),
	    cmocka_unit_test(text_unit_is_read_from_the_title),
	    cmocka_unit_test(text_all_na_matrix),
	    cmocka_unit_test(text_unnamed_waivers),
	    cmocka_unit_test(text_named_waiver),
	    cmocka_unit_test(text_cut_short_and_exit_status),
	    cmocka_unit_test(text_failed_exit_after_complete_testcases),
	    cmocka_unit_test(text_errors),
	    cmocka_unit_test(text_invalid_arguments_and_usage),
	    cmocka_unit_test(text_list_output),
	    cmocka_unit_test(text_nothing_at_all),
	    cmocka_unit_test(text_sum_disagrees_with_matrix),
	    cmocka_unit_test(text_non_numbers),
	    cmocka_unit_test(text_sum_without_matrix),
	    cmocka_unit_test(text_sum_lines_only),
	    cmocka_unit_test(text_touching_cells),
	    cmocka_unit_test(text_bidirectional_three_matrices),
	    cmocka_unit_test(text_bidirectional_without_total),
	    cmocka_unit_test(text_separate_invocations),
	    cmocka_unit_test(text_repeated_within_invocation),
	    cmocka_unit_test(text_verification_failure_v08),
	    cmocka_unit_test(text_verification_failure_old),
	    cmocka_unit_test(echo_verification_on),
	    cmocka_unit_test(echo_verification_skipped),
	    cmocka_unit_test(echo_not_trusted),
	    cmocka_unit_test(echo_per_invocation),
	    cmocka_unit_test(json_tabs_and_waived),
	    cmocka_unit_test(json_noise_around),
	    cmocka_unit_test(json_all_na_and_bad_sums),
	    cmocka_unit_test(json_bidirectional_rows_appended),
	    cmocka_unit_test(json_verification_failure),
	    cmocka_unit_test(json_error_while_running),
	    cmocka_unit_test(json_cut_short),
	    cmocka_unit_test(json_several_documents),
	    cmocka_unit_test(crlf_and_nul_bytes),
	    cmocka_unit_test(fixtures_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
