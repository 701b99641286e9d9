/* The CPU probe, run for fractions of a second: every tier this CPU has
 * computes the reference result exactly, a corrupted core is counted and
 * judged corrupt, and bad options are refused rather than measured. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collect/cpu_features.h"
#include "collect/probe_cpu.h"
#include "core/metric.h"
#include "judge/record.h"

static struct ng_cpu_opts short_opts(const char *tier, unsigned threads)
{
	struct ng_cpu_opts o;
	ng_cpu_opts_default(&o);
	o.duration_s = 0.2;
	o.interval_s = 0.05;
	o.tier = tier;
	o.threads = threads;
	return o;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static ng_verdict judge(const cJSON *rec, double median)
{
	cJSON *base = cJSON_CreateObject();
	cJSON_AddStringToObject(base, "schema", NG_BASELINE_SCHEMA);
	cJSON_AddStringToObject(base, "metric", "cpu.fp64.gflops");
	cJSON_AddStringToObject(base, "unit", "GFLOP/s");
	cJSON_AddNumberToObject(base, "median", median);
	cJSON_AddNumberToObject(base, "cv", 0.02);
	ng_gate_input in = {0};
	ng_err err;
	ng_policy pol;
	ng_policy_default(&pol);
	assert_int_equal(ng_gate_input_record(&in, rec, NULL, &err), 0);
	assert_int_equal(ng_gate_input_baseline(&in, base, &err), 0);
	ng_gate_trace t;
	ng_verdict v = ng_gate_input_judge(&in, &pol, &t);
	ng_gate_input_free(&in);
	cJSON_Delete(base);
	return v;
}

static double sample_max(const cJSON *rec)
{
	const cJSON *s = get(rec, "samples");
	double best = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, s)
		if (x->valuedouble > best)
			best = x->valuedouble;
	return best;
}

static void check_clean(const cJSON *records, const char *tier, unsigned threads)
{
	assert_non_null(records);
	assert_int_equal(cJSON_GetArraySize(records), 1);
	const cJSON *rec = records->child;
	assert_string_equal(get(rec, "metric")->valuestring, "cpu.fp64.gflops");
	assert_string_equal(get(rec, "unit")->valuestring, "GFLOP/s");
	assert_null(get(rec, "reason"));
	const cJSON *samples = get(rec, "samples"), *x;
	assert_true(cJSON_GetArraySize(samples) >= 3);
	cJSON_ArrayForEach(x, samples)
		assert_true(isfinite(x->valuedouble) && x->valuedouble > 0);
	assert_true(cJSON_IsNumber(get(rec, "wrong")));
	assert_int_equal(get(rec, "wrong")->valueint, 0);
	const cJSON *cond = get(rec, "conditions");
	assert_string_equal(get(cond, "tier")->valuestring, tier);
	assert_int_equal(get(cond, "threads")->valueint, (int)threads);
	const cJSON *detail = get(rec, "detail");
	assert_int_equal(cJSON_GetArraySize(get(detail, "threads")), (int)threads);
	assert_int_equal(cJSON_GetArraySize(get(detail, "mhz")), cJSON_GetArraySize(samples));
	const cJSON *t;
	cJSON_ArrayForEach(t, get(detail, "threads")) {
		assert_true(get(t, "reps")->valuedouble > 0);
		assert_int_equal(get(t, "mismatched_reps")->valueint, 0);
	}
	assert_string_equal(get(get(rec, "tool"), "probe")->valuestring, "cpu");
}

static void test_every_tier_is_exact(void **state)
{
	(void)state;
	const char *tiers[8];
	size_t n = ng_cpu_tiers(tiers, 8);
	assert_true(n >= 1);
	assert_string_equal(tiers[n - 1], "portable");
	for (size_t i = 0; i < n; i++) {
		struct ng_cpu_opts o = short_opts(tiers[i], 1);
		ng_err err;
		cJSON *r = ng_probe_cpu_run(&o, &err);
		check_clean(r, tiers[i], 1);
		cJSON_Delete(r);
	}
}

static void test_default_picks_widest(void **state)
{
	(void)state;
	const char *tiers[8];
	ng_cpu_tiers(tiers, 8);
	struct ng_cpu_opts o = short_opts(NULL, 0);
	size_t cores;
	int cpus[4096];
	size_t all = ng_cpu_list(cpus, 4096, &cores);
	assert_true(all >= 1 && cores >= 1 && cores <= all);
	ng_err err;
	cJSON *r = ng_probe_cpu_run(&o, &err);
	check_clean(r, tiers[0], (unsigned)cores);
	/* A clean run is judged on its figures: never corrupt, never invalid. */
	ng_verdict v = judge(r->child, sample_max(r->child));
	assert_int_not_equal(v, NG_V_CORRUPT);
	assert_int_not_equal(v, NG_V_INVALID_INPUT);
	assert_int_not_equal(v, NG_V_NO_MEASUREMENT);
	cJSON_Delete(r);
}

static void test_planted_corruption_is_corrupt(void **state)
{
	(void)state;
	const char *tiers[8];
	size_t n = ng_cpu_tiers(tiers, 8);
	for (size_t k = 0; k < n; k++) {
		struct ng_cpu_opts o = short_opts(tiers[k], 1);
		o.duration_s = 0.1;
		o.interval_s = 0.025;
		o.test_corrupt_thread = 0;
		ng_err err;
		cJSON *r = ng_probe_cpu_run(&o, &err);
		assert_non_null(r);
		const cJSON *rec = r->child;
		assert_int_equal(get(rec, "wrong")->valueint, 1);
		const cJSON *t = get(get(rec, "detail"), "threads")->child;
		assert_true(get(t, "mismatched_reps")->valuedouble > 0);
		assert_int_equal(judge(rec, sample_max(rec)), NG_V_CORRUPT);
		cJSON_Delete(r);
	}
}

static void test_refuses_bad_options(void **state)
{
	(void)state;
	ng_err err;
	struct ng_cpu_opts o = short_opts("no-such-tier", 1);
	assert_null(ng_probe_cpu_run(&o, &err));
	assert_non_null(strstr(err.msg, "no-such-tier"));
	o = short_opts(NULL, 4096);
	assert_null(ng_probe_cpu_run(&o, &err));
	assert_non_null(strstr(err.msg, "threads"));
	o = short_opts(NULL, 1);
	o.interval_s = 1;
	assert_null(ng_probe_cpu_run(&o, &err));
	o = short_opts(NULL, 1);
	o.duration_s = NAN;
	assert_null(ng_probe_cpu_run(&o, &err));
}

/* The kernel lists a feature in /proc/cpuinfo only where the CPU has it and
 * the kernel saves its registers: the same two questions the tiers ask. */
static bool cpuinfo_flag(const char *flag, bool *known)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool found = false;
	*known = false;
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		*known = true;
		for (char *tok = strtok(strchr(line, ':') ? strchr(line, ':') + 1 : line, " \n"); tok;
		     tok = strtok(NULL, " \n"))
			found = found || strcmp(tok, flag) == 0;
		break;
	}
	if (f)
		fclose(f);
	return found;
}

static void test_features_match_the_kernel(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	bool known, avx2, fma, avx512f, sse2;
	sse2 = cpuinfo_flag("sse2", &known);
	if (!known)
		skip();
	avx2 = cpuinfo_flag("avx2", &known);
	fma = cpuinfo_flag("fma", &known);
	avx512f = cpuinfo_flag("avx512f", &known);
	assert_int_equal(ng_cpu_has_sse2(), sse2);
	assert_int_equal(ng_cpu_has_avx2_fma(), avx2 && fma);
	assert_int_equal(ng_cpu_has_avx512f(), avx512f);
	/* asked once, answered the same after */
	assert_int_equal(ng_cpu_has_avx512f(), avx512f);
#else
	assert_false(ng_cpu_has_sse2());
	assert_false(ng_cpu_has_avx2_fma());
	assert_false(ng_cpu_has_avx512f());
#endif
}

static void test_metric_registered(void **state)
{
	(void)state;
	const struct ng_metric *m = ng_metric_lookup("cpu.fp64.gflops");
	assert_non_null(m);
	assert_string_equal(m->unit, "GFLOP/s");
	assert_string_equal(m->domain, "compute");
	assert_true(m->higher_is_better);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_tier_is_exact),
		cmocka_unit_test(test_default_picks_widest),
		cmocka_unit_test(test_planted_corruption_is_corrupt),
		cmocka_unit_test(test_refuses_bad_options),
		cmocka_unit_test(test_metric_registered),
		cmocka_unit_test(test_features_match_the_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
