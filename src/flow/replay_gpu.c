/* The GPU checks of a replay, judged again from their kept readings
 * (flow/replay_gpu.h). */
#include "flow/replay_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "flow/gpu_readings.h"
#include "store/policies.h"

static bool drains(const char *outcome)
{
	return strcmp(outcome, "degraded") == 0 || strcmp(outcome, "fatal") == 0;
}

struct gwalk {
	const ng_replay_opts *o;
	ng_replay_own_policy own;
	void *own_arg;
	ng_gpu_readings *r;
	ng_node_health *hc, *hp;
	cJSON *by_mode, *changed, *not_replayed, *unreadable;
	int64_t runs, rejudged, no_readings, unjudged, n_changed, n_unreplayed, n_unreadable;
	int64_t drained_cur, drained_prop, drained_rec, recorded_differs;
	bool oom;
};

static void bump(cJSON *o, const char *key)
{
	cJSON *n = cJSON_GetObjectItem(o, key);
	if (!n)
		n = cJSON_AddNumberToObject(o, key, 0);
	if (n)
		cJSON_SetNumberValue(n, n->valuedouble + 1);
}

static cJSON *mode_of(struct gwalk *w, const char *mode)
{
	cJSON *m = cJSON_GetObjectItem(w->by_mode, mode);
	if (m)
		return m;
	m = cJSON_AddObjectToObject(w->by_mode, mode);
	static const char *const counts[] = {"runs", "rejudged", "no_readings", "not_replayed",
	                                     "changed"};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		cJSON_AddNumberToObject(m, counts[i], 0);
	cJSON_AddObjectToObject(m, "recorded");
	cJSON_AddObjectToObject(m, "current");
	cJSON_AddObjectToObject(m, "proposed");
	cJSON_AddObjectToObject(m, "transitions");
	cJSON_AddArrayToObject(m, "nodes_changed");
	return m;
}

/* The reason that made a GPU's severity: its most severe, first given. */
static const ng_health_reason *decisive(const ng_gpu_verdict *v)
{
	const ng_health_reason *best = NULL;
	for (size_t i = 0; i < v->n_reasons; i++)
		if (v->reason[i].severity == v->severity && !best)
			best = &v->reason[i];
	return best;
}

static cJSON *gpu_changes(const ng_node_health *hc, const ng_node_health *hp)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < hc->n_gpus && i < hp->n_gpus; i++) {
		const ng_gpu_verdict *c = &hc->gpu[i], *p = &hp->gpu[i];
		if (c->severity == p->severity)
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddItemToArray(a, e);
		cJSON_AddNumberToObject(e, "index", c->index);
		cJSON_AddStringToObject(e, "uuid", c->uuid);
		cJSON_AddStringToObject(e, "current", ng_health_name(c->severity));
		cJSON_AddStringToObject(e, "proposed", ng_health_name(p->severity));
		/* Why: the side that found worse says what it found. */
		bool tighter = p->severity == NG_HEALTH_FATAL || p->severity == NG_HEALTH_DEGRADED ||
		               (p->severity == NG_HEALTH_TRANSIENT && c->severity == NG_HEALTH_OK);
		const ng_health_reason *r = decisive(tighter ? p : c);
		if (r) {
			cJSON_AddStringToObject(e, "signal", r->signal ? r->signal : "");
			cJSON_AddStringToObject(e, "reason", r->text);
		}
	}
	return a;
}

static void add_unreplayed(struct gwalk *w, const char *policy, const char *why)
{
	cJSON *e;
	cJSON_ArrayForEach(e, w->not_replayed)
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "policy")), policy) == 0) {
			bump(e, "runs");
			return;
		}
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "policy", policy);
	cJSON_AddNumberToObject(e, "runs", 1);
	cJSON_AddStringToObject(e, "why", why);
	cJSON_AddItemToArray(w->not_replayed, e);
}

static int one_check(const ng_store_replay_gpu_check *c, void *arg)
{
	struct gwalk *w = arg;
	if (w->o->class_key && strcmp(c->class_key, w->o->class_key) != 0)
		return 0;
	cJSON *m = mode_of(w, c->mode);
	if (!m)
		return w->oom = true, -1;
	w->runs++;
	bump(m, "runs");
	bump(cJSON_GetObjectItem(m, "recorded"), c->outcome);
	w->drained_rec += drains(c->outcome);
	if (!c->readings) {
		w->no_readings++;
		bump(m, "no_readings");
		return 0;
	}
	const char *why = NULL;
	const ng_policy *own = w->own(w->own_arg, c->policy, &why);
	if (!own) {
		if (!why)
			return w->oom = true, -1;
		w->n_unreplayed++;
		bump(m, "not_replayed");
		add_unreplayed(w, c->policy, why);
		return 0;
	}
	ng_err perr;
	if (ng_gpu_readings_read(c->readings, w->r, &perr) < 0) {
		w->n_unreadable++;
		bump(m, "not_replayed");
		if (!cJSON_GetObjectItem(w->unreadable, "first"))
			cJSON_AddStringToObject(w->unreadable, "first", perr.msg);
		return 0;
	}
	const char *cur = ng_gpu_readings_judge(w->r, own, w->hc);
	const char *prop = ng_gpu_readings_judge(w->r, w->o->proposed, w->hp);
	w->rejudged++;
	w->unjudged += !w->r->run.judged;
	bump(m, "rejudged");
	bump(cJSON_GetObjectItem(m, "current"), cur);
	bump(cJSON_GetObjectItem(m, "proposed"), prop);
	w->drained_cur += drains(cur);
	w->drained_prop += drains(prop);
	/* The control against what was recorded: a difference is the rules'
	 * code, changed since the check ran, not the policy's. */
	w->recorded_differs += strcmp(cur, c->outcome) != 0;
	if (strcmp(cur, prop) == 0)
		return 0;
	w->n_changed++;
	bump(m, "changed");
	char move[48];
	snprintf(move, sizeof move, "%s->%s", cur, prop);
	bump(cJSON_GetObjectItem(m, "transitions"), move);
	const char *name = *c->node_name ? c->node_name : c->node;
	cJSON *nodes = cJSON_GetObjectItem(m, "nodes_changed"), *n;
	bool listed = false;
	cJSON_ArrayForEach(n, nodes)
		listed = listed || strcmp(n->valuestring, name) == 0;
	if (!listed)
		cJSON_AddItemToArray(nodes, cJSON_CreateString(name));
	cJSON *e = cJSON_CreateObject();
	if (!e)
		return w->oom = true, -1;
	cJSON_AddItemToArray(w->changed, e);
	cJSON_AddStringToObject(e, "node", c->node);
	cJSON_AddStringToObject(e, "node_name", c->node_name);
	cJSON_AddStringToObject(e, "class", c->class_key);
	cJSON_AddStringToObject(e, "mode", c->mode);
	cJSON_AddNumberToObject(e, "check_id", (double)c->id);
	cJSON_AddNumberToObject(e, "at", (double)c->at);
	cJSON_AddStringToObject(e, "policy", c->policy);
	cJSON_AddStringToObject(e, "recorded", c->outcome);
	cJSON_AddStringToObject(e, "current", cur);
	cJSON_AddStringToObject(e, "proposed", prop);
	cJSON_AddBoolToObject(e, "drain_current", drains(cur));
	cJSON_AddBoolToObject(e, "drain_proposed", drains(prop));
	cJSON_AddItemToObject(e, "gpus", gpu_changes(w->hc, w->hp));
	return 0;
}

/* Health values that differ whose effect reaches the readings themselves,
 * which a replay takes as the check read them: the earlier counters were
 * chosen at least health.rate_min_hours back; the deadline bounded what
 * NVML answered; a share of memory left over made the epilog read again. */
static const char *const as_read[] = {"health.rate_min_hours", "health.deadline_seconds",
                                      "health.memory_used_share"};

static cJSON *health_differences(const ng_policy *a, const ng_policy *b, cJSON **inputs)
{
	cJSON *diff = cJSON_CreateArray();
	*inputs = cJSON_CreateArray();
	ng_strbuf x = {0}, y = {0};
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		const char *name = ng_policy_param_name(i);
		if (strncmp(name, "health.", 7) != 0)
			continue;
		ng_strbuf_reset(&x);
		ng_strbuf_reset(&y);
		ng_policy_param_value(a, i, &x);
		ng_policy_param_value(b, i, &y);
		if (strcmp(x.s ? x.s : "", y.s ? y.s : "") == 0)
			continue;
		cJSON_AddItemToArray(diff, cJSON_CreateString(name));
		for (size_t k = 0; k < sizeof as_read / sizeof *as_read; k++)
			if (strcmp(name, as_read[k]) == 0)
				cJSON_AddItemToArray(*inputs, cJSON_CreateString(name));
	}
	ng_strbuf_free(&x);
	ng_strbuf_free(&y);
	return diff;
}

int ng_replay_gpu_checks(ng_store *st, const ng_replay_opts *o, int64_t since,
                         const ng_policy *enforcing, ng_replay_own_policy own, void *arg,
                         cJSON *doc, ng_err *err)
{
	cJSON *g = cJSON_AddObjectToObject(doc, "gpu_checks");
	struct gwalk w = {
		.o = o, .own = own, .own_arg = arg,
		.r = calloc(1, sizeof *w.r), .hc = malloc(sizeof *w.hc), .hp = malloc(sizeof *w.hp),
		.by_mode = cJSON_CreateObject(), .changed = cJSON_CreateArray(),
		.not_replayed = cJSON_CreateArray(), .unreadable = cJSON_CreateObject(),
	};
	int rc = 0;
	if (!g || !w.r || !w.hc || !w.hp || !w.by_mode || !w.changed || !w.not_replayed ||
	    !w.unreadable || !(w.r->snap = malloc(sizeof *w.r->snap)))
		rc = ng_fail(err, "out of memory");
	if (rc == 0)
		rc = ng_store_replay_gpu_checks(st, since, one_check, &w, err);
	if (w.oom)
		rc = ng_fail(err, "out of memory");
	if (w.r)
		free(w.r->snap);
	free(w.r);
	free(w.hc);
	free(w.hp);
	if (rc < 0) {
		cJSON_Delete(w.by_mode);
		cJSON_Delete(w.changed);
		cJSON_Delete(w.not_replayed);
		cJSON_Delete(w.unreadable);
		return -1;
	}
	cJSON_AddNumberToObject(g, "runs", (double)w.runs);
	cJSON_AddNumberToObject(g, "rejudged", (double)w.rejudged);
	cJSON_AddNumberToObject(g, "changed_count", (double)w.n_changed);
	cJSON_AddNumberToObject(g, "drained", (double)w.drained_rec);
	cJSON_AddBoolToObject(g, "replayed", w.rejudged == w.runs);
	cJSON_AddNumberToObject(g, "nothing_checked", (double)w.unjudged);
	cJSON_AddNumberToObject(g, "current_differs_from_recorded", (double)w.recorded_differs);
	cJSON *nr = cJSON_AddObjectToObject(g, "no_readings");
	cJSON_AddNumberToObject(nr, "runs", (double)w.no_readings);
	cJSON_AddStringToObject(nr, "why", "no readings kept: the run was stored before the store "
	                        "kept what a GPU check judged from (schema 13), or its readings "
	                        "could not be written; its recorded outcome stands and is not "
	                        "counted as unchanged");
	cJSON *un = cJSON_AddObjectToObject(g, "not_replayed");
	cJSON_AddNumberToObject(un, "runs", (double)(w.n_unreplayed + w.n_unreadable));
	cJSON_AddItemToObject(un, "by_policy", w.not_replayed);
	cJSON_AddNumberToObject(w.unreadable, "runs", (double)w.n_unreadable);
	cJSON_AddItemToObject(un, "unreadable", w.unreadable);
	cJSON *inputs;
	cJSON_AddItemToObject(g, "health_values_differ", health_differences(enforcing, o->proposed,
	                                                                    &inputs));
	cJSON_AddItemToObject(g, "inputs_as_read", inputs);
	cJSON_AddStringToObject(g, "why",
	                        "each run with readings is judged again by the check's own rules "
	                        "(ng_health_judge, ng_gpu_check_outcome) under the policy that "
	                        "judged it (current) and the proposed one; inputs_as_read lists "
	                        "values that differ whose effect on what the check read is not "
	                        "judged again");
	cJSON_AddItemToObject(g, "by_mode", w.by_mode);
	cJSON_AddItemToObject(g, "changed", w.changed);
	cJSON *summary = cJSON_GetObjectItem(doc, "summary");
	cJSON *dr = cJSON_AddObjectToObject(summary, "drained");
	cJSON_AddNumberToObject(dr, "current", (double)w.drained_cur);
	cJSON_AddNumberToObject(dr, "proposed", (double)w.drained_prop);
	cJSON_AddNumberToObject(dr, "recorded", (double)w.drained_rec);
	cJSON_AddNumberToObject(dr, "not_rejudged", (double)(w.runs - w.rejudged));
	return 0;
}
