/* Showing a gate verdict to people (--explain) and programs (--json). */
#include <math.h>
#include <stdlib.h>

#include "cli/cmd.h"
#include "judge/record.h"

static const char *pct(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2f%%", v * 100.0);
	return buf;
}

void ng_report_gate_explain(FILE *out, const char *path, const ng_gate_input *in,
                          const ng_gate_trace *t, const ng_policy *pol)
{
	const struct ng_verdict_info *vi = ng_verdict_info(t->verdict);
	char a[32], b[32], c[32];
	fprintf(out, "record      %s\n", path);
	fprintf(out, "verdict     %s (%s)\n", vi->name, vi->admissible ? "admissible" : "not admissible");
	fprintf(out, "decided by  %s", ng_gate_step_text(t->step));
	if (t->diag_test)
		fprintf(out, " (%s)", t->diag_test);
	if (t->record_says && t->baseline_says)
		fprintf(out, " (record: %s, baseline: %s)", t->record_says, t->baseline_says);
	fprintf(out, "\nlands       %s\n", vi->lands);
	fprintf(out, "baseline    median %.6g, cv %.6g\n", in->base.median, in->base.cv);
	fprintf(out, "samples     n=%zu", t->n);
	if (!isnan(t->median))
		fprintf(out, ", median %.6g", t->median);
	if (!isnan(t->spread))
		fprintf(out, ", spread %s (unstable above %s)", pct(a, sizeof a, t->spread),
		        pct(b, sizeof b, pol->unstable_cv_multiple * in->base.cv));
	fputc('\n', out);
	if (!isnan(t->ratio))
		fprintf(out, "ratio       %.4f (implausible at or below %g, at or above %g)\n", t->ratio,
		        pol->slow, pol->fast);
	if (!isnan(t->drop)) {
		fprintf(out, "drop        %s; bars: warn %s, block %s\n", pct(a, sizeof a, t->drop),
		        pct(b, sizeof b, pol->warn), pct(c, sizeof c, pol->block));
		fprintf(out, "noise bar   %s = %g x cv %g / sqrt(%zu)\n", pct(a, sizeof a, t->noise_bar),
		        pol->noise_sigmas, in->base.cv, t->n);
		fprintf(out, "slow share  %s of samples under %.6g (bimodal at %s)\n",
		        pct(a, sizeof a, t->slow_fraction), in->base.median * (1 - pol->block),
		        pct(b, sizeof b, pol->bimodal_fraction));
	}
	if (t->cohort_n || t->step == NG_STEP_FLEET || t->step == NG_STEP_BLOCK ||
	    t->step == NG_STEP_WARN) {
		fprintf(out, "cohort      %zu drops, %zu valid (need all valid and at least %ld)", t->cohort_n,
		        t->cohort_valid, pol->cohort_min);
		if (!isnan(t->cohort_past_warn))
			fprintf(out, ", %s past the warn bar (need %s)", pct(a, sizeof a, t->cohort_past_warn),
			        pct(b, sizeof b, pol->cohort_majority));
		if (!isnan(t->cohort_median))
			fprintf(out, ", median drop %s; node minus cohort %s vs noise %s",
			        pct(a, sizeof a, t->cohort_median), pct(b, sizeof b, t->drop - t->cohort_median),
			        pct(c, sizeof c, t->noise_bar));
		fputc('\n', out);
	}
}

void ng_report_gate_json(FILE *out, const char *path, const ng_gate_trace *t)
{
	cJSON *o = ng_gate_trace_json(path, t);
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	if (s)
		fprintf(out, "%s\n", s);
	free(s);
	cJSON_Delete(o);
}
