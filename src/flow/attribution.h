/* Partial regressions attributed, and baselines drifting under their pinned
 * one: the store's side of judge/attribution.h.
 *
 * When the breaker trips on one metric of a class (flow/admit_land.c), the
 * class's newest runs of that metric say which nodes shifted and which did
 * not since the shift began; their records' profiles say what the shifted
 * share. A baseline rebuilt under the pinned one of its key is a drift. */
#ifndef NODEGATE_FLOW_ATTRIBUTION_H
#define NODEGATE_FLOW_ATTRIBUTION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/policy.h"
#include "judge/attribution.h"
#include "store/store.h"

/* A node profile (a record's "profile" object) as flat fields: dotted paths
 * to every scalar, an array's elements under NAME[] with their distinct
 * values joined by "," ("ib.devices[].fw_ver" = "22.39.1002" for eight HCAs
 * on one firmware). The strings live in *arena (free with
 * ng_attr_profile_free); pairs get node index `node`. */
typedef struct {
	ng_attr_pair *pairs;
	size_t n, cap;
	char **strings;
	size_t n_strings, cap_strings;
} ng_attr_profile;

int ng_attr_profile_add(ng_attr_profile *p, const cJSON *profile, size_t node);
void ng_attr_profile_free(ng_attr_profile *p);

/* What the class's runs of `metric` say at the breaker's trip, against the
 * baseline median the run was judged with, over the runs of the baseline
 * window to now: the shifted nodes are those whose newest run in the
 * breaker's window is under the flag bar; the shift began with the earliest
 * of those runs; the others are the nodes measured since then and within it.
 * Adds "attribution" to detail (status, the rule, counts, the fields, the
 * run the shift began with, and a sentence) and, when fields are named, the
 * shifted nodes holding them to nodes. *named: fields were named;
 * *this_matches: the profile `mine` holds them. 0, or -1 with err. */
int ng_attribute_partial(ng_store *st, const ng_policy *pol, const char *class_key,
                         const char *software, const char *metric, double baseline_median,
                         int64_t class_nodes, int64_t now, const cJSON *mine, cJSON *detail,
                         cJSON *nodes, bool *named, bool *this_matches, ng_err *err);

/* An open partial-regression event's attribution again, from its shift's
 * start to now, after it declined one more node: the counts and the
 * sentence grow with the rollout ("12 of 30 nodes ..."), and the fields are
 * replaced when the fuller picture names fields (kept when it names none:
 * the event stands as opened). Stored with ng_store_fleet_event_set_detail.
 * 0, or -1 with err. */
int ng_attribution_refresh(ng_store *st, const ng_policy *pol, const ng_store_fleet_event *ev,
                           double baseline_median, int64_t class_nodes, int64_t now, ng_err *err);

/* Whether a partial-regression event (its detail's text) names fields that
 * the profile `mine` holds: then its metric's quarantine is the event's. An
 * event that names none (or not a partial one) matches every node.
 * *fields_text (when not NULL) gets "f=v, f=v" (at most cap bytes). */
bool ng_attribution_covers(const char *detail, const cJSON *mine, char *fields_text, size_t cap);

/* After a baseline of (class, software, metric) is built "ok": compares it
 * with the newest pinned baseline of the same key (expired or not: the same
 * software identity is the same configuration) and, when it is more than
 * admission.drift_fraction under it, opens a "drift" fleet event (with its
 * audit entry); when it is back within, clears an open drift event of the
 * key, saying so. *event: the drift event open for the key after this, 0
 * none. 0, or -1 with err. */
int ng_baseline_drift_check(ng_store *st, const ng_policy *pol, const ng_store_baseline *built,
                            int64_t now, const char *actor, int64_t *event, ng_err *err);

#endif
