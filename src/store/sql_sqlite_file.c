/* The SQLite store's file before SQLite opens it: what is at the path is
 * checked (a database, not a link, a FIFO or another program's file), and a
 * missing one is made whole under a temporary name and linked into place,
 * so two nodegates creating it at once both end with the same store. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "store/sql_sqlite_internal.h"

/* ---- the file, before SQLite sees it --------------------------------------------- */

/* The first 16 bytes of every SQLite database file. */
static const char sqlite_magic[16] = "SQLite format 3";

static int not_a_store(struct sq_db *d, ng_err *err, const char *why)
{
	d->last = NG_SQL_E_CORRUPT;
	return ng_fail_as(err, NG_ERR_STORE, "%s is not a nodegate store: %s; nodegate makes a new store only where "
	                    "no file is: move it aside or name another path",
	               d->path, why);
}

/* A file that is there already must be a database: SQLite would take an
 * empty one for a new database and make it one, and would open a FIFO
 * (and wait) or a device. */
static int check_existing(struct sq_db *d, int fd, ng_err *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot examine %s: %s", d->path, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return not_a_store(d, err, "it is a directory");
	if (!S_ISREG(st.st_mode))
		return not_a_store(d, err, S_ISFIFO(st.st_mode) ? "it is a FIFO, not a file"
		                           : S_ISSOCK(st.st_mode) ? "it is a socket, not a file"
		                                                  : "it is a device, not a file");
	if (st.st_size == 0)
		return not_a_store(d, err, "it is an empty file (0 bytes)");
	char head[sizeof sqlite_magic];
	ssize_t n = pread(fd, head, sizeof head, 0);
	if (n < 0) {
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot read %s: %s", d->path, strerror(errno));
	}
	if ((size_t)n < sizeof head || memcmp(head, sqlite_magic, sizeof head) != 0)
		return not_a_store(d, err, "file is not a database (it does not begin as an SQLite "
		                           "database does)");
	return 0;
}

/* A new store: made whole under a random name beside it (0600: it holds
 * evidence; SQLite gives its -wal and -shm the database's mode), then
 * linked into place, which fails rather than replace anything. So the
 * store's path never holds an empty file, not even for a moment, and a
 * second nodegate opening the same new path at the same time finds either
 * nothing (and makes its own, which loses the race to link) or a database. */
static int create_new(struct sq_db *d, int dir_fd, const char *dir, const char *name,
                      ng_err *err)
{
	char tmp[320], tmp_path[4096 + 1 + sizeof tmp];
	int fd = -1;
	for (int i = 0; i < 16 && fd < 0; i++) {
		unsigned long long r;
		if (ng_random_u64(&r) < 0)
			break;
		snprintf(tmp, sizeof tmp, ".%.200s.%016llx.new", name, r);
		fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		d->last = errno == EACCES || errno == EROFS || errno == EPERM ? NG_SQL_E_READONLY
		                                                               : NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot create %s: %s: its directory may not be writable", d->path,
		               strerror(errno));
	}
	close(fd);
	snprintf(tmp_path, sizeof tmp_path, "%s/%s", dir, tmp);
	sqlite3 *h = NULL;
	int rc = sqlite3_open_v2(tmp_path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	/* WAL mode is what the store runs in, and setting it writes the first
	 * page: the file is a database from here on. */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		int e = h ? sqlite3_extended_errcode(h) : rc;
		char say[200];
		snprintf(say, sizeof say, "%s", h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
		sqlite3_close_v2(h);
		unlinkat(dir_fd, tmp, 0);
		d->last = ng_sq_classify(NULL, e);
		return ng_fail_as(err, NG_ERR_STORE, "cannot create %s (SQLite says: %s)", d->path, say);
	}
	sqlite3_close_v2(h);
	int linked = linkat(dir_fd, tmp, dir_fd, name, 0);
	int why = errno;
	if (linked < 0 && why != EEXIST) {
		/* A filesystem without hard links: renameat2 would not replace
		 * either, where it exists; failing that, a rename after a check. */
		linked = renameat2(dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE);
		why = errno;
		if (linked < 0 && (why == EINVAL || why == ENOSYS)) {
			struct stat st;
			linked = fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
			             ? (errno = EEXIST, -1)
			             : renameat(dir_fd, tmp, dir_fd, name);
			why = errno;
		}
	}
	unlinkat(dir_fd, tmp, 0);
	if (linked < 0 && why != EEXIST) {
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot put the new store %s in place: %s", d->path, strerror(why));
	}
	fsync(dir_fd);
	return 0; /* made here, or by another nodegate a moment before: either way a database */
}

/* Before SQLite opens path: its directory must not let anyone else swap
 * names in it (SQLite opens path-wal and path-shm by name, and truncates the
 * -shm through whatever stands there), a link at path must be this user's
 * or root's, what is there must be a database, and a missing store is made
 * as create_new says. */
int ng_sq_prepare_file(struct sq_db *d, ng_err *err)
{
	const char *slash = strrchr(d->path, '/');
	const char *name = slash ? slash + 1 : d->path;
	char dir[4096];
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == d->path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - d->path), d->path);
	if (!*name) {
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "%s names a directory: name the store's file", d->path);
	}
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		d->last = NG_SQL_E_READONLY;
		return ng_fail_as(err, NG_ERR_STORE, "cannot open %s (%s, its directory: %s): its directory may not "
		                    "exist or may not be writable",
		               d->path, dir, strerror(errno));
	}
	ng_err why;
	int rc = ng_atomic_check_dir(dir_fd, dir, &why);
	if (rc < 0) {
		d->last = NG_SQL_E_OTHER;
		ng_fail_as(err, NG_ERR_STORE, "cannot use the store %s: %s", d->path, why.msg);
	}
	for (int attempt = 0; rc == 0 && attempt < 3; attempt++) {
		struct stat ln;
		if (fstatat(dir_fd, name, &ln, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ln.st_mode) &&
		    ln.st_uid != geteuid() && ln.st_uid != 0) {
			d->last = NG_SQL_E_OTHER;
			rc = ng_fail_as(err, NG_ERR_STORE, "refusing the store %s: it is a symbolic link made by uid %ld, "
			                  "not by this user or root; name the file it points to",
			             d->path, (long)ln.st_uid);
			break;
		}
		/* O_NONBLOCK: a FIFO planted at the path is opened and refused,
		 * not waited on. */
		int fd = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			rc = check_existing(d, fd, err);
			close(fd);
			break;
		}
		if (errno != ENOENT) {
			d->last = errno == EACCES ? NG_SQL_E_READONLY : NG_SQL_E_OTHER;
			rc = ng_fail_as(err, NG_ERR_STORE, "cannot open %s: %s", d->path, strerror(errno));
			break;
		}
		/* Made here (or by another nodegate at the same moment): examined
		 * like any other on the next turn. */
		rc = create_new(d, dir_fd, dir, name, err);
	}
	close(dir_fd);
	return rc;
}

