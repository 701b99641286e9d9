/* What the public API's files share (include/nodegate/nodegate.h is the
 * interface; src/api/ implements it over the flow layer). */
#ifndef NODEGATE_API_API_H
#define NODEGATE_API_API_H

#include "core/error.h"
#include "flow/ctx.h"
#include "nodegate/nodegate.h"

struct nodegate_ctx {
	ng_ctx ctx;
	char *actor, *on_verdict;
	char *store_spec; /* what the store was opened from, for the GPU check's child */
	void (*note)(void *arg, const char *verb, const char *message);
	void *note_arg;
};

/* err into out (when out is not NULL); returns -1. */
int ng_api_fail(nodegate_error *out, const ng_err *err);
/* A failure of class code with a message; returns -1. */
int ng_api_fail_as(nodegate_error *out, nodegate_error_class code, const char *msg);

#endif
