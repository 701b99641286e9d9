#include "judge/gate.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/stats.h"

static const char *const step_text[NG_STEP_COUNT] = {
	[NG_STEP_WRONG_INVALID] = "#wrong is absent or not a finite number",
	[NG_STEP_WRONG_NULL] = "#wrong is null: correctness was not checked",
	[NG_STEP_WRONG_NEGATIVE] = "#wrong is negative, which is not a count",
	[NG_STEP_WRONG_POSITIVE] = "#wrong is positive: the run produced wrong results",
	[NG_STEP_NO_SAMPLES] = "no samples: the run measured nothing",
	[NG_STEP_SAMPLES_INVALID] = "a sample is not a finite positive number",
	[NG_STEP_BASELINE_INVALID] = "the baseline median or cv is missing, not finite or not positive",
	[NG_STEP_DIAG_INVALID] = "a diagnostic status is not pass, skip or fail",
	[NG_STEP_DIAG_INCOMPLETE] = "a required diagnostic is absent, or a diagnostic was skipped",
	[NG_STEP_DIAG_FAILED] = "a diagnostic reported a failure",
	[NG_STEP_CLASS_MISMATCH] = "the record's class is not the baseline's class",
	[NG_STEP_METRIC_MISMATCH] = "the record's metric is not the baseline's metric",
	[NG_STEP_UNIT_MISMATCH] = "the record's unit is not the baseline's unit",
	[NG_STEP_UNSTABLE] = "the run's spread exceeds the instability bar",
	[NG_STEP_IMPLAUSIBLE] = "the median ratio is outside the plausible range",
	[NG_STEP_BIMODAL] = "the median is acceptable but too many samples are slow",
	[NG_STEP_UNRESOLVED] = "a shortfall the noise bar at this sample count cannot resolve",
	[NG_STEP_PASS] = "the drop clears neither the warn bar nor the noise bar",
	[NG_STEP_FLEET] = "the validated cohort moved as much as this node, within noise",
	[NG_STEP_BLOCK] = "the drop clears the block bar and the noise bar",
	[NG_STEP_WARN] = "the drop clears the warn bar and the noise bar, not the block bar",
	[NG_STEP_OVERFLOW] = "an integer too large for a double reached the arithmetic",
	[NG_STEP_WORK_TOO_SMALL] = "the caller's scratch buffer was too small to judge",
};

const char *ng_gate_step_text(ng_gate_step s)
{
	return (unsigned)s < NG_STEP_COUNT ? step_text[s] : "unknown step";
}

/* Two standard errors of the baseline's run-to-run spread (by default). */
static double noise_bar(const ng_policy *pol, double cv, size_t n)
{
	return pol->noise_sigmas * cv / sqrt((double)n);
}

/* A shortfall counts only if it clears both the policy bar and the noise. */
static bool significant(const ng_policy *pol, double drop, double bar, double cv, size_t n)
{
	return drop > bar && drop > noise_bar(pol, cv, n);
}

static bool same_class(ng_class a, ng_class b)
{
	if (a.kind != b.kind)
		return false;
	return a.kind == NG_CLASS_NONE || strcmp(a.text, b.text) == 0;
}

/* strcmp(a, b) == 0, inline: diagnostic names are short and most pairs
 * differ in the first byte, where a call per pair costs more than the compare. */
static inline bool same_name(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static ng_verdict decide(ng_gate_trace *t, ng_verdict v, ng_gate_step s)
{
	t->verdict = v;
	t->step = s;
	return v;
}

/* The diagnostics, as the rule checks them once it has a baseline. */
ng_verdict ng_gate_diagnostics(const ng_gate_record *r, const ng_policy *pol, ng_gate_trace *t)
{
	if (r->diag_malformed)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_DIAG_INVALID);
	for (size_t i = 0; i < r->n_diag; i++) {
		if (r->diag[i].status == NG_DIAG_OTHER) {
			t->diag_test = r->diag[i].test;
			return decide(t, NG_V_INVALID_INPUT, NG_STEP_DIAG_INVALID);
		}
	}
	/* Absent, skipped and failed are three different things. The required
	 * set is named because a test that never registered has no status. */
	/* A node's own compute, memory and storage probes carry no DCGM results;
	 * policy names such domains, and such metrics of other domains (the GPU
	 * copy probe's paths are fabric). A record with neither is never exempt. */
	bool exempt = (r->domain && ng_policy_diag_exempt(pol, r->domain)) ||
	              (r->metric && ng_policy_diag_exempt_metric(pol, r->metric));
	size_t n_required = exempt ? 0 : pol->n_required_diag;
	for (size_t k = 0; k < n_required; k++) {
		bool found = false;
		for (size_t i = 0; i < r->n_diag && !found; i++)
			found = same_name(r->diag[i].test, pol->required_diag[k]);
		if (!found) {
			t->diag_test = pol->required_diag[k];
			return decide(t, NG_V_DIAG_INCOMPLETE, NG_STEP_DIAG_INCOMPLETE);
		}
	}
	for (size_t i = 0; i < r->n_diag; i++) {
		if (r->diag[i].status == NG_DIAG_SKIP) {
			t->diag_test = r->diag[i].test;
			return decide(t, NG_V_DIAG_INCOMPLETE, NG_STEP_DIAG_INCOMPLETE);
		}
	}
	for (size_t i = 0; i < r->n_diag; i++) {
		if (r->diag[i].status == NG_DIAG_FAIL) {
			t->diag_test = r->diag[i].test;
			return decide(t, NG_V_DIAG_FAILED, NG_STEP_DIAG_FAILED);
		}
	}
	return NG_V_PASS;
}

/* Every way a run can fail to be a measurement, checked before any
 * arithmetic. Returns NG_V_COUNT when the run is a measurement. */
static ng_verdict unmeasured(const ng_gate_record *r, const ng_gate_baseline *b,
                             const ng_policy *pol, ng_gate_trace *t)
{
	/* Corruption is baseline-independent and outranks everything. */
	if (r->wrong_kind == NG_WRONG_ABSENT || r->wrong_kind == NG_WRONG_INVALID ||
	    (r->wrong_kind == NG_WRONG_VALUE && !isfinite(r->wrong)))
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_WRONG_INVALID);
	if (r->wrong_kind == NG_WRONG_NULL)
		return decide(t, NG_V_CORRECTNESS_UNVERIFIED, NG_STEP_WRONG_NULL);
	if (r->wrong < 0)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_WRONG_NEGATIVE);
	if (r->wrong > 0)
		return decide(t, NG_V_CORRUPT, NG_STEP_WRONG_POSITIVE);

	if (r->n_samples == 0)
		return decide(t, NG_V_NO_MEASUREMENT, NG_STEP_NO_SAMPLES);
	/* A sample is valid when finite and positive: 0 < x <= DBL_MAX, which NaN
	 * fails too. Every sample is looked at (no early exit) so the loop has no
	 * branch per sample; the verdict does not depend on which one failed. */
	bool samples_ok = true;
	for (size_t i = 0; i < r->n_samples; i++)
		samples_ok &= (r->samples[i] > 0) & (r->samples[i] <= DBL_MAX);
	if (!samples_ok)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_SAMPLES_INVALID);

	if (!isfinite(b->median) || !isfinite(b->cv) || b->median <= 0 || b->cv <= 0)
		return decide(t, NG_V_NO_BASELINE, NG_STEP_BASELINE_INVALID);

	ng_verdict diag = ng_gate_diagnostics(r, pol, t);
	if (diag != NG_V_PASS)
		return diag;

	if (!same_class(r->cls, b->cls))
		return decide(t, NG_V_INCOMPARABLE, NG_STEP_CLASS_MISMATCH);
	/* Only when both sides name it: the reference's records and baselines
	 * carry neither, and its verdicts stand. */
	if (r->metric && b->metric && strcmp(r->metric, b->metric) != 0) {
		t->record_says = r->metric, t->baseline_says = b->metric;
		return decide(t, NG_V_INCOMPARABLE, NG_STEP_METRIC_MISMATCH);
	}
	if (r->unit && b->unit && strcmp(r->unit, b->unit) != 0) {
		t->record_says = r->unit, t->baseline_says = b->unit;
		return decide(t, NG_V_INCOMPARABLE, NG_STEP_UNIT_MISMATCH);
	}

	/* An integer too large for a double passed the checks above as the finite
	 * number it is. The reference raises where its arithmetic first converts
	 * one to a float, so it is refused at that point and no earlier: the
	 * samples' spread, then the instability bar (3 x cv, only tested with more
	 * than one sample), then the ratio (median), then the noise bar (cv). */
	if (r->samples_overflow)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_OVERFLOW);
	if (r->n_samples > 1 && b->cv_overflow)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_OVERFLOW);
	if (r->n_samples > 1) {
		t->spread = ng_np_std_over_mean(r->samples, r->n_samples);
		if (t->spread > pol->unstable_cv_multiple * b->cv)
			return decide(t, NG_V_UNSTABLE, NG_STEP_UNSTABLE);
	}
	return NG_V_COUNT;
}

/* A fleet event excuses a node only if the cohort is valid, large enough, mostly
 * past the warn bar, and the node is no worse than the cohort within noise (one
 * sided: better than the cohort is still explained by the fleet). Cohort data is
 * validated as strictly as the candidate's, or the alibi is easier to obtain than
 * the accusation. */
static bool fleet_explains(const double *cohort, size_t n_cohort, double drop, double nbar,
                           const ng_policy *pol, double *work, ng_gate_trace *t)
{
	t->cohort_n = n_cohort;
	size_t valid = 0, past = 0;
	for (size_t i = 0; i < n_cohort; i++) {
		double d = cohort[i];
		if (isfinite(d) && -pol->cohort_drop_limit <= d && d <= pol->cohort_drop_limit) {
			work[valid++] = d;
			past += d > pol->warn;
		}
	}
	t->cohort_valid = valid;
	if (valid != n_cohort || valid < (size_t)pol->cohort_min)
		return false;
	t->cohort_past_warn = (double)past / (double)valid;
	if (!(t->cohort_past_warn >= pol->cohort_majority))
		return false;
	/* work already holds the cohort; the median may reorder it in place. */
	t->cohort_median = ng_np_median_inplace(work, valid);
	return drop - t->cohort_median <= nbar;
}

ng_verdict ng_gate(const ng_gate_record *r, const ng_gate_baseline *b,
                   const double *cohort, size_t n_cohort, const ng_policy *pol,
                   ng_work work, ng_gate_trace *trace)
{
	ng_gate_trace local;
	ng_gate_trace *t = trace ? trace : &local;
	*t = (ng_gate_trace){
		.n = r->n_samples,
		.median = NAN, .spread = NAN, .ratio = NAN, .drop = NAN, .noise_bar = NAN,
		.slow_fraction = NAN, .cohort_median = NAN, .cohort_past_warn = NAN,
	};

	ng_verdict v = unmeasured(r, b, pol, t);
	if (v != NG_V_COUNT)
		return v;
	if (b->median_overflow)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_OVERFLOW);

	size_t n = r->n_samples;
	if (work.cap < n || work.cap < n_cohort)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_WORK_TOO_SMALL);

	t->median = ng_np_median(r->samples, n, work.buf);
	t->ratio = t->median / b->median;
	if (t->ratio >= pol->fast || t->ratio <= pol->slow)
		return decide(t, NG_V_IMPLAUSIBLE, NG_STEP_IMPLAUSIBLE);
	if (b->cv_overflow)
		return decide(t, NG_V_INVALID_INPUT, NG_STEP_OVERFLOW);

	t->drop = 1.0 - t->median / b->median;
	t->noise_bar = noise_bar(pol, b->cv, n);
	/* A median describes the middle, not the population: a run half at baseline
	 * and half well under it can have a clean median and a spread inside the
	 * instability bar, so the slow share is checked where the aggregate passes. */
	double slow_line = b->median * (1 - pol->block);
	size_t slow = 0;
	for (size_t i = 0; i < n; i++)
		slow += r->samples[i] < slow_line;
	t->slow_fraction = (double)slow / (double)n;

	if (!significant(pol, t->drop, pol->warn, b->cv, n)) {
		if (t->slow_fraction >= pol->bimodal_fraction)
			return decide(t, NG_V_BIMODAL, NG_STEP_BIMODAL);
		/* Failing to detect a regression is not evidence of equivalence. */
		if (t->noise_bar > pol->warn && t->drop > 0)
			return decide(t, NG_V_INSUFFICIENT_SAMPLES, NG_STEP_UNRESOLVED);
		return decide(t, NG_V_PASS, NG_STEP_PASS);
	}
	if (fleet_explains(cohort, n_cohort, t->drop, t->noise_bar, pol, work.buf, t))
		return decide(t, NG_V_FLEET_REGRESSION, NG_STEP_FLEET);
	if (significant(pol, t->drop, pol->block, b->cv, n))
		return decide(t, NG_V_BLOCK, NG_STEP_BLOCK);
	return decide(t, NG_V_WARN, NG_STEP_WARN);
}
