/* The state directory's run locks (run_lock.h). */
#include "flow/run_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "store/store.h"

int ng_state_dir(char *out, size_t cap)
{
	const char *env = getenv("NODEGATE_STATE_DIR");
	if (env && env[0] == '/') {
		snprintf(out, cap, "%s", env);
		return 0;
	}
	ng_strbuf p = {0};
	ng_err err;
	int rc = ng_store_default_path(&p, &err);
	if (rc == 0) {
		const char *slash = strrchr(p.s, '/');
		snprintf(out, cap, "%.*s", slash ? (int)(slash - p.s) : 0, p.s);
	}
	ng_strbuf_free(&p);
	return rc == 0 && out[0] ? 0 : -1;
}

int ng_run_lock(const char *name, int *fd, char *path, size_t path_cap, char *why,
                size_t why_cap)
{
	*fd = -1;
	char dir[4000];
	if (ng_state_dir(dir, sizeof dir) < 0) {
		snprintf(why, why_cap, "no state directory (set NODEGATE_STATE_DIR)");
		return -1;
	}
	snprintf(path, path_cap, "%s/%s.lock", dir, name);
	/* The directory's last level, as the store would make it. */
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(why, why_cap, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	/* Nothing is ever written to the file, it only carries the lock. */
	ng_err err;
	int f = ng_open_lock_file(path, &err);
	if (f < 0) {
		snprintf(why, why_cap, "%s", err.msg);
		return -1;
	}
	if (flock(f, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(f);
		if (e == EWOULDBLOCK)
			return 0;
		snprintf(why, why_cap, "cannot lock %s: %s", path, strerror(e));
		return -1;
	}
	*fd = f;
	return 1;
}
