/* Contestant 4: two standard deviations below the fleet median.
 *
 * The published rule: the seed ../shared/seeds/002_2fce30c34ee2fac9.txt,
 * "compare each node against the fleet: a node two standard deviations below
 * the median on bus bandwidth is suspect even though every absolute number
 * looks fine", and "Automate the cordon: a node crossing the rule set gets
 * tainted immediately". The seed says nothing of runs that measured nothing
 * or of wrong results; a value-only rule compares the numbers it has.
 *
 * Here: per class (the fleet of one hardware type), per metric and per run,
 * the median and the standard deviation (n - 1) of the in-service nodes' run
 * medians; a node under median - 2 sd is cordoned (drained) at once. A run
 * without samples is not compared (so not flagged); wrong results are not
 * read. Every metric gets the rule, not only bus bandwidth. The seed's own
 * answer to "how do you avoid cordoning half the fleet after a driver
 * upgrade?" is to "require a signal to persist across two checks": a node
 * is cordoned when the same metric is under the bar in two checks in a row
 * (this run's and the previous one's). Where the scenario sets a workload
 * floor, a value under it is a signal too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "sim.h"

double ng_sim_sigma_bar(const double *values, size_t n)
{
	double *w = malloc((n ? n : 1) * sizeof *w);
	if (!w)
		return NAN;
	size_t k = 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(values[i]))
			w[k++] = values[i], sum += values[i];
	if (k < 2) {
		free(w);
		return NAN;
	}
	double mean = sum / (double)k, ss = 0;
	for (size_t i = 0; i < k; i++)
		ss += (w[i] - mean) * (w[i] - mean);
	double sd = sqrt(ss / (double)(k - 1));
	double med = ng_np_median_inplace(w, k);
	free(w);
	return med - 2.0 * sd;
}

struct state {
	double *values;
	double *column;
	bool *signal; /* [node * NG_FLEET_METRICS_MAX + m]: under the bar in the previous check */
};

static void *create(const ng_sim_fleet *f)
{
	struct state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->values = malloc(f->spec->n_nodes * NG_FLEET_METRICS_MAX * sizeof(double));
	st->column = malloc(f->spec->n_nodes * sizeof(double));
	st->signal = calloc(f->spec->n_nodes * NG_FLEET_METRICS_MAX, sizeof(bool));
	if (!st->values || !st->column || !st->signal) {
		free(st->values), free(st->column), free(st->signal), free(st);
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
		for (size_t m = 0; m < s->n_metrics; m++)
			st->values[node * NG_FLEET_METRICS_MAX + m] = ng_sim_value_median(&p.m[m]);
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
			double bar = ng_sim_sigma_bar(st->column, k);
			for (size_t node = start; node < end; node++) {
				if (!in_service[node])
					continue;
				double v = st->values[node * NG_FLEET_METRICS_MAX + m];
				bool now = (isfinite(bar) && v < bar) || ng_sim_below_floor(f, c, m, v);
				bool *was = &st->signal[node * NG_FLEET_METRICS_MAX + m];
				if (now && *was)
					out[node].action = NG_SIM_DRAIN;
				*was = now;
			}
		}
		start = end;
	}
	return 0;
}

static void destroy(void *state)
{
	struct state *st = state;
	if (!st)
		return;
	free(st->values), free(st->column), free(st->signal), free(st);
}

const ng_sim_contestant ng_sim_sigma = {
	.name = "2sigma",
	.rule = "under the fleet median - 2 sd of the class, per metric, in two checks in a row: cordoned",
	.create = create,
	.run = run,
	.destroy = destroy,
};
