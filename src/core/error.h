/* One error message, filled in by whichever layer failed. Messages say what
 * failed, on what input, and what the operator can do. */
#ifndef NODEGATE_CORE_ERROR_H
#define NODEGATE_CORE_ERROR_H

#include <stdarg.h>

/* What kind of failure, so a caller can branch on it (a front end maps each
 * class to its exit status in one place: cli/exit.c). A zeroed ng_err is
 * NG_ERR_UNCLASSIFIED; ng_fail keeps whatever class the error already has,
 * so a layer that adds words to a lower layer's failure keeps its class. */
typedef enum {
	NG_ERR_UNCLASSIFIED = 0,
	NG_ERR_USAGE,    /* the caller asked for something that cannot be done as asked */
	NG_ERR_INPUT,    /* a file, record or output given to read is unusable */
	NG_ERR_STORE,    /* the store could not be opened, read or written */
	NG_ERR_LANDING,  /* the scheduler (scontrol, kubectl, a hook) failed */
	NG_ERR_INTERNAL, /* out of memory, or a state that should not arise */
} ng_err_class;

typedef struct {
	char msg[512];
	ng_err_class code;
} ng_err;

/* Formats into err (if not NULL) and returns -1, so callers can
 * `return ng_fail(err, "...")`. Control characters in the result are
 * written as escapes (\n, \t, \xNN): a message is one line. */
int ng_fail(ng_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, and sets the error's class. */
int ng_fail_as(ng_err *err, ng_err_class code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "usage", "input", "store", "landing", "internal" or "unclassified". */
const char *ng_err_class_name(ng_err_class code);

#endif
