#include "judge/breaker.h"

#include <math.h>
#include <string.h>

ng_land_path ng_land_path_of(ng_admit_outcome judged, bool override_active, bool case_open,
                             bool event_declines)
{
	bool bad = judged == NG_ADMIT_QUARANTINED || judged == NG_ADMIT_SUSPECT;
	if (override_active && bad)
		return NG_LAND_OVERRIDE;
	if (case_open)
		return NG_LAND_OPEN_CASE;
	if (judged == NG_ADMIT_QUARANTINED && event_declines)
		return NG_LAND_EVENT_OPEN;
	if (judged == NG_ADMIT_QUARANTINED)
		return NG_LAND_QUARANTINE;
	return NG_LAND_AS_JUDGED;
}

bool ng_event_declines(const char *event_metric, const ng_quarantine_cause *causes, size_t n)
{
	if (!event_metric || n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (causes[i].below_floor || causes[i].wrong)
			return false;
		if (event_metric[0] && (!causes[i].metric || strcmp(causes[i].metric, event_metric) != 0))
			return false;
	}
	return true;
}

ng_admit_outcome ng_land_declined(bool any_unmeasured, bool any_integrity)
{
	return any_unmeasured || any_integrity ? NG_ADMIT_HELD : NG_ADMIT_WARN;
}

bool ng_drop_shared(double peer, double drop, double warn)
{
	if (!isfinite(drop) || !(drop > warn) || !isfinite(peer))
		return false;
	return peer > warn && peer >= drop / 2;
}

double ng_poisson_tail(int64_t k, double mean)
{
	if (k <= 0)
		return 1.0;
	if (!(mean > 0))
		return 0.0;
	/* Summed from k upward in logs: the terms the tail is made of are tiny
	 * where it matters, and 1 - (the sum below k) would lose them. */
	double sum = 0, lm = log(mean);
	for (int64_t i = k; i < k + 1000; i++) {
		double t = exp(-mean + (double)i * lm - lgamma((double)i + 1));
		sum += t;
		if ((double)i > mean && t < sum * 1e-12)
			break;
	}
	return sum < 1.0 ? sum : 1.0;
}

ng_breaker ng_breaker_check(const ng_breaker_facts *f, const ng_policy *pol)
{
	ng_breaker b = {.would = f->recent + 1, .size = f->class_nodes};
	if (b.size < b.would)
		b.size = b.would;
	double windows = f->past_windows > 1 ? f->past_windows : 1;
	b.expected = ((double)(f->past > 0 ? f->past : 0) + 1) / windows;
	b.tail = ng_poisson_tail(b.would, b.expected);
	bool many = b.would > pol->breaker_count ||
	            (double)b.would / (double)b.size > pol->breaker_share;
	b.trips = b.would >= 2 && many && b.tail < pol->breaker_tail;
	return b;
}

int64_t ng_event_clean_step(int64_t clean, ng_admit_metric_status s, const ng_policy *pol,
                            bool *clears)
{
	*clears = false;
	if (s == NG_MS_OK)
		clean++;
	else if (s == NG_MS_FAILED || s == NG_MS_ATTRIBUTED || s == NG_MS_MARGINAL ||
	         s == NG_MS_INTEGRITY)
		clean = 0;
	*clears = pol->breaker_clear_runs > 0 && clean >= pol->breaker_clear_runs;
	return clean;
}

bool ng_land_feeds_baseline(ng_admit_outcome landed, bool override_active, bool fleet_event)
{
	return landed == NG_ADMIT_ADMITTED ||
	       (landed == NG_ADMIT_WARN && !override_active && !fleet_event);
}
