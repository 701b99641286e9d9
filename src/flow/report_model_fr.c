/* False rejects and later stragglers, per class and policy version
 * (docs/report.md, "False rejects"): the store's side (which profile a node
 * had before and after a quarantine, which policy made each decision); the
 * rules are judge/false_reject.h. */
#include <stdlib.h>
#include <string.h>

#include "flow/report_model.h"
#include "core/json.h"
#include "store/report_queries.h"

/* The hardware digest of a stored profile, "" when it has none. */
static int hw_of(ng_store *st, const char *digest, char out[65], ng_err *err)
{
	out[0] = '\0';
	ng_strbuf body = {0};
	int r = ng_store_report_profile_body(st, digest, &body, err);
	if (r == 1) {
		cJSON *p = cJSON_Parse(body.s);
		ng_profile_hw_digest(p, out);
		cJSON_Delete(p);
	}
	ng_strbuf_free(&body);
	return r < 0 ? -1 : 0;
}

/* Before: the node's newest profile at or before the quarantine opened.
 * After: its newest at or before the release, when taken after the
 * quarantine opened (the passing runs that released it), else its oldest
 * after the release. */
static int hardware_around(ng_store *st, struct ng_rcase *c, ng_err *err)
{
	char d[65];
	int64_t at;
	int r = ng_store_report_profile_at(st, c->c.node, c->c.opened_at, false, d, &at, err);
	if (r < 0 || (r == 1 && hw_of(st, d, c->hw_before, err) < 0))
		return -1;
	r = ng_store_report_profile_at(st, c->c.node, c->c.closed_at, false, d, &at, err);
	if (r < 0)
		return -1;
	if (r == 0 || at <= c->c.opened_at) {
		r = ng_store_report_profile_at(st, c->c.node, c->c.closed_at, true, d, &at, err);
		if (r < 0)
			return -1;
	}
	if (r == 1 && hw_of(st, d, c->hw_after, err) < 0)
		return -1;
	return 0;
}

static int case_policy(int64_t id, const char *policy, void *arg)
{
	struct ng_report *r = arg;
	for (size_t i = 0; i < r->n_cases; i++)
		if (r->cases[i].c.id == id)
			ng_copy(r->cases[i].policy, sizeof r->cases[i].policy, policy);
	return 0;
}

long ng_report_fr_row(struct ng_report *r, size_t cls, const char *policy)
{
	for (size_t i = 0; i < r->n_fr; i++)
		if (r->fr[i].cls == cls && strcmp(r->fr[i].policy, policy) == 0)
			return (long)i;
	if (r->n_fr == r->fr_cap) {
		size_t cap = r->fr_cap ? r->fr_cap * 2 : 16;
		struct ng_rfr *p = realloc(r->fr, cap * sizeof *p);
		if (!p)
			return -1;
		r->fr = p;
		r->fr_cap = cap;
	}
	struct ng_rfr *f = &r->fr[r->n_fr];
	memset(f, 0, sizeof *f);
	f->cls = cls;
	ng_copy(f->policy, sizeof f->policy, policy);
	return (long)r->n_fr++;
}

static int by_node_time(const void *a, const void *b)
{
	const struct ng_rdecision *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

int ng_report_false_rejects(ng_store *st, struct ng_report *r, ng_err *err)
{
	if (ng_store_report_case_policies(st, case_policy, r, err) < 0)
		return -1;
	for (size_t i = 0; i < r->n_cases; i++) {
		struct ng_rcase *c = &r->cases[i];
		if (c->c.closed_at && hardware_around(st, c, err) < 0)
			return -1;
		c->klass = ng_case_classify(c->c.closed_at != 0, c->hw_before, c->hw_after);
		if (c->c.opened_at < r->since)
			continue;
		long cls = ng_rmap_find(&r->class_map, c->c.class_key);
		long f = cls < 0 ? -1 : ng_report_fr_row(r, (size_t)cls, c->policy[0] ? c->policy : "unrecorded");
		if (f < 0)
			return ng_fail(err, "out of memory");
		struct ng_rfr *row = &r->fr[f];
		row->quarantines++;
		switch (c->klass) {
		case NG_CASE_OPEN: row->still_open++; break;
		case NG_CASE_RELEASED_SAME_HW: row->released_same++; break;
		case NG_CASE_RELEASED_HW_CHANGED: row->released_changed++; break;
		case NG_CASE_RELEASED_UNKNOWN: row->released_unknown++; break;
		}
	}

	/* Later stragglers: each admitting decision against what was found on
	 * its node afterwards (accusing decisions, quarantines, GPU faults). */
	if (r->n_dec > 1)
		qsort(r->dec, r->n_dec, sizeof *r->dec, by_node_time);
	size_t nf = r->n_find + r->n_cases;
	for (size_t i = 0; i < r->n_dec; i++)
		nf += r->dec[i].accuses;
	ng_fr_decision *d = calloc(r->n_dec ? r->n_dec : 1, sizeof *d);
	ng_fr_finding *f = calloc(nf ? nf : 1, sizeof *f);
	bool *straggled = calloc(r->n_dec ? r->n_dec : 1, sizeof *straggled);
	if (!d || !f || !straggled) {
		free(d), free(f), free(straggled);
		return ng_fail(err, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < r->n_dec; i++) {
		d[i] = (ng_fr_decision){r->dec[i].node, r->dec[i].at, r->dec[i].admits};
		if (r->dec[i].accuses)
			f[k++] = (ng_fr_finding){r->dec[i].node, r->dec[i].at};
	}
	for (size_t i = 0; i < r->n_find; i++)
		f[k++] = (ng_fr_finding){r->find[i].node, r->find[i].at};
	for (size_t i = 0; i < r->n_cases; i++)
		f[k++] = (ng_fr_finding){r->cases[i].node, r->cases[i].c.opened_at};
	ng_fr_sort_findings(f, k);
	r->straggled = ng_fr_stragglers(d, r->n_dec, f, k, r->o.straggle_days * 86400, straggled);
	for (size_t i = 0; i < r->n_dec; i++) {
		if (!r->dec[i].admits)
			continue;
		r->admissions++;
		r->fr[r->dec[i].fr].admissions++;
		r->fr[r->dec[i].fr].straggled += straggled[i];
	}
	free(d), free(f), free(straggled);
	return 0;
}
