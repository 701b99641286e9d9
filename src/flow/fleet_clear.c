/* Clearing a fleet-regression event (flow/fleet_clear.h). */
#include "flow/fleet_clear.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ng_fleet_clear(const ng_ctx *ctx, int64_t id, const char *by, const char *reason,
                   ng_fleet_clear_result *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_store_fleet_event *evs;
	size_t n;
	if (ng_store_list_fleet_events(ctx->store, true, &evs, &n, err) < 0) {
		err->code = NG_ERR_STORE;
		return -1;
	}
	const ng_store_fleet_event *ev = NULL;
	for (size_t i = 0; i < n && !ev; i++)
		if (evs[i].id == id)
			ev = &evs[i];
	int rc = 0;
	out->state = NG_FLEET_NO_SUCH;
	if (ev) {
		snprintf(out->class_key, sizeof out->class_key, "%s", ev->class_key);
		out->state = ev->cleared_at ? NG_FLEET_ALREADY_CLEARED : NG_FLEET_CLEARED;
	}
	if (ev && ev->cleared_at) {
		out->cleared_at = ev->cleared_at;
		snprintf(out->cleared_by, sizeof out->cleared_by, "%s", ev->cleared_by);
		snprintf(out->clear_reason, sizeof out->clear_reason, "%s", ev->clear_reason);
	} else if (ev) {
		out->at = ng_ctx_now(ctx);
		if (ng_store_clear_fleet_event(ctx->store, id, out->at, by, reason, err) < 0) {
			err->code = NG_ERR_STORE;
			rc = -1;
		}
	}
	for (size_t i = 0; i < n; i++)
		ng_store_fleet_event_free(&evs[i]);
	free(evs);
	return rc;
}

cJSON *ng_fleet_clear_json(int64_t id, const char *by, const char *reason,
                           const ng_fleet_clear_result *r)
{
	cJSON *d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "id", (double)id);
	cJSON_AddStringToObject(d, "class", r->class_key);
	cJSON_AddNumberToObject(d, "cleared_at", (double)r->at);
	cJSON_AddStringToObject(d, "cleared_by", by);
	cJSON_AddStringToObject(d, "clear_reason", reason);
	return d;
}
