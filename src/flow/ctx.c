#include "flow/ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/policy_digest.h"
#include "core/policy_json.h"
#include "store/policies.h"

int64_t ng_ctx_now(const ng_ctx *ctx)
{
	return ctx && ctx->clock ? ctx->clock(ctx->clock_arg) : ng_now();
}

void ng_ctx_note(const ng_ctx *ctx, const char *verb, const char *fmt, ...)
{
	if (!ctx || !ctx->note)
		return;
	va_list ap;
	va_start(ap, fmt);
	ctx->note(ctx->note_arg, verb, fmt, ap);
	va_end(ap);
}

int ng_ctx_open_store(ng_ctx *ctx, const char *spec, ng_err *err)
{
	ng_store *st;
	if (ng_store_open(spec, &st, err) < 0) {
		if (err)
			err->code = NG_ERR_STORE;
		return -1;
	}
	/* Decisions and cases written through it name the policy that made them. */
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(&ctx->policy, digest);
	/* ... and keep its text, so a replay can decide with it again. */
	char *text = ng_policy_to_text(&ctx->policy);
	ng_store_set_policy_text(st, digest, text);
	free(text);
	ctx->store = st;
	return 0;
}

/* Opening a store creates it when it is missing, so a read with a mistyped
 * path would report a freshly made, empty store (an audit log verified, no
 * quarantines). A SQLite store must exist already. The spec is resolved as
 * ng_store_open resolves it. */
int ng_ctx_open_existing_store(ng_ctx *ctx, const char *spec, ng_err *err)
{
	const char *s = spec;
	const char *env = getenv("NODEGATE_STORE");
	if ((!s || !*s) && env && *env)
		s = env;
	ng_strbuf def = {0};
	if (!s || !*s) {
		if (ng_store_default_path(&def, err) < 0) {
			if (err)
				err->code = NG_ERR_STORE;
			return -1;
		}
		s = def.s;
	}
	bool pg = strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0;
	int rc;
	if (!pg && access(s, F_OK) != 0)
		rc = ng_fail_as(err, NG_ERR_STORE, "there is no store at %s: nothing to read. Name "
		                "the store with --store or $NODEGATE_STORE", s);
	else
		rc = ng_ctx_open_store(ctx, s, err);
	ng_strbuf_free(&def);
	return rc;
}
