/* Landing an admission decision: which rule lands it, and the class's
 * circuit breaker.
 *
 * The decision (judge/admit.h) says what the evidence shows about one node;
 * landing it also weighs what is already known about the node and its class:
 * an operator's override, the node's open quarantine case, an open
 * fleet-regression event of the class, and the circuit breaker, which stops
 * automatic quarantine when too many nodes of one class would be quarantined
 * at once (the design's principle 5: blame the change when the cohort moved).
 * `nodegate admit` (cli/admit_land.c) reads the facts from the store and
 * lands through these rules; the fleet simulator (tools/fleetsim) runs the
 * same rules on facts it keeps in memory.
 *
 * Pure: no I/O, no clock, no globals, no allocation. */
#ifndef NODEGATE_JUDGE_BREAKER_H
#define NODEGATE_JUDGE_BREAKER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy.h"
#include "judge/admit.h"

/* Which rule lands a judged outcome, first match wins:
 *   OVERRIDE     an active override and a suspect or quarantined judgement:
 *                admitted-warn (the override says who and until when);
 *   OPEN_CASE    the node already has an open case: it stays quarantined,
 *                and this run counts toward its release;
 *   EVENT_OPEN   a quarantine while the class's fleet-regression event is
 *                open: admitted-warn, not quarantined;
 *   QUARANTINE   a quarantine: open a case, unless the breaker trips
 *                (ng_breaker_check), which opens the fleet event instead and
 *                admits with a warning;
 *   AS_JUDGED    everything else lands as judged. */
typedef enum {
	NG_LAND_AS_JUDGED,
	NG_LAND_OVERRIDE,
	NG_LAND_OPEN_CASE,
	NG_LAND_EVENT_OPEN,
	NG_LAND_QUARANTINE,
} ng_land_path;

ng_land_path ng_land_path_of(ng_admit_outcome judged, bool override_active, bool case_open,
                             bool event_open);

typedef struct {
	bool trips;
	int64_t would; /* quarantines of the class in the window, counting this one */
	int64_t size;  /* the class's nodes, at least `would` */
} ng_breaker;

/* recent_cases: open cases of the class opened within the policy's
 * breaker_window_hours; class_nodes: distinct nodes of the class with a
 * record within its baseline window. One sick node is what quarantine is
 * for, so the breaker needs two: it trips when this quarantine would make
 * more than breaker_count, or more than breaker_share of the class. */
ng_breaker ng_breaker_check(int64_t recent_cases, int64_t class_nodes, const ng_policy *pol);

/* What a quarantine that is not made lands as, when the class's fleet-
 * regression event is open or the breaker trips: admitted-warn when every
 * metric of the run (and its confirmation) measured soundly, because the
 * class's change is blamed rather than the node; held when any measured
 * nothing or gave wrong results, because absent evidence and corrupt results
 * never admit a node, whatever the rest of the fleet is doing. */
ng_admit_outcome ng_land_declined(bool any_unmeasured, bool any_integrity);

/* Whether a landed run's sound records feed the class's baselines: only a
 * clean admission, or an admission with a warning that no override forced
 * and no open fleet-regression event of the class shadows. */
bool ng_land_feeds_baseline(ng_admit_outcome landed, bool override_active, bool fleet_event);

#endif
