/* What the report must not get wrong about a quarantine (docs/report.md,
 * "What a quarantine is charged with").
 *
 *  - A node quarantined within a fleet-regression event moved with its
 *    class (a software change, a shared service): its quarantine is not a
 *    finding against the node, so it charges no node-fault GPU-hours and
 *    makes no repeat offender. Its own GPU faults (an epilog's, a health
 *    check's) still charge it.
 *  - A released case is a "possible false reject" only when nothing was
 *    found against the node afterwards: a node quarantined more than once
 *    is a repeat offender, and one whose GPUs were found faulty, or whose
 *    screen was flagged, after the release was not released by mistake of
 *    the gate but came back sick. */
#include <string.h>

#include "flow/report_model.h"

/* Whether the event names the case's node, or the case opened while the
 * event was open in the case's class. A drift declines nothing and explains
 * no case; a partial regression explains its own nodes' cases only (the
 * class's other nodes were judged as ever). */
static bool event_explains(const struct ng_revent *ev, const struct ng_rcase *c)
{
	if (strcmp(ev->e.class_key, c->c.class_key) != 0 || strcmp(ev->e.kind, "drift") == 0)
		return false;
	if (strcmp(ev->e.kind, "partial") != 0 && c->c.opened_at >= ev->e.opened_at &&
	    (ev->e.cleared_at == 0 || c->c.opened_at < ev->e.cleared_at))
		return true;
	cJSON *nodes = cJSON_Parse(ev->e.nodes ? ev->e.nodes : "[]");
	bool named = false;
	const cJSON *n;
	cJSON_ArrayForEach(n, nodes)
		named |= cJSON_IsString(n) && strcmp(n->valuestring, c->c.node) == 0;
	cJSON_Delete(nodes);
	return named;
}

/* Whether a screen of the node at `at` fell within (or in the breaker's
 * window before) a fleet-regression event of its class. */
static bool during_event(const struct ng_report *r, size_t node, int64_t at)
{
	long cls = r->nodes[node].cls;
	for (size_t k = 0; cls >= 0 && k < r->n_events; k++) {
		const ng_store_fleet_event *e = &r->events[k].e;
		if (strcmp(e->class_key, r->class_map.keys[cls]) == 0 && strcmp(e->kind, "drift") != 0 &&
		    at >= e->opened_at - r->breaker_window_hours * 3600 &&
		    (e->cleared_at == 0 || at < e->cleared_at))
			return true;
	}
	return false;
}

static const char *after_release(const struct ng_report *r, const struct ng_rcase *c)
{
	/* Another quarantine of the node counts unless its class's event
	 * explains it: a healthy node caught in two fleet events is no repeat
	 * offender. */
	for (size_t k = 0; k < r->n_cases; k++)
		if (&r->cases[k] != c && r->cases[k].node == c->node && !r->cases[k].in_fleet_event)
			return "repeat offender: quarantined again";
	for (size_t k = 0; k < r->n_find; k++)
		if (r->find[k].node == c->node && r->find[k].at > c->c.closed_at)
			return "GPU found faulty after the release";
	for (size_t k = 0; k < r->n_dec; k++)
		if (r->dec[k].node == c->node && r->dec[k].accuses && r->dec[k].at > c->c.closed_at &&
		    !during_event(r, c->node, r->dec[k].at))
			return "flagged again after the release";
	return NULL;
}

void ng_report_truth(struct ng_report *r)
{
	for (size_t i = 0; i < r->n_cases; i++)
		for (size_t k = 0; k < r->n_events && !r->cases[i].in_fleet_event; k++)
			r->cases[i].in_fleet_event = event_explains(&r->events[k], &r->cases[i]);
	for (size_t i = 0; i < r->n_cases; i++) {
		struct ng_rcase *c = &r->cases[i];
		if (!c->c.closed_at)
			continue;
		c->after_release = after_release(r, c);
		if (c->klass != NG_CASE_RELEASED_SAME_HW || c->after_release || c->c.opened_at < r->since)
			continue;
		long cls = ng_rmap_find(&r->class_map, c->c.class_key);
		for (size_t f = 0; cls >= 0 && f < r->n_fr; f++)
			if (r->fr[f].cls == (size_t)cls &&
			    strcmp(r->fr[f].policy, c->policy[0] ? c->policy : "unrecorded") == 0)
				r->fr[f].possible_false_rejects++;
	}
}
