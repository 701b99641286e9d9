#include "judge/admit.h"

#include "core/stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the flag rule ---------------------------------------------------------------- */

ng_admit_flag ng_admit_flag_rule(double value, double baseline_median, double floor,
                                 double fraction)
{
	ng_admit_flag f = {.bar = NAN, .percent = NAN};
	if (!isfinite(value) || !isfinite(baseline_median) || !(baseline_median > 0) ||
	    !isfinite(fraction))
		return f;
	f.evaluable = true;
	double peer = fraction * baseline_median;
	/* Peers alone accept a pool that degraded together; a floor alone misses
	 * the one slow node. The larger of the two is the bar. */
	f.floor_decides = isfinite(floor) && floor > peer;
	f.bar = f.floor_decides ? floor : peer;
	f.percent = value / baseline_median * 100.0;
	f.flagged = value < f.bar;
	return f;
}

/* ---- one metric of one run -------------------------------------------------------- */

static const char *const status_names[NG_MS_COUNT] = {
	[NG_MS_OK] = "ok",           [NG_MS_MARGINAL] = "marginal",
	[NG_MS_ATTRIBUTED] = "fleet", [NG_MS_ESTABLISHING] = "establishing",
	[NG_MS_FAILED] = "flagged",
	[NG_MS_UNMEASURED] = "unmeasured", [NG_MS_INTEGRITY] = "integrity",
};

const char *ng_admit_metric_status_name(ng_admit_metric_status s)
{
	return (unsigned)s < NG_MS_COUNT ? status_names[s] : "unknown";
}

/* What the gate's verdict alone says about this run, before the flag rule. */
static ng_admit_metric_status from_gate(ng_verdict v)
{
	if (v == NG_V_CORRUPT)
		return NG_MS_INTEGRITY;
	/* Checking was off: no evidence the answers were right. Like the
	 * unmeasured family it neither admits nor accuses. */
	if (v == NG_V_CORRECTNESS_UNVERIFIED || (unsigned)v >= NG_V_COUNT ||
	    strcmp(ng_verdict_info(v)->family, "unmeasured") == 0)
		return NG_MS_UNMEASURED;
	if (v == NG_V_BLOCK || v == NG_V_BIMODAL || v == NG_V_DIAG_FAILED)
		return NG_MS_FAILED;
	if (v == NG_V_FLEET_REGRESSION)
		return NG_MS_ATTRIBUTED;
	return v == NG_V_WARN ? NG_MS_MARGINAL : NG_MS_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double ng_admit_low_mode(const double *samples, size_t n, double baseline_median, double block,
                         double *work)
{
	if (!isfinite(baseline_median) || !(baseline_median > 0))
		return NAN;
	double line = baseline_median * (1 - block);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (samples[i] < line)
			work[k++] = samples[i];
	if (k == 0)
		return NAN;
	qsort(work, k, sizeof *work, cmp_double);
	double mid = k % 2 ? work[k / 2] : (work[k / 2 - 1] + work[k / 2]) / 2;
	return mid / baseline_median;
}

/* No class baseline yet: only the floor, and the node's own siblings, can
 * accuse the run. */
static ng_admit_line establishing(const ng_admit_result *r)
{
	ng_admit_line l = {.flag = {.bar = NAN, .percent = NAN}, .status = NG_MS_ESTABLISHING};
	if (!isfinite(r->value) || !(r->value > 0)) {
		l.status = NG_MS_UNMEASURED;
	} else if (isfinite(r->floor)) {
		l.flag = (ng_admit_flag){.bar = r->floor, .percent = NAN, .floor_decides = true,
		                         .flagged = r->value < r->floor, .evaluable = true};
		if (l.flag.flagged)
			l.status = NG_MS_FAILED;
	}
	if (l.status == NG_MS_ESTABLISHING && r->sibling_outlier)
		l.status = NG_MS_FAILED;
	return l;
}

/* How far a median of run_samples samples strays from its node's level:
 * sqrt(pi / 2) / sqrt(n) of the samples' spread. 0 when not known. */
static double run_noise(double median, double cv, double run_samples)
{
	return isfinite(cv) && cv > 0 && isfinite(run_samples) && run_samples >= 1
	           ? 1.2533 * cv * median / sqrt(run_samples)
	           : 0;
}

bool ng_class_family(const char *class_key, long family_parts, char *out, size_t cap)
{
	if (family_parts <= 0 || !class_key)
		return false;
	const char *p = class_key;
	for (long k = 0; k < family_parts; k++) {
		p = strchr(p, '/');
		if (!p || !p[1])
			return false; /* no more parts than the family's: the class is its own */
		if (k + 1 < family_parts)
			p++;
	}
	size_t len = (size_t)(p - class_key);
	if (len == 0 || len >= cap)
		return false;
	memcpy(out, class_key, len);
	out[len] = '\0';
	return true;
}

void ng_admit_pool_add(ng_admit_pool *pool, double median, double node_mad, double cv,
                       int64_t n_nodes)
{
	if (n_nodes < 2 || !isfinite(median) || !(median > 0))
		return;
	double w = (double)(n_nodes - 1);
	double level = isfinite(node_mad) && node_mad > 0 ? node_mad / median : 0;
	double noise = isfinite(cv) && cv > 0 ? cv : 0;
	pool->level_sq += w * level * level;
	pool->noise_sq += w * noise * noise;
	pool->df += w;
	pool->classes++;
}

double ng_admit_small_bar(double median, double node_mad, double cv, double run_samples,
                          size_t n_nodes, const ng_admit_pool *pool, const ng_policy *pol)
{
	if (pol->small_class_min_nodes <= 0 || n_nodes < (size_t)pol->small_class_min_nodes ||
	    n_nodes < 2 || (long)n_nodes >= pol->min_baseline_nodes || !isfinite(median) ||
	    !(median > 0))
		return 0;
	double n = (double)n_nodes, df = n - 1;
	if (pool && pool->df > df) {
		df = pool->df;
		node_mad = sqrt(pool->level_sq / pool->df) * median;
		cv = sqrt(pool->noise_sq / pool->df);
	}
	/* One more healthy node's run median strays by its level's spread among
	 * nodes and its run's own noise together. Without a sample count the
	 * samples' spread itself stands in for the noise (the wider bar). */
	double noise = isfinite(run_samples) ? run_noise(median, cv, run_samples)
	                                     : isfinite(cv) && cv > 0 ? cv * median : 0;
	double level = isfinite(node_mad) && node_mad > 0 ? node_mad : 0;
	double spread = sqrt(level * level + noise * noise);
	/* The baseline is the median of n nodes, which strays by sqrt(pi / 2n)
	 * of their spread (the median's efficiency against the mean), not by
	 * sqrt(1 / n). */
	double t = ng_student_t_quantile(1 - pol->small_class_tail, df);
	double bar = median - t * spread * sqrt(1 + M_PI / (2 * n));
	/* So few nodes, so far apart, that their peers can fail nobody: the
	 * least positive bar, not 0 (which would say "not a small class" and
	 * hand the node the ordinary, tighter bar). */
	return isfinite(bar) && bar > 0 ? bar : DBL_MIN;
}

double ng_admit_spread_bar(double median, double node_mad, double cv, double run_samples,
                           const ng_policy *pol)
{
	if (!(pol->spread_sigmas > 0) || !isfinite(node_mad) || !(node_mad > 0) ||
	    !isfinite(median) || !(median > 0))
		return 0;
	double noise = run_noise(median, cv, run_samples);
	double bar = median - pol->spread_sigmas * sqrt(node_mad * node_mad + noise * noise);
	return bar > 0 ? bar : 0;
}

double ng_admit_own_bar(double level, double spread, size_t runs, double cv, double run_samples,
                        const ng_policy *pol)
{
	return ng_admit_own_mean_bar(level, spread, runs, 1, cv, run_samples, pol);
}

double ng_admit_own_mean_bar(double level, double spread, size_t runs, size_t averaged, double cv,
                             double run_samples, const ng_policy *pol)
{
	if (pol->own_level_runs <= 0 || runs < (size_t)pol->own_level_runs || !isfinite(level) ||
	    !(level > 0) || !(pol->own_level_sigmas > 0) || averaged < 1)
		return 0;
	/* A node whose runs happened to agree closely says less than its MAD:
	 * a run's median can never be steadier than its samples allow. */
	double s = isfinite(spread) && spread > 0 ? spread : 0;
	double noise = run_noise(level, cv, run_samples);
	s = s > noise ? s : noise;
	double below =
		pol->own_level_sigmas * s * sqrt(1 / (double)averaged + M_PI / (2.0 * (double)runs));
	double least = pol->own_level_drop * level;
	below = below > least ? below : least;
	if (!(below > 0))
		return 0;
	double bar = level - below;
	return isfinite(bar) && bar > 0 ? bar : 0;
}

ng_admit_line ng_admit_judge_metric(const ng_admit_result *r, const ng_policy *pol)
{
	/* Only when the run itself was sound: the gate checks the record (wrong
	 * answers, no samples, bad values) before it looks for a baseline. */
	if (r->establishing && r->gate == NG_V_NO_BASELINE)
		return establishing(r);
	ng_admit_line l = {
		.flag = ng_admit_flag_rule(r->value, r->baseline_median, r->floor, pol->flag_fraction),
		.status = from_gate(r->gate),
	};
	/* Admission flags by its own rule: under the bar. The gate's block line
	 * (gate.block under the baseline) is the fabric runbook's; where it sits
	 * above the bar, a run between the two is marginal, not failed, or the
	 * two lines together would make a cliff of whichever is higher (the
	 * fleet simulator: gate.block 0.09 doubled healthy drains). */
	/* A peer bar inside the spread of healthy nodes' medians accuses the
	 * class's lower tail, not a fault: the bar is never above
	 * median - spread_sigmas x node spread (a floor still decides above it). */
	double spread_bar = ng_admit_spread_bar(r->baseline_median, r->node_spread, r->baseline_cv,
	                                        r->run_samples, pol);
	if (spread_bar > 0 && l.flag.evaluable && !l.flag.floor_decides && spread_bar < l.flag.bar) {
		l.flag.bar = spread_bar;
		l.flag.floor_decides = isfinite(r->floor) && r->floor > spread_bar;
		if (l.flag.floor_decides)
			l.flag.bar = r->floor;
		l.flag.flagged = r->value < l.flag.bar;
	}
	if (r->gate == NG_V_BLOCK && l.flag.evaluable && !l.flag.flagged)
		l.status = NG_MS_MARGINAL;
	if (r->small_bar > 0 && l.flag.evaluable) {
		/* A few nodes' median is itself a few percent off: the bar carries
		 * that, and the gate's block against it alone is not evidence. */
		double peer = pol->flag_fraction * r->baseline_median;
		peer = r->small_bar < peer ? r->small_bar : peer;
		peer = spread_bar > 0 && spread_bar < peer ? spread_bar : peer;
		l.flag.floor_decides = isfinite(r->floor) && r->floor > peer;
		l.flag.bar = l.flag.floor_decides ? r->floor : peer;
		l.flag.flagged = r->value < l.flag.bar;
		if (r->gate == NG_V_BLOCK)
			l.status = NG_MS_MARGINAL;
	}
	/* The gate's bimodal rule counts samples under one fixed line, 10% under
	 * the median. On a metric whose samples scatter by several percent (an
	 * interval of storage or host-memory throughput) a quarter of a healthy
	 * run falls under it by chance, and two such runs would quarantine a
	 * healthy node. A real second mode sits far under the line; a tail
	 * just under it is noise, and warns. */
	double low_line = pol->bimodal_low_mode;
	/* ... and under noise_sigmas of the metric's own noise below the gate's
	 * slow line: with 8% per-sample noise the slow samples of a healthy run
	 * reach 0.85 of the median, and a fixed low line next to that is a
	 * cliff (the fleet simulator: bimodal_low_mode 0.88 tripled healthy
	 * drains). */
	if (isfinite(r->baseline_cv) && r->baseline_cv > 0) {
		double noise_line = 1 - pol->block - pol->noise_sigmas * r->baseline_cv;
		low_line = noise_line < low_line ? noise_line : low_line;
	}
	if (r->gate == NG_V_BIMODAL && isfinite(r->low_mode) && r->low_mode > 0 &&
	    r->low_mode > low_line)
		l.status = NG_MS_MARGINAL;
	/* An unstable run holds the node for the harness to be fixed (the
	 * runbook). When the same node keeps disagreeing with itself under the
	 * harness its peers pass, the harness is not the story: it fails, and
	 * the confirmation decides as for any failure. */
	if (r->gate == NG_V_UNSTABLE && pol->unstable_repeat > 0 &&
	    r->unstable_recent >= (unsigned long)pol->unstable_repeat)
		l.status = NG_MS_FAILED;
	l.own_bar = ng_admit_own_bar(r->own_level, r->own_spread, r->own_runs, r->baseline_cv,
	                             r->run_samples, pol);
	if (r->own_recent_runs >= 2)
		l.own_recent_bar = ng_admit_own_mean_bar(r->own_level, r->own_spread, r->own_runs,
		                                         r->own_recent_runs, r->baseline_cv,
		                                         r->run_samples, pol);
	if (l.status >= NG_MS_FAILED)
		return l;
	if (!l.flag.evaluable)
		l.status = NG_MS_UNMEASURED;
	else if (l.status == NG_MS_ATTRIBUTED)
		/* The cohort moved with this node: the peer bar is the change's
		 * story, not the node's. Only the floor, what the workload needs,
		 * still accuses it. */
		l.status = isfinite(r->floor) && r->value < r->floor ? NG_MS_FAILED : NG_MS_ATTRIBUTED;
	else if (l.flag.flagged)
		l.status = NG_MS_FAILED;
	/* A small class's few peers say little; the node's own siblings,
	 * alongside them, still do. */
	else if (r->small_bar > 0 && r->sibling_outlier)
		l.status = NG_MS_FAILED;
	/* Inside its class's spread, a node can still have left where it has
	 * always been: its own runs know its level to a fraction of the class's
	 * spread. Not when the cohort moved with it (attributed, above). A drop
	 * under one run's noise that stays is still the node's: the mean of its
	 * newest runs strays less than one run does. The runs before this one
	 * were accepted; the confirmation, a fresh run in this one's place, must
	 * pull the mean under the bar again. */
	bool one = l.own_bar > 0 && r->value < l.own_bar;
	bool mean = l.own_recent_bar > 0 && r->own_recent < l.own_recent_bar;
	if ((l.status == NG_MS_OK || l.status == NG_MS_MARGINAL) && (one || mean)) {
		l.status = NG_MS_FAILED;
		l.own_decides = true;
		l.own_recent_decides = !one;
	}
	return l;
}

/* ---- the node ----------------------------------------------------------------------- */

#define NONE (-1)

struct domain {
	const char *name;
	int first, confirm;   /* worst ng_admit_metric_status, or NONE */
	int why_first, why_confirm; /* the status whose metrics are named, or NONE */
	ng_admit_outcome outcome;
};

struct run {
	const ng_admit_result *r;
	size_t n;
};

static const char *const outcome_names[NG_ADMIT_COUNT] = {
	[NG_ADMIT_ADMITTED] = "admitted", [NG_ADMIT_WARN] = "admitted-warn",
	[NG_ADMIT_HELD] = "held",         [NG_ADMIT_SUSPECT] = "suspect",
	[NG_ADMIT_QUARANTINED] = "quarantined",
};

const char *ng_admit_outcome_name(ng_admit_outcome o)
{
	return (unsigned)o < NG_ADMIT_COUNT ? outcome_names[o] : "unknown";
}

static const char *domain_of(const ng_admit_result *r) { return r->domain ? r->domain : ""; }

/* The domain's slot, added when new; NULL when the table is full. */
static struct domain *slot(struct domain *d, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(d[i].name, name) == 0)
			return &d[i];
	if (*n == NG_ADMIT_DOMAINS_MAX)
		return NULL;
	d[*n] = (struct domain){.name = name, .first = NONE, .confirm = NONE,
	                        .why_first = NONE, .why_confirm = NONE};
	return &d[(*n)++];
}

/* Worst status per domain for one run; false when there are too many domains. */
static bool gather(struct domain *d, size_t *n, struct run run, bool is_confirm,
                   const ng_policy *pol)
{
	for (size_t i = 0; i < run.n; i++) {
		struct domain *s = slot(d, n, domain_of(&run.r[i]));
		if (!s)
			return false;
		int st = (int)ng_admit_judge_metric(&run.r[i], pol).status;
		int *worst = is_confirm ? &s->confirm : &s->first;
		if (st > *worst)
			*worst = st;
	}
	return true;
}

/* The confirmation settles a flagged domain. */
static void settle_flagged(struct domain *s)
{
	s->why_first = NG_MS_FAILED;
	if (s->confirm == NONE) {
		s->outcome = NG_ADMIT_SUSPECT;
	} else if (s->confirm == NG_MS_FAILED) {
		s->outcome = NG_ADMIT_QUARANTINED; /* the same domain failed twice */
		s->why_confirm = NG_MS_FAILED;
	} else if (s->confirm == NG_MS_UNMEASURED) {
		s->outcome = NG_ADMIT_HELD; /* a confirmation that measured nothing confirms nothing */
		s->why_first = NONE;
		s->why_confirm = NG_MS_UNMEASURED;
	} else {
		s->outcome = NG_ADMIT_WARN; /* recovered: admit, but look again soon */
	}
}

/* One domain's outcome from its first run and its confirmation. */
static void settle(struct domain *s, bool *unexpected)
{
	if (s->first == NG_MS_INTEGRITY || s->confirm == NG_MS_INTEGRITY) {
		s->outcome = NG_ADMIT_QUARANTINED; /* wrong answers outrank everything */
		s->why_first = s->first == NG_MS_INTEGRITY ? NG_MS_INTEGRITY : NONE;
		s->why_confirm = s->confirm == NG_MS_INTEGRITY ? NG_MS_INTEGRITY : NONE;
	} else if (s->confirm != NONE && s->first != NG_MS_FAILED) {
		*unexpected = true; /* re-ran what was not flagged: the harness misbehaved */
		s->outcome = NG_ADMIT_HELD;
		s->why_confirm = s->confirm;
	} else if (s->first == NG_MS_UNMEASURED) {
		s->outcome = NG_ADMIT_HELD;
		s->why_first = NG_MS_UNMEASURED;
	} else if (s->first == NG_MS_FAILED) {
		settle_flagged(s);
	} else if (s->first == NG_MS_MARGINAL || s->first == NG_MS_ATTRIBUTED ||
	           s->first == NG_MS_ESTABLISHING) {
		s->outcome = NG_ADMIT_WARN;
		s->why_first = s->first;
	} else {
		s->outcome = NG_ADMIT_ADMITTED;
	}
}

static void name_results(ng_admit_decision *d, struct run run, const struct domain *s, int why,
                         const ng_policy *pol)
{
	if (why == NONE)
		return;
	for (size_t i = 0; i < run.n; i++) {
		if (strcmp(domain_of(&run.r[i]), s->name) != 0 ||
		    (int)ng_admit_judge_metric(&run.r[i], pol).status != why)
			continue;
		if (d->n_named == NG_ADMIT_NAMED_MAX) {
			d->named_truncated = true;
			return;
		}
		d->named[d->n_named++] = &run.r[i];
	}
}

ng_admit_decision ng_admit_decide(const ng_admit_result *first, size_t n_first,
                                  const ng_admit_result *confirm, size_t n_confirm,
                                  const ng_policy *pol)
{
	ng_admit_decision d = {.outcome = NG_ADMIT_ADMITTED};
	struct domain doms[NG_ADMIT_DOMAINS_MAX];
	size_t n = 0;
	struct run r1 = {first, n_first}, r2 = {confirm, n_confirm};
	if (n_first == 0 || !gather(doms, &n, r1, false, pol) || !gather(doms, &n, r2, true, pol)) {
		/* nothing measured, or more domains than a profile has: not a pass */
		d.too_many_domains = n_first != 0;
		d.outcome = NG_ADMIT_HELD;
		return d;
	}
	for (size_t i = 0; i < n; i++) {
		settle(&doms[i], &d.unexpected_confirmation);
		if (doms[i].outcome > d.outcome)
			d.outcome = doms[i].outcome;
	}
	for (size_t i = 0; i < n; i++) {
		if (doms[i].outcome != d.outcome)
			continue;
		if (d.outcome == NG_ADMIT_SUSPECT)
			d.confirm[d.n_confirm++] = doms[i].name;
		name_results(&d, r1, &doms[i], doms[i].why_first, pol);
		name_results(&d, r2, &doms[i], doms[i].why_confirm, pol);
	}
	d.recheck_hours = d.outcome == NG_ADMIT_WARN ? pol->warn_recheck_hours : 0;
	return d;
}
