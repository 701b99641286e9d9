/* The standard scenario set (docs/fleet-simulator.md, "Scenarios"): each a
 * change to the default fleet, the same for every contestant. */
#include <stdio.h>
#include <string.h>

#include "sim.h"

struct scenario {
	const char *name, *what;
	void (*apply)(ng_fleet_spec *s, double *floor_fraction);
};

static void today(ng_fleet_spec *s, double *fl) { (void)s, (void)fl; }
static void regression_8(ng_fleet_spec *s, double *fl) { (void)fl, s->regression_drop = 0.08; }
static void regression_20(ng_fleet_spec *s, double *fl) { (void)fl, s->regression_drop = 0.20; }

/* An hour of slow shared storage: the nodes screened in one hour of a day
 * (the screening runs in node order over 24 h) read 20% slower. */
static void storage_hour(ng_fleet_spec *s, double *fl)
{
	(void)fl;
	s->incident_run = s->n_runs / 3;
	s->incident_first = s->n_nodes * 10 / 24;
	s->incident_nodes = s->n_nodes / 24;
	s->incident_metric = 2; /* storage.seqread.gbps */
	s->incident_drop = 0.20;
}

/* 40% of the largest class 12% down in all-reduce from one run on. */
static void rollout(ng_fleet_spec *s, bool identity)
{
	s->rollout_class = 0;
	s->rollout_share = 0.40;
	s->rollout_run = s->n_runs / 3;
	s->rollout_metric = 3; /* nccl.all_reduce.busbw */
	s->rollout_drop = 0.12;
	s->rollout_identity = identity;
}
static void rollout_same(ng_fleet_spec *s, double *fl) { (void)fl, rollout(s, false); }
static void rollout_new(ng_fleet_spec *s, double *fl) { (void)fl, rollout(s, true); }

/* A class of the same hardware as one of the four (the key's first four
 * parts, as the default class template writes them) under another
 * kernel, k. */
static void software_sibling(const char *hw_name, size_t k, char out[NG_FLEET_NAME_MAX])
{
	char name[NG_FLEET_NAME_MAX];
	const char *kernel = strrchr(hw_name, '/');
	snprintf(name, sizeof name, "%.*s/6.1.0-%zu-amd64", kernel ? (int)(kernel - hw_name) : 40,
	         hw_name, k);
	memcpy(out, name, sizeof name);
}

/* Classes of five nodes, the four hardware types in turn: families of
 * classes that differ only in software. */
static void small_classes(ng_fleet_spec *s, double *fl)
{
	(void)fl;
	size_t n = s->n_nodes / 5;
	if (n > NG_FLEET_CLASSES_MAX)
		n = NG_FLEET_CLASSES_MAX;
	if (n < 4)
		n = 4;
	ng_fleet_class types[4];
	memcpy(types, s->classes, sizeof types);
	for (size_t c = 0; c < n; c++) {
		s->classes[c] = types[c % 4];
		software_sibling(types[c % 4].name, c / 4, s->classes[c].name);
		s->classes[c].n_nodes = 5;
	}
	s->classes[n - 1].n_nodes += s->n_nodes - 5 * n;
	s->n_classes = n;
	s->degraded_class = 3;
}

/* A quarter of the fleet in classes of five nodes beside their parents:
 * each small class the same hardware as one of the four classes, under
 * another kernel (a partition moved early, a canary image), the parents
 * keeping the rest. */
static void small_beside_parent(ng_fleet_spec *s, double *fl)
{
	(void)fl;
	size_t n_small = s->n_nodes / 4 / 5;
	if (n_small < 4)
		n_small = 4;
	if (n_small > NG_FLEET_CLASSES_MAX - 4)
		n_small = NG_FLEET_CLASSES_MAX - 4;
	size_t taken[4] = {0};
	for (size_t k = 0; k < n_small; k++) {
		size_t parent = k % 4;
		if (s->classes[parent].n_nodes < 2 * 5 + taken[parent])
			continue; /* a parent keeps at least ten nodes */
		ng_fleet_class *c = &s->classes[s->n_classes++];
		*c = s->classes[parent];
		software_sibling(c->name, 27 + k / 4, c->name);
		c->n_nodes = 5;
		taken[parent] += 5;
	}
	for (size_t p = 0; p < 4; p++)
		s->classes[p].n_nodes -= taken[p];
}

/* A slow fault that reaches its severity over ten runs. */
static void ramp(ng_fleet_spec *s, double *fl) { (void)fl, s->slow_ramp_runs = 10; }

/* The degraded class under, and above, a workload floor at 0.75 x the
 * reference that every contestant gets. */
static void degraded_below_floor(ng_fleet_spec *s, double *fl) { s->degraded_drop = 0.30, *fl = 0.75; }
static void degraded_above_floor(ng_fleet_spec *s, double *fl) { s->degraded_drop = 0.15, *fl = 0.75; }

static const struct scenario all[] = {
	{"today", "the default fleet: a 12% fabric regression with a software change, a class 30% down in storage", today},
	{"regression-8", "the fleet-wide regression 8% instead of 12%", regression_8},
	{"regression-20", "the fleet-wide regression 20%", regression_20},
	{"storage-hour", "one hour of one day: the nodes screened then read storage 20% slower", storage_hour},
	{"rollout-same-identity", "40% of the largest class 12% down in all-reduce from run 10, software identity unchanged", rollout_same},
	{"rollout-new-identity", "the same rollout, reporting a new software identity", rollout_new},
	{"small-classes", "classes of five nodes", small_classes},
	{"small-beside-parent", "a quarter of the nodes in classes of five beside their parents (the same hardware, another kernel)", small_beside_parent},
	{"ramp", "slow faults reach their severity over ten runs", ramp},
	{"degraded-below-floor", "the class 30% down in storage, floors at 0.75 x reference for everyone", degraded_below_floor},
	{"degraded-above-floor", "the class 15% down in storage, floors at 0.75 x reference for everyone", degraded_above_floor},
};

int ng_sim_scenario(const char *name, ng_fleet_spec *s, double *floor_fraction)
{
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		if (strcmp(all[i].name, name) == 0) {
			all[i].apply(s, floor_fraction);
			return 0;
		}
	}
	return -1;
}

void ng_sim_scenarios_print(FILE *out)
{
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		fprintf(out, "%-22s %s\n", all[i].name, all[i].what);
}
