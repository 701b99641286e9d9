/* The shadow policy in metrics (docs/metrics.md, docs/policy-changes.md):
 * which policy runs in shadow, how many runs it judged, and what it would
 * have quarantined or drained, per rule and class, since it was set.
 * Nothing of it is landed: these are the figures to promote it on. */
#include <stdlib.h>
#include <string.h>

#include "land/metrics.h"
#include "store/policies.h"

struct count {
	char kind[16], cls[256], rule[128], outcome[16];
	int64_t n;
};

struct tally {
	const char *policy;
	struct count *c;
	size_t n, cap;
	bool oom;
};

static void bump(struct tally *t, const char *kind, const char *cls, const char *rule,
                 const char *outcome)
{
	for (size_t i = 0; i < t->n; i++) {
		struct count *c = &t->c[i];
		if (!strcmp(c->kind, kind) && !strcmp(c->cls, cls) && !strcmp(c->rule, rule) &&
		    !strcmp(c->outcome, outcome)) {
			c->n++;
			return;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct count *c = realloc(t->c, cap * sizeof *c);
		if (!c) {
			t->oom = true;
			return;
		}
		t->c = c;
		t->cap = cap;
	}
	struct count *c = &t->c[t->n++];
	ng_copy(c->kind, sizeof c->kind, kind);
	ng_copy(c->cls, sizeof c->cls, cls);
	ng_copy(c->rule, sizeof c->rule, rule);
	ng_copy(c->outcome, sizeof c->outcome, outcome);
	c->n = 1;
}

static int row(const ng_store_shadow_outcome *o, void *arg)
{
	struct tally *t = arg;
	if (strcmp(o->policy, t->policy) != 0)
		return 0;
	bump(t, o->kind, "", "", "evaluated");
	if (strcmp(o->shadow, "quarantined") != 0 && strcmp(o->shadow, "drain") != 0)
		return 0;
	char rules[512];
	ng_copy(rules, sizeof rules, *o->rule ? o->rule : "(none)");
	char *save = NULL;
	for (char *r = strtok_r(rules, " ", &save); r; r = strtok_r(NULL, " ", &save))
		bump(t, o->kind, o->class_key, r, o->shadow);
	return 0;
}

int ng_metrics_render_shadow(ng_store *st, ng_strbuf *out, ng_err *err)
{
	ng_store_shadow s;
	int r = ng_store_get_shadow(st, &s, err);
	if (r <= 0)
		return r;
	ng_strbuf_free(&s.body);
	struct tally t = {.policy = s.digest};
	if (ng_store_shadow_outcomes(st, s.set_at, row, &t, err) < 0) {
		free(t.c);
		return -1;
	}
	ng_metrics_family(out, "nodegate_shadow_policy_info",
	                  "The policy running in shadow beside the enforcing one (landed never).");
	ng_metrics_sample(out, "nodegate_shadow_policy_info", 1, "version", s.digest, NULL);
	ng_metrics_family(out, "nodegate_shadow_evaluations",
	                  "Admissions and GPU checks the shadow policy judged since it was set.");
	for (size_t i = 0; i < t.n; i++)
		if (!strcmp(t.c[i].outcome, "evaluated"))
			ng_metrics_sample(out, "nodegate_shadow_evaluations", (double)t.c[i].n, "kind",
			                  t.c[i].kind, NULL);
	ng_metrics_family(out, "nodegate_shadow_would_drain",
	                  "GPU checks the shadow policy would have drained, per rule and class.");
	for (size_t i = 0; i < t.n; i++)
		if (!strcmp(t.c[i].outcome, "drain"))
			ng_metrics_sample(out, "nodegate_shadow_would_drain", (double)t.c[i].n, "rule",
			                  t.c[i].rule, "class", t.c[i].cls, "kind", t.c[i].kind, NULL);
	ng_metrics_family(out, "nodegate_shadow_would_quarantine",
	                  "Admissions the shadow policy would have quarantined, per metric and class.");
	for (size_t i = 0; i < t.n; i++)
		if (!strcmp(t.c[i].outcome, "quarantined"))
			ng_metrics_sample(out, "nodegate_shadow_would_quarantine", (double)t.c[i].n, "rule",
			                  t.c[i].rule, "class", t.c[i].cls, NULL);
	free(t.c);
	return t.oom || out->oom ? ng_fail(err, "out of memory") : 0;
}
