/* The fleet-regression events as an operator reads them (flow/fleet_events.h). */
#include "flow/fleet_events.h"

#include <stdlib.h>
#include <string.h>

#include "core/json.h"

int ng_fleet_events_read(const ng_ctx *ctx, bool all, ng_fleet_events *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	if (ng_store_list_fleet_events(ctx->store, all, &out->events, &out->n, err) < 0) {
		if (err)
			err->code = NG_ERR_STORE;
		return -1;
	}
	return 0;
}

void ng_fleet_events_release(ng_fleet_events *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		ng_store_fleet_event_free(&l->events[i]);
	free(l->events);
	memset(l, 0, sizeof *l);
}

/* The stored JSON text, or fallback when there is none or it does not parse. */
static cJSON *parsed_or(const char *text, cJSON *fallback)
{
	cJSON *v = text ? cJSON_Parse(text) : NULL;
	if (v) {
		cJSON_Delete(fallback);
		return v;
	}
	return fallback;
}

cJSON *ng_fleet_event_json(const ng_store_fleet_event *ev)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)ev->id);
	cJSON_AddStringToObject(o, "class", ev->class_key);
	cJSON_AddStringToObject(o, "software", ev->software);
	if (ev->metric[0])
		cJSON_AddStringToObject(o, "metric", ev->metric);
	else
		cJSON_AddNullToObject(o, "metric"); /* opened before events had one: the class */
	cJSON_AddStringToObject(o, "kind", ev->kind[0] ? ev->kind : "breaker");
	cJSON_AddNumberToObject(o, "clean_runs", (double)ev->clean_runs);
	cJSON_AddStringToObject(o, "state", ev->cleared_at ? "cleared" : "open");
	ng_json_add_time(o, "opened_at", ev->opened_at);
	ng_json_add_time(o, "cleared_at", ev->cleared_at);
	if (ev->cleared_at) {
		cJSON_AddStringToObject(o, "cleared_by", ev->cleared_by);
		cJSON_AddStringToObject(o, "clear_reason", ev->clear_reason);
	} else {
		cJSON_AddNullToObject(o, "cleared_by");
		cJSON_AddNullToObject(o, "clear_reason");
	}
	cJSON_AddItemToObject(o, "nodes", parsed_or(ev->nodes, cJSON_CreateArray()));
	cJSON *detail = parsed_or(ev->detail, cJSON_CreateObject());
	/* What a partial regression's nodes share, at the top: the finding. */
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(detail, "attribution");
	if (at)
		cJSON_AddItemToObject(o, "attribution", cJSON_Duplicate(at, true));
	const cJSON *sum = cJSON_GetObjectItemCaseSensitive(at ? at : detail, "summary");
	if (cJSON_IsString(sum))
		cJSON_AddStringToObject(o, "summary", sum->valuestring);
	cJSON_AddItemToObject(o, "detail", detail);
	return o;
}

cJSON *ng_fleet_events_json(const ng_fleet_events *l)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "events");
	for (size_t i = 0; i < l->n; i++)
		cJSON_AddItemToArray(arr, ng_fleet_event_json(&l->events[i]));
	return doc;
}
