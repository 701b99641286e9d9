/* The perftest parser: every trap with an input written here that would fool
 * a naive reader, then the published captures in the fixtures folder, each
 * checked against figures read off the file by hand. */
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

#include "fixture_file.h"
#include "launcher_property.h"
#include "parse/parse.h"

#define RULE "---------------------------------------------------------------------------------------\n"
#define BANNER                                                                                     \
	"************************************\n"                                                 \
	"* Waiting for client to connect... *\n"                                                 \
	"************************************\n"

/* A header block as perftest prints it; TX depth only on the client. */
#define HEAD(title, transport, link, depth)                                                        \
	RULE "                    " title "\n"                                                     \
	" Dual-port       : OFF\t\tDevice         : mlx5_3\n"                                     \
	" Number of qps   : 1\t\tTransport type : " transport "\n"                                \
	" Connection type : RC\t\tUsing SRQ      : OFF\n" depth                                   \
	" CQ Moderation   : 100\n"                                                                \
	" Mtu             : 4096[B]\n"                                                            \
	" Link type       : " link "\n"                                                           \
	" Max inline data : 0[B]\n"                                                               \
	" rdma_cm QPs\t : OFF\n"                                                                  \
	" Data ex. method : Ethernet\n" RULE
#define TX " TX depth        : 128\n"
#define RX " RX depth        : 512\n"
#define ADDR_C                                                                                     \
	" local address: LID 0x11 QPN 0x0100 PSN 0x000aaa RKey 0x00b1 VAddr 0x007f0000a000\n"    \
	" remote address: LID 0x12 QPN 0x0200 PSN 0x000bbb RKey 0x00b2 VAddr 0x007f0000b000\n" RULE
#define ADDR_S                                                                                     \
	" local address: LID 0x12 QPN 0x0200 PSN 0x000bbb RKey 0x00b2 VAddr 0x007f0000b000\n"    \
	" remote address: LID 0x11 QPN 0x0100 PSN 0x000aaa RKey 0x00b1 VAddr 0x007f0000a000\n" RULE
#define TH(u) " #bytes     #iterations    BW peak[" u "]    BW average[" u "]   MsgRate[Mpps]\n"
#define WRITE_CLIENT HEAD("RDMA_Write BW Test", "IB", "IB", TX) ADDR_C
#define ROW_12000 " 65536      5000             12010.00            12000.00\t\t   0.192000\n"

/* 12,000 MiB/s in decimal Gb/s: 12000 * 2^20 * 8 / 10^9, worked by hand. */
#define GBPS_12000 100.663296
#define GBPS_12010 100.74718208

static ng_run_status status(int exit_status, int sig) { return (ng_run_status){exit_status, sig}; }

/* What must hold for any record, whatever the input. */
static void check_record(const cJSON *r)
{
	assert_string_equal(cJSON_GetObjectItem(r, "schema")->valuestring, "nodegate/record/1");
	const cJSON *m = cJSON_GetObjectItem(r, "metric");
	assert_true(cJSON_IsString(m) && strncmp(m->valuestring, "rdma.", 5) == 0);
	const cJSON *s = cJSON_GetObjectItem(r, "samples");
	assert_true(cJSON_IsArray(s));
	for (const cJSON *x = s->child; x; x = x->next)
		assert_true(cJSON_IsNumber(x) && isfinite(x->valuedouble) && x->valuedouble > 0);
	if (!s->child)
		assert_true(cJSON_IsString(cJSON_GetObjectItem(r, "reason")));
	const cJSON *w = cJSON_GetObjectItem(r, "wrong");
	assert_true(cJSON_IsNull(w) || (cJSON_IsNumber(w) && w->valuedouble == 0));
	if (cJSON_IsNull(w) && s->child)
		assert_true(cJSON_IsString(cJSON_GetObjectItem(r, "reason")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "tool"), "name")->valuestring,
	                    "perftest");
}

static cJSON *parse(const char *text, ng_run_status st)
{
	ng_err err;
	cJSON *arr = ng_parse_perftest(text, strlen(text), st, &err);
	if (!arr)
		fail_msg("parser failed: %s", err.msg);
	assert_launcher_transparent(ng_parse_perftest, text, strlen(text), st, "a test input");
	assert_true(cJSON_GetArraySize(arr) > 0);
	for (const cJSON *r = arr->child; r; r = r->next)
		check_record(r);
	return arr;
}

static cJSON *rec(cJSON *arr, const char *metric)
{
	for (cJSON *r = arr->child; r; r = r->next)
		if (strcmp(cJSON_GetObjectItem(r, "metric")->valuestring, metric) == 0)
			return r;
	fail_msg("no record %s", metric);
	return NULL;
}

static cJSON *detail(cJSON *r) { return cJSON_GetObjectItem(r, "detail"); }

static void assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-7 * (fabs(want) > 1 ? fabs(want) : 1))
		fail_msg("got %.10g, want %.10g", got, want);
}

static void assert_one_sample(cJSON *r, double want)
{
	cJSON *s = cJSON_GetObjectItem(r, "samples");
	assert_int_equal(cJSON_GetArraySize(s), 1);
	assert_close(cJSON_GetArrayItem(s, 0)->valuedouble, want);
}

static void assert_no_samples(cJSON *r, const char *reason_part)
{
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "samples")), 0);
	const cJSON *why = cJSON_GetObjectItem(r, "reason");
	assert_true(cJSON_IsString(why));
	if (!strstr(why->valuestring, reason_part))
		fail_msg("reason \"%s\" lacks \"%s\"", why->valuestring, reason_part);
}

static void assert_reason_has(cJSON *r, const char *part)
{
	const cJSON *why = cJSON_GetObjectItem(r, "reason");
	if (!cJSON_IsString(why) || !strstr(why->valuestring, part))
		fail_msg("reason %s lacks \"%s\"", cJSON_IsString(why) ? why->valuestring : "(none)", part);
}

/* wrong 0 stands on the transport's end-to-end ICRC, and says so. */
static void assert_wrong_zero(cJSON *r)
{
	const cJSON *w = cJSON_GetObjectItem(r, "wrong");
	assert_true(cJSON_IsNumber(w) && w->valuedouble == 0);
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(r, "conditions"), "payload_check")->valuestring,
	    "transport-icrc");
	assert_null(cJSON_GetObjectItem(r, "reason"));
}

static void assert_wrong_null(cJSON *r, const char *reason_part)
{
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "wrong")));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "conditions"), "payload_check"));
	assert_reason_has(r, reason_part);
}

static const char *dstr(cJSON *r, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(detail(r), key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double dnum(cJSON *r, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(detail(r), key);
	if (!cJSON_IsNumber(v))
		fail_msg("detail.%s is not a number", key);
	return v->valuedouble;
}

/* ---- units ---- */

/* MiB/s divided by 119.2 (perftest's factor), not multiplied by 8/1000:
 * the latter reads 12,000 MiB/s as 96.0 Gb/s, 4.6% low. */
static void test_mib_per_sec_is_divided_by_119_2(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE, status(0, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_string_equal(cJSON_GetObjectItem(avg, "unit")->valuestring, "Gb/s");
	assert_one_sample(avg, GBPS_12000);
	assert_true(fabs(cJSON_GetArrayItem(cJSON_GetObjectItem(avg, "samples"), 0)->valuedouble - 96.0) > 4);
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_peak"), GBPS_12010);
	assert_wrong_zero(avg);
	assert_string_equal(dstr(avg, "unit_printed"), "MiB/sec");
	assert_close(dnum(avg, "gbps_divisor"), 119.20928955078125);
	assert_close(dnum(avg, "msg_size"), 65536);
	assert_close(dnum(avg, "iterations"), 5000);
	assert_close(dnum(avg, "msg_rate_mpps"), 0.192);
	assert_string_equal(dstr(avg, "sample_side"), "client");
	cJSON_Delete(arr);
}

/* Builds at or before 24.04 label the same mebibyte figure "MB/sec". */
static void test_old_mb_per_sec_label_is_mebibytes(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MB/sec") ROW_12000 RULE, status(-1, 0));
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_avg"), GBPS_12000);
	assert_string_equal(dstr(rec(arr, "rdma.ib_write_bw.bw_avg"), "unit_printed"), "MB/sec");
	cJSON_Delete(arr);
}

/* --report_gbits prints decimal gigabits already: dividing again would read
 * 97.25 Gb/s as 0.82. */
static void test_report_gbits_is_not_converted(void **state)
{
	(void)state;
	cJSON *arr = parse(HEAD("RDMA_Read BW Test", "IB", "IB", TX) ADDR_C TH("Gb/sec")
	                   " 65536      1000             98.50              97.25 \t\t     0.185500\n" RULE,
	                   status(0, 0));
	assert_one_sample(rec(arr, "rdma.ib_read_bw.bw_avg"), 97.25);
	assert_one_sample(rec(arr, "rdma.ib_read_bw.bw_peak"), 98.5);
	cJSON_Delete(arr);
}

static void test_unknown_unit_is_not_read(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("KB/sec") ROW_12000 RULE, status(0, 0));
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_avg"), "unknown bandwidth unit \"KB/sec\"");
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_peak"), "unknown bandwidth unit");
	cJSON_Delete(arr);
}

/* ---- the sample ---- */

/* A -a sweep: the sample is the largest size's average, not the last row
 * printed nor the best row; the whole table stays in detail. */
static void test_sweep_sample_is_largest_size(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec")
	                   " 2          5000             6.82               6.76                 3.543784\n"
	                   " 8388608    5000             12010.00           12000.00                    0.001430\n"
	                   "Conflicting CPU frequency values detected: 3295.2 != 5003.4. CPU Frequency is not max.\n"
	                   " 65536      5000             13000.00           12900.00                    0.206400\n" RULE,
	                   status(0, 0));
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(avg, GBPS_12000);
	assert_close(dnum(avg, "msg_size"), 8388608);
	cJSON *rows = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(avg), "tables"), 0), "rows");
	assert_int_equal(cJSON_GetArraySize(rows), 3);
	assert_close(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "bw_avg")->valuedouble, 6.76 / 119.20928955078125);
	cJSON_Delete(arr);
}

/* Under -D perftest does not compute the peak and prints 0.00: the peak is
 * not measured, never a zero; the average stands. */
static void test_duration_peak_zero_is_not_measured(void **state)
{
	(void)state;
	cJSON *arr = parse("root@n1:~# ib_write_bw -d mlx5_3 -D 10 n2\n" WRITE_CLIENT TH("MiB/sec")
	                   " 65536      91551234         0.00               12000.00\t\t   0.178758\n" RULE,
	                   status(0, 0));
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_avg"), GBPS_12000);
	cJSON *peak = rec(arr, "rdma.ib_write_bw.bw_peak");
	assert_no_samples(peak, "BW peak printed as 0.00");
	assert_reason_has(peak, "duration mode");
	assert_close(dnum(peak, "duration_s"), 10);
	assert_close(dnum(peak, "iterations"), 91551234);
	cJSON *row = cJSON_GetArrayItem(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(peak), "tables"), 0), "rows"), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "bw_peak")));
	cJSON_Delete(arr);
}

static void test_average_zero_is_no_sample(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("Gb/sec")
	                   " 2          5000             0.00               0.00   \t\t     0.000000\n" RULE,
	                   status(0, 0));
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_avg"), "BW average printed as 0.00");
	cJSON_Delete(arr);
}

/* --run_infinitely: one row per interval at one size, ended by SIGINT's
 * message rather than the rule; each interval is a sample. */
static void test_run_infinitely_rows_are_samples(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec")
	                   " 65536      1790000          0.00               12000.00\t\t   0.178758\n"
	                   " 65536      1790200          0.00               12010.00\t\t   0.178778\n"
	                   "\n User stopped traffic\n",
	                   status(-1, 0));
	cJSON *s = cJSON_GetObjectItem(rec(arr, "rdma.ib_write_bw.bw_avg"), "samples");
	assert_int_equal(cJSON_GetArraySize(s), 2);
	assert_close(cJSON_GetArrayItem(s, 0)->valuedouble, GBPS_12000);
	assert_close(cJSON_GetArrayItem(s, 1)->valuedouble, GBPS_12010);
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_peak"), "not measured");
	cJSON_Delete(arr);
}

/* Extra columns (-S on RawEth's QoS table, --cpu_util) move the average:
 * columns are read by their header names, not by position. */
static void test_columns_are_read_by_name(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT
	                   " #bytes    #sl      #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   "
	                   "MsgRate[Mpps]    CPU_Util[%]\n"
	                   " 65536      3           5000           12010.00            12000.00          "
	                   "        0.192000\t    12.50\n" RULE,
	                   status(0, 0));
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(avg, GBPS_12000);
	cJSON *row = cJSON_GetArrayItem(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(avg), "tables"), 0), "rows"), 0);
	assert_close(cJSON_GetObjectItem(row, "sl")->valuedouble, 3);
	assert_close(cJSON_GetObjectItem(row, "cpu_util_pct")->valuedouble, 12.5);
	cJSON_Delete(arr);
}

static void test_row_that_misses_a_column_is_refused(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") " 65536      5000             12010.00\t\t   0.192000\n" RULE,
	                   status(0, 0));
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_avg"), "a row has 4 fields where the header has 5");
	cJSON_Delete(arr);
}

/* ---- runs that measured nothing ---- */

static void test_connect_failure_has_no_samples(void **state)
{
	(void)state;
	cJSON *arr = parse("Couldn't connect to 10.0.0.2:18515\n"
	                   " Unable to open file descriptor for socket connection Unable to init the socket "
	                   "connection\n",
	                   status(1, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.unknown.bw_avg");
	assert_no_samples(avg, "no result table: \"Couldn't connect to 10.0.0.2:18515\"");
	assert_reason_has(avg, "exit status 1");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(avg, "wrong")));
	assert_no_samples(rec(arr, "rdma.unknown.bw_peak"), "Couldn't connect");
	cJSON_Delete(arr);
}

/* An unknown option: usage text, often with exit status 0. The option
 * descriptions say "timeout" and are not errors; getopt's line is quoted. */
static void test_usage_text_is_no_measurement(void **state)
{
	(void)state;
	cJSON *arr = parse("Usage:\n"
	                   "  ib_send_bw            start a server and wait for connection\n"
	                   "  ib_send_bw <host>     connect to server at <host>\n\n"
	                   "Options:\n"
	                   "  -a, --all  Run sizes from 2 till 2^23\n"
	                   "  -u, --qp-timeout=<timeout>  QP timeout, timeout value is 4 usec * 2 ^(timeout)\n"
	                   " 65536      1000             11300.00           11290.00\t\t     0.180646\n"
	                   "\nib_send_bw: unrecognized option '--bogus'\n",
	                   status(0, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.ib_send_bw.bw_avg");
	assert_no_samples(avg, "ib_send_bw printed its usage text (\"ib_send_bw: unrecognized option '--bogus'\")");
	assert_reason_has(avg, "exit status 0");
	cJSON_Delete(arr);
}

/* A sweep that dies at 4096 bytes: its last row is not the run's figure. */
static void test_sweep_cut_by_error_has_no_samples(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec")
	                   " 2          5000             6.82               6.76                 3.543784\n"
	                   " 4096       5000             13693.01            13639.21                    3.491638\n"
	                   "Completion with error at client\n"
	                   "Failed status 12: wr_id 0 syndrom 0x81\n"
	                   "scnt=5000, ccnt=4871\n",
	                   status(1, 0));
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_no_samples(avg, "cut short after 2 row(s) (last size 4096 bytes): \"Completion with error at client\"");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(avg, "wrong")));
	cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(detail(avg), "tables"), 0);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(t, "complete")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(detail(avg), "errors")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
	                     cJSON_GetArrayItem(cJSON_GetObjectItem(detail(avg), "sides"), 0), "errors")),
	                 2);
	cJSON_Delete(arr);
}

/* Output that stops before perftest's closing rule (a killed run, a cut
 * log) is not read either, even without an error line. */
static void test_table_without_closing_rule_is_not_read(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000, status(-1, 0));
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_avg"), "ends before perftest's closing rule line");
	cJSON_Delete(arr);
}

static void test_failure_after_header_has_no_samples(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT "Failed to modify QP 0 to RTR\n Unable to Connect the HCA's through the link\n",
	                   status(1, 0));
	assert_no_samples(rec(arr, "rdma.ib_write_bw.bw_avg"), "no result table: \"Failed to modify QP 0 to RTR\"");
	cJSON_Delete(arr);
}

static void test_empty_output(void **state)
{
	(void)state;
	cJSON *arr = parse("", status(-1, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	assert_no_samples(rec(arr, "rdma.unknown.bw_avg"), "no result table in the output");
	cJSON_Delete(arr);
}

/* ---- wrong ---- */

static void test_error_after_table_keeps_samples_but_not_wrong(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE "Failed to destroy QP\n", status(-1, 0));
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(avg, GBPS_12000);
	assert_wrong_null(avg, "the run reported errors (\"Failed to destroy QP\")");
	cJSON_Delete(arr);
}

/* rdma-core's notes about providers this host lacks, printed on stderr by
 * every verbs program, are not the run's errors. */
static void test_missing_provider_warning_is_not_an_error(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE
	                   "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': "
	                   "libvmw_pvrdma-rdmav34.so: cannot open shared object file: No such file or directory\n",
	                   status(0, 0));
	assert_wrong_zero(rec(arr, "rdma.ib_write_bw.bw_avg"));
	cJSON_Delete(arr);
}

static void test_exit_status_and_signal_leave_wrong_unchecked(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE, status(2, 0));
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_avg"), GBPS_12000);
	assert_wrong_null(rec(arr, "rdma.ib_write_bw.bw_avg"), "exit status 2");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(rec(arr, "rdma.ib_write_bw.bw_avg"), "tool"),
	                                     "exit_status")->valueint, 2);
	cJSON_Delete(arr);
	arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE, status(-1, 15));
	assert_wrong_null(rec(arr, "rdma.ib_write_bw.bw_peak"), "killed by signal 15");
	cJSON_Delete(arr);
}

/* iWARP has no ICRC; RoCE (IB transport over an Ethernet link) does. */
static void test_wrong_needs_an_icrc_transport(void **state)
{
	(void)state;
	cJSON *arr = parse(HEAD("RDMA_Write BW Test", "IW", "Ethernet", TX) ADDR_C TH("MiB/sec") ROW_12000 RULE,
	                   status(0, 0));
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_avg"), GBPS_12000);
	assert_wrong_null(rec(arr, "rdma.ib_write_bw.bw_avg"), "transport \"IW\" has no end-to-end ICRC");
	cJSON_Delete(arr);
	arr = parse(HEAD("RDMA_Write BW Test", "IB", "Ethernet", TX) ADDR_C TH("MiB/sec") ROW_12000 RULE,
	            status(0, 0));
	assert_wrong_zero(rec(arr, "rdma.ib_write_bw.bw_avg"));
	cJSON_Delete(arr);
	arr = parse(TH("MiB/sec") ROW_12000 RULE, status(0, 0));
	assert_one_sample(rec(arr, "rdma.unknown.bw_avg"), GBPS_12000);
	assert_wrong_null(rec(arr, "rdma.unknown.bw_avg"), "transport type is not printed");
	cJSON_Delete(arr);
}

/* ---- both sides in one log ---- */

/* ib_send_bw's server measures its own receive side and prints first; the
 * samples are the client's, told apart by the server's banner and RX depth. */
static void test_server_then_client_samples_the_client(void **state)
{
	(void)state;
	cJSON *arr = parse(BANNER HEAD("Send BW Test", "IB", "IB", RX) ADDR_S TH("MiB/sec")
	                   " 65536      1000             0.00               11000.00\t\t   0.176000\n" RULE
	                   HEAD("Send BW Test", "IB", "IB", TX) ADDR_C TH("MiB/sec")
	                   " 65536      1000             12010.00           12000.00\t\t   0.192000\n" RULE,
	                   status(-1, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2); /* one run, not two */
	cJSON *avg = rec(arr, "rdma.ib_send_bw.bw_avg");
	assert_one_sample(avg, GBPS_12000);
	assert_one_sample(rec(arr, "rdma.ib_send_bw.bw_peak"), GBPS_12010);
	assert_string_equal(dstr(avg, "sample_side"), "client");
	cJSON *sides = cJSON_GetObjectItem(detail(avg), "sides");
	assert_int_equal(cJSON_GetArraySize(sides), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(sides, 0), "side")->valuestring, "server");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(sides, 1), "side")->valuestring, "client");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(detail(avg), "tables")), 2);
	cJSON_Delete(arr);
}

/* Two processes writing one stream line by line: headers mix, two table
 * headers come together and rows alternate. The sides cannot be told apart,
 * so the first complete table is used, and each row lands in its own table. */
static void test_interleaved_sides_use_first_table(void **state)
{
	(void)state;
	cJSON *arr = parse(BANNER RULE "                    Send BW Test\n"
	                   " Dual-port       : OFF\t\tDevice         : mlx5_0\n" RULE
	                   "                    Send BW Test\n"
	                   " Dual-port       : OFF\t\tDevice         : mlx5_0\n"
	                   " Number of qps   : 1\t\tTransport type : IB\n"
	                   " Number of qps   : 1\t\tTransport type : IB\n"
	                   " TX depth        : 128\n RX depth        : 512\n" RULE RULE
	                   " local address: LID 0x05 QPN 0x0011 PSN 0x1\n"
	                   " local address: LID 0x06 QPN 0x0022 PSN 0x2\n"
	                   " remote address: LID 0x06 QPN 0x0022 PSN 0x2\n"
	                   " remote address: LID 0x05 QPN 0x0011 PSN 0x1\n" RULE RULE TH("MiB/sec") TH("MiB/sec")
	                   " 2          1000             9.10               9.00   \t\t     4.718592\n"
	                   " 2          1000             0.00               8.50   \t\t     4.456448\n"
	                   " 65536      1000             12010.00           12000.00\t\t     0.192000\n"
	                   " 65536      1000             0.00               11000.00\t\t     0.176000\n" RULE RULE,
	                   status(-1, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.ib_send_bw.bw_avg");
	assert_one_sample(avg, GBPS_12000);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(detail(avg), "interleaved")));
	assert_string_equal(dstr(avg, "sample_side"), "unknown");
	cJSON *tables = cJSON_GetObjectItem(detail(avg), "tables");
	assert_int_equal(cJSON_GetArraySize(tables), 2);
	for (int i = 0; i < 2; i++) {
		cJSON *t = cJSON_GetArrayItem(tables, i);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(t, "complete")));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")), 2);
	}
	cJSON *second = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tables, 1), "rows"), 1);
	assert_close(cJSON_GetObjectItem(second, "bw_avg")->valuedouble, 11000.0 / 119.20928955078125);
	assert_wrong_zero(avg);
	cJSON_Delete(arr);
}

/* Two client runs of one test in a row are two runs, not a pair: their
 * address lines do not mirror each other. */
static void test_two_client_runs_stay_apart(void **state)
{
	(void)state;
	cJSON *arr = parse(WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE WRITE_CLIENT TH("MiB/sec")
	                   " 65536      5000             12010.00            11000.00\t\t   0.176000\n" RULE,
	                   status(-1, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 4);
	assert_one_sample(cJSON_GetArrayItem(arr, 0), GBPS_12000);
	assert_one_sample(cJSON_GetArrayItem(arr, 2), 11000.0 / 119.20928955078125);
	cJSON_Delete(arr);
}

/* ---- names ---- */

/* -b sums both directions: a different quantity, so a different metric. */
static void test_bidirectional_has_its_own_metric(void **state)
{
	(void)state;
	cJSON *arr = parse(HEAD("RDMA_Write Bidirectional BW Test", "IB", "IB", TX) ADDR_C TH("MiB/sec")
	                   " 65536      5000             24010.00            24000.00\t\t   0.384000\n" RULE,
	                   status(0, 0));
	cJSON *avg = rec(arr, "rdma.ib_write_bw_bidir.bw_avg");
	assert_one_sample(avg, 2 * GBPS_12000);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(detail(avg), "bidirectional")));
	assert_string_equal(dstr(avg, "sample_side"), "unknown");
	cJSON_Delete(arr);
}

/* -b, server then client: both print both depths, but the server's banner
 * says which is which, so the client's table gives the sample
 * (docs/parsers.md), in either order. */
static void test_bidirectional_takes_the_client_table(void **state)
{
	(void)state;
#define BIDIR_HEAD HEAD("RDMA_Write Bidirectional BW Test", "IB", "IB", TX RX)
#define BIDIR_SERVER                                                                               	BANNER BIDIR_HEAD ADDR_S TH("MiB/sec") " 65536      5000             23010.00            23000.00\t\t   0.368000\n" RULE
#define BIDIR_CLIENT BIDIR_HEAD ADDR_C TH("MiB/sec") " 65536      5000             24010.00            24000.00\t\t   0.384000\n" RULE
	static const char *const inputs[] = {BIDIR_SERVER BIDIR_CLIENT, BIDIR_CLIENT BIDIR_SERVER};
	for (size_t i = 0; i < 2; i++) {
		cJSON *arr = parse(inputs[i], status(0, 0));
		cJSON *avg = rec(arr, "rdma.ib_write_bw_bidir.bw_avg");
		assert_one_sample(avg, 2 * GBPS_12000);
		assert_string_equal(dstr(avg, "sample_side"), "client");
		assert_string_equal(dstr(avg, "sample_rule"), "the client's table");
		cJSON_Delete(arr);
	}
	/* Without address lines the banner alone pairs them. */
	cJSON *arr = parse(BANNER BIDIR_HEAD TH("MiB/sec") " 65536      5000             23010.00            23000.00\t\t   0.368000\n" RULE
	                   BIDIR_HEAD TH("MiB/sec") " 65536      5000             24010.00            24000.00\t\t   0.384000\n" RULE,
	                   status(0, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	assert_one_sample(rec(arr, "rdma.ib_write_bw_bidir.bw_avg"), 2 * GBPS_12000);
	cJSON_Delete(arr);
}

/* A pasted session: each command starts a run, so the failed second
 * command is its own record named after it, not an error on the first. */
static void test_session_commands_split_runs(void **state)
{
	(void)state;
	cJSON *arr = parse("user@n1:~$ ib_write_bw -d mlx5_3 --report_gbits n2\n" WRITE_CLIENT TH("Gb/sec")
	                   " 65536      5000             98.50              97.25 \t\t     0.185500\n" RULE
	                   "user@n1:~$ ./ib_read_bw -d mlx5_3 n2\n"
	                   "Couldn't connect to n2:18515\n"
	                   "user@n1:~$ \n",
	                   status(-1, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 4);
	cJSON *w = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(w, 97.25);
	assert_wrong_zero(w);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(w), "commands"), 0)->valuestring,
	                    "user@n1:~$ ib_write_bw -d mlx5_3 --report_gbits n2");
	assert_no_samples(rec(arr, "rdma.ib_read_bw.bw_avg"), "no result table: \"Couldn't connect to n2:18515\"");
	cJSON_Delete(arr);
}

/* Latency is kept in detail, never a sample: the gate would fail the
 * nodes with the lowest latency. */
static void test_latency_is_detail_only(void **state)
{
	(void)state;
	cJSON *arr = parse(HEAD("RDMA_Write Latency Test", "IB", "IB", " TX depth        : 1\n") ADDR_C
	                   " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
	                   "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
	                   " 2       1000          1.01           3.20         1.04     \t       1.05        \t0.04   "
	                   "\t\t1.20    \t\t3.20   \n" RULE,
	                   status(0, 0));
	assert_int_equal(cJSON_GetArraySize(arr), 1);
	cJSON *r = rec(arr, "rdma.ib_write_lat.t_typical");
	assert_string_equal(cJSON_GetObjectItem(r, "unit")->valuestring, "us");
	assert_no_samples(r, "latency is kept in detail only");
	assert_close(dnum(r, "t_typical_us"), 1.04);
	assert_close(dnum(r, "t_avg_us"), 1.05);
	cJSON_Delete(arr);
}

static void test_header_fields_and_version_are_kept(void **state)
{
	(void)state;
	cJSON *arr = parse("Version: 6.10\n" WRITE_CLIENT TH("MiB/sec") ROW_12000 RULE, status(0, 0));
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(avg, "tool"), "version")->valuestring, "6.10");
	cJSON *h = cJSON_GetObjectItem(detail(avg), "header");
	assert_string_equal(cJSON_GetObjectItem(h, "Device")->valuestring, "mlx5_3");
	assert_string_equal(cJSON_GetObjectItem(h, "Transport type")->valuestring, "IB");
	assert_string_equal(cJSON_GetObjectItem(h, "rdma_cm QPs")->valuestring, "OFF");
	assert_string_equal(cJSON_GetObjectItem(h, "Mtu")->valuestring, "4096[B]");
	assert_string_equal(cJSON_GetObjectItem(h, "TX depth")->valuestring, "128");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(avg), "local_address"), 0)->valuestring,
	                    "LID 0x11 QPN 0x0100 PSN 0x000aaa RKey 0x00b1 VAddr 0x007f0000a000");
	cJSON_Delete(arr);
}

/* ---- the published captures ---- */


static cJSON *parse_fixture(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/perftest/%s", NODEGATE_FIXTURES, name);
	size_t len = 0;
	char *text = slurp(path, &len);
	if (!text)
		fail_msg("cannot read %s", path);
	ng_err err;
	cJSON *arr = ng_parse_perftest(text, len, (ng_run_status){-1, 0}, &err);
	assert_launcher_transparent(ng_parse_perftest, text, len, (ng_run_status){-1, 0}, name);
	free(text);
	if (!arr)
		fail_msg("%s: %s", name, err.msg);
	for (const cJSON *r = arr->child; r; r = r->next)
		check_record(r);
	return arr;
}

/* DOCA-OFED 3.3 client session on ConnectX-7 NDR: ib_send_bw in MiB/sec,
 * ib_send_lat, ib_read_bw and ib_write_bw with --report_gbits; the CPU
 * frequency warning sits between each header and its row. */
static void fixture_doca_session(void)
{
	cJSON *arr = parse_fixture("doca3.3_send_MiB_read_write_Gb_ndr_cx7_client_session.txt");
	assert_int_equal(cJSON_GetArraySize(arr), 7);
	cJSON *s = rec(arr, "rdma.ib_send_bw.bw_avg");
	assert_one_sample(s, 390.54867431); /* 46557.03 MiB/s */
	assert_one_sample(rec(arr, "rdma.ib_send_bw.bw_peak"), 390.63516086); /* 46567.34 */
	assert_wrong_zero(s);
	assert_string_equal(dstr(s, "unit_printed"), "MiB/sec");
	assert_close(dnum(s, "iterations"), 1000);
	assert_close(dnum(s, "msg_rate_mpps"), 0.744912);
	assert_string_equal(dstr(s, "sample_side"), "client");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(detail(s), "header"), "CQE Poll Batch")->valuestring, "16");
	cJSON *lat = rec(arr, "rdma.ib_send_lat.t_typical");
	assert_no_samples(lat, "latency is kept in detail only");
	assert_close(dnum(lat, "t_typical_us"), 1.27);
	cJSON *rd = rec(arr, "rdma.ib_read_bw.bw_avg");
	assert_one_sample(rd, 328.61);
	assert_one_sample(rec(arr, "rdma.ib_read_bw.bw_peak"), 328.64);
	assert_string_equal(dstr(rd, "unit_printed"), "Gb/sec");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(detail(rd), "header"), "Outstand reads")->valuestring, "16");
	cJSON *wr = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(wr, 392.34);
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_peak"), 392.38);
	assert_close(dnum(wr, "iterations"), 5000);
	assert_wrong_zero(wr);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(wr), "commands"), 0)->valuestring,
	                    "vyl@csegpu1:~$ ib_write_bw -d mlx5_0 --report_gbits csegpu2");
	cJSON_Delete(arr);
}

/* 2026 perftest, -a on an AMD ionic RoCE NIC: the server prints only the
 * 8 MiB row, the client all 23; the two are pasted one after the other. */
static void fixture_new_sweep_server_and_client(void)
{
	cJSON *arr = parse_fixture("new_MiBsec_ib_write_bw_a_all_sizes_rocm_ionic_server_and_client.txt");
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(avg, 159.75625785); /* 19044.43 MiB/s at 8388608 B */
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_peak"), 159.75634174); /* 19044.44 */
	assert_wrong_zero(avg); /* Transport type IB over an Ethernet link: RoCE */
	assert_string_equal(dstr(avg, "sample_side"), "client");
	assert_close(dnum(avg, "msg_size"), 8388608);
	cJSON *tables = cJSON_GetObjectItem(detail(avg), "tables");
	assert_int_equal(cJSON_GetArraySize(tables), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(tables, 0), "side")->valuestring, "server");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(tables, 0), "rows")), 1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(tables, 1), "rows")), 23);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(detail(avg), "local_gid"), 0)->valuestring,
	                    "254:128:00:00:00:00:00:00:06:144:129:255:254:56:231:64");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(detail(avg), "header"), "Link type")->valuestring,
	                    "Ethernet");
	cJSON_Delete(arr);
}

/* superbench's loopback capture: old MB/sec label, client block first,
 * then the server's (no TX depth); both print 24056.72. */
static void fixture_old_8m_client_then_server(void)
{
	cJSON *arr = parse_fixture("old_MBsec_ib_write_bw_loopback_8M_client_then_server.txt");
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(avg, 201.80239385); /* 24056.72 MB/sec, which is MiB/s */
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_peak"), 201.80256162); /* 24056.74 */
	assert_wrong_zero(avg);
	assert_string_equal(dstr(avg, "unit_printed"), "MB/sec");
	assert_string_equal(dstr(avg, "sample_side"), "client");
	assert_close(dnum(avg, "iterations"), 20000);
	cJSON *sides = cJSON_GetObjectItem(detail(avg), "sides");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(sides, 0), "side")->valuestring, "client");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(sides, 1), "side")->valuestring, "server");
	cJSON_Delete(arr);
}

/* superbench's -a loopback with both processes' lines interleaved: two
 * headers in a row, the 23-row sweep, then the server's single row. */
static void fixture_old_interleaved_sweep(void)
{
	cJSON *arr = parse_fixture("old_MBsec_ib_write_bw_loopback_all_sizes_a_interleaved.txt");
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	cJSON *avg = rec(arr, "rdma.ib_write_bw.bw_avg");
	assert_one_sample(avg, 194.95695417); /* 23240.68 MB/sec at 8388608 B */
	assert_one_sample(rec(arr, "rdma.ib_write_bw.bw_peak"), 194.95695417);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(detail(avg), "interleaved")));
	assert_string_equal(dstr(avg, "sample_side"), "unknown");
	assert_close(dnum(avg, "iterations"), 2000);
	cJSON *tables = cJSON_GetObjectItem(detail(avg), "tables");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(tables, 0), "rows")), 23);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(tables, 1), "rows")), 1);
	assert_wrong_zero(avg);
	cJSON_Delete(arr);
}

static const struct {
	const char *name;
	void (*check)(void);
} fixtures[] = {
	{"doca3.3_send_MiB_read_write_Gb_ndr_cx7_client_session.txt", fixture_doca_session},
	{"new_MiBsec_ib_write_bw_a_all_sizes_rocm_ionic_server_and_client.txt", fixture_new_sweep_server_and_client},
	{"old_MBsec_ib_write_bw_loopback_8M_client_then_server.txt", fixture_old_8m_client_then_server},
	{"old_MBsec_ib_write_bw_loopback_all_sizes_a_interleaved.txt", fixture_old_interleaved_sweep},
};

/* Every data file of the folder has its assertions here. */
static void test_fixture_corpus(void **state)
{
	(void)state;
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/perftest", NODEGATE_FIXTURES);
	DIR *d = opendir(dir);
	if (!d) {
		printf("fixtures folder %s is absent: skipping the corpus test\n", dir);
		skip();
	}
	size_t seen = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.' || (n > 11 && strcmp(e->d_name + n - 11, ".source.txt") == 0))
			continue;
		size_t i = 0;
		while (i < sizeof fixtures / sizeof fixtures[0] && strcmp(fixtures[i].name, e->d_name) != 0)
			i++;
		if (i == sizeof fixtures / sizeof fixtures[0])
			fail_msg("fixture %s has no assertions in this test", e->d_name);
		fixtures[i].check();
		seen++;
	}
	closedir(d);
	assert_int_equal(seen, sizeof fixtures / sizeof fixtures[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mib_per_sec_is_divided_by_119_2),
		cmocka_unit_test(test_old_mb_per_sec_label_is_mebibytes),
		cmocka_unit_test(test_report_gbits_is_not_converted),
		cmocka_unit_test(test_unknown_unit_is_not_read),
		cmocka_unit_test(test_sweep_sample_is_largest_size),
		cmocka_unit_test(test_duration_peak_zero_is_not_measured),
		cmocka_unit_test(test_average_zero_is_no_sample),
		cmocka_unit_test(test_run_infinitely_rows_are_samples),
		cmocka_unit_test(test_columns_are_read_by_name),
		cmocka_unit_test(test_row_that_misses_a_column_is_refused),
		cmocka_unit_test(test_connect_failure_has_no_samples),
		cmocka_unit_test(test_usage_text_is_no_measurement),
		cmocka_unit_test(test_sweep_cut_by_error_has_no_samples),
		cmocka_unit_test(test_table_without_closing_rule_is_not_read),
		cmocka_unit_test(test_failure_after_header_has_no_samples),
		cmocka_unit_test(test_empty_output),
		cmocka_unit_test(test_error_after_table_keeps_samples_but_not_wrong),
		cmocka_unit_test(test_missing_provider_warning_is_not_an_error),
		cmocka_unit_test(test_exit_status_and_signal_leave_wrong_unchecked),
		cmocka_unit_test(test_wrong_needs_an_icrc_transport),
		cmocka_unit_test(test_server_then_client_samples_the_client),
		cmocka_unit_test(test_interleaved_sides_use_first_table),
		cmocka_unit_test(test_two_client_runs_stay_apart),
		cmocka_unit_test(test_bidirectional_has_its_own_metric),
		cmocka_unit_test(test_bidirectional_takes_the_client_table),
		cmocka_unit_test(test_session_commands_split_runs),
		cmocka_unit_test(test_latency_is_detail_only),
		cmocka_unit_test(test_header_fields_and_version_are_kept),
		cmocka_unit_test(test_fixture_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
