#include "judge/breaker.h"

ng_land_path ng_land_path_of(ng_admit_outcome judged, bool override_active, bool case_open,
                             bool event_open)
{
	bool bad = judged == NG_ADMIT_QUARANTINED || judged == NG_ADMIT_SUSPECT;
	if (override_active && bad)
		return NG_LAND_OVERRIDE;
	if (case_open)
		return NG_LAND_OPEN_CASE;
	if (judged == NG_ADMIT_QUARANTINED && event_open)
		return NG_LAND_EVENT_OPEN;
	if (judged == NG_ADMIT_QUARANTINED)
		return NG_LAND_QUARANTINE;
	return NG_LAND_AS_JUDGED;
}

ng_admit_outcome ng_land_declined(bool any_unmeasured, bool any_integrity)
{
	return any_unmeasured || any_integrity ? NG_ADMIT_HELD : NG_ADMIT_WARN;
}

ng_breaker ng_breaker_check(int64_t recent_cases, int64_t class_nodes, const ng_policy *pol)
{
	ng_breaker b = {.would = recent_cases + 1, .size = class_nodes};
	if (b.size < b.would)
		b.size = b.would;
	b.trips = b.would >= 2 && (b.would > pol->breaker_count ||
	                           (double)b.would / (double)b.size > pol->breaker_share);
	return b;
}

bool ng_land_feeds_baseline(ng_admit_outcome landed, bool override_active, bool fleet_event)
{
	return landed == NG_ADMIT_ADMITTED ||
	       (landed == NG_ADMIT_WARN && !override_active && !fleet_event);
}
