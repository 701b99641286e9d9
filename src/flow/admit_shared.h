/* Which of the class's nodes share a judged node's drop (admit_shared.c),
 * and what landing makes of it: a quarantine rechecked rather than
 * confirmed, an open event that still explains a drop. */
#ifndef NODEGATE_FLOW_ADMIT_SHARED_H
#define NODEGATE_FLOW_ADMIT_SHARED_H

#include <cjson/cJSON.h>

#include "flow/admit.h"

typedef struct {
	size_t peers;   /* the nodes looked at: screened since, other than this one */
	size_t sharing; /* of those, the ones whose newest run shares the drop */
	double depth;   /* the median drop of the sharing ones (NaN: none) */
} ng_admit_sharing;

typedef struct {
	int64_t since;      /* runs taken at or after this */
	const cJSON *among; /* only the nodes this JSON array of ids names; NULL: any */
	bool class_level;   /* against the class baseline, not each node's own level */
	cJSON *names;       /* when not NULL, the sharing nodes' ids are appended */
} ng_admit_share_query;

/* Counts the class's other nodes (same software identity) whose newest run
 * of j's metric taken at or after q->since is under their level by as much
 * as ng_drop_shared asks of j's drop. Their level is their own usual one
 * (the class baseline for a node with none), or with q->class_level the
 * class baseline. */
int ng_admit_sharing_peers(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                           const struct ng_admit_judged *j, const ng_admit_share_query *q,
                           ng_admit_sharing *out, ng_err *err);

/* Whether every metric the decision's quarantine is for failed (wrong
 * results never wait) with peers screened in the last minutes sharing its
 * drop (j->local_sharing): then the node's fault is not yet told apart from
 * the hour's (the start of an hour of slow shared storage, a rollout to
 * part of a class), and the quarantine is rechecked instead of confirmed. */
bool ng_admit_shared_with_peers(const struct ng_admit_run *r);

/* Whether every failed metric of the quarantine is a first drop on a shared
 * path (admission.shared_paths): a domain whose path other nodes share, and
 * a metric this node has not had confirmed low in the lookback before now.
 * An hour of slow shared storage reaches one node before any peer screened
 * in the last minutes can share it; the recheck of that first node is
 * judged again at its next screen, and a second confirmed drop of the same
 * metric is quarantined as the node's own. 1 yes, 0 no, -1 error. */
int ng_admit_first_drop_on_shared_path(ng_store *st, const ng_policy *pol,
                                       const struct ng_admit_run *r, int64_t lookback,
                                       ng_err *err);

/* What an open event makes of this node's drop in its metric. */
typedef enum {
	NG_EVENT_EXPLAINS,      /* its nodes share it: the event's, not the node's */
	NG_EVENT_NOBODY_SHARES, /* none of its nodes screened within the window does */
	NG_EVENT_DEEPER,        /* moved back up by their drop, still under the bar */
	NG_EVENT_OTHER_SHAPE,   /* bimodal or unstable where none of theirs were */
} ng_event_explanation;

/* Whether an open event still explains this node's drop in its metric: a
 * node the event names, other than this one, screened within the breaker's
 * window, still shares the drop against the class baseline, and this
 * node's run, with the class baseline lowered by the depth of those
 * sharing nodes' drops (their median, in *depth: NaN when none shares),
 * would pass the class's bar. A node that drops much deeper than what
 * moved (a sick node among a rollout's) is the node's own fault. An event
 * moves a level: a run the gate called bimodal or unstable is explained
 * only when a node the event names had a run it called so within the
 * window. NG_EVENT_EXPLAINS for an event that names no node, or a metric
 * this run has no baseline for. */
int ng_admit_event_explains(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                            const ng_store_fleet_event *e, ng_event_explanation *why,
                            double *depth, ng_err *err);

/* The first node an incident reached: when this node's drop is rechecked
 * because peers share it, and is new (its previous screen of the metric was
 * not flagged), a peer quarantined for that metric alone within the last
 * admission.cohort_local_minutes, whose drop was new too and that the
 * sharing names, was quarantined before anyone could share its drop: its
 * case is withdrawn (closed by nodegate, the node screened again before
 * use), noted in r and listed in r->withdrawn. Floor failures and wrong
 * results are never withdrawn. sharing: the ids of the peers that share
 * this node's drop. Returns how many were withdrawn, or -1. */
int ng_admit_withdraw_first_of_incident(ng_store *st, const ng_policy *pol,
                                        struct ng_admit_run *r, const char *metric,
                                        const cJSON *sharing, ng_err *err);

#endif
