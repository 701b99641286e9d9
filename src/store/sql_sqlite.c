/* The SQL interface over an embedded SQLite file.
 *
 * One connection per process is the intended use (the handle is opened
 * NOMUTEX); concurrency between processes is SQLite's own: WAL mode, so
 * readers never block the writer, BEGIN IMMEDIATE for writers, and a busy
 * timeout so a second writer waits its turn instead of failing at once. */
#include "store/sql.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "store/sql_sqlite_internal.h"
#include "store/sqlite_lib.h"

/* How long a writer waits for the store, in the queue and then for
 * SQLite's lock. Sized from `make stress` (tests/store/stress_writers.py):
 * 64 nodegate ingests writing one store at once on a loaded two-core
 * machine, the slowest command took 1.0 s with 20-record batches and 4.5 s
 * with 500-record ones (without the queue: 11.2 s, and 6 of 512 failed at
 * the old 10 s). 30 s leaves several times that, so a burst of a host's
 * hooks waits its turn instead of failing. */
#define BUSY_TIMEOUT_MS 30000
#define QUEUE_COUNTER_BYTES 8 /* the ticket counter, then one byte per ticket */


struct sq_stmt {
	ng_sql_stmt base;
	sqlite3_stmt *h;
	/* A bind that failed, reported by the next step: callers rarely check
	 * each bind, and a statement run with a missing value must not pass. */
	int bind_rc;
	int bind_index;
	/* It ran to the end. SQLite would start it over at the next step (and
	 * insert twice); it stays done until reset, as in PostgreSQL. */
	bool done;
};

static struct sq_db *db_of(ng_sql *db) { return (struct sq_db *)db; }
static struct sq_stmt *stmt_of(ng_sql_stmt *st) { return (struct sq_stmt *)st; }


/* SQLite reports a full disk as SQLITE_FULL, but a failed write(2) or
 * fsync(2) can surface as SQLITE_IOERR with the OS's errno behind it. */
ng_sql_error ng_sq_classify(sqlite3 *h, int rc)
{
	int sys = h ? sqlite3_system_errno(h) : 0;
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return NG_SQL_E_BUSY;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return NG_SQL_E_CORRUPT;
	case SQLITE_FULL:
		return NG_SQL_E_FULL;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
		return NG_SQL_E_READONLY;
	case SQLITE_CONSTRAINT:
		return NG_SQL_E_CONSTRAINT;
	case SQLITE_IOERR:
		/* EFBIG: a file-size limit (ulimit -f) or the filesystem's
		 * largest file. Either way no more fits where the store is. */
		if (sys == ENOSPC || sys == EDQUOT || sys == EFBIG)
			return NG_SQL_E_FULL;
		if (sys == EROFS || sys == EACCES || sys == EPERM)
			return NG_SQL_E_READONLY;
		return NG_SQL_E_OTHER;
	default:
		return NG_SQL_E_OTHER;
	}
}

/* Records the class of rc on the connection and fills err with what failed
 * while doing what, and what the operator can do about it. */
static int sq_fail(struct sq_db *d, ng_err *err, int rc, const char *doing)
{
	const char *say = d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc);
	d->last = ng_sq_classify(d->h, rc);
	switch (d->last) {
	case NG_SQL_E_BUSY:
		return ng_fail_as(err, NG_ERR_STORE, "%s is locked by another writer for more than %d s (SQLite "
		                    "says: %s, while %s): try again once it has finished",
		               d->path, BUSY_TIMEOUT_MS / 1000, say, doing);
	case NG_SQL_E_CORRUPT:
		return ng_fail_as(err, NG_ERR_STORE, "%s is damaged (SQLite says: %s, while %s): restore it from a "
		                    "backup or move it aside",
		               d->path, say, doing);
	case NG_SQL_E_FULL:
		if (sqlite3_system_errno(d->h) == EFBIG)
			return ng_fail_as(err, NG_ERR_STORE, "%s cannot grow: the file is at a size limit (ulimit -f, "
			                    "or the filesystem's largest file); nothing was written "
			                    "(SQLite says: %s, while %s)",
			               d->path, say, doing);
		return ng_fail_as(err, NG_ERR_STORE, "no space left on the device holding %s: free space, nothing "
		                    "was written (SQLite says: %s, while %s)",
		               d->path, say, doing);
	case NG_SQL_E_READONLY:
		if ((rc & 0xff) == SQLITE_CANTOPEN)
			return ng_fail_as(err, NG_ERR_STORE, "cannot open %s (SQLite says: %s, while %s): its "
			                    "directory may not exist or may not be writable",
			               d->path, say, doing);
		return ng_fail_as(err, NG_ERR_STORE, "cannot write %s (SQLite says: %s, while %s): check the "
		                    "permissions of the file and its directory, and that the "
		                    "filesystem is mounted read-write",
		               d->path, say, doing);
	case NG_SQL_E_CONSTRAINT:
		return ng_fail_as(err, NG_ERR_STORE, "%s refused the row (SQLite says: %s, while %s)", d->path, say,
		               doing);
	default:
		return ng_fail_as(err, NG_ERR_STORE, "SQLite failed on %s (%s, while %s)", d->path, say, doing);
	}
}

static int sq_fail_sql(struct sq_db *d, ng_err *err, int rc, const char *sql)
{
	if (!sqlite3_get_autocommit(d->h))
		d->tx_failed = true;
	char what[96], doing[128];
	ng_sql_snippet(sql, what, sizeof what);
	snprintf(doing, sizeof doing, "running `%s`", what);
	return sq_fail(d, err, rc, doing);
}

static int sq_exec(ng_sql *db, const char *sql, ng_err *err)
{
	struct sq_db *d = db_of(db);
	int rc = sqlite3_exec(d->h, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : sq_fail_sql(d, err, rc, sql);
}

/* True when what follows a statement is only blanks and comments. */
static bool only_comments(sqlite3 *h, const char *tail)
{
	sqlite3_stmt *rest = NULL;
	int rc = sqlite3_prepare_v2(h, tail, -1, &rest, NULL);
	bool empty = rc == SQLITE_OK && !rest;
	sqlite3_finalize(rest);
	return empty;
}

static int sq_prepare(ng_sql *db, const char *sql, ng_sql_stmt **out, ng_err *err)
{
	struct sq_db *d = db_of(db);
	*out = NULL;
	sqlite3_stmt *h = NULL;
	const char *tail = NULL;
	for (size_t i = 0; i < d->n_cache; i++) {
		if (strcmp(sqlite3_sql(d->cache[i]), sql) == 0) {
			h = d->cache[i];
			d->cache[i] = d->cache[--d->n_cache];
			break;
		}
	}
	/* Statements are often kept for a loop of inserts; PERSISTENT keeps
	 * them out of the small lookaside pool the connection needs for itself. */
	int rc = h ? SQLITE_OK : sqlite3_prepare_v3(d->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &h, &tail);
	if (rc != SQLITE_OK)
		return sq_fail_sql(d, err, rc, sql);
	if (!h || (tail && *tail && !only_comments(d->h, tail))) {
		/* Anything after the first statement would silently never run. */
		char what[96];
		ng_sql_snippet(sql, what, sizeof what);
		sqlite3_finalize(h);
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot prepare `%s`: %s", what,
		               h ? "it holds more than one statement (use exec for that)"
		                 : "it holds no statement");
	}
	struct sq_stmt *s = calloc(1, sizeof *s);
	if (!s) {
		sqlite3_finalize(h);
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "out of memory preparing a statement on %s", d->path);
	}
	s->base.db = db;
	s->h = h;
	*out = &s->base;
	return 0;
}

static int bound(struct sq_stmt *s, int i, int rc)
{
	if (rc == SQLITE_OK)
		return 0;
	if (s->bind_rc == SQLITE_OK) {
		s->bind_rc = rc;
		s->bind_index = i;
	}
	db_of(s->base.db)->last = ng_sq_classify(NULL, rc);
	return -1;
}

static int sq_bind_null(ng_sql_stmt *st, int i)
{
	return bound(stmt_of(st), i, sqlite3_bind_null(stmt_of(st)->h, i));
}

static int sq_bind_int64(ng_sql_stmt *st, int i, int64_t v)
{
	return bound(stmt_of(st), i, sqlite3_bind_int64(stmt_of(st)->h, i, v));
}

/* SQLite stores a NaN REAL as NULL; as text it survives, and column_double
 * reads it back, so a NaN round-trips as it does in PostgreSQL. */
static int sq_bind_double(ng_sql_stmt *st, int i, double v)
{
	struct sq_stmt *s = stmt_of(st);
	if (isnan(v))
		return bound(s, i, sqlite3_bind_text(s->h, i, "NaN", 3, SQLITE_STATIC));
	return bound(s, i, sqlite3_bind_double(s->h, i, v));
}

static int sq_bind_text(ng_sql_stmt *st, int i, const char *v)
{
	struct sq_stmt *s = stmt_of(st);
	if (!v)
		return bound(s, i, sqlite3_bind_null(s->h, i));
	return bound(s, i, sqlite3_bind_text(s->h, i, v, -1, SQLITE_TRANSIENT));
}

static int sq_bind_blob(ng_sql_stmt *st, int i, const void *v, size_t len)
{
	struct sq_stmt *s = stmt_of(st);
	/* A zero-length blob is still a blob, not NULL: bind_zeroblob says so
	 * without a pointer that may be NULL. */
	if (len == 0)
		return bound(s, i, sqlite3_bind_zeroblob(s->h, i, 0));
	return bound(s, i, sqlite3_bind_blob64(s->h, i, v, len, SQLITE_TRANSIENT));
}

static int sq_step(ng_sql_stmt *st, ng_err *err)
{
	struct sq_stmt *s = stmt_of(st);
	struct sq_db *d = db_of(st->db);
	if (s->bind_rc != SQLITE_OK) {
		char what[96];
		ng_sql_snippet(sqlite3_sql(s->h), what, sizeof what);
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot bind parameter %d of `%s`: %s", s->bind_index, what,
		               sqlite3_errstr(s->bind_rc));
	}
	if (s->done)
		return 0;
	int rc = sqlite3_step(s->h);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE) {
		s->done = true;
		return 0;
	}
	return sq_fail_sql(d, err, rc, sqlite3_sql(s->h));
}

static bool sq_column_is_null(ng_sql_stmt *st, int col)
{
	return sqlite3_column_type(stmt_of(st)->h, col) == SQLITE_NULL;
}

static int64_t sq_column_int64(ng_sql_stmt *st, int col)
{
	return sqlite3_column_int64(stmt_of(st)->h, col);
}

static double sq_column_double(ng_sql_stmt *st, int col)
{
	sqlite3_stmt *h = stmt_of(st)->h;
	/* A NaN was kept as text (see sq_bind_double); SQLite's own conversion
	 * would read it as 0.0. */
	if (sqlite3_column_type(h, col) == SQLITE_TEXT) {
		const char *t = (const char *)sqlite3_column_text(h, col);
		return t ? strtod(t, NULL) : 0.0;
	}
	return sqlite3_column_double(h, col);
}

static const char *sq_column_text(ng_sql_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(stmt_of(st)->h, col);
}

static const void *sq_column_blob(ng_sql_stmt *st, int col, size_t *len)
{
	sqlite3_stmt *h = stmt_of(st)->h;
	/* The pointer first, then its size: SQLite's documented order. */
	const void *p = sqlite3_column_blob(h, col);
	int n = sqlite3_column_bytes(h, col);
	*len = p && n > 0 ? (size_t)n : 0;
	return p && n > 0 ? p : "";
}

static void sq_reset(ng_sql_stmt *st)
{
	/* The error of the last step was already reported there. */
	sqlite3_reset(stmt_of(st)->h);
	stmt_of(st)->done = false;
}

static void sq_finalize(ng_sql_stmt *st)
{
	struct sq_db *d = db_of(st->db);
	sqlite3_stmt *h = stmt_of(st)->h;
	/* Reset, its values cleared, it is as new for the next prepare. */
	if (d->n_cache < SQ_CACHE_MAX && sqlite3_reset(h) == SQLITE_OK &&
	    sqlite3_clear_bindings(h) == SQLITE_OK)
		d->cache[d->n_cache++] = h;
	else
		sqlite3_finalize(h);
	free(st);
}

static int run(struct sq_db *d, const char *sql, const char *doing, ng_err *err)
{
	int rc = sqlite3_exec(d->h, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : sq_fail(d, err, rc, doing);
}

static int begin(struct sq_db *d, const char *sql, const char *doing, ng_err *err)
{
	if (run(d, sql, doing, err) < 0)
		return -1;
	d->tx_failed = false;
	return 0;
}

/* ---- the writers' queue ---------------------------------------------------------------
 *
 * SQLite's busy handler is not a queue: a writer that has waited a while
 * sleeps longer between tries (up to 100 ms), and a newcomer that tries every
 * millisecond takes the lock first. With 64 writers some waited past the
 * whole timeout while the median took 0.15 s. So writers line up first, in
 * the order they came, in a file beside the store (PATH-queue):
 *
 *   1. under flock, take the next ticket from the counter at the file's
 *      start, and lock the ticket's byte (an OFD lock, non-blocking: it is
 *      new);
 *   2. wait until the byte of the ticket before is free: that writer has
 *      committed, rolled back, or died (the kernel drops a dead process's
 *      locks, so a SIGKILLed writer never blocks the queue);
 *   3. BEGIN IMMEDIATE as before, and release the byte after COMMIT or
 *      ROLLBACK, which lets the next one go.
 *
 * The queue only orders nodegate's writers; SQLite's lock still decides,
 * so a queue that cannot be used (a read-only directory, a filesystem
 * without OFD locks, a writer stuck past the timeout) costs fairness, never
 * correctness: the writer goes on to BEGIN IMMEDIATE. */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool ofd_lock(int fd, int cmd, short type, int64_t byte)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET,
	                   .l_start = (off_t)(QUEUE_COUNTER_BYTES + byte), .l_len = 1};
	return fcntl(fd, cmd, &fl) == 0;
}

static void queue_open(struct sq_db *d)
{
	char path[4200];
	d->queue_fd = -1;
	d->ticket = -1;
	if (snprintf(path, sizeof path, "%s-queue", d->path) >= (int)sizeof path)
		return;
	/* 0600 like the store: prepare_file has checked the directory, and a
	 * name planted here is refused like any other (no queue: SQLite's own
	 * busy handler alone). */
	ng_err ignored;
	d->queue_fd = ng_open_lock_file(path, &ignored);
}

static void queue_leave(struct sq_db *d)
{
	if (d->queue_fd >= 0 && d->ticket >= 0)
		ofd_lock(d->queue_fd, F_OFD_SETLK, F_UNLCK, d->ticket);
	d->ticket = -1;
}

/* The connection's busy timeout as it stands (a caller may have set its
 * own with PRAGMA busy_timeout): the queue and SQLite's lock share it. */
static int busy_timeout_ms(struct sq_db *d)
{
	sqlite3_stmt *h = NULL;
	int ms = BUSY_TIMEOUT_MS;
	if (sqlite3_prepare_v2(d->h, "PRAGMA busy_timeout", -1, &h, NULL) == SQLITE_OK &&
	    sqlite3_step(h) == SQLITE_ROW)
		ms = sqlite3_column_int(h, 0);
	sqlite3_finalize(h);
	return ms;
}

/* Waits its turn; returns the milliseconds waited. */
static int queue_enter(struct sq_db *d, int limit_ms)
{
	if (d->queue_fd < 0 || d->ticket >= 0)
		return 0;
	if (flock(d->queue_fd, LOCK_EX) < 0)
		return 0;
	uint64_t next = 0;
	bool ok = pread(d->queue_fd, &next, sizeof next, 0) >= 0 && next < INT64_MAX / 2;
	if (ok) {
		uint64_t after = next + 1;
		ok = pwrite(d->queue_fd, &after, sizeof after, 0) == (ssize_t)sizeof after &&
		     ofd_lock(d->queue_fd, F_OFD_SETLK, F_WRLCK, (int64_t)next);
	} else {
		/* An unreadable counter (or one near its end): start it over. */
		uint64_t zero = 0;
		if (pwrite(d->queue_fd, &zero, sizeof zero, 0) < 0)
			zero = 0;
	}
	flock(d->queue_fd, LOCK_UN);
	if (!ok)
		return 0;
	d->ticket = (int64_t)next;
	if (next == 0)
		return 0;
	/* The one before: poll its byte (an F_OFD_SETLKW cannot be given a
	 * timeout), briefly at first since most waits are one transaction. */
	int64_t before = (int64_t)next - 1;
	long nap_us = 200;
	double start = now_ms();
	for (;;) {
		if (ofd_lock(d->queue_fd, F_OFD_SETLK, F_RDLCK, before)) {
			ofd_lock(d->queue_fd, F_OFD_SETLK, F_UNLCK, before);
			break;
		}
		if (errno != EAGAIN && errno != EACCES)
			break; /* no OFD locks here: no queue, SQLite's lock alone */
		if (now_ms() - start >= limit_ms)
			break;
		usleep((useconds_t)nap_us);
		if (nap_us < 2000)
			nap_us *= 2;
	}
	return (int)(now_ms() - start);
}

static int sq_begin_write(ng_sql *db, ng_err *err)
{
	struct sq_db *d = db_of(db);
	if (d->batch)
		return begin(d, "SAVEPOINT ng_tx", "starting a write transaction", err);
	int limit = busy_timeout_ms(d);
	int waited = queue_enter(d, limit);
	/* What is left of the timeout for SQLite's own lock, so the whole wait
	 * is the timeout the message names. */
	if (waited > 0)
		sqlite3_busy_timeout(d->h, limit - waited > 1 ? limit - waited : 1);
	int rc = begin(d, "BEGIN IMMEDIATE", "starting a write transaction", err);
	if (waited > 0)
		sqlite3_busy_timeout(d->h, limit);
	if (rc < 0)
		queue_leave(d);
	return rc;
}

static int sq_begin_read(ng_sql *db, ng_err *err)
{
	struct sq_db *d = db_of(db);
	return begin(d, d->batch ? "SAVEPOINT ng_tx" : "BEGIN", "starting a read transaction", err);
}

static void sq_rollback(ng_sql *db)
{
	struct sq_db *d = db_of(db);
	d->rollbacks++;
	if (d->batch) {
		/* Undoes the savepoint's writes only; the batch goes on, unless
		 * SQLite has already rolled the whole of it back after an error
		 * (ng_sql_sqlite_batch's end then says so). */
		if (!sqlite3_get_autocommit(d->h))
			sqlite3_exec(d->h, "ROLLBACK TO ng_tx; RELEASE ng_tx", NULL, NULL, NULL);
		d->tx_failed = false;
		return;
	}
	/* SQLite rolls back by itself after some errors (a full disk, an I/O
	 * error); then there is nothing left to undo. */
	if (!sqlite3_get_autocommit(d->h))
		sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
	d->tx_failed = false;
	queue_leave(d);
}

static int sq_commit(ng_sql *db, ng_err *err)
{
	struct sq_db *d = db_of(db);
	if (d->tx_failed && !sqlite3_get_autocommit(d->h)) {
		sq_rollback(db);
		return ng_fail_as(err, NG_ERR_STORE, "cannot commit on %s: a statement in the transaction had "
		                    "failed, so it was rolled back; nothing was written",
		               d->path);
	}
	int rc = sqlite3_exec(d->h, d->batch ? "RELEASE ng_tx" : "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
		queue_leave(d);
		return 0;
	}
	/* The message is taken before the rollback replaces SQLite's. */
	sq_fail(d, err, rc, "committing");
	sq_rollback(db);
	return -1;
}

static ng_sql_error sq_last_error(ng_sql *db) { return db_of(db)->last; }

static void sq_close(ng_sql *db)
{
	struct sq_db *d = db_of(db);
	for (size_t i = 0; i < d->n_cache; i++)
		sqlite3_finalize(d->cache[i]);
	/* close_v2: statements a caller forgot to finalize do not keep the
	 * file open forever, they end it when they go. */
	sqlite3_close_v2(d->h);
	queue_leave(d);
	if (d->queue_fd >= 0)
		close(d->queue_fd);
	free(d->path);
	free(d);
}

static const struct ng_sql_ops sqlite_ops = {
	.kind = NG_SQL_SQLITE,
	.exec = sq_exec,
	.prepare = sq_prepare,
	.bind_null = sq_bind_null,
	.bind_int64 = sq_bind_int64,
	.bind_double = sq_bind_double,
	.bind_text = sq_bind_text,
	.bind_blob = sq_bind_blob,
	.step = sq_step,
	.column_is_null = sq_column_is_null,
	.column_int64 = sq_column_int64,
	.column_double = sq_column_double,
	.column_text = sq_column_text,
	.column_blob = sq_column_blob,
	.reset = sq_reset,
	.finalize = sq_finalize,
	.begin_write = sq_begin_write,
	.begin_read = sq_begin_read,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.last_error = sq_last_error,
	.close = sq_close,
};

/* PRAGMA journal_mode answers with the mode it ended in, which is not WAL
 * when the file cannot have one (a read-only directory, some network
 * filesystems); the store's concurrency rests on WAL, so that is an error. */
static int set_wal(struct sq_db *d, ng_err *err)
{
	sqlite3_stmt *h = NULL;
	int rc = sqlite3_prepare_v2(d->h, "PRAGMA journal_mode=WAL", -1, &h, NULL);
	/* Changing the journal mode of a new file needs it to itself, and
	 * SQLite answers BUSY at once, without its busy handler, when another
	 * process is opening the same new file: wait for it here instead, as
	 * long as the busy timeout. */
	for (int waited_ms = 0; rc == SQLITE_OK || (rc & 0xff) == SQLITE_BUSY; waited_ms += 5) {
		if (rc != SQLITE_OK) {
			if (waited_ms >= BUSY_TIMEOUT_MS)
				break;
			sqlite3_reset(h);
			sqlite3_sleep(5);
		}
		rc = sqlite3_step(h);
		if (rc == SQLITE_ROW)
			break;
	}
	if (rc != SQLITE_ROW) {
		sq_fail(d, err, rc, "switching to WAL mode");
		sqlite3_finalize(h);
		return -1;
	}
	const char *mode = (const char *)sqlite3_column_text(h, 0);
	char got[32];
	snprintf(got, sizeof got, "%s", mode ? mode : "none");
	sqlite3_finalize(h);
	if (strcasecmp(got, "wal") == 0)
		return 0;
	d->last = NG_SQL_E_READONLY;
	return ng_fail_as(err, NG_ERR_STORE, "cannot put %s in WAL mode (it stayed in %s mode): its directory must "
	                    "be writable, on a local filesystem, for the -wal and -shm files",
	               d->path, got);
}

static int configure(struct sq_db *d, ng_err *err)
{
	int rc = sqlite3_busy_timeout(d->h, BUSY_TIMEOUT_MS);
	if (rc != SQLITE_OK)
		return sq_fail(d, err, rc, "setting the busy timeout");
	/* The first read of the file's header: a damaged file or one that is not
	 * a database at all is refused here, by name, not at some later query. */
	rc = sqlite3_exec(d->h, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
		d->last = NG_SQL_E_CORRUPT;
		return ng_fail_as(err, NG_ERR_STORE, "%s is not a nodegate store: file is not a database (SQLite "
		                    "says: %s); move it aside or name another path",
		               d->path, sqlite3_errmsg(d->h));
	}
	if (rc != SQLITE_OK)
		return sq_fail(d, err, rc, "first reading it");
	/* The OS may have opened the file read-only behind a READWRITE request
	 * (its permissions): say so now rather than at the first write. */
	if (sqlite3_db_readonly(d->h, "main") == 1) {
		d->last = NG_SQL_E_READONLY;
		return ng_fail_as(err, NG_ERR_STORE, "%s is read-only to this user: check the file's permissions "
		                    "and that its filesystem is mounted read-write",
		               d->path);
	}
	if (set_wal(d, err) < 0)
		return -1;
	if (run(d, "PRAGMA synchronous=FULL", "asking for full synchronous commits", err) < 0)
		return -1;
	return run(d, "PRAGMA foreign_keys=ON", "turning on foreign keys", err);
}

int ng_sql_sqlite_open(const char *path, ng_sql **out, ng_err *err)
{
	*out = NULL;
	ng_sql_note_open_error(NG_SQL_E_OTHER);
	if (ng_sqlite_load(path, err) < 0)
		return -1;
	struct sq_db *d = calloc(1, sizeof *d);
	if (!d || !(d->path = strdup(path))) {
		free(d);
		return ng_fail_as(err, NG_ERR_STORE, "out of memory opening %s", path);
	}
	d->base.ops = &sqlite_ops;
	d->queue_fd = -1;
	d->ticket = -1;
	int rc = SQLITE_ERROR;
	/* Without SQLITE_OPEN_CREATE: the file is there (prepare_file made it
	 * if it was not); one removed in between is an error, not a new 0644
	 * database. */
	if (ng_sq_prepare_file(d, err) == 0) {
		queue_open(d);
		rc = sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_extended_result_codes(d->h, 1);
		if (rc != SQLITE_OK)
			sq_fail(d, err, rc, "opening it");
		else
			rc = configure(d, err) == 0 ? SQLITE_OK : SQLITE_ERROR;
	}
	if (rc != SQLITE_OK) {
		ng_sql_note_open_error(d->last);
		sq_close(&d->base);
		return -1;
	}
	ng_sql_note_open_error(NG_SQL_E_NONE);
	*out = &d->base;
	return 0;
}

/* ---- a store one process owns and throws away ------------------------------------ */

int ng_sql_sqlite_scratch(ng_sql *db, ng_err *err)
{
	if (ng_sql_kind_of(db) != NG_SQL_SQLITE)
		return ng_fail_as(err, NG_ERR_INTERNAL, "only a SQLite store can be a scratch store");
	struct sq_db *d = db_of(db);
	/* Nobody else writes it, so no queue; nothing of it must outlive a
	 * crash, so no synchronous commit and no journal on disk; the file is
	 * this connection's alone, so SQLite takes its lock once. */
	queue_leave(d);
	if (d->queue_fd >= 0)
		close(d->queue_fd);
	d->queue_fd = -1;
	if (run(d, "PRAGMA locking_mode=EXCLUSIVE", "locking it for this process", err) < 0 ||
	    run(d, "PRAGMA journal_mode=MEMORY", "keeping its journal in memory", err) < 0 ||
	    run(d, "PRAGMA synchronous=OFF", "turning off synchronous commits", err) < 0 ||
	    run(d, "PRAGMA cache_size=-262144", "sizing its page cache", err) < 0)
		return -1;
	return 0;
}

int ng_sql_sqlite_batch(ng_sql *db, bool begin_it, ng_err *err)
{
	if (ng_sql_kind_of(db) != NG_SQL_SQLITE)
		return ng_fail_as(err, NG_ERR_INTERNAL, "only a SQLite store can batch its transactions");
	struct sq_db *d = db_of(db);
	if (begin_it) {
		if (d->batch)
			return ng_fail_as(err, NG_ERR_INTERNAL, "a batch of transactions is open already");
		if (begin(d, "BEGIN IMMEDIATE", "starting a batch of transactions", err) < 0)
			return -1;
		d->batch = true;
		return 0;
	}
	if (!d->batch)
		return 0;
	d->batch = false;
	if (sqlite3_get_autocommit(d->h))
		return ng_fail_as(err, NG_ERR_STORE, "the batch of transactions on %s was rolled back "
		                  "after an error", d->path);
	return run(d, "COMMIT", "committing a batch of transactions", err);
}

uint64_t ng_sql_sqlite_rollbacks(ng_sql *db)
{
	return ng_sql_kind_of(db) == NG_SQL_SQLITE ? db_of(db)->rollbacks : 0;
}
