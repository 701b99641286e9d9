/* The synthetic fleet: see fleet_model.h. */
#include "fleet_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the counter-based generator ----------------------------------------------------- */

static uint64_t mix(uint64_t z)
{
	/* splitmix64's finalizer: a bijection that scrambles every bit. */
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t key(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return mix(mix(mix(mix(mix(seed) ^ a) ^ b) ^ c) ^ d);
}

static double unit_of(uint64_t h) { return ((double)(h >> 11) + 0.5) * 0x1.0p-53; }

double ng_fleet_uniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return unit_of(key(seed, a, b, c, d));
}

static double normal_of(uint64_t h)
{
	double u1 = unit_of(h), u2 = unit_of(mix(h ^ 0x5851f42d4c957f2dULL));
	double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
	return z > 4.0 ? 4.0 : z < -4.0 ? -4.0 : z;
}

double ng_fleet_normal(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return normal_of(key(seed, a, b, c, d));
}

/* What each draw is for: part of its key, so no two purposes share numbers. */
enum stream {
	S_FAULT_METRIC = 1, S_SEVERITY, S_ONSET, S_BIMODAL_P, S_HARNESS_VARIANT, S_NODE_LEVEL,
	S_RUN_SHIFT, S_SAMPLE, S_BIMODAL_SHOWS, S_BIMODAL_LOW, S_CORRUPT, S_CORRUPT_COUNT,
	S_HARNESS, S_TRANSIENT, S_PERM, S_ROLLOUT,
};

#define TRUTH_RUN UINT64_MAX

/* (node, run, attempt/stream, metric/sample) */
static uint64_t k_of(const ng_fleet_spec *s, size_t node, uint64_t run, unsigned attempt,
                     enum stream st, size_t metric, size_t sample)
{
	return key(s->seed, (uint64_t)node, run, ((uint64_t)attempt << 8) | (uint64_t)st,
	           ((uint64_t)metric << 32) | (uint64_t)sample);
}

/* ---- names and the default fleet ----------------------------------------------------- */

const char *ng_fleet_fault_name(ng_fleet_fault f)
{
	static const char *const names[NG_FLEET_FAULT_COUNT] = {
		"healthy", "slow", "bimodal", "load", "corrupt", "harness",
	};
	return (unsigned)f < NG_FLEET_FAULT_COUNT ? names[f] : "unknown";
}

static void set_metric(ng_fleet_spec *s, size_t i, const char *name, const char *domain,
                       const char *unit)
{
	snprintf(s->metrics[i].name, sizeof s->metrics[i].name, "%s", name);
	snprintf(s->metrics[i].domain, sizeof s->metrics[i].domain, "%s", domain);
	snprintf(s->metrics[i].unit, sizeof s->metrics[i].unit, "%s", unit);
}

void ng_fleet_spec_default(ng_fleet_spec *s, size_t n_nodes, size_t n_runs, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->seed = seed;
	s->n_runs = n_runs;
	s->samples = 16;
	s->load_every = 7;

	s->n_metrics = 6;
	set_metric(s, 0, "gpu.gemm.tflops", "compute", "TFLOP/s");
	set_metric(s, 1, "gpumem.copy.gbps", "memory", "GB/s");
	set_metric(s, 2, "storage.seqread.gbps", "storage", "GB/s");
	set_metric(s, 3, "nccl.all_reduce.busbw", "fabric", "GB/s");
	set_metric(s, 4, "cpu.fp64.gflops", "compute", "GFLOP/s");
	set_metric(s, 5, "hostmem.copy.gbps", "memory", "GB/s");
	/* run-to-run noise of one sample, per metric: 1%, 1%, 8%, 3%, 3%, 3% */
	static const double cv[6] = {0.01, 0.01, 0.08, 0.03, 0.03, 0.03};
	static const double node_cv[6] = {0.01, 0.01, 0.03, 0.01, 0.01, 0.01};
	static const struct {
		const char *name;
		unsigned percent;
		double median[6];
	} cls[4] = {
		{"8xH100-SXM/Xeon-8480x2/2048GiB/8ib/6.1.0-26-amd64", 40, {700, 2600, 12.0, 480, 3000, 250}},
		{"8xH200-SXM/Xeon-8480x2/2048GiB/8ib/6.1.0-26-amd64", 30, {720, 3900, 12.0, 480, 3500, 300}},
		{"8xA100-SXM/EPYC-7763x2/1024GiB/4ib/6.1.0-26-amd64", 20, {280, 1500, 6.0, 230, 2000, 150}},
		{"8xL40S-PCIe/EPYC-9354x2/768GiB/2ib/6.1.0-26-amd64", 10, {300, 700, 6.0, 40, 2500, 200}},
	};
	s->n_classes = 4;
	size_t given = 0;
	for (size_t c = 0; c < 4; c++) {
		ng_fleet_class *k = &s->classes[c];
		snprintf(k->name, sizeof k->name, "%s", cls[c].name);
		k->n_nodes = c == 3 ? n_nodes - given : n_nodes * cls[c].percent / 100;
		given += k->n_nodes;
		for (size_t m = 0; m < 6; m++) {
			k->median[m] = cls[c].median[m];
			k->cv[m] = cv[m];
			k->node_cv[m] = node_cv[m];
			k->run_cv[m] = cv[m] / 4;
		}
	}

	s->fault_share[NG_FLEET_SLOW] = 0.010;
	s->fault_share[NG_FLEET_BIMODAL] = 0.005;
	s->fault_share[NG_FLEET_LOAD] = 0.005;
	s->fault_share[NG_FLEET_CORRUPT] = 0.005;
	s->fault_share[NG_FLEET_HARNESS] = 0.005;
	s->onset_min = n_runs > 8 ? 3 : 0;
	s->onset_max = n_runs > 8 ? n_runs - 5 : (n_runs ? n_runs : 1);
	s->slow_min = 0.03, s->slow_max = 0.30;
	s->load_min = 0.10, s->load_max = 0.25;
	s->bimodal_min = 0.30, s->bimodal_max = 0.50;
	s->bimodal_sample_min = 0.20, s->bimodal_sample_max = 0.45;
	s->bimodal_run_p = 0.6;
	s->corrupt_p = 0.5;
	s->harness_p = 0.5;
	s->transient_harness_p = 0.0005;

	s->regression_run = n_runs / 2;
	s->regression_metric = 3; /* nccl.all_reduce.busbw */
	s->regression_drop = 0.12;
	snprintf(s->software_before, sizeof s->software_before, "sw-2026.10");
	snprintf(s->software_after, sizeof s->software_after, "sw-2026.11");

	s->degraded_class = 3;
	s->degraded_run = n_runs * 3 / 4;
	s->degraded_metric = 2; /* storage.seqread.gbps */
	s->degraded_drop = 0.30;
	s->rollout_class = 0;
	s->rollout_metric = 3;
	snprintf(s->software_rollout, sizeof s->software_rollout, "sw-2026.10r");
	ng_fleet_init(s, NULL, 0);
}

/* ---- init and truth ------------------------------------------------------------------ */

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int bad(char *why, size_t len, const char *what)
{
	if (why && len)
		snprintf(why, len, "fleet spec: %s", what);
	return -1;
}

static bool frac(double x) { return x >= 0 && x <= 1; }

int ng_fleet_init(ng_fleet_spec *s, char *why, size_t why_len)
{
	if (s->n_metrics == 0 || s->n_metrics > NG_FLEET_METRICS_MAX)
		return bad(why, why_len, "n_metrics must be 1..8");
	if (s->n_classes == 0 || s->n_classes > NG_FLEET_CLASSES_MAX)
		return bad(why, why_len, "n_classes must be 1..512");
	if (s->samples == 0 || s->samples > NG_FLEET_SAMPLES_MAX)
		return bad(why, why_len, "samples must be 1..64");
	s->n_nodes = 0;
	for (size_t c = 0; c < s->n_classes; c++) {
		s->n_nodes += s->classes[c].n_nodes;
		for (size_t m = 0; m < s->n_metrics; m++)
			if (!(s->classes[c].median[m] > 0) || !(s->classes[c].cv[m] >= 0) ||
			    !(s->classes[c].node_cv[m] >= 0) || !(s->classes[c].run_cv[m] >= 0))
				return bad(why, why_len, "a class median must be > 0 and its cvs >= 0");
	}
	if (s->n_nodes == 0 || s->n_nodes > 0xffffffffu)
		return bad(why, why_len, "the fleet needs 1..2^32-1 nodes");
	double share = 0;
	for (int f = NG_FLEET_SLOW; f < NG_FLEET_FAULT_COUNT; f++) {
		if (!frac(s->fault_share[f]))
			return bad(why, why_len, "fault shares must lie in [0, 1]");
		share += s->fault_share[f];
	}
	if (share > 1)
		return bad(why, why_len, "fault shares add up to more than 1");
	if (!frac(s->slow_min) || !frac(s->slow_max) || s->slow_min > s->slow_max ||
	    !frac(s->load_min) || !frac(s->load_max) || s->load_min > s->load_max ||
	    !frac(s->bimodal_min) || !frac(s->bimodal_max) || s->bimodal_min > s->bimodal_max ||
	    !frac(s->bimodal_sample_min) || !frac(s->bimodal_sample_max) ||
	    s->bimodal_sample_min > s->bimodal_sample_max || !frac(s->bimodal_run_p) ||
	    !frac(s->corrupt_p) || !frac(s->harness_p) || !frac(s->transient_harness_p) ||
	    !(s->regression_drop >= 0 && s->regression_drop < 1) ||
	    !(s->degraded_drop >= 0 && s->degraded_drop < 1) ||
	    !(s->incident_drop >= 0 && s->incident_drop < 1) ||
	    !(s->rollout_drop >= 0 && s->rollout_drop < 1) || !frac(s->rollout_share))
		return bad(why, why_len, "a severity or probability is outside [0, 1]");
	if (s->onset_max <= s->onset_min)
		return bad(why, why_len, "onset_max must exceed onset_min");
	if (s->regression_metric >= s->n_metrics || s->degraded_metric >= s->n_metrics)
		return bad(why, why_len, "regression_metric and degraded_metric must name a metric");
	if (s->incident_metric >= s->n_metrics || s->rollout_metric >= s->n_metrics)
		return bad(why, why_len, "incident_metric and rollout_metric must name a metric");

	size_t left = s->n_nodes;
	s->fault_count[NG_FLEET_HEALTHY] = 0;
	for (int f = NG_FLEET_SLOW; f < NG_FLEET_FAULT_COUNT; f++) {
		size_t want = (size_t)llround(s->fault_share[f] * (double)s->n_nodes);
		if (want == 0 && s->fault_share[f] > 0)
			want = 1;
		if (want > left)
			want = left;
		s->fault_count[f] = want;
		left -= want;
	}
	s->fault_count[NG_FLEET_HEALTHY] = left;

	uint64_t n = s->n_nodes;
	uint64_t a = n > 1 ? 1 + key(s->seed, 0, TRUTH_RUN, S_PERM, 0) % (n - 1) : 1;
	while (gcd(a, n) != 1)
		a = a + 1 < n ? a + 1 : 1;
	s->perm_a = a;
	s->perm_b = key(s->seed, 1, TRUTH_RUN, S_PERM, 1) % n;
	return 0;
}

int ng_fleet_metric_index(const ng_fleet_spec *s, const char *name)
{
	for (size_t m = 0; m < s->n_metrics; m++)
		if (strcmp(s->metrics[m].name, name) == 0)
			return (int)m;
	return -1;
}

static double between(double lo, double hi, double u) { return lo + (hi - lo) * u; }

void ng_fleet_truth_of(const ng_fleet_spec *s, size_t node, ng_fleet_truth *t)
{
	memset(t, 0, sizeof *t);
	t->node = node;
	size_t c = 0, start = 0;
	while (c + 1 < s->n_classes && node >= start + s->classes[c].n_nodes)
		start += s->classes[c++].n_nodes;
	t->cls = c;
	for (size_t m = 0; m < s->n_metrics; m++)
		t->node_factor[m] = 1.0 + s->classes[c].node_cv[m] *
		                              normal_of(k_of(s, node, TRUTH_RUN, 0, S_NODE_LEVEL, m, 0));

	uint64_t slot = (s->perm_a * (uint64_t)node + s->perm_b) % (uint64_t)s->n_nodes;
	t->fault = NG_FLEET_HEALTHY;
	uint64_t edge = 0;
	for (int f = NG_FLEET_SLOW; f < NG_FLEET_FAULT_COUNT; f++) {
		edge += s->fault_count[f];
		if (slot < edge) {
			t->fault = (ng_fleet_fault)f;
			break;
		}
	}
	if (t->fault == NG_FLEET_HEALTHY)
		return;
	double u = ng_fleet_uniform(s->seed, node, TRUTH_RUN, S_FAULT_METRIC, 0);
	t->metric = (size_t)(u * (double)s->n_metrics);
	if (t->metric >= s->n_metrics)
		t->metric = s->n_metrics - 1;
	double sev = ng_fleet_uniform(s->seed, node, TRUTH_RUN, S_SEVERITY, 0);
	switch (t->fault) {
	case NG_FLEET_SLOW: t->severity = between(s->slow_min, s->slow_max, sev); break;
	case NG_FLEET_LOAD: t->severity = between(s->load_min, s->load_max, sev); break;
	case NG_FLEET_BIMODAL:
		t->severity = between(s->bimodal_min, s->bimodal_max, sev);
		t->bimodal_sample_p =
			between(s->bimodal_sample_min, s->bimodal_sample_max,
			        ng_fleet_uniform(s->seed, node, TRUTH_RUN, S_BIMODAL_P, 0));
		break;
	case NG_FLEET_HARNESS: {
		double v = ng_fleet_uniform(s->seed, node, TRUTH_RUN, S_HARNESS_VARIANT, 0);
		t->harness_variant = (ng_fleet_harness_variant)(v * NG_FLEET_HARNESS_VARIANTS);
		if (t->harness_variant >= NG_FLEET_HARNESS_VARIANTS)
			t->harness_variant = NG_FLEET_HARNESS_UNCHECKED;
		break;
	}
	default: break;
	}
	double o = ng_fleet_uniform(s->seed, node, TRUTH_RUN, S_ONSET, 0);
	t->onset = s->onset_min + (size_t)(o * (double)(s->onset_max - s->onset_min));
	if (t->onset >= s->onset_max)
		t->onset = s->onset_max - 1;
}

bool ng_fleet_in_degraded_class(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run)
{
	return s->degraded_class < s->n_classes && t->cls == s->degraded_class &&
	       run >= s->degraded_run;
}

bool ng_fleet_sick(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run)
{
	bool hw = t->fault == NG_FLEET_SLOW || t->fault == NG_FLEET_BIMODAL ||
	          t->fault == NG_FLEET_LOAD || t->fault == NG_FLEET_CORRUPT;
	return (hw && run >= t->onset) || ng_fleet_in_degraded_class(s, t, run);
}

bool ng_fleet_in_rollout(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run)
{
	return s->rollout_share > 0 && t->cls == s->rollout_class && run >= s->rollout_run &&
	       ng_fleet_uniform(s->seed, t->node, TRUTH_RUN, S_ROLLOUT, 0) < s->rollout_share;
}

bool ng_fleet_loaded(const ng_fleet_spec *s, size_t run, unsigned attempt)
{
	return attempt > 0 || (s->load_every && run % s->load_every == s->load_every - 1);
}

/* ---- drawing ------------------------------------------------------------------------- */

void ng_fleet_draw_truth(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run,
                         unsigned attempt, ng_fleet_probe *out)
{
	const ng_fleet_class *c = &s->classes[t->cls];
	size_t node = t->node;
	out->node = node;
	out->run = run;
	out->attempt = attempt;
	out->cls = t->cls;
	out->class_name = c->name;
	out->software = run >= s->regression_run ? s->software_after : s->software_before;
	bool rollout = ng_fleet_in_rollout(s, t, run);
	/* the fleet-wide change at regression_run reaches the rollout's nodes too */
	if (rollout && s->rollout_identity && run < s->regression_run)
		out->software = s->software_rollout;
	bool incident = s->incident_nodes && run == s->incident_run && node >= s->incident_first &&
	                node - s->incident_first < s->incident_nodes;
	out->loaded = ng_fleet_loaded(s, run, attempt);
	out->n_metrics = s->n_metrics;
	bool faulty = t->fault != NG_FLEET_HEALTHY && run >= t->onset;

	for (size_t m = 0; m < s->n_metrics; m++) {
		ng_fleet_result *r = &out->m[m];
		r->measured = true;
		r->wrong = 0;
		r->n_samples = s->samples;
		double level = c->median[m] * t->node_factor[m] *
		               (1.0 + c->run_cv[m] * normal_of(k_of(s, node, run, attempt, S_RUN_SHIFT, m, 0)));
		if (run >= s->regression_run && m == s->regression_metric)
			level *= 1.0 - s->regression_drop;
		if (ng_fleet_in_degraded_class(s, t, run) && m == s->degraded_metric)
			level *= 1.0 - s->degraded_drop;
		if (rollout && m == s->rollout_metric)
			level *= 1.0 - s->rollout_drop;
		if (incident && m == s->incident_metric)
			level *= 1.0 - s->incident_drop;
		bool here = faulty && m == t->metric;
		if (here && t->fault == NG_FLEET_SLOW) {
			double ramp = s->slow_ramp_runs > 1
			                      ? (double)(run - t->onset + 1) / (double)s->slow_ramp_runs
			                      : 1.0;
			level *= 1.0 - t->severity * (ramp < 1 ? ramp : 1);
		}
		if (here && t->fault == NG_FLEET_LOAD && out->loaded)
			level *= 1.0 - t->severity;
		bool bimodal = here && t->fault == NG_FLEET_BIMODAL &&
		               unit_of(k_of(s, node, run, attempt, S_BIMODAL_SHOWS, m, 0)) < s->bimodal_run_p;
		for (size_t k = 0; k < s->samples; k++) {
			double v = level * (1.0 + c->cv[m] * normal_of(k_of(s, node, run, attempt, S_SAMPLE, m, k)));
			if (bimodal && unit_of(k_of(s, node, run, attempt, S_BIMODAL_LOW, m, k)) < t->bimodal_sample_p)
				v *= 1.0 - t->severity;
			/* a measured rate is positive */
			r->samples[k] = v > c->median[m] * 1e-3 ? v : c->median[m] * 1e-3;
		}
		if (here && t->fault == NG_FLEET_CORRUPT &&
		    unit_of(k_of(s, node, run, attempt, S_CORRUPT, m, 0)) < s->corrupt_p)
			r->wrong = 1.0 + floor(64.0 * unit_of(k_of(s, node, run, attempt, S_CORRUPT_COUNT, m, 0)));
		if (here && t->fault == NG_FLEET_HARNESS &&
		    unit_of(k_of(s, node, run, attempt, S_HARNESS, m, 0)) < s->harness_p) {
			r->measured = false;
			switch (t->harness_variant) {
			case NG_FLEET_HARNESS_EMPTY: r->n_samples = 0; break;
			case NG_FLEET_HARNESS_ZERO:
				for (size_t k = 0; k < r->n_samples; k++)
					r->samples[k] = 0.0;
				break;
			default: r->wrong = NAN; break;
			}
		}
		if (unit_of(k_of(s, node, run, attempt, S_TRANSIENT, m, 0)) < s->transient_harness_p) {
			r->measured = false;
			r->n_samples = 0;
			r->wrong = 0;
		}
	}
}

void ng_fleet_draw(const ng_fleet_spec *s, size_t node, size_t run, unsigned attempt,
                   ng_fleet_probe *out)
{
	ng_fleet_truth t;
	ng_fleet_truth_of(s, node, &t);
	ng_fleet_draw_truth(s, &t, run, attempt, out);
}
