/* The one safe writer (atomic_file.h). */
#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_TRIES 16 /* a random name taken 16 times running is not chance */

int ng_random_u64(unsigned long long *out)
{
	size_t got = 0;
	unsigned char *p = (unsigned char *)out;
	while (got < sizeof *out) {
		ssize_t n = getrandom(p + got, sizeof *out - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

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

/* Who besides this user (and root) can change names in the directory:
 * everyone, another group, and (owner_too) another owner. */
static int check_dir(int dir_fd, const char *dir, bool owner_too, ng_err *err)
{
	struct stat st;
	if (fstat(dir_fd, &st) < 0)
		return ng_fail(err, "cannot examine the directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return ng_fail(err, "%s is not a directory", dir);
	/* A sticky directory lets each user remove or rename only their own
	 * names: planted ones are refused below, and ours stay ours. */
	if (st.st_mode & S_ISVTX)
		return 0;
	uid_t me = geteuid();
	const char *who = NULL;
	char owner[64];
	if (st.st_mode & S_IWOTH) {
		who = "every user";
	} else if ((st.st_mode & S_IWGRP) && st.st_gid != getegid() && st.st_gid != 0) {
		snprintf(owner, sizeof owner, "the members of group %ld", (long)st.st_gid);
		who = owner;
	} else if (owner_too && (st.st_mode & S_IWUSR) && st.st_uid != me && st.st_uid != 0) {
		snprintf(owner, sizeof owner, "its owner (uid %ld)", (long)st.st_uid);
		who = owner;
	}
	if (!who)
		return 0;
	return ng_fail(err, "refusing to write in %s: %s can write it, and could swap a name in it "
	                    "for a link to another file; use a directory only you (or root) can "
	                    "write, or make it sticky (chmod +t) as /tmp is",
	               dir, who);
}

int ng_atomic_check_dir(int dir_fd, const char *dir, ng_err *err)
{
	return check_dir(dir_fd, dir, true, err);
}

/* Refuses a target that is not a regular file (or not there yet). */
static int check_target(int dir_fd, const char *name, const char *path, ng_err *err)
{
	struct stat st;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return ng_fail(err, "cannot examine %s: %s", path, strerror(errno));
	}
	if (S_ISREG(st.st_mode))
		return 0;
	const char *what = S_ISLNK(st.st_mode)    ? "a symbolic link"
	                   : S_ISFIFO(st.st_mode) ? "a FIFO"
	                   : S_ISCHR(st.st_mode)  ? "a character device"
	                   : S_ISBLK(st.st_mode)  ? "a block device"
	                   : S_ISSOCK(st.st_mode) ? "a socket"
	                   : S_ISDIR(st.st_mode)  ? "a directory"
	                                          : "not a regular file";
	return ng_fail(err, "refusing to write %s: it is %s, and nodegate replaces only regular "
	                    "files (it never writes through a link or into a device); remove it or "
	                    "name another file",
	               path, what);
}

/* Splits path into its directory (opened) and the name inside it. */
static int open_dir(ng_atomic_file *f, const char *path, ng_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return ng_fail(err, "cannot write %s: it names a directory, not a file", path);
	if (strlen(name) > 255)
		return ng_fail(err, "cannot write %s: its name is longer than 255 bytes", path);
	char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	f->path = strdup(path);
	f->name = strdup(name);
	if (!dir || !f->path || !f->name) {
		free(dir);
		return ng_fail(err, "out of memory writing %s", path);
	}
	const char *d = slash && slash == path ? "/" : dir;
	/* The directory named may itself be a link someone else planted (a
	 * --raw-dir or --textfile in /tmp pointing at a directory of root's):
	 * a link is followed only when this user or root made it, the rule
	 * the kernel's protected_symlinks keeps in sticky directories. */
	struct stat link;
	if (lstat(d, &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != geteuid() &&
	    link.st_uid != 0) {
		ng_fail(err, "refusing to write %s: its directory %s is a symbolic link made by uid "
		             "%ld, not by this user or root; name the real directory",
		        path, d, (long)link.st_uid);
		free(dir);
		return -1;
	}
	f->dir_fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;
	if (f->dir_fd < 0)
		rc = ng_fail(err, "cannot write %s: cannot open its directory %s: %s", path, d,
		             strerror(errno));
	else
		/* A directory another user owns is allowed (a node exporter's
		 * textfile directory often is): the temporary is ours by O_EXCL,
		 * and the rename replaces a name, never writes through one. One
		 * everybody, or a whole other group, can write is refused. */
		rc = check_dir(f->dir_fd, d, false, err);
	free(dir);
	return rc;
}

static void release(ng_atomic_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	free(f->path);
	free(f->name);
	f->fd = f->dir_fd = -1;
	f->path = f->name = NULL;
}

int ng_atomic_begin(ng_atomic_file *f, const char *path, mode_t mode, ng_err *err)
{
	*f = (ng_atomic_file){.fd = -1, .dir_fd = -1};
	if (open_dir(f, path, err) < 0 || check_target(f->dir_fd, f->name, path, err) < 0) {
		release(f);
		return -1;
	}
	/* O_EXCL|O_NOFOLLOW: the name is new, made here, by us; a link or a
	 * FIFO someone guessed it with is never opened (EEXIST: draw again). */
	for (int i = 0; i < TMP_TRIES; i++) {
		unsigned long long r;
		if (ng_random_u64(&r) < 0) {
			ng_fail(err, "cannot write %s: no random numbers from the kernel: %s", path,
			        strerror(errno));
			release(f);
			return -1;
		}
		snprintf(f->tmp, sizeof f->tmp, ".%.240s.%016llx.tmp", f->name, r);
		f->fd = openat(f->dir_fd, f->tmp,
		               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
		if (f->fd >= 0 || errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		ng_fail(err, "cannot create a temporary file beside %s: %s", path, strerror(errno));
		release(f);
		return -1;
	}
	/* O_NONBLOCK only guarded the open; writes to a regular file block anyway. */
	int fl = fcntl(f->fd, F_GETFL);
	if (fl >= 0)
		fcntl(f->fd, F_SETFL, fl & ~O_NONBLOCK);
	return 0;
}

void ng_atomic_abort(ng_atomic_file *f)
{
	if (f->dir_fd >= 0 && f->tmp[0])
		unlinkat(f->dir_fd, f->tmp, 0);
	release(f);
}

int ng_atomic_commit(ng_atomic_file *f, ng_err *err)
{
	if (fsync(f->fd) < 0) {
		ng_fail(err, "cannot write %s: %s", f->path, strerror(errno));
		ng_atomic_abort(f);
		return -1;
	}
	int rc = close(f->fd);
	f->fd = -1;
	if (rc < 0) {
		ng_fail(err, "cannot write %s: %s", f->path, strerror(errno));
		ng_atomic_abort(f);
		return -1;
	}
	/* Checked again just before: what stood there a moment ago may have
	 * been swapped. The rename cannot follow a link either way; this is so
	 * the operator hears of it rather than finding a link gone. */
	if (check_target(f->dir_fd, f->name, f->path, err) < 0) {
		ng_atomic_abort(f);
		return -1;
	}
	if (renameat(f->dir_fd, f->tmp, f->dir_fd, f->name) < 0) {
		ng_fail(err, "cannot put %s in place: %s", f->path, strerror(errno));
		ng_atomic_abort(f);
		return -1;
	}
	f->tmp[0] = '\0';
	/* The rename itself is durable only once the directory is synced. */
	fsync(f->dir_fd);
	release(f);
	return 0;
}

FILE *ng_atomic_fopen(ng_atomic_file *f, const char *path, mode_t mode, ng_err *err)
{
	if (ng_atomic_begin(f, path, mode, err) < 0)
		return NULL;
	/* The stream gets its own descriptor: closing it leaves f->fd for the
	 * fsync and the commit. */
	int fd = dup(f->fd);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!fp) {
		ng_fail(err, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		ng_atomic_abort(f);
	}
	return fp;
}

int ng_atomic_fclose(ng_atomic_file *f, FILE *fp, bool commit, ng_err *err)
{
	bool ok = !ferror(fp);
	int saved = errno;
	if (fclose(fp) != 0) {
		ok = false;
		saved = errno;
	}
	if (!commit) {
		ng_atomic_abort(f);
		return 0;
	}
	if (!ok) {
		ng_fail(err, "cannot write %s: %s", f->path, strerror(saved));
		ng_atomic_abort(f);
		return -1;
	}
	return ng_atomic_commit(f, err);
}

int ng_write_file_atomic_mode(const char *path, const void *data, size_t len, mode_t mode,
                              ng_err *err)
{
	ng_atomic_file f;
	if (ng_atomic_begin(&f, path, mode, err) < 0)
		return -1;
	if (write_all(f.fd, data, len) < 0) {
		ng_fail(err, "cannot write %s: %s", path, strerror(errno));
		ng_atomic_abort(&f);
		return -1;
	}
	return ng_atomic_commit(&f, err);
}

int ng_write_file_atomic(const char *path, const void *data, size_t len, ng_err *err)
{
	return ng_write_file_atomic_mode(path, data, len, 0644, err);
}

int ng_open_lock_file(const char *path, ng_err *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return ng_fail(err, "cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ng_fail(err, "%s is not a regular file", path);
	}
	if (st.st_nlink != 1 || st.st_uid != geteuid()) {
		close(fd);
		return ng_fail(err, "%s is not this user's own lock file (%ju links, owner %ju): "
		                    "remove it", path, (uintmax_t)st.st_nlink, (uintmax_t)st.st_uid);
	}
	return fd;
}
