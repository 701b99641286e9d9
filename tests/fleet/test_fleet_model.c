/* The fleet model (tools/fleet/fleet_model.h): draws are reproducible and
 * keyed, healthy draws have the configured medians and cvs, and every planted
 * fault shows the way the header says it does. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "fleet_model.h"

static ng_fleet_spec spec(size_t nodes, size_t runs, uint64_t seed)
{
	ng_fleet_spec s;
	ng_fleet_spec_default(&s, nodes, runs, seed);
	return s;
}

static bool same_probe(const ng_fleet_probe *a, const ng_fleet_probe *b)
{
	if (a->n_metrics != b->n_metrics || a->cls != b->cls || strcmp(a->software, b->software) != 0)
		return false;
	for (size_t m = 0; m < a->n_metrics; m++) {
		if (a->m[m].n_samples != b->m[m].n_samples || a->m[m].measured != b->m[m].measured)
			return false;
		if (memcmp(a->m[m].samples, b->m[m].samples, a->m[m].n_samples * sizeof(double)) != 0)
			return false;
		if (!(a->m[m].wrong == b->m[m].wrong || (isnan(a->m[m].wrong) && isnan(b->m[m].wrong))))
			return false;
	}
	return true;
}

static void test_reproducible_and_keyed(void **state)
{
	(void)state;
	ng_fleet_spec a = spec(500, 30, 7), b = spec(500, 30, 7), c = spec(500, 30, 8);
	ng_fleet_probe p, q;
	/* same key, same numbers, whatever was drawn in between */
	ng_fleet_draw(&a, 123, 4, 0, &p);
	ng_fleet_draw(&a, 9, 9, 1, &q);
	ng_fleet_draw(&b, 123, 4, 0, &q);
	assert_true(same_probe(&p, &q));
	/* a confirmation of the same run sees fresh noise */
	ng_fleet_draw(&a, 123, 4, 1, &q);
	assert_false(same_probe(&p, &q));
	/* another run, another node, another seed: other numbers */
	ng_fleet_draw(&a, 123, 5, 0, &q);
	assert_false(same_probe(&p, &q));
	ng_fleet_draw(&a, 124, 4, 0, &q);
	assert_false(same_probe(&p, &q));
	ng_fleet_draw(&c, 123, 4, 0, &q);
	assert_false(same_probe(&p, &q));
	/* the truth is a function of (spec, node) */
	ng_fleet_truth t1, t2;
	ng_fleet_truth_of(&a, 77, &t1);
	ng_fleet_truth_of(&b, 77, &t2);
	assert_memory_equal(&t1, &t2, sizeof t1);
	/* the generator's uniform is in (0, 1) and keyed */
	double u = ng_fleet_uniform(1, 2, 3, 4, 5);
	assert_true(u > 0 && u < 1);
	assert_true(u == ng_fleet_uniform(1, 2, 3, 4, 5));
	assert_true(u != ng_fleet_uniform(1, 2, 3, 4, 6));
}

/* Healthy nodes of class 0 before the regression: the run median sits at the
 * class median (node and run spreads average out), and the spread of samples
 * within a run is the configured cv. */
static void test_medians_and_cvs(void **state)
{
	(void)state;
	ng_fleet_spec s = spec(2000, 30, 11);
	s.transient_harness_p = 0;
	ng_fleet_probe p;
	for (size_t m = 0; m < s.n_metrics; m++) {
		double sum_level = 0, sum_cv = 0;
		size_t runs = 0;
		for (size_t node = 0; node < s.classes[0].n_nodes; node += 3) {
			ng_fleet_truth t;
			ng_fleet_truth_of(&s, node, &t);
			if (t.fault != NG_FLEET_HEALTHY)
				continue;
			for (size_t r = 0; r < 10; r++) {
				ng_fleet_draw_truth(&s, &t, r, 0, &p);
				const ng_fleet_result *x = &p.m[m];
				assert_true(x->measured);
				assert_int_equal(x->n_samples, s.samples);
				assert_true(x->wrong == 0);
				double mean = 0, ss = 0;
				for (size_t k = 0; k < x->n_samples; k++)
					mean += x->samples[k];
				mean /= (double)x->n_samples;
				for (size_t k = 0; k < x->n_samples; k++)
					ss += (x->samples[k] - mean) * (x->samples[k] - mean);
				sum_level += mean / s.classes[0].median[m];
				sum_cv += sqrt(ss / (double)(x->n_samples - 1)) / mean;
				runs++;
			}
		}
		double level = sum_level / (double)runs, cv = sum_cv / (double)runs;
		assert_true(fabs(level - 1.0) < 0.005);
		/* the mean of sample sds runs a little under sigma (c4 ~ 0.98 at 16) */
		assert_true(fabs(cv / s.classes[0].cv[m] - 1.0) < 0.05);
	}
}

static void test_planted_counts(void **state)
{
	(void)state;
	ng_fleet_spec s = spec(1000, 30, 3);
	size_t seen[NG_FLEET_FAULT_COUNT] = {0};
	for (size_t node = 0; node < s.n_nodes; node++) {
		ng_fleet_truth t;
		ng_fleet_truth_of(&s, node, &t);
		seen[t.fault]++;
		if (t.fault != NG_FLEET_HEALTHY) {
			assert_true(t.onset >= s.onset_min && t.onset < s.onset_max);
			assert_true(t.metric < s.n_metrics);
		}
		if (t.fault == NG_FLEET_SLOW)
			assert_true(t.severity >= 0.03 && t.severity <= 0.30);
	}
	for (int f = 0; f < NG_FLEET_FAULT_COUNT; f++)
		assert_int_equal(seen[f], s.fault_count[f]);
	assert_int_equal(s.fault_count[NG_FLEET_SLOW], 10);
	assert_int_equal(s.fault_count[NG_FLEET_CORRUPT], 5);
	assert_string_equal(ng_fleet_fault_name(NG_FLEET_BIMODAL), "bimodal");
}

/* The first node of a kind, with its truth. */
static size_t find(const ng_fleet_spec *s, ng_fleet_fault f, ng_fleet_truth *t)
{
	for (size_t node = 0; node < s->n_nodes; node++) {
		ng_fleet_truth_of(s, node, t);
		if (t->fault == f)
			return node;
	}
	fail_msg("no %s node planted", ng_fleet_fault_name(f));
	return 0;
}

static double median16(const ng_fleet_result *r)
{
	double w[NG_FLEET_SAMPLES_MAX];
	memcpy(w, r->samples, r->n_samples * sizeof *w);
	for (size_t i = 1; i < r->n_samples; i++)
		for (size_t j = i; j > 0 && w[j - 1] > w[j]; j--) {
			double x = w[j];
			w[j] = w[j - 1], w[j - 1] = x;
		}
	return (w[r->n_samples / 2 - 1] + w[r->n_samples / 2]) / 2;
}

static void test_faults_show(void **state)
{
	(void)state;
	ng_fleet_spec s = spec(1000, 30, 5);
	s.transient_harness_p = 0;
	ng_fleet_truth t;
	ng_fleet_probe p;

	/* SLOW: the metric runs about (1 - severity) of the node's level from onset on */
	find(&s, NG_FLEET_SLOW, &t);
	double before = 0, after = 0;
	size_t nb = 0, na = 0;
	for (size_t r = 0; r < 30; r++) {
		ng_fleet_draw_truth(&s, &t, r, 0, &p);
		double v = median16(&p.m[t.metric]) / s.classes[t.cls].median[t.metric];
		if (t.metric == s.regression_metric && r >= s.regression_run)
			v /= 1 - s.regression_drop;
		if (t.metric == s.degraded_metric && ng_fleet_in_degraded_class(&s, &t, r))
			v /= 1 - s.degraded_drop;
		if (r < t.onset)
			before += v, nb++;
		else
			after += v, na++;
	}
	assert_true(fabs((after / (double)na) / (before / (double)nb) - (1 - t.severity)) < 0.04);
	assert_true(ng_fleet_sick(&s, &t, t.onset) && !ng_fleet_sick(&s, &t, t.onset - 1));

	/* LOAD: slow only when loaded (a confirmation, or the weekly long run) */
	find(&s, NG_FLEET_LOAD, &t);
	size_t r0 = t.onset;
	while (ng_fleet_loaded(&s, r0, 0))
		r0++;
	ng_fleet_probe q;
	ng_fleet_draw_truth(&s, &t, r0, 0, &p);
	ng_fleet_draw_truth(&s, &t, r0, 1, &q);
	assert_false(p.loaded);
	assert_true(q.loaded);
	double ratio = median16(&q.m[t.metric]) / median16(&p.m[t.metric]);
	assert_true(ratio < 1 - t.severity + 0.08 && ratio > 1 - t.severity - 0.08);
	assert_true(ng_fleet_loaded(&s, 6, 0) && !ng_fleet_loaded(&s, 5, 0));

	/* CORRUPT: wrong > 0 in some runs after onset, never before */
	find(&s, NG_FLEET_CORRUPT, &t);
	size_t wrong_runs = 0;
	for (size_t r = 0; r < 30; r++) {
		ng_fleet_draw_truth(&s, &t, r, 0, &p);
		if (r < t.onset)
			assert_true(p.m[t.metric].wrong == 0);
		wrong_runs += p.m[t.metric].wrong > 0;
	}
	assert_true(wrong_runs > 0);

	/* HARNESS: some runs measure nothing, and the hardware is healthy */
	find(&s, NG_FLEET_HARNESS, &t);
	size_t unmeasured = 0;
	for (size_t r = t.onset; r < 30; r++) {
		ng_fleet_draw_truth(&s, &t, r, 0, &p);
		if (!p.m[t.metric].measured) {
			unmeasured++;
			const ng_fleet_result *x = &p.m[t.metric];
			assert_true(x->n_samples == 0 || x->samples[0] == 0 || isnan(x->wrong));
		}
	}
	assert_true(unmeasured > 0);
	assert_false(ng_fleet_sick(&s, &t, 29));

	/* BIMODAL: in runs where it shows, a share of samples sits in a low mode */
	find(&s, NG_FLEET_BIMODAL, &t);
	size_t low = 0;
	for (size_t r = t.onset; r < 30; r++) {
		ng_fleet_draw_truth(&s, &t, r, 0, &p);
		double med = s.classes[t.cls].median[t.metric];
		for (size_t k = 0; k < p.m[t.metric].n_samples; k++)
			low += p.m[t.metric].samples[k] < med * (1 - t.severity / 2);
	}
	assert_true(low > 0);
}

static void test_fleet_events(void **state)
{
	(void)state;
	ng_fleet_spec s = spec(400, 30, 9);
	s.transient_harness_p = 0;
	ng_fleet_truth t;
	ng_fleet_probe p, q;
	/* a healthy node of the degraded class */
	size_t node = s.n_nodes - 1;
	for (ng_fleet_truth_of(&s, node, &t); t.fault != NG_FLEET_HEALTHY; ng_fleet_truth_of(&s, node, &t))
		node--;
	assert_int_equal(t.cls, s.degraded_class);
	assert_int_equal(t.fault, NG_FLEET_HEALTHY);
	/* the software change: a new identity and a drop in the regressed metric */
	ng_fleet_draw_truth(&s, &t, s.regression_run - 1, 0, &p);
	ng_fleet_draw_truth(&s, &t, s.regression_run, 0, &q);
	assert_string_equal(p.software, "sw-2026.10");
	assert_string_equal(q.software, "sw-2026.11");
	size_t m = s.regression_metric;
	double r = median16(&q.m[m]) / median16(&p.m[m]);
	assert_true(r > 0.80 && r < 0.95);
	/* the class degraded together: sick from degraded_run on */
	assert_false(ng_fleet_sick(&s, &t, s.degraded_run - 1));
	assert_true(ng_fleet_sick(&s, &t, s.degraded_run));
	ng_fleet_draw_truth(&s, &t, s.degraded_run - 1, 0, &p);
	ng_fleet_draw_truth(&s, &t, s.degraded_run, 0, &q);
	m = s.degraded_metric;
	r = median16(&q.m[m]) / median16(&p.m[m]);
	assert_true(r > 0.6 && r < 0.8);
}

static void test_init_refuses(void **state)
{
	(void)state;
	ng_fleet_spec s = spec(100, 30, 1);
	char why[160];
	s.samples = 0;
	assert_int_equal(ng_fleet_init(&s, why, sizeof why), -1);
	assert_non_null(strstr(why, "samples"));
	s = spec(100, 30, 1);
	s.fault_share[NG_FLEET_SLOW] = 0.9;
	s.fault_share[NG_FLEET_LOAD] = 0.2;
	assert_int_equal(ng_fleet_init(&s, why, sizeof why), -1);
	s = spec(100, 30, 1);
	s.classes[1].median[2] = 0;
	assert_int_equal(ng_fleet_init(&s, NULL, 0), -1);
	s = spec(100, 30, 1);
	assert_int_equal(ng_fleet_init(&s, why, sizeof why), 0);
	assert_int_equal(ng_fleet_metric_index(&s, "nccl.all_reduce.busbw"), 3);
	assert_int_equal(ng_fleet_metric_index(&s, "nope"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reproducible_and_keyed),
		cmocka_unit_test(test_medians_and_cvs),
		cmocka_unit_test(test_planted_counts),
		cmocka_unit_test(test_faults_show),
		cmocka_unit_test(test_fleet_events),
		cmocka_unit_test(test_init_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
