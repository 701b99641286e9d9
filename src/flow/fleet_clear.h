/* Clearing a fleet-regression event (`nodegate fleet clear`): while a
 * class's event is open, admission blames the fleet, not the node, and
 * quarantines none of the class for what the event covers; clearing it
 * names who looked and what they found, and admission judges the class's
 * nodes one by one again. */
#ifndef NODEGATE_FLOW_FLEET_CLEAR_H
#define NODEGATE_FLOW_FLEET_CLEAR_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "flow/ctx.h"
#include "store/store.h"

typedef enum {
	NG_FLEET_CLEARED,         /* cleared now, at out->at */
	NG_FLEET_NO_SUCH,         /* no event with that id */
	NG_FLEET_ALREADY_CLEARED, /* out->event says when and by whom */
} ng_fleet_clear_state;

typedef struct {
	ng_fleet_clear_state state;
	char class_key[256];          /* the event's class */
	int64_t at;                   /* CLEARED: when */
	int64_t cleared_at;           /* ALREADY_CLEARED: the earlier clearing */
	char cleared_by[64], clear_reason[256];
} ng_fleet_clear_result;

/* Clears event id of ctx's store by by, for reason (each fits the store's
 * fields). 0 with *out; -1 with an NG_ERR_STORE err. */
int ng_fleet_clear(const ng_ctx *ctx, int64_t id, const char *by, const char *reason,
                   ng_fleet_clear_result *out, ng_err *err);

/* What clearing did, as `nodegate fleet clear --json` prints it: {id, class,
 * cleared_at, cleared_by, clear_reason}. */
cJSON *ng_fleet_clear_json(int64_t id, const char *by, const char *reason,
                           const ng_fleet_clear_result *r);

#endif
