/* The simulation loop, the scores, the table and the JSON. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

#include "core/atomic_file.h"

#define DEGRADED NG_FLEET_FAULT_COUNT /* the kind slot of the degraded class */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool hw_fault(ng_fleet_fault f)
{
	return f == NG_FLEET_SLOW || f == NG_FLEET_BIMODAL || f == NG_FLEET_LOAD ||
	       f == NG_FLEET_CORRUPT;
}

/* The first run a node is sick, or n_runs when never. */
static size_t sick_from(const ng_fleet_spec *s, const ng_fleet_truth *t)
{
	size_t from = s->n_runs;
	if (hw_fault(t->fault) && t->onset < from)
		from = t->onset;
	if (s->degraded_class < s->n_classes && t->cls == s->degraded_class && s->degraded_run < from)
		from = s->degraded_run;
	return from;
}

static int kind_of(const ng_fleet_spec *s, const ng_fleet_truth *t)
{
	if (hw_fault(t->fault) && t->onset <= sick_from(s, t))
		return (int)t->fault;
	return DEGRADED;
}

static uint32_t unmeasured_mask(const ng_fleet_probe *p)
{
	uint32_t mask = 0;
	for (size_t m = 0; m < p->n_metrics; m++)
		if (!p->m[m].measured)
			mask |= 1u << m;
	return mask;
}

/* Runs one contestant over the fleet, scoring into sc and recording when
 * each node was drained (SIZE_MAX: never) in drained_at. */
static int run_one(const ng_sim_fleet *f, const ng_sim_contestant *c, const uint32_t *unmeasured0,
                   ng_sim_score *sc, size_t *drained_at)
{
	const ng_fleet_spec *s = f->spec;
	size_t n = s->n_nodes;
	bool *in = malloc(n * sizeof *in);
	ng_sim_decision *dec = calloc(n, sizeof *dec);
	void *state = c->create(f);
	if (!in || !dec || !state) {
		free(in), free(dec);
		if (state)
			c->destroy(state);
		fprintf(stderr, "fleetsim: out of memory setting up %s\n", c->name);
		return -1;
	}
	memset(sc, 0, sizeof *sc);
	snprintf(sc->name, sizeof sc->name, "%s", c->name);
	for (size_t i = 0; i < n; i++)
		in[i] = true, drained_at[i] = SIZE_MAX;
	int rc = 0;
	size_t ttd_sum = 0;
	for (size_t r = 0; r < s->n_runs && rc == 0; r++) {
		if ((rc = c->run(state, f, r, in, dec)) < 0) {
			fprintf(stderr, "fleetsim: %s failed in run %zu\n", c->name, r);
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (!in[i])
				continue;
			const ng_fleet_truth *t = &f->truth[i];
			const ng_sim_decision *d = &dec[i];
			bool sick = ng_fleet_sick(s, t, r);
			sc->probe_runs += d->attempts;
			uint32_t un = unmeasured0[i * s->n_runs + r];
			if (un && d->attempts > 1) {
				/* what a later attempt re-measured counts as measured if it did */
				ng_fleet_probe p;
				unsigned drawn = 0;
				for (size_t m = 0; m < s->n_metrics; m++) {
					if (!(un & (1u << m)) || d->last[m] == 0)
						continue;
					if (drawn != d->last[m])
						ng_fleet_draw_truth(s, t, r, d->last[m], &p), drawn = d->last[m];
					if (p.m[m].measured)
						un &= ~(1u << m);
				}
			}
			if (un) {
				sc->unmeasured_runs++;
				sc->unmeasured_passed += d->action == NG_SIM_ADMIT;
				if (f->trace && d->action == NG_SIM_ADMIT)
					fprintf(f->trace, "%s run %zu node %zu: admitted with unmeasured metrics 0x%x\n",
					        c->name, r, i, un);
			}
			if (d->action == NG_SIM_ADMIT && sick)
				sc->sick_admitted_runs++;
			if (d->action == NG_SIM_HOLD && !sick)
				sc->held_healthy_runs++;
			if (d->action != NG_SIM_DRAIN)
				continue;
			in[i] = false;
			drained_at[i] = r;
			if (r >= s->regression_run && r <= s->regression_run + 2)
				sc->rollout_drained++;
			if (sick) {
				sc->sick_caught++;
				sc->caught_of[kind_of(s, t)]++;
				size_t ttd = r - sick_from(s, t);
				ttd_sum += ttd;
				if (ttd > sc->ttd_max)
					sc->ttd_max = ttd;
			} else {
				sc->healthy_drained++;
				sc->harness_drained += t->fault == NG_FLEET_HARNESS;
			}
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		const ng_fleet_truth *t = &f->truth[i];
		size_t from = sick_from(s, t);
		if (from >= s->n_runs)
			continue;
		int k = kind_of(s, t);
		sc->sick_total++;
		sc->sick_of[k]++;
		bool caught = drained_at[i] != SIZE_MAX && drained_at[i] >= from;
		bool early = drained_at[i] != SIZE_MAX && drained_at[i] < from;
		if (caught || early)
			continue;
		sc->escaped[k]++;
		if (f->trace && k != DEGRADED)
			fprintf(f->trace, "%s escaped node %zu (%s, %s %.0f%% in %s from run %zu)\n",
			        c->name, i, s->classes[t->cls].name, ng_fleet_fault_name(t->fault),
			        t->severity * 100, s->metrics[t->metric].name, from);
	}
	sc->ttd_mean = sc->sick_caught ? (double)ttd_sum / (double)sc->sick_caught : NAN;
	if (c == &ng_sim_nodegate)
		sc->escalations = ng_sim_nodegate_escalations(state);
	c->destroy(state);
	free(in), free(dec);
	return rc;
}

int ng_sim_run(const ng_fleet_spec *spec, const ng_sim_contestant *const *contestants, size_t n,
               const cJSON *nodegate_policy, size_t fleet_clear_after, double floor_fraction,
               FILE *trace, ng_sim_result *out)
{
	double t0 = now_s();
	memset(out, 0, sizeof *out);
	if (n > sizeof out->score / sizeof out->score[0]) {
		fprintf(stderr, "fleetsim: at most 8 contestants\n");
		return -1;
	}
	size_t nodes = spec->n_nodes, cells = nodes * spec->n_runs;
	ng_fleet_truth *truth = malloc((nodes ? nodes : 1) * sizeof *truth);
	double *ref = calloc(NG_FLEET_CLASSES_MAX * NG_FLEET_METRICS_MAX, sizeof *ref);
	uint32_t *un0 = malloc((cells ? cells : 1) * sizeof *un0);
	size_t *drained = malloc((nodes ? nodes : 1) * sizeof *drained);
	size_t *drained_cf = malloc((nodes ? nodes : 1) * sizeof *drained_cf);
	if (!truth || !ref || !un0 || !drained || !drained_cf) {
		free(truth), free(ref), free(un0), free(drained), free(drained_cf);
		fprintf(stderr, "fleetsim: out of memory for %zu nodes\n", nodes);
		return -1;
	}
	for (size_t c = 0; c < spec->n_classes; c++)
		for (size_t m = 0; m < spec->n_metrics; m++)
			ref[c * NG_FLEET_METRICS_MAX + m] = spec->classes[c].median[m];
	ng_fleet_probe p;
	for (size_t i = 0; i < nodes; i++) {
		ng_fleet_truth_of(spec, i, &truth[i]);
		for (size_t r = 0; r < spec->n_runs; r++) {
			ng_fleet_draw_truth(spec, &truth[i], r, 0, &p);
			un0[i * spec->n_runs + r] = unmeasured_mask(&p);
		}
	}
	/* The same fleet and draws without the regression's drop (the software
	 * change still happens): a node drained while healthy after the change,
	 * and not drained by then here, was drained by the regression. */
	ng_fleet_spec cf = *spec;
	cf.regression_drop = 0;
	ng_sim_fleet f = {spec, truth, ref, nodegate_policy, fleet_clear_after, trace, floor_fraction};
	ng_sim_fleet fc = {&cf, truth, ref, nodegate_policy, fleet_clear_after, NULL, floor_fraction};
	int rc = 0;
	for (size_t c = 0; c < n && rc == 0; c++) {
		ng_sim_score scratch;
		rc = run_one(&f, contestants[c], un0, &out->score[c], drained);
		if (rc == 0 && spec->regression_run < spec->n_runs && spec->regression_drop > 0)
			rc = run_one(&fc, contestants[c], un0, &scratch, drained_cf);
		else
			memcpy(drained_cf, drained, nodes * sizeof *drained);
		for (size_t i = 0; rc == 0 && i < nodes; i++) {
			size_t at = drained[i];
			if (at != SIZE_MAX && at >= spec->regression_run && !ng_fleet_sick(spec, &truth[i], at) &&
			    !(drained_cf[i] <= at))
				out->score[c].regression_drained++;
		}
	}
	out->n_contestants = rc == 0 ? n : 0;
	out->fleet_clear_after = fleet_clear_after;
	out->floor_fraction = floor_fraction;
	out->degraded_below_floor = floor_fraction > 0 && spec->degraded_class < spec->n_classes &&
	                            spec->degraded_run < spec->n_runs &&
	                            1 - spec->degraded_drop < floor_fraction;
	free(truth), free(ref), free(un0), free(drained), free(drained_cf);
	out->seconds = now_s() - t0;
	return rc;
}

/* Recall over the node faults (slow, bimodal, load, corrupt): the faults a
 * node gate exists to catch, one node at a time. A class degraded together
 * is not a node fault: the nodes are what the class's change made them, and
 * draining the class is the outcome the breaker exists to prevent. It is
 * scored apart (nodes drained, events raised), never in this recall. */
double ng_sim_node_recall(const ng_sim_score *s)
{
	size_t caught = 0, eligible = 0;
	for (int k = 0; k < NG_FLEET_FAULT_COUNT; k++) {
		caught += s->caught_of[k];
		eligible += s->caught_of[k] + s->escaped[k];
	}
	return eligible ? (double)caught / (double)eligible : NAN;
}

/* Recall over every sick node, the degraded class's included. */
double ng_sim_all_recall(const ng_sim_score *s)
{
	size_t eligible = s->sick_caught;
	for (int k = 0; k <= NG_FLEET_FAULT_COUNT; k++)
		eligible += s->escaped[k];
	return eligible ? (double)s->sick_caught / (double)eligible : NAN;
}


void ng_sim_print_table(FILE *out, const ng_fleet_spec *s, const ng_sim_result *res)
{
	if (res->scenario[0])
		fprintf(out, "scenario: %s%s\n", res->scenario,
		        res->floor_fraction > 0 ? ", floors for every contestant" : "");
	fprintf(out,
	        "fleet: %zu nodes, %zu classes, %zu runs, %zu samples/metric, seed %llu; "
	        "regression %.0f%% of %s from run %zu; class %s %.0f%% down in %s from run %zu\n",
	        s->n_nodes, s->n_classes, s->n_runs, s->samples, (unsigned long long)s->seed,
	        s->regression_drop * 100, s->metrics[s->regression_metric].name, s->regression_run,
	        s->degraded_class < s->n_classes ? s->classes[s->degraded_class].name : "-",
	        s->degraded_drop * 100, s->metrics[s->degraded_metric].name, s->degraded_run);
	if (res->n_contestants) {
		const ng_sim_score *z = &res->score[0];
		fprintf(out, "sick nodes: %zu (slow %zu, bimodal %zu, load %zu, corrupt %zu, class %zu); "
		             "harness-broken nodes: %zu\n",
		        z->sick_total, z->sick_of[NG_FLEET_SLOW], z->sick_of[NG_FLEET_BIMODAL],
		        z->sick_of[NG_FLEET_LOAD], z->sick_of[NG_FLEET_CORRUPT], z->sick_of[DEGRADED],
		        s->fault_count[NG_FLEET_HARNESS]);
	}
	fprintf(out, "\n%-12s %7s %7s %6s %6s | %5s %5s %5s %5s | %7s %7s | %5s %6s %6s %7s %9s %5s\n",
	        "contestant", "healthy", "harness", "recall", "recall", "slow", "bimod", "load", "corr",
	        "class", "class", "regr", "unmeas", "held", "probes", "ttd", "escal");
	fprintf(out, "%-12s %7s %7s %6s %6s | %-23s | %7s %7s | %5s %6s %6s %7s %9s\n", "", "drained",
	        "drained", "nodes", "all", "node faults escaped", "drained", "escaped", "drain",
	        "passed", "runs", "runs", "mean/max");
	for (size_t c = 0; c < res->n_contestants; c++) {
		const ng_sim_score *z = &res->score[c];
		char ttd[32];
		if (isnan(z->ttd_mean))
			snprintf(ttd, sizeof ttd, "-");
		else
			snprintf(ttd, sizeof ttd, "%.1f/%zu", z->ttd_mean, z->ttd_max);
		fprintf(out, "%-12s %7zu %7zu %5.0f%% %5.0f%% | %5zu %5zu %5zu %5zu | %7zu %7zu | %5zu %6zu %6zu %7zu %9s %5zu\n",
		        z->name, z->healthy_drained, z->harness_drained, ng_sim_node_recall(z) * 100,
		        ng_sim_all_recall(z) * 100, z->escaped[NG_FLEET_SLOW], z->escaped[NG_FLEET_BIMODAL],
		        z->escaped[NG_FLEET_LOAD], z->escaped[NG_FLEET_CORRUPT], z->caught_of[DEGRADED],
		        z->escaped[DEGRADED], z->regression_drained, z->unmeasured_passed,
		        z->held_healthy_runs, z->probe_runs, ttd, z->escalations);
	}
	fprintf(out, "(%.1f s)\n", res->seconds);
}

static cJSON *spec_json(const ng_fleet_spec *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "seed", (double)s->seed);
	cJSON_AddNumberToObject(o, "nodes", (double)s->n_nodes);
	cJSON_AddNumberToObject(o, "runs", (double)s->n_runs);
	cJSON_AddNumberToObject(o, "samples", (double)s->samples);
	cJSON_AddNumberToObject(o, "load_every", (double)s->load_every);
	cJSON *cls = cJSON_AddArrayToObject(o, "classes");
	for (size_t c = 0; c < s->n_classes; c++) {
		cJSON *k = cJSON_CreateObject();
		cJSON_AddStringToObject(k, "name", s->classes[c].name);
		cJSON_AddNumberToObject(k, "nodes", (double)s->classes[c].n_nodes);
		cJSON *ms = cJSON_AddObjectToObject(k, "metrics");
		for (size_t m = 0; m < s->n_metrics; m++) {
			cJSON *x = cJSON_AddObjectToObject(ms, s->metrics[m].name);
			cJSON_AddNumberToObject(x, "median", s->classes[c].median[m]);
			cJSON_AddNumberToObject(x, "cv", s->classes[c].cv[m]);
			cJSON_AddNumberToObject(x, "node_cv", s->classes[c].node_cv[m]);
			cJSON_AddNumberToObject(x, "run_cv", s->classes[c].run_cv[m]);
		}
		cJSON_AddItemToArray(cls, k);
	}
	cJSON *faults = cJSON_AddObjectToObject(o, "planted_nodes");
	for (int f = NG_FLEET_SLOW; f < NG_FLEET_FAULT_COUNT; f++)
		cJSON_AddNumberToObject(faults, ng_fleet_fault_name((ng_fleet_fault)f),
		                        (double)s->fault_count[f]);
	cJSON *reg = cJSON_AddObjectToObject(o, "regression");
	cJSON_AddNumberToObject(reg, "run", (double)s->regression_run);
	cJSON_AddStringToObject(reg, "metric", s->metrics[s->regression_metric].name);
	cJSON_AddNumberToObject(reg, "drop", s->regression_drop);
	cJSON_AddStringToObject(reg, "software_before", s->software_before);
	cJSON_AddStringToObject(reg, "software_after", s->software_after);
	cJSON *deg = cJSON_AddObjectToObject(o, "degraded_class");
	if (s->degraded_class < s->n_classes) {
		cJSON_AddStringToObject(deg, "class", s->classes[s->degraded_class].name);
		cJSON_AddNumberToObject(deg, "run", (double)s->degraded_run);
		cJSON_AddStringToObject(deg, "metric", s->metrics[s->degraded_metric].name);
		cJSON_AddNumberToObject(deg, "drop", s->degraded_drop);
	}
	return o;
}

int ng_sim_write_json(const char *path, const ng_fleet_spec *spec, const ng_sim_result *res)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", "nodegate/fleetsim/1");
	cJSON_AddNumberToObject(o, "seed", (double)spec->seed);
	cJSON_AddStringToObject(o, "scenario", res->scenario[0] ? res->scenario : "today");
	cJSON_AddNumberToObject(o, "floors", res->floor_fraction);
	cJSON_AddItemToObject(o, "fleet", spec_json(spec));
	cJSON *ngo = cJSON_AddObjectToObject(o, "nodegate");
	if (res->policy[0])
		cJSON_AddStringToObject(ngo, "policy", res->policy);
	else
		cJSON_AddNullToObject(ngo, "policy");
	if (res->floor_fraction > 0)
		cJSON_AddNumberToObject(ngo, "floors", res->floor_fraction);
	else
		cJSON_AddStringToObject(ngo, "floors", "none (the shipped policy)");
	cJSON_AddNumberToObject(ngo, "fleet_clear_after", (double)res->fleet_clear_after);
	cJSON *arr = cJSON_AddArrayToObject(o, "contestants");
	for (size_t c = 0; c < res->n_contestants; c++) {
		const ng_sim_score *z = &res->score[c];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", z->name);
		cJSON_AddNumberToObject(x, "healthy_drained", (double)z->healthy_drained);
		cJSON_AddNumberToObject(x, "harness_drained", (double)z->harness_drained);
		cJSON_AddNumberToObject(x, "sick_total", (double)z->sick_total);
		cJSON_AddNumberToObject(x, "sick_caught", (double)z->sick_caught);
		cJSON_AddNumberToObject(x, "class_drained", (double)z->caught_of[DEGRADED]);
		double all = ng_sim_all_recall(z);
		if (isnan(all))
			cJSON_AddNullToObject(x, "recall_all");
		else
			cJSON_AddNumberToObject(x, "recall_all", all);
		double rc = ng_sim_node_recall(z);
		if (isnan(rc))
			cJSON_AddNullToObject(x, "recall");
		else
			cJSON_AddNumberToObject(x, "recall", rc);
		cJSON *esc = cJSON_AddObjectToObject(x, "sick_admitted");
		for (int k = NG_FLEET_SLOW; k <= NG_FLEET_FAULT_COUNT; k++)
			if (k != NG_FLEET_HARNESS)
				cJSON_AddNumberToObject(esc, k == DEGRADED ? "class" : ng_fleet_fault_name((ng_fleet_fault)k),
				                        (double)z->escaped[k]);
		cJSON_AddNumberToObject(x, "regression_drained", (double)z->regression_drained);
		cJSON_AddNumberToObject(x, "rollout_drained", (double)z->rollout_drained);
		cJSON_AddNumberToObject(x, "unmeasured_runs", (double)z->unmeasured_runs);
		cJSON_AddNumberToObject(x, "unmeasured_passed", (double)z->unmeasured_passed);
		cJSON_AddNumberToObject(x, "probe_runs", (double)z->probe_runs);
		cJSON_AddNumberToObject(x, "held_healthy_runs", (double)z->held_healthy_runs);
		cJSON_AddNumberToObject(x, "sick_admitted_runs", (double)z->sick_admitted_runs);
		if (isnan(z->ttd_mean))
			cJSON_AddNullToObject(x, "ttd_mean_runs");
		else
			cJSON_AddNumberToObject(x, "ttd_mean_runs", z->ttd_mean);
		cJSON_AddNumberToObject(x, "ttd_max_runs", (double)z->ttd_max);
		cJSON_AddNumberToObject(x, "escalations", (double)z->escalations);
		cJSON_AddItemToArray(arr, x);
	}
	char *text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text) {
		fprintf(stderr, "fleetsim: out of memory writing %s\n", path);
		return -1;
	}
	ng_err err;
	ng_atomic_file af;
	FILE *fp = ng_atomic_fopen(&af, path, 0644, &err);
	int rc = fp ? 0 : -1;
	if (fp) {
		fputs(text, fp);
		fputc('\n', fp);
		rc = ng_atomic_fclose(&af, fp, true, &err);
	}
	if (rc < 0)
		fprintf(stderr, "fleetsim: %s\n", err.msg);
	cJSON_free(text);
	return rc;
}

int ng_sim_check_targets(FILE *out, const ng_sim_result *res)
{
	const ng_sim_score *ng = NULL;
	for (size_t c = 0; c < res->n_contestants; c++)
		if (strcmp(res->score[c].name, ng_sim_nodegate.name) == 0)
			ng = &res->score[c];
	if (!ng) {
		fprintf(out, "target: nodegate did not run\n");
		return 1;
	}
	int fails = 0;
	bool ok = ng->regression_drained == 0;
	fails += !ok;
	fprintf(out, "target %-4s nodegate drains no healthy node during the fleet-wide regression (%zu)\n",
	        ok ? "met" : "MISS", ng->regression_drained);
	ok = ng->unmeasured_passed == 0;
	fails += !ok;
	fprintf(out, "target %-4s nodegate passes no unmeasured run (%zu of %zu)\n", ok ? "met" : "MISS",
	        ng->unmeasured_passed, ng->unmeasured_runs);
	double recall = ng_sim_node_recall(ng);
	/* classes of five nodes give a baseline little to go on: 80% there */
	double want = strcmp(res->scenario, "small-classes") == 0 ? 0.80 : 0.85;
	ok = recall >= want;
	fails += !ok;
	fprintf(out, "target %-4s nodegate catches at least %.0f%% of the node faults (%.0f%%)\n",
	        ok ? "met" : "MISS", want * 100, recall * 100);
	/* Healthy drains weighed against what was caught: a rule that screens
	 * less, or bars lower, drains fewer healthy nodes by missing sick ones. */
	const ng_sim_score *better = NULL;
	for (size_t c = 0; c < res->n_contestants; c++) {
		const ng_sim_score *z = &res->score[c];
		if (z != ng && ng_sim_node_recall(z) >= recall && z->healthy_drained < ng->healthy_drained)
			better = z;
	}
	ok = better == NULL;
	fails += !ok;
	fprintf(out, "target %-4s no contestant that catches as many node faults drains fewer healthy "
	             "nodes than nodegate (%zu)%s%s\n",
	        ok ? "met" : "MISS", ng->healthy_drained, better ? ": " : "", better ? better->name : "");
	if (res->degraded_below_floor) {
		size_t esc = ng->escaped[NG_FLEET_FAULT_COUNT], of = ng->sick_of[NG_FLEET_FAULT_COUNT];
		ok = esc * 100 <= of;
		fails += !ok;
		fprintf(out, "target %-4s at most 1%% of the class degraded below its floor escapes (%zu of %zu)\n",
		        ok ? "met" : "MISS", esc, of);
	}
	/* Not a target: who drains fewer healthy nodes at a lower recall. */
	for (size_t c = 0; c < res->n_contestants; c++) {
		const ng_sim_score *z = &res->score[c];
		if (z != ng && z->healthy_drained < ng->healthy_drained)
			fprintf(out, "note: %s drains fewer healthy nodes (%zu) and catches fewer node faults "
			             "(%.0f%%)\n",
			        z->name, z->healthy_drained, ng_sim_node_recall(z) * 100);
	}
	return fails;
}
