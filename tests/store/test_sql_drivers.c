/* The SQL drivers against the interface in src/store/sql.h, run once per
 * backend (NODEGATE_TEST_BACKEND): every type round-trips exactly, `?` is a
 * placeholder only outside quoted text and comments, a statement re-runs
 * with its bindings, transactions commit, roll back, isolate and take turns
 * at the writer lock, and each way of failing has its class and a message
 * that names what failed. The open-time failures of both drivers (a file
 * that is not a database, a missing directory, no server, a password in the
 * URI) need no server and run in every variant. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/sql.h"
#include "store_test_env.h"

static char spec[1024];
static bool pg;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static ng_sql *open_db(void)
{
	ng_sql *db = NULL;
	ng_err err = {0};
	int rc = pg ? ng_sql_pg_open(spec, &db, &err) : ng_sql_sqlite_open(spec, &db, &err);
	if (rc != 0)
		fail_msg("cannot open %s: %s", spec, err.msg);
	assert_int_equal(ng_sql_kind_of(db), pg ? NG_SQL_POSTGRES : NG_SQL_SQLITE);
	return db;
}

static void exec_ok(ng_sql *db, const char *sql)
{
	ng_err err = {0};
	if (ng_sql_exec(db, sql, &err) != 0)
		fail_msg("`%s` failed: %s", sql, err.msg);
}

static ng_sql_stmt *prepare_ok(ng_sql *db, const char *sql)
{
	ng_sql_stmt *st = NULL;
	ng_err err = {0};
	if (ng_sql_prepare(db, sql, &st, &err) != 0)
		fail_msg("cannot prepare `%s`: %s", sql, err.msg);
	return st;
}

static int step_ok(ng_sql_stmt *st)
{
	ng_err err = {0};
	int rc = ng_sql_step(st, &err);
	if (rc < 0)
		fail_msg("step failed: %s", err.msg);
	return rc;
}

/* The single integer a query yields. */
static int64_t query_int(ng_sql *db, const char *sql)
{
	ng_sql_stmt *st = prepare_ok(db, sql);
	assert_int_equal(step_ok(st), 1);
	int64_t v = ng_sql_column_int64(st, 0);
	assert_int_equal(step_ok(st), 0);
	ng_sql_finalize(st);
	return v;
}

/* A table in each dialect. SQLite's d has no declared type: a REAL column
 * stores a whole-valued double as an integer, and -0.0 comes back as 0.0;
 * with no type affinity the driver's doubles are kept bit for bit. */
static void create_table(ng_sql *db, const char *name)
{
	char sql[512];
	snprintf(sql, sizeof sql,
	         pg ? "CREATE TABLE %s (id BIGINT PRIMARY KEY, i BIGINT, d DOUBLE PRECISION, "
	              "s TEXT, b BYTEA, b2 BYTEA, n TEXT)"
	            : "CREATE TABLE %s (id INTEGER PRIMARY KEY, i INTEGER, d, s TEXT, "
	              "b BLOB, b2 BLOB, n TEXT)",
	         name);
	exec_ok(db, sql);
}

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ---- values ---------------------------------------------------------------------- */

static const double doubles[] = {
	0.1, 1e-300, -0.0, 0.0, DBL_MAX, -DBL_MAX, DBL_MIN, 4.9406564584124654e-324,
	1.0 / 3.0, 2.0 / 3.0, 123456789.123456789, -2.5e-17, 0.30000000000000004,
	INFINITY, -INFINITY,
};
#define NDOUBLES (sizeof doubles / sizeof doubles[0])

static const int64_t ints[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, 4294967296, INT64_MAX};
#define NINTS (sizeof ints / sizeof ints[0])

static const char *const texts[] = {
	"",
	"plain",
	"it's \"quoted\" and 'single' and ? and $1 and -- not a comment and /* not one */",
	"back\\slash\\x00 and E'\\'' and $$dollar$$",
	"multi\nline\ttabbed",
	"UTF-8: \u00b5s \u00b0C \u2713 \U0001F4A5",
};
#define NTEXTS (sizeof texts / sizeof texts[0])

/* Every type through ? parameters, with quoted text around them that holds
 * `?` itself: the literal, the quoted identifier and the comments must not
 * count as parameters, or the values would land in the wrong columns. */
static void every_type_round_trips(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	create_table(db, "t_types");
	double blob[1000];
	for (size_t k = 0; k < 1000; k++)
		blob[k] = k < NDOUBLES ? doubles[k] : (double)k * 1.0000001 - 500.25;
	blob[999] = NAN;

	ng_sql_stmt *ins = prepare_ok(db, "-- a comment? with a ? in it\n"
	                                  "INSERT INTO t_types (id, i, d, s, b, b2, n) /* ? */\n"
	                                  "VALUES (?, ?, ?, ?, ?, ?, 'what? -- ''?'' /* ? */')");
	size_t rows = NDOUBLES > NINTS ? NDOUBLES : NINTS;
	for (size_t r = 0; r < rows; r++) {
		assert_int_equal(ng_sql_bind_int64(ins, 1, (int64_t)r), 0);
		assert_int_equal(ng_sql_bind_int64(ins, 2, ints[r % NINTS]), 0);
		assert_int_equal(ng_sql_bind_double(ins, 3, doubles[r % NDOUBLES]), 0);
		assert_int_equal(ng_sql_bind_text(ins, 4, texts[r % NTEXTS]), 0);
		assert_int_equal(ng_sql_bind_blob(ins, 5, blob, sizeof blob), 0);
		assert_int_equal(ng_sql_bind_blob(ins, 6, "\0\x01\xff", 3), 0);
		assert_int_equal(step_ok(ins), 0);
		ng_sql_reset(ins);
	}
	ng_sql_finalize(ins);

	ng_sql_stmt *sel = prepare_ok(db, "SELECT i AS \"odd?name\", d, s, b, b2, n FROM t_types "
	                                  "WHERE id = ? AND n LIKE 'what?%'");
	for (size_t r = 0; r < rows; r++) {
		ng_sql_reset(sel);
		ng_sql_bind_int64(sel, 1, (int64_t)r);
		assert_int_equal(step_ok(sel), 1);
		assert_true(ng_sql_column_int64(sel, 0) == ints[r % NINTS]);
		double d = ng_sql_column_double(sel, 1);
		if (!same_bits(d, doubles[r % NDOUBLES]))
			fail_msg("row %zu: %.17g (%a) came back as %.17g (%a)", r,
			         doubles[r % NDOUBLES], doubles[r % NDOUBLES], d, d);
		assert_string_equal(ng_sql_column_text(sel, 2), texts[r % NTEXTS]);
		/* Both blobs of the row stay valid together. */
		size_t len = 0, len2 = 0;
		const void *b = ng_sql_column_blob(sel, 3, &len);
		const void *b2 = ng_sql_column_blob(sel, 4, &len2);
		assert_int_equal(len, sizeof blob);
		assert_int_equal(len2, 3);
		assert_memory_equal(b, blob, sizeof blob);
		assert_memory_equal(b2, "\0\x01\xff", 3);
		assert_string_equal(ng_sql_column_text(sel, 5), "what? -- '?' /* ? */");
		for (int c = 0; c < 6; c++)
			assert_false(ng_sql_column_is_null(sel, c));
		assert_int_equal(step_ok(sel), 0);
	}
	ng_sql_finalize(sel);
	ng_sql_close(db);
}

static void nan_round_trips(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	create_table(db, "t_nan");
	ng_sql_stmt *ins = prepare_ok(db, "INSERT INTO t_nan (id, d) VALUES (?, ?)");
	ng_sql_bind_int64(ins, 1, 1);
	ng_sql_bind_double(ins, 2, NAN);
	assert_int_equal(step_ok(ins), 0);
	ng_sql_finalize(ins);
	ng_sql_stmt *sel = prepare_ok(db, "SELECT d FROM t_nan WHERE id = 1");
	assert_int_equal(step_ok(sel), 1);
	assert_false(ng_sql_column_is_null(sel, 0));
	assert_true(isnan(ng_sql_column_double(sel, 0)));
	ng_sql_finalize(sel);
	ng_sql_close(db);
}

/* NULL, bound either way, reads as 0, 0.0, NULL text and an empty blob;
 * empty text and an empty blob are not NULL. */
static void nulls_and_empties(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	create_table(db, "t_null");
	ng_sql_stmt *ins = prepare_ok(db, "INSERT INTO t_null (id, i, d, s, b, b2, n) "
	                                  "VALUES (?, ?, ?, ?, ?, ?, ?)");
	ng_sql_bind_int64(ins, 1, 1);
	ng_sql_bind_null(ins, 2);
	ng_sql_bind_null(ins, 3);
	ng_sql_bind_text(ins, 4, NULL);
	ng_sql_bind_null(ins, 5);
	ng_sql_bind_blob(ins, 6, "", 0);
	ng_sql_bind_text(ins, 7, "");
	assert_int_equal(step_ok(ins), 0);
	ng_sql_finalize(ins);

	ng_sql_stmt *sel = prepare_ok(db, "SELECT i, d, s, b, b2, n FROM t_null");
	assert_int_equal(step_ok(sel), 1);
	for (int c = 0; c < 4; c++)
		assert_true(ng_sql_column_is_null(sel, c));
	assert_int_equal(ng_sql_column_int64(sel, 0), 0);
	assert_true(ng_sql_column_double(sel, 1) == 0.0);
	assert_null(ng_sql_column_text(sel, 2));
	size_t len = 99;
	assert_non_null(ng_sql_column_blob(sel, 3, &len));
	assert_int_equal(len, 0);
	assert_false(ng_sql_column_is_null(sel, 4));
	len = 99;
	assert_non_null(ng_sql_column_blob(sel, 4, &len));
	assert_int_equal(len, 0);
	assert_false(ng_sql_column_is_null(sel, 5));
	assert_string_equal(ng_sql_column_text(sel, 5), "");
	assert_int_equal(step_ok(sel), 0);
	ng_sql_finalize(sel);
	ng_sql_close(db);
}

/* One statement, reset and run 1000 times in one write transaction; the
 * PostgreSQL driver prepares it by name from the second run. */
static void rerun_1000_times_in_one_transaction(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	create_table(db, "t_bulk");
	double t0 = now_s();
	assert_int_equal(ng_sql_begin_write(db, &err), 0);
	ng_sql_stmt *ins = prepare_ok(db, "INSERT INTO t_bulk (id, d, s) VALUES (?, ?, ?)");
	for (int k = 0; k < 1000; k++) {
		char s[32];
		snprintf(s, sizeof s, "row %d", k);
		ng_sql_bind_int64(ins, 1, k);
		ng_sql_bind_double(ins, 2, k * 0.5);
		ng_sql_bind_text(ins, 3, s);
		assert_int_equal(step_ok(ins), 0);
		ng_sql_reset(ins);
	}
	ng_sql_finalize(ins);
	if (ng_sql_commit(db, &err) != 0)
		fail_msg("commit: %s", err.msg);
	fprintf(stderr, "[ info     ] %s: 1000 inserts in one transaction in %.1f ms\n",
	        pg ? "postgres" : "sqlite", (now_s() - t0) * 1e3);

	assert_int_equal(query_int(db, "SELECT count(*) FROM t_bulk"), 1000);
	assert_int_equal(query_int(db, "SELECT CAST(sum(d) * 2 AS BIGINT) FROM t_bulk"), 499500);
	/* Bindings survive a reset: the same query, run again, yields the same. */
	ng_sql_stmt *sel = prepare_ok(db, "SELECT s FROM t_bulk WHERE id = ?");
	ng_sql_bind_int64(sel, 1, 777);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(step_ok(sel), 1);
		assert_string_equal(ng_sql_column_text(sel, 0), "row 777");
		assert_int_equal(step_ok(sel), 0);
		ng_sql_reset(sel);
	}
	ng_sql_finalize(sel);
	ng_sql_close(db);
}

static void many_rows_step_in_order(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	create_table(db, "t_rows");
	exec_ok(db, "INSERT INTO t_rows (id, i) VALUES (1, 10); INSERT INTO t_rows (id, i) VALUES "
	            "(2, 20); INSERT INTO t_rows (id, i) VALUES (3, 30)");
	ng_sql_stmt *sel = prepare_ok(db, "SELECT id, i FROM t_rows WHERE i > ? ORDER BY id");
	ng_sql_bind_int64(sel, 1, 5);
	for (int k = 1; k <= 3; k++) {
		assert_int_equal(step_ok(sel), 1);
		assert_int_equal(ng_sql_column_int64(sel, 0), k);
		assert_int_equal(ng_sql_column_int64(sel, 1), 10 * k);
	}
	assert_int_equal(step_ok(sel), 0);
	ng_sql_finalize(sel);
	ng_sql_close(db);
}

/* A statement that ran to its end stays there until reset: stepping it
 * again does not run it again. */
static void done_stays_done_until_reset(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	create_table(db, "t_done");
	ng_sql_stmt *ins = prepare_ok(db, "INSERT INTO t_done (id) VALUES (?)");
	ng_sql_bind_int64(ins, 1, 1);
	assert_int_equal(step_ok(ins), 0);
	assert_int_equal(step_ok(ins), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_done"), 1);
	ng_sql_reset(ins);
	ng_sql_bind_int64(ins, 1, 2);
	assert_int_equal(step_ok(ins), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_done"), 2);
	ng_sql_finalize(ins);
	ng_sql_close(db);
}

/* ---- transactions ------------------------------------------------------------- */

static void rollback_discards(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	create_table(db, "t_rb");
	assert_int_equal(ng_sql_begin_write(db, &err), 0);
	exec_ok(db, "INSERT INTO t_rb (id) VALUES (1)");
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_rb"), 1);
	ng_sql_rollback(db);
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_rb"), 0);
	/* A rollback with nothing open is harmless. */
	ng_sql_rollback(db);
	ng_sql_close(db);
}

/* A transaction inside a transaction is refused; the open one goes on. */
static void nested_begin_is_refused(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	create_table(db, "t_nest");
	assert_int_equal(ng_sql_begin_write(db, &err), 0);
	exec_ok(db, "INSERT INTO t_nest (id) VALUES (1)");
	assert_int_equal(ng_sql_begin_write(db, &err), -1);
	assert_int_equal(ng_sql_begin_read(db, &err), -1);
	exec_ok(db, "INSERT INTO t_nest (id) VALUES (2)");
	assert_int_equal(ng_sql_commit(db, &err), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_nest"), 2);
	ng_sql_close(db);
}

static void commit_without_transaction_fails(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	assert_int_equal(ng_sql_commit(db, &err), -1);
	assert_true(strlen(err.msg) > 0);
	ng_sql_close(db);
}

/* A transaction in which a statement failed commits nothing, on either
 * backend, even the statements that succeeded. */
static void failed_statement_spoils_the_transaction(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	create_table(db, "t_spoil");
	exec_ok(db, "INSERT INTO t_spoil (id) VALUES (1)");
	assert_int_equal(ng_sql_begin_write(db, &err), 0);
	exec_ok(db, "INSERT INTO t_spoil (id) VALUES (2)");
	assert_int_equal(ng_sql_exec(db, "INSERT INTO t_spoil (id) VALUES (1)", &err), -1);
	assert_int_equal(ng_sql_last_error(db), NG_SQL_E_CONSTRAINT);
	assert_int_equal(ng_sql_commit(db, &err), -1);
	assert_non_null(strstr(err.msg, "nothing was written"));
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_spoil"), 1);
	/* and the connection is usable again */
	assert_int_equal(ng_sql_begin_write(db, &err), 0);
	exec_ok(db, "INSERT INTO t_spoil (id) VALUES (3)");
	assert_int_equal(ng_sql_commit(db, &err), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM t_spoil"), 2);
	ng_sql_close(db);
}

/* Two connections take the writer lock in turn; while one holds it the
 * other waits, and past its timeout gives up with BUSY. The timeout is
 * shortened here through each dialect's own setting. */
static void writers_take_turns(void **state)
{
	(void)state;
	ng_sql *a = open_db(), *b = open_db();
	ng_err err = {0};
	create_table(a, "t_turns");
	assert_int_equal(ng_sql_begin_write(a, &err), 0);
	exec_ok(a, "INSERT INTO t_turns (id) VALUES (1)");
	assert_int_equal(ng_sql_commit(a, &err), 0);
	assert_int_equal(ng_sql_begin_write(b, &err), 0);
	exec_ok(b, "INSERT INTO t_turns (id) VALUES (2)");
	assert_int_equal(ng_sql_commit(b, &err), 0);

	exec_ok(b, pg ? "SET lock_timeout = '300ms'" : "PRAGMA busy_timeout = 300");
	assert_int_equal(ng_sql_begin_write(a, &err), 0);
	double t0 = now_s();
	assert_int_equal(ng_sql_begin_write(b, &err), -1);
	double waited = now_s() - t0;
	assert_int_equal(ng_sql_last_error(b), NG_SQL_E_BUSY);
	assert_true(waited >= 0.25 && waited < 5.0);
	fprintf(stderr, "[ info     ] busy after %.2f s: %s\n", waited, err.msg);
	exec_ok(a, "INSERT INTO t_turns (id) VALUES (3)");
	assert_int_equal(ng_sql_commit(a, &err), 0);
	assert_int_equal(ng_sql_begin_write(b, &err), 0);
	exec_ok(b, "INSERT INTO t_turns (id) VALUES (4)");
	assert_int_equal(ng_sql_commit(b, &err), 0);
	assert_int_equal(query_int(a, "SELECT count(*) FROM t_turns"), 4);
	ng_sql_close(a);
	ng_sql_close(b);
}

/* One writer in a child process: opens the store, begins a write, says
 * `me` on fd (x when it could not), holds the transaction hold_ms, inserts
 * a row and commits. Never returns. */
static void child_writer(int fd, char me, long hold_ms)
{
	ng_sql *db = NULL;
	ng_err e = {0};
	if (ng_sql_sqlite_open(spec, &db, &e) != 0 || ng_sql_begin_write(db, &e) != 0)
		me = 'x';
	if (write(fd, &me, 1) != 1)
		_exit(2);
	nanosleep(&(struct timespec){hold_ms / 1000, (hold_ms % 1000) * 1000 * 1000}, NULL);
	if (me == 'x' || ng_sql_exec(db, "INSERT INTO t_order (i) VALUES (1)", &e) != 0 ||
	    ng_sql_commit(db, &e) != 0)
		_exit(3);
	ng_sql_close(db);
	_exit(0);
}

/* SQLite writers are served in the order they came (the queue beside the
 * store, sql_sqlite.c), not by whichever retries first: SQLite's own busy
 * handler sleeps longer the longer a writer has waited, so the newest
 * waiter usually won and the oldest could wait out the whole timeout.
 * PostgreSQL's lock manager queues its own waiters. */
static void writers_served_in_order(void **state)
{
	(void)state;
	enum { KIDS = 4 };
	ng_sql *a = open_db();
	create_table(a, "t_order");
	/* No connection open across fork (SQLite's rule): each writer is a
	 * child of its own, the first holding the lock while the others come. */
	ng_sql_close(a);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t kid[KIDS + 1];
	char first;
	kid[0] = fork();
	assert_true(kid[0] >= 0);
	if (kid[0] == 0) {
		close(p[0]);
		child_writer(p[1], 'H', 200 * (KIDS + 1));
	}
	assert_int_equal(read(p[0], &first, 1), 1);
	assert_int_equal(first, 'H');
	for (int i = 1; i <= KIDS; i++) {
		kid[i] = fork();
		assert_true(kid[i] >= 0);
		if (kid[i] == 0) {
			close(p[0]);
			child_writer(p[1], (char)('0' + i - 1), 20);
		}
		/* Each is waiting before the next one comes. */
		nanosleep(&(struct timespec){0, 150 * 1000 * 1000}, NULL);
	}
	close(p[1]);
	char order[KIDS + 1] = "";
	size_t got = 0;
	while (got < KIDS) {
		ssize_t n = read(p[0], order + got, KIDS - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	for (int i = 0; i <= KIDS; i++) {
		int status;
		assert_int_equal(waitpid(kid[i], &status, 0), kid[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	fprintf(stderr, "[ info     ] writers served in the order %s\n", order);
	assert_string_equal(order, "0123");
	a = open_db();
	assert_int_equal(query_int(a, "SELECT count(*) FROM t_order"), KIDS + 1);
	ng_sql_close(a);
}

/* A read transaction sees one snapshot, whatever commits meanwhile. */
static void read_transaction_is_a_snapshot(void **state)
{
	(void)state;
	ng_sql *a = open_db(), *b = open_db();
	ng_err err = {0};
	create_table(a, "t_snap");
	exec_ok(a, "INSERT INTO t_snap (id) VALUES (1)");
	assert_int_equal(ng_sql_begin_read(a, &err), 0);
	assert_int_equal(query_int(a, "SELECT count(*) FROM t_snap"), 1);
	exec_ok(b, "INSERT INTO t_snap (id) VALUES (2)");
	assert_int_equal(query_int(a, "SELECT count(*) FROM t_snap"), 1);
	assert_int_equal(ng_sql_commit(a, &err), 0);
	assert_int_equal(query_int(a, "SELECT count(*) FROM t_snap"), 2);
	ng_sql_close(a);
	ng_sql_close(b);
}

/* ---- failures ---------------------------------------------------------------- */

static void constraint_violation_is_constraint(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	create_table(db, "t_uniq");
	ng_sql_stmt *ins = prepare_ok(db, "INSERT INTO t_uniq (id) VALUES (?)");
	ng_sql_bind_int64(ins, 1, 7);
	assert_int_equal(step_ok(ins), 0);
	ng_sql_reset(ins);
	assert_int_equal(ng_sql_step(ins, &err), -1);
	assert_int_equal(ng_sql_last_error(db), NG_SQL_E_CONSTRAINT);
	assert_non_null(strstr(err.msg, "INSERT INTO t_uniq (id) VALUES"));
	fprintf(stderr, "[ info     ] %s\n", err.msg);
	ng_sql_finalize(ins);
	ng_sql_close(db);
}

/* A failed step names the statement (its first 60 characters, one line). */
static void step_error_names_the_sql(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	ng_sql_stmt *st = NULL;
	const char *sql = "SELECT x\n  FROM no_such_table_here WHERE a = 1 AND b = 2 AND c = 3 AND "
	                  "d = 4 AND e = 5";
	/* SQLite refuses it at prepare, PostgreSQL at the first step. */
	if (ng_sql_prepare(db, sql, &st, &err) == 0) {
		assert_int_equal(ng_sql_step(st, &err), -1);
		ng_sql_finalize(st);
	}
	assert_non_null(
	        strstr(err.msg, "SELECT x FROM no_such_table_here WHERE a = 1 AND b = 2 AND"));
	assert_null(strstr(err.msg, "e = 5"));
	assert_null(strchr(err.msg, '\n'));
	assert_int_equal(ng_sql_last_error(db), NG_SQL_E_OTHER);
	fprintf(stderr, "[ info     ] %s\n", err.msg);

	assert_int_equal(ng_sql_exec(db, "CREATE TABLE oops (", &err), -1);
	assert_non_null(strstr(err.msg, "CREATE TABLE oops ("));
	ng_sql_close(db);
}

static void bad_bind_fails_the_step(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	ng_sql_stmt *st = prepare_ok(db, "SELECT ? + 1");
	assert_int_equal(ng_sql_bind_int64(st, 2, 5), -1);
	assert_int_equal(ng_sql_step(st, &err), -1);
	assert_non_null(strstr(err.msg, "parameter 2"));
	ng_sql_finalize(st);
	ng_sql_close(db);
}

/* A damaged file is refused at open, by name. */
static void sqlite_on_random_bytes_is_corrupt(void **state)
{
	(void)state;
	char path[1100];
	assert_int_equal(ng_test_sqlite_path(path, sizeof path), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	unsigned char junk[8192];
	srand(7);
	for (size_t k = 0; k < sizeof junk; k++)
		junk[k] = (unsigned char)rand();
	assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
	close(fd);
	ng_sql *db = NULL;
	ng_err err = {0};
	assert_int_equal(ng_sql_sqlite_open(path, &db, &err), -1);
	assert_null(db);
	assert_int_equal(ng_sql_open_error(), NG_SQL_E_CORRUPT);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "is not a nodegate store: file is not a database"));
	fprintf(stderr, "[ info     ] %s\n", err.msg);
	ng_test_store_cleanup(path);
}

static void sqlite_in_missing_directory(void **state)
{
	(void)state;
	const char *path = "/nonexistent-dir-of-nodegate/sub/store.db";
	ng_sql *db = NULL;
	ng_err err = {0};
	assert_int_equal(ng_sql_sqlite_open(path, &db, &err), -1);
	assert_null(db);
	assert_int_equal(ng_sql_open_error(), NG_SQL_E_READONLY);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "directory may not exist"));
	fprintf(stderr, "[ info     ] %s\n", err.msg);
}

static void sqlite_open_sets_its_pragmas(void **state)
{
	(void)state;
	char path[1100];
	assert_int_equal(ng_test_sqlite_path(path, sizeof path), 0);
	ng_sql *db = NULL;
	ng_err err = {0};
	assert_int_equal(ng_sql_sqlite_open(path, &db, &err), 0);
	assert_int_equal(ng_sql_open_error(), NG_SQL_E_NONE);
	ng_sql_stmt *st = prepare_ok(db, "PRAGMA journal_mode");
	assert_int_equal(step_ok(st), 1);
	assert_string_equal(ng_sql_column_text(st, 0), "wal");
	ng_sql_finalize(st);
	assert_int_equal(query_int(db, "PRAGMA synchronous"), 2);
	assert_int_equal(query_int(db, "PRAGMA foreign_keys"), 1);
	assert_int_equal(query_int(db, "PRAGMA busy_timeout"), 30000);
	/* More than one statement is refused, not half-run. */
	assert_int_equal(ng_sql_prepare(db, "SELECT 1; SELECT 2", &st, &err), -1);
	assert_null(st);
	st = prepare_ok(db, "SELECT 1; -- a trailing comment");
	ng_sql_finalize(st);
	ng_sql_close(db);
	ng_test_store_cleanup(path);
}

/* No server behind the socket directory: UNREACHABLE, at once. */
static void pg_without_server_is_unreachable(void **state)
{
	(void)state;
	ng_sql *db = NULL;
	ng_err err = {0};
	double t0 = now_s();
	int rc = ng_sql_pg_open("postgresql://nodegate:s3cr3t-pw@/nodegate?host=/nonexistent-dir",
	                        &db, &err);
	assert_int_equal(rc, -1);
	assert_null(db);
	assert_true(now_s() - t0 < 2.0);
	assert_int_equal(ng_sql_open_error(), NG_SQL_E_UNREACHABLE);
	assert_non_null(strstr(err.msg, "cannot reach PostgreSQL at postgresql://nodegate:***@"));
	assert_null(strstr(err.msg, "s3cr3t"));
	assert_null(strchr(err.msg, '\n'));
	fprintf(stderr, "[ info     ] %s\n", err.msg);
}

/* However a password is written, no message repeats it. */
static void pg_messages_never_show_a_password(void **state)
{
	(void)state;
	const char *uris[] = {
		"postgresql:///nodegate?host=/nonexistent-dir&password=hunter2-q",
		"postgres://u:hunter2-u@/nodegate?host=/nonexistent-dir&password=hunter2-q",
		"host=/nonexistent-dir password=hunter2-k dbname=nodegate",
		"host=/nonexistent-dir password='hunter2 quoted' dbname=nodegate",
		"postgresql://u:%zzhunter2-bad@/nodegate?host=/nonexistent-dir",
		"postgresql:///nodegate?host=/nonexistent-dir&password=hunter2-q&bogus=%zz",
	};
	for (size_t k = 0; k < sizeof uris / sizeof uris[0]; k++) {
		ng_sql *db = NULL;
		ng_err err = {0};
		assert_int_equal(ng_sql_pg_open(uris[k], &db, &err), -1);
		assert_null(db);
		if (strstr(err.msg, "hunter2"))
			fail_msg("a password shows in: %s", err.msg);
		assert_non_null(strstr(err.msg, "***"));
		fprintf(stderr, "[ info     ] %s\n", err.msg);
	}
}

/* ---- PostgreSQL's own ------------------------------------------------------------ */

/* Statements run more than once are prepared by name and deallocated at
 * finalize, also when finalized inside a failed transaction. */
static void pg_named_statements_are_deallocated(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_err err = {0};
	for (int k = 0; k < 200; k++) {
		ng_sql_stmt *st = prepare_ok(db, "SELECT ?::int + 1");
		ng_sql_bind_int64(st, 1, k);
		for (int run = 0; run < 3; run++) {
			assert_int_equal(step_ok(st), 1);
			assert_int_equal(ng_sql_column_int64(st, 0), k + 1);
			ng_sql_reset(st);
		}
		ng_sql_finalize(st);
	}
	assert_int_equal(query_int(db, "SELECT count(*) FROM pg_prepared_statements"), 0);

	assert_int_equal(ng_sql_begin_write(db, &err), 0);
	ng_sql_stmt *st = prepare_ok(db, "SELECT 1");
	step_ok(st);
	ng_sql_reset(st);
	step_ok(st);
	assert_int_equal(ng_sql_exec(db, "SELECT 1/0", &err), -1);
	ng_sql_finalize(st); /* inside the failed transaction */
	ng_sql_rollback(db);
	assert_int_equal(query_int(db, "SELECT count(*) FROM pg_prepared_statements"), 0);
	ng_sql_close(db);
}

/* A connection the server drops is UNREACHABLE at the next statement. */
static void pg_lost_connection_is_unreachable(void **state)
{
	(void)state;
	ng_sql *a = open_db(), *b = open_db();
	ng_err err = {0};
	int64_t pid = query_int(b, "SELECT pg_backend_pid()");
	ng_sql_stmt *kill = prepare_ok(a, "SELECT pg_terminate_backend(CAST(? AS INTEGER))");
	ng_sql_bind_int64(kill, 1, pid);
	assert_int_equal(step_ok(kill), 1);
	ng_sql_finalize(kill);
	usleep(100 * 1000);
	ng_sql_stmt *st = prepare_ok(b, "SELECT 1");
	assert_int_equal(ng_sql_step(st, &err), -1);
	assert_int_equal(ng_sql_last_error(b), NG_SQL_E_UNREACHABLE);
	assert_non_null(strstr(err.msg, "lost the connection"));
	fprintf(stderr, "[ info     ] %s\n", err.msg);
	ng_sql_finalize(st);
	ng_sql_close(b);
	ng_sql_close(a);
}

/* Placeholders in dollar-quoted and E'' text are text too. */
static void pg_quoting_forms_hide_placeholders(void **state)
{
	(void)state;
	ng_sql *db = open_db();
	ng_sql_stmt *st = prepare_ok(db, "SELECT $$a ? b$$, $t$ ' ? $t$, E'\\' ?', ?::text, "
	                                 "/* outer /* nested ? */ still ? */ ?::text");
	ng_sql_bind_text(st, 1, "one");
	ng_sql_bind_text(st, 2, "two");
	assert_int_equal(step_ok(st), 1);
	assert_string_equal(ng_sql_column_text(st, 0), "a ? b");
	assert_string_equal(ng_sql_column_text(st, 1), " ' ? ");
	assert_string_equal(ng_sql_column_text(st, 2), "' ?");
	assert_string_equal(ng_sql_column_text(st, 3), "one");
	assert_string_equal(ng_sql_column_text(st, 4), "two");
	ng_sql_finalize(st);
	ng_sql_close(db);
}

int main(void)
{
	pg = ng_test_backend_is_postgres();
	if (ng_test_store_spec("sql_drivers", spec, sizeof spec) != 0)
		return 1;
	fprintf(stderr, "[ info     ] backend %s, store %s\n", pg ? "postgres" : "sqlite", spec);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_type_round_trips),
		cmocka_unit_test(nan_round_trips),
		cmocka_unit_test(nulls_and_empties),
		cmocka_unit_test(rerun_1000_times_in_one_transaction),
		cmocka_unit_test(many_rows_step_in_order),
		cmocka_unit_test(done_stays_done_until_reset),
		cmocka_unit_test(rollback_discards),
		cmocka_unit_test(nested_begin_is_refused),
		cmocka_unit_test(commit_without_transaction_fails),
		cmocka_unit_test(failed_statement_spoils_the_transaction),
		cmocka_unit_test(writers_take_turns),
		cmocka_unit_test(read_transaction_is_a_snapshot),
		cmocka_unit_test(constraint_violation_is_constraint),
		cmocka_unit_test(step_error_names_the_sql),
		cmocka_unit_test(bad_bind_fails_the_step),
		cmocka_unit_test(sqlite_on_random_bytes_is_corrupt),
		cmocka_unit_test(sqlite_in_missing_directory),
		cmocka_unit_test(sqlite_open_sets_its_pragmas),
		cmocka_unit_test(pg_without_server_is_unreachable),
		cmocka_unit_test(pg_messages_never_show_a_password),
	};
	/* Only with a server: the SQLite variant does not list them as skipped,
	 * because a skip fails CI (scripts/ci-skips). */
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test(pg_named_statements_are_deallocated),
		cmocka_unit_test(pg_lost_connection_is_unreachable),
		cmocka_unit_test(pg_quoting_forms_hide_placeholders),
	};
	/* SQLite's writers only: PostgreSQL's lock manager queues its own. */
	const struct CMUnitTest sqlite_tests[] = {
		cmocka_unit_test(writers_served_in_order),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	if (pg)
		failed += cmocka_run_group_tests(pg_tests, NULL, NULL);
	else
		failed += cmocka_run_group_tests(sqlite_tests, NULL, NULL);
	if (!failed)
		ng_test_store_cleanup(spec);
	return failed;
}
