/* The audit log as an operator checks it (flow/audit.h). */
#include "flow/audit.h"

#include <stdio.h>
#include <string.h>

int ng_audit_verify(const ng_ctx *ctx, ng_audit_verification *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	int r = ng_store_audit_verify(ctx->store, &out->rep, err);
	if (r < 0) {
		if (err)
			err->code = NG_ERR_STORE;
		return -1;
	}
	out->verified = r == 0;
	snprintf(out->store, sizeof out->store, "%s", ng_store_where(ctx->store));
	snprintf(out->anchor, sizeof out->anchor, "%s", ng_store_anchor_path(ctx->store));
	return 0;
}

cJSON *ng_audit_verification_json(const ng_audit_verification *v)
{
	const ng_store_audit_report *rep = &v->rep;
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "store", v->store);
	cJSON_AddBoolToObject(d, "verified", v->verified);
	cJSON_AddNumberToObject(d, "entries", (double)rep->entries);
	cJSON_AddStringToObject(d, "head", rep->head);
	cJSON_AddStringToObject(d, "anchor", v->anchor);
	if (rep->anchor_seq)
		cJSON_AddNumberToObject(d, "anchored_at", (double)rep->anchor_seq);
	else
		cJSON_AddNullToObject(d, "anchored_at");
	cJSON_AddNumberToObject(d, "rows", (double)rep->rows);
	cJSON_AddNumberToObject(d, "rows_changed", (double)rep->rows_bad);
	if (rep->first_bad) {
		cJSON_AddNumberToObject(d, "first_bad", (double)rep->first_bad);
		cJSON_AddStringToObject(d, "problem", rep->problem);
	} else {
		cJSON_AddNullToObject(d, "first_bad");
		/* A chain that holds over changed rows: the first row is the problem. */
		if (rep->rows_bad)
			cJSON_AddStringToObject(d, "problem", rep->state_problem);
		else
			cJSON_AddNullToObject(d, "problem");
	}
	return d;
}

cJSON *ng_audit_entries(const ng_ctx *ctx, int64_t limit, const char *subject,
                        char filed_as[NG_AUDIT_SUBJECT_MAX], ng_err *err)
{
	/* node:NAME finds the node's entries by its scheduler name too: they
	 * are filed under its stable id. */
	char by_id[NG_AUDIT_SUBJECT_MAX];
	filed_as[0] = '\0';
	if (subject && strncmp(subject, "node:", 5) == 0) {
		ng_store_node_ref ref;
		int r = ng_store_resolve_node(ctx->store, subject + 5, &ref, err);
		if (r < 0) {
			if (err)
				err->code = NG_ERR_STORE;
			return NULL;
		}
		if (r == 2) { /* never guess between two nodes */
			ng_fail_as(err, NG_ERR_USAGE, "\"%s\" names more than one node: %s; name one by "
			           "its id", subject + 5, ref.candidates);
			return NULL;
		}
		snprintf(by_id, sizeof by_id, "node:%s", ref.id);
		subject = by_id;
		snprintf(filed_as, NG_AUDIT_SUBJECT_MAX, "%s", by_id);
	}
	cJSON *arr = ng_store_audit_list(ctx->store, limit, subject, err);
	if (!arr) {
		if (err)
			err->code = NG_ERR_STORE;
		return NULL;
	}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "entries", arr);
	return doc;
}
