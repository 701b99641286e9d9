/* Running an external program: posix_spawn with an argv (never a shell), its
 * own process group, standard input from /dev/null, standard output and error
 * captured, and a timeout after which the whole group is terminated. */
#ifndef NODEGATE_COLLECT_SPAWN_H
#define NODEGATE_COLLECT_SPAWN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	char *out, *err;          /* captured bytes, NUL-terminated (may hold NULs) */
	size_t out_len, err_len;
	bool truncated;           /* output beyond the cap was read and dropped */
	bool spawned;             /* false: the program could not be started */
	int spawn_errno;          /* why not, when !spawned */
	bool timed_out;           /* killed by us at the deadline */
	int exit_status;          /* -1 when killed by a signal or not spawned */
	int signal;               /* the signal that ended it, or 0 */
	double seconds;           /* wall time from spawn to exit */
} ng_spawn_result;

/* Runs argv[0] (searched on PATH when it has no '/') with argv, for at most
 * timeout_s seconds (then SIGTERM to the group, SIGKILL two seconds later),
 * keeping at most max_output bytes of each stream. Returns 0 when the result
 * describes what happened (including "could not start" and "timed out"), -1
 * only when nodegate itself failed (out of memory, no pipes), with err set. */
int ng_spawn_capture(char *const argv[], double timeout_s, size_t max_output,
                     ng_spawn_result *r, char *errbuf, size_t errlen);

/* The same, with standard input read from stdin_fd (a file the caller
 * positioned, so no pipe can fill and block either side); -1: /dev/null. */
int ng_spawn_capture_stdin(char *const argv[], int stdin_fd, double timeout_s, size_t max_output,
                           ng_spawn_result *r, char *errbuf, size_t errlen);

/* The same, with the time between SIGTERM and SIGKILL given: a caller that
 * must be done by a deadline sends SIGTERM at timeout_s - grace_s and
 * SIGKILL at timeout_s (grace_s 0: SIGKILL at timeout_s, no SIGTERM). */
int ng_spawn_capture_until(char *const argv[], int stdin_fd, double timeout_s, double grace_s,
                           size_t max_output, ng_spawn_result *r, char *errbuf, size_t errlen);

void ng_spawn_result_free(ng_spawn_result *r);

/* One line saying how the run ended, for reasons and logs. */
void ng_spawn_describe(const ng_spawn_result *r, char *buf, size_t len);

#endif
