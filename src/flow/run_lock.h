/* One run at a time of a verb that must not overlap itself (health: a
 * HealthCheckInterval shorter than the check's deadline starts a second run
 * while the first is alive). An advisory flock on a file in the state
 * directory; the lock goes with the process, however it ends. */
#ifndef NODEGATE_FLOW_RUN_LOCK_H
#define NODEGATE_FLOW_RUN_LOCK_H

#include <stddef.h>

/* The state directory: $NODEGATE_STATE_DIR, else the default store's
 * directory (/var/lib/nodegate as root, else $XDG_STATE_HOME/nodegate). */
int ng_state_dir(char *out, size_t cap);

/* Takes <state dir>/<name>.lock without waiting. Returns 1 taken (*fd holds
 * it: keep it open for the run), 0 another process holds it, -1 it could
 * not be taken (why says; the caller goes on unlocked: a missing directory
 * is no reason to skip a check). */
int ng_run_lock(const char *name, int *fd, char *path, size_t path_cap, char *why,
                size_t why_cap);

#endif
