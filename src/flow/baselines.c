/* The class baselines as an operator keeps them (flow/baselines.h). */
#include "flow/baselines.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "flow/class_baseline.h"

static int store_failed(ng_err *err)
{
	if (err)
		err->code = NG_ERR_STORE;
	return -1;
}

static const char *actor_of(const ng_ctx *ctx)
{
	return ctx->actor ? ctx->actor : ng_actor();
}

bool ng_baseline_is_ok(const ng_store_baseline *b)
{
	return strcmp(b->status, "ok") == 0;
}

int ng_baselines_build(const ng_ctx *ctx, const ng_baseline_filter *f,
                       ng_baseline_build_result *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	int64_t now = ng_ctx_now(ctx);
	out->since = now - (int64_t)ctx->policy.baseline_window_days * 86400;
	char *keys;
	size_t n_keys;
	if (ng_store_baseline_keys(ctx->store, f->class_key, out->since, &keys, &n_keys, err) < 0)
		return store_failed(err);
	out->rows = calloc(n_keys ? n_keys : 1, sizeof *out->rows);
	if (!out->rows) {
		free(keys);
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	}
	int rc = 0;
	/* Each key is four strings end to end: class, software, metric, unit. */
	const char *k = keys;
	for (size_t i = 0; i < n_keys; i++) {
		const char *cls = k, *sw = cls + strlen(cls) + 1, *metric = sw + strlen(sw) + 1,
		           *unit = metric + strlen(metric) + 1;
		k = unit + strlen(unit) + 1;
		if ((f->software && strcmp(f->software, sw) != 0) ||
		    (f->metric && strcmp(f->metric, metric) != 0))
			continue;
		if (ng_class_baseline_build(ctx->store, &ctx->policy, cls, sw, metric, unit, now,
		                            actor_of(ctx), true, &out->rows[out->n], err) < 0) {
			rc = store_failed(err);
			break;
		}
		out->built += ng_baseline_is_ok(&out->rows[out->n]);
		out->n++;
	}
	free(keys);
	return rc;
}

static int by_key(const void *pa, const void *pb)
{
	const ng_store_baseline *a = pa, *b = pb;
	int c = strcmp(a->class_key, b->class_key);
	if (!c)
		c = strcmp(a->software, b->software);
	if (!c)
		c = strcmp(a->metric, b->metric);
	if (!c)
		c = (a->built_at < b->built_at) - (a->built_at > b->built_at);
	if (!c)
		c = (a->id < b->id) - (a->id > b->id);
	return c;
}

static bool same_key(const ng_store_baseline *a, const ng_store_baseline *b)
{
	return strcmp(a->class_key, b->class_key) == 0 && strcmp(a->software, b->software) == 0 &&
	       strcmp(a->metric, b->metric) == 0;
}

/* The row in force within one key's rows (newest first): what the store's
 * ng_store_current_baseline picks (the newest pin, else the newest "ok"), or
 * when there is none, the newest row, which says why there is none. */
static size_t in_force(const ng_store_baseline *rows, size_t from, size_t to)
{
	size_t pick = to;
	for (size_t i = from; i < to; i++)
		if (rows[i].pinned_at && (pick == to || rows[i].pinned_at > rows[pick].pinned_at))
			pick = i;
	if (pick != to)
		return pick;
	for (size_t i = from; i < to; i++)
		if (ng_baseline_is_ok(&rows[i]))
			return i;
	return from;
}

int ng_baselines_in_force(const ng_ctx *ctx, const char *class_key, bool all,
                          ng_store_baseline **rows, size_t *n, ng_err *err)
{
	ng_store_baseline *rs;
	size_t n_all;
	*rows = NULL;
	*n = 0;
	if (ng_store_list_baselines(ctx->store, class_key, !all, &rs, &n_all, err) < 0)
		return store_failed(err);
	if (n_all)
		qsort(rs, n_all, sizeof *rs, by_key);
	size_t kept = 0;
	for (size_t i = 0; i < n_all;) {
		size_t j = i + 1;
		while (j < n_all && same_key(&rs[i], &rs[j]))
			j++;
		if (all) {
			for (size_t k = i; k < j; k++)
				rs[kept++] = rs[k];
		} else {
			rs[kept++] = rs[in_force(rs, i, j)];
		}
		i = j;
	}
	*rows = rs;
	*n = kept;
	return 0;
}

int ng_baseline_pin(const ng_ctx *ctx, int64_t id, const char *name,
                    ng_baseline_pin_state *state, ng_store_baseline *b, ng_err *err)
{
	int r = ng_store_get_baseline(ctx->store, id, b, err);
	if (r < 0)
		return store_failed(err);
	if (r == 0) {
		*state = NG_BASELINE_NO_SUCH;
		return 0;
	}
	if (!ng_baseline_is_ok(b)) {
		*state = NG_BASELINE_REFUSAL;
		return 0;
	}
	if (b->expired_at) {
		*state = NG_BASELINE_EXPIRED;
		return 0;
	}
	if (ng_store_pin_baseline(ctx->store, id, name, ng_ctx_now(ctx), actor_of(ctx), err) < 0)
		return store_failed(err);
	r = ng_store_get_baseline(ctx->store, id, b, err);
	if (r < 0)
		return store_failed(err);
	if (r == 0)
		return ng_fail_as(err, NG_ERR_STORE, "baseline %lld is gone after its pin",
		                  (long long)id);
	*state = NG_BASELINE_PINNED;
	return 0;
}

int ng_baselines_expire(const ng_ctx *ctx, const char *class_key, const char *metric,
                        const char *reason, ng_baseline_expiry *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	/* A mistyped class would expire nothing and retire nothing real. */
	ng_store_baseline *known;
	size_t n_known;
	int64_t n_nodes = ng_store_count_class_nodes(ctx->store, class_key, 0, err);
	if (n_nodes < 0 ||
	    ng_store_list_baselines(ctx->store, class_key, false, &known, &n_known, err) < 0)
		return store_failed(err);
	free(known);
	if (n_nodes == 0 && n_known == 0)
		return 0;
	out->known = true;
	out->at = ng_ctx_now(ctx);
	out->expired = ng_store_expire_baselines(ctx->store, class_key, metric, reason, out->at,
	                                         actor_of(ctx), err);
	if (out->expired < 0)
		return store_failed(err);
	return 0;
}
