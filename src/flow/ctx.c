#include "flow/ctx.h"

#include <stdio.h>

#include "core/clock.h"

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
