/* The little SQL a store needs, over either backend.
 *
 * The store's logic (records, baselines, quarantine, audit) is written once
 * against this interface; src/store/sql_sqlite.c and src/store/sql_pg.c carry
 * it to SQLite and to PostgreSQL. Statements use `?` placeholders (the
 * PostgreSQL driver numbers them $1, $2, ... outside quoted text) and the
 * dialect both share; where the dialects differ (DDL, upserts) the caller asks
 * ng_sql_kind_of() and writes each.
 *
 * Every call that can fail fills err with what failed and what the operator
 * can do, and returns -1. A driver never prints and never exits. */
#ifndef NODEGATE_STORE_SQL_H
#define NODEGATE_STORE_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef enum { NG_SQL_SQLITE, NG_SQL_POSTGRES } ng_sql_kind;

/* Why a call failed, for callers that act on it (tests, retries, exit codes). */
typedef enum {
	NG_SQL_E_NONE,
	NG_SQL_E_OTHER,
	NG_SQL_E_BUSY,        /* another writer held the lock past the busy timeout */
	NG_SQL_E_CORRUPT,     /* the file is damaged or is not a database at all */
	NG_SQL_E_FULL,        /* no space left on the device */
	NG_SQL_E_UNREACHABLE, /* cannot connect, or the connection was lost */
	NG_SQL_E_READONLY,    /* no permission to write */
	NG_SQL_E_CONSTRAINT,  /* a unique or check constraint refused the row */
} ng_sql_error;

typedef struct ng_sql ng_sql;
typedef struct ng_sql_stmt ng_sql_stmt;

struct ng_sql_ops {
	ng_sql_kind kind;
	/* Runs one or more statements that take no parameters and return no rows. */
	int (*exec)(ng_sql *db, const char *sql, ng_err *err);
	int (*prepare)(ng_sql *db, const char *sql, ng_sql_stmt **out, ng_err *err);
	/* Parameters are numbered from 1; text and blobs are copied. */
	int (*bind_null)(ng_sql_stmt *st, int i);
	int (*bind_int64)(ng_sql_stmt *st, int i, int64_t v);
	int (*bind_double)(ng_sql_stmt *st, int i, double v);
	int (*bind_text)(ng_sql_stmt *st, int i, const char *v); /* NULL binds NULL */
	int (*bind_blob)(ng_sql_stmt *st, int i, const void *v, size_t len);
	/* 1: a row is ready; 0: done; -1: error. The first step runs the statement. */
	int (*step)(ng_sql_stmt *st, ng_err *err);
	/* Columns of the current row, numbered from 0. Text and blobs stay valid
	 * until the next step, reset or finalize. A NULL column reads as 0, 0.0,
	 * NULL text, or an empty blob. */
	bool (*column_is_null)(ng_sql_stmt *st, int col);
	int64_t (*column_int64)(ng_sql_stmt *st, int col);
	double (*column_double)(ng_sql_stmt *st, int col);
	const char *(*column_text)(ng_sql_stmt *st, int col);
	const void *(*column_blob)(ng_sql_stmt *st, int col, size_t *len);
	/* Makes the statement ready to run again; bindings are kept. */
	void (*reset)(ng_sql_stmt *st);
	void (*finalize)(ng_sql_stmt *st);
	/* A write transaction that holds the store's single writer lock from its
	 * first statement (SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN and a
	 * transaction-scoped advisory lock), so that read-then-write sequences
	 * such as appending to the audit chain never interleave. */
	int (*begin_write)(ng_sql *db, ng_err *err);
	int (*begin_read)(ng_sql *db, ng_err *err);
	int (*commit)(ng_sql *db, ng_err *err);
	void (*rollback)(ng_sql *db);
	/* The error class of the last failed call on this connection. */
	ng_sql_error (*last_error)(ng_sql *db);
	void (*close)(ng_sql *db);
};

/* Every connection starts with this; drivers extend it. */
struct ng_sql {
	const struct ng_sql_ops *ops;
};

/* Statements start with this; drivers extend it. */
struct ng_sql_stmt {
	ng_sql *db;
};

/* Opens a SQLite file (created when absent, with its directory's parent
 * existing), in WAL mode with a busy timeout and full synchronous commits. */
int ng_sql_sqlite_open(const char *path, ng_sql **out, ng_err *err);
/* A SQLite store that one process owns and throws away (a simulation's):
 * no writers' queue, no synchronous commits, the journal in memory and the
 * file locked for this connection. Its contents are what they would be in
 * an ordinary store; only what a crash would leave differs. */
int ng_sql_sqlite_scratch(ng_sql *db, ng_err *err);
/* begin_it: opens one transaction that every transaction until the batch's
 * end joins as a savepoint (one commit for many); else commits it. */
int ng_sql_sqlite_batch(ng_sql *db, bool begin_it, ng_err *err);
/* How many transactions or savepoints this connection has rolled back. */
uint64_t ng_sql_sqlite_rollbacks(ng_sql *db);
/* Connects to a postgresql:// or postgres:// URI (libpq's conninfo rules). */
int ng_sql_pg_open(const char *uri, ng_sql **out, ng_err *err);
/* Why the last open on this thread failed (NG_SQL_E_NONE after one that
 * succeeded): a failed open leaves no connection to ask last_error of. Both
 * opens set *out to NULL when they fail. */
ng_sql_error ng_sql_open_error(void);
/* For the drivers: records the class of a failed open. */
void ng_sql_note_open_error(ng_sql_error e);
/* For the drivers' messages: the first 60 characters of sql on one line. */
void ng_sql_snippet(const char *sql, char *out, size_t cap);

/* Thin helpers over the ops, so callers read like SQL. */
static inline ng_sql_kind ng_sql_kind_of(ng_sql *db) { return db->ops->kind; }
static inline int ng_sql_exec(ng_sql *db, const char *sql, ng_err *err)
{
	return db->ops->exec(db, sql, err);
}
static inline int ng_sql_prepare(ng_sql *db, const char *sql, ng_sql_stmt **out, ng_err *err)
{
	return db->ops->prepare(db, sql, out, err);
}
static inline int ng_sql_bind_null(ng_sql_stmt *st, int i) { return st->db->ops->bind_null(st, i); }
static inline int ng_sql_bind_int64(ng_sql_stmt *st, int i, int64_t v)
{
	return st->db->ops->bind_int64(st, i, v);
}
static inline int ng_sql_bind_double(ng_sql_stmt *st, int i, double v)
{
	return st->db->ops->bind_double(st, i, v);
}
static inline int ng_sql_bind_text(ng_sql_stmt *st, int i, const char *v)
{
	return st->db->ops->bind_text(st, i, v);
}
static inline int ng_sql_bind_blob(ng_sql_stmt *st, int i, const void *v, size_t len)
{
	return st->db->ops->bind_blob(st, i, v, len);
}
static inline int ng_sql_step(ng_sql_stmt *st, ng_err *err) { return st->db->ops->step(st, err); }
static inline bool ng_sql_column_is_null(ng_sql_stmt *st, int c)
{
	return st->db->ops->column_is_null(st, c);
}
static inline int64_t ng_sql_column_int64(ng_sql_stmt *st, int c)
{
	return st->db->ops->column_int64(st, c);
}
static inline double ng_sql_column_double(ng_sql_stmt *st, int c)
{
	return st->db->ops->column_double(st, c);
}
static inline const char *ng_sql_column_text(ng_sql_stmt *st, int c)
{
	return st->db->ops->column_text(st, c);
}
static inline const void *ng_sql_column_blob(ng_sql_stmt *st, int c, size_t *len)
{
	return st->db->ops->column_blob(st, c, len);
}
static inline void ng_sql_reset(ng_sql_stmt *st) { st->db->ops->reset(st); }
static inline void ng_sql_finalize(ng_sql_stmt *st)
{
	if (st)
		st->db->ops->finalize(st);
}
static inline int ng_sql_begin_write(ng_sql *db, ng_err *err) { return db->ops->begin_write(db, err); }
static inline int ng_sql_begin_read(ng_sql *db, ng_err *err) { return db->ops->begin_read(db, err); }
static inline int ng_sql_commit(ng_sql *db, ng_err *err) { return db->ops->commit(db, err); }
static inline void ng_sql_rollback(ng_sql *db) { db->ops->rollback(db); }
static inline ng_sql_error ng_sql_last_error(ng_sql *db) { return db->ops->last_error(db); }
static inline void ng_sql_close(ng_sql *db)
{
	if (db)
		db->ops->close(db);
}

#endif
