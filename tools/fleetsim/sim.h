/* The fleet decision simulator: every contestant screens the same synthetic
 * fleet (tools/fleet/fleet_model.h) on the same draws, and is scored against
 * the planted truth. docs/fleet-simulator.md defines the contestants and the
 * scores.
 *
 * A run is one daily screen of every node still in service. For each run, a
 * contestant sees the fleet (it draws its own probe results through
 * ng_fleet_draw_truth, so every contestant sees the same numbers for the same
 * (node, run, attempt)) and says, for each node in service, whether it
 * admits it, holds it out of this run's allocations, or drains it. A drained
 * node leaves the fleet for the rest of the simulation. */
#ifndef NODEGATE_TOOLS_FLEETSIM_SIM_H
#define NODEGATE_TOOLS_FLEETSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "fleet_model.h"

typedef enum { NG_SIM_ADMIT, NG_SIM_HOLD, NG_SIM_DRAIN } ng_sim_action;

typedef struct {
	const ng_fleet_spec *spec;
	const ng_fleet_truth *truth; /* [spec->n_nodes] */
	const double *reference;     /* [cls * NG_FLEET_METRICS_MAX + metric]: the SKU's reference value */
	/* A nodegate policy document (core/policy.h) applied over the defaults
	 * before the floors, or NULL. */
	const cJSON *nodegate_policy;
	/* Runs after which an operator runs `nodegate fleet clear` on a
	 * fleet-regression event the breaker opened; 0: nobody does. */
	size_t fleet_clear_after;
	FILE *trace; /* where the nodegate contestant explains each quarantine, or NULL */
	/* The workload's floor in this scenario, as a share of the SKU
	 * reference, for every contestant alike; 0: no floors, as nodegate's
	 * policy ships. */
	double floor_fraction;
} ng_sim_fleet;

/* What a contestant did to one node in one run. */
typedef struct {
	ng_sim_action action;
	unsigned attempts;     /* probe runs spent on the node this run (>= 1) */
	/* the attempt whose result of metric m the rule used last (0: the first);
	 * what a later attempt re-measured counts as measured if it measured */
	unsigned char last[NG_FLEET_METRICS_MAX];
} ng_sim_decision;

typedef struct ng_sim_contestant {
	const char *name;  /* short, for the table */
	const char *rule;  /* one line: the rule and where it is published */
	void *(*create)(const ng_sim_fleet *f);
	/* Decide run `run` for every node with in_service[node]; out[node] for
	 * those. Returns 0, or -1 on a failure (out of memory). */
	int (*run)(void *state, const ng_sim_fleet *f, size_t run, const bool *in_service,
	           ng_sim_decision *out);
	void (*destroy)(void *state);
} ng_sim_contestant;

extern const ng_sim_contestant ng_sim_dcgm;       /* contest_dcgm.c */
extern const ng_sim_contestant ng_sim_aznhc;      /* contest_aznhc.c */
extern const ng_sim_contestant ng_sim_superbench; /* contest_superbench.c */
extern const ng_sim_contestant ng_sim_sigma;      /* contest_sigma.c */
extern const ng_sim_contestant ng_sim_nodegate;   /* contest_nodegate.c */

/* ---- helpers the contestants share (sim_util.c) -------------------------------------- */

double ng_sim_mean(const double *v, size_t n);
double ng_sim_median(const double *v, size_t n); /* copies; n <= NG_FLEET_SAMPLES_MAX */
/* The value a rule reads from one metric's result: the mean (or median) of
 * its samples, or NaN when there are none. */
double ng_sim_value_mean(const ng_fleet_result *r);
double ng_sim_value_median(const ng_fleet_result *r);
/* The scenario's floor of a class's metric, NaN when it sets none. */
double ng_sim_floor(const ng_sim_fleet *f, size_t cls, size_t m);
/* Whether a measured value is under the scenario's floor. */
bool ng_sim_below_floor(const ng_sim_fleet *f, size_t cls, size_t m, double value);
/* Whether DCGM's diagnostics measure the metric: the GPU's compute and
 * memory plugins and the GPU fabric, not storage, the CPU or host memory. */
bool ng_sim_dcgm_measures(const char *metric);

/* ---- the individual rules, exposed for their tests -------------------------------- */

/* DCGM: fails when the value is below 0.75 x reference, when nothing was
 * measured, or when wrong > 0. */
bool ng_sim_dcgm_fails(const ng_fleet_result *r, double reference);
/* AzNHC: the per-SKU constant (0.90 x reference) against each iteration. */
bool ng_sim_aznhc_iteration_passes(const ng_fleet_result *r, double reference);
/* One check's REPEATS over its iterations in order (at most 3 are run):
 * passes on the first iteration that meets the constant; wrong results in an
 * iteration fail at once. Returns the iterations run. */
unsigned ng_sim_aznhc_repeats(const ng_fleet_result *const *iter, size_t n, double reference,
                              bool *pass, bool *wrong);
/* SuperBench: the trimmed fleet mean of values (NaN entries ignored): the
 * mean, then repeatedly the mean of the values whose variance against it is
 * not below `threshold` (-0.05), until no value is dropped. */
double ng_sim_superbench_baseline(const double *values, size_t n, double threshold);
/* Two standard deviations below the fleet median (NaN entries ignored):
 * the bar median - 2 sd; NaN with fewer than two values. */
double ng_sim_sigma_bar(const double *values, size_t n);

/* ---- the simulation --------------------------------------------------------------- */

typedef struct {
	char name[32];
	/* scores (docs/fleet-simulator.md) */
	size_t healthy_drained;         /* drained while not sick */
	size_t harness_drained;         /* of those, HARNESS nodes (healthy hardware, broken harness) */
	size_t sick_total;              /* nodes sick at some run */
	size_t sick_caught;             /* drained while sick */
	size_t caught_of[NG_FLEET_FAULT_COUNT + 1]; /* of those, by kind; [COUNT] = degraded class */
	size_t escaped[NG_FLEET_FAULT_COUNT + 1]; /* sick never drained, by kind; [COUNT] = degraded class */
	size_t sick_of[NG_FLEET_FAULT_COUNT + 1];
	size_t regression_drained;      /* drained while not sick at a run >= regression_run,
	                                 * and not drained by then on the same draws without
	                                 * the regression's drop: drained by the regression */
	size_t rollout_drained;         /* every node drained in runs regression_run..+2 */
	size_t unmeasured_runs;         /* runs whose evidence stayed unmeasured */
	size_t unmeasured_passed;       /* of those, admitted */
	size_t probe_runs;              /* attempts spent */
	size_t held_healthy_runs;       /* healthy node-runs held out */
	size_t sick_admitted_runs;      /* sick node-runs admitted */
	double ttd_mean;                /* runs from sick to drained, over caught nodes */
	size_t ttd_max;
	size_t escalations;             /* nodegate: fleet-regression events opened */
} ng_sim_score;

typedef struct {
	size_t n_contestants;
	ng_sim_score score[8];
	double seconds;
	size_t fleet_clear_after;
	double floor_fraction;
	bool degraded_below_floor; /* the degraded class fell under the scenario's floor */
	char scenario[32];         /* its name (main.c), "" for the default fleet */
	char policy[256]; /* the --policy file, "" for the defaults */
} ng_sim_result;

/* Runs every contestant on the fleet. Returns 0 or -1 (with a message on
 * stderr). */
int ng_sim_run(const ng_fleet_spec *spec, const ng_sim_contestant *const *contestants,
               size_t n, const cJSON *nodegate_policy, size_t fleet_clear_after,
               double floor_fraction, FILE *trace, ng_sim_result *out);

/* Recall over the node faults (slow, bimodal, load, corrupt), the target's
 * recall; and over every sick node, the degraded class's included. */
double ng_sim_node_recall(const ng_sim_score *s);
double ng_sim_all_recall(const ng_sim_score *s);

void ng_sim_print_table(FILE *out, const ng_fleet_spec *spec, const ng_sim_result *res);
/* Writes the result as JSON (with the spec and seed) to path. 0 or -1. */
int ng_sim_write_json(const char *path, const ng_fleet_spec *spec, const ng_sim_result *res);

/* The targets for nodegate (the contestant named "nodegate"): no healthy
 * node drained by the fleet-wide regression, no unmeasured run passed, at
 * least 85% of the node faults caught, no contestant that catches as many
 * node faults draining fewer healthy nodes, and, where the degraded class
 * fell under the scenario's floor, at most 1% of it escaping. Prints one
 * line per target (and a note for each contestant that drains fewer healthy
 * nodes by catching fewer sick ones); returns how many fail. */
int ng_sim_check_targets(FILE *out, const ng_sim_result *res);

/* The standard scenarios (scenarios.c): applies the named one to a default
 * spec (call ng_fleet_init after) and sets the floors it gives every
 * contestant; -1 for an unknown name. */
int ng_sim_scenario(const char *name, ng_fleet_spec *s, double *floor_fraction);
void ng_sim_scenarios_print(FILE *out);

/* nodegate's own counter, kept by its contestant for the score. */
size_t ng_sim_nodegate_escalations(const void *state);

#endif
