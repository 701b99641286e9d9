/* --on-verdict (hook.h). */
#include "land/hook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collect/spawn.h"

#define HOOK_OUTPUT_MAX 4096 /* kept only to say why it failed */
#define HOOK_GRACE_S 1.0     /* at most, between SIGTERM and SIGKILL */

/* The verdict in an anonymous file, positioned at its start: the hook reads
 * it at its own pace and can never block nodegate on a full pipe. */
static int input_file(const char *json, char *note, size_t cap)
{
	int fd = memfd_create("nodegate-verdict", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(note, cap, "--on-verdict: not run: cannot hold its input: %s", strerror(errno));
		return -1;
	}
	size_t len = strlen(json), done = 0;
	while (done < len) {
		ssize_t n = write(fd, json + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(note, cap, "--on-verdict: not run: cannot hold its input: %s",
			         strerror(errno));
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(note, cap, "--on-verdict: not run: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int ng_land_hook_run(const char *cmd, const char *json, double timeout_s, char *note,
                     size_t cap)
{
	if (cap)
		note[0] = '\0';
	if (!cmd)
		return 0;
	char *copy = strdup(cmd);
	if (!copy) {
		snprintf(note, cap, "--on-verdict: not run: out of memory");
		return -1;
	}
	char *argv[NG_HOOK_MAX_ARGS + 1];
	size_t argc = 0;
	char *save = NULL;
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (argc == NG_HOOK_MAX_ARGS) {
			snprintf(note, cap, "--on-verdict: not run: more than %d words", NG_HOOK_MAX_ARGS);
			free(copy);
			return -1;
		}
		argv[argc++] = t;
	}
	argv[argc] = NULL;
	if (argc == 0) {
		free(copy);
		return 0;
	}
	int fd = input_file(json ? json : "", note, cap);
	if (fd < 0) {
		free(copy);
		return -1;
	}
	ng_spawn_result r;
	char errbuf[256] = "";
	/* timeout_s is the end, not the moment to start ending it: SIGTERM a
	 * little before, and SIGKILL to its whole process group at timeout_s,
	 * so a hook that ignores SIGTERM still ends on time. */
	double grace = timeout_s / 4 < HOOK_GRACE_S ? timeout_s / 4 : HOOK_GRACE_S;
	int rc = ng_spawn_capture_until(argv, fd, timeout_s, grace, HOOK_OUTPUT_MAX, &r, errbuf,
	                                sizeof errbuf);
	close(fd);
	if (rc < 0) {
		snprintf(note, cap, "--on-verdict %.200s: not run: %s", argv[0], errbuf);
		free(copy);
		return -1;
	}
	rc = 0;
	if (!r.spawned || r.timed_out || r.exit_status != 0) {
		char how[256];
		ng_spawn_describe(&r, how, sizeof how);
		/* The first line it wrote to standard error says why, when it said. */
		char why[160] = "";
		if (r.err && r.err_len) {
			size_t k = strcspn(r.err, "\n");
			snprintf(why, sizeof why, ": %.*s", (int)(k < 150 ? k : 150), r.err);
		}
		snprintf(note, cap, "--on-verdict %.200s: %s%s (the verdict stands)", argv[0], how, why);
		rc = -1;
	}
	ng_spawn_result_free(&r);
	free(copy);
	return rc;
}
