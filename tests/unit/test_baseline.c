/* Class baselines: median of per-node medians, robust spreads, refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "judge/baseline.h"

#define MAX_RUNS 256
#define MAX_SAMPLES 16

/* A class under construction: runs with their own storage. */
struct fleet {
	char names[MAX_RUNS][32];
	double samples[MAX_RUNS][MAX_SAMPLES];
	ng_baseline_run runs[MAX_RUNS];
	size_t n;
};

/* The relative shape of one run's samples: deviations 2, 1, 0, 1, 2 (in
 * units of d) around the run's median. Less the smallest (the median's own
 * zero) that is 2, 1, 1, 2: median 1.5 d, so cv is 1.4826 x 1.5 x d. */
static const double shape[5] = {-2, -1, 0, 1, 2};

static void add_run(struct fleet *f, const char *node, double median, double d)
{
	assert_true(f->n < MAX_RUNS);
	snprintf(f->names[f->n], sizeof f->names[f->n], "%s", node);
	for (size_t k = 0; k < 5; k++)
		f->samples[f->n][k] = median * (1 + d * shape[k]);
	f->runs[f->n] = (ng_baseline_run){f->names[f->n], f->samples[f->n], 5};
	f->n++;
}

/* A healthy class: n nodes with medians spread evenly within +-2% of m. */
static void healthy(struct fleet *f, size_t n, double m)
{
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "node%02zu", i + 1);
		add_run(f, name, m * (0.98 + 0.04 * (double)i / (double)(n - 1)), 0.01);
	}
}

static ng_baseline_status build(const struct fleet *f, long min_nodes, ng_baseline *out)
{
	ng_policy pol;
	ng_policy_default(&pol);
	pol.min_baseline_nodes = min_nodes;
	size_t nd = 0, ni = 0;
	ng_baseline_work_need(f->runs, f->n, &nd, &ni);
	ng_baseline_work w = {malloc((nd + 1) * sizeof(double)), nd, malloc((ni + 1) * sizeof(size_t)), ni};
	ng_baseline_status st = ng_baseline_build(f->runs, f->n, &pol, w, out);
	free(w.buf);
	free(w.idx);
	return st;
}

static void assert_near(double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("got %.17g, want %.17g within %g", got, want, rel);
}

static double mean_of_medians(const struct fleet *f)
{
	double s = 0;
	for (size_t i = 0; i < f->n; i++)
		s += f->samples[i][2];
	return s / (double)f->n;
}

static void test_seed_class_of_twenty(void **state)
{
	(void)state;
	/* the seed's illustrative class medians: 980, 1500, 6.0, 300 */
	const double medians[] = {980, 1500, 6.0, 300};
	for (size_t m = 0; m < 4; m++) {
		struct fleet *f = calloc(1, sizeof *f);
		healthy(f, 20, medians[m]);
		ng_baseline b;
		assert_int_equal(build(f, 10, &b), NG_BASELINE_OK);
		assert_int_equal(b.n_nodes, 20);
		assert_int_equal(b.n_spread_nodes, 20);
		assert_int_equal(b.n_runs, 20);
		assert_int_equal(b.n_samples, 100);
		assert_near(b.median, medians[m], 1e-12);
		/* every run's samples stray 1.5% (1.5 d) at the median deviation */
		assert_near(b.cv, 1.4826 * 1.5 * 0.01, 1e-9);
		/* nodes evenly spread over +-2%: half lie within 1% of the median */
		assert_near(b.node_mad, 1.4826 * 0.01 * medians[m], 0.06);
		free(f);
	}
}

static void test_sick_nodes_barely_move_it(void **state)
{
	(void)state;
	struct fleet *f = calloc(1, sizeof *f);
	healthy(f, 20, 1000);
	ng_baseline clean;
	assert_int_equal(build(f, 10, &clean), NG_BASELINE_OK);
	double clean_mean = mean_of_medians(f);

	/* three of the twenty run 30% slow, and noisily */
	for (size_t i = 0; i < 3; i++) {
		double m = f->samples[i * 7][2] * 0.7;
		for (size_t k = 0; k < 5; k++)
			f->samples[i * 7][k] = m * (1 + 0.05 * shape[k]);
	}
	ng_baseline sick;
	assert_int_equal(build(f, 10, &sick), NG_BASELINE_OK);
	double sick_mean = mean_of_medians(f);

	/* the mean moves by about 4.5%; the median by under 1%, the spreads
	 * by a fraction of themselves */
	assert_true(fabs(sick_mean - clean_mean) / clean_mean > 0.04);
	assert_true(fabs(sick.median - clean.median) / clean.median < 0.01);
	assert_true(fabs(sick.node_mad - clean.node_mad) / clean.node_mad < 0.5);
	assert_true(fabs(sick.cv - clean.cv) / clean.cv < 0.05);
	free(f);
}

static void test_too_few_nodes_refused(void **state)
{
	(void)state;
	struct fleet *f = calloc(1, sizeof *f);
	healthy(f, 9, 300);
	ng_baseline b;
	assert_int_equal(build(f, 10, &b), NG_BASELINE_TOO_FEW_NODES);
	assert_int_equal(b.n_nodes, 9);
	assert_int_equal(b.min_nodes, 10);
	assert_true(isnan(b.cv));
	/* the median is still reported: "establishing a baseline, 9 of 10" */
	assert_near(b.median, 300, 1e-12);
	assert_non_null(strstr(ng_baseline_status_text(b.status), "establishing"));

	/* nine runs of ONE node are still one node */
	struct fleet *g = calloc(1, sizeof *g);
	for (size_t i = 0; i < 12; i++)
		add_run(g, "same-node", 300, 0.01);
	assert_int_equal(build(g, 10, &b), NG_BASELINE_TOO_FEW_NODES);
	assert_int_equal(b.n_nodes, 1);
	assert_int_equal(b.n_runs, 12);

	/* and no runs at all */
	struct fleet *e = calloc(1, sizeof *e);
	assert_int_equal(build(e, 1, &b), NG_BASELINE_TOO_FEW_NODES);
	assert_int_equal(b.n_nodes, 0);
	assert_true(isnan(b.median));
	/* exactly the minimum is enough */
	assert_int_equal(build(f, 9, &b), NG_BASELINE_OK);
	free(e);
	free(g);
	free(f);
}

static void test_one_node_many_runs_is_one_vote(void **state)
{
	(void)state;
	struct fleet *f = calloc(1, sizeof *f);
	healthy(f, 11, 1000);
	/* a slow, noisy node measured 200 times, its runs scattered through the input */
	struct fleet *g = calloc(1, sizeof *g);
	for (size_t i = 0; i < f->n; i++) {
		for (size_t k = 0; k < 10; k++)
			add_run(g, "hog", 500, 0.2);
		add_run(g, f->names[i], f->samples[i][2], 0.01);
	}
	ng_baseline a, b;
	assert_int_equal(build(f, 10, &a), NG_BASELINE_OK);
	assert_int_equal(build(g, 10, &b), NG_BASELINE_OK);
	assert_int_equal(b.n_nodes, 12);
	assert_int_equal(b.n_runs, 121);
	/* one of twelve votes: the median moves by half a neighbour's gap */
	assert_true(fabs(b.median - a.median) / a.median < 0.005);
	/* and its 20% noise, in ten times the samples of all the others
	 * together, does not become the class's noise (pooling every sample
	 * would have made cv about 0.2) */
	assert_near(b.cv, a.cv, 0.01);
	assert_true(b.cv < 0.023);
	free(g);
	free(f);
}

static void test_input_order_does_not_matter(void **state)
{
	(void)state;
	struct fleet *f = calloc(1, sizeof *f);
	for (size_t i = 0; i < 30; i++) {
		char name[32];
		snprintf(name, sizeof name, "n%zu", i % 13);
		add_run(f, name, 100 + (double)((i * 37) % 11), 0.01 + 0.001 * (double)(i % 5));
	}
	ng_baseline a, b;
	assert_int_equal(build(f, 13, &a), NG_BASELINE_OK);
	/* reverse the runs */
	for (size_t i = 0; i < f->n / 2; i++) {
		ng_baseline_run t = f->runs[i];
		f->runs[i] = f->runs[f->n - 1 - i];
		f->runs[f->n - 1 - i] = t;
	}
	assert_int_equal(build(f, 13, &b), NG_BASELINE_OK);
	assert_true(a.median == b.median);
	assert_true(a.cv == b.cv);
	assert_true(a.node_mad == b.node_mad);
	assert_int_equal(b.n_nodes, 13);
	free(f);
}

static void test_invalid_runs_named(void **state)
{
	(void)state;
	const double bad_values[] = {NAN, INFINITY, 0.0, -1.0};
	for (size_t v = 0; v < 4; v++) {
		struct fleet *f = calloc(1, sizeof *f);
		healthy(f, 12, 300);
		f->samples[5][3] = bad_values[v];
		ng_baseline b;
		assert_int_equal(build(f, 10, &b), NG_BASELINE_INVALID_RUN);
		assert_int_equal(b.bad_run, 5);
		assert_true(isnan(b.cv));
		free(f);
	}
	struct fleet *f = calloc(1, sizeof *f);
	healthy(f, 12, 300);
	ng_baseline b;
	f->runs[7].n_samples = 0;
	assert_int_equal(build(f, 10, &b), NG_BASELINE_INVALID_RUN);
	assert_int_equal(b.bad_run, 7);
	f->runs[7].n_samples = 5;
	f->runs[2].node = "";
	assert_int_equal(build(f, 10, &b), NG_BASELINE_INVALID_RUN);
	assert_int_equal(b.bad_run, 2);
	f->runs[2].node = NULL;
	assert_int_equal(build(f, 10, &b), NG_BASELINE_INVALID_RUN);
	free(f);
}

static void test_noise_refusals(void **state)
{
	(void)state;
	/* identical samples: no noise bar can be set, and cv 0 would make the
	 * gate say no-baseline anyway */
	struct fleet *f = calloc(1, sizeof *f);
	healthy(f, 12, 300);
	for (size_t i = 0; i < f->n; i++)
		for (size_t k = 0; k < 5; k++)
			f->samples[i][k] = 300;
	ng_baseline b;
	assert_int_equal(build(f, 10, &b), NG_BASELINE_NO_SPREAD);
	assert_true(isnan(b.cv));
	assert_near(b.median, 300, 0);

	/* runs of one or two samples measure no usable within-run noise */
	struct fleet *g = calloc(1, sizeof *g);
	healthy(g, 12, 300);
	for (size_t i = 0; i < 5; i++)
		g->runs[i].n_samples = 1 + i % 2;
	assert_int_equal(build(g, 7, &b), NG_BASELINE_OK);
	assert_int_equal(b.n_spread_nodes, 7);
	assert_int_equal(build(g, 8, &b), NG_BASELINE_TOO_FEW_REPEATS);
	assert_int_equal(b.n_nodes, 12);
	/* three samples are enough */
	for (size_t i = 0; i < 5; i++)
		g->runs[i].n_samples = 3;
	assert_int_equal(build(g, 12, &b), NG_BASELINE_OK);
	assert_int_equal(b.n_spread_nodes, 12);
	free(g);
	free(f);
}

static void test_work_too_small(void **state)
{
	(void)state;
	struct fleet *f = calloc(1, sizeof *f);
	healthy(f, 12, 300);
	ng_policy pol;
	ng_policy_default(&pol);
	size_t nd = 0, ni = 0;
	ng_baseline_work_need(f->runs, f->n, &nd, &ni);
	assert_int_equal(nd, 3 * 12 + 2 * 60);
	assert_int_equal(ni, 24);
	double *buf = malloc(nd * sizeof *buf);
	size_t *idx = malloc(ni * sizeof *idx);
	ng_baseline b;
	ng_baseline_work w = {buf, nd - 1, idx, ni};
	assert_int_equal(ng_baseline_build(f->runs, f->n, &pol, w, &b), NG_BASELINE_WORK_TOO_SMALL);
	w = (ng_baseline_work){buf, nd, idx, ni - 1};
	assert_int_equal(ng_baseline_build(f->runs, f->n, &pol, w, &b), NG_BASELINE_WORK_TOO_SMALL);
	w = (ng_baseline_work){NULL, nd, idx, ni};
	assert_int_equal(ng_baseline_build(f->runs, f->n, &pol, w, &b), NG_BASELINE_WORK_TOO_SMALL);
	w = (ng_baseline_work){buf, nd, idx, ni};
	assert_int_equal(ng_baseline_build(f->runs, f->n, &pol, w, &b), NG_BASELINE_OK);
	for (int s = 0; s <= NG_BASELINE_STATUS_COUNT; s++)
		assert_true(strlen(ng_baseline_status_text((ng_baseline_status)s)) > 5);
	free(idx);
	free(buf);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_class_of_twenty),
		cmocka_unit_test(test_sick_nodes_barely_move_it),
		cmocka_unit_test(test_too_few_nodes_refused),
		cmocka_unit_test(test_one_node_many_runs_is_one_vote),
		cmocka_unit_test(test_input_order_does_not_matter),
		cmocka_unit_test(test_invalid_runs_named),
		cmocka_unit_test(test_noise_refusals),
		cmocka_unit_test(test_work_too_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
