/* --on-verdict: an operator's program told of every verdict as it lands.
 *
 * The command is split on spaces and tabs into an argv and run through
 * collect/spawn.h: no shell, so no quoting, globbing, pipes or $VARS (a
 * program that needs them is a script the command names). It reads the
 * verdict as one JSON document on standard input and has NG_HOOK_TIMEOUT_S
 * seconds (epilog, prolog and health: what is left of their deadline), at
 * the end of which it and its whole process group are killed (SIGTERM a
 * moment before, then SIGKILL). Whatever it does, the verdict stands: its
 * failure is a note. */
#ifndef NODEGATE_LAND_HOOK_H
#define NODEGATE_LAND_HOOK_H

#include <stddef.h>

#define NG_HOOK_TIMEOUT_S 10.0
#define NG_HOOK_MIN_S 0.05 /* less time left than this: not started at all */
#define NG_HOOK_MAX_ARGS 32

/* Runs cmd with json on standard input, for at most timeout_s seconds in
 * all. Returns 0 when it ran and exited 0;
 * -1 otherwise, with what went wrong in note (one line, for the verdict's
 * notes). An empty or NULL cmd runs nothing and returns 0. */
int ng_land_hook_run(const char *cmd, const char *json, double timeout_s, char *note,
                     size_t cap);

#endif
