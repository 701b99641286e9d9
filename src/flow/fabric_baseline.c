/* The topologies' baselines of nccl.all_reduce.busbw (flow/fabric.h).
 *
 * A topology ("CLASS/8node/8rail") is a class, as admission's are, and its
 * baseline is built by the same pure builder (judge/baseline.c: the median
 * of per-unit medians, a MAD spread, cv from the runs' own repeats, the
 * policy's window and minimum) from its accepted records: the passing
 * all-reduces of ng_fabric_store. The unit is not a node but the test's
 * set of nodes: one group measured fifty times weighs as much as a group
 * measured once, and a slow group among many does not move the median. The
 * same keeping rule as admission's: a pinned baseline, or one younger than
 * admission.baseline_max_age_hours, is used as it is; else it is built
 * afresh. With fewer groups than admission.min_baseline_nodes but at least
 * admission.small_class_min_nodes, it is built to that smaller size (as a
 * small class is). A refusal is not stored (every run would add one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "flow/class_baseline.h"
#include "flow/fabric.h"
#include "judge/baseline.h"
#include "store/fabric_peers.h"

#define METRIC "nccl.all_reduce.busbw"

struct runs {
	ng_baseline_run *v;
	size_t n, cap;
	char **groups;   /* each run's node set, "a,b" sorted */
	double **samples;
	int64_t newest;
};

static void runs_free(struct runs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->groups[i]);
		free(r->samples[i]);
	}
	free(r->v);
	free(r->groups);
	free(r->samples);
	memset(r, 0, sizeof *r);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test's node set from the record body's conditions.nodes, sorted and
 * joined; the record's node when it has none. NULL when out of memory. */
static char *group_of(const cJSON *rec)
{
	const cJSON *nodes = ng_json_get(ng_json_get(rec, "conditions"), "nodes");
	size_t n = 0, len = 1;
	for (const cJSON *x = cJSON_IsArray(nodes) ? nodes->child : NULL; x; x = x->next)
		if (cJSON_IsString(x))
			n++, len += strlen(x->valuestring) + 1;
	if (n == 0) {
		const cJSON *node = ng_json_get(rec, "node");
		return strdup(cJSON_IsString(node) ? node->valuestring : "?");
	}
	char **v = malloc(n * sizeof *v), *out = calloc(len, 1);
	if (!v || !out) {
		free(v);
		free(out);
		return NULL;
	}
	size_t k = 0;
	for (const cJSON *x = nodes->child; x; x = x->next)
		if (cJSON_IsString(x))
			v[k++] = x->valuestring;
	qsort(v, k, sizeof *v, by_text);
	for (size_t i = 0; i < k; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, v[i]);
	}
	free(v);
	return out;
}

static int add_run(const char *body, const double *samples, size_t n, int64_t taken_at, void *arg)
{
	struct runs *r = arg;
	if (r->n == r->cap) {
		size_t c = r->cap ? r->cap * 2 : 32;
		ng_baseline_run *v = realloc(r->v, c * sizeof *v);
		if (v)
			r->v = v;
		char **g = realloc(r->groups, c * sizeof *g);
		if (g)
			r->groups = g;
		double **s = realloc(r->samples, c * sizeof *s);
		if (s)
			r->samples = s;
		if (!v || !g || !s)
			return 1;
		r->cap = c;
	}
	ng_err err;
	cJSON *rec = ng_json_parse(body, strlen(body), &err);
	char *group = rec ? group_of(rec) : strdup("?");
	cJSON_Delete(rec);
	double *copy = malloc((n ? n : 1) * sizeof *copy);
	if (!group || !copy) {
		free(group);
		free(copy);
		return 1;
	}
	memcpy(copy, samples, n * sizeof *copy);
	r->groups[r->n] = group;
	r->samples[r->n] = copy;
	r->v[r->n] = (ng_baseline_run){group, copy, n};
	r->n++;
	if (taken_at > r->newest)
		r->newest = taken_at;
	return 0;
}

/* Builds (and stores, when ok) the baseline of key from its accepted runs. */
static int build(const ng_ctx *ctx, const ng_policy *pol, const char *key, const char *unit,
                 const struct runs *r, int64_t since, ng_store_baseline *out, ng_err *err)
{
	int64_t now = ng_ctx_now(ctx);
	int status = ng_baseline_row_build(pol, r->v, r->n, key, "", METRIC, unit, now, since,
	                                   r->n ? r->newest : now, out, err);
	if (status < 0)
		return -1;
	if (status != NG_BASELINE_OK)
		return 0;
	return ng_store_put_baseline(ctx->store, out, ctx->actor, err) < 0 ? -1 : 1;
}

/* The baseline of key to judge against: 1 with out ok, 0 none yet (out:
 * the refusal), -1 error. */
static int baseline_for(const ng_ctx *ctx, const char *key, const char *unit,
                        ng_store_baseline *out, ng_err *err)
{
	const ng_policy *pol = &ctx->policy;
	int64_t now = ng_ctx_now(ctx);
	int got = ng_store_current_baseline(ctx->store, key, "", METRIC, out, err);
	if (got < 0)
		return -1;
	if (got == 1 && (out->pinned_at || now - out->built_at < pol->baseline_max_age_hours * 3600))
		return 1;
	int64_t since = now - (int64_t)pol->baseline_window_days * 86400;
	struct runs r = {0};
	if (ng_store_fabric_runs(ctx->store, key, METRIC, since, add_run, &r, err) < 0) {
		runs_free(&r);
		return -1;
	}
	int rc = build(ctx, pol, key, unit, &r, since, out, err);
	if (rc == 0 && strcmp(out->status, "too-few-nodes") == 0 && pol->small_class_min_nodes > 0 &&
	    out->n_nodes >= pol->small_class_min_nodes) {
		ng_policy small = *pol;
		small.min_baseline_nodes = pol->small_class_min_nodes;
		rc = build(ctx, &small, key, unit, &r, since, out, err);
	}
	runs_free(&r);
	return rc;
}

int ng_fabric_load_baselines(const ng_ctx *ctx, ng_fabric_opts *o, const size_t *sizes,
                             size_t n_sizes, bool per_rail, ng_err *err)
{
	if (o->expect_busbw > 0 || !ctx->store)
		return 0;
	for (int rail = 0; rail <= (per_rail ? 1 : 0); rail++) {
		for (size_t i = 0; i < n_sizes && o->n_baselines < NG_FABRIC_MAX_BASELINES; i++) {
			struct ng_fabric_baseline *b = &o->baselines[o->n_baselines++];
			b->nodes = sizes[i];
			b->one_rail = rail == 1;
			b->median = NAN;
			ng_fabric_topology_key(o, sizes[i], rail ? "one" : NULL, b->key, sizeof b->key);
			ng_store_baseline sb;
			int got = baseline_for(ctx, b->key, "GB/s", &sb, err);
			if (got < 0)
				return -1;
			if (got == 1 && sb.median > 0)
				b->median = sb.median;
		}
	}
	return 0;
}

int ng_fabric_build_baselines(const ng_ctx *ctx, const ng_fabric_opts *o, const cJSON *results,
                              cJSON *out, ng_err *err)
{
	(void)o;
	if (!ctx->store)
		return 0;
	const char *done[256];
	size_t n_done = 0;
	for (const cJSON *r = results ? results->child : NULL; r; r = r->next) {
		const cJSON *key = ng_json_get(r, "topology");
		if (!cJSON_IsTrue(ng_json_get(r, "accepted")) || !cJSON_IsString(key))
			continue;
		bool seen = false;
		for (size_t i = 0; i < n_done && !seen; i++)
			seen = strcmp(done[i], key->valuestring) == 0;
		if (seen || n_done == sizeof done / sizeof done[0])
			continue;
		done[n_done++] = key->valuestring;
		const cJSON *unit = ng_json_get(ng_json_get(r, "record"), "unit");
		ng_store_baseline sb;
		int got = baseline_for(ctx, key->valuestring,
		                       cJSON_IsString(unit) ? unit->valuestring : "GB/s", &sb, err);
		if (got < 0)
			return -1;
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "topology", key->valuestring);
		cJSON_AddStringToObject(b, "status", got == 1 ? "ok" : sb.status[0] ? sb.status : "none");
		ng_json_add_number(b, "median", got == 1 ? sb.median : NAN);
		cJSON_AddNumberToObject(b, "groups", (double)sb.n_nodes);
		cJSON_AddNumberToObject(b, "runs", (double)sb.n_runs);
		if (got == 1 && sb.id)
			cJSON_AddNumberToObject(b, "id", (double)sb.id);
		cJSON_AddItemToArray(out, b);
	}
	return 0;
}
