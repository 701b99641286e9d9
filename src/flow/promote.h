/* `nodegate policy promote`: a proposed policy made enforcing, with the
 * evidence (its replay over the window, its shadow run) and who and why in
 * the audit log, behind a guard: a policy whose replay or shadow run would
 * take more than guard_share of a class out in one day is refused unless
 * forced, with a reason. The refusal is audited too. */
#ifndef NODEGATE_FLOW_PROMOTE_H
#define NODEGATE_FLOW_PROMOTE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "flow/ctx.h"

typedef struct {
	const ng_policy *proposed;
	const char *source;  /* the proposed file, for the record */
	const char *text;    /* its text: what is installed */
	const char *install; /* where the enforcing policy is read from; NULL: record only */
	const char *reason;  /* required */
	bool force;
	double guard_share;  /* (0, 1] */
	long days;           /* the replay's window */
} ng_promote_opts;

/* out: the record (policy, previous, reason, forced, installed, guard
 * {share, over[]}, replay {...}, shadow {...}) and refused. Returns -1 only
 * on an error (err); a refusal is 0 with *refused. */
int ng_flow_promote(const ng_ctx *ctx, const ng_promote_opts *o, cJSON **out, bool *refused,
                    ng_err *err);

/* Where a promoted policy is installed: install when given, NULL with
 * no_install (record only), else where this nodegate reads the enforcing
 * policy from ($NODEGATE_POLICY, else /etc/nodegate/policy.json). */
const char *ng_promote_install_path(const char *install, bool no_install);

#endif
