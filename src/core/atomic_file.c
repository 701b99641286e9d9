#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ng_write_file_atomic(const char *path, const void *data, size_t len, ng_err *err)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 32), *dir = strdup(path);
	if (!tmp || !dir) {
		free(tmp);
		free(dir);
		return ng_fail(err, "out of memory writing %s", path);
	}
	snprintf(tmp, n + 32, "%s.tmp.%ld", path, (long)getpid());
	int rc = -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ng_fail(err, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		ng_fail(err, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		ng_fail(err, "cannot put %s in place: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	/* The rename itself is durable only once the directory is synced. */
	int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	free(tmp);
	free(dir);
	return rc;
}
