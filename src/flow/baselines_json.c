/* The class baselines as the baseline verb's --json gives them
 * (flow/baselines.h): one object per stored row, and each subcommand's
 * document around them. */
#include <string.h>

#include "core/json.h"
#include "flow/baselines.h"
#include "flow/class_baseline.h"

const char *ng_baseline_row_status_text(const ng_store_baseline *b)
{
	int s = 0;
	while (s < NG_BASELINE_STATUS_COUNT &&
	       strcmp(ng_baseline_status_name((ng_baseline_status)s), b->status) != 0)
		s++;
	return ng_baseline_status_text((ng_baseline_status)s);
}

cJSON *ng_baseline_json(const ng_store_baseline *b)
{
	cJSON *o = cJSON_CreateObject();
	if (b->id)
		cJSON_AddNumberToObject(o, "id", (double)b->id);
	else
		cJSON_AddNullToObject(o, "id");
	cJSON_AddStringToObject(o, "class", b->class_key);
	cJSON_AddStringToObject(o, "software", b->software);
	cJSON_AddStringToObject(o, "metric", b->metric);
	cJSON_AddStringToObject(o, "unit", b->unit);
	cJSON_AddStringToObject(o, "status", b->status);
	cJSON_AddStringToObject(o, "status_text", ng_baseline_row_status_text(b));
	ng_json_add_number(o, "median", b->median);
	ng_json_add_number(o, "cv", b->cv);
	ng_json_add_number(o, "node_mad", b->node_mad);
	cJSON_AddNumberToObject(o, "n_nodes", (double)b->n_nodes);
	cJSON_AddNumberToObject(o, "min_nodes", (double)b->min_nodes);
	cJSON_AddNumberToObject(o, "n_runs", (double)b->n_runs);
	cJSON_AddNumberToObject(o, "n_samples", (double)b->n_samples);
	ng_json_add_time(o, "built_at", b->built_at);
	ng_json_add_time(o, "window_start", b->window_start);
	ng_json_add_time(o, "window_end", b->window_end);
	if (b->pinned_name[0])
		cJSON_AddStringToObject(o, "pinned_name", b->pinned_name);
	else
		cJSON_AddNullToObject(o, "pinned_name");
	ng_json_add_time(o, "pinned_at", b->pinned_at);
	ng_json_add_time(o, "expired_at", b->expired_at);
	if (b->expired_at)
		cJSON_AddStringToObject(o, "expired_reason", b->expired_reason);
	else
		cJSON_AddNullToObject(o, "expired_reason");
	return o;
}

cJSON *ng_baselines_json(const ng_store_baseline *rows, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "baselines");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, ng_baseline_json(&rows[i]));
	return doc;
}

cJSON *ng_baseline_build_json(const ng_baseline_build_result *res)
{
	cJSON *doc = ng_baselines_json(res->rows, res->n);
	cJSON_AddNumberToObject(doc, "window_start", (double)res->since);
	return doc;
}

cJSON *ng_baseline_pin_json(const ng_store_baseline *pinned)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "pinned", ng_baseline_json(pinned));
	return doc;
}

cJSON *ng_baseline_expiry_json(const char *class_key, const char *metric, const char *reason,
                               const ng_baseline_expiry *x)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "class", class_key);
	if (metric)
		cJSON_AddStringToObject(doc, "metric", metric);
	else
		cJSON_AddNullToObject(doc, "metric");
	cJSON_AddNumberToObject(doc, "expired", (double)x->expired);
	/* Expiring the whole class retires its samples; one metric keeps them. */
	cJSON_AddBoolToObject(doc, "samples_retired", !metric);
	cJSON_AddNumberToObject(doc, "at", (double)x->at);
	cJSON_AddStringToObject(doc, "reason", reason);
	return doc;
}
