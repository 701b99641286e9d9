/* Repeat offenders (judge/lemon.h): K quarantines in D days, by node and by
 * GPU, a replaced GPU starting its own count, and the time between them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "judge/lemon.h"

#define DAY 86400
#define NOW 2000000000
#define GPU_A "GPU-aaaaaaaa-0000-4000-8000-000000000001"
#define GPU_B "GPU-bbbbbbbb-0000-4000-8000-000000000002"

static ng_lemon_case at(int64_t days_ago, const char *domain, const char *uuid, bool mine)
{
	ng_lemon_case c = {.opened_at = NOW - days_ago * DAY, .domain = domain, .metric = "m",
	                   .this_node = mine};
	if (uuid) {
		c.uuid[0] = uuid;
		c.n_uuids = 1;
	}
	return c;
}

static void test_three_in_thirty_days(void **state)
{
	(void)state;
	ng_lemon_verdict v;
	ng_lemon_case two[] = {at(20, "compute", NULL, true), at(1, "memory", NULL, true)};
	ng_lemon_judge(two, 2, NOW, 3, 30, &v);
	assert_false(v.lemon);
	assert_int_equal(v.node_count, 2);
	assert_true(v.mtbi_s == 19.0 * DAY);
	ng_lemon_case three[] = {at(20, "compute", NULL, true), at(10, "compute", NULL, true),
	                         at(0, "compute", NULL, true)};
	ng_lemon_judge(three, 3, NOW, 3, 30, &v);
	assert_true(v.lemon);
	assert_int_equal(v.node_count, 3);
	assert_true(v.mtbi_s == 10.0 * DAY);
	assert_non_null(strstr(v.why, "3 quarantines in 30 days"));
	assert_non_null(strstr(v.replace, "compute"));
}

static void test_old_quarantines_leave_the_window(void **state)
{
	(void)state;
	ng_lemon_verdict v;
	ng_lemon_case c[] = {at(45, "compute", NULL, true), at(10, "compute", NULL, true),
	                     at(0, "compute", NULL, true)};
	ng_lemon_judge(c, 3, NOW, 3, 30, &v);
	assert_false(v.lemon);
	assert_int_equal(v.node_count, 2);
	/* the time between incidents counts every one */
	assert_true(v.mtbi_s == 22.5 * DAY);
}

static void test_replaced_gpu_starts_its_own_count(void **state)
{
	(void)state;
	ng_lemon_verdict v;
	/* two quarantines blamed GPU A, which has since left the node; GPU B's
	 * first is no lemon */
	ng_lemon_case c[] = {at(20, "compute", GPU_A, true), at(10, "compute", GPU_A, true),
	                     at(0, "compute", GPU_B, true)};
	c[0].part_gone = c[1].part_gone = true;
	ng_lemon_judge(c, 3, NOW, 3, 30, &v);
	assert_false(v.lemon);
	assert_int_equal(v.node_count, 1);
	assert_string_equal(v.gpu, GPU_B);
	assert_int_equal(v.gpu_count, 1);
}

static void test_gpu_counted_across_nodes(void **state)
{
	(void)state;
	ng_lemon_verdict v;
	/* GPU A failed twice in another node before it was moved here */
	ng_lemon_case c[] = {at(25, "memory", GPU_A, false), at(15, "memory", GPU_A, false),
	                     at(0, "memory", GPU_A, true)};
	ng_lemon_judge(c, 3, NOW, 3, 30, &v);
	assert_true(v.lemon);
	assert_int_equal(v.node_count, 1);
	assert_int_equal(v.gpu_count, 3);
	assert_non_null(strstr(v.why, GPU_A));
	assert_non_null(strstr(v.replace, "replace GPU " GPU_A));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_in_thirty_days),
		cmocka_unit_test(test_old_quarantines_leave_the_window),
		cmocka_unit_test(test_replaced_gpu_starts_its_own_count),
		cmocka_unit_test(test_gpu_counted_across_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
