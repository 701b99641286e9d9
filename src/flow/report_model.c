/* Reading the store into the report: one read transaction, each table
 * walked once. Nodes are keyed by the store's node id (what admission
 * writes: the profile's node_id) and, through the profiles, by host name
 * (what epilog writes), so both kinds of record land on one node. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/report_model.h"
#include "flow/lemon.h"
#include "core/json.h"
#include "core/policy_digest.h"
#include "core/stats.h"
#include "store/report_queries.h"

#define GROW(arr, n, cap, fail)                                                  \
	do {                                                                         \
		if ((n) == (cap)) {                                                      \
			size_t c_ = (cap) ? (cap) * 2 : 64;                                  \
			void *p_ = realloc((arr), c_ * sizeof *(arr));                       \
			if (!p_)                                                             \
				fail;                                                            \
			(arr) = p_;                                                          \
			(cap) = c_;                                                          \
		}                                                                        \
	} while (0)

void ng_report_note(struct ng_report *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (r->notes)
		cJSON_AddItemToArray(r->notes, cJSON_CreateString(buf));
}

static long add_node_index(struct ng_report *r, const char *name)
{
	GROW(r->nodes, r->n_nodes, r->nodes_cap, return -1);
	struct ng_rnode *n = &r->nodes[r->n_nodes];
	memset(n, 0, sizeof *n);
	n->name = strdup(name);
	n->cls = -1;
	if (!n->name)
		return -1;
	return (long)r->n_nodes++;
}

/* The key's slot in key_node, added when new. */
static long key_slot(struct ng_report *r, const char *key)
{
	size_t before = r->node_map.n;
	long k = ng_rmap_add(&r->node_map, key);
	if (k < 0)
		return -1;
	if (r->node_map.n > before) {
		if ((size_t)k >= r->key_node_cap) {
			size_t cap = r->key_node_cap ? r->key_node_cap * 2 : 256;
			while (cap <= (size_t)k)
				cap *= 2;
			long *p = realloc(r->key_node, cap * sizeof *p);
			if (!p)
				return -1;
			r->key_node = p;
			r->key_node_cap = cap;
		}
		r->key_node[k] = -1;
	}
	return k;
}

long ng_report_node(struct ng_report *r, const char *key)
{
	long k = key_slot(r, key);
	if (k < 0)
		return -1;
	if (r->key_node[k] < 0)
		r->key_node[k] = add_node_index(r, key);
	return r->key_node[k];
}

static long class_of(struct ng_report *r, const char *key)
{
	size_t before = r->class_map.n;
	long c = ng_rmap_add(&r->class_map, key);
	if (c < 0 || r->class_map.n == before)
		return c;
	if ((size_t)c >= r->classes_cap) {
		size_t cap = r->classes_cap ? r->classes_cap * 2 : 16;
		struct ng_rclass *p = realloc(r->classes, cap * sizeof *p);
		if (!p)
			return -1;
		r->classes = p;
		r->classes_cap = cap;
	}
	memset(&r->classes[c], 0, sizeof r->classes[c]);
	r->classes[c].open_event = -1;
	return c;
}

static bool class_wanted(const struct ng_report *r, const char *cls)
{
	return !r->o.class_key || strcmp(r->o.class_key, cls) == 0;
}

/* ---- profiles: node id -> host name ------------------------------------------------- */

static int profile_row(const char *digest, const char *body, void *arg)
{
	(void)digest;
	struct ng_report *r = arg;
	/* A cheap look first: most bodies are read only for these two names. */
	cJSON *p = cJSON_Parse(body);
	const cJSON *id = ng_json_get(p, "node_id"), *host = ng_json_get(p, "hostname");
	int rc = 0;
	if (cJSON_IsString(id) && id->valuestring[0]) {
		long n = ng_report_node(r, id->valuestring);
		if (n >= 0)
			ng_copy(r->nodes[n].id, sizeof r->nodes[n].id, id->valuestring);
		if (n < 0) {
			rc = -1;
		} else if (cJSON_IsString(host) && host->valuestring[0]) {
			if (strcmp(r->nodes[n].name, host->valuestring) != 0) {
				char *copy = strdup(host->valuestring);
				if (copy) {
					free(r->nodes[n].name);
					r->nodes[n].name = copy;
				}
			}
			long k = key_slot(r, host->valuestring);
			if (k < 0)
				rc = -1;
			else if (r->key_node[k] < 0)
				r->key_node[k] = n;
		}
	}
	cJSON_Delete(p);
	return rc;
}

/* ---- node states, cases, fleet events ----------------------------------------------- */

static int state_row(const ng_store_node_state *s, void *arg)
{
	struct ng_report *r = arg;
	long n = ng_report_node(r, s->node), c = class_of(r, s->class_key);
	if (n < 0 || c < 0)
		return -1;
	struct ng_rnode *node = &r->nodes[n];
	ng_copy(node->id, sizeof node->id, s->node);
	/* The scheduler name the store keeps wins over the profile's host name:
	 * it is what Slurm, sacct and the operator call the node. */
	if (s->node_name[0] && strcmp(node->name, s->node_name) != 0) {
		char *copy = strdup(s->node_name);
		long k = key_slot(r, s->node_name);
		if (!copy || k < 0) {
			free(copy);
			return -1;
		}
		free(node->name);
		node->name = copy;
		if (r->key_node[k] < 0)
			r->key_node[k] = n;
	}
	ng_copy(node->outcome, sizeof node->outcome, s->outcome);
	node->state_at = s->updated_at;
	node->cls = c;
	r->classes[c].n_nodes++;
	return 0;
}

static int load_cases(ng_store *st, struct ng_report *r, ng_err *err)
{
	ng_store_case *all = NULL;
	size_t n = 0;
	if (ng_store_list_cases(st, true, &all, &n, err) < 0)
		return -1;
	r->cases = calloc(n ? n : 1, sizeof *r->cases);
	int rc = r->cases ? 0 : ng_fail(err, "out of memory");
	int64_t breaker_since = r->o.now - r->breaker_window_hours * 3600;
	for (size_t i = 0; i < n; i++) {
		ng_store_case *c = &all[i];
		bool keep = rc == 0 && class_wanted(r, c->class_key) &&
		            (c->closed_at == 0 || c->closed_at >= r->since || c->opened_at >= r->since);
		long node = keep ? ng_report_node(r, c->node) : 0;
		long cls = keep ? class_of(r, c->class_key) : 0;
		if (node < 0 || cls < 0)
			rc = ng_fail(err, "out of memory");
		if (!keep || rc < 0) {
			ng_store_case_free(c);
			continue;
		}
		struct ng_rcase *rc_ = &r->cases[r->n_cases++];
		rc_->c = *c; /* takes the evidence */
		rc_->node = (size_t)node;
		rc_->klass = c->closed_at ? NG_CASE_RELEASED_UNKNOWN : NG_CASE_OPEN;
		if (r->nodes[node].cls < 0)
			r->nodes[node].cls = cls;
		if (c->opened_at >= r->since)
			r->nodes[node].quarantines++;
		if (!c->closed_at) {
			r->nodes[node].case_id = c->id;
			r->classes[cls].open_cases++;
			if (c->opened_at >= breaker_since)
				r->classes[cls].recent_quarantines++;
		}
	}
	free(all);
	return rc;
}

static int load_events(ng_store *st, struct ng_report *r, ng_err *err)
{
	ng_store_fleet_event *all = NULL;
	size_t n = 0;
	if (ng_store_list_fleet_events(st, true, &all, &n, err) < 0)
		return -1;
	r->events = calloc(n ? n : 1, sizeof *r->events);
	int rc = r->events ? 0 : ng_fail(err, "out of memory");
	/* Oldest first, for the timeline. */
	for (size_t k = n; k-- > 0;) {
		ng_store_fleet_event *e = &all[k];
		bool keep = rc == 0 && class_wanted(r, e->class_key) &&
		            (e->cleared_at == 0 || e->cleared_at >= r->since || e->opened_at >= r->since);
		long cls = keep ? class_of(r, e->class_key) : 0;
		if (cls < 0)
			rc = ng_fail(err, "out of memory");
		if (!keep || rc < 0) {
			ng_store_fleet_event_free(e);
			continue;
		}
		struct ng_revent *ev = &r->events[r->n_events];
		memset(ev, 0, sizeof *ev);
		ev->e = *e;
		if (!e->cleared_at && strcmp(e->kind, "drift") != 0) /* a drift trips nothing */
			r->classes[cls].open_event = (long)r->n_events;
		r->n_events++;
	}
	free(all);
	return rc;
}

/* ---- software identities ------------------------------------------------------------ */

static int software_row(const char *cls, const char *sw, int64_t first, int64_t last, void *arg)
{
	struct ng_report *r = arg;
	if (!class_wanted(r, cls))
		return 0;
	long c = class_of(r, cls);
	if (c < 0)
		return -1;
	GROW(r->sw, r->n_sw, r->sw_cap, return -1);
	struct ng_rsw *s = &r->sw[r->n_sw++];
	s->cls = (size_t)c;
	ng_copy(s->software, sizeof s->software, sw);
	s->first = first;
	s->last = last;
	return 0;
}

static void settle_software(struct ng_report *r)
{
	int64_t *newest = calloc(r->class_map.n ? r->class_map.n : 1, sizeof *newest);
	for (size_t i = 0; newest && i < r->n_sw; i++) {
		struct ng_rsw *s = &r->sw[i];
		if (s->first >= newest[s->cls]) {
			newest[s->cls] = s->first;
			ng_copy(r->classes[s->cls].software, sizeof r->classes[s->cls].software, s->software);
		}
	}
	free(newest);
	/* What each fleet event's software replaced, and when it arrived. */
	for (size_t k = 0; k < r->n_events; k++) {
		struct ng_revent *ev = &r->events[k];
		long c = ng_rmap_find(&r->class_map, ev->e.class_key);
		const struct ng_rsw *mine = NULL, *prev = NULL;
		for (size_t i = 0; i < r->n_sw; i++)
			if ((long)r->sw[i].cls == c && strcmp(r->sw[i].software, ev->e.software) == 0)
				mine = &r->sw[i];
		for (size_t i = 0; mine && i < r->n_sw; i++)
			if ((long)r->sw[i].cls == c && r->sw[i].first < mine->first &&
			    (!prev || r->sw[i].first > prev->first))
				prev = &r->sw[i];
		if (mine)
			ev->software_first = mine->first;
		if (prev)
			ng_copy(ev->prev_software, sizeof ev->prev_software, prev->software);
		ev->software_changed =
			mine && prev && ev->e.opened_at >= mine->first && ev->e.opened_at - mine->first <= 3 * 86400;
	}
}

/* ---- runs: every node's recent median per (class, metric) ------------------------- */

struct entry {
	uint32_t series, node;
	double median;
};

struct runs_ctx {
	struct ng_report *r;
	ng_rmap series_map;
	struct entry *e;
	size_t n, cap;
	double *work;
	size_t work_cap;
};

static long series_of(struct runs_ctx *x, const char *cls, const char *metric, const char *unit)
{
	char key[512];
	snprintf(key, sizeof key, "%s\x1f%s", cls, metric);
	struct ng_report *r = x->r;
	size_t before = x->series_map.n;
	long s = ng_rmap_add(&x->series_map, key);
	if (s < 0 || x->series_map.n == before)
		return s;
	long c = class_of(r, cls);
	if (c < 0)
		return -1;
	GROW(r->series, r->n_series, r->series_cap, return -1);
	struct ng_rseries *se = &r->series[r->n_series++];
	memset(se, 0, sizeof *se);
	se->cls = (size_t)c;
	ng_copy(se->metric, sizeof se->metric, metric);
	ng_copy(se->unit, sizeof se->unit, unit);
	se->median = se->prev_median = se->floor = se->bar = NAN;
	return s;
}

static int run_row(const ng_report_run *run, void *arg)
{
	struct runs_ctx *x = arg;
	if (run->class_key[0] == '\0' || run->n_samples == 0)
		return 0;
	if (run->n_samples > x->work_cap) {
		double *w = realloc(x->work, run->n_samples * sizeof *w);
		if (!w)
			return -1;
		x->work = w;
		x->work_cap = run->n_samples;
	}
	double m = ng_np_median(run->samples, run->n_samples, x->work);
	if (!isfinite(m) || m <= 0)
		return 0;
	long s = series_of(x, run->class_key, run->metric, run->unit);
	long n = ng_report_node(x->r, run->node);
	if (s < 0 || n < 0)
		return -1;
	GROW(x->e, x->n, x->cap, return -1);
	x->e[x->n++] = (struct entry){(uint32_t)s, (uint32_t)n, m};
	return 0;
}

static int by_series_node(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->median > y->median) - (x->median < y->median);
}

static int settle_points(struct runs_ctx *x)
{
	struct ng_report *r = x->r;
	if (x->n > 1)
		qsort(x->e, x->n, sizeof *x->e, by_series_node);
	double *vals = NULL;
	size_t vcap = 0;
	for (size_t i = 0; i < x->n;) {
		size_t j = i;
		while (j < x->n && x->e[j].series == x->e[i].series && x->e[j].node == x->e[i].node)
			j++;
		size_t k = j - i;
		if (k > vcap) {
			double *v = realloc(vals, k * sizeof *v);
			if (!v) {
				free(vals);
				return -1;
			}
			vals = v;
			vcap = k;
		}
		for (size_t q = 0; q < k; q++)
			vals[q] = x->e[i + q].median;
		struct ng_rseries *se = &r->series[x->e[i].series];
		GROW(se->pts, se->n_pts, se->cap, { free(vals); return -1; });
		se->pts[se->n_pts++] = (struct ng_rpoint){x->e[i].node, ng_np_median_inplace(vals, k), k};
		i = j;
	}
	free(vals);
	return 0;
}

/* The baseline each series is drawn against: the current "ok" one of the
 * class's newest software identity, else the newest; and, when there is
 * one, another software identity's, so a shift after a change shows. */
static int settle_lines(ng_store *st, struct ng_report *r, const ng_policy *pol, ng_err *err)
{
	ng_store_baseline *b = NULL;
	size_t nb = 0;
	if (ng_store_list_baselines(st, r->o.class_key, true, &b, &nb, err) < 0)
		return -1;
	for (size_t s = 0; s < r->n_series; s++) {
		struct ng_rseries *se = &r->series[s];
		const char *cls = r->class_map.keys[se->cls];
		const char *newest_sw = r->classes[se->cls].software;
		const ng_store_baseline *cur = NULL, *prev = NULL;
		for (size_t i = 0; i < nb; i++) {
			if (strcmp(b[i].class_key, cls) != 0 || strcmp(b[i].metric, se->metric) != 0 ||
			    strcmp(b[i].status, "ok") != 0 || !isfinite(b[i].median))
				continue;
			bool mine = strcmp(b[i].software, newest_sw) == 0;
			if (!cur || (mine && strcmp(cur->software, newest_sw) != 0) ||
			    (mine == (strcmp(cur->software, newest_sw) == 0) && b[i].built_at > cur->built_at))
				cur = &b[i];
		}
		for (size_t i = 0; cur && i < nb; i++)
			if (strcmp(b[i].class_key, cls) == 0 && strcmp(b[i].metric, se->metric) == 0 &&
			    strcmp(b[i].status, "ok") == 0 && isfinite(b[i].median) &&
			    strcmp(b[i].software, cur->software) != 0 && (!prev || b[i].built_at > prev->built_at))
				prev = &b[i];
		if (cur) {
			se->median = cur->median;
			ng_copy(se->software, sizeof se->software, cur->software);
			se->baseline_id = cur->id;
			se->baseline_nodes = cur->n_nodes;
			se->baseline_built = cur->built_at;
			ng_copy(se->baseline_status, sizeof se->baseline_status, cur->status);
		} else {
			ng_copy(se->baseline_status, sizeof se->baseline_status, "none");
		}
		/* Another software identity's baseline is drawn only where the
		 * change moved the metric: the line is there to show a shift. */
		if (prev && cur && fabs(prev->median / cur->median - 1.0) < 0.01)
			prev = NULL;
		if (prev) {
			se->prev_median = prev->median;
			ng_copy(se->prev_software, sizeof se->prev_software, prev->software);
		}
		se->floor = ng_policy_floor(pol, se->metric);
		double peers = r->flag_fraction * se->median;
		se->bar = isfinite(se->floor) ? (isfinite(peers) && peers > se->floor ? peers : se->floor)
		                              : peers;
		for (size_t i = 0; i < se->n_pts; i++)
			if (isfinite(se->bar) && se->pts[i].value < se->bar) {
				se->n_flagged++;
				r->nodes[se->pts[i].node].flagged = true;
			}
	}
	free(b);
	return 0;
}

/* ---- decisions and GPU findings: the timeline ------------------------------------- */

static long day_of(const struct ng_report *r, int64_t t)
{
	if (t < r->since || t >= r->o.now + 1)
		return -1;
	long d = (long)((t - r->since) / 86400);
	return d < (long)r->n_days ? d : (long)r->n_days - 1;
}

static int decision_row(const ng_report_decision *d, void *arg)
{
	struct ng_report *r = arg;
	if (!class_wanted(r, d->class_key))
		return 0;
	long n = ng_report_node(r, d->node), c = class_of(r, d->class_key);
	long f = c < 0 ? -1 : ng_report_fr_row(r, (size_t)c, d->policy[0] ? d->policy : "unrecorded");
	if (n < 0 || f < 0)
		return -1;
	static const char *const names[NG_RDAY_OUTCOMES] = {"admitted", "admitted-warn", "held",
	                                                     "suspect", "quarantined"};
	int o = -1;
	for (int k = 0; k < NG_RDAY_OUTCOMES; k++)
		if (strcmp(d->outcome, names[k]) == 0)
			o = k;
	long day = day_of(r, d->at);
	if (day >= 0 && o >= 0)
		r->days[day].outcomes[o]++;
	GROW(r->dec, r->n_dec, r->dec_cap, return -1);
	r->dec[r->n_dec++] = (struct ng_rdecision){
		.node = (size_t)n, .at = d->at, .fr = (size_t)f,
		.admits = o == NG_RDAY_ADMITTED || o == NG_RDAY_WARN,
		.accuses = o == NG_RDAY_SUSPECT || o == NG_RDAY_QUARANTINED,
	};
	if (r->nodes[n].cls < 0)
		r->nodes[n].cls = c;
	r->decisions++;
	return 0;
}

static int health_row(const ng_report_health *h, void *arg)
{
	struct ng_report *r = arg;
	cJSON *b = cJSON_Parse(h->body);
	const cJSON *sev = ng_json_get(b, "severity"), *mode = ng_json_get(b, "mode");
	const cJSON *job = ng_json_get(b, "job");
	bool bad = cJSON_IsString(sev) &&
	           (strcmp(sev->valuestring, "degraded") == 0 || strcmp(sev->valuestring, "fatal") == 0);
	int rc = 0;
	if (bad) {
		long n = ng_report_node(r, h->node);
		if (n < 0 || (r->o.class_key && r->nodes[n].cls >= 0 &&
		              !class_wanted(r, r->class_map.keys[r->nodes[n].cls]))) {
			rc = n < 0 ? -1 : 0;
		} else {
			bool health = cJSON_IsString(mode) && strcmp(mode->valuestring, "health") == 0;
			/* One finding per node, job and time: a job's epilog writes a
			 * record per GPU, and two bad GPUs are one finding. */
			struct ng_rfinding *last = r->n_find ? &r->find[r->n_find - 1] : NULL;
			const char *jid = cJSON_IsString(job) ? job->valuestring : "";
			if (!(last && last->node == (size_t)n && last->at == h->taken_at &&
			      strcmp(last->job, jid) == 0)) {
				GROW(r->find, r->n_find, r->find_cap, { cJSON_Delete(b); return -1; });
				struct ng_rfinding *f = &r->find[r->n_find++];
				f->node = (size_t)n;
				f->at = h->taken_at;
				f->kind = health ? NG_FINDING_HEALTH : NG_FINDING_EPILOG;
				ng_copy(f->job, sizeof f->job, jid);
				if (health)
					r->nodes[n].health_faults++;
				else
					r->nodes[n].epilog_faults++;
				long day = day_of(r, h->taken_at);
				if (day >= 0)
					r->days[day].gpu_faults++;
			}
		}
	}
	cJSON_Delete(b);
	return rc;
}

/* ---- the whole load ----------------------------------------------------------------- */

/* Repeat offenders (flow/lemon.h), judged now under the policy in force:
 * the report names them beside their other state. */
static int mark_lemons(ng_store *st, const ng_policy *pol, struct ng_report *r, ng_err *err)
{
	char(*ids)[256] = NULL;
	ng_lemon_verdict *v = NULL;
	size_t n = 0;
	if (ng_lemon_all(st, pol, r->o.now, &ids, &v, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		long k = ng_rmap_find(&r->node_map, ids[i]);
		if (k < 0 || r->key_node[k] < 0 || !v[i].lemon)
			continue;
		struct ng_rnode *node = &r->nodes[r->key_node[k]];
		node->lemon = true;
		node->lemon_count = v[i].node_count;
	}
	free(ids);
	free(v);
	return 0;
}

int ng_report_load(ng_store *st, const ng_ctx *ctx, struct ng_report *r, ng_err *err)
{
	const ng_policy *pol = &ctx->policy;
	r->since = r->o.now - r->o.days * 86400;
	r->flag_fraction = pol->flag_fraction;
	r->breaker_count = pol->breaker_count;
	r->breaker_share = pol->breaker_share;
	r->breaker_window_hours = pol->breaker_window_hours;
	ng_policy_digest(pol, r->policy);
	r->notes = cJSON_CreateArray();
	r->n_days = (size_t)r->o.days;
	r->days = calloc(r->n_days, sizeof *r->days);
	if (!r->days || !r->notes)
		return ng_fail(err, "out of memory");

	if (ng_store_read_begin(st, err) < 0)
		return -1;
	int rc = ng_store_report_profiles(st, profile_row, r, err);
	if (rc == 0)
		rc = ng_store_report_states(st, state_row, r, err);
	if (rc == 0)
		rc = load_cases(st, r, err);
	if (rc == 0)
		rc = load_events(st, r, err);
	if (rc == 0)
		rc = ng_store_report_software_seen(st, software_row, r, err);
	if (rc == 0)
		settle_software(r);
	struct runs_ctx x = {.r = r};
	int64_t recent = r->o.recent_days < r->o.days ? r->o.recent_days : r->o.days;
	if (rc == 0)
		rc = ng_store_report_runs(st, r->o.now - recent * 86400, r->o.class_key, run_row, &x, err);
	if (rc == 0)
		rc = settle_points(&x);
	free(x.e);
	free(x.work);
	ng_rmap_free(&x.series_map);
	if (rc == 0)
		rc = settle_lines(st, r, pol, err);
	if (rc == 0)
		rc = ng_store_report_decisions(st, r->since, decision_row, r, err);
	if (rc == 0)
		rc = ng_store_report_health_faults(st, r->since, health_row, r, err);
	if (rc == 0)
		rc = ng_store_last_gpu_check_runs(st, NULL, &r->gpu_runs, &r->n_gpu_runs, err);
	if (rc == 0)
		rc = ng_report_false_rejects(st, r, err);
	if (rc == 0)
		ng_report_truth(r);
	if (rc == 0)
		rc = mark_lemons(st, &ctx->policy, r, err);
	if (rc == 0)
		rc = ng_store_config_errors_since(st, r->since, &r->config_errors, &r->n_config_errors,
		                                  err);
	for (size_t i = 0; rc == 0 && i < r->n_config_errors; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(r->config_errors[k].node, r->config_errors[i].node) == 0;
		r->config_error_nodes += !seen;
	}
	ng_store_read_end(st);
	if (rc > 0)
		rc = ng_fail(err, "out of memory reading the store");
	return rc < 0 ? -1 : 0;
}

size_t ng_report_nodes_shown(const struct ng_report *r)
{
	if (!r->o.class_key)
		return r->n_nodes;
	size_t n = 0;
	for (size_t i = 0; i < r->n_nodes; i++)
		n += r->nodes[i].cls >= 0 && strcmp(r->class_map.keys[r->nodes[i].cls], r->o.class_key) == 0;
	return n;
}

void ng_report_gpu_checks(const struct ng_report *r, struct ng_gpu_check_summary *out)
{
	memset(out, 0, sizeof *out);
	/* gpu_runs are ordered by node: each node's newest run of any mode */
	for (size_t i = 0; i < r->n_gpu_runs;) {
		size_t k = i, newest = i;
		for (; k < r->n_gpu_runs && strcmp(r->gpu_runs[k].node, r->gpu_runs[i].node) == 0; k++)
			if (r->gpu_runs[k].at > r->gpu_runs[newest].at)
				newest = k;
		out->nodes++;
		const char *o = r->gpu_runs[newest].outcome;
		out->failing += strcmp(o, "unknown") == 0 || strcmp(o, "n/a") == 0;
		i = k;
	}
	out->event = out->failing >= 2 && out->failing * 4 >= out->nodes;
}

void ng_report_free(struct ng_report *r)
{
	free(r->gpu_runs);
	for (size_t i = 0; i < r->n_nodes; i++)
		free(r->nodes[i].name);
	free(r->nodes);
	for (size_t i = 0; i < r->n_series; i++)
		free(r->series[i].pts);
	free(r->series);
	for (size_t i = 0; i < r->n_cases; i++)
		ng_store_case_free(&r->cases[i].c);
	free(r->cases);
	for (size_t i = 0; i < r->n_events; i++)
		ng_store_fleet_event_free(&r->events[i].e);
	free(r->events);
	free(r->classes);
	free(r->sw);
	free(r->days);
	free(r->fr);
	free(r->config_errors);
	free(r->dec);
	free(r->find);
	free(r->key_node);
	ng_rmap_free(&r->node_map);
	ng_rmap_free(&r->class_map);
	cJSON_Delete(r->notes);
	memset(r, 0, sizeof *r);
}
