/* Partial regressions attributed and baselines drifting under their pinned
 * one (judge/attribution.h): which fields the shifted nodes share and the
 * others do not, and when nothing is named. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/policy.h"
#include "judge/attribution.h"

#define MAXN 64
#define MAXP (MAXN * 4)

/* A class of n nodes: each with a NIC firmware, a rack, a GPU model and a
 * container digest; shifted nodes at 0.88 of the median, the others at 1. */
struct fleet {
	size_t n, np;
	bool shifted[MAXN];
	double ratio[MAXN];
	char rack[MAXN][16];
	ng_attr_pair p[MAXP];
};

static void add(struct fleet *f, size_t node, const char *field, const char *value)
{
	f->p[f->np++] = (ng_attr_pair){field, value, node};
}

static void node(struct fleet *f, bool shifted, const char *nic_fw, int rack, const char *digest)
{
	size_t i = f->n++;
	f->shifted[i] = shifted;
	f->ratio[i] = shifted ? 0.88 : 1.0 + 0.001 * (double)(i % 5);
	snprintf(f->rack[i], sizeof f->rack[i], "r%d", rack);
	add(f, i, "ib.devices[].fw_ver", nic_fw);
	add(f, i, "rack", f->rack[i]);
	add(f, i, "gpu.model", "NVIDIA H100 80GB HBM3");
	if (digest)
		add(f, i, "container.digest", digest);
}

/* 12 of 30 nodes on the new NIC firmware, spread over the same racks as the
 * others: the firmware is named, the rack and the GPU model are not. */
static void test_nic_firmware_is_named(void **state)
{
	(void)state;
	struct fleet f = {0};
	for (int i = 0; i < 30; i++)
		node(&f, i < 12, i < 12 ? "22.39.1002" : "22.36.1010", i % 6, "sha256:aa");
	ng_attr_field out[8];
	ng_attribution a = ng_attribute(f.shifted, f.ratio, f.n, f.p, f.np, out, 8);
	assert_int_equal(a.status, NG_ATTR_NAMED);
	assert_int_equal(a.n_shifted, 12);
	assert_int_equal(a.n_others, 18);
	assert_int_equal(a.n_fields, 1);
	assert_string_equal(out[0].field, "ib.devices[].fw_ver");
	assert_string_equal(out[0].value, "22.39.1002");
	assert_int_equal(out[0].shifted_with, 12);
	assert_int_equal(out[0].others_with, 0);
	assert_string_equal(out[0].others_value, "22.36.1010");
	assert_true(fabs(a.shift - -0.12) < 1e-9);
}

/* A field every node holds alike (the GPU model, the container digest) is
 * never named; with nothing else to tell them apart, the answer says so. */
static void test_field_shared_by_all_is_not_named(void **state)
{
	(void)state;
	struct fleet f = {0};
	for (int i = 0; i < 30; i++)
		node(&f, i < 12, "22.36.1010", i % 6, "sha256:aa");
	ng_attr_field out[8];
	ng_attribution a = ng_attribute(f.shifted, f.ratio, f.n, f.p, f.np, out, 8);
	assert_int_equal(a.status, NG_ATTR_NO_SHARED_FIELD);
	assert_int_equal(a.n_fields, 0);
	assert_int_equal(a.more_fields, 0);
}

/* One stray slow node among the shifted (another cause) still leaves the
 * firmware at 12 of 13: >= 90%. Two of the others holding it too (2,
 * over 10% of the 18 others) is not a separation. */
static void test_shares_are_the_stated_rule(void **state)
{
	(void)state;
	struct fleet f = {0};
	for (int i = 0; i < 30; i++)
		node(&f, i < 13, i < 12 ? "22.39.1002" : "22.36.1010", i % 6, "sha256:aa");
	ng_attr_field out[8];
	ng_attribution a = ng_attribute(f.shifted, f.ratio, f.n, f.p, f.np, out, 8);
	assert_int_equal(a.status, NG_ATTR_NAMED);
	assert_int_equal(out[0].shifted_with, 12);
	assert_string_equal(out[0].value, "22.39.1002");

	struct fleet g = {0};
	for (int i = 0; i < 30; i++)
		node(&g, i < 12, i < 14 ? "22.39.1002" : "22.36.1010", i % 6, "sha256:aa");
	a = ng_attribute(g.shifted, g.ratio, g.n, g.p, g.np, out, 8);
	assert_int_equal(a.status, NG_ATTR_NO_SHARED_FIELD);
}

/* Two fields at once (the new firmware came with a new container), a field
 * only the shifted carry (the others lack it: absent is not holding it). */
static void test_two_fields_and_an_absent_one(void **state)
{
	(void)state;
	struct fleet f = {0};
	for (int i = 0; i < 20; i++)
		node(&f, i < 8, i < 8 ? "22.39.1002" : "22.36.1010", i % 4, i < 8 ? "sha256:bb" : NULL);
	ng_attr_field out[8];
	ng_attribution a = ng_attribute(f.shifted, f.ratio, f.n, f.p, f.np, out, 8);
	assert_int_equal(a.status, NG_ATTR_NAMED);
	assert_int_equal(a.n_fields, 2);
	assert_string_equal(out[0].field, "container.digest"); /* by field name */
	assert_string_equal(out[0].value, "sha256:bb");
	assert_null(out[0].others_value);
	assert_string_equal(out[1].field, "ib.devices[].fw_ver");
	/* room for one: the other is counted, not lost silently */
	a = ng_attribute(f.shifted, f.ratio, f.n, f.p, f.np, out, 1);
	assert_int_equal(a.n_fields, 1);
	assert_int_equal(a.more_fields, 1);
}

/* Too few on either side says nothing: one shifted node is a node's fault,
 * and a class that moved whole has no others to tell it from. */
static void test_too_few_on_a_side(void **state)
{
	(void)state;
	struct fleet f = {0};
	for (int i = 0; i < 10; i++)
		node(&f, i < 1, i < 1 ? "22.39.1002" : "22.36.1010", 0, NULL);
	ng_attr_field out[4];
	ng_attribution a = ng_attribute(f.shifted, f.ratio, f.n, f.p, f.np, out, 4);
	assert_int_equal(a.status, NG_ATTR_TOO_FEW_SHIFTED);
	struct fleet g = {0};
	for (int i = 0; i < 10; i++)
		node(&g, i < 8, i < 8 ? "22.39.1002" : "22.36.1010", 0, NULL);
	a = ng_attribute(g.shifted, g.ratio, g.n, g.p, g.np, out, 4);
	assert_int_equal(a.status, NG_ATTR_TOO_FEW_OTHERS);
	assert_int_equal(a.n_fields, 0);
}

/* The node a later quarantine is for: the event's only when it holds every
 * named value. */
static void test_matches_every_named_field(void **state)
{
	(void)state;
	ng_attr_field named[] = {{"ib.devices[].fw_ver", "22.39.1002", 12, 0, "22.36.1010"},
	                         {"container.digest", "sha256:bb", 12, 0, NULL}};
	ng_attr_pair both[] = {{"container.digest", "sha256:bb", 0}, {"rack", "r1", 0},
	                       {"ib.devices[].fw_ver", "22.39.1002", 0}};
	ng_attr_pair old_fw[] = {{"container.digest", "sha256:bb", 0},
	                         {"ib.devices[].fw_ver", "22.36.1010", 0}};
	assert_true(ng_attr_matches(named, 2, both, 3));
	assert_false(ng_attr_matches(named, 2, old_fw, 2));
	assert_true(ng_attr_matches(named, 1, both, 3));
	assert_false(ng_attr_matches(named, 0, both, 3));
	assert_false(ng_attr_matches(named, 1, NULL, 0));
}

static void test_shifted_is_under_the_flag_bar(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	assert_true(ng_attr_shifted(0.88, &pol));
	assert_false(ng_attr_shifted(0.90, &pol));
	assert_false(ng_attr_shifted(1.02, &pol));
	assert_false(ng_attr_shifted(NAN, &pol));
}

/* Drift: a rebuilt median more than admission.drift_fraction (0.05) under
 * the pinned one, in the metric's own direction. */
static void test_drift_below_pinned(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	double drop;
	assert_true(ng_baseline_drifted(300, 282, true, &pol, &drop)); /* 6% down */
	assert_true(fabs(drop - 0.06) < 1e-9);
	assert_false(ng_baseline_drifted(300, 288, true, &pol, &drop)); /* 4%: within */
	assert_false(ng_baseline_drifted(300, 330, true, &pol, &drop)); /* up */
	assert_true(drop < 0);
	/* a latency: higher is worse */
	assert_true(ng_baseline_drifted(10, 10.8, false, &pol, &drop));
	assert_false(ng_baseline_drifted(10, 9, false, &pol, &drop));
	/* nothing to compare is not a drift, and says NaN */
	assert_false(ng_baseline_drifted(NAN, 280, true, &pol, &drop));
	assert_true(isnan(drop));
	assert_false(ng_baseline_drifted(300, 0, true, &pol, &drop));
	pol.drift_fraction = 0.10;
	assert_false(ng_baseline_drifted(300, 282, true, &pol, &drop));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nic_firmware_is_named),
		cmocka_unit_test(test_field_shared_by_all_is_not_named),
		cmocka_unit_test(test_shares_are_the_stated_rule),
		cmocka_unit_test(test_two_fields_and_an_absent_one),
		cmocka_unit_test(test_too_few_on_a_side),
		cmocka_unit_test(test_matches_every_named_field),
		cmocka_unit_test(test_shifted_is_under_the_flag_bar),
		cmocka_unit_test(test_drift_below_pinned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
