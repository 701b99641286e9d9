#include "core/verdict.h"

#include <string.h>

static const struct ng_verdict_info table[NG_V_COUNT] = {
	{NG_V_PASS, "pass", "performance", true, false,
	 "At baseline within the policy bar and the measurement noise.",
	 "Admit."},
	{NG_V_WARN, "warn", "performance", true, false,
	 "Significantly below baseline, but not past the block bar.",
	 "Record and re-measure. Repeated warnings escalate rather than accumulate silently."},
	{NG_V_BLOCK, "block", "performance", false, false,
	 "Significantly below baseline past the block bar, and not explained by the cohort.",
	 "Cordon the node and route to the regression ladder."},
	{NG_V_FLEET_REGRESSION, "fleet-regression", "attribution", false, false,
	 "The validated cohort moved by the same amount: the change, not this node, is the story.",
	 "Escalate to the change owner, not the node's owner. Do not cordon the fleet."},
	{NG_V_CORRUPT, "corrupt", "correctness", false, true,
	 "The run produced wrong results (#wrong > 0).",
	 "Stop the rollout. Wrong answers outrank every performance question."},
	{NG_V_DIAG_FAILED, "diag-failed", "diagnostic", false, true,
	 "A required DCGM diagnostic ran and reported a failure.",
	 "Route to the node's owner, not the harness queue."},
	{NG_V_BIMODAL, "bimodal", "performance", false, false,
	 "The median looks fine while a quarter or more of the samples are well under baseline.",
	 "Re-measure and look for a per-rank or per-rail split before grading."},
	{NG_V_INSUFFICIENT_SAMPLES, "insufficient-samples", "unmeasured", false, true,
	 "A shortfall the run could not resolve at this sample count.",
	 "Re-run with more samples. Neither passing nor blocking is supported."},
	{NG_V_CORRECTNESS_UNVERIFIED, "correctness-unverified", "correctness", false, true,
	 "Result checking was off (#wrong read N/A).",
	 "Re-run with checking on. Never release on it."},
	{NG_V_INCOMPARABLE, "incomparable", "unmeasured", false, true,
	 "The record's class is not the baseline's class.",
	 "Get the right baseline, or establish one and say so."},
	{NG_V_NO_MEASUREMENT, "no-measurement", "unmeasured", false, true,
	 "The run produced no samples.",
	 "Hold in inventory and fix the harness."},
	{NG_V_DIAG_INCOMPLETE, "diag-incomplete", "unmeasured", false, true,
	 "A required diagnostic is absent or was skipped.",
	 "Hold in inventory and fix the harness."},
	{NG_V_NO_BASELINE, "no-baseline", "unmeasured", false, true,
	 "The baseline's median or spread is missing, non-positive or not a number.",
	 "Hold in inventory and fix the harness."},
	{NG_V_UNSTABLE, "unstable", "unmeasured", false, true,
	 "The run disagrees with itself: its spread exceeds three times the baseline's.",
	 "Hold in inventory and fix the harness."},
	{NG_V_IMPLAUSIBLE, "implausible", "unmeasured", false, true,
	 "The median is absurdly fast or slow against baseline: something else was measured.",
	 "Hold in inventory and fix the harness."},
	{NG_V_INVALID_INPUT, "invalid-input", "unmeasured", false, true,
	 "A field is missing, not a number, negative or otherwise not a measurement.",
	 "Hold in inventory and fix the harness."},
};

const struct ng_verdict_info *ng_verdict_info(ng_verdict v)
{
	if ((unsigned)v >= NG_V_COUNT)
		return &table[NG_V_INVALID_INPUT];
	return &table[v];
}

const char *ng_verdict_name(ng_verdict v) { return ng_verdict_info(v)->name; }
bool ng_verdict_admissible(ng_verdict v) { return ng_verdict_info(v)->admissible; }
bool ng_verdict_hard(ng_verdict v) { return ng_verdict_info(v)->hard; }

bool ng_verdict_from_name(const char *name, ng_verdict *out)
{
	for (int i = 0; i < NG_V_COUNT; i++) {
		if (strcmp(table[i].name, name) == 0) {
			*out = (ng_verdict)i;
			return true;
		}
	}
	return false;
}
