/* Two-stage admission: the flag rule and the node's outcome.
 *
 * The admission seed's rule: flag a metric below the larger of its absolute
 * floor and a policy fraction of the peer (class baseline) median; re-run only
 * the flagged domains once under the same controlled conditions; quarantine
 * only when the same domain fails twice, or when one run produces a data-
 * integrity failure. A marginal result shortens the recheck interval without
 * removing capacity, and a run that measured nothing holds the node for the
 * harness to be fixed: absent evidence neither admits nor accuses.
 *
 * Pure: no I/O, no clock, no globals, no allocation. Metrics here are the
 * higher-is-better kind (rates and bandwidths); the caller keeps latency
 * metrics out until their mirror rule exists. */
#ifndef NODEGATE_JUDGE_ADMIT_H
#define NODEGATE_JUDGE_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "core/verdict.h"

/* ---- the flag rule ---------------------------------------------------------------- */

typedef struct {
	double bar;         /* max(floor, fraction x median); NaN when not computable */
	double percent;     /* value / median x 100; NaN when not computable */
	bool floor_decides; /* the floor, not the peers, set the bar */
	bool flagged;       /* value < bar */
	bool evaluable;     /* value and median finite, median > 0 */
} ng_admit_flag;

/* floor: the metric's absolute floor in its canonical unit, or NaN when none
 * is registered (then the peers alone set the bar). A value or median that
 * is not a finite positive number is not evaluable and never flagged: the
 * caller treats it as unmeasured. */
ng_admit_flag ng_admit_flag_rule(double value, double baseline_median, double floor,
                                 double fraction);

/* ---- one metric of one run -------------------------------------------------------- */

typedef struct {
	const char *domain; /* compute, memory, storage, fabric, ... */
	const char *metric;
	double value;           /* the run's median, canonical unit */
	double baseline_median; /* NaN when the class has no baseline */
	double floor;           /* NaN when none is registered */
	ng_verdict gate;        /* the gate's verdict on this run against the baseline */
	/* The class has too few nodes for a baseline yet. The gate then says
	 * no-baseline; admission judges the run against the floor alone and
	 * otherwise admits with a warning, because holding every node of a new
	 * class would keep the class from ever getting a baseline. */
	bool establishing;
	/* For a run the gate called bimodal: the median of its samples under
	 * the gate's slow line, over the baseline median (ng_admit_low_mode).
	 * 0 or NaN when not known: the bimodal verdict then fails the metric. */
	double low_mode;
	/* The probe found this GPU or link below its siblings in the same node
	 * (probe.gpu_sibling_fraction). While the class is establishing, that is
	 * the only comparison there is, and it fails the metric. */
	bool sibling_outlier;
	/* How many of the node's last admission.unstable_window verdicts of
	 * this metric (this run's included) the gate called unstable. */
	unsigned unstable_recent;
	/* > 0: the baseline is a small class's (fewer nodes than
	 * min_baseline_nodes), and this is the bar its few nodes allow
	 * (ng_admit_small_bar); the peer bar is then no higher than it, and the
	 * gate's block or warn against a median of so few nodes only warns
	 * unless the value is under the bar. 0: an ordinary baseline. */
	double small_bar;
	/* The baseline's per-sample noise (its cv); 0 or NaN when not known. A
	 * bimodal run's slow samples must sit that far under the gate's slow
	 * line too (below). */
	double baseline_cv;
	/* The baseline's node spread (node_mad, the metric's unit) and its
	 * samples per run; 0 or NaN when not known. With baseline_cv they say
	 * how far a healthy run's median strays (ng_admit_spread_bar). */
	double node_spread;
	double run_samples;
	/* The node's own level of this metric: where its accepted runs of the
	 * class in the baseline window sat against their software identity's
	 * class baseline, times this run's baseline median; their run-to-run
	 * spread (1.4826 x their MAD, alike, the metric's unit) and how many
	 * runs there were; NaN and 0 when not known. */
	double own_level, own_spread;
	size_t own_runs;
	/* The mean of the node's newest own_recent_runs runs of the metric: this
	 * run's median and the accepted ones just before it, each as where it sat
	 * against its identity's class baseline, times this run's baseline
	 * median (admission.own_level_recent); NaN and 0 when not known. */
	double own_recent;
	size_t own_recent_runs;
} ng_admit_result;

/* The bar a node's own history sets (admission.own_level_*): under its own
 * level by own_level_sigmas spreads, the spread never less than a run
 * median's sampling noise (1.2533 x cv x level / sqrt(run_samples)) and
 * widened by sqrt(1 + pi / (2 runs)) for the level's own uncertainty, and
 * by at least own_level_drop of the level. 0 when there is none: the policy
 * turns it off, fewer than own_level_runs runs, or no number. */
double ng_admit_own_bar(double level, double spread, size_t runs, double cv, double run_samples,
                        const ng_policy *pol);
/* The same bar for the mean of `averaged` runs (1: ng_admit_own_bar):
 * their mean strays 1/sqrt(averaged) as far, so the spread is scaled by
 * sqrt(1 / averaged + pi / (2 runs)) instead, own_level_drop of the level
 * still the least. 0 when there is none or averaged is 0. */
double ng_admit_own_mean_bar(double level, double spread, size_t runs, size_t averaged, double cv,
                             double run_samples, const ng_policy *pol);

/* The lowest a peer bar may sit given how far a healthy node's run median
 * strays from the class's: median - spread_sigmas x sqrt(node_mad^2 +
 * (1.2533 x cv x median / sqrt(run_samples))^2), the nodes' own spread and
 * the noise of a median of run_samples samples. 0 when there is no such
 * bound (spread_sigmas 0, no node spread, or no number): the flag fraction
 * alone then sets the bar. */
double ng_admit_spread_bar(double median, double node_mad, double cv, double run_samples,
                           const ng_policy *pol);

/* What a small class's family says about its spread (ng_admit_pool_add):
 * the classes of one family (same GPUs, CPUs, memory and interconnect,
 * other software) scatter alike relative to their medians, so their
 * spreads pooled are known far better than five nodes know their own. */
typedef struct {
	double level_sq; /* sum over the family's baselines of (n - 1) x (node_mad / median)^2 */
	double noise_sq; /* ... of (n - 1) x cv^2 */
	double df;       /* ... of n - 1: the pooled spread's degrees of freedom */
	size_t classes;  /* baselines pooled */
} ng_admit_pool;

/* A small class's bar: the one-sided Student t prediction bound at
 * small_class_tail for one more healthy node's run median, median - t(n - 1)
 * x spread x sqrt(1 + 1/n), where spread is sqrt(node_mad^2 + noise^2): the
 * nodes' levels scatter by node_mad, and a run's median of run_samples
 * samples strays from its node's level by noise = 1.2533 x cv x median /
 * sqrt(run_samples) (cv x median itself when run_samples is NaN). 0 when
 * the baseline is not a small class's: n_nodes at or over
 * min_baseline_nodes or under small_class_min_nodes, or no number; the
 * least positive double (DBL_MIN) when the bound falls to zero or under:
 * the peers can fail nobody, and only the floor and the node's own level
 * and siblings judge it.
 * With a pool whose degrees of freedom exceed the class's own n - 1 (its
 * family's parent classes in it), node_mad and cv are the pool's relative
 * spreads times median and t has the pool's degrees of freedom: the class's
 * own median still counts for n nodes (the 1/n). */
double ng_admit_small_bar(double median, double node_mad, double cv, double run_samples,
                          size_t n_nodes, const ng_admit_pool *pool, const ng_policy *pol);

/* The family of a class key: its first admission.family_parts "/"-separated
 * parts, in out. False when there is none: family_parts is 0, or the key
 * has no more parts than that (its family would be the class itself). */
bool ng_class_family(const char *class_key, long family_parts, char *out, size_t cap);

/* Adds a class baseline of the family to the pool: its node spread and
 * sample noise, relative to its median, weighted by its n_nodes - 1.
 * Baselines without a positive median or of fewer than two nodes add
 * nothing. */
void ng_admit_pool_add(ng_admit_pool *pool, double median, double node_mad, double cv,
                       int64_t n_nodes);

/* The median of the samples under (1 - block) x baseline_median, as a share
 * of baseline_median: where a bimodal run's slow mode sits. NaN when no
 * sample is under the line or the median is not a finite positive number.
 * work: scratch of n doubles. */
double ng_admit_low_mode(const double *samples, size_t n, double baseline_median, double block,
                         double *work);

/* What one metric of one run says, worst last. */
typedef enum {
	NG_MS_OK,         /* at or above the bar and the gate passed it */
	NG_MS_MARGINAL,   /* above the bar, but the gate warned (or called a shallow slow tail bimodal) */
	NG_MS_ATTRIBUTED, /* the gate blamed the cohort (fleet-regression): not the node */
	NG_MS_ESTABLISHING, /* no class baseline yet, and not below the floor */
	NG_MS_FAILED,     /* below the bar, or the gate said block, bimodal or diag-failed */
	NG_MS_UNMEASURED, /* unmeasured gate verdict, correctness unverified, or no number */
	NG_MS_INTEGRITY,  /* the gate said corrupt: wrong results */
	NG_MS_COUNT
} ng_admit_metric_status;

const char *ng_admit_metric_status_name(ng_admit_metric_status s);

typedef struct {
	ng_admit_flag flag;
	ng_admit_metric_status status;
	/* Failed against the node's own level (ng_admit_own_bar) while its class's
	 * bar passed it; own_bar is that bar, whatever decided (0: none). */
	bool own_decides;
	double own_bar;
	/* The bar for the mean of the newest runs (ng_admit_own_mean_bar; 0:
	 * none), and whether that mean, not this run alone, failed it. */
	double own_recent_bar;
	bool own_recent_decides;
} ng_admit_line;

ng_admit_line ng_admit_judge_metric(const ng_admit_result *r, const ng_policy *pol);

/* ---- the node ----------------------------------------------------------------------- */

typedef enum {
	NG_ADMIT_ADMITTED,
	NG_ADMIT_WARN,        /* admitted-warn: recheck after warn_recheck_hours */
	NG_ADMIT_HELD,        /* unmeasured: fix the harness, then screen again */
	NG_ADMIT_SUSPECT,     /* flagged: re-run the named domains once (confirm[]) */
	NG_ADMIT_QUARANTINED,
	NG_ADMIT_COUNT
} ng_admit_outcome;

const char *ng_admit_outcome_name(ng_admit_outcome o); /* "admitted-warn", ... */

#define NG_ADMIT_NAMED_MAX 32
#define NG_ADMIT_DOMAINS_MAX 16

typedef struct {
	ng_admit_outcome outcome;
	long recheck_hours; /* admitted-warn: the policy's interval; otherwise 0 */
	/* The results that decided the outcome (for quarantine: every failing
	 * metric of the failing domains, first run then confirmation), as
	 * pointers into the caller's arrays. */
	const ng_admit_result *named[NG_ADMIT_NAMED_MAX];
	size_t n_named;
	bool named_truncated;
	/* SUSPECT: the domains to re-run. */
	const char *confirm[NG_ADMIT_DOMAINS_MAX];
	size_t n_confirm;
	/* The confirmation re-ran a domain that was not flagged, or more domains
	 * than fit: the harness did something the rule did not ask for (held). */
	bool unexpected_confirmation;
	bool too_many_domains;
} ng_admit_decision;

/* first: every metric of the first run. confirm: the re-run of the flagged
 * domains, or none (n_confirm 0) before it has happened. */
ng_admit_decision ng_admit_decide(const ng_admit_result *first, size_t n_first,
                                  const ng_admit_result *confirm, size_t n_confirm,
                                  const ng_policy *pol);

#endif
