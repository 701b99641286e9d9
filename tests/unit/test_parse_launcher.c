/* The launcher layer (src/parse/launcher.c): every prefix style, stream
 * splitting, noise, and each tool's parser reading through it. The inputs
 * are written for these tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "launcher_property.h"
#include "parse/launcher.h"
#include "parse/parse.h"

static void expect_strip(const char *line, const char *content, const char *tag, unsigned style)
{
	char got_tag[NG_LAUNCH_TAG];
	unsigned styles = 0;
	ng_span s = ng_launch_strip((ng_span){line, strlen(line)}, got_tag, sizeof got_tag, &styles);
	if (s.len != strlen(content) || memcmp(s.s, content, s.len) != 0)
		fail_msg("\"%s\": content \"%.*s\", want \"%s\"", line, (int)s.len, s.s, content);
	assert_string_equal(got_tag, tag);
	if (style && !(styles & style))
		fail_msg("\"%s\": styles %#x lack %#x", line, styles, style);
	if (!style)
		assert_int_equal(styles, 0);
}

static void strips_each_prefix_style(void **state)
{
	(void)state;
	expect_strip("0: # nThread 1", "# nThread 1", "0:", NG_LAUNCH_SRUN);
	expect_strip(" 3: ", "", "3:", NG_LAUNCH_SRUN);
	expect_strip("12:", "", "12:", NG_LAUNCH_SRUN);
	expect_strip("[1,0]<stdout>:#  Rank  0", "#  Rank  0", "[1,0]", NG_LAUNCH_MPIRUN_TAG);
	expect_strip("[1,7]<stderr>: Test failure", "Test failure", "[1,7]", NG_LAUNCH_MPIRUN_TAG);
	expect_strip("[gpu-a-07:3] | pcie | Pass |", "| pcie | Pass |", "[gpu-a-07:3]", NG_LAUNCH_HOST_RANK);
	expect_strip("[0] Running host_to_device_memcpy_ce.", "Running host_to_device_memcpy_ce.", "[0]",
	             NG_LAUNCH_RANK);
	expect_strip("[pod/mpi-worker-1/worker] RDMA_Write BW Test", "RDMA_Write BW Test", "[pod/mpi-worker-1/worker]",
	             NG_LAUNCH_POD);
	expect_strip("Dec 01 21:13:04 SUM x 1.0", "SUM x 1.0", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("Dec  1 21:13:04.250 x", "x", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("00:00:05 x", "x", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("2026-12-01T21:13:04.123456789Z x", "x", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("2026-12-01 21:13:04,5 x", "x", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("2026-12-01T21:13:04+01:00 x", "x", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("[2026-12-01 21:13:04] x", "x", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("Dec 01 21:13:04 node7 dcgmi[311]: | pcie | Pass |", "| pcie | Pass |", "", NG_LAUNCH_JOURNALD);
	expect_strip("Dec 01 21:13:04 node7 kernel: x", "x", "", NG_LAUNCH_JOURNALD);
	/* Layered: ts in front of srun in front of mpirun. */
	expect_strip("Dec 01 21:13:04 1: [1,1]<stdout>: x", "x", "1:[1,1]", NG_LAUNCH_SRUN | NG_LAUNCH_MPIRUN_TAG);
}

static void leaves_tool_text_alone(void **state)
{
	(void)state;
	/* A tool's own "Key: value" after a timestamp is not journald's source. */
	expect_strip("Dec 01 21:13:04 nvbandwidth Version: v0.6", "nvbandwidth Version: v0.6", "", NG_LAUNCH_TIMESTAMP);
	expect_strip("GPU0: Pass", "GPU0: Pass", "", 0);
	expect_strip("Device 0: NVIDIA H100", "Device 0: NVIDIA H100", "", 0);
	expect_strip(" 65536      5000   12010.00", " 65536      5000   12010.00", "", 0);
	expect_strip("[1,0] no tag", "[1,0] no tag", "", 0);
	expect_strip("[host] x", "[host] x", "", 0);
	expect_strip("1234567: x", "1234567: x", "", 0);
	expect_strip("12:30 x", "12:30 x", "", 0);
	expect_strip("21:13:04x", "21:13:04x", "", 0);
	expect_strip("2026-12-01 x", "2026-12-01 x", "", 0);
}

static ng_launch read_launch(const char *text)
{
	ng_launch l;
	assert_true(ng_launch_read(text, strlen(text), &l));
	return l;
}

static void bare_text_passes_byte_for_byte(void **state)
{
	(void)state;
	static const char in[] = "a\r\n\nb \tc\n  d";
	ng_launch l = read_launch(in);
	assert_false(ng_launch_changed(&l));
	assert_int_equal(l.nstreams, 1);
	assert_int_equal(l.joined_len, sizeof in - 1);
	assert_memory_equal(l.joined, in, sizeof in - 1);
	assert_null(ng_launch_json(&l));
	ng_launch_free(&l);
}

static void interleaved_ranks_become_streams(void **state)
{
	(void)state;
	ng_launch l = read_launch("0: a0\n1: b0\n0: a1\r\nsrun: error: task 1 exited\n1: b1");
	assert_int_equal(l.nstreams, 3);
	assert_string_equal(l.streams[0].tag, "0:");
	assert_string_equal(l.streams[0].text, "a0\na1\r\n");
	assert_string_equal(l.streams[1].tag, "1:");
	assert_string_equal(l.streams[1].text, "b0\nb1");
	assert_string_equal(l.streams[2].tag, "");
	assert_string_equal(l.streams[2].text, "srun: error: task 1 exited\n");
	/* A stream that ends without a newline never shares a line with the next. */
	assert_string_equal(l.joined, "a0\na1\r\nb0\nb1\nsrun: error: task 1 exited\n");
	assert_int_equal(l.prefixed, 4);
	cJSON *j = ng_launch_json(&l);
	assert_non_null(j);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "styles"), 0)->valuestring, "srun-label");
	assert_int_equal(cJSON_GetObjectItem(j, "streams")->valueint, 3);
	cJSON_Delete(j);
	ng_launch_free(&l);
}

static void output_files_are_streams(void **state)
{
	(void)state;
	ng_launch l = read_launch("==> out/1/rank.0/stdout <==\nr0 line\n\n==> out/1/rank.1/stdout <==\nr1 line\n");
	assert_true(l.styles & NG_LAUNCH_FILE);
	const char *r0 = NULL, *r1 = NULL;
	for (size_t k = 0; k < l.nstreams; k++) {
		if (!strcmp(l.streams[k].tag, "out/1/rank.0/stdout"))
			r0 = l.streams[k].text;
		if (!strcmp(l.streams[k].tag, "out/1/rank.1/stdout"))
			r1 = l.streams[k].text;
	}
	assert_non_null(r0);
	assert_non_null(r1);
	assert_string_equal(r0, "r0 line\n\n");
	assert_string_equal(r1, "r1 line\n");
	ng_launch_free(&l);
}

static void noise_is_dropped_errors_are_kept(void **state)
{
	(void)state;
	static const char in[] =
	    "Warning: Permanently added '[10.0.0.8]:2222' (ECDSA) to the list of known hosts.\n"
	    "[n7:4411] MCW rank 1 bound to socket 1[core 8[hwt 0]]: [../..][B/..]\n"
	    "[n7:4411] Rank 0 bound to package[0][core:0]\n"
	    "--------------------------------------------------------------------------\n"
	    "WARNING: No preset parameters were found for the device that Open MPI\n"
	    "detected:\n"
	    "--------------------------------------------------------------------------\n"
	    "kept 1\n"
	    "--------------------------------------------------------------------------\n"
	    "prterun was unable to launch the specified application as it could not\n"
	    "find an executable:\n"
	    "--------------------------------------------------------------------------\n"
	    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n"
	    "[n7:4411] 3 more processes have sent help message help-mpi-btl-openib.txt / no active ports\n"
	    "[n7:4411] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages\n";
	ng_launch l = read_launch(in);
	assert_int_equal(l.noise, 9);
	assert_string_equal(l.joined,
	                    "kept 1\n"
	                    "--------------------------------------------------------------------------\n"
	                    "prterun was unable to launch the specified application as it could not\n"
	                    "find an executable:\n"
	                    "--------------------------------------------------------------------------\n"
	                    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n");
	ng_launch_free(&l);
}

static void an_unclosed_box_is_not_noise(void **state)
{
	(void)state;
	ng_launch l = read_launch("--------------------------------------------------------------------------\n"
	                          "WARNING: a box that never closes\nrest\n");
	assert_int_equal(l.noise, 0);
	assert_false(ng_launch_changed(&l));
	ng_launch_free(&l);
}

/* Past the stream limit the labels are not a launcher's: lines read whole. */
static void too_many_labels_read_whole(void **state)
{
	(void)state;
	size_t cap = 400 * 16, n = 0;
	char *in = malloc(cap);
	assert_non_null(in);
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(in + n, cap - n, "%d: x\n", i);
	ng_launch l;
	assert_true(ng_launch_read(in, n, &l));
	assert_int_equal(l.nstreams, NG_LAUNCH_MAX_STREAMS + 1);
	assert_string_equal(l.streams[NG_LAUNCH_MAX_STREAMS].tag, "");
	assert_non_null(strstr(l.streams[NG_LAUNCH_MAX_STREAMS].text, "299: x\n"));
	ng_launch_free(&l);
	free(in);
}

/* ---- each tool's parser behind the layer -------------------------------- */

static cJSON *parse_with(ng_bare_parser p, const char *text)
{
	ng_err err;
	cJSON *a = p(text, strlen(text), NG_RUN_STATUS_UNKNOWN, &err);
	if (!a)
		fail_msg("parser failed: %s", err.msg);
	assert_launcher_transparent(p, text, strlen(text), NG_RUN_STATUS_UNKNOWN, "a launcher test input");
	return a;
}

static size_t nsamples(const cJSON *rec) { return (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(rec, "samples")); }

#define PT_RULE " ---------------------------------------------------------------------------------------\n"
#define PT_CLIENT                                                                                  \
	PT_RULE "                    RDMA_Write BW Test\n"                                             \
	" Dual-port       : OFF\t\tDevice         : mlx5_3\n"                                          \
	" Number of qps   : 1\t\tTransport type : IB\n"                                                \
	" Connection type : RC\t\tUsing SRQ      : OFF\n"                                              \
	" TX depth        : 128\n"                                                                     \
	" Mtu             : 4096[B]\n"                                                                 \
	" Link type       : IB\n"                                                                      \
	PT_RULE " local address: LID 0x11 QPN 0x0a1b PSN 0x2c3d RKey 0x004e00 VAddr 0x007f0000000000\n" \
	" remote address: LID 0x12 QPN 0x0b2c PSN 0x3d4e RKey 0x005f00 VAddr 0x007f1000000000\n"      \
	PT_RULE " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"  \
	" 65536      5000             23800.00            23750.00\t\t   0.380000\n" PT_RULE

static char *prefix_lines(const char *text, const char *prefix)
{
	size_t cap = strlen(text) * 2 + 4096, n = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		n += (size_t)snprintf(out + n, cap - n, "%s%.*s", prefix, (int)len, p);
		p += len;
	}
	return out;
}

/* Issue case: perftest behind srun -l said "no result table". */
static void perftest_under_srun(void **state)
{
	(void)state;
	char *in = prefix_lines(PT_CLIENT, "1: ");
	cJSON *a = parse_with(ng_parse_perftest, in);
	const cJSON *avg = a->child;
	assert_string_equal(cJSON_GetObjectItem(avg, "metric")->valuestring, "rdma.ib_write_bw.bw_avg");
	assert_int_equal(nsamples(avg), 1);
	cJSON_Delete(a);
	free(in);
}

/* Server (task 0) and client (task 1) interleaved line by line under one
 * srun: split by task, each side's table is whole. */
static void perftest_two_tasks_interleaved(void **state)
{
	(void)state;
	static const char server[] =
	    "\n************************************\n* Waiting for client to connect... *\n"
	    "************************************\n" PT_RULE "                    RDMA_Write BW Test\n"
	    " Dual-port       : OFF\t\tDevice         : mlx5_0\n"
	    " Number of qps   : 1\t\tTransport type : IB\n"
	    " Connection type : RC\t\tUsing SRQ      : OFF\n"
	    " Mtu             : 4096[B]\n"
	    " Link type       : IB\n" PT_RULE
	    " local address: LID 0x12 QPN 0x0b2c PSN 0x3d4e RKey 0x005f00 VAddr 0x007f1000000000\n"
	    " remote address: LID 0x11 QPN 0x0a1b PSN 0x2c3d RKey 0x004e00 VAddr 0x007f0000000000\n" PT_RULE
	    " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
	    " 65536      5000             23000.00            22000.00\t\t   0.352000\n" PT_RULE;
	char *s = prefix_lines(server, "0: "), *c = prefix_lines(PT_CLIENT, "1: ");
	size_t cap = strlen(s) + strlen(c) + 1, n = 0;
	char *in = malloc(cap);
	assert_non_null(in);
	const char *ps = s, *pc = c;
	while (*ps || *pc) {
		for (const char **p = &ps; p; p = p == &ps ? &pc : NULL) {
			const char *nl = strchr(*p, '\n');
			size_t len = nl ? (size_t)(nl - *p) + 1 : strlen(*p);
			memcpy(in + n, *p, len);
			n += len;
			*p += len;
		}
	}
	in[n] = '\0';
	cJSON *a = parse_with(ng_parse_perftest, in);
	const cJSON *avg = a->child;
	assert_int_equal(nsamples(avg), 1);
	/* the client's figure: 23750 MiB/s */
	double v = cJSON_GetArrayItem(cJSON_GetObjectItem(avg, "samples"), 0)->valuedouble;
	assert_true(v > 199.2 && v < 199.3);
	const cJSON *side = cJSON_GetObjectItem(cJSON_GetObjectItem(avg, "detail"), "sample_side");
	assert_string_equal(side->valuestring, "client");
	cJSON_Delete(a);
	free(in);
	free(s);
	free(c);
}

#define NVB_RUN                                                                                    \
	"nvbandwidth Version: v0.8\n"                                                                  \
	"Built from Git version: v0.8\n"                                                               \
	"\n"                                                                                           \
	"Running multinode_device_to_device_memcpy_read_ce.\n"                                         \
	"memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"                                         \
	"           0         1\n"                                                                     \
	" 0       N/A    410.00\n"                                                                     \
	" 1    412.00       N/A\n"                                                                     \
	"\n"                                                                                           \
	"SUM multinode_device_to_device_memcpy_read_ce 822.00\n"

/* Issue case: an ssh host-key line in a multinode log made a second, empty
 * invocation record. */
static void nvbandwidth_ssh_warning_is_no_invocation(void **state)
{
	(void)state;
	cJSON *a = parse_with(ng_parse_nvbandwidth,
	                      "Warning: Permanently added '[gpu-b-02]:2222' (ECDSA) to the list of known hosts.\n" NVB_RUN);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_int_equal(nsamples(a->child), 1);
	const cJSON *l = cJSON_GetObjectItem(cJSON_GetObjectItem(a->child, "detail"), "launcher");
	assert_int_equal(cJSON_GetObjectItem(l, "noise_dropped")->valueint, 1);
	cJSON_Delete(a);
}

static void nvbandwidth_under_mpirun_tags(void **state)
{
	(void)state;
	char *in = prefix_lines(NVB_RUN, "[1,0]<stdout>:");
	cJSON *a = parse_with(ng_parse_nvbandwidth, in);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_int_equal(nsamples(a->child), 1);
	cJSON_Delete(a);
	free(in);
}

#define DCGM_TABLE                                                                                 \
	"+---------------------------+------------------------------------------------+\n"          \
	"| Diagnostic                | Result                                         |\n"          \
	"+===========================+================================================+\n"          \
	"|-----  Metadata  ----------+------------------------------------------------|\n"          \
	"| DCGM Version              | 4.4.2                                          |\n"          \
	"+-----  Integration  -------+------------------------------------------------+\n"          \
	"| pcie                      | Pass                                           |\n"          \
	"|                           | GPU0: Pass                                     |\n"          \
	"+-----  Hardware  ----------+------------------------------------------------+\n"          \
	"| memory                    | Pass                                           |\n"          \
	"|                           | GPU0: Pass                                     |\n"          \
	"+---------------------------+------------------------------------------------+\n"

/* docs/parsers.md once listed `0: | memory | Pass |` as not read. */
static void dcgmi_table_under_srun(void **state)
{
	(void)state;
	char *in = prefix_lines(DCGM_TABLE, "0: ");
	cJSON *a = parse_with(ng_parse_dcgmi, in);
	const cJSON *diag = cJSON_GetObjectItem(a->child, "diag");
	assert_string_equal(cJSON_GetObjectItem(diag, "pcie")->valuestring, "pass");
	assert_string_equal(cJSON_GetObjectItem(diag, "memory")->valuestring, "pass");
	assert_string_equal(cJSON_GetObjectItem(a->child, "outcome")->valuestring, "clean");
	cJSON_Delete(a);
	free(in);
}

static void dcgmi_table_in_journald(void **state)
{
	(void)state;
	char *in = prefix_lines(DCGM_TABLE, "Dec 01 04:00:01 gpu-a-07 nodegate-dcgm[9921]: ");
	cJSON *a = parse_with(ng_parse_dcgmi, in);
	const cJSON *diag = cJSON_GetObjectItem(a->child, "diag");
	assert_string_equal(cJSON_GetObjectItem(diag, "pcie")->valuestring, "pass");
	cJSON_Delete(a);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(strips_each_prefix_style),
	    cmocka_unit_test(leaves_tool_text_alone),
	    cmocka_unit_test(bare_text_passes_byte_for_byte),
	    cmocka_unit_test(interleaved_ranks_become_streams),
	    cmocka_unit_test(output_files_are_streams),
	    cmocka_unit_test(noise_is_dropped_errors_are_kept),
	    cmocka_unit_test(an_unclosed_box_is_not_noise),
	    cmocka_unit_test(too_many_labels_read_whole),
	    cmocka_unit_test(perftest_under_srun),
	    cmocka_unit_test(perftest_two_tasks_interleaved),
	    cmocka_unit_test(nvbandwidth_ssh_warning_is_no_invocation),
	    cmocka_unit_test(nvbandwidth_under_mpirun_tags),
	    cmocka_unit_test(dcgmi_table_under_srun),
	    cmocka_unit_test(dcgmi_table_in_journald),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
