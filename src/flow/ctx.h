/* The context every flow runs in: what the command line (or any other front
 * end: a daemon, an operator, a binding) hands the flow layer instead of its
 * own argument struct.
 *
 * The flow layer (src/flow/) is the orchestration a second front end would
 * call: an admission run (collect, judge, confirm, land, store the
 * decision), a GPU check (epilog, prolog, health), the report's model. It
 * sits above collect/, store/ and land/ and below cli/, which only parses
 * arguments and prints. Nothing in flow/ prints: a sentence for the
 * operator goes to the context's note sink, and the time comes from its
 * clock, so a test or the fleet simulator can drive a flow with its own. */
#ifndef NODEGATE_FLOW_CTX_H
#define NODEGATE_FLOW_CTX_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/policy.h"
#include "store/store.h"

typedef struct ng_ctx ng_ctx;

/* Where a flow's notes go: one sentence each, no newline. verb is the
 * flow's name ("admit", "epilog"...), for a front end that prefixes it. */
typedef void (*ng_note_fn)(void *arg, const char *verb, const char *fmt, va_list ap);
/* Now, unix seconds. */
typedef int64_t (*ng_clock_fn)(void *arg);

struct ng_ctx {
	ng_policy policy;       /* the policy in force (a copy: the flow may not change it) */
	ng_store *store;        /* the store, opened by the caller; NULL where a flow allows none */
	const char *store_spec; /* what the store was opened from, for messages; may be NULL */
	const char *actor;      /* who is acting, for the audit log */
	const char *on_verdict; /* a program told of each verdict (land/hook.h), or NULL */
	bool no_land;           /* report only: change no scheduler state, run no hook */
	ng_clock_fn clock;      /* NULL: the system clock ($NODEGATE_NOW where set) */
	void *clock_arg;
	ng_note_fn note;        /* NULL: notes are dropped */
	void *note_arg;
};

/* ctx->clock's answer, or the system clock's. */
int64_t ng_ctx_now(const ng_ctx *ctx);
/* Sends one note to ctx->note, if any. */
void ng_ctx_note(const ng_ctx *ctx, const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Opens the store spec names (NULL: $NODEGATE_STORE, else the default
 * path) into ctx->store, so that decisions written through it name the
 * policy in ctx (its digest). -1 with an NG_ERR_STORE error. */
int ng_ctx_open_store(ng_ctx *ctx, const char *spec, ng_err *err);
/* The same for a flow that only reads or changes what is already there: a
 * SQLite store that does not exist is an NG_ERR_STORE error ("there is no
 * store at PATH: nothing to read..."), never a new, empty store at a
 * mistyped path. */
int ng_ctx_open_existing_store(ng_ctx *ctx, const char *spec, ng_err *err);

#endif
