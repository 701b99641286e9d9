/* What store/sql_sqlite.c and store/sql_sqlite_file.c share: the
 * connection, and the two functions one calls in the other. Nothing else
 * includes it. */
#ifndef NODEGATE_STORE_SQL_SQLITE_INTERNAL_H
#define NODEGATE_STORE_SQL_SQLITE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "store/sql.h"
#include "store/sqlite_lib.h"

#define SQ_CACHE_MAX 64

struct sq_db {
	ng_sql base;
	sqlite3 *h;
	char *path;
	ng_sql_error last;
	/* A statement failed inside the open transaction. SQLite would commit
	 * the rest; PostgreSQL cannot, and a half-done write must not land on
	 * either, so commit refuses it. */
	bool tx_failed;
	/* The writers' queue beside the store (see queue_enter): its file, and
	 * the ticket this connection holds while it writes (-1: none). */
	int queue_fd;
	int64_t ticket;
	/* Statements finalized, kept prepared for the next prepare of the same
	 * text: an admission runs the same few dozen queries for every record,
	 * and preparing them costs as much as running them. */
	sqlite3_stmt *cache[SQ_CACHE_MAX];
	size_t n_cache;
	/* ng_sql_sqlite_batch: one transaction open around many; each of
	 * theirs is a savepoint in it. */
	bool batch;
	/* Rollbacks on this connection: what a copy of its rows kept in memory
	 * (store/cohort_mirror.c) checks to know it may be stale. */
	uint64_t rollbacks;
};

/* What an SQLite result code means to the store (busy, full, corrupt...). */
ng_sql_error ng_sq_classify(sqlite3 *h, int rc);

/* The store's file before SQLite opens it (sql_sqlite_file.c): an existing
 * one checked, a missing one made whole and linked into place. */
int ng_sq_prepare_file(struct sq_db *d, ng_err *err);

#endif
