/* Workload floors from pinned baselines (flow/floors_suggest.h). */
#include "flow/floors_suggest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool seen(const ng_floor_suggestion *s, size_t n, const char *metric)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s[i].from.metric, metric) == 0)
			return true;
	return false;
}

int ng_floors_suggest(const ng_ctx *ctx, const char *class_key, const char *software,
                      double fraction, ng_floor_suggestion **out, size_t *n, ng_err *err)
{
	*out = NULL;
	*n = 0;
	ng_store_baseline *all = NULL;
	size_t n_all = 0;
	if (ng_store_list_baselines(ctx->store, class_key, true, &all, &n_all, err) < 0) {
		err->code = NG_ERR_STORE;
		return -1;
	}
	ng_floor_suggestion *s = calloc(n_all ? n_all : 1, sizeof *s);
	if (!s) {
		free(all);
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	}
	/* Newest first: the first pinned one of each metric is the one to use. */
	size_t used = 0;
	for (size_t i = 0; i < n_all; i++) {
		const ng_store_baseline *b = &all[i];
		if (!b->pinned_at || strcmp(b->status, "ok") != 0 || !isfinite(b->median) ||
		    (software && strcmp(b->software, software) != 0) || seen(s, used, b->metric))
			continue;
		s[used].floor = fraction * b->median;
		s[used].from = *b;
		used++;
	}
	free(all);
	*out = s;
	*n = used;
	return 0;
}

cJSON *ng_floors_suggest_json(const char *class_key, double fraction,
                              const ng_floor_suggestion *sug, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "class", class_key);
	cJSON_AddNumberToObject(doc, "fraction", fraction);
	cJSON *policy = cJSON_AddObjectToObject(doc, "policy");
	cJSON *floors = cJSON_AddObjectToObject(policy, "floors");
	cJSON *from = cJSON_AddArrayToObject(doc, "from");
	for (size_t i = 0; i < n; i++) {
		const ng_store_baseline *b = &sug[i].from;
		cJSON_AddNumberToObject(floors, b->metric, sug[i].floor);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "metric", b->metric);
		cJSON_AddStringToObject(x, "unit", b->unit);
		cJSON_AddNumberToObject(x, "floor", sug[i].floor);
		cJSON_AddNumberToObject(x, "baseline", (double)b->id);
		cJSON_AddStringToObject(x, "pinned", b->pinned_name);
		cJSON_AddStringToObject(x, "software", b->software);
		cJSON_AddNumberToObject(x, "median", b->median);
		cJSON_AddNumberToObject(x, "nodes", (double)b->n_nodes);
		cJSON_AddItemToArray(from, x);
	}
	return doc;
}
