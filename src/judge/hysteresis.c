#include "judge/hysteresis.h"

ng_hist_kind ng_hist_kind_of(const char *raw)
{
	ng_verdict v;
	if (!ng_verdict_from_name(raw, &v))
		return NG_HIST_OTHER;
	if (ng_verdict_hard(v))
		return NG_HIST_HARD;
	if (v == NG_V_PASS)
		return NG_HIST_PASS;
	if (v == NG_V_WARN)
		return NG_HIST_WARN;
	return NG_HIST_OTHER;
}

/* Whether the last `count` entries of recent = (non-hard history) + [verdict]
 * all equal `want`, and recent holds at least `count` entries. Walks history
 * backwards instead of building recent, so it allocates nothing. */
static bool last_all(ng_hist_kind current, const ng_hist_kind *history, size_t n,
                     unsigned long long count, ng_hist_kind want)
{
	if (current != want)
		return false;
	unsigned long long matched = 1;
	for (size_t i = n; i > 0 && matched < count; i--) {
		if (history[i - 1] == NG_HIST_HARD)
			continue;
		if (history[i - 1] != want)
			return false;
		matched++;
	}
	return matched >= count;
}

static ng_hist_kind kind_of_verdict(ng_verdict v)
{
	return v == NG_V_PASS ? NG_HIST_PASS : v == NG_V_WARN ? NG_HIST_WARN : NG_HIST_OTHER;
}

int ng_with_hysteresis(ng_verdict verdict, const ng_hist_kind *history, size_t n,
                       bool blocked, unsigned long long clear_after,
                       unsigned long long escalate_after, ng_hysteresis *out)
{
	if (clear_after < 1 || escalate_after < 1)
		return -1;
	/* Hysteresis has no business rewriting a verdict that is not about
	 * performance, nor relabelling it "block", which would erase the reason. */
	if (ng_verdict_hard(verdict)) {
		*out = (ng_hysteresis){verdict, true};
		return 0;
	}
	ng_hist_kind current = kind_of_verdict(verdict);
	if (blocked) {
		bool cleared = last_all(current, history, n, clear_after, NG_HIST_PASS);
		*out = cleared ? (ng_hysteresis){NG_V_PASS, false} : (ng_hysteresis){NG_V_BLOCK, true};
		return 0;
	}
	if (verdict == NG_V_BLOCK) {
		*out = (ng_hysteresis){NG_V_BLOCK, true};
		return 0;
	}
	if (last_all(current, history, n, escalate_after, NG_HIST_WARN)) {
		*out = (ng_hysteresis){NG_V_BLOCK, true};
		return 0;
	}
	*out = (ng_hysteresis){verdict, false};
	return 0;
}
