/* Partial regressions attributed from the store's runs and profiles, and
 * baselines drifting under their pinned one (flow/attribution.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/attribution.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/metric.h"
#include "core/strbuf.h"

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- a profile as flat fields ------------------------------------------------------- */

static char *keep(ng_attr_profile *p, char *s)
{
	if (!s)
		return NULL;
	if (p->n_strings == p->cap_strings) {
		size_t c = p->cap_strings ? p->cap_strings * 2 : 64;
		char **a = realloc(p->strings, c * sizeof *a);
		if (!a) {
			free(s);
			return NULL;
		}
		p->strings = a;
		p->cap_strings = c;
	}
	p->strings[p->n_strings++] = s;
	return s;
}

static char *dup_printf(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s", a, b, c);
	return s;
}

/* One scalar as text: strings as they are, numbers as %.17g, booleans. */
static char *scalar_text(const cJSON *v)
{
	char buf[64];
	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	if (cJSON_IsNumber(v))
		snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
	else if (cJSON_IsBool(v))
		snprintf(buf, sizeof buf, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else
		return NULL;
	return strdup(buf);
}

struct leaf {
	char *path, *value;
};

struct leaves {
	struct leaf *l;
	size_t n, cap;
	bool oom;
};

static void add_leaf(struct leaves *ls, char *path, char *value)
{
	if (!path || !value || ls->oom) {
		free(path), free(value);
		ls->oom = ls->oom || !path || !value;
		return;
	}
	if (ls->n == ls->cap) {
		size_t c = ls->cap ? ls->cap * 2 : 64;
		struct leaf *a = realloc(ls->l, c * sizeof *a);
		if (!a) {
			free(path), free(value);
			ls->oom = true;
			return;
		}
		ls->l = a;
		ls->cap = c;
	}
	ls->l[ls->n++] = (struct leaf){path, value};
}

static void walk(struct leaves *ls, const char *path, const cJSON *v)
{
	if (cJSON_IsObject(v)) {
		const cJSON *c;
		cJSON_ArrayForEach(c, v)
		{
			if (!c->string || (!path[0] && strcmp(c->string, "schema") == 0))
				continue;
			char *sub = dup_printf(path, path[0] ? "." : "", c->string);
			if (!sub) {
				ls->oom = true;
				return;
			}
			walk(ls, sub, c);
			free(sub);
		}
	} else if (cJSON_IsArray(v)) {
		char *sub = dup_printf(path, "[]", "");
		if (!sub) {
			ls->oom = true;
			return;
		}
		const cJSON *c;
		cJSON_ArrayForEach(c, v)
			walk(ls, sub, c);
		free(sub);
	} else if (path[0]) {
		char *t = scalar_text(v);
		if (t)
			add_leaf(ls, strdup(path), t);
	}
}

static int by_path_value(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : strcmp(x->value, y->value);
}

static int add_pair(ng_attr_profile *p, const char *field, const char *value, size_t node)
{
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 128;
		ng_attr_pair *a = realloc(p->pairs, c * sizeof *a);
		if (!a)
			return -1;
		p->pairs = a;
		p->cap = c;
	}
	p->pairs[p->n++] = (ng_attr_pair){field, value, node};
	return 0;
}

int ng_attr_profile_add(ng_attr_profile *p, const cJSON *profile, size_t node)
{
	if (!cJSON_IsObject(profile))
		return 0;
	struct leaves ls = {0};
	walk(&ls, "", profile);
	int rc = ls.oom ? -1 : 0;
	qsort(ls.l, ls.n, sizeof *ls.l, by_path_value);
	/* One value per field: an array's distinct values joined in order. */
	for (size_t i = 0; rc == 0 && i < ls.n;) {
		size_t end = i + 1, len = strlen(ls.l[i].value) + 1;
		while (end < ls.n && strcmp(ls.l[end].path, ls.l[i].path) == 0) {
			len += strlen(ls.l[end].value) + 1;
			end++;
		}
		char *joined = malloc(len), *field = keep(p, strdup(ls.l[i].path));
		size_t at = 0;
		for (size_t k = i; joined && k < end; k++) {
			if (k > i && strcmp(ls.l[k].value, ls.l[k - 1].value) == 0)
				continue;
			at += (size_t)snprintf(joined + at, len - at, "%s%s", at ? "," : "", ls.l[k].value);
		}
		const char *value = keep(p, joined);
		if (!field || !value || add_pair(p, field, value, node) < 0)
			rc = -1;
		i = end;
	}
	for (size_t i = 0; i < ls.n; i++)
		free(ls.l[i].path), free(ls.l[i].value);
	free(ls.l);
	return rc;
}

void ng_attr_profile_free(ng_attr_profile *p)
{
	for (size_t i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->pairs);
	memset(p, 0, sizeof *p);
}

/* ---- attribution at the breaker's trip --------------------------------------------- */

static const char *status_name(ng_attr_status s)
{
	switch (s) {
	case NG_ATTR_NAMED: return "named";
	case NG_ATTR_NO_SHARED_FIELD: return "no-shared-field";
	case NG_ATTR_TOO_FEW_SHIFTED: return "too-few-shifted";
	case NG_ATTR_TOO_FEW_OTHERS: return "too-few-others";
	}
	return "unknown";
}

#define FIELDS_MAX 16

static int attribute(ng_store *st, const ng_policy *pol, const char *class_key,
                     const char *software, const char *metric, double baseline_median,
                     int64_t class_nodes, int64_t now, int64_t since_fixed, const char *since_run,
                     const cJSON *mine, cJSON *detail, cJSON *nodes, bool *named,
                     bool *this_matches, ng_err *err)
{
	*named = *this_matches = false;
	if (!(isfinite(baseline_median) && baseline_median > 0))
		return 0;
	int64_t window = (int64_t)pol->breaker_window_hours * 3600;
	int64_t lookback = (int64_t)pol->baseline_window_days * 86400;
	ng_store_node_run *runs = NULL;
	size_t n_runs = 0;
	if (ng_store_node_runs(st, class_key, software, metric, now - lookback, &runs, &n_runs, err) < 0)
		return -1;
	/* The shift began with the earliest shifted run of the window (or, for
	 * an open event, when the event says it did). */
	size_t first = n_runs;
	for (size_t i = 0; i < n_runs; i++) {
		bool s = runs[i].taken_at >= (since_fixed ? since_fixed : now - window) &&
		         ng_attr_shifted(runs[i].median / baseline_median, pol);
		if (s && (first == n_runs || runs[i].taken_at < runs[first].taken_at))
			first = i;
	}
	int64_t since = since_fixed     ? since_fixed
	                : first < n_runs ? runs[first].taken_at
	                                 : now - window;
	const char *run_r = since_run ? since_run : first < n_runs ? runs[first].run_id : "";
	bool *shifted = calloc(n_runs ? n_runs : 1, sizeof *shifted);
	double *ratio = calloc(n_runs ? n_runs : 1, sizeof *ratio);
	size_t *which = calloc(n_runs ? n_runs : 1, sizeof *which);
	ng_attr_profile prof = {0}, own = {0};
	ng_attr_field fields[FIELDS_MAX];
	int rc = shifted && ratio && which ? 0 : ng_fail(err, "out of memory");
	size_t k = 0;
	/* Only nodes measured since the shift began say anything: one not seen
	 * since may hold the value and not have run yet. */
	for (size_t i = 0; rc == 0 && i < n_runs; i++) {
		if (runs[i].taken_at < since)
			continue;
		cJSON *p = runs[i].profile ? cJSON_Parse(runs[i].profile) : NULL;
		ratio[k] = runs[i].median / baseline_median;
		shifted[k] = ng_attr_shifted(ratio[k], pol);
		which[k] = i;
		if (ng_attr_profile_add(&prof, p, k) < 0)
			rc = ng_fail(err, "out of memory");
		cJSON_Delete(p);
		k++;
	}
	ng_attribution a = {0};
	if (rc == 0) {
		a = ng_attribute(shifted, ratio, k, prof.pairs, prof.n, fields, FIELDS_MAX);
		*named = a.status == NG_ATTR_NAMED && a.n_fields > 0;
		if (ng_attr_profile_add(&own, mine, 0) < 0)
			rc = ng_fail(err, "out of memory");
		*this_matches = *named && ng_attr_matches(fields, a.n_fields, own.pairs, own.n);
	}
	if (rc == 0) {
		cJSON *at = cJSON_AddObjectToObject(detail, "attribution");
		cJSON_AddStringToObject(at, "status", status_name(a.status));
		cJSON_AddStringToObject(at, "rule", "a field value held by at least 90% of the shifted "
		                                    "nodes and at most 10% of the others measured since");
		cJSON_AddNumberToObject(at, "shifted", (double)a.n_shifted);
		cJSON_AddNumberToObject(at, "others", (double)a.n_others);
		ng_json_add_number(at, "shift_percent", isfinite(a.shift) ? a.shift * 100 : NAN);
		cJSON_AddStringToObject(at, "since_run", run_r);
		cJSON_AddNumberToObject(at, "since", (double)since);
		cJSON *fa = cJSON_AddArrayToObject(at, "fields");
		char shared[512] = "";
		size_t used = 0;
		for (size_t i = 0; i < a.n_fields; i++) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "field", fields[i].field);
			cJSON_AddStringToObject(f, "value", fields[i].value);
			cJSON_AddNumberToObject(f, "shifted_with", (double)fields[i].shifted_with);
			cJSON_AddNumberToObject(f, "others_with", (double)fields[i].others_with);
			if (fields[i].others_value)
				cJSON_AddStringToObject(f, "others_value", fields[i].others_value);
			else
				cJSON_AddNullToObject(f, "others_value");
			cJSON_AddItemToArray(fa, f);
			if (used < sizeof shared)
				used += (size_t)snprintf(shared + used, sizeof shared - used, "%s%s=%s",
				                         i ? ", " : "", fields[i].field, fields[i].value);
		}
		if (a.more_fields)
			cJSON_AddNumberToObject(at, "more_fields", (double)a.more_fields);
		/* The shifted nodes that hold the fields are the event's. */
		for (size_t i = 0; *named && i < k; i++) {
			if (!shifted[i])
				continue;
			bool holds = true;
			for (size_t f = 0; f < a.n_fields && holds; f++) {
				bool h = false;
				for (size_t q = 0; q < prof.n && !h; q++)
					h = prof.pairs[q].node == i && strcmp(prof.pairs[q].field, fields[f].field) == 0 &&
					    strcmp(prof.pairs[q].value, fields[f].value) == 0;
				holds = h;
			}
			if (holds)
				cJSON_AddItemToArray(nodes, cJSON_CreateString(runs[which[i]].node));
		}
		char sentence[1024];
		int len = snprintf(sentence, sizeof sentence,
		                   "%zu of %lld nodes of class %s down %.0f%% on %s since run %s", a.n_shifted,
		                   (long long)(class_nodes > (int64_t)k ? class_nodes : (int64_t)k),
		                   class_key, isfinite(a.shift) ? -a.shift * 100 : 0.0, metric,
		                   run_r[0] ? run_r : "?");
		size_t l = len > 0 ? (size_t)len : 0;
		if (l < sizeof sentence) {
			if (*named)
				snprintf(sentence + l, sizeof sentence - l, "; they share %s, the others do not",
				         shared);
			else if (a.status == NG_ATTR_NO_SHARED_FIELD)
				snprintf(sentence + l, sizeof sentence - l,
				         "; no shared field found: nothing in their profiles sets them apart from "
				         "the %zu others measured since",
				         a.n_others);
			else if (a.status == NG_ATTR_TOO_FEW_OTHERS)
				snprintf(sentence + l, sizeof sentence - l,
				         "; no shared field found: only %zu others were measured since, too few to "
				         "tell a part of the class from the whole",
				         a.n_others);
			else
				snprintf(sentence + l, sizeof sentence - l,
				         "; no shared field found: too few shifted nodes");
		}
		cJSON_AddStringToObject(at, "summary", sentence);
	}
	ng_attr_profile_free(&prof);
	ng_attr_profile_free(&own);
	free(shifted), free(ratio), free(which);
	ng_store_node_runs_free(runs, n_runs);
	return rc;
}

int ng_attribute_partial(ng_store *st, const ng_policy *pol, const char *class_key,
                         const char *software, const char *metric, double baseline_median,
                         int64_t class_nodes, int64_t now, const cJSON *mine, cJSON *detail,
                         cJSON *nodes, bool *named, bool *this_matches, ng_err *err)
{
	return attribute(st, pol, class_key, software, metric, baseline_median, class_nodes, now, 0,
	                 NULL, mine, detail, nodes, named, this_matches, err);
}

int ng_attribution_refresh(ng_store *st, const ng_policy *pol, const ng_store_fleet_event *ev,
                           double baseline_median, int64_t class_nodes, int64_t now, ng_err *err)
{
	cJSON *d = ev->detail ? cJSON_Parse(ev->detail) : NULL;
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(d, "attribution");
	const cJSON *since = cJSON_GetObjectItemCaseSensitive(old, "since");
	const char *run = str_of(old, "since_run");
	if (!cJSON_IsObject(d) || !cJSON_IsNumber(since) || since->valuedouble <= 0) {
		cJSON_Delete(d);
		return 0;
	}
	cJSON *fresh = cJSON_CreateObject(), *nodes = cJSON_CreateArray();
	bool named = false, matches = false;
	int rc = fresh && nodes ? attribute(st, pol, ev->class_key, ev->software, ev->metric,
	                                    baseline_median, class_nodes, now,
	                                    (int64_t)since->valuedouble, run ? run : "", NULL, fresh,
	                                    nodes, &named, &matches, err)
	                        : ng_fail(err, "out of memory");
	if (rc == 0 && named) {
		cJSON_ReplaceItemInObjectCaseSensitive(
			d, "attribution", cJSON_DetachItemFromObjectCaseSensitive(fresh, "attribution"));
		char *text = cJSON_PrintUnformatted(d);
		rc = text ? ng_store_fleet_event_set_detail(st, ev->id, text, err)
		          : ng_fail(err, "out of memory");
		cJSON_free(text);
	}
	cJSON_Delete(fresh);
	cJSON_Delete(nodes);
	cJSON_Delete(d);
	return rc;
}

bool ng_attribution_covers(const char *detail, const cJSON *mine, char *fields_text, size_t cap)
{
	if (fields_text && cap)
		fields_text[0] = '\0';
	cJSON *d = detail ? cJSON_Parse(detail) : NULL;
	const cJSON *fa = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(d, "attribution"), "fields");
	int n = cJSON_IsArray(fa) ? cJSON_GetArraySize(fa) : 0;
	if (n == 0) {
		cJSON_Delete(d);
		return true;
	}
	ng_attr_field fields[FIELDS_MAX];
	size_t nf = 0, used = 0;
	const cJSON *f;
	cJSON_ArrayForEach(f, fa)
	{
		const char *name = str_of(f, "field"), *value = str_of(f, "value");
		if (!name || !value || nf == FIELDS_MAX)
			continue;
		fields[nf++] = (ng_attr_field){.field = name, .value = value};
		if (fields_text && used < cap)
			used += (size_t)snprintf(fields_text + used, cap - used, "%s%s=%s", nf > 1 ? ", " : "",
			                         name, value);
	}
	ng_attr_profile own = {0};
	bool covers = ng_attr_profile_add(&own, mine, 0) == 0 &&
	              ng_attr_matches(fields, nf, own.pairs, own.n);
	ng_attr_profile_free(&own);
	cJSON_Delete(d);
	return covers;
}

/* ---- drift under the pinned baseline ----------------------------------------------- */

int ng_baseline_drift_check(ng_store *st, const ng_policy *pol, const ng_store_baseline *built,
                            int64_t now, const char *actor, int64_t *event, ng_err *err)
{
	*event = 0;
	ng_store_baseline pinned;
	int has = ng_store_pinned_baseline(st, built->class_key, built->software, built->metric,
	                                   built->unit, &pinned, err);
	if (has < 0)
		return -1;
	/* The build itself, pinned already, is no drift from itself. */
	const ng_store_baseline *pin = has == 1 && pinned.id != built->id ? &pinned : NULL;
	if (!pin)
		return 0;
	int rc = 0;
	ng_store_fleet_event *ev = NULL;
	size_t n_ev = 0;
	const ng_store_fleet_event *open = NULL;
	if (pin && ng_store_fleet_events_of_class(st, built->class_key, &ev, &n_ev, err) < 0)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < n_ev && !open; i++)
		if (strcmp(ev[i].kind, "drift") == 0 && strcmp(ev[i].software, built->software) == 0 &&
		    strcmp(ev[i].metric, built->metric) == 0)
			open = &ev[i];
	const struct ng_metric *m = ng_metric_lookup(built->metric);
	double drop = NAN;
	bool drifted = pin && ng_baseline_drifted(pin->median, built->median,
	                                          m ? m->higher_is_better : true, pol, &drop);
	if (rc == 0 && drifted) {
		ng_store_fleet_event e = {.opened_at = now};
		ng_copy(e.class_key, sizeof e.class_key, built->class_key);
		ng_copy(e.software, sizeof e.software, built->software);
		ng_copy(e.metric, sizeof e.metric, built->metric);
		ng_copy(e.kind, sizeof e.kind, "drift");
		cJSON *d = cJSON_CreateObject();
		cJSON *p = cJSON_AddObjectToObject(d, "pinned");
		cJSON_AddNumberToObject(p, "baseline", (double)pin->id);
		cJSON_AddStringToObject(p, "name", pin->pinned_name);
		ng_json_add_number(p, "median", pin->median);
		cJSON_AddNumberToObject(p, "pinned_at", (double)pin->pinned_at);
		cJSON *b = cJSON_AddObjectToObject(d, "rebuilt");
		cJSON_AddNumberToObject(b, "baseline", (double)built->id);
		ng_json_add_number(b, "median", built->median);
		cJSON_AddNumberToObject(b, "nodes", (double)built->n_nodes);
		cJSON_AddStringToObject(d, "unit", built->unit);
		ng_json_add_number(d, "drop_percent", drop * 100);
		ng_json_add_number(d, "drift_fraction", pol->drift_fraction);
		ng_strbuf sentence = {0};
		ng_strbuf_printf(&sentence,
		         "the baseline of %s in class %s rebuilt at %.4g %s, %.1f%% under its pinned "
		         "baseline %lld (\"%s\", %.4g %s) with the same software %s: the class drifted down "
		         "together, which peers alone accept",
		         built->metric, built->class_key, built->median, built->unit, drop * 100,
		         (long long)pin->id, pin->pinned_name, pin->median, pin->unit, built->software);
		cJSON_AddStringToObject(d, "summary", sentence.s ? sentence.s : "");
		ng_strbuf_free(&sentence);
		e.detail = cJSON_PrintUnformatted(d);
		e.nodes = strdup("[]");
		cJSON_Delete(d);
		rc = e.detail && e.nodes ? ng_store_open_fleet_event(st, &e, actor, err)
		                         : ng_fail(err, "out of memory");
		*event = e.id;
		ng_store_fleet_event_free(&e);
	} else if (rc == 0 && open && pin && isfinite(drop)) {
		char why[256];
		snprintf(why, sizeof why,
		         "the rebuilt baseline of %s (%.4g) is back within %.0f%% of pinned baseline %lld",
		         built->metric, built->median, pol->drift_fraction * 100, (long long)pin->id);
		rc = ng_store_clear_fleet_event(st, open->id, now, "nodegate", why, err);
	}
	for (size_t i = 0; i < n_ev; i++)
		ng_store_fleet_event_free(&ev[i]);
	free(ev);
	return rc;
}
