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
#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "judge/admit.h"

/* Which rule lands a judged outcome, first match wins:
 *   OVERRIDE     an active override and a suspect or quarantined judgement:
 *                admitted-warn (the override says who and until when);
 *   OPEN_CASE    the node already has an open case: it stays quarantined,
 *                and this run counts toward its release;
 *   EVENT_OPEN   a quarantine that an open fleet-regression event declines
 *                (ng_event_declines: the event's class, software and metric,
 *                and no floor failure): admitted-warn, not quarantined;
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
                             bool event_declines);

/* What one metric a quarantine is for says about the event: its name,
 * whether its value was under the metric's floor (then the node cannot do
 * the work whatever the fleet did, and no event declines it), and whether
 * its answers were wrong (an event is about a drop in speed: wrong answers
 * are the node's whatever the fleet's speed did, and no event declines
 * them either). */
typedef struct {
	const char *metric;
	bool below_floor;
	bool wrong;
} ng_quarantine_cause;

/* Whether an open fleet-regression event of the run's class and software
 * declines a quarantine for these causes: the event's metric is every
 * cause's metric (an event opened before events had a metric, "", stands
 * for every metric), and no cause is below its floor or wrong. An event is
 * about what moved: a fault in another metric of the class is a node's fault
 * and is quarantined as usual. */
bool ng_event_declines(const char *event_metric, const ng_quarantine_cause *causes, size_t n);

/* What the breaker weighs, all for one (class, software identity, metric):
 *   recent        cases opened within breaker_window_hours, not counting
 *                 this one;
 *   class_nodes   distinct nodes of the class with a record within the
 *                 baseline window;
 *   past          cases opened in the baseline window before that window;
 *   past_windows  how many breaker windows that earlier span holds (> 0). */
typedef struct {
	int64_t recent, class_nodes, past;
	double past_windows;
} ng_breaker_facts;

typedef struct {
	bool trips;
	int64_t would;   /* quarantines of the metric in the window, counting this one */
	int64_t size;    /* the class's nodes, at least `would` */
	double expected; /* the metric's quarantines a window of this class normally has */
	double tail;     /* the chance of `would` or more in a window at that rate */
} ng_breaker;

/* The breaker trips when this quarantine would make more than breaker_count,
 * or more than breaker_share of the class (and at least two: one sick node
 * is what quarantine is for), AND that many quarantines of one metric are
 * improbable for the class: under breaker_tail, the Poisson tail at the
 * class's own recent rate ((past + 1) / past_windows per window: one case
 * is allowed for, so that a class with no history is not certain of none).
 * The count and share stay the least that trips: a class whose metric
 * quarantines a few nodes on a normal day needs more before a change is a
 * likelier cause than that many sick nodes. */
ng_breaker ng_breaker_check(const ng_breaker_facts *f, const ng_policy *pol);

/* Whether a peer's drop (1 - value/level) shares this node's `drop`: past
 * the warn bar and at least half as deep (both runs carry noise, so "as
 * deep within noise" would miss half of an incident's peers). One such peer
 * screened in the last minutes is enough to doubt that a drop is the
 * node's own (the start of an hour of slow shared storage, a rollout to
 * part of a class), though not enough for the gate's fleet verdict, which
 * wants most of a cohort. */
bool ng_drop_shared(double peer, double drop, double warn);

/* P(X >= k) for X Poisson with mean `mean`: 1 when k <= 0. */
double ng_poisson_tail(int64_t k, double mean);

/* An open event's count of runs in a row that measured its metric within
 * noise of the baseline, after one more run, of a node the event names
 * (the nodes it opened on and those whose quarantine it declined since),
 * with that metric's status `s`: `ok` counts, a failed, fleet or marginal
 * result starts over, anything that measured nothing leaves the count as it
 * was. Only the named nodes count: they are the ones that moved, and while
 * they stay down the cause is not gone, however many of their peers pass
 * (a rollout to part of a class).
 * *clears: the count reached breaker_clear_runs (when that is not 0) and the
 * cause is gone, so the event clears itself. */
int64_t ng_event_clean_step(int64_t clean, ng_admit_metric_status s, const ng_policy *pol,
                            bool *clears);

/* What a quarantine that is not made lands as, when the class's fleet-
 * regression event is open or the breaker trips: admitted-warn when every
 * metric of the run (and its confirmation) measured soundly, because the
 * class's change is blamed rather than the node; held when any measured
 * nothing or gave wrong results, because absent evidence and corrupt results
 * never admit a node, whatever the rest of the fleet is doing. */
ng_admit_outcome ng_land_declined(bool any_unmeasured, bool any_integrity);

/* Whether a landed run's sound records feed the class's baselines: only a
 * clean admission, or an admission with a warning that no override forced
 * and no open fleet-regression event declined. (A record of a metric an open
 * event is about never feeds them: the caller leaves those out.) */
bool ng_land_feeds_baseline(ng_admit_outcome landed, bool override_active, bool fleet_event);

#endif
