/* A replay's counts and its JSON document (flow/replay_model.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/strbuf.h"
#include "core/verdict.h"
#include "flow/replay_gate.h"
#include "flow/replay_model.h"

#define DAY 86400

struct cls {
	char key[256];
	int64_t cur[NG_ADMIT_COUNT], prop[NG_ADMIT_COUNT], rec[NG_ADMIT_COUNT];
	int64_t decisions, unreplayed, changed, added, removed;
};

/* A node of a class on a day, by a hash of its id: distinct nodes are
 * counted by sorting these. */
struct mark {
	size_t cls;
	int64_t day;
	uint64_t node;
};

struct marks {
	struct mark *v;
	size_t n, cap;
};

struct unreplayed {
	char policy[32], why[320], first_run[80];
	int64_t runs;
};

struct ng_replay_model {
	const ng_replay_opts *o;
	const ng_policy *enforcing;
	char digest[32];
	int64_t since, until;
	struct cls *cls;
	size_t n_cls;
	int64_t cur[NG_ADMIT_COUNT], prop[NG_ADMIT_COUNT], rec[NG_ADMIT_COUNT];
	int64_t decisions, replayed, unchanged, unconfirmed;
	struct unreplayed *un;
	size_t n_un;
	int64_t n_unreplayed;
	bool differs[NG_P_COUNT], floors_differ;
	/* the own policies already compared with the proposed one */
	const ng_policy *compared[16];
	size_t n_compared;
	struct marks members, quarantined;
	cJSON *changed;
	cJSON *doc;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static bool add_mark(struct marks *m, size_t cls, int64_t day, const char *node)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct mark *v = realloc(m->v, cap * sizeof *v);
		if (!v)
			return false;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = (struct mark){cls, day, hash(node)};
	return true;
}

static int by_mark(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

ng_replay_model *ng_replay_model_new(const ng_replay_opts *o, const char *proposed_digest,
                                     int64_t since, int64_t until, const ng_policy *enforcing)
{
	ng_replay_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->o = o;
	m->enforcing = enforcing;
	ng_copy(m->digest, sizeof m->digest, proposed_digest);
	m->since = since;
	m->until = until;
	m->changed = cJSON_CreateArray();
	if (!m->changed) {
		free(m);
		return NULL;
	}
	return m;
}

void ng_replay_model_free(ng_replay_model *m)
{
	if (!m)
		return;
	cJSON_Delete(m->changed);
	cJSON_Delete(m->doc);
	free(m->cls);
	free(m->un);
	free(m->members.v);
	free(m->quarantined.v);
	free(m);
}

static struct cls *class_of(ng_replay_model *m, const char *key, size_t *idx)
{
	for (size_t i = m->n_cls; i-- > 0;)
		if (strcmp(m->cls[i].key, key) == 0) {
			*idx = i;
			return &m->cls[i];
		}
	struct cls *c = realloc(m->cls, (m->n_cls + 1) * sizeof *c);
	if (!c)
		return NULL;
	m->cls = c;
	c = &m->cls[m->n_cls];
	memset(c, 0, sizeof *c);
	ng_copy(c->key, sizeof c->key, key);
	*idx = m->n_cls++;
	return c;
}

int ng_replay_model_unreplayed(ng_replay_model *m, const ng_store_replay_decision *d,
                               const char *why)
{
	size_t ci;
	struct cls *c = class_of(m, d->class_key, &ci);
	if (!c || !add_mark(&m->members, ci, 0, d->node))
		return -1;
	c->decisions++;
	c->unreplayed++;
	m->decisions++;
	m->n_unreplayed++;
	for (size_t i = 0; i < m->n_un; i++)
		if (strcmp(m->un[i].policy, d->policy) == 0) {
			m->un[i].runs++;
			return 0;
		}
	struct unreplayed *u = realloc(m->un, (m->n_un + 1) * sizeof *u);
	if (!u)
		return -1;
	m->un = u;
	u = &m->un[m->n_un++];
	ng_copy(u->policy, sizeof u->policy, d->policy);
	ng_copy(u->why, sizeof u->why, why);
	ng_copy(u->first_run, sizeof u->first_run, d->run_id);
	u->runs = 1;
	return 0;
}

/* The values that differ between the two policies that a replay does not
 * judge again (flow/redecide.h): the flag fraction and the floors it does. */
static void note_differences(ng_replay_model *m, const ng_policy *a, const ng_policy *b)
{
	/* Once per policy that decided: a month holds a few, and 290,000 runs. */
	for (size_t i = 0; i < m->n_compared; i++)
		if (m->compared[i] == a)
			return;
	if (m->n_compared < sizeof m->compared / sizeof m->compared[0])
		m->compared[m->n_compared++] = a;
	ng_strbuf x = {0}, y = {0};
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		/* health.*: the GPU checks' own account (flow/replay_gpu.h); what
		 * the gate reads, the gate's (flow/replay_gate.h) */
		if (m->differs[i] || i == NG_P_FLAG_FRACTION || ng_replay_gate_reads(i) ||
		    strncmp(ng_policy_param_name(i), "health.", 7) == 0)
			continue;
		ng_strbuf_reset(&x);
		ng_strbuf_reset(&y);
		ng_policy_param_value(a, i, &x);
		ng_policy_param_value(b, i, &y);
		m->differs[i] = strcmp(x.s ? x.s : "", y.s ? y.s : "") != 0;
	}
	ng_strbuf_free(&x);
	ng_strbuf_free(&y);
}

static void add_number(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* The result whose judgement moved: the first whose status differs, else
 * the one that named the proposed (or current) outcome. */
static size_t decisive(const ng_replay_decided *dd)
{
	for (size_t i = 0; i < dd->n_results; i++)
		if (dd->cur_line[i].status != dd->prop_line[i].status)
			return i;
	const char *metric = dd->prop->metric ? dd->prop->metric : dd->cur->metric;
	for (size_t i = 0; metric && i < dd->n_results; i++)
		if (strcmp(dd->results[i].metric, metric) == 0)
			return i;
	return dd->n_results ? 0 : SIZE_MAX;
}

static cJSON *changed_entry(const ng_replay_decided *dd)
{
	const ng_store_replay_decision *d = dd->d;
	cJSON *e = cJSON_CreateObject();
	if (!e)
		return NULL;
	cJSON_AddStringToObject(e, "node", d->node);
	cJSON_AddStringToObject(e, "node_name", d->node_name);
	cJSON_AddStringToObject(e, "class", d->class_key);
	cJSON_AddStringToObject(e, "run_id", d->run_id);
	cJSON_AddNumberToObject(e, "at", (double)d->at);
	cJSON_AddStringToObject(e, "policy", d->policy);
	cJSON_AddStringToObject(e, "recorded", d->outcome);
	cJSON_AddStringToObject(e, "current", ng_admit_outcome_name(dd->cur->outcome));
	cJSON_AddStringToObject(e, "proposed", ng_admit_outcome_name(dd->prop->outcome));
	if (dd->prop->unconfirmed || dd->cur->unconfirmed)
		cJSON_AddStringToObject(e, "note", "flagged in a domain the run never confirmed: a "
		                                   "confirmation would have been run");
	size_t k = decisive(dd);
	if (k == SIZE_MAX)
		return e;
	const ng_admit_result *r = &dd->results[k];
	cJSON *x = cJSON_AddObjectToObject(e, "decisive");
	cJSON_AddStringToObject(x, "stage", k < dd->n_first ? "first" : "confirm");
	cJSON_AddStringToObject(x, "domain", r->domain ? r->domain : "");
	cJSON_AddStringToObject(x, "metric", r->metric);
	add_number(x, "value", r->value);
	add_number(x, "baseline_median", r->baseline_median);
	add_number(x, "bar_current", dd->cur_line[k].flag.bar);
	add_number(x, "bar_proposed", dd->prop_line[k].flag.bar);
	add_number(x, "floor_current", ng_policy_floor(dd->own, r->metric));
	add_number(x, "floor_proposed", ng_policy_floor(dd->proposed, r->metric));
	cJSON_AddStringToObject(x, "gate", ng_verdict_name(r->gate));
	cJSON_AddStringToObject(x, "gate_proposed", ng_verdict_name(dd->results_proposed[k].gate));
	cJSON_AddStringToObject(x, "status_current", ng_admit_metric_status_name(dd->cur_line[k].status));
	cJSON_AddStringToObject(x, "status_proposed",
	                        ng_admit_metric_status_name(dd->prop_line[k].status));
	return e;
}

int ng_replay_model_add(ng_replay_model *m, const ng_replay_decided *dd)
{
	const ng_store_replay_decision *d = dd->d;
	size_t ci;
	struct cls *c = class_of(m, d->class_key, &ci);
	if (!c || !add_mark(&m->members, ci, 0, d->node))
		return -1;
	ng_admit_outcome oc = dd->cur->outcome, op = dd->prop->outcome;
	m->decisions++;
	m->replayed++;
	c->decisions++;
	m->cur[oc]++, m->prop[op]++;
	c->cur[oc]++, c->prop[op]++;
	/* What was landed (after overrides, the breaker and open cases), beside
	 * what the rule says again: the difference is the landing's. */
	for (int k = 0; k < NG_ADMIT_COUNT; k++)
		if (strcmp(d->outcome, ng_admit_outcome_name((ng_admit_outcome)k)) == 0)
			m->rec[k]++, c->rec[k]++;
	m->unconfirmed += dd->prop->unconfirmed && !dd->cur->unconfirmed;
	note_differences(m, dd->own, dd->proposed);
	if (!m->floors_differ) {
		for (size_t i = 0; i < dd->n_results && !m->floors_differ; i++) {
			double a = ng_policy_floor(dd->own, dd->results[i].metric),
			       b = ng_policy_floor(dd->proposed, dd->results[i].metric);
			m->floors_differ = !(a == b || (isnan(a) && isnan(b)));
		}
	}
	/* The guard's count: nodes this change takes out that the policy in
	 * force did not (what both would quarantine is no news of the change). */
	if (op == NG_ADMIT_QUARANTINED && oc != NG_ADMIT_QUARANTINED &&
	    !add_mark(&m->quarantined, ci, d->at / DAY, d->node))
		return -1;
	if (oc == op) {
		m->unchanged++;
		return 0;
	}
	c->changed++;
	c->added += op == NG_ADMIT_QUARANTINED;
	c->removed += oc == NG_ADMIT_QUARANTINED;
	cJSON *e = changed_entry(dd);
	if (!e)
		return -1;
	cJSON_AddItemToArray(m->changed, e);
	return 0;
}

/* ---- after the walk ------------------------------------------------------------------ */

struct later_counts {
	int64_t added, added_passed, added_failed, removed, removed_passed, removed_failed;
};

static int later_of(ng_store *st, cJSON *e, struct later_counts *lc, ng_err *err)
{
	const char *cur = cJSON_GetStringValue(cJSON_GetObjectItem(e, "current")),
	           *prop = cJSON_GetStringValue(cJSON_GetObjectItem(e, "proposed"));
	bool added = strcmp(prop, "quarantined") == 0, removed = strcmp(cur, "quarantined") == 0;
	if (!added && !removed)
		return 0;
	const char *node = cJSON_GetStringValue(cJSON_GetObjectItem(e, "node"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "node_name"));
	char known[128] = "";
	if ((!name || !*name) && ng_store_node_name_of(st, node, known, sizeof known, err) < 0)
		return -1;
	ng_store_after a;
	int64_t at = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "at"));
	if (ng_store_node_after(st, node, name && *name ? name : known, at, &a, err) < 0)
		return -1;
	cJSON *l = cJSON_AddObjectToObject(e, "later");
	cJSON_AddStringToObject(l, "next_decision", a.next_outcome);
	bool failed = a.fault_at > 0 || a.quarantined_at > 0;
	bool passed = !failed && strcmp(a.next_outcome, "admitted") == 0;
	if (a.fault_at)
		cJSON_AddNumberToObject(l, "gpu_fault_at", (double)a.fault_at);
	if (a.quarantined_at)
		cJSON_AddNumberToObject(l, "quarantined_at", (double)a.quarantined_at);
	const char *says = added ? (failed ? "straggler kept out" : passed ? "possible false reject" : "")
	                         : (failed ? "straggler let in" : passed ? "released rightly" : "");
	if (*says)
		cJSON_AddStringToObject(l, "reading", says);
	if (added) {
		lc->added++;
		lc->added_passed += passed;
		lc->added_failed += failed;
	} else {
		lc->removed++;
		lc->removed_passed += passed;
		lc->removed_failed += failed;
	}
	return 0;
}

static void day_text(int64_t day, char out[16])
{
	time_t t = (time_t)(day * DAY);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 16, "%Y-%m-%d", &tm);
}

/* Per class: distinct nodes seen, and the day the change took most of them
 * out (quarantined under the proposed policy, not under the current). */
static void peak_days(ng_replay_model *m, cJSON *peak)
{
	if (m->members.n)
		qsort(m->members.v, m->members.n, sizeof *m->members.v, by_mark);
	if (m->quarantined.n)
		qsort(m->quarantined.v, m->quarantined.n, sizeof *m->quarantined.v, by_mark);
	int64_t *nodes = calloc(m->n_cls ? m->n_cls : 1, sizeof *nodes);
	if (!nodes)
		return;
	for (size_t i = 0; i < m->members.n; i++)
		if (i == 0 || by_mark(&m->members.v[i - 1], &m->members.v[i]) != 0)
			nodes[m->members.v[i].cls]++;
	for (size_t ci = 0; ci < m->n_cls; ci++) {
		int64_t best = 0, best_day = 0, run = 0;
		for (size_t i = 0; i < m->quarantined.n; i++) {
			const struct mark *q = &m->quarantined.v[i];
			if (q->cls != ci)
				continue;
			bool new_day = i == 0 || q->cls != m->quarantined.v[i - 1].cls ||
			               q->day != m->quarantined.v[i - 1].day;
			if (new_day)
				run = 0;
			if (new_day || q->node != m->quarantined.v[i - 1].node)
				run++;
			if (run > best) {
				best = run;
				best_day = q->day;
			}
		}
		cJSON *c = cJSON_AddObjectToObject(peak, m->cls[ci].key);
		cJSON_AddNumberToObject(c, "nodes", (double)nodes[ci]);
		cJSON_AddNumberToObject(c, "added", (double)best);
		cJSON_AddNumberToObject(c, "share", nodes[ci] ? (double)best / (double)nodes[ci] : 0);
		char day[16] = "";
		if (best)
			day_text(best_day, day);
		cJSON_AddStringToObject(c, "day", day);
	}
	free(nodes);
}

static cJSON *counts(const int64_t *cur, const int64_t *prop, const int64_t *rec)
{
	cJSON *o = cJSON_CreateObject();
	static const ng_admit_outcome order[] = {NG_ADMIT_QUARANTINED, NG_ADMIT_SUSPECT, NG_ADMIT_HELD,
	                                         NG_ADMIT_WARN, NG_ADMIT_ADMITTED};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		cJSON *e = cJSON_AddObjectToObject(o, ng_admit_outcome_name(order[i]));
		cJSON_AddNumberToObject(e, "current", (double)cur[order[i]]);
		cJSON_AddNumberToObject(e, "proposed", (double)prop[order[i]]);
		cJSON_AddNumberToObject(e, "recorded", (double)rec[order[i]]);
	}
	return o;
}

int ng_replay_model_finish(ng_replay_model *m, ng_store *st, ng_err *err)
{
	cJSON *doc = m->doc = cJSON_CreateObject();
	if (!doc)
		return ng_fail(err, "out of memory");
	cJSON_AddStringToObject(doc, "schema", "nodegate/replay/1");
	cJSON *p = cJSON_AddObjectToObject(doc, "proposed");
	cJSON_AddStringToObject(p, "version", m->digest);
	cJSON_AddStringToObject(p, "source", m->o->source ? m->o->source : "");
	cJSON *w = cJSON_AddObjectToObject(doc, "window");
	cJSON_AddNumberToObject(w, "days", (double)m->o->days);
	cJSON_AddNumberToObject(w, "since", (double)m->since);
	cJSON_AddNumberToObject(w, "until", (double)m->until);
	if (m->o->class_key)
		cJSON_AddStringToObject(doc, "class", m->o->class_key);
	else
		cJSON_AddNullToObject(doc, "class");
	cJSON_AddNumberToObject(doc, "decisions", (double)m->decisions);
	cJSON_AddNumberToObject(doc, "replayed", (double)m->replayed);
	cJSON_AddNumberToObject(doc, "unchanged", (double)m->unchanged);
	cJSON_AddNumberToObject(doc, "changed_count", (double)(m->replayed - m->unchanged));
	cJSON_AddNumberToObject(doc, "newly_unconfirmed", (double)m->unconfirmed);
	cJSON *summary = counts(m->cur, m->prop, m->rec);
	cJSON_AddItemToObject(doc, "summary", summary);

	struct later_counts lc = {0};
	cJSON *e;
	cJSON_ArrayForEach(e, m->changed)
		if (later_of(st, e, &lc, err) < 0)
			return -1;
	cJSON *q = cJSON_AddObjectToObject(doc, "quarantines");
	cJSON_AddNumberToObject(q, "added", (double)lc.added);
	cJSON_AddNumberToObject(q, "added_later_passed", (double)lc.added_passed);
	cJSON_AddNumberToObject(q, "added_later_failed", (double)lc.added_failed);
	cJSON_AddNumberToObject(q, "removed", (double)lc.removed);
	cJSON_AddNumberToObject(q, "removed_later_passed", (double)lc.removed_passed);
	cJSON_AddNumberToObject(q, "removed_later_failed", (double)lc.removed_failed);

	cJSON *classes = cJSON_AddObjectToObject(doc, "classes");
	for (size_t i = 0; i < m->n_cls; i++) {
		const struct cls *c = &m->cls[i];
		cJSON *o = cJSON_AddObjectToObject(classes, c->key);
		cJSON_AddNumberToObject(o, "decisions", (double)c->decisions);
		cJSON_AddNumberToObject(o, "not_replayed", (double)c->unreplayed);
		cJSON_AddNumberToObject(o, "changed", (double)c->changed);
		cJSON_AddNumberToObject(o, "quarantines_added", (double)c->added);
		cJSON_AddNumberToObject(o, "quarantines_removed", (double)c->removed);
		cJSON_AddItemToObject(o, "summary", counts(c->cur, c->prop, c->rec));
	}

	cJSON *un = cJSON_AddObjectToObject(doc, "not_replayed");
	cJSON_AddNumberToObject(un, "runs", (double)m->n_unreplayed);
	cJSON *why = cJSON_AddArrayToObject(un, "by_policy");
	for (size_t i = 0; i < m->n_un; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "policy", m->un[i].policy);
		cJSON_AddNumberToObject(o, "runs", (double)m->un[i].runs);
		cJSON_AddStringToObject(o, "first_run", m->un[i].first_run);
		cJSON_AddStringToObject(o, "why", m->un[i].why);
		cJSON_AddItemToArray(why, o);
	}
	cJSON *nre = cJSON_AddArrayToObject(doc, "not_re_evaluated");
	for (size_t i = 0; i < ng_policy_param_count(); i++)
		if (m->differs[i])
			cJSON_AddItemToArray(nre, cJSON_CreateString(ng_policy_param_name(i)));
	cJSON_AddBoolToObject(doc, "floors_differ", m->floors_differ);
	peak_days(m, cJSON_AddObjectToObject(doc, "peak_day"));
	cJSON_AddItemToObject(doc, "changed", m->changed);
	m->changed = NULL;
	return 0;
}

cJSON *ng_replay_model_take(ng_replay_model *m)
{
	cJSON *d = m->doc;
	m->doc = NULL;
	return d;
}
