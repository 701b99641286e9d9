/* Work in a child process under a deadline: a fork, its answer on a pipe,
 * and the child gone (with its process group) by the deadline whatever it
 * was doing. For work inside a library that may never return (an NVML call
 * on a GPU fallen off the bus, a store that hangs), which a thread or a
 * timer cannot bound: see bounded.c. An external program goes through
 * collect/spawn.h instead. */
#ifndef NODEGATE_COLLECT_BOUNDED_H
#define NODEGATE_COLLECT_BOUNDED_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strbuf.h"

typedef struct {
	ng_strbuf out;  /* what the child wrote on its pipe */
	bool finished;  /* it closed the pipe before the deadline */
	bool too_big;   /* it wrote more than the cap */
	bool reaped;
	int status;     /* its wait status, when reaped */
	int error;      /* errno when no child could be started */
	int stuck_pid;  /* > 0: this child did not end on SIGKILL; init reaps it */
} ng_bounded;

/* The child's work: writes its answer on wfd, then returns (the child then
 * exits 0) or calls _exit with a status of its own. */
typedef void (*ng_bounded_fn)(int wfd, const void *arg);

/* CLOCK_MONOTONIC, in seconds: the clock deadlines are kept on. */
double ng_monotonic_now(void);

/* Writes all of p to fd (a child's answer); -1 on an error. */
int ng_write_all(int fd, const char *p, size_t n);

/* Runs fn in a child of its own process group that writes its answer on
 * wfd; collects it until the child closes its pipe or t_end (a
 * ng_monotonic_now() time) passes, then makes sure the child is gone. At
 * most max bytes of its answer are kept. Returns 0 when a child ran (b says
 * how it ended), -1 when none could be started (b->error). b->out is the
 * caller's to free (ng_strbuf_free) either way. */
int ng_run_bounded(double t_end, ng_bounded_fn fn, const void *arg, size_t max, ng_bounded *b);

#define NG_BOUNDED_MAX 64 /* children at once */

/* The same for n children at once (at most NG_BOUNDED_MAX), fn(wfd,
 * args[i]) in child i, all under the one deadline: a child that hangs
 * holds none of the others. b[i] says how child i ended (b[i].error when
 * it could not be started). Returns how many were started. */
size_t ng_run_bounded_each(double t_end, size_t n, ng_bounded_fn fn, const void *const *args,
                           size_t max, ng_bounded *b);

#endif
