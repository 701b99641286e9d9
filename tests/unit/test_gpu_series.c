/* A falling compute series and its cause from the NVML readings: thermal
 * and power reasons are named, held clocks point away from the GPU, and a
 * series too short or with a hole says nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/gpu.h"
#include "judge/gpu_series.h"

#define N 12

static double samples[N], t_s[N];
static ng_gpu_nvml_point pts[N];
static double work[N];

/* Twelve half-second samples at rate; from sample `from` on, rate x share.
 * NVML read each interval at 1980 MHz, 60 C, 500 W and no reason, changed
 * from `from` on to clock and reasons. */
static void make(double rate, size_t from, double share, double clock, uint64_t reasons)
{
	for (size_t i = 0; i < N; i++) {
		samples[i] = i >= from ? rate * share : rate;
		t_s[i] = 0.5 * (double)(i + 1);
		pts[i] = (ng_gpu_nvml_point){.t_s = 0.5 * (double)i, .sm_clock_mhz = 1980,
		                             .power_w = 500, .temperature_c = 60, .reasons = 0,
		                             .have_reasons = true};
		if (i >= from) {
			pts[i].sm_clock_mhz = clock;
			pts[i].reasons = reasons;
			pts[i].temperature_c = 88;
		}
	}
}

static ng_gpu_series judge(size_t n_pts)
{
	ng_gpu_series s;
	ng_gpu_series_judge(samples, t_s, N, pts, n_pts, 0.1, work, &s);
	return s;
}

static void test_steady(void **state)
{
	(void)state;
	make(700, N, 1, 1980, 0);
	ng_gpu_series s = judge(N);
	assert_true(s.evaluable);
	assert_false(s.falling);
	assert_true(s.drop_percent == 0);
	assert_string_equal(s.cause, "");
}

/* A drop of less than the policy share is no fall. */
static void test_small_drop(void **state)
{
	(void)state;
	make(700, 6, 0.92, 1980, 0);
	assert_false(judge(N).falling);
}

static void test_hw_thermal(void **state)
{
	(void)state;
	make(700, 4, 0.6, 1200, NG_CLK_HW_THERMAL | NG_CLK_GPU_IDLE);
	ng_gpu_series s = judge(N);
	assert_true(s.falling);
	assert_true(fabs(s.drop_percent - 40) < 1e-9);
	assert_true(s.fall_t_s == t_s[3]);
	assert_true(s.reasons == NG_CLK_HW_THERMAL); /* idle is no cause */
	assert_true(s.clock_before_mhz == 1980);
	assert_true(s.clock_during_mhz == 1200);
	assert_false(s.clocks_held);
	assert_true(s.temperature_max_c == 88);
	assert_non_null(strstr(s.cause, "HW thermal slowdown"));
	assert_non_null(strstr(s.cause, "1980 -> 1200 MHz"));
}

/* Reasons active only before the fall are not its cause. */
static void test_reason_before_fall_only(void **state)
{
	(void)state;
	make(700, 8, 0.5, 1980, 0);
	pts[1].reasons = NG_CLK_SW_POWER_CAP;
	ng_gpu_series s = judge(N);
	assert_true(s.falling);
	assert_true(s.reasons == 0);
	assert_true(s.clocks_held);
	assert_non_null(strstr(s.cause, "not the GPU's clocks"));
}

static void test_power_cap_and_brake(void **state)
{
	(void)state;
	make(700, 5, 0.7, 1500, NG_CLK_SW_POWER_CAP | NG_CLK_HW_POWER_BRAKE);
	ng_gpu_series s = judge(N);
	assert_true(s.falling);
	assert_non_null(strstr(s.cause, "SW power cap"));
	assert_non_null(strstr(s.cause, "HW power brake"));
}

static void test_clock_fell_without_reason(void **state)
{
	(void)state;
	make(700, 5, 0.7, 1400, 0);
	ng_gpu_series s = judge(N);
	assert_true(s.falling);
	assert_false(s.clocks_held);
	assert_non_null(strstr(s.cause, "SM clock fell"));
}

static void test_no_nvml(void **state)
{
	(void)state;
	make(700, 5, 0.5, 1980, 0);
	ng_gpu_series s = judge(0);
	assert_true(s.falling);
	assert_int_equal(s.n_points, 0);
	assert_non_null(strstr(s.cause, "cause is unknown"));
}

static void test_too_short_or_holed(void **state)
{
	(void)state;
	make(700, 1, 0.5, 1980, 0);
	ng_gpu_series s;
	ng_gpu_series_judge(samples, t_s, 2, pts, 2, 0.1, work, &s);
	assert_false(s.evaluable);
	assert_false(s.falling);
	samples[5] = NAN;
	s = judge(N);
	assert_false(s.evaluable);
	assert_false(s.falling);
}

static void test_reason_text(void **state)
{
	(void)state;
	char buf[160];
	assert_int_equal(ng_gpu_reason_text(NG_CLK_GPU_IDLE, buf, sizeof buf), 0);
	assert_string_equal(buf, "");
	assert_int_equal(ng_gpu_reason_text(NG_CLK_SW_THERMAL | NG_CLK_HW_SLOWDOWN | 0x2, buf, sizeof buf), 3);
	assert_string_equal(buf, "SW thermal slowdown, HW slowdown, other 0x2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady),
		cmocka_unit_test(test_small_drop),
		cmocka_unit_test(test_hw_thermal),
		cmocka_unit_test(test_reason_before_fall_only),
		cmocka_unit_test(test_power_cap_and_brake),
		cmocka_unit_test(test_clock_fell_without_reason),
		cmocka_unit_test(test_no_nvml),
		cmocka_unit_test(test_too_short_or_holed),
		cmocka_unit_test(test_reason_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
