/* The fabric rules and parsers: which network NCCL used, port files, risen
 * counters, the flag rule of a group, bisection of a gang, attribution of
 * paired tests and the per-rail split. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/json.h"
#include "judge/fabric.h"
#include "parse/ib_counters.h"
#include "parse/nccl_transport.h"

static cJSON *transport_of(const char *text)
{
	ng_nccl_transport t;
	ng_nccl_transport_read(text, strlen(text), &t);
	cJSON *j = ng_nccl_transport_json(&t);
	assert_non_null(j);
	return j;
}

#define IB_RUN                                                                                     \
	"n01:1234:1234 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>\n" \
	"n01:1234:1234 [0] NCCL INFO Using network IB\n"                                                    \
	"n01:1234:1240 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"          \
	"n01:1234:1240 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/1/GDRDMA\n"

static void test_transport_ib(void **s)
{
	(void)s;
	cJSON *j = transport_of("# nccl-tests version 2.17.8\n" IB_RUN "   1048576 ...\n");
	assert_string_equal(ng_json_get(j, "kind")->valuestring, "ib");
	const cJSON *devs = ng_json_get(j, "ib_devices");
	assert_int_equal(cJSON_GetArraySize(devs), 2);
	assert_string_equal(cJSON_GetArrayItem(devs, 0)->valuestring, "mlx5_0:1");
	assert_true(cJSON_IsTrue(ng_json_get(j, "gdr")));
	const char *hcas[] = {"mlx5_0", "mlx5_1"};
	ng_fabric_path p = {hcas, 2, true};
	char why[256];
	assert_true(ng_fabric_transport_ok(j, &p, why, sizeof why));
	/* One HCA the class does not have: not the intended path. */
	ng_fabric_path only0 = {hcas, 1, false};
	assert_false(ng_fabric_transport_ok(j, &only0, why, sizeof why));
	assert_non_null(strstr(why, "mlx5_1"));
	cJSON_Delete(j);
}

static void test_transport_socket(void **s)
{
	(void)s;
	cJSON *j = transport_of("n01:1:1 [0] NCCL INFO NET/IB : No device found.\n"
	                        "n01:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.1<0>\n"
	                        "n01:1:1 [0] NCCL INFO Using network Socket\n"
	                        "n01:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[0] [send] via NET/Socket/0\n");
	assert_string_equal(ng_json_get(j, "kind")->valuestring, "socket");
	assert_string_equal(cJSON_GetArrayItem(ng_json_get(j, "socket_interfaces"), 0)->valuestring, "eth0");
	char why[256];
	assert_false(ng_fabric_transport_ok(j, NULL, why, sizeof why));
	assert_non_null(strstr(why, "sockets"));
	assert_non_null(strstr(why, "eth0"));
	cJSON_Delete(j);
}

/* "Using network IB" alone is a selection, not a path: no channel lines were
 * printed, so the run is still not shown to use the fabric... unless the
 * channels agree. A log line that merely exists is no evidence. */
static void test_transport_selection_only_and_none(void **s)
{
	(void)s;
	char why[256];
	cJSON *none = transport_of("# nccl-tests version 2.17.8\n  8  2 float sum -1 ...\n");
	assert_string_equal(ng_json_get(none, "kind")->valuestring, "unseen");
	assert_false(ng_fabric_transport_ok(none, NULL, why, sizeof why));
	assert_non_null(strstr(why, "INFO"));
	cJSON_Delete(none);
	/* IB selected, yet the channels went over sockets: the channels decide. */
	cJSON *mixed = transport_of("x NCCL INFO Using network IB\n"
	                            "x NCCL INFO Channel 00 : 0[0] -> 1[0] [send] via NET/Socket/0\n");
	assert_string_equal(ng_json_get(mixed, "kind")->valuestring, "socket");
	cJSON_Delete(mixed);
	/* No GDR on a class that expects it. */
	cJSON *nogdr = transport_of("x NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n"
	                            "x NCCL INFO Channel 00 : 0[0] -> 1[0] [send] via NET/IB/0\n");
	ng_fabric_path gdr = {NULL, 0, true};
	assert_false(ng_fabric_transport_ok(nogdr, &gdr, why, sizeof why));
	assert_non_null(strstr(why, "GPUDirect"));
	cJSON_Delete(nogdr);
}

static void test_port_files(void **s)
{
	(void)s;
	int code;
	char name[32];
	assert_true(ng_ib_parse_state("4: ACTIVE\n", 10, &code, name, sizeof name));
	assert_int_equal(code, 4);
	assert_string_equal(name, "ACTIVE");
	assert_false(ng_ib_parse_state("ACTIVE\n", 7, &code, name, sizeof name));
	assert_false(ng_ib_parse_state("4: ACTIVE\nextra\n", 16, &code, name, sizeof name));
	double g;
	char what[32];
	assert_true(ng_ib_parse_rate("200 Gb/sec (4X HDR)\n", 20, &g, what, sizeof what));
	assert_true(g == 200);
	assert_string_equal(what, "4X HDR");
	assert_true(ng_ib_parse_rate("2.5 Gb/sec (1X SDR)", 19, &g, what, sizeof what));
	assert_true(g == 2.5);
	assert_false(ng_ib_parse_rate("200 GB/sec (4X HDR)", 19, &g, what, sizeof what));
	assert_false(ng_ib_parse_rate("0 Gb/sec", 8, &g, what, sizeof what));
	uint64_t v;
	assert_true(ng_ib_parse_counter("12345\n", 6, &v));
	assert_true(v == 12345);
	assert_true(ng_ib_parse_counter("18446744073709551615", 20, &v));
	assert_false(ng_ib_parse_counter("18446744073709551616", 20, &v));
	assert_false(ng_ib_parse_counter("", 0, &v));
	assert_false(ng_ib_parse_counter("-1", 2, &v));
	assert_false(ng_ib_parse_counter("12 34", 5, &v));
}

static cJSON *snapshot(const char *state, double rate, double symbol, double downed)
{
	char text[512];
	snprintf(text, sizeof text,
	         "{\"ports\":[{\"hca\":\"mlx5_0\",\"port\":1,\"state\":\"%s\",\"rate_gbps\":%g,"
	         "\"counters\":{\"symbol_error\":%g,\"link_downed\":%g}}]}",
	         state, rate, symbol, downed);
	ng_err err;
	cJSON *j = ng_json_parse(text, strlen(text), &err);
	assert_non_null(j);
	return j;
}

static void test_ports_changed(void **s)
{
	(void)s;
	cJSON *a = snapshot("ACTIVE", 400, 3, 0), *same = snapshot("ACTIVE", 400, 3, 0);
	cJSON *ch = ng_fabric_ports_changed(a, same);
	assert_int_equal(cJSON_GetArraySize(ch), 0);
	cJSON_Delete(ch);
	cJSON *risen = snapshot("DOWN", 200, 9, 1);
	ch = ng_fabric_ports_changed(a, risen);
	assert_int_equal(cJSON_GetArraySize(ch), 4); /* state, rate, two counters */
	bool symbol = false;
	for (const cJSON *c = ch->child; c; c = c->next) {
		const cJSON *name = ng_json_get(c, "counter");
		if (cJSON_IsString(name) && strcmp(name->valuestring, "symbol_error") == 0) {
			symbol = true;
			assert_true(ng_json_get(c, "before")->valuedouble == 3);
			assert_true(ng_json_get(c, "after")->valuedouble == 9);
		}
	}
	assert_true(symbol);
	cJSON_Delete(ch);
	cJSON_Delete(a);
	cJSON_Delete(same);
	cJSON_Delete(risen);
}

static void test_judge_bw(void **s)
{
	(void)s;
	double m;
	double ok[] = {180, 181, 179};
	assert_int_equal(ng_fabric_judge_bw(ok, 3, 180, 0.9, 0, &m), NG_FT_PASS);
	assert_true(m == 180);
	double slow[] = {150, 151, 149};
	assert_int_equal(ng_fabric_judge_bw(slow, 3, 180, 0.9, 0, &m), NG_FT_SLOW);
	assert_int_equal(ng_fabric_judge_bw(ok, 3, 180, 0.9, 2, &m), NG_FT_SLOW);
	assert_int_equal(ng_fabric_judge_bw(ok, 0, 180, 0.9, 0, &m), NG_FT_UNMEASURED);
	assert_int_equal(ng_fabric_judge_bw(ok, 3, NAN, 0.9, 0, &m), NG_FT_UNMEASURED);
	/* Exactly at the bar is not slow (admission's rule). */
	double at[] = {162};
	assert_int_equal(ng_fabric_judge_bw(at, 1, 180, 0.9, 0, &m), NG_FT_PASS);
}

/* Runs the bisection against a gang where bad[] nodes make any test they are
 * in slow and dead[] nodes make it measure nothing. Returns the rounds. */
static unsigned simulate(ng_fabric_bisect *b, const bool *bad, const bool *dead, size_t *tests_run)
{
	size_t round[256];
	size_t k;
	*tests_run = 0;
	while ((k = ng_fabric_bisect_next(b, round, 256)) > 0) {
		for (size_t i = 0; i < k; i++) {
			ng_fb_test *t = &b->tests[round[i]];
			size_t n = t->n + (t->helper != SIZE_MAX);
			/* Tests of one round share no node. */
			for (size_t j = 0; j < i; j++) {
				ng_fb_test *u = &b->tests[round[j]];
				size_t un = u->n + (u->helper != SIZE_MAX);
				for (size_t x = 0; x < n; x++)
					for (size_t y = 0; y < un; y++)
						assert_true(t->nodes[x] != u->nodes[y]);
			}
			ng_fabric_outcome o = NG_FT_PASS;
			for (size_t x = 0; x < n; x++) {
				size_t node = t->nodes[x];
				if (node < b->n_nodes && dead && dead[node])
					o = NG_FT_UNMEASURED;
				else if (node < b->n_nodes && bad[node] && o == NG_FT_PASS)
					o = NG_FT_SLOW;
			}
			ng_fabric_bisect_report(b, round[i], o);
			(*tests_run)++;
		}
	}
	ng_fabric_bisect_finish(b);
	return b->rounds;
}

static void test_bisect_one_in_64(void **s)
{
	(void)s;
	for (size_t culprit = 0; culprit < 64; culprit++) {
		bool bad[64] = {0};
		bad[culprit] = true;
		ng_fabric_bisect b;
		assert_int_equal(ng_fabric_bisect_init(&b, 64, 0), 0);
		size_t tests;
		unsigned rounds = simulate(&b, bad, NULL, &tests);
		assert_int_equal(rounds, 7); /* 64, 32, 16, 8, 4, 2, then beside a good node */
		for (size_t i = 0; i < 64; i++)
			assert_int_equal(b.state[i], i == culprit ? NG_FB_SLOW : NG_FB_PASSED);
		ng_fabric_bisect_free(&b);
	}
}

/* With switch domains known, a lone suspect is tested beside a known-good
 * node of its own leaf: only the node changes, not the path through the
 * spine. Without them, beside the first known-good node. */
static void test_bisect_helper_same_leaf(void **s)
{
	(void)s;
	for (int with_leaves = 0; with_leaves < 2; with_leaves++) {
		bool bad[8] = {0};
		bad[5] = true;
		size_t leaf[8] = {0, 0, 0, 0, 1, 1, 1, 1};
		ng_fabric_bisect b;
		assert_int_equal(ng_fabric_bisect_init(&b, 8, 0), 0);
		if (with_leaves)
			assert_int_equal(ng_fabric_bisect_set_leaves(&b, leaf), 0);
		size_t tests;
		simulate(&b, bad, NULL, &tests);
		size_t lone = 0;
		for (size_t i = 0; i < b.n_tests; i++) {
			const ng_fb_test *t = &b.tests[i];
			if (t->helper == SIZE_MAX)
				continue;
			lone++;
			if (with_leaves)
				assert_int_equal(leaf[t->helper], leaf[t->nodes[0]]);
			else /* the first known-good nodes free in the round: n01, n02, across the spine */
				assert_true(t->helper < 2);
		}
		assert_int_equal(lone, 2); /* n05 and n06's pair partner, each beside a good node */
		assert_int_equal(b.state[5], NG_FB_SLOW);
		assert_int_equal(b.state[4], NG_FB_PASSED);
		ng_fabric_bisect_free(&b);
	}
}

static void test_bisect_healthy_is_one_round(void **s)
{
	(void)s;
	bool bad[8] = {0};
	ng_fabric_bisect b;
	assert_int_equal(ng_fabric_bisect_init(&b, 8, 0), 0);
	size_t tests;
	assert_int_equal(simulate(&b, bad, NULL, &tests), 1);
	assert_int_equal(tests, 1);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(b.state[i], NG_FB_PASSED);
	ng_fabric_bisect_free(&b);
}

/* Odd sizes, two bad nodes and a node that does not answer. */
static void test_bisect_odd_two_bad_and_dead(void **s)
{
	(void)s;
	bool bad[13] = {0}, dead[13] = {0};
	bad[2] = bad[11] = true;
	dead[7] = true;
	ng_fabric_bisect b;
	assert_int_equal(ng_fabric_bisect_init(&b, 13, 0), 0);
	size_t tests;
	simulate(&b, bad, dead, &tests);
	for (size_t i = 0; i < 13; i++) {
		enum ng_fb_node want = bad[i] ? NG_FB_SLOW : dead[i] ? NG_FB_NO_ANSWER : NG_FB_PASSED;
		assert_int_equal(b.state[i], want);
	}
	ng_fabric_bisect_free(&b);
}

/* Every node slow and no reference peer: nothing can be told apart, and no
 * node is passed that no measured test passed: all are held. */
static void test_bisect_nothing_good_holds(void **s)
{
	(void)s;
	bool bad[4] = {true, true, true, true};
	ng_fabric_bisect b;
	assert_int_equal(ng_fabric_bisect_init(&b, 4, 0), 0);
	size_t tests;
	simulate(&b, bad, NULL, &tests);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(b.state[i], NG_FB_HELD);
	ng_fabric_bisect_free(&b);
	/* With one reference peer, each bad node is found beside it. */
	assert_int_equal(ng_fabric_bisect_init(&b, 4, 1), 0);
	simulate(&b, bad, NULL, &tests);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(b.state[i], NG_FB_SLOW);
	ng_fabric_bisect_free(&b);
}

static void test_attribution(void **s)
{
	(void)s;
	const char *why;
	assert_int_equal(ng_fabric_attribute(NG_FT_SLOW, true, NG_FT_SLOW, NG_FT_PASS, &why),
	                 NG_BLAME_CANDIDATE);
	assert_int_equal(ng_fabric_attribute(NG_FT_SLOW, true, NG_FT_PASS, NG_FT_UNMEASURED, &why),
	                 NG_BLAME_PEER_A);
	assert_int_equal(ng_fabric_attribute(NG_FT_PASS, true, NG_FT_SLOW, NG_FT_UNMEASURED, &why),
	                 NG_BLAME_PEER_B);
	assert_int_equal(ng_fabric_attribute(NG_FT_PASS, true, NG_FT_PASS, NG_FT_UNMEASURED, &why),
	                 NG_BLAME_NONE);
	assert_int_equal(ng_fabric_attribute(NG_FT_SLOW, true, NG_FT_SLOW, NG_FT_SLOW, &why),
	                 NG_BLAME_UNKNOWN);
	assert_int_equal(ng_fabric_attribute(NG_FT_SLOW, true, NG_FT_SLOW, NG_FT_UNMEASURED, &why),
	                 NG_BLAME_UNKNOWN);
	assert_int_equal(ng_fabric_attribute(NG_FT_UNMEASURED, true, NG_FT_PASS, NG_FT_PASS, &why),
	                 NG_BLAME_UNKNOWN);
	assert_int_equal(ng_fabric_attribute(NG_FT_SLOW, false, NG_FT_UNMEASURED, NG_FT_UNMEASURED, &why),
	                 NG_BLAME_UNKNOWN);
}

static void test_rails(void **s)
{
	(void)s;
	double r[8] = {390, 391, 389, 390, 195, 390, 392, 388};
	bool slow[8], un[8];
	assert_int_equal(ng_fabric_rail_outliers(r, 8, 0.9, 0, slow, un), 1);
	assert_true(slow[4]);
	double healthy[8] = {390, 391, 389, 390, 385, 390, 392, 388};
	assert_int_equal(ng_fabric_rail_outliers(healthy, 8, 0.9, 0, slow, un), 0);
	/* A floor above every rail flags all of them. */
	assert_int_equal(ng_fabric_rail_outliers(healthy, 8, 0.9, 500, slow, un), 8);
	double missing[3] = {390, NAN, 390};
	assert_int_equal(ng_fabric_rail_outliers(missing, 3, 0.9, 0, slow, un), 0);
	assert_true(un[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transport_ib),
		cmocka_unit_test(test_transport_socket),
		cmocka_unit_test(test_transport_selection_only_and_none),
		cmocka_unit_test(test_port_files),
		cmocka_unit_test(test_ports_changed),
		cmocka_unit_test(test_judge_bw),
		cmocka_unit_test(test_bisect_one_in_64),
		cmocka_unit_test(test_bisect_helper_same_leaf),
		cmocka_unit_test(test_bisect_healthy_is_one_round),
		cmocka_unit_test(test_bisect_odd_two_bad_and_dead),
		cmocka_unit_test(test_bisect_nothing_good_holds),
		cmocka_unit_test(test_attribution),
		cmocka_unit_test(test_rails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
