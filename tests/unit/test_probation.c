/* Probation's rule (judge/probation.h): what one job says of a released node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "judge/probation.h"

static ng_probation_job clean(void)
{
	return (ng_probation_job){.outcome = "ok", .runtime_s = -1, .history_min = 3,
	                          .straggler_ratio = 1.5};
}

static void test_clean_job_passes(void **state)
{
	(void)state;
	char why[256];
	ng_probation_job j = clean();
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
	assert_non_null(strstr(why, "not known"));
	j.outcome = "transient";
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
}

static void test_faults_fail(void **state)
{
	(void)state;
	char why[256];
	ng_probation_job j = clean();
	j.drained = true;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_FAIL);
	assert_non_null(strstr(why, "drained"));
	j = clean();
	j.outcome = "degraded";
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_FAIL);
	j = clean();
	j.new_xids = 2;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_FAIL);
	assert_non_null(strstr(why, "2 Xids"));
}

static void test_unjudged_check_waits(void **state)
{
	(void)state;
	char why[256];
	ng_probation_job j = clean();
	j.outcome = "unknown";
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_WAIT);
	j.outcome = "n/a";
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_WAIT);
	j.outcome = NULL;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_WAIT);
}

static void test_straggler_against_history(void **state)
{
	(void)state;
	char why[256];
	const double hist[] = {1000, 1100, 900, 1050};
	ng_probation_job j = clean();
	j.history = hist;
	j.n_history = 4;
	j.runtime_s = 1500; /* 1.46 x the median 1025 */
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
	j.runtime_s = 1600; /* 1.56 x */
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_FAIL);
	assert_non_null(strstr(why, "straggler"));
	assert_non_null(strstr(why, "1025"));
	/* too little history: not compared */
	j.n_history = 2;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
	assert_non_null(strstr(why, "not compared"));
	/* a history of zero-second runs is no yardstick */
	const double zero[] = {0, 0, 0};
	j.history = zero;
	j.n_history = 3;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
}

/* A node slower than its gang peers in the same job fails, whatever the
 * job's history says; within the limit the sentence names the gang. */
static void test_straggler_in_its_gang(void **state)
{
	(void)state;
	char why[320];
	ng_probation_job j = clean();
	j.gang_step = "shard";
	j.gang_peers = 3;
	j.gang_own_s = 600;
	j.gang_median_s = 300;
	j.gang_ratio = 2.0;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_FAIL);
	assert_string_equal(why, "a straggler in its gang: step shard took 600 s here, 2.00 times the "
	                         "median 300 s of its 3 peers in the same job (limit 1.50)");
	j.gang_ratio = 1.2;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
	assert_non_null(strstr(why, "step shard 1.20 times its 3 gang peers' median"));
	/* no peers: no gang, whatever the ratio says */
	j.gang_peers = 0;
	j.gang_ratio = 5;
	assert_int_equal(ng_probation_judge(&j, why, sizeof why), NG_PROBATION_PASS);
	assert_null(strstr(why, "gang"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_job_passes),
		cmocka_unit_test(test_faults_fail),
		cmocka_unit_test(test_unjudged_check_waits),
		cmocka_unit_test(test_straggler_against_history),
		cmocka_unit_test(test_straggler_in_its_gang),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
