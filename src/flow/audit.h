/* The audit log as an operator checks it (`nodegate audit`): the hash
 * chain and the state rows verified, and the newest entries, of one subject
 * when asked. */
#ifndef NODEGATE_FLOW_AUDIT_H
#define NODEGATE_FLOW_AUDIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "flow/ctx.h"
#include "store/store.h"

typedef struct {
	bool verified;             /* the chain and every state row hold */
	ng_store_audit_report rep; /* what the walk found */
	char store[4096];          /* where the store is (ng_store_where) */
	char anchor[4096];         /* where its head is anchored */
} ng_audit_verification;

/* Walks ctx's store's whole chain and its state rows. 0 with *out (verified
 * or not), or -1 with an NG_ERR_STORE err. */
int ng_audit_verify(const ng_ctx *ctx, ng_audit_verification *out, ng_err *err);
/* {store, verified, entries, head, anchor, anchored_at, rows, rows_changed,
 * first_bad, problem}: null where there is none. */
cJSON *ng_audit_verification_json(const ng_audit_verification *v);

#define NG_AUDIT_SUBJECT_MAX 160

/* {"entries": [...]}: the newest limit entries (0: all), of subject only
 * when not NULL. node:NAME names the node by its stable id or its scheduler
 * name, as the entries are filed under the id: filed_as gets
 * "node:ID" then, else "". NULL with err: NG_ERR_USAGE when NAME
 * names two nodes, NG_ERR_STORE. */
cJSON *ng_audit_entries(const ng_ctx *ctx, int64_t limit, const char *subject,
                        char filed_as[NG_AUDIT_SUBJECT_MAX], ng_err *err);

#endif
