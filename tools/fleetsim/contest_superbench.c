/* Contestant 3: value against a trimmed fleet mean with SuperBench's
 * variance criterion.
 *
 * The published rule (../shared/reference/prior-art.md, section 4):
 * microsoft/superbenchmark's data diagnosis (`sb result diagnosis`,
 * superbench/analyzer/diagnosis_rule_op.py) applies a `variance` rule,
 * (raw - baseline) / baseline against a lambda, the documented example being
 * `lambda x: x < -0.05`; `failure_check` makes a missing metric (`<metric>_miss`)
 * and a non-zero return code a FailedTest. The baseline
 * (superbench/analyzer/baseline_generation.py, fix_threshold) is the mean of
 * the fleet, then the mean of the nodes that do not violate the rule against
 * it, repeated until stable: a trimmed fleet mean, per machine type. There is
 * no repeat or confirmation; SuperBench reports, and the operator drains the
 * defective nodes it names, which this contestant does.
 *
 * The baseline is generated once, offline, from a run of the fleet
 * (`sb result generate-baseline`, then kept in the rule file), not rebuilt
 * at each diagnosis.
 *
 * Here: the baseline is built from the first run's nodes of the class (the
 * machine type) and kept for the month; a node's value is the mean of its samples (the per-rank summary
 * rule's mean); a benchmark that found wrong results exits non-zero, so
 * wrong > 0 is a failed test; a run that checked nothing is invisible.
 * Where the scenario sets a workload floor, a value under it is defective. */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

#define SB_THRESHOLD (-0.05)

double ng_sim_superbench_baseline(const double *values, size_t n, double threshold)
{
	bool *kept = malloc((n ? n : 1) * sizeof *kept);
	if (!kept)
		return NAN;
	for (size_t i = 0; i < n; i++)
		kept[i] = isfinite(values[i]);
	double mean = NAN;
	for (;;) {
		double sum = 0;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (kept[i])
				sum += values[i], k++;
		if (!k) {
			mean = NAN;
			break;
		}
		mean = sum / (double)k;
		bool dropped = false;
		for (size_t i = 0; i < n; i++)
			if (kept[i] && (values[i] - mean) / mean < threshold)
				kept[i] = false, dropped = true;
		if (!dropped)
			break;
	}
	free(kept);
	return mean;
}

struct state {
	double *values; /* [node * NG_FLEET_METRICS_MAX + m] */
	double *wrong;
	double *column;
	double base[NG_FLEET_CLASSES_MAX * NG_FLEET_METRICS_MAX];
	bool have_base;
};

static void *create(const ng_sim_fleet *f)
{
	struct state *st = calloc(1, sizeof *st);
	size_t n = f->spec->n_nodes * NG_FLEET_METRICS_MAX;
	if (!st)
		return NULL;
	st->values = malloc(n * sizeof(double));
	st->wrong = malloc(n * sizeof(double));
	st->column = malloc(f->spec->n_nodes * sizeof(double));
	if (!st->values || !st->wrong || !st->column) {
		free(st->values), free(st->wrong), free(st->column), free(st);
		return NULL;
	}
	return st;
}

static int run(void *state, const ng_sim_fleet *f, size_t r, const bool *in_service,
               ng_sim_decision *out)
{
	struct state *st = state;
	const ng_fleet_spec *s = f->spec;
	ng_fleet_probe p;
	for (size_t node = 0; node < s->n_nodes; node++) {
		if (!in_service[node])
			continue;
		ng_fleet_draw_truth(s, &f->truth[node], r, 0, &p);
		for (size_t m = 0; m < s->n_metrics; m++) {
			st->values[node * NG_FLEET_METRICS_MAX + m] = ng_sim_value_mean(&p.m[m]);
			st->wrong[node * NG_FLEET_METRICS_MAX + m] = p.m[m].wrong;
		}
		out[node] = (ng_sim_decision){.action = NG_SIM_ADMIT, .attempts = 1};
	}
	size_t start = 0;
	for (size_t c = 0; c < s->n_classes; c++) {
		size_t end = start + s->classes[c].n_nodes;
		for (size_t m = 0; m < s->n_metrics; m++) {
			size_t k = 0;
			for (size_t node = start; node < end; node++)
				if (in_service[node])
					st->column[k++] = st->values[node * NG_FLEET_METRICS_MAX + m];
			double *b = &st->base[c * NG_FLEET_METRICS_MAX + m];
			if (!st->have_base)
				*b = ng_sim_superbench_baseline(st->column, k, SB_THRESHOLD);
			double base = *b;
			for (size_t node = start; node < end; node++) {
				if (!in_service[node])
					continue;
				double v = st->values[node * NG_FLEET_METRICS_MAX + m];
				bool defective = !isfinite(v) /* <metric>_miss */ ||
				                 st->wrong[node * NG_FLEET_METRICS_MAX + m] > 0 ||
				                 !isfinite(base) || (v - base) / base < SB_THRESHOLD ||
				                 ng_sim_below_floor(f, c, m, v);
				if (defective)
					out[node].action = NG_SIM_DRAIN;
			}
		}
		start = end;
	}
	st->have_base = true;
	return 0;
}

static void destroy(void *state)
{
	struct state *st = state;
	if (!st)
		return;
	free(st->values), free(st->wrong), free(st->column), free(st);
}

const ng_sim_contestant ng_sim_superbench = {
	.name = "superbench",
	.rule = "variance against a trimmed fleet mean built once < -5%, missing metric or failed test drains",
	.create = create,
	.run = run,
	.destroy = destroy,
};
