/* Each GPU or link against the median of its siblings: the outlier stands
 * out, never pulls its own bar down, and unmeasured items take no part. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "judge/gpu_siblings.h"

static void run(const double *v, size_t n, double fraction, ng_gpu_sibling *out)
{
	double work[16];
	assert_true(n <= 16);
	ng_gpu_siblings(v, n, fraction, work, out);
}

static void test_all_alike(void **state)
{
	(void)state;
	double v[8] = {55, 55, 55.5, 54.8, 55, 55.2, 54.9, 55};
	ng_gpu_sibling s[8];
	run(v, 8, 0.9, s);
	for (int i = 0; i < 8; i++) {
		assert_true(s[i].evaluable);
		assert_false(s[i].outlier);
		assert_int_equal(s[i].n_siblings, 7);
		assert_true(fabs(s[i].percent - 100) < 2);
	}
}

/* One GPU in an x8 slot: half the host-to-device rate of its seven siblings. */
static void test_one_x8_slot(void **state)
{
	(void)state;
	double v[8] = {55, 27.5, 55, 55, 55, 55, 55, 55};
	ng_gpu_sibling s[8];
	run(v, 8, 0.9, s);
	assert_true(s[1].outlier);
	assert_true(s[1].siblings_median == 55);
	assert_true(fabs(s[1].percent - 50) < 1e-9);
	for (int i = 0; i < 8; i++)
		if (i != 1) {
			assert_false(s[i].outlier);
			/* The slow one is among their siblings, but a median ignores it. */
			assert_true(s[i].siblings_median == 55);
		}
}

/* Just under and just at the bar. */
static void test_bar_edges(void **state)
{
	(void)state;
	double v[3] = {90, 100, 100};
	ng_gpu_sibling s[3];
	run(v, 3, 0.9, s);
	assert_false(s[0].outlier); /* 90 is not below 0.9 x 100 */
	v[0] = 89.999;
	run(v, 3, 0.9, s);
	assert_true(s[0].outlier);
}

static void test_unmeasured_items(void **state)
{
	(void)state;
	double v[5] = {NAN, 100, 0, 100, 40};
	ng_gpu_sibling s[5];
	run(v, 5, 0.9, s);
	assert_false(s[0].evaluable);
	assert_false(s[0].outlier);
	assert_false(s[2].evaluable);
	assert_int_equal(s[1].n_siblings, 2); /* 100 and 40: NaN and 0 take no part */
	assert_true(s[4].outlier);
	assert_int_equal(s[4].n_siblings, 2);
	assert_true(s[4].siblings_median == 100);
}

static void test_alone_and_pair(void **state)
{
	(void)state;
	double one[1] = {700};
	ng_gpu_sibling s[2];
	run(one, 1, 0.9, s);
	assert_false(s[0].evaluable);
	assert_true(isnan(s[0].siblings_median));
	assert_false(s[0].outlier);
	double two[2] = {700, 350};
	run(two, 2, 0.9, s);
	assert_false(s[0].outlier);
	assert_true(s[1].outlier);
	assert_true(fabs(s[0].percent - 200) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_alike),
		cmocka_unit_test(test_one_x8_slot),
		cmocka_unit_test(test_bar_edges),
		cmocka_unit_test(test_unmeasured_items),
		cmocka_unit_test(test_alone_and_pair),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
