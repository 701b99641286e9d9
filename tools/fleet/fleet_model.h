/* A synthetic GPU fleet with planted truth: who is sick, how, and from when.
 *
 * Shared by the decision simulator (tools/fleetsim, docs/fleet-simulator.md)
 * and the fleet report's generator. Everything is a pure function of the
 * spec: no globals, no allocation, no I/O, no clock. Every random number
 * comes from a counter-based generator keyed by (seed, node, run, attempt,
 * metric, sample), so
 *   - the same spec and seed give the same fleet and the same probe results
 *     on every machine, in any order of calls, from any thread;
 *   - every consumer (each contestant of the simulator, the report) that
 *     draws (node, run, attempt) sees the very same numbers;
 *   - a confirmation (attempt 1, 2, ...) of the same run sees fresh noise.
 *
 * ---- the fleet ----------------------------------------------------------------------
 *
 * Nodes 0..n-1 are split into classes in order (class 0 takes the first
 * classes[0].n_nodes nodes, ...). A class is one hardware/topology type; for
 * each metric it has
 *   median    the healthy node's expected value (canonical unit);
 *   cv        the run-to-run noise of one sample: each sample of a run is
 *             value x (1 + cv x z), z standard normal (truncated at +-4);
 *   node_cv   how far healthy nodes of the class sit from each other: a
 *             node's own factor is 1 + node_cv x z (fixed for the node);
 *   run_cv    a shift shared by all samples of one run (warm caches, a
 *             neighbour's job, the hour): 1 + run_cv x z per run and attempt.
 * The default fleet (ng_fleet_spec_default) has four classes and the six
 * metrics below with cvs of 1% (compute, GPU memory), 3% (fabric, host
 * memory, CPU) and 8% (storage).
 *
 * Metrics use nodegate's registered names (core/metric.c):
 *   gpu.gemm.tflops (compute), gpumem.copy.gbps (memory),
 *   storage.seqread.gbps (storage), nccl.all_reduce.busbw (fabric),
 *   cpu.fp64.gflops (compute), hostmem.copy.gbps (memory).
 *
 * ---- planted truth ------------------------------------------------------------------
 *
 * Each node gets at most one planted node fault, from an exact count per
 * kind (round(share x n), at least one when the share is > 0), placed on
 * nodes by a seeded permutation, with its own metric, severity and onset run
 * (uniform in [onset_min, onset_max)); before its onset the node is healthy.
 *
 *   SLOW       one metric (so one domain) slowed by `severity`, uniform in
 *              [slow_min, slow_max] (3-30% by default), in every run.
 *   BIMODAL    intermittent: in a run it shows in (probability
 *              bimodal_run_p) each sample independently drops to a low mode
 *              (1 - severity, severity 30-50%) with probability
 *              bimodal_sample_p (20-45% per node); other samples are normal.
 *              Runs where it does not show are clean.
 *   LOAD       fails only under load: slowed by `severity` (10-25%) in a
 *              LOADED run and normal otherwise. A run is loaded when it is a
 *              long run (run % load_every == load_every - 1: the weekly deep
 *              screen) or when it is a confirmation (attempt >= 1: the
 *              confirmation runs the long, sustained profile under the
 *              controlled conditions the admission seed asks for). The short
 *              daily screen (attempt 0 of an ordinary run) does not load the
 *              node long enough to throttle it.
 *   CORRUPT    wrong results: in each run, with probability corrupt_p, the
 *              affected metric's result carries wrong > 0 (1-64 wrong
 *              elements); its timing is normal.
 *   HARNESS    a harness failure that measures nothing: in each run, with
 *              probability harness_p, the affected metric is unmeasured, in
 *              one of three ways fixed per node (harness_variant): no samples
 *              at all (a tool that exited 0 having benchmarked nothing);
 *              samples that are all 0 (N/A read as 0); or samples present but
 *              correctness unchecked (wrong is null: NaN here). The node's
 *              hardware is healthy.
 *
 * Every node, sick or not, also has a transient harness failure (no samples)
 * in a run's metric with probability transient_harness_p.
 *
 * Fleet-wide events, independent of the node faults:
 *   REGRESSION a software change rolled out to every node at run
 *              regression_run: from then on the probe reports the new
 *              software identity (software_after instead of
 *              software_before), and regression_metric drops by
 *              regression_drop (8-15%) on every node of every class.
 *              Nothing is wrong with any node.
 *   DEGRADED   class degraded_class degrades together from degraded_run:
 *              degraded_metric drops by degraded_drop on every node of the
 *              class (a bad firmware batch, a hot row) without any software
 *              change. Those nodes ARE sick from degraded_run on.
 *
 *   INCIDENT   a short shared incident (an hour of slow shared storage):
 *              in run incident_run, the incident_nodes nodes screened one
 *              after the other from node incident_first (in node order, the
 *              screening order: about an hour's worth) see incident_metric
 *              drop by incident_drop, in every attempt of that run. Nothing is
 *              wrong with them.
 *   ROLLOUT    a staggered rollout: from rollout_run on, a rollout_share of
 *              rollout_class's nodes (a seeded draw per node) see
 *              rollout_metric drop by rollout_drop; with rollout_identity
 *              they also report the software identity software_rollout
 *              (until the fleet-wide change reaches them too), without it
 *              their identity does not change. Not sick.
 *   RAMP       slow_ramp_runs > 1: a SLOW fault reaches its severity over
 *              that many runs from its onset (a fault that ramps), sick from
 *              its onset on.
 *
 * A node is sick in run r (ng_fleet_sick) when its planted node fault is of a
 * hardware kind (SLOW, BIMODAL, LOAD, CORRUPT) with onset <= r, or it is in
 * the degraded class from degraded_run on. HARNESS nodes are never sick.
 *
 * ---- drawing -----------------------------------------------------------------------
 *
 * ng_fleet_draw(spec, node, run, attempt, &probe) is the probe result of one
 * screen: for every metric its samples (spec->samples of them, none when
 * unmeasured), wrong (0 clean, > 0 corrupt, NaN = not checked), whether it
 * measured, and the node's class name and software identity. It costs about
 * samples x metrics normal draws; no state is kept between calls.
 */
#ifndef NODEGATE_TOOLS_FLEET_MODEL_H
#define NODEGATE_TOOLS_FLEET_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NG_FLEET_METRICS_MAX 8
#define NG_FLEET_CLASSES_MAX 512
#define NG_FLEET_SAMPLES_MAX 64
#define NG_FLEET_NAME_MAX 64

typedef enum {
	NG_FLEET_HEALTHY,
	NG_FLEET_SLOW,
	NG_FLEET_BIMODAL,
	NG_FLEET_LOAD,
	NG_FLEET_CORRUPT,
	NG_FLEET_HARNESS,
	NG_FLEET_FAULT_COUNT
} ng_fleet_fault;

/* "healthy", "slow", "bimodal", "load", "corrupt", "harness". */
const char *ng_fleet_fault_name(ng_fleet_fault f);

/* How a HARNESS node's failing runs fail to measure. */
typedef enum {
	NG_FLEET_HARNESS_EMPTY,     /* no samples */
	NG_FLEET_HARNESS_ZERO,      /* samples all 0: N/A read as 0 */
	NG_FLEET_HARNESS_UNCHECKED, /* samples, but wrong is null (NaN) */
	NG_FLEET_HARNESS_VARIANTS
} ng_fleet_harness_variant;

typedef struct {
	char name[NG_FLEET_NAME_MAX]; /* nodegate metric name */
	char domain[16];              /* compute, memory, storage, fabric */
	char unit[16];
} ng_fleet_metric;

typedef struct {
	char name[NG_FLEET_NAME_MAX]; /* the class key, less software identity */
	size_t n_nodes;
	double median[NG_FLEET_METRICS_MAX];
	double cv[NG_FLEET_METRICS_MAX];
	double node_cv[NG_FLEET_METRICS_MAX];
	double run_cv[NG_FLEET_METRICS_MAX];
} ng_fleet_class;

typedef struct {
	uint64_t seed;
	size_t n_runs;   /* runs per node (a run is one daily screen) */
	size_t samples;  /* samples per metric per run, <= NG_FLEET_SAMPLES_MAX */
	size_t load_every; /* every load_every-th run is loaded; 0: only confirmations */

	size_t n_metrics;
	ng_fleet_metric metrics[NG_FLEET_METRICS_MAX];
	size_t n_classes;
	ng_fleet_class classes[NG_FLEET_CLASSES_MAX];

	/* node faults: share of nodes per kind (HEALTHY's share is ignored) */
	double fault_share[NG_FLEET_FAULT_COUNT];
	size_t onset_min, onset_max; /* onset uniform in [onset_min, onset_max) */
	double slow_min, slow_max;   /* SLOW severity range */
	double load_min, load_max;   /* LOAD severity range */
	double bimodal_min, bimodal_max; /* BIMODAL low-mode drop range */
	double bimodal_sample_min, bimodal_sample_max; /* share of low samples */
	double bimodal_run_p;        /* a BIMODAL node shows in a run with this probability */
	double corrupt_p;            /* a CORRUPT node returns wrong results in a run */
	double harness_p;            /* a HARNESS node's run measures nothing */
	double transient_harness_p;  /* any node's metric in a run measures nothing */

	/* fleet-wide regression after a software change (regression_run >=
	 * n_runs: none) */
	size_t regression_run;
	size_t regression_metric;
	double regression_drop;
	char software_before[NG_FLEET_NAME_MAX], software_after[NG_FLEET_NAME_MAX];

	/* one class degraded together (degraded_class >= n_classes: none) */
	size_t degraded_class;
	size_t degraded_run;
	size_t degraded_metric;
	double degraded_drop;

	/* a short incident (incident_nodes 0: none) */
	size_t incident_run, incident_first, incident_nodes, incident_metric;
	double incident_drop;

	/* a staggered rollout (rollout_share 0: none) */
	size_t rollout_class, rollout_run, rollout_metric;
	double rollout_share, rollout_drop;
	bool rollout_identity;
	char software_rollout[NG_FLEET_NAME_MAX];

	size_t slow_ramp_runs; /* 0 or 1: a SLOW fault is at its severity from its onset */

	/* Filled by ng_fleet_init, read by the functions below. */
	size_t n_nodes;
	size_t fault_count[NG_FLEET_FAULT_COUNT];
	uint64_t perm_a, perm_b; /* node -> slot = (a x node + b) mod n, gcd(a, n) = 1 */
} ng_fleet_spec;

/* The default fleet: n_nodes split over four classes (40/30/20/10%), n_runs
 * daily runs, 16 samples, a weekly loaded run, 1% SLOW, 0.5% each of
 * BIMODAL, LOAD, CORRUPT and HARNESS, onsets in [3, n_runs - 5), transient
 * harness failures in 0.05% of metric runs, a 12% fabric regression
 * (nccl.all_reduce.busbw) at run n_runs / 2 (software "sw-2026.10" ->
 * "sw-2026.11"), and class 3 degraded 30% in storage from run n_runs * 3 / 4.
 * Change any field afterwards and call ng_fleet_init again. */
void ng_fleet_spec_default(ng_fleet_spec *s, size_t n_nodes, size_t n_runs, uint64_t seed);

/* Checks the spec and fills its derived fields. Returns 0, or -1 with a
 * sentence in why (may be NULL) when a field is out of range. */
int ng_fleet_init(ng_fleet_spec *s, char *why, size_t why_len);

/* Index of a metric by name, or -1. */
int ng_fleet_metric_index(const ng_fleet_spec *s, const char *name);

/* The planted truth of one node. */
typedef struct {
	size_t node;
	size_t cls;
	ng_fleet_fault fault;
	size_t metric;   /* the metric the fault touches (fault != HEALTHY) */
	double severity; /* SLOW, LOAD: slowdown; BIMODAL: low-mode drop */
	double bimodal_sample_p;
	ng_fleet_harness_variant harness_variant;
	size_t onset;    /* first run the fault shows */
	double node_factor[NG_FLEET_METRICS_MAX]; /* the healthy node's own level */
} ng_fleet_truth;

void ng_fleet_truth_of(const ng_fleet_spec *s, size_t node, ng_fleet_truth *t);

/* Whether the node is sick in run r (see above), and whether its sickness
 * then is the class's degradation (not a node fault). */
bool ng_fleet_sick(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run);
bool ng_fleet_in_degraded_class(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run);
/* Whether run r of a node is loaded at this attempt. */
bool ng_fleet_loaded(const ng_fleet_spec *s, size_t run, unsigned attempt);
/* Whether the node takes part in the staggered rollout (from rollout_run on). */
bool ng_fleet_in_rollout(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run);

typedef struct {
	bool measured;  /* false: the harness measured nothing (see HARNESS) */
	size_t n_samples;
	double samples[NG_FLEET_SAMPLES_MAX];
	double wrong;   /* 0 clean, > 0 wrong elements, NaN not checked */
} ng_fleet_result;

typedef struct {
	size_t node, run;
	unsigned attempt;
	size_t cls;
	const char *class_name; /* points into the spec */
	const char *software;   /* points into the spec */
	bool loaded;
	size_t n_metrics;
	ng_fleet_result m[NG_FLEET_METRICS_MAX];
} ng_fleet_probe;

void ng_fleet_draw(const ng_fleet_spec *s, size_t node, size_t run, unsigned attempt,
                   ng_fleet_probe *out);
/* The same with the node's truth already at hand (saves recomputing it). */
void ng_fleet_draw_truth(const ng_fleet_spec *s, const ng_fleet_truth *t, size_t run,
                         unsigned attempt, ng_fleet_probe *out);

/* The underlying generator, for consumers that need more draws of their own
 * keyed the same way: a uniform in (0, 1) and a standard normal. */
double ng_fleet_uniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d);
double ng_fleet_normal(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d);

#endif
