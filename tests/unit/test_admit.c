/* Two-stage admission: the flag rule, the per-node outcome, and the
 * admission seed's worked example (node 27) from baseline to verdict. */
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
#include "core/stats.h"
#include "judge/admit.h"
#include "judge/baseline.h"
#include "judge/gate.h"

#define CLASS "8xH100-SXM/2node/1rail"

static ng_policy policy(void)
{
	ng_policy p;
	ng_policy_default(&p);
	return p;
}

static void assert_near(double got, double want, double abs_tol)
{
	if (!(fabs(got - want) <= abs_tol))
		fail_msg("got %.17g, want %.17g within %g", got, want, abs_tol);
}

/* ---- the flag rule ---------------------------------------------------------------- */

static void test_flag_rule_seed_numbers(void **state)
{
	(void)state;
	/* "the fabric floor is 300 x 0.90 = 270 GB/s. Node 27 reaches
	 * 258 / 300 x 100 = 86 percent" */
	ng_admit_flag f = ng_admit_flag_rule(258, 300, NAN, 0.90);
	assert_true(f.evaluable);
	assert_true(f.flagged);
	assert_false(f.floor_decides);
	assert_near(f.bar, 270, 1e-9);
	assert_near(f.percent, 86, 1e-9);
	/* "its other domains exceed 90 percent" */
	assert_false(ng_admit_flag_rule(968, 980, NAN, 0.90).flagged);
	assert_false(ng_admit_flag_rule(1472, 1500, NAN, 0.90).flagged);
	assert_false(ng_admit_flag_rule(5.9, 6.0, NAN, 0.90).flagged);
	assert_near(ng_admit_flag_rule(5.9, 6.0, NAN, 0.90).percent, 98.333333333333, 1e-9);
	/* the bar itself is not below the bar */
	assert_false(ng_admit_flag_rule(270, 300, NAN, 0.90).flagged);
	assert_true(ng_admit_flag_rule(269.999, 300, NAN, 0.90).flagged);
}

static void test_flag_rule_floor(void **state)
{
	(void)state;
	/* a pool that degraded together: the peers would accept 275, the
	 * workload needs 280 */
	ng_admit_flag f = ng_admit_flag_rule(275, 300, 280, 0.90);
	assert_true(f.floor_decides);
	assert_true(f.flagged);
	assert_near(f.bar, 280, 0);
	/* a floor under the peer bar does not lower it */
	f = ng_admit_flag_rule(265, 300, 200, 0.90);
	assert_false(f.floor_decides);
	assert_true(f.flagged);
	assert_near(f.bar, 270, 1e-9);
	/* no floor registered: the peers alone; an infinite "floor" is none */
	assert_false(ng_admit_flag_rule(265, 300, INFINITY, 0.90).floor_decides);
}

static void test_flag_rule_not_evaluable(void **state)
{
	(void)state;
	const double bad[][2] = {{NAN, 300}, {INFINITY, 300}, {258, NAN}, {258, 0}, {258, -300}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ng_admit_flag f = ng_admit_flag_rule(bad[i][0], bad[i][1], 270, 0.90);
		assert_false(f.evaluable);
		assert_false(f.flagged); /* never flagged, never passed: unmeasured */
		assert_true(isnan(f.bar));
	}
}

/* ---- metric status ---------------------------------------------------------------- */

static ng_admit_result res(const char *domain, const char *metric, double v, double m,
                           ng_verdict g)
{
	return (ng_admit_result){domain, metric, v, m, NAN, g, false, NAN, false, 0, 0, NAN, NAN, NAN, NAN, NAN, 0, NAN, 0};
}

static void test_metric_status(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r = res("fabric", "busbw", 258, 300, NG_V_BLOCK);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	r = res("fabric", "busbw", 258, 300, NG_V_PASS); /* below the bar decides */
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	r = res("fabric", "busbw", 285, 300, NG_V_WARN);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_MARGINAL);
	r = res("fabric", "busbw", 299, 300, NG_V_PASS);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_OK);
	r = res("fabric", "busbw", 299, 300, NG_V_CORRUPT);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_INTEGRITY);
	r = res("fabric", "busbw", 299, 300, NG_V_DIAG_FAILED);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	r = res("fabric", "busbw", 299, 300, NG_V_BIMODAL);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	/* every verdict of the unmeasured family, and unverified correctness */
	const ng_verdict held[] = {NG_V_NO_MEASUREMENT, NG_V_DIAG_INCOMPLETE, NG_V_NO_BASELINE,
	                           NG_V_UNSTABLE, NG_V_IMPLAUSIBLE, NG_V_INVALID_INPUT,
	                           NG_V_INSUFFICIENT_SAMPLES, NG_V_INCOMPARABLE,
	                           NG_V_CORRECTNESS_UNVERIFIED};
	for (size_t i = 0; i < sizeof held / sizeof *held; i++) {
		r = res("fabric", "busbw", 100, 300, held[i]);
		assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	}
	/* a gate pass on a number that is not one is still not a measurement */
	r = res("fabric", "busbw", NAN, 300, NG_V_PASS);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	r = res("fabric", "busbw", 290, NAN, NG_V_PASS);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	/* the cohort moved: under the peer bar is the change's story... */
	r = res("fabric", "busbw", 250, 300, NG_V_FLEET_REGRESSION);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_ATTRIBUTED);
	/* ...but not under the floor the workload needs */
	r.floor = 260;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	assert_string_equal(ng_admit_metric_status_name(NG_MS_FAILED), "flagged");
	assert_string_equal(ng_admit_metric_status_name(NG_MS_COUNT), "unknown");
}

/* ---- the worked example, end to end ---------------------------------------------- */

struct domain_base {
	const char *domain, *metric;
	double median; /* the seed's class median */
	ng_baseline b;
};

static struct domain_base seed[4] = {
	{"compute", "compute.rate", 980, {0}},
	{"memory", "memory.gpu_bandwidth", 1500, {0}},
	{"storage", "storage.read", 6.0, {0}},
	{"fabric", "fabric.busbw", 300, {0}},
};

/* Five samples around m, 2, 1, 0, 1, 2 steps of d from it. */
static void five(double *s, double m, double d)
{
	for (int k = 0; k < 5; k++)
		s[k] = m * (1 + d * (k - 2));
}

/* The class: twenty healthy nodes within +-2% of each seed median. */
static int build_seed_baselines(void **state)
{
	(void)state;
	ng_policy p = policy();
	static double samples[20][5];
	static char names[20][32];
	ng_baseline_run runs[20];
	double buf[3 * 20 + 2 * 100];
	size_t idx[40];
	for (size_t d = 0; d < 4; d++) {
		for (size_t i = 0; i < 20; i++) {
			snprintf(names[i], sizeof names[i], "node%02zu", i + 1);
			five(samples[i], seed[d].median * (0.98 + 0.04 * (double)i / 19.0), 0.01);
			runs[i] = (ng_baseline_run){names[i], samples[i], 5};
		}
		ng_baseline_work w = {buf, sizeof buf / sizeof *buf, idx, 40};
		if (ng_baseline_build(runs, 20, &p, w, &seed[d].b) != NG_BASELINE_OK)
			return -1;
	}
	return 0;
}

/* Node 27's run of one metric, through the gate against the class baseline. */
static ng_admit_result run27(size_t d, double value)
{
	ng_policy p = policy();
	static double samples[8][5];
	static size_t next;
	double *s = samples[next++ % 8];
	five(s, value, 0.005);
	ng_diag_entry diag[] = {{"pcie", NG_DIAG_PASS}, {"memory", NG_DIAG_PASS},
	                        {"nccl_tests", NG_DIAG_PASS}};
	ng_gate_record r = {.wrong_kind = NG_WRONG_VALUE, .wrong = 0, .samples = s, .n_samples = 5,
	                    .diag = diag, .n_diag = 3, .cls = {NG_CLASS_STRING, CLASS},
	                    .domain = seed[d].domain};
	ng_gate_baseline b = {.median = seed[d].b.median, .cv = seed[d].b.cv,
	                      .cls = {NG_CLASS_STRING, CLASS}};
	double work[16];
	ng_verdict v = ng_gate(&r, &b, NULL, 0, &p, (ng_work){work, 16}, NULL);
	return (ng_admit_result){seed[d].domain, seed[d].metric, value, seed[d].b.median, NAN, v,
	                         false, NAN, false, 0, 0, NAN, NAN, NAN, NAN, NAN, 0, NAN, 0};
}

static void first_run27(ng_admit_result first[4])
{
	const double node27[4] = {968, 1472, 5.9, 258};
	for (size_t d = 0; d < 4; d++)
		first[d] = run27(d, node27[d]);
}

static void test_seed_baselines(void **state)
{
	(void)state;
	for (size_t d = 0; d < 4; d++) {
		assert_int_equal(seed[d].b.n_nodes, 20);
		assert_near(seed[d].b.median, seed[d].median, 1e-9 * seed[d].median);
		assert_near(seed[d].b.cv, 1.4826 * 1.5 * 0.01, 1e-9);
	}
}

static void test_node27_flagged_on_fabric_only(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result first[4];
	first_run27(first);
	assert_int_equal(first[0].gate, NG_V_PASS);
	assert_int_equal(first[1].gate, NG_V_PASS);
	assert_int_equal(first[2].gate, NG_V_PASS);
	assert_int_equal(first[3].gate, NG_V_BLOCK);
	for (size_t d = 0; d < 3; d++)
		assert_int_equal(ng_admit_judge_metric(&first[d], &p).status, NG_MS_OK);
	ng_admit_line fab = ng_admit_judge_metric(&first[3], &p);
	assert_int_equal(fab.status, NG_MS_FAILED);
	assert_near(fab.flag.bar, 270, 1e-9);
	assert_near(fab.flag.percent, 86, 1e-9);

	/* flagged: repeat the fabric test once, and only it */
	ng_admit_decision dec = ng_admit_decide(first, 4, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_SUSPECT);
	assert_string_equal(ng_admit_outcome_name(dec.outcome), "suspect");
	assert_int_equal(dec.n_confirm, 1);
	assert_string_equal(dec.confirm[0], "fabric");
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &first[3]);
	assert_int_equal(dec.recheck_hours, 0);
}

static void test_node27_confirmation_below_270_quarantines(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result first[4];
	first_run27(first);
	const double still_low[] = {262, 258, 269.9};
	for (size_t i = 0; i < 3; i++) {
		ng_admit_result confirm = run27(3, still_low[i]);
		ng_admit_decision dec = ng_admit_decide(first, 4, &confirm, 1, &p);
		assert_int_equal(dec.outcome, NG_ADMIT_QUARANTINED);
		assert_string_equal(ng_admit_outcome_name(dec.outcome), "quarantined");
		/* evidence: the fabric metric of both runs, nothing else */
		assert_int_equal(dec.n_named, 2);
		assert_ptr_equal(dec.named[0], &first[3]);
		assert_string_equal(dec.named[1]->metric, "fabric.busbw");
		assert_true(dec.named[1]->value == still_low[i]);
		assert_int_equal(dec.n_confirm, 0);
		assert_int_equal(dec.recheck_hours, 0);
	}
}

static void test_node27_confirmation_recovered_warns(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result first[4];
	first_run27(first);
	ng_admit_result confirm = run27(3, 297);
	assert_int_equal(confirm.gate, NG_V_PASS);
	ng_admit_decision dec = ng_admit_decide(first, 4, &confirm, 1, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_WARN);
	assert_string_equal(ng_admit_outcome_name(dec.outcome), "admitted-warn");
	assert_int_equal(dec.recheck_hours, 24);
	/* the warning names what was flagged */
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &first[3]);
	/* the recheck interval is policy */
	p.warn_recheck_hours = 6;
	assert_int_equal(ng_admit_decide(first, 4, &confirm, 1, &p).recheck_hours, 6);
	/* a recovery to just over the bar is still a recovery */
	confirm = run27(3, 271);
	assert_int_equal(ng_admit_decide(first, 4, &confirm, 1, &p).outcome, NG_ADMIT_WARN);
}

/* ---- other outcomes ------------------------------------------------------------- */

static void healthy4(ng_admit_result r[4])
{
	r[0] = res("compute", "compute.rate", 975, 980, NG_V_PASS);
	r[1] = res("memory", "memory.gpu_bandwidth", 1490, 1500, NG_V_PASS);
	r[2] = res("storage", "storage.read", 6.0, 6.0, NG_V_PASS);
	r[3] = res("fabric", "fabric.busbw", 301, 300, NG_V_PASS);
}

static void test_healthy_admitted(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r[4];
	healthy4(r);
	ng_admit_decision dec = ng_admit_decide(r, 4, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_ADMITTED);
	assert_string_equal(ng_admit_outcome_name(dec.outcome), "admitted");
	assert_int_equal(dec.n_named, 0);
	assert_int_equal(dec.recheck_hours, 0);
	/* marginal: above the bar, but the gate warned */
	r[1] = res("memory", "memory.gpu_bandwidth", 1410, 1500, NG_V_WARN);
	dec = ng_admit_decide(r, 4, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_WARN);
	assert_int_equal(dec.recheck_hours, 24);
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &r[1]);
	/* the cohort moved: warn and recheck, never quarantine the node for it */
	healthy4(r);
	r[3] = res("fabric", "fabric.busbw", 250, 300, NG_V_FLEET_REGRESSION);
	assert_int_equal(ng_admit_decide(r, 4, NULL, 0, &p).outcome, NG_ADMIT_WARN);
}

static void test_integrity_quarantines_in_one_run(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r[4];
	healthy4(r);
	r[1].gate = NG_V_CORRUPT;
	ng_admit_decision dec = ng_admit_decide(r, 4, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_QUARANTINED);
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &r[1]);
	/* in the confirmation too */
	healthy4(r);
	r[3] = res("fabric", "fabric.busbw", 258, 300, NG_V_BLOCK);
	ng_admit_result c = res("fabric", "fabric.busbw", 299, 300, NG_V_CORRUPT);
	dec = ng_admit_decide(r, 4, &c, 1, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_QUARANTINED);
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &c);
}

static void test_unmeasured_holds(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r[4];
	healthy4(r);
	r[2] = res("storage", "storage.read", NAN, 6.0, NG_V_NO_MEASUREMENT);
	ng_admit_decision dec = ng_admit_decide(r, 4, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_HELD);
	assert_string_equal(ng_admit_outcome_name(dec.outcome), "held");
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &r[2]);
	/* no baseline yet is held too, never a pass */
	healthy4(r);
	r[0] = res("compute", "compute.rate", 975, NAN, NG_V_NO_BASELINE);
	assert_int_equal(ng_admit_decide(r, 4, NULL, 0, &p).outcome, NG_ADMIT_HELD);
	/* nothing at all is held */
	dec = ng_admit_decide(NULL, 0, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_HELD);
	assert_false(dec.too_many_domains);
	/* a confirmation that measured nothing confirms nothing */
	healthy4(r);
	r[3] = res("fabric", "fabric.busbw", 258, 300, NG_V_BLOCK);
	ng_admit_result c = res("fabric", "fabric.busbw", NAN, 300, NG_V_NO_MEASUREMENT);
	dec = ng_admit_decide(r, 4, &c, 1, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_HELD);
	assert_int_equal(dec.n_named, 1);
	assert_ptr_equal(dec.named[0], &c);
}

/* A class with no baseline yet: the gate says no-baseline; admission judges
 * the run against the floor alone and admits the rest with a warning. */
static void test_establishing(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_admit_result r = {"fabric", "nccl.all_reduce.busbw", 258, NAN, NAN, NG_V_NO_BASELINE, true,
	                     NAN, false, 0, 0, NAN, NAN, NAN, NAN, NAN, 0, NAN, 0};
	ng_admit_line l = ng_admit_judge_metric(&r, &p);
	assert_int_equal(l.status, NG_MS_ESTABLISHING);
	assert_false(l.flag.flagged);
	ng_admit_decision d = ng_admit_decide(&r, 1, NULL, 0, &p);
	assert_int_equal(d.outcome, NG_ADMIT_WARN);
	assert_int_equal(d.recheck_hours, 24);

	r.floor = 270; /* below the floor: flagged, baseline or not */
	l = ng_admit_judge_metric(&r, &p);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(l.flag.floor_decides);
	assert_true(l.flag.bar == 270);
	d = ng_admit_decide(&r, 1, NULL, 0, &p);
	assert_int_equal(d.outcome, NG_ADMIT_SUSPECT);

	r.floor = 250; /* above the floor */
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_ESTABLISHING);

	/* The record itself was unsound: that outranks having no baseline. */
	r.gate = NG_V_NO_MEASUREMENT;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	r.gate = NG_V_CORRUPT;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_INTEGRITY);
	r.gate = NG_V_NO_BASELINE;
	r.value = NAN;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
}

static void test_precedence(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r[4];
	/* flagged fabric + unmeasured storage: confirm first, the hold stays */
	healthy4(r);
	r[2] = res("storage", "storage.read", NAN, 6.0, NG_V_NO_MEASUREMENT);
	r[3] = res("fabric", "fabric.busbw", 258, 300, NG_V_BLOCK);
	ng_admit_decision dec = ng_admit_decide(r, 4, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_SUSPECT);
	assert_int_equal(dec.n_confirm, 1);
	assert_string_equal(dec.confirm[0], "fabric");
	/* recovered fabric, storage still unmeasured: held */
	ng_admit_result c = res("fabric", "fabric.busbw", 299, 300, NG_V_PASS);
	assert_int_equal(ng_admit_decide(r, 4, &c, 1, &p).outcome, NG_ADMIT_HELD);
	/* fabric failing twice outranks the hold */
	c = res("fabric", "fabric.busbw", 250, 300, NG_V_BLOCK);
	dec = ng_admit_decide(r, 4, &c, 1, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_QUARANTINED);
	assert_int_equal(dec.n_named, 2);
	/* two flagged domains: both re-run; quarantine names only the one that failed twice */
	healthy4(r);
	r[0] = res("compute", "compute.rate", 800, 980, NG_V_BLOCK);
	r[3] = res("fabric", "fabric.busbw", 258, 300, NG_V_BLOCK);
	dec = ng_admit_decide(r, 4, NULL, 0, &p);
	assert_int_equal(dec.n_confirm, 2);
	assert_string_equal(dec.confirm[0], "compute");
	assert_string_equal(dec.confirm[1], "fabric");
	ng_admit_result c2[2] = {res("compute", "compute.rate", 979, 980, NG_V_PASS),
	                         res("fabric", "fabric.busbw", 250, 300, NG_V_BLOCK)};
	dec = ng_admit_decide(r, 4, c2, 2, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_QUARANTINED);
	assert_int_equal(dec.n_named, 2);
	assert_string_equal(dec.named[0]->domain, "fabric");
	assert_string_equal(dec.named[1]->domain, "fabric");
	/* different domains failing once each is not the same domain twice */
	c2[0] = res("compute", "compute.rate", 979, 980, NG_V_PASS);
	c2[1] = res("fabric", "fabric.busbw", 299, 300, NG_V_PASS);
	assert_int_equal(ng_admit_decide(r, 4, c2, 2, &p).outcome, NG_ADMIT_WARN);
}

static void test_unexpected_confirmation_holds(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r[4];
	healthy4(r);
	ng_admit_result c = res("storage", "storage.read", 6.0, 6.0, NG_V_PASS);
	ng_admit_decision dec = ng_admit_decide(r, 4, &c, 1, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_HELD);
	assert_true(dec.unexpected_confirmation);
	c = res("health", "health.xid", 1, 1, NG_V_PASS);
	dec = ng_admit_decide(r, 4, &c, 1, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_HELD);
	assert_true(dec.unexpected_confirmation);
}

static void test_too_many_domains_holds(void **state)
{
	(void)state;
	ng_policy p = policy();
	ng_admit_result r[NG_ADMIT_DOMAINS_MAX + 1];
	char names[NG_ADMIT_DOMAINS_MAX + 1][32];
	for (size_t i = 0; i <= NG_ADMIT_DOMAINS_MAX; i++) {
		snprintf(names[i], sizeof names[i], "d%zu", i);
		r[i] = res(names[i], "m", 100, 100, NG_V_PASS);
	}
	assert_int_equal(ng_admit_decide(r, NG_ADMIT_DOMAINS_MAX, NULL, 0, &p).outcome,
	                 NG_ADMIT_ADMITTED);
	ng_admit_decision dec = ng_admit_decide(r, NG_ADMIT_DOMAINS_MAX + 1, NULL, 0, &p);
	assert_int_equal(dec.outcome, NG_ADMIT_HELD);
	assert_true(dec.too_many_domains);
	assert_string_equal(ng_admit_outcome_name(NG_ADMIT_COUNT), "unknown");
}

/* The slow samples of a bimodal run: where they sit decides. */
static void test_low_mode(void **state)
{
	(void)state;
	double work[8];
	/* under 0.9 x 100: 70, 60, 85 -> median 70 */
	const double s[] = {100, 70, 101, 60, 99, 85, 102, 98};
	assert_float_equal(ng_admit_low_mode(s, 8, 100, 0.10, work), 0.70, 1e-12);
	/* an even count takes the mean of the middle two: 88, 86 -> 87 */
	const double t[] = {88, 100, 86, 101};
	assert_float_equal(ng_admit_low_mode(t, 4, 100, 0.10, work), 0.87, 1e-12);
	/* none under the line, or no usable median: not known */
	const double u[] = {95, 100};
	assert_true(isnan(ng_admit_low_mode(u, 2, 100, 0.10, work)));
	assert_true(isnan(ng_admit_low_mode(u, 2, NAN, 0.10, work)));
	assert_true(isnan(ng_admit_low_mode(u, 2, 0, 0.10, work)));
	assert_true(isnan(ng_admit_low_mode(u, 0, 100, 0.10, work)));
}

static void test_bimodal_low_mode(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	assert_float_equal(p.bimodal_low_mode, 0.80, 0);
	ng_admit_result r = res("storage", "storage.seqread.gbps", 6.0, 6.0, NG_V_BIMODAL);
	/* not known (NaN or 0): the gate's verdict stands */
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	r.low_mode = 0;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	/* a second mode a third down fails; at the line exactly, too */
	r.low_mode = 0.66;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	r.low_mode = 0.80;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	/* a tail just under the gate's line is the run's noise: it warns */
	r.low_mode = 0.87;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_MARGINAL);
	/* ... unless the run is also under the flag bar */
	r.value = 5.0;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	/* the low mode never softens any other verdict */
	r = res("storage", "storage.seqread.gbps", 5.3, 6.0, NG_V_BLOCK);
	r.low_mode = 0.87;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	/* a low mode within the metric's own noise of the gate's slow line is
	 * noise, wherever the policy puts its line: 8% per sample, 2 sigmas,
	 * under 0.9 - 0.16 = 0.74 fails */
	r = res("storage", "storage.seqread.gbps", 6.0, 6.0, NG_V_BIMODAL);
	r.baseline_cv = 0.08;
	r.low_mode = 0.78;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_MARGINAL);
	r.low_mode = 0.70;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	ng_policy q = p;
	q.bimodal_low_mode = 0.88;
	r.low_mode = 0.85;
	assert_int_equal(ng_admit_judge_metric(&r, &q).status, NG_MS_MARGINAL);
	r.baseline_cv = 0.01; /* a quiet metric: the policy's line decides */
	assert_int_equal(ng_admit_judge_metric(&r, &q).status, NG_MS_FAILED);
	/* the gate's block above admission's bar only warns: the bar decides */
	r = res("storage", "storage.seqread.gbps", 5.45, 6.0, NG_V_BLOCK);
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_MARGINAL);
	/* the policy moves the line */
	r = res("storage", "storage.seqread.gbps", 6.0, 6.0, NG_V_BIMODAL);
	r.low_mode = 0.87;
	p.bimodal_low_mode = 0.9;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
}

/* Before a class has a baseline, a GPU or link below its siblings fails. */
static void test_sibling_outlier_establishing(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_admit_result r = {"fabric", "gpucopy.h2d.gbps", 27, NAN, NAN, NG_V_NO_BASELINE, true,
	                     NAN, true, 0, 0, NAN, NAN, NAN, NAN, NAN, 0, NAN, 0};
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	r.sibling_outlier = false;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_ESTABLISHING);
	/* with a baseline, the class's bar judges (the flag rule), not siblings */
	r = res("fabric", "gpucopy.h2d.gbps", 54, 55, NG_V_PASS);
	r.sibling_outlier = true;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_OK);
	/* an unmeasured run stays unmeasured, whatever the siblings say */
	r = (ng_admit_result){"fabric", "gpucopy.h2d.gbps", NAN, NAN, NAN, NG_V_NO_MEASUREMENT, true,
	                      NAN, true, 0, 0, NAN, NAN, NAN, NAN, NAN, 0, NAN, 0};
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
}

/* An unstable run holds the node, until the node keeps disagreeing with itself. */
static void test_unstable_repeat(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	assert_int_equal(p.unstable_repeat, 3);
	ng_admit_result r = res("memory", "gpumem.copy.gbps", 1480, 1500, NG_V_UNSTABLE);
	r.unstable_recent = 1;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	r.unstable_recent = 2;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	r.unstable_recent = 3;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_FAILED);
	/* 0 turns the rule off */
	p.unstable_repeat = 0;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	/* the count means nothing for any other verdict */
	p.unstable_repeat = 3;
	r = res("memory", "gpumem.copy.gbps", 1480, 1500, NG_V_NO_MEASUREMENT);
	r.unstable_recent = 5;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_UNMEASURED);
	r = res("memory", "gpumem.copy.gbps", 1480, 1500, NG_V_PASS);
	r.unstable_recent = 5;
	assert_int_equal(ng_admit_judge_metric(&r, &p).status, NG_MS_OK);
}

/* ---- small classes ------------------------------------------------------------------ */

static void test_small_class_bar(void **state)
{
	(void)state;
	/* Student's t quantiles, against the tables */
	assert_true(fabs(ng_student_t_quantile(0.995, 4) - 4.604) < 1e-3);
	assert_true(fabs(ng_student_t_quantile(0.975, 2) - 4.303) < 1e-3);
	assert_true(fabs(ng_student_t_quantile(0.995, 8) - 3.355) < 1e-3);
	assert_true(fabs(ng_student_t_quantile(0.5, 3)) < 1e-6);
	assert_true(isnan(ng_student_t_quantile(1, 3)));
	assert_true(isnan(ng_student_t_quantile(0.9, 0)));

	ng_policy pol;
	ng_policy_default(&pol); /* 3 to 9 nodes, tail 0.005 */
	/* five nodes 1% apart, samples scattering 1%, no sample count: the
	 * samples' spread stands in for a run's noise; the median of five
	 * strays by sqrt(pi / 10) of their spread:
	 * 100 - 4.604 x sqrt(1 + 1) x sqrt(1 + pi / 10) */
	double median5 = sqrt(1 + M_PI / 10);
	double bar = ng_admit_small_bar(100, 1.0, 0.01, NAN, 5, NULL, &pol);
	assert_true(fabs(bar - (100 - 4.604 * sqrt(2.0) * median5)) < 1e-2);
	/* 16 samples a run: the run median's noise is 1.2533 x 1 / 4 */
	double noise = 1.2533 * 1.0 / 4;
	assert_true(fabs(ng_admit_small_bar(100, 1.0, 0.01, 16, 5, NULL, &pol) -
	                 (100 - 4.604 * sqrt(1 + noise * noise) * median5)) < 1e-2);
	/* nodes closer together than their runs stray: the noise still counts
	 * (samples 8%, 16 a run: 2.51%, not the samples' 8%) */
	noise = 1.2533 * 8 / 4;
	assert_true(fabs(ng_admit_small_bar(100, 0.1, 0.08, 16, 5, NULL, &pol) -
	                 (100 - 4.604 * sqrt(0.01 + noise * noise) * median5)) < 1e-2);
	/* fewer nodes, a wider bar; an ordinary class or too few nodes: none */
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 3, NULL, &pol) < bar);
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 9, NULL, &pol) > bar);
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 10, NULL, &pol) == 0);
	/* three nodes 30% apart: the bound is under zero, and the peers fail
	 * nobody (not the ordinary 90% bar, which 0 would mean) */
	double none = ng_admit_small_bar(100, 30.0, 0.01, NAN, 3, NULL, &pol);
	assert_true(none > 0 && none < 1e-300);
	ng_admit_result wide = {.domain = "storage", .metric = "storage.seqread.gbps", .value = 60,
	                        .baseline_median = 100, .floor = NAN, .gate = NG_V_BLOCK,
	                        .low_mode = NAN, .small_bar = none};
	assert_int_equal(ng_admit_judge_metric(&wide, &pol).status, NG_MS_MARGINAL);
	wide.floor = 70;
	assert_int_equal(ng_admit_judge_metric(&wide, &pol).status, NG_MS_FAILED);
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 2, NULL, &pol) == 0);
	pol.small_class_min_nodes = 0;
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 5, NULL, &pol) == 0);
	ng_policy_default(&pol);

	/* judged: the peer bar is the lower of 90% and the small bar; the
	 * gate's block against five nodes only warns above it */
	ng_admit_result r = {.domain = "storage", .metric = "storage.seqread.gbps", .value = 80,
	                     .baseline_median = 100, .floor = NAN, .gate = NG_V_BLOCK,
	                     .low_mode = NAN, .small_bar = ng_admit_small_bar(100, 3, 0.08, NAN, 5, NULL, &pol)};
	ng_admit_line l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_MARGINAL);
	assert_true(fabs(l.flag.bar - r.small_bar) < 1e-9);
	r.value = 50;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_FAILED);
	/* a floor above it decides */
	r.value = 80, r.floor = 85;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(l.flag.floor_decides);
	/* a tight small class keeps the 90% line; an ordinary one the gate's block */
	r.floor = NAN, r.small_bar = ng_admit_small_bar(100, 0.5, 0.005, NAN, 9, NULL, &pol);
	assert_true(r.small_bar > 90);
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(fabs(l.flag.bar - 90) < 1e-9);
	r.small_bar = 0, r.value = 89;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_FAILED);
	r.value = 95;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_MARGINAL);
	/* the node's own siblings still accuse it in a small class */
	r.small_bar = ng_admit_small_bar(100, 3, 0.08, NAN, 5, NULL, &pol), r.gate = NG_V_PASS, r.value = 99;
	r.sibling_outlier = true;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_FAILED);
}

/* A small class's family: the first family_parts parts of its key; its
 * classes' spreads pooled, the class's own median kept. */
static void test_small_class_family_pool(void **state)
{
	(void)state;
	char fam[64];
	assert_true(ng_class_family("8xH100/Xeonx2/2015GiB/8ib/6.1.0/nvidia-550", 4, fam, sizeof fam));
	assert_string_equal(fam, "8xH100/Xeonx2/2015GiB/8ib");
	/* no more parts than the family's: the class is its own family */
	assert_false(ng_class_family("8xH100/Xeonx2/2015GiB/8ib", 4, fam, sizeof fam));
	assert_false(ng_class_family("8xH100/Xeonx2/2015GiB/8ib/", 4, fam, sizeof fam));
	assert_false(ng_class_family("a/b/c/d/e", 0, fam, sizeof fam));
	assert_false(ng_class_family("abcdefgh/ijk", 1, fam, 4)); /* too long for out */
	assert_true(ng_class_family("a/b", 1, fam, sizeof fam));
	assert_string_equal(fam, "a");

	ng_policy pol;
	ng_policy_default(&pol);
	ng_admit_pool pool = {0};
	/* this 5-node class (median 100, nodes 1% apart, samples 1%) and two
	 * siblings at other medians with the same relative spreads: 4 + 29 + 19
	 * degrees of freedom, spreads unchanged relative to the median */
	ng_admit_pool_add(&pool, 100, 1.0, 0.01, 5);
	ng_admit_pool_add(&pool, 400, 4.0, 0.01, 30);
	ng_admit_pool_add(&pool, 50, 0.5, 0.01, 20);
	ng_admit_pool_add(&pool, 0, 1.0, 0.01, 20);   /* no median: nothing */
	ng_admit_pool_add(&pool, 100, 1.0, 0.01, 1);  /* one node: no spread */
	assert_int_equal(pool.classes, 3);
	assert_true(fabs(pool.df - 52) < 1e-9);
	double t52 = ng_student_t_quantile(0.995, 52);
	double pooled = ng_admit_small_bar(100, 1.0, 0.01, NAN, 5, &pool, &pol);
	assert_true(fabs(pooled - (100 - t52 * sqrt(2.0) * sqrt(1 + M_PI / 10))) < 1e-2);
	/* far tighter than the class's own t(4) bar, which it replaces */
	double own = ng_admit_small_bar(100, 1.0, 0.01, NAN, 5, NULL, &pol);
	assert_true(pooled > own + 2.5); /* 95.7 against 92.5 */
	/* the siblings' spread, not the class's own: a class whose five nodes
	 * happen to sit close together gets its family's spread */
	assert_true(fabs(ng_admit_small_bar(100, 0.2, 0.002, NAN, 5, &pool, &pol) - pooled) < 1e-9);
	/* a pool of the class alone says no more than the class */
	ng_admit_pool alone = {0};
	ng_admit_pool_add(&alone, 100, 1.0, 0.01, 5);
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 5, &alone, &pol) == own);
	/* an ordinary class is not a small one, pooled or not */
	assert_true(ng_admit_small_bar(100, 1.0, 0.01, NAN, 12, &pool, &pol) == 0);
}

static void test_spread_bar(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol); /* four spreads */
	assert_float_equal(pol.spread_sigmas, 4.0, 0);
	/* nodes 3% apart, samples 8%, 16 a run: 100 - 4 x sqrt(3^2 + (1.2533 x 2)^2) */
	double bar = ng_admit_spread_bar(100, 3, 0.08, 16, &pol);
	assert_true(fabs(bar - (100 - 4 * sqrt(9 + 2.5066 * 2.5066))) < 1e-3);
	/* no samples per run known: the nodes' spread alone; none without it */
	assert_true(fabs(ng_admit_spread_bar(100, 3, 0.08, NAN, &pol) - 88) < 1e-9);
	assert_true(ng_admit_spread_bar(100, NAN, 0.08, 16, &pol) == 0);
	assert_true(ng_admit_spread_bar(NAN, 3, 0.08, 16, &pol) == 0);
	pol.spread_sigmas = 0;
	assert_true(ng_admit_spread_bar(100, 3, 0.08, 16, &pol) == 0);
	ng_policy_default(&pol);

	/* a flag fraction inside the class's spread: the spread sets the bar,
	 * so a healthy node 2% under the median passes at 0.99 */
	pol.flag_fraction = 0.99;
	ng_admit_result r = {.domain = "storage", .metric = "storage.seqread.gbps", .value = 98,
	                     .baseline_median = 100, .floor = NAN, .gate = NG_V_PASS,
	                     .low_mode = NAN, .baseline_cv = 0.08, .node_spread = 3,
	                     .run_samples = 16};
	ng_admit_line l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_OK);
	assert_true(fabs(l.flag.bar - bar) < 1e-9);
	/* ... and one under the spread's bar fails */
	r.value = 83;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_FAILED);
	/* without the node spread the fraction alone decides, as it always did */
	r.value = 98, r.node_spread = NAN;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(fabs(l.flag.bar - 99) < 1e-9);
	/* a tight metric keeps the fraction's bar: 90 is under 100 - 4 x 1.03 */
	pol.flag_fraction = 0.90;
	r.node_spread = 1, r.baseline_cv = 0.01, r.value = 89.5;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(fabs(l.flag.bar - 90) < 1e-9);
	/* a floor above the spread's bar still decides */
	pol.flag_fraction = 0.99;
	r.node_spread = 3, r.baseline_cv = 0.08, r.value = 94, r.floor = 95;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(l.flag.floor_decides);
	assert_true(fabs(l.flag.bar - 95) < 1e-9);
}

static void test_own_level(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol); /* six runs, four spreads, at least 3% */
	assert_int_equal(pol.own_level_runs, 6);
	/* a node at 103 whose runs scatter by 1 (1%), six runs: 4 x 1 x sqrt(1 +
	 * pi / 12) = 4.49 under its level, more than 3% of it */
	double w6 = sqrt(1 + M_PI / 12);
	double bar = ng_admit_own_bar(103, 1, 6, 0.01, 16, &pol);
	assert_true(fabs(bar - (103 - 4 * w6)) < 1e-9);
	/* five runs are too few to know a level; none without a level */
	assert_true(ng_admit_own_bar(103, 1, 5, 0.01, 16, &pol) == 0);
	assert_true(ng_admit_own_bar(NAN, 1, 6, 0.01, 16, &pol) == 0);
	/* runs that agreed to a hair: never steadier than a run median's
	 * sampling noise (samples 8%, 16 a run: 2.5066), and never closer than
	 * 3% of the level */
	double noisy = ng_admit_own_bar(100, 0.01, 30, 0.08, 16, &pol);
	assert_true(fabs(noisy - (100 - 4 * 2.5066 * sqrt(1 + M_PI / 60))) < 1e-3);
	assert_true(fabs(ng_admit_own_bar(100, 0.01, 30, 0.001, 16, &pol) - 97) < 1e-9);
	pol.own_level_runs = 0;
	assert_true(ng_admit_own_bar(103, 1, 30, 0.01, 16, &pol) == 0);
	ng_policy_default(&pol);

	/* inside its class's bar (90), 7% under where this node has always been:
	 * failed, and the own level decided */
	ng_admit_result r = {.domain = "compute", .metric = "gpu.gemm.tflops", .value = 96,
	                     .baseline_median = 100, .floor = NAN, .gate = NG_V_PASS,
	                     .low_mode = NAN, .baseline_cv = 0.01, .node_spread = 1,
	                     .run_samples = 16, .own_level = 103, .own_spread = 0.4, .own_runs = 12};
	ng_admit_line l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(l.own_decides);
	assert_true(fabs(l.own_bar - 103 * 0.97) < 1e-9);
	assert_false(l.flag.flagged); /* the class's bar passed it */
	/* 2% under its level: within what a node moves by */
	r.value = 101;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_OK);
	assert_false(l.own_decides);
	/* too few runs: the class alone judges */
	r.value = 96, r.own_runs = 3;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_OK);
	/* the cohort moved with it: the change's, not the node's */
	r.own_runs = 12, r.gate = NG_V_FLEET_REGRESSION;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_ATTRIBUTED);
	assert_false(l.own_decides);
	/* a marginal run (the gate warned) under its own bar fails too */
	r.gate = NG_V_WARN;
	assert_int_equal(ng_admit_judge_metric(&r, &pol).status, NG_MS_FAILED);
}

static void test_own_level_recent(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol); /* the newest three runs */
	assert_int_equal(pol.own_level_recent, 3);
	/* a node at 100 whose runs scatter by 3, twelve runs: one run's bar is
	 * 4 x 3 x sqrt(1 + pi / 24), the mean of three's 4 x 3 x sqrt(1/3 + pi / 24) */
	double one = ng_admit_own_bar(100, 3, 12, 0.01, 16, &pol);
	double three = ng_admit_own_mean_bar(100, 3, 12, 3, 0.01, 16, &pol);
	assert_true(fabs(one - (100 - 12 * sqrt(1 + M_PI / 24))) < 1e-9);
	assert_true(fabs(three - (100 - 12 * sqrt(1.0 / 3 + M_PI / 24))) < 1e-9);
	assert_true(ng_admit_own_mean_bar(100, 3, 12, 1, 0.01, 16, &pol) == one);
	/* never closer than 3% of the level; none with too few runs */
	assert_true(fabs(ng_admit_own_mean_bar(100, 0.5, 12, 3, 0.01, 16, &pol) - 97) < 1e-9);
	assert_true(ng_admit_own_mean_bar(100, 3, 5, 3, 0.01, 16, &pol) == 0);

	/* 9% under its level: this run alone is inside its own bar (about
	 * 87.2) and its class's (90), but its newest three average 91, under
	 * their bar (about 91.8) */
	ng_admit_result r = {.domain = "storage", .metric = "storage.seqread.gbps", .value = 91,
	                     .baseline_median = 100, .floor = NAN, .gate = NG_V_PASS,
	                     .low_mode = NAN, .baseline_cv = 0.01, .node_spread = 1,
	                     .run_samples = 16, .own_level = 100, .own_spread = 3, .own_runs = 12,
	                     .own_recent = 91, .own_recent_runs = 3};
	ng_admit_line l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_FAILED);
	assert_true(l.own_decides && l.own_recent_decides);
	assert_true(fabs(l.own_recent_bar - three) < 1e-9);
	assert_true(r.value > l.own_bar);
	/* the runs before it at its level: the mean is 97, within its noise */
	r.own_recent = 97;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_OK);
	assert_false(l.own_decides || l.own_recent_decides);
	/* no mean known (too few runs, or the rule off): this run alone */
	r.own_recent = 91, r.own_recent_runs = 0;
	l = ng_admit_judge_metric(&r, &pol);
	assert_int_equal(l.status, NG_MS_OK);
	assert_true(l.own_recent_bar == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flag_rule_seed_numbers),
		cmocka_unit_test(test_flag_rule_floor),
		cmocka_unit_test(test_flag_rule_not_evaluable),
		cmocka_unit_test(test_metric_status),
		cmocka_unit_test(test_seed_baselines),
		cmocka_unit_test(test_node27_flagged_on_fabric_only),
		cmocka_unit_test(test_node27_confirmation_below_270_quarantines),
		cmocka_unit_test(test_node27_confirmation_recovered_warns),
		cmocka_unit_test(test_healthy_admitted),
		cmocka_unit_test(test_integrity_quarantines_in_one_run),
		cmocka_unit_test(test_unmeasured_holds),
		cmocka_unit_test(test_establishing),
		cmocka_unit_test(test_low_mode),
		cmocka_unit_test(test_bimodal_low_mode),
		cmocka_unit_test(test_sibling_outlier_establishing),
		cmocka_unit_test(test_unstable_repeat),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_unexpected_confirmation_holds),
		cmocka_unit_test(test_too_many_domains_holds),
		cmocka_unit_test(test_small_class_bar),
		cmocka_unit_test(test_small_class_family_pool),
		cmocka_unit_test(test_spread_bar),
		cmocka_unit_test(test_own_level),
		cmocka_unit_test(test_own_level_recent),
	};
	return cmocka_run_group_tests(tests, build_seed_baselines, NULL);
}
