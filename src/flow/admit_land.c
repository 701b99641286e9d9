/* Landing an admission outcome: overrides, open cases, the class's circuit
 * breaker, new quarantine cases with their evidence, the records accepted
 * into baselines, and the decision with its audit entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/admit.h"
#include "flow/attribution.h"
#include "core/clock.h"
#include "core/json.h"
#include "flow/admit_shared.h"
#include "judge/breaker.h"

/* ---- landing --------------------------------------------------------------------------- */

static bool passed(ng_admit_metric_status s) { return s == NG_MS_OK || s == NG_MS_MARGINAL; }

/* The node's profile, as its run's first record carries it (NULL: none). */
static const cJSON *run_profile(const struct ng_admit_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(r->j[i].rec, "profile");
		if (cJSON_IsObject(p))
			return p;
	}
	return NULL;
}

static bool names_node(const char *nodes, const char *node);

/* Of the nodes with a case of the metric in the breaker's window, how many
 * an open event of that metric names: those quarantines were the event's
 * cause, and a partial regression's event leaves the others judged, so a
 * later fault among the others is counted without them. */
static int64_t cases_of_event_nodes(ng_store *st, const struct ng_admit_run *r, const char *metric,
                                    int64_t since, const ng_store_fleet_event *ev, ng_err *err)
{
	ng_store_case *cases = NULL;
	size_t n = 0;
	if (ng_store_list_cases(st, true, &cases, &n, err) < 0)
		return -1;
	int64_t count = 0;
	for (size_t i = 0; i < n; i++) {
		const ng_store_case *c = &cases[i];
		bool mine = strcmp(c->class_key, r->class_key) == 0 && c->opened_at >= since &&
		            strcmp(c->software, r->software) == 0 && strcmp(c->metric, metric) == 0 &&
		            names_node(ev->nodes, c->node);
		/* distinct nodes: count a node at its newest matching case only */
		for (size_t k = 0; mine && k < i; k++)
			if (strcmp(cases[k].node, c->node) == 0 && strcmp(cases[k].metric, metric) == 0 &&
			    cases[k].opened_at >= since && strcmp(cases[k].class_key, r->class_key) == 0 &&
			    strcmp(cases[k].software, r->software) == 0)
				mine = false;
		count += mine;
	}
	for (size_t i = 0; i < n; i++)
		ng_store_case_free(&cases[i]);
	free(cases);
	return count;
}

static cJSON *evidence_json(const struct ng_admit_run *r, bool below_floor)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "run", r->run_id);
	cJSON_AddBoolToObject(ev, "below_floor", below_floor);
	cJSON *failed = cJSON_AddArrayToObject(ev, "failed");
	for (size_t i = 0; i < r->d.n_named; i++) {
		const struct ng_admit_judged *j = ng_admit_judged_of(r, r->d.named[i]);
		if (!j)
			continue;
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "stage", j->stage);
		cJSON_AddStringToObject(f, "domain", j->res.domain);
		cJSON_AddStringToObject(f, "metric", j->metric);
		cJSON_AddStringToObject(f, "unit", j->unit);
		ng_json_add_number(f, "value", j->res.value);
		ng_json_add_number(f, "bar", j->line.flag.bar);
		ng_json_add_number(f, "baseline_median", j->res.baseline_median);
		ng_json_add_number(f, "percent_of_median", j->line.flag.percent);
		cJSON_AddStringToObject(f, "gate", ng_verdict_name(j->raw));
		cJSON_AddStringToObject(f, "status", ng_admit_metric_status_name(j->line.status));
		cJSON_AddNumberToObject(f, "record", (double)j->record_id);
		ng_strbuf digest = {0};
		if (ng_store_raw_digest(j->rec, &digest))
			cJSON_AddStringToObject(f, "raw_sha256", digest.s);
		ng_strbuf_free(&digest);
		if (j->have_base) {
			cJSON_AddNumberToObject(f, "baseline", (double)j->base.id);
			cJSON_AddNumberToObject(f, "baseline_nodes", (double)j->base.n_nodes);
		}
		cJSON *cohort = cJSON_AddObjectToObject(f, "cohort");
		cJSON_AddNumberToObject(cohort, "nodes", (double)j->n_cohort);
		cJSON_AddItemToObject(cohort, "drops",
		                      j->n_cohort ? cJSON_CreateDoubleArray(j->cohort, (int)j->n_cohort)
		                                  : cJSON_CreateArray());
		/* The record itself: its samples, detail and tool (with the raw
		 * output's digest and path) are the raw evidence. */
		cJSON *body = cJSON_Duplicate(j->rec, true);
		cJSON_DeleteItemFromObjectCaseSensitive(body, "profile");
		cJSON_AddItemToObject(f, "record_body", body);
		cJSON_AddItemToArray(failed, f);
	}
	cJSON_AddNumberToObject(ev, "runs", r->n_confirm ? 2 : 1);
	return ev;
}

/* A quarantine not made (ng_land_declined): held when any metric of the
 * run measured nothing or gave wrong results, else admitted-warn. */
static const char *declined(struct ng_admit_run *r)
{
	bool unmeasured = false, integrity = false;
	for (size_t i = 0; i < r->n; i++) {
		if (!r->j[i].judged)
			continue;
		unmeasured = unmeasured || r->j[i].line.status == NG_MS_UNMEASURED;
		integrity = integrity || r->j[i].line.status == NG_MS_INTEGRITY;
	}
	ng_admit_outcome o = ng_land_declined(unmeasured, integrity);
	if (o == NG_ADMIT_HELD)
		ng_admit_note(r, "held instead: %s", integrity ? "a result was wrong" : "a metric measured nothing");
	return ng_admit_outcome_name(o);
}

/* What the quarantine is for: every failed or wrong metric the decision
 * names, and whether it fell under its floor. */
static size_t causes_of(const struct ng_admit_run *r, ng_quarantine_cause *out, size_t cap,
                        bool *below_floor)
{
	size_t n = 0;
	*below_floor = false;
	for (size_t i = 0; i < r->d.n_named && n < cap; i++) {
		const ng_admit_result *x = r->d.named[i];
		const struct ng_admit_judged *j = ng_admit_judged_of(r, x);
		if (!j || (j->line.status != NG_MS_FAILED && j->line.status != NG_MS_INTEGRITY))
			continue;
		bool under = isfinite(x->floor) && isfinite(x->value) && x->value < x->floor;
		*below_floor = *below_floor || under;
		out[n++] = (ng_quarantine_cause){x->metric, under, j->line.status == NG_MS_INTEGRITY};
	}
	return n;
}

/* Opens the node's case, unless the class's circuit breaker trips first.
 * The breaker counts quarantines of the same class, software and metric
 * only: faults in different metrics of one class are different nodes'
 * faults, not one change. A floor failure is quarantined whatever the
 * breaker says (the node cannot do the work, whatever the fleet did); when
 * it trips the breaker, the event opens all the same, saying the class is
 * below its floor, for the change owner.
 * A quarantine whose drop peers screened in the last minutes share
 * (ng_admit_shared_with_peers) is rechecked instead, unless the breaker trips: it
 * then counts the class's nodes that share the drop within its window, not
 * only its cases, since an incident's nodes are rechecked rather than
 * quarantined, and its event names them (they are the nodes whose return
 * clears it).
 * Returns 0 (quarantined), 1 (the breaker held it back), 2 (rechecked),
 * -1 (error). */
static int quarantine(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                      bool below_floor, const ng_store_fleet_event *open_ev, ng_err *err)
{
	const ng_policy *pol = &ctx->policy;
	const ng_admit_result *what = r->d.n_named ? r->d.named[0] : NULL;
	const char *metric = what ? what->metric : "";
	int64_t window = (int64_t)pol->breaker_window_hours * 3600;
	int64_t lookback = (int64_t)pol->baseline_window_days * 86400;
	int64_t since = r->now - window;
	ng_breaker_facts f = {
		.recent = ng_store_count_metric_cases(st, r->class_key, r->software, metric, since,
		                                      INT64_MAX, err),
		.past = ng_store_count_metric_cases(st, r->class_key, r->software, metric,
		                                    r->now - lookback, since, err),
		.class_nodes = ng_store_count_class_nodes(st, r->class_key, r->now - lookback, err),
		.past_windows = lookback > window ? (double)(lookback - window) / (double)window : 1,
	};
	if (f.recent < 0 || f.past < 0 || f.class_nodes < 0)
		return -1;
	if (open_ev) {
		int64_t theirs = cases_of_event_nodes(st, r, metric, since, open_ev, err);
		if (theirs < 0)
			return -1;
		f.recent = f.recent > theirs ? f.recent - theirs : 0;
	}
	bool shared = !below_floor && !open_ev && ng_admit_shared_with_peers(r);
	cJSON *peers = NULL;
	if (shared) {
		ng_admit_sharing sh;
		if (!(peers = cJSON_CreateArray()))
			return ng_fail(err, "out of memory");
		ng_admit_share_query q = {.since = since, .names = peers};
		if (ng_admit_sharing_peers(st, pol, r, ng_admit_latest_of(r, metric), &q, &sh, err) < 0) {
			cJSON_Delete(peers);
			return -1;
		}
		if ((int64_t)sh.sharing > f.recent)
			f.recent = (int64_t)sh.sharing;
	}
	ng_breaker br = ng_breaker_check(&f, pol);
	if (shared && !br.trips) {
		const struct ng_admit_judged *mj = ng_admit_latest_of(r, metric);
		if (ng_admit_withdraw_first_of_incident(st, pol, r, metric, peers, err) < 0) {
			cJSON_Delete(peers);
			return -1;
		}
		ng_admit_note(r,
		              "recheck: %zu of the class's %zu nodes screened in the last %ld minutes "
		              "share this drop in %s (%.0f%% under the baseline): not confirmed as this "
		              "node's own; held, and judged again at its next screen",
		              mj->local_sharing, mj->local_peers, pol->cohort_local_minutes, metric,
		              100 * mj->drop);
		cJSON_Delete(peers);
		return 2;
	}
	if (!shared && !below_floor && !open_ev && !br.trips) {
		int first = ng_admit_first_drop_on_shared_path(st, pol, r, lookback, err);
		if (first < 0) {
			cJSON_Delete(peers);
			return -1;
		}
		if (first) {
			const struct ng_admit_judged *mj = ng_admit_latest_of(r, metric);
			ng_admit_note(r,
			              "recheck: the first drop of %s on a shared path (%s, %.0f%% under the "
			              "baseline): none of the class's %zu nodes screened in the last %ld "
			              "minutes shares it, but a shared path's incident reaches one node "
			              "first; held, and judged again at its next screen (a second confirmed "
			              "drop within %ld days is quarantined)",
			              metric, mj ? mj->res.domain : "", mj ? 100 * mj->drop : NAN,
			              mj ? mj->local_peers : 0, pol->cohort_local_minutes,
			              pol->baseline_window_days);
			cJSON_Delete(peers);
			return 2;
		}
	}
	/* A partial regression: what the moved nodes share, when anything. */
	bool named = false, matches = false;
	cJSON *att_nodes = NULL, *attribution = NULL;
	char summary[1024] = "";
	if (br.trips && !open_ev) {
		const struct ng_admit_judged *mj = ng_admit_latest_of(r, metric);
		att_nodes = cJSON_CreateArray();
		cJSON *scratch = cJSON_CreateObject();
		int64_t size = br.size;
		if (!att_nodes || !scratch ||
		    ng_attribute_partial(st, pol, r->class_key, r->software, metric,
		                         mj ? mj->res.baseline_median : NAN, size, r->now, run_profile(r),
		                         scratch, att_nodes, &named, &matches, err) < 0) {
			cJSON_Delete(att_nodes), cJSON_Delete(scratch), cJSON_Delete(peers);
			return -1;
		}
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(scratch, "attribution");
		const cJSON *sum = cJSON_GetObjectItemCaseSensitive(at, "summary");
		if (cJSON_IsString(sum))
			ng_copy(summary, sizeof summary, sum->valuestring);
		attribution = cJSON_DetachItemFromObjectCaseSensitive(scratch, "attribution");
		cJSON_Delete(scratch);
	}
	if (br.trips) {
		ng_store_fleet_event ev = {.opened_at = r->now};
		ng_copy(ev.class_key, sizeof ev.class_key, r->class_key);
		ng_copy(ev.software, sizeof ev.software, r->software);
		ng_copy(ev.metric, sizeof ev.metric, metric);
		cJSON *nodes = cJSON_CreateArray(), *detail = cJSON_CreateObject();
		ng_store_case *cases = NULL;
		size_t n = 0;
		if (ng_store_list_cases(st, true, &cases, &n, err) < 0) {
			cJSON_Delete(nodes), cJSON_Delete(detail), cJSON_Delete(att_nodes);
			cJSON_Delete(attribution), cJSON_Delete(peers);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			if (!named && strcmp(cases[i].class_key, r->class_key) == 0 &&
			    cases[i].opened_at >= since && strcmp(cases[i].software, r->software) == 0 &&
			    strcmp(cases[i].metric, metric) == 0)
				cJSON_AddItemToArray(nodes, cJSON_CreateString(cases[i].node));
			ng_store_case_free(&cases[i]);
		}
		free(cases);
		if (named) {
			/* The event is the nodes that moved and share what it names. */
			cJSON_Delete(nodes);
			nodes = att_nodes;
			att_nodes = NULL;
			ng_copy(ev.kind, sizeof ev.kind, "partial");
		} else {
			const cJSON *p;
			cJSON_ArrayForEach(p, peers)
				if (!ng_json_has_string(nodes, p->valuestring))
					cJSON_AddItemToArray(nodes, cJSON_CreateString(p->valuestring));
			if (!ng_json_has_string(nodes, r->node))
				cJSON_AddItemToArray(nodes, cJSON_CreateString(r->node));
		}
		cJSON_Delete(att_nodes);
		if (peers)
			cJSON_AddNumberToObject(detail, "sharing_in_window", cJSON_GetArraySize(peers));
		cJSON_Delete(peers);
		peers = NULL;
		cJSON_AddNumberToObject(detail, "quarantines_in_window", (double)br.would);
		cJSON_AddNumberToObject(detail, "class_nodes", (double)br.size);
		cJSON_AddNumberToObject(detail, "window_hours", (double)pol->breaker_window_hours);
		ng_json_add_number(detail, "expected_in_window", br.expected);
		ng_json_add_number(detail, "tail_probability", br.tail);
		cJSON_AddStringToObject(detail, "metric", metric);
		cJSON_AddBoolToObject(detail, "below_floor", below_floor);
		cJSON_AddStringToObject(detail, "tripped_by", r->node);
		if (attribution)
			cJSON_AddItemToObject(detail, "attribution", attribution);
		ev.nodes = cJSON_PrintUnformatted(nodes);
		ev.detail = cJSON_PrintUnformatted(detail);
		cJSON_Delete(nodes);
		cJSON_Delete(detail);
		int rc = ng_store_open_fleet_event(st, &ev, r->actor, err);
		r->fleet_event = ev.id;
		ng_store_fleet_event_free(&ev);
		if (rc < 0)
			return -1;
		if (below_floor) {
			ng_admit_note(r,
			              "the class is below its floor in %s: %lld of %lld nodes within %ld h; "
			              "fleet-regression event %lld opened for the change owner; this node is "
			              "quarantined all the same, it cannot do the work",
			              metric, (long long)br.would, (long long)br.size,
			              pol->breaker_window_hours, (long long)r->fleet_event);
		} else if (named && !matches) {
			ng_admit_note(r,
			              "partial regression: %s; partial-regression event %lld opened for the "
			              "nodes that share it, for the change owner; this node does not share it, "
			              "so it is judged as before",
			              summary, (long long)r->fleet_event);
			r->fleet_event = 0;
		} else if (named) {
			ng_admit_note(r,
			              "partial regression: %s; partial-regression event %lld opened, and "
			              "quarantines of %s of the nodes that share it are the event's (for the "
			              "change owner) until they are back within noise for %ld runs or an "
			              "operator runs `nodegate fleet clear %lld`; the class's other nodes are "
			              "judged as before",
			              summary, (long long)r->fleet_event, metric, pol->breaker_clear_runs,
			              (long long)r->fleet_event);
			return 1;
		} else {
			if (summary[0])
				ng_admit_note(r, "%s", summary);
			ng_admit_note(r,
			              "circuit breaker: %lld of %lld nodes of this class would be quarantined "
			              "for %s within %ld h (%.2g expected, chance %.2g); fleet-regression event "
			              "%lld opened and quarantines of %s in this class and software stopped until "
			              "it is back within noise for %ld runs or an operator runs `nodegate fleet "
			              "clear %lld`",
			              (long long)br.would, (long long)br.size, metric,
			              pol->breaker_window_hours, br.expected, br.tail,
			              (long long)r->fleet_event, metric, pol->breaker_clear_runs,
			              (long long)r->fleet_event);
			return 1;
		}
	}

	const struct ng_admit_judged *wj = what ? ng_admit_judged_of(r, what) : NULL;
	bool wrong = wj && wj->line.status == NG_MS_INTEGRITY;
	ng_store_case c = {.opened_at = r->now};
	ng_copy(c.node, sizeof c.node, r->node);
	ng_copy(c.node_name, sizeof c.node_name, r->node_name);
	ng_copy(c.class_key, sizeof c.class_key, r->class_key);
	ng_copy(c.software, sizeof c.software, r->software);
	ng_copy(c.domain, sizeof c.domain, what ? what->domain : "");
	ng_copy(c.metric, sizeof c.metric, what ? what->metric : "");
	snprintf(c.release_condition, sizeof c.release_condition,
	         "%ld passing runs of %.32s %.96s after the quarantine began (a reboot alone never "
	         "releases), or an administrator-led diagnostic (`nodegate release --manual`)",
	         pol->release_passes, c.domain, c.metric);
	cJSON *ev = evidence_json(r, below_floor);
	c.evidence = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	int rc = c.evidence ? ng_store_open_case(st, &c, r->actor, err) : ng_fail(err, "out of memory");
	r->case_id = c.id;
	ng_store_case_free(&c);
	if (rc < 0)
		return -1;
	char word[NG_SHELL_WORD_MAX];
	ng_admit_note(r,
	              "case %lld opened: %s %s %s; release needs %ld passing runs of it "
	              "(`nodegate quarantine show %s`)",
	              (long long)r->case_id, what ? what->domain : "", what ? what->metric : "",
	              wrong ? "returned wrong results" : below_floor ? "fell below its floor twice" : "failed twice",
	              pol->release_passes, ng_shell_word(r->node_name[0] ? r->node_name : r->node, word));
	return 0;
}

/* Whether an event's nodes (a JSON array text) name the node. */
static bool names_node(const char *nodes, const char *node)
{
	cJSON *a = nodes ? cJSON_Parse(nodes) : NULL;
	bool found = ng_json_has_string(a, node);
	cJSON_Delete(a);
	return found;
}

/* The event now names the node whose quarantine it declined too: the
 * event clears itself only once the nodes that moved are back. */
static int add_node(ng_store *st, const ng_store_fleet_event *e, const char *node, ng_err *err)
{
	if (names_node(e->nodes, node))
		return 0;
	cJSON *a = e->nodes ? cJSON_Parse(e->nodes) : NULL;
	if (!cJSON_IsArray(a)) {
		cJSON_Delete(a);
		a = cJSON_CreateArray();
	}
	cJSON_AddItemToArray(a, cJSON_CreateString(node));
	char *text = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	int rc = text ? ng_store_fleet_event_update(st, e->id, 0, text, err)
	              : ng_fail(err, "out of memory");
	cJSON_free(text);
	return rc;
}

/* The open fleet-regression events of the run's class and software (an
 * event of another software identity is of a configuration this node no
 * longer runs). Each one that names this node, and whose metric this run
 * measured, takes one step toward clearing itself (ng_event_clean_step); one
 * that clears is closed here, by nodegate, saying why. What stays open is
 * left in *out. */
static int events_of_run(ng_store *st, const ng_policy *pol, struct ng_admit_run *r,
                         ng_store_fleet_event **out, size_t *n_out, ng_err *err)
{
	ng_store_fleet_event *ev = NULL;
	size_t n = 0, kept = 0;
	if (ng_store_fleet_events_of_class(st, r->class_key, &ev, &n, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		ng_store_fleet_event *e = &ev[i];
		bool mine = strcmp(e->software, r->software) == 0 || strcmp(e->software, "mixed") == 0;
		const struct ng_admit_judged *j =
			mine && e->metric[0] && names_node(e->nodes, r->node) ? ng_admit_latest_of(r, e->metric) : NULL;
		bool clears = false;
		if (rc == 0 && j && j->judged) {
			int64_t clean = ng_event_clean_step(e->clean_runs, j->line.status, pol, &clears);
			if (clears) {
				char why[200];
				snprintf(why, sizeof why,
				         "%s back within noise of the baseline for %ld runs in a row of its nodes",
				         e->metric, pol->breaker_clear_runs);
				rc = ng_store_clear_fleet_event(st, e->id, r->now, "nodegate", why, err);
				if (rc == 0)
					ng_admit_note(r, "fleet-regression event %lld cleared: %s",
					              (long long)e->id, why);
			} else if (clean != e->clean_runs) {
				rc = ng_store_fleet_event_update(st, e->id, clean, NULL, err);
				e->clean_runs = clean;
			}
		}
		if (mine && !clears && rc == 0) {
			if (kept != i) {
				ev[kept] = *e;
				*e = (ng_store_fleet_event){0};
			}
			kept++;
		} else {
			ng_store_fleet_event_free(e);
		}
	}
	for (size_t i = kept; i < n; i++)
		ng_store_fleet_event_free(&ev[i]);
	*out = ev;
	*n_out = kept;
	return rc;
}

static void free_events(ng_store_fleet_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ng_store_fleet_event_free(&ev[i]);
	free(ev);
}

/* Whether an open event covers this metric's records (they stay out of the
 * class's baselines while it is open: they are what moved). */
static bool event_covers(const ng_store_fleet_event *ev, size_t n, const char *metric)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev[i].kind, "drift") != 0 &&
		    (!ev[i].metric[0] || strcmp(ev[i].metric, metric) == 0))
			return true;
	return false;
}

/* Counts this run toward the node's open case, when it ran the case's test. */
static int count_toward_case(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                             const ng_store_case *c, ng_err *err)
{
	r->case_id = c->id;
	const struct ng_admit_judged *j = ng_admit_latest_of(r, c->metric);
	if (!j) {
		ng_admit_note(r, "still quarantined (case %lld): this run did not measure %s",
		              (long long)c->id, c->metric);
		return 0;
	}
	bool ok = passed(j->line.status);
	if (ng_store_case_retry(st, c->id, ok, r->run_id, r->now, err) < 0)
		return -1;
	long have = (long)c->passes + ok, need = ctx->policy.release_passes;
	ng_admit_note(r,
	              "still quarantined (case %lld): %s %s; %ld of %ld passing runs since it began%s",
	              (long long)c->id, c->metric, ok ? "passed" : "failed again", have, need,
	              have >= need ? ": `nodegate release` can release it now" : "");
	return 0;
}

int ng_admit_land(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r, ng_err *err)
{
	const ng_policy *pol = &ctx->policy;
	r->outcome = ng_admit_outcome_name(r->d.outcome);
	if (pol->n_floors == 0)
		ng_admit_note(r, "peers only: the policy sets no floors, and a class that degrades "
		                 "together is accepted (`nodegate floors suggest` derives floors from a "
		                 "pinned baseline)");
	ng_store_case open_case = {0};
	int has_case = ng_store_open_case_of(st, r->node, &open_case, err);
	ng_store_override ov;
	int has_override = has_case < 0 ? -1 : ng_store_active_override(st, r->node, r->now, &ov, err);
	ng_store_fleet_event *events = NULL;
	size_t n_events = 0;
	int rc = has_override < 0 ? -1 : events_of_run(st, pol, r, &events, &n_events, err);
	ng_quarantine_cause causes[NG_ADMIT_NAMED_MAX];
	bool below_floor = false;
	size_t n_causes = causes_of(r, causes, NG_ADMIT_NAMED_MAX, &below_floor);
	const ng_store_fleet_event *declining = NULL, *same_metric = NULL;
	const cJSON *mine = run_profile(r);
	const char *q_metric = r->d.n_named ? r->d.named[0]->metric : "";
	for (size_t i = 0; rc == 0 && i < n_events; i++) {
		const ng_store_fleet_event *e = &events[i];
		if (strcmp(e->kind, "drift") == 0) {
			/* A drift declines nothing: the nodes are judged against the
			 * baseline as ever; it is there to be told about. */
			cJSON *d = e->detail ? cJSON_Parse(e->detail) : NULL;
			const cJSON *sum = cJSON_GetObjectItemCaseSensitive(d, "summary");
			ng_admit_note(r, "baseline drift event %lld is open: %s (nothing is declined for it; "
			                 "`nodegate fleet clear %lld` once someone has looked)",
			              (long long)e->id, cJSON_IsString(sum) ? sum->valuestring : e->metric,
			              (long long)e->id);
			cJSON_Delete(d);
			continue;
		}
		if (e->metric[0] && strcmp(e->metric, q_metric) == 0)
			same_metric = e;
		if (strcmp(e->kind, "partial") == 0) {
			char fields[512];
			bool covers = ng_attribution_covers(e->detail, mine, fields, sizeof fields);
			ng_admit_note(r,
			              "partial-regression event %lld is open for this class's %s on the nodes "
			              "sharing %s (software %s): %s",
			              (long long)e->id, e->metric, fields[0] ? fields : "(no field)",
			              e->software,
			              covers ? "this node shares it, and its quarantine of that metric is the "
			                       "event's"
			                     : "this node does not share it, and is judged as before");
			if (!declining && covers && ng_event_declines(e->metric, causes, n_causes))
				declining = e;
			continue;
		}
		ng_admit_note(r,
		              "fleet-regression event %lld is open for this class's %s (nodes %s, "
		              "software %s): its quarantines in this class are declined until it is back "
		              "within noise for %ld runs of its nodes (%lld so far) or `nodegate fleet clear %lld`",
		              (long long)e->id, e->metric[0] ? e->metric : "every metric", e->nodes,
		              e->software, pol->breaker_clear_runs, (long long)e->clean_runs,
		              (long long)e->id);
		if (!declining && ng_event_declines(e->metric, causes, n_causes)) {
			ng_event_explanation why = NG_EVENT_EXPLAINS;
			double depth = NAN;
			rc = e->metric[0] ? ng_admit_event_explains(st, pol, r, e, &why, &depth, err) : 0;
			const struct ng_admit_judged *ej = ng_admit_latest_of(r, e->metric);
			if (rc == 0 && why == NG_EVENT_OTHER_SHAPE && ej)
				ng_admit_note(r,
				              "the gate called this node's %s %s, and none of the runs of the "
				              "nodes event %lld names within %ld h: the event moved a level, "
				              "not the shape of the samples, and it is judged as the node's own",
				              e->metric, ng_verdict_name(ej->raw), (long long)e->id,
				              pol->breaker_window_hours);
			else if (rc == 0 && why == NG_EVENT_NOBODY_SHARES)
				ng_admit_note(r,
				              "none of the nodes event %lld names, screened within %ld h, shares "
				              "this node's drop in %s: the event does not explain it, and it is "
				              "judged as the node's own",
				              (long long)e->id, pol->breaker_window_hours, e->metric);
			else if (rc == 0 && why == NG_EVENT_DEEPER)
				ng_admit_note(r,
				              "the nodes event %lld names dropped %.0f%% in %s; this node, "
				              "moved back up by that much, is still under the class's bar: the "
				              "event does not explain all of its drop, and it is judged as the "
				              "node's own",
				              (long long)e->id, 100 * depth, e->metric);
			if (why == NG_EVENT_EXPLAINS)
				declining = e;
		}
	}
	if (declining)
		r->fleet_event = declining->id;
	ng_land_path path = rc == 0 ? ng_land_path_of(r->d.outcome, has_override == 1, has_case == 1,
	                                              declining != NULL)
	                            : NG_LAND_AS_JUDGED;
	bool declined_by_event = false;
	if (path == NG_LAND_OVERRIDE) {
		char until[32];
		ng_format_time(ov.expires_at, until);
		ng_admit_note(r, "override %lld by %s until %s (%s): admitted despite a %s result",
		              (long long)ov.id, ov.by, until, ov.reason, r->outcome);
		r->outcome = "admitted-warn";
	} else if (path == NG_LAND_OPEN_CASE) {
		rc = count_toward_case(st, ctx, r, &open_case, err);
		r->outcome = "quarantined";
	} else if (path == NG_LAND_EVENT_OPEN) {
		ng_admit_note(r, "would have been quarantined; not, while fleet-regression event %lld "
		                 "is open", (long long)declining->id);
		r->outcome = declined(r);
		declined_by_event = true;
		rc = add_node(st, declining, r->node, err);
		if (rc == 0 && strcmp(declining->kind, "partial") == 0) {
			const struct ng_admit_judged *mj = ng_admit_latest_of(r, declining->metric);
			int64_t size = ng_store_count_class_nodes(
				st, r->class_key, r->now - (int64_t)pol->baseline_window_days * 86400, err);
			rc = size < 0 ? -1
			              : ng_attribution_refresh(st, pol, declining,
			                                       mj ? mj->res.baseline_median : NAN, size,
			                                       r->now, err);
		}
	} else if (path == NG_LAND_QUARANTINE) {
		if (below_floor && n_events)
			ng_admit_note(r, "below the floor: quarantined whatever the fleet did");
		int q = quarantine(st, ctx, r, below_floor, same_metric, err);
		rc = q < 0 ? -1 : 0;
		if (q == 1) {
			r->outcome = declined(r);
			declined_by_event = true;
		} else if (q == 2) {
			r->outcome = ng_admit_outcome_name(NG_ADMIT_HELD);
			r->recheck_at = r->now + pol->cohort_local_minutes * 60;
		}
	}
	ng_store_case_free(&open_case);
	if (rc < 0) {
		free_events(events, n_events);
		return -1;
	}
	if (strcmp(r->outcome, "admitted-warn") == 0)
		r->recheck_at = r->now + (int64_t)pol->warn_recheck_hours * 3600;

	/* Only a clean admission feeds the class's baselines, and only with the
	 * records that measured soundly and that no open event is about. */
	ng_admit_outcome landed = strcmp(r->outcome, "admitted") == 0        ? NG_ADMIT_ADMITTED
	                          : strcmp(r->outcome, "admitted-warn") == 0 ? NG_ADMIT_WARN
	                                                                     : NG_ADMIT_HELD;
	bool admitted = ng_land_feeds_baseline(landed, has_override == 1, declined_by_event);
	if (admitted) {
		int64_t *ids = malloc((r->n ? r->n : 1) * sizeof *ids);
		size_t k = 0;
		for (size_t i = 0; ids && i < r->n; i++) {
			ng_admit_metric_status s = r->j[i].line.status;
			if (r->j[i].judged && (passed(s) || s == NG_MS_ESTABLISHING) &&
			    !event_covers(events, n_events, r->j[i].metric))
				ids[k++] = r->j[i].record_id;
		}
		rc = ids ? ng_store_accept_records(st, ids, k, err) : ng_fail(err, "out of memory");
		free(ids);
	}
	free_events(events, n_events);
	return rc;
}

int ng_admit_store_decision(ng_store *st, struct ng_admit_run *r, ng_err *err)
{
	ng_store_verdict *lines = calloc(r->n ? r->n : 1, sizeof *lines);
	if (!lines)
		return ng_fail(err, "out of memory");
	for (size_t i = 0; i < r->n; i++) {
		const struct ng_admit_judged *j = &r->j[i];
		lines[i] = (ng_store_verdict){
			.stage = j->stage, .domain = j->res.domain, .metric = j->metric, .unit = j->unit,
			.value = j->res.value, .baseline_median = j->res.baseline_median,
			.floor = j->res.floor, .bar = j->line.flag.bar, .percent = j->line.flag.percent,
			.gate_verdict = ng_verdict_name(j->raw),
			.status = j->judged ? ng_admit_metric_status_name(j->line.status) : "not-judged",
			.record_id = j->record_id,
		};
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double took = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - r->started;
	ng_store_node_state s = {.updated_at = r->now, .recheck_at = r->recheck_at,
	                         .duration_ms = r->started > 0 && took > 0 ? (int64_t)(took * 1000) + 1 : 0};
	ng_copy(s.node, sizeof s.node, r->node);
	ng_copy(s.node_name, sizeof s.node_name, r->node_name);
	ng_copy(s.class_key, sizeof s.class_key, r->class_key);
	ng_copy(s.software, sizeof s.software, r->software);
	ng_copy(s.outcome, sizeof s.outcome, r->outcome);
	ng_copy(s.run_id, sizeof s.run_id, r->run_id);
	cJSON *detail = cJSON_CreateObject();
	cJSON_AddStringToObject(detail, "run", r->run_id);
	if (r->node_name[0])
		cJSON_AddStringToObject(detail, "node_name", r->node_name);
	cJSON_AddStringToObject(detail, "judged", ng_admit_outcome_name(r->d.outcome));
	cJSON_AddItemToObject(detail, "notes", cJSON_Duplicate(r->notes, true));
	if (r->case_id)
		cJSON_AddNumberToObject(detail, "case", (double)r->case_id);
	char *text = cJSON_PrintUnformatted(detail);
	cJSON_Delete(detail);
	int rc = ng_store_put_decision(st, &s, lines, r->n, text, r->actor, err);
	cJSON_free(text);
	free(lines);
	return rc;
}
