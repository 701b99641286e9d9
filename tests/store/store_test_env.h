/* Where a store test keeps its store, chosen by the environment that
 * ng_add_store_test (tests/store/CMakeLists.txt) gives each variant:
 *
 *   NODEGATE_TEST_BACKEND=sqlite    a fresh file in a new temporary directory
 *   NODEGATE_TEST_BACKEND=postgres  a fresh database on the test server whose
 *                                   URI is in $NODEGATE_TEST_PG_URI_FILE
 *
 * Unset means sqlite, so a test binary also runs by hand. Every test gets
 * its own database, so the PostgreSQL variants run in parallel. When the
 * server's URI file is missing (no PostgreSQL installed, or the fixture
 * did not run) the test exits 77, which CTest reports as skipped. */
#ifndef NODEGATE_TESTS_STORE_TEST_ENV_H
#define NODEGATE_TESTS_STORE_TEST_ENV_H

#include <ctype.h>
#include <dirent.h>
#include <libgen.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NG_TEST_SKIP 77

static inline bool ng_test_backend_is_postgres(void)
{
	const char *b = getenv("NODEGATE_TEST_BACKEND");
	return b && strcmp(b, "postgres") == 0;
}

/* The first line of path, without its newline; false when unreadable. */
static inline bool ng_test_read_line(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool got = fgets(out, (int)cap, f) != NULL;
	fclose(f);
	if (got)
		out[strcspn(out, "\r\n")] = '\0';
	return got && out[0];
}

/* "ngt_" and the test's name (prefixed by $NODEGATE_TEST_NAME, the CTest
 * name, when set), lower-cased, anything else as '_', within PostgreSQL's
 * 63 bytes. */
static inline void ng_test_db_name(const char *test_name, char *out, size_t cap)
{
	const char *outer = getenv("NODEGATE_TEST_NAME");
	char raw[256];
	snprintf(raw, sizeof raw, "%s%s%s", outer ? outer : "", outer ? "_" : "", test_name);
	size_t n = (size_t)snprintf(out, cap, "ngt_");
	for (const char *p = raw; *p && n + 1 < cap && n < 63; p++)
		out[n++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
	out[n] = '\0';
}

/* A URI for database db on the server the maintenance URI reaches: the same
 * query (socket, user), another path. */
static inline void ng_test_uri_for(const char *uri, const char *db, char *out, size_t cap)
{
	const char *auth = strstr(uri, "://");
	auth = auth ? auth + 3 : uri;
	size_t head = (size_t)(auth - uri) + strcspn(auth, "/?");
	const char *query = strchr(auth, '?');
	snprintf(out, cap, "%.*s/%s%s", (int)head, uri, db, query ? query : "");
}

static inline void ng_test_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* DROP and CREATE database db through the maintenance database. Parallel
 * tests may copy template1 at the same moment, which PostgreSQL can refuse
 * (object in use): that is retried. */
static inline int ng_test_pg_fresh_db(const char *uri, const char *db)
{
	PGconn *c = PQconnectdb(uri);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "store test: cannot connect to the test server at %s: %s", uri,
		        PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	PQsetNoticeProcessor(c, ng_test_quiet, NULL);
	char drop[160], create[160];
	snprintf(drop, sizeof drop, "DROP DATABASE IF EXISTS \"%s\"%s", db,
	         PQserverVersion(c) >= 130000 ? " WITH (FORCE)" : "");
	snprintf(create, sizeof create, "CREATE DATABASE \"%s\"", db);
	int rc = -1;
	for (int attempt = 0;; attempt++) {
		PGresult *r = PQexec(c, drop);
		if (PQresultStatus(r) == PGRES_COMMAND_OK) {
			PQclear(r);
			r = PQexec(c, create);
		}
		if (PQresultStatus(r) == PGRES_COMMAND_OK) {
			PQclear(r);
			rc = 0;
			break;
		}
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (!state || strcmp(state, "55006") != 0 || attempt == 50) {
			fprintf(stderr, "store test: cannot make database %s on %s: %s", db, uri,
			        PQresultErrorMessage(r));
			PQclear(r);
			break;
		}
		PQclear(r);
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	PQfinish(c);
	return rc;
}

/* A path for a SQLite store in a new directory under $TMPDIR or /tmp,
 * whatever the backend (tests of SQLite's own failures use it). */
static inline int ng_test_sqlite_path(char *out, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	char dir[512];
	snprintf(dir, sizeof dir, "%s/ng-store-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("store test: mkdtemp");
		return -1;
	}
	snprintf(out, cap, "%s/store.db", dir);
	return 0;
}

/* Fills out with the store to use for test_name: a path or a URI. Exits 77
 * (a skip) when the PostgreSQL variant has no server; returns -1, having
 * said why, when the store cannot be made. Each call makes a fresh one. */
static inline int ng_test_store_spec(const char *test_name, char *out, size_t cap)
{
	if (!ng_test_backend_is_postgres())
		return ng_test_sqlite_path(out, cap);
	const char *file = getenv("NODEGATE_TEST_PG_URI_FILE");
	char uri[1024], db[64];
	if (!file || !ng_test_read_line(file, uri, sizeof uri)) {
		fprintf(stderr, "store test: no PostgreSQL test server (%s is missing; "
		                "scripts/pg-test-server start DIR writes it): skipping\n",
		        file ? file : "NODEGATE_TEST_PG_URI_FILE");
		exit(NG_TEST_SKIP);
	}
	ng_test_db_name(test_name, db, sizeof db);
	if (ng_test_pg_fresh_db(uri, db) < 0)
		return -1;
	ng_test_uri_for(uri, db, out, cap);
	return 0;
}

/* Removes what ng_test_store_spec made for a SQLite store: the file, its
 * -wal and -shm, and the directory. PostgreSQL databases go with the
 * server. */
static inline void ng_test_store_cleanup(const char *spec)
{
	if (strstr(spec, "://"))
		return;
	char dir[1024];
	snprintf(dir, sizeof dir, "%.1000s", spec);
	char *d = dirname(dir);
	if (!strstr(d, "/ng-store-test."))
		return;
	DIR *h = opendir(d);
	char path[1400];
	for (struct dirent *e; h && (e = readdir(h));) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof path, "%s/%s", d, e->d_name);
			unlink(path);
		}
	}
	if (h)
		closedir(h);
	rmdir(d);
}

#endif
