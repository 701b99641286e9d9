/* The fleet-regression events as an operator reads them (`nodegate fleet
 * list`): the open ones, or every one, and each as --json gives it. How an
 * event is cleared is flow/fleet_clear.h. */
#ifndef NODEGATE_FLOW_FLEET_EVENTS_H
#define NODEGATE_FLOW_FLEET_EVENTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "flow/ctx.h"
#include "store/store.h"

typedef struct {
	ng_store_fleet_event *events; /* newest first, as the store lists them */
	size_t n;
} ng_fleet_events;

/* The open events of ctx's store (all: cleared ones too). 0, or -1 with an
 * NG_ERR_STORE err. Release *out with ng_fleet_events_release. */
int ng_fleet_events_read(const ng_ctx *ctx, bool all, ng_fleet_events *out, ng_err *err);
void ng_fleet_events_release(ng_fleet_events *l);

/* One event: id, class, software, metric (null for an event opened before
 * events had one), kind, clean_runs, state, opened/cleared at, by and why,
 * its nodes, and a partial regression's attribution and summary at the top
 * of its detail. */
cJSON *ng_fleet_event_json(const ng_store_fleet_event *ev);
/* {"events": [...]}. */
cJSON *ng_fleet_events_json(const ng_fleet_events *l);

#endif
