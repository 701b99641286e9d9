/* SQLite, loaded when a SQLite store is first opened (store/sqlite_lib.c).
 *
 * Included by sql_sqlite.c after <sqlite3.h>: past this header every
 * sqlite3_* call it makes goes through the table, by the same names. */
#ifndef NODEGATE_STORE_SQLITE_LIB_H
#define NODEGATE_STORE_SQLITE_LIB_H

#include <sqlite3.h>

#include "core/error.h"

#define NG_SQLITE_FUNCTIONS(X)                                                              \
	X(sqlite3_bind_blob64) X(sqlite3_bind_double) X(sqlite3_bind_int64) X(sqlite3_bind_null) \
	X(sqlite3_bind_text) X(sqlite3_bind_zeroblob) X(sqlite3_busy_timeout)                   \
	X(sqlite3_clear_bindings) X(sqlite3_close_v2) X(sqlite3_column_blob)                    \
	X(sqlite3_column_bytes) X(sqlite3_column_double) X(sqlite3_column_int)                  \
	X(sqlite3_column_int64) X(sqlite3_column_text) X(sqlite3_column_type)                   \
	X(sqlite3_db_readonly) X(sqlite3_errmsg) X(sqlite3_errstr) X(sqlite3_exec)              \
	X(sqlite3_extended_errcode) X(sqlite3_extended_result_codes) X(sqlite3_finalize)        \
	X(sqlite3_get_autocommit) X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_prepare_v3) \
	X(sqlite3_reset) X(sqlite3_sleep) X(sqlite3_sql) X(sqlite3_step) X(sqlite3_system_errno)

struct ng_sqlite_lib {
	void *lib;
#define NG_SQLITE_POINTER(f) __typeof__(f) *fn_##f;
	NG_SQLITE_FUNCTIONS(NG_SQLITE_POINTER)
#undef NG_SQLITE_POINTER
};

extern struct ng_sqlite_lib ng_sqlite;

/* Loads libsqlite3 once: $NODEGATE_LIBSQLITE, else libsqlite3.so.0 on the
 * loader's path. where names the store for the message. */
int ng_sqlite_load(const char *where, ng_err *err);

#ifndef NG_SQLITE_LIB_SELF
#define sqlite3_bind_blob64 (ng_sqlite.fn_sqlite3_bind_blob64)
#define sqlite3_bind_double (ng_sqlite.fn_sqlite3_bind_double)
#define sqlite3_bind_int64 (ng_sqlite.fn_sqlite3_bind_int64)
#define sqlite3_bind_null (ng_sqlite.fn_sqlite3_bind_null)
#define sqlite3_bind_text (ng_sqlite.fn_sqlite3_bind_text)
#define sqlite3_bind_zeroblob (ng_sqlite.fn_sqlite3_bind_zeroblob)
#define sqlite3_busy_timeout (ng_sqlite.fn_sqlite3_busy_timeout)
#define sqlite3_clear_bindings (ng_sqlite.fn_sqlite3_clear_bindings)
#define sqlite3_close_v2 (ng_sqlite.fn_sqlite3_close_v2)
#define sqlite3_column_blob (ng_sqlite.fn_sqlite3_column_blob)
#define sqlite3_column_bytes (ng_sqlite.fn_sqlite3_column_bytes)
#define sqlite3_column_double (ng_sqlite.fn_sqlite3_column_double)
#define sqlite3_column_int (ng_sqlite.fn_sqlite3_column_int)
#define sqlite3_column_int64 (ng_sqlite.fn_sqlite3_column_int64)
#define sqlite3_column_text (ng_sqlite.fn_sqlite3_column_text)
#define sqlite3_column_type (ng_sqlite.fn_sqlite3_column_type)
#define sqlite3_db_readonly (ng_sqlite.fn_sqlite3_db_readonly)
#define sqlite3_errmsg (ng_sqlite.fn_sqlite3_errmsg)
#define sqlite3_errstr (ng_sqlite.fn_sqlite3_errstr)
#define sqlite3_exec (ng_sqlite.fn_sqlite3_exec)
#define sqlite3_extended_errcode (ng_sqlite.fn_sqlite3_extended_errcode)
#define sqlite3_extended_result_codes (ng_sqlite.fn_sqlite3_extended_result_codes)
#define sqlite3_finalize (ng_sqlite.fn_sqlite3_finalize)
#define sqlite3_get_autocommit (ng_sqlite.fn_sqlite3_get_autocommit)
#define sqlite3_open_v2 (ng_sqlite.fn_sqlite3_open_v2)
#define sqlite3_prepare_v2 (ng_sqlite.fn_sqlite3_prepare_v2)
#define sqlite3_prepare_v3 (ng_sqlite.fn_sqlite3_prepare_v3)
#define sqlite3_reset (ng_sqlite.fn_sqlite3_reset)
#define sqlite3_sleep (ng_sqlite.fn_sqlite3_sleep)
#define sqlite3_sql (ng_sqlite.fn_sqlite3_sql)
#define sqlite3_step (ng_sqlite.fn_sqlite3_step)
#define sqlite3_system_errno (ng_sqlite.fn_sqlite3_system_errno)
#endif

#endif
