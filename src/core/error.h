/* One error message, filled in by whichever layer failed. Messages say what
 * failed, on what input, and what the operator can do. */
#ifndef NODEGATE_CORE_ERROR_H
#define NODEGATE_CORE_ERROR_H

#include <stdarg.h>

typedef struct {
	char msg[512];
} ng_err;

/* Formats into err (if not NULL) and returns -1, so callers can
 * `return ng_fail(err, "...")`. Control characters in the result are
 * written as escapes (\n, \t, \xNN): a message is one line. */
int ng_fail(ng_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
