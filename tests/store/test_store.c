/* The store's API (src/store/store.h), run once per backend
 * (NODEGATE_TEST_BACKEND): opening and refusing databases that are not a
 * nodegate store, records in all-or-nothing batches and the runs read back
 * for baselines and cohorts, baselines pinned and expired, quarantine cases,
 * overrides, fleet events, node states and hysteresis, and the audit chain,
 * which verifies after all of them and finds each way of tampering with it.
 *
 * Every test opens a store of its own (ng_test_store_spec with its own name),
 * so no test sees another's rows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store_test_env.h"

static bool pg;

/* ---- helpers ----------------------------------------------------------------------- */

/* A fresh, empty store spec for this test (a path or a URI). */
static void fresh_spec(const char *name, char *spec, size_t cap)
{
	if (ng_test_store_spec(name, spec, cap) != 0)
		fail_msg("cannot make a store for %s", name);
}

static ng_store *open_ok(const char *spec)
{
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(spec, &st, &err) != 0)
		fail_msg("cannot open the store %s: %s", spec, err.msg);
	assert_non_null(st);
	return st;
}

static ng_store *fresh_store(const char *name, char *spec, size_t cap)
{
	fresh_spec(name, spec, cap);
	return open_ok(spec);
}

static void done(ng_store *st, const char *spec)
{
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

/* Opening must fail; returns the message. */
static void open_fails(const char *spec, ng_err *err)
{
	ng_store *st = (ng_store *)1;
	memset(err, 0, sizeof *err);
	assert_int_equal(ng_store_open(spec, &st, err), -1);
	assert_null(st);
	assert_true(err->msg[0] != '\0');
	fprintf(stderr, "[ info     ] %s\n", err->msg);
}

/* A connection of the driver alone, to build or tamper with a database
 * underneath the store. */
static ng_sql *raw_open(const char *spec)
{
	ng_sql *db = NULL;
	ng_err err = {0};
	int rc = strstr(spec, "://") ? ng_sql_pg_open(spec, &db, &err)
	                             : ng_sql_sqlite_open(spec, &db, &err);
	if (rc != 0)
		fail_msg("cannot open %s: %s", spec, err.msg);
	return db;
}

static void exec_ok(ng_sql *db, const char *sql)
{
	ng_err err = {0};
	if (ng_sql_exec(db, sql, &err) != 0)
		fail_msg("`%s` failed: %s", sql, err.msg);
}

/* The single integer a query yields (one row, one column). */
static int64_t query_int(ng_sql *db, const char *sql)
{
	ng_sql_stmt *q = NULL;
	ng_err err = {0};
	if (ng_sql_prepare(db, sql, &q, &err) != 0)
		fail_msg("cannot prepare `%s`: %s", sql, err.msg);
	int r = ng_sql_step(q, &err);
	if (r != 1)
		fail_msg("`%s` yielded no row: %s", sql, err.msg);
	int64_t v = ng_sql_column_int64(q, 0);
	ng_sql_finalize(q);
	return v;
}

/* The single text a query yields, copied into out. */
static void query_text(ng_sql *db, const char *sql, char *out, size_t cap)
{
	ng_sql_stmt *q = NULL;
	ng_err err = {0};
	if (ng_sql_prepare(db, sql, &q, &err) != 0)
		fail_msg("cannot prepare `%s`: %s", sql, err.msg);
	if (ng_sql_step(q, &err) != 1)
		fail_msg("`%s` yielded no row: %s", sql, err.msg);
	const char *t = ng_sql_column_text(q, 0);
	snprintf(out, cap, "%s", t ? t : "");
	ng_sql_finalize(q);
}

static int64_t count_rows(ng_store *st, const char *table)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	return query_int(ng_store_sql(st), sql);
}

static int64_t count_records(ng_store *st)
{
	ng_err err = {0};
	int64_t n = ng_store_count_records(st, &err);
	if (n < 0)
		fail_msg("count_records: %s", err.msg);
	return n;
}

static void audit_verifies(ng_store *st, int64_t entries)
{
	ng_store_audit_report rep;
	ng_err err = {0};
	int rc = ng_store_audit_verify(st, &rep, &err);
	if (rc != 0)
		fail_msg("the audit log does not verify (rc %d): %s%s", rc, rep.problem, err.msg);
	assert_int_equal(rep.first_bad, 0);
	if (entries >= 0)
		assert_int_equal(rep.entries, entries);
}

static const char CLASS[] = "8xH100-SXM/1node";
static const char SW[] = "drv550/cuda12.4/nccl2.21";
static const char METRIC[] = "nccl.all_reduce.busbw";

/* A record of (node, class, software, metric) with the given samples. */
static ng_store_record rec(const char *node, const char *class_key, const char *software,
                           const char *metric, int64_t taken_at, const double *samples,
                           size_t n, bool idle, bool accepted)
{
	return (ng_store_record){
		.node = node,
		.class_key = class_key,
		.software = software,
		.domain = "fabric",
		.metric = metric,
		.unit = "GB/s",
		.run_id = "run-1",
		.raw_digest = NULL,
		.taken_at = taken_at,
		.samples = samples,
		.n_samples = n,
		.idle = idle,
		.accepted = accepted,
		.body = "{\"schema\":\"nodegate/record/1\"}",
		.profile = NULL,
	};
}

static void put_ok(ng_store *st, const ng_store_record *recs, size_t n, int64_t *ids)
{
	ng_err err = {0};
	if (ng_store_put_records(st, recs, n, ids, &err) != 0)
		fail_msg("put_records: %s", err.msg);
}

static void get_runs(ng_store *st, const char *class_key, const char *software,
                     const char *metric, int64_t since, ng_store_runs *out)
{
	ng_err err = {0};
	if (ng_store_baseline_runs(st, class_key, software, metric, since, out, &err) != 0)
		fail_msg("baseline_runs: %s", err.msg);
}

/* The nodes of runs, in the order given, as "a,b,c". */
static void run_nodes(const ng_store_runs *r, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < r->n; i++) {
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "%s%s", i ? "," : "", r->runs[i].node);
	}
}

/* ---- opening ------------------------------------------------------------------------- */

static void open_creates_schema_and_reopen_is_idempotent(void **state)
{
	(void)state;
	char spec[1024], v[64];
	ng_store *st = fresh_store("open_creates", spec, sizeof spec);
	ng_sql *db = ng_store_sql(st);
	assert_int_equal(ng_sql_kind_of(db), pg ? NG_SQL_POSTGRES : NG_SQL_SQLITE);
	query_text(db, "SELECT value FROM meta WHERE key = 'application'", v, sizeof v);
	assert_string_equal(v, "nodegate");
	query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof v);
	assert_int_equal(atoi(v), NG_STORE_SCHEMA_VERSION);
	int64_t meta_rows = count_rows(st, "meta");
	const char *tables[] = {"records",   "profiles", "retirements", "baselines",
	                        "verdicts",  "node_states", "hysteresis", "cases",
	                        "overrides", "fleet_events", "audit_log"};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		assert_int_equal(count_rows(st, tables[i]), 0);
	ng_strbuf rep = {0};
	ng_err err = {0};
	assert_int_equal(ng_store_check(st, &rep, &err), 0);
	assert_string_equal(rep.s, "ok");
	ng_strbuf_free(&rep);
	if (!pg)
		assert_string_equal(ng_store_where(st), spec);
	double s[] = {200.0, 201.0, 199.5};
	ng_store_record r = rec("n1", CLASS, SW, METRIC, 100, s, 3, true, true);
	put_ok(st, &r, 1, NULL);
	assert_int_equal(ng_store_audit(st, false, 100, "tester", "test.note", "store", NULL, &err),
	                 0);
	ng_store_close(st);

	/* Opening again, several times, changes nothing and loses nothing. */
	for (int k = 0; k < 3; k++) {
		st = open_ok(spec);
		db = ng_store_sql(st);
		query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof v);
		assert_int_equal(atoi(v), NG_STORE_SCHEMA_VERSION);
		assert_int_equal(count_rows(st, "meta"), meta_rows);
		assert_int_equal(count_records(st), 1);
		audit_verifies(st, 1);
		ng_store_close(st);
	}
	/* Two stores open on one database at once (two processes would be the
	 * same): both work. */
	ng_store *a = open_ok(spec), *b = open_ok(spec);
	put_ok(a, &r, 1, NULL);
	assert_int_equal(count_records(b), 2);
	ng_store_close(a);
	ng_store_close(b);
	ng_test_store_cleanup(spec);
}

/* A store an older nodegate wrote is migrated forward on open, keeping
 * what it held; GPU counters (schema 2) then round-trip. */
static void older_schema_is_migrated(void **state)
{
	(void)state;
	char spec[1024];
	ng_err err;
	ng_store *st = fresh_store("older_schema_is_migrated", spec, sizeof spec);
	double s[] = {200.0, 201.0, 199.5};
	ng_store_record r = rec("n1", CLASS, SW, METRIC, 100, s, 3, true, true);
	put_ok(st, &r, 1, NULL);
	assert_int_equal(ng_sql_exec(ng_store_sql(st),
	                             "DROP TABLE class_nodes;"
	                             "DROP TABLE cohort_runs;"
	                             "DROP TABLE gpu_counters;"
	                             "ALTER TABLE node_states DROP COLUMN duration_ms;"
	                             "DROP INDEX cases_by_metric;"
	                             "ALTER TABLE fleet_events DROP COLUMN metric;"
	                             "ALTER TABLE fleet_events DROP COLUMN clean_runs;"
	                             "ALTER TABLE fleet_events DROP COLUMN kind;"
	                             "DROP TABLE node_names;"
	                             "ALTER TABLE cases DROP COLUMN node_name;"
	                             "ALTER TABLE decisions DROP COLUMN node_name;"
	                             "ALTER TABLE node_states DROP COLUMN node_name;"
	                             "ALTER TABLE audit_log DROP COLUMN state;"
	                             "DROP INDEX baselines_by_family;"
	                             "ALTER TABLE baselines DROP COLUMN family;"
	                             "INSERT INTO overrides (node, reason, by_whom, created_at,"
	                             " expires_at) VALUES ('n1', 'old', 'bob', 10, 20);"
	                             "INSERT INTO node_states (node, class, software, outcome,"
	                             " updated_at, recheck_at, run_id) VALUES ('n1', 'c', 's',"
	                             " 'held', 10, 0, 'r');"
	                             "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
	                             &err),
	                 0);
	ng_store_close(st);
	st = open_ok(spec);
	/* The rows the old store held are adopted as they are, in one entry,
	 * and a later edit to them shows. */
	ng_store_audit_report rep;
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 0);
	assert_int_equal(rep.entries, 1);
	assert_int_equal(rep.rows, 2);
	char action[32];
	query_text(ng_store_sql(st), "SELECT action FROM audit_log WHERE seq = 1", action,
	           sizeof action);
	assert_string_equal(action, "store.upgrade");
	exec_ok(ng_store_sql(st), "UPDATE overrides SET expires_at = 99999999");
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 1);
	assert_non_null(strstr(rep.state_problem, "overrides row 1 was changed"));
	exec_ok(ng_store_sql(st), "UPDATE overrides SET expires_at = 20");
	char v[32];
	query_text(ng_store_sql(st), "SELECT value FROM meta WHERE key = 'schema_version'", v,
	           sizeof v);
	assert_int_equal(atoi(v), NG_STORE_SCHEMA_VERSION);
	assert_int_equal(count_records(st), 1);
	ng_store_gpu_counters c[2] = {{.uuid = "GPU-a", .at = 100, .retired_pages = 1,
	                               .remapped_rows = -1, .pcie_replays = 7, .nvlink_errors = 0},
	                              {.uuid = "GPU-a", .at = 200, .retired_pages = 2,
	                               .remapped_rows = 3, .pcie_replays = 9, .nvlink_errors = 0}};
	assert_int_equal(ng_store_put_gpu_counters(st, "n1", c, 2, &err), 0);
	ng_store_gpu_counters got;
	/* the newest at or before 150 */
	assert_int_equal(ng_store_gpu_counters_past(st, "n1", "GPU-a", 150, 300, &got, &err), 1);
	assert_int_equal(got.at, 100);
	assert_int_equal(got.remapped_rows, -1); /* not read then */
	assert_int_equal(got.pcie_replays, 7);
	/* none that old: the oldest before now */
	assert_int_equal(ng_store_gpu_counters_past(st, "n1", "GPU-a", 50, 300, &got, &err), 1);
	assert_int_equal(got.at, 100);
	assert_int_equal(ng_store_gpu_counters_past(st, "n1", "GPU-b", 500, 600, &got, &err), 0);
	assert_int_equal(ng_store_gpu_counters_past(st, "n2", "GPU-a", 500, 600, &got, &err), 0);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

/* A database with another program's tables is refused by name, and left as
 * it was. */
static void foreign_database_is_refused(void **state)
{
	(void)state;
	char spec[1024];
	fresh_spec("foreign", spec, sizeof spec);
	ng_sql *db = raw_open(spec);
	exec_ok(db, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)");
	exec_ok(db, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
	exec_ok(db, "INSERT INTO invoices (id, total) VALUES (1, 9.5)");
	ng_sql_close(db);

	ng_err err;
	open_fails(spec, &err);
	assert_non_null(strstr(err.msg, "another program's database"));
	assert_non_null(strstr(err.msg, "invoices"));
	assert_non_null(strstr(err.msg, "customers"));
	if (!pg)
		assert_non_null(strstr(err.msg, spec));

	/* Nothing was added to it. */
	db = raw_open(spec);
	const char *count_tables =
		pg ? "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
		   : "SELECT count(*) FROM sqlite_master WHERE type = 'table'";
	assert_int_equal(query_int(db, count_tables), 2);
	assert_int_equal(query_int(db, "SELECT count(*) FROM invoices"), 1);

	/* A table called meta that is not nodegate's is still someone else's. */
	exec_ok(db, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
	exec_ok(db, "INSERT INTO meta (key, value) VALUES ('application', 'billing')");
	ng_sql_close(db);
	open_fails(spec, &err);
	assert_non_null(strstr(err.msg, "another program's database"));
	assert_non_null(strstr(err.msg, "meta"));
	ng_test_store_cleanup(spec);
}

static void newer_schema_is_refused(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("newer", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
	ng_store_close(st);
	ng_err err;
	open_fails(spec, &err);
	assert_non_null(strstr(err.msg, "newer nodegate"));
	assert_non_null(strstr(err.msg, "99"));
	/* and left at 99: a refusal never migrates anything down */
	ng_sql *db = raw_open(spec);
	char v[16];
	query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof v);
	assert_string_equal(v, "99");
	ng_sql_close(db);
	ng_test_store_cleanup(spec);
}

/* A file of random bytes is not a database: refused, by path, as corrupt,
 * and not overwritten. Needs no server: runs in both variants. */
static void random_bytes_are_refused(void **state)
{
	(void)state;
	char path[1024];
	assert_int_equal(ng_test_sqlite_path(path, sizeof path), 0);
	unsigned char junk[8192];
	srand(7);
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)rand();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
	close(fd);

	ng_err err;
	open_fails(path, &err);
	assert_int_equal(ng_sql_open_error(), NG_SQL_E_CORRUPT);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "not a database"));

	unsigned char back[sizeof junk + 1];
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, back, sizeof back), (ssize_t)sizeof junk);
	close(fd);
	assert_memory_equal(back, junk, sizeof junk);
	ng_test_store_cleanup(path);
}

/* ---- records ------------------------------------------------------------------------- */

static void put_records_gives_ids_and_is_all_or_nothing(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("put_records", spec, sizeof spec);
	double s1[] = {1.5, 2.5, 3.5}, s2[] = {10.0};
	ng_store_record recs[3] = {
		rec("n1", CLASS, SW, METRIC, 100, s1, 3, true, false),
		rec("n2", CLASS, SW, METRIC, 101, s2, 1, false, false),
		rec("n3", CLASS, SW, METRIC, 102, NULL, 0, true, false),
	};
	recs[0].raw_digest = "ab12";
	recs[0].profile = "{\"gpus\":8}";
	recs[1].profile = "{\"gpus\":8}";
	int64_t ids[3] = {0};
	put_ok(st, recs, 3, ids);
	assert_true(ids[0] > 0);
	assert_true(ids[1] > ids[0]);
	assert_true(ids[2] > ids[1]);
	assert_int_equal(count_records(st), 3);
	assert_int_equal(count_rows(st, "profiles"), 1); /* kept once per content */

	ng_sql *db = ng_store_sql(st);
	char sql[256], v[128];
	snprintf(sql, sizeof sql, "SELECT node FROM records WHERE id = %lld", (long long)ids[1]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "n2");
	snprintf(sql, sizeof sql, "SELECT raw_digest FROM records WHERE id = %lld", (long long)ids[0]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "ab12");
	snprintf(sql, sizeof sql, "SELECT n_samples FROM records WHERE id = %lld", (long long)ids[0]);
	assert_int_equal(query_int(db, sql), 3);

	/* ids is optional */
	put_ok(st, recs, 1, NULL);
	assert_int_equal(count_records(st), 4);

	/* One bad record in a batch: none of the batch is stored. */
	ng_store_record bad[3] = {recs[0], recs[1], recs[2]};
	bad[2].node = NULL;
	ng_err err = {0};
	int64_t ids2[3] = {-1, -1, -1};
	assert_int_equal(ng_store_put_records(st, bad, 3, ids2, &err), -1);
	assert_non_null(strstr(err.msg, "record 2"));
	assert_int_equal(count_records(st), 4);
	bad[2] = recs[2];
	bad[1].metric = "";
	assert_int_equal(ng_store_put_records(st, bad, 3, ids2, &err), -1);
	assert_int_equal(count_records(st), 4);
	/* and the store goes on working after a refused batch */
	put_ok(st, recs, 3, ids2);
	assert_true(ids2[0] > ids[2]);
	assert_int_equal(count_records(st), 7);
	done(st, spec);
}

static void put_json_records_refuses_incomplete_batches(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("put_json", spec, sizeof spec);
	const char *good =
		"{\"schema\":\"nodegate/record/1\",\"node\":\"gpu-001\",\"class\":\"8xH100\","
		"\"software\":\"sw-a\",\"metric\":\"nccl.all_reduce.busbw\",\"samples\":[1,2,3],"
		"\"wrong\":0,\"profile\":{\"gpus\":8},\"tool\":{\"raw_sha256\":\"feed01\"}}";
	const char *no_node = "{\"class\":\"8xH100\",\"metric\":\"nccl.all_reduce.busbw\","
	                      "\"samples\":[1]}";
	const char *no_class = "{\"node\":\"gpu-002\",\"metric\":\"nccl.all_reduce.busbw\","
	                       "\"samples\":[1]}";
	ng_store_ingest how = {"import-1", 500, true, true, "tester"};
	ng_err err = {0};
	int64_t ids[3];

	const char *bad_batches[][2] = {{no_node, "no node"}, {no_class, "no class"}};
	for (size_t b = 0; b < 2; b++) {
		char text[1024];
		snprintf(text, sizeof text, "[%s, %s, %s]", good, bad_batches[b][0], good);
		cJSON *arr = cJSON_Parse(text);
		assert_non_null(arr);
		assert_int_equal(ng_store_put_json_records(st, arr, &how, ids, &err), -1);
		fprintf(stderr, "[ info     ] %s\n", err.msg);
		assert_non_null(strstr(err.msg, "record 1"));
		assert_non_null(strstr(err.msg, bad_batches[b][1]));
		assert_int_equal(count_records(st), 0);
		assert_int_equal(count_rows(st, "profiles"), 0);
		assert_int_equal(count_rows(st, "audit_log"), 0);
		cJSON_Delete(arr);
	}
	cJSON *notarr = cJSON_Parse(good);
	assert_int_equal(ng_store_put_json_records(st, notarr, &how, ids, &err), -1);
	cJSON_Delete(notarr);

	/* A good batch: domain and unit come from the metric registry, samples
	 * that are not finite positive numbers stay out of the baseline copy but
	 * in the body, and the profile is kept apart, once. */
	char text[2048];
	snprintf(text, sizeof text,
	         "[%s, {\"node\":\"gpu-002\",\"class\":\"8xH100\",\"metric\":"
	         "\"nccl.all_reduce.busbw\",\"samples\":[5, -1, 0, \"x\", null, 7],"
	         "\"profile\":{\"gpus\":8}}]",
	         good);
	cJSON *arr = cJSON_Parse(text);
	assert_non_null(arr);
	ids[0] = ids[1] = 0;
	if (ng_store_put_json_records(st, arr, &how, ids, &err) != 0)
		fail_msg("put_json_records: %s", err.msg);
	assert_true(ids[0] > 0 && ids[1] > ids[0]);
	/* the caller's records keep their profiles */
	assert_non_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 1), "profile"));
	cJSON_Delete(arr);
	assert_int_equal(count_records(st), 2);
	assert_int_equal(count_rows(st, "profiles"), 1);
	ng_sql *db = ng_store_sql(st);
	char sql[256], v[512];
	/* the batch is audited in its transaction, as the actor asked */
	audit_verifies(st, 1);
	query_text(db, "SELECT action FROM audit_log WHERE seq = 1", v, sizeof v);
	assert_string_equal(v, "records.ingest");
	query_text(db, "SELECT subject FROM audit_log WHERE seq = 1", v, sizeof v);
	assert_string_equal(v, "run:import-1");
	/* no actor, no audit entry */
	how.actor = NULL;
	arr = cJSON_Parse(text);
	if (ng_store_put_json_records(st, arr, &how, NULL, &err) != 0)
		fail_msg("put_json_records: %s", err.msg);
	cJSON_Delete(arr);
	assert_int_equal(count_records(st), 4);
	assert_int_equal(count_rows(st, "audit_log"), 1);
	snprintf(sql, sizeof sql, "SELECT domain FROM records WHERE id = %lld", (long long)ids[1]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "fabric");
	snprintf(sql, sizeof sql, "SELECT unit FROM records WHERE id = %lld", (long long)ids[1]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "GB/s");
	snprintf(sql, sizeof sql, "SELECT software FROM records WHERE id = %lld", (long long)ids[1]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "");
	snprintf(sql, sizeof sql, "SELECT software FROM records WHERE id = %lld", (long long)ids[0]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "sw-a");
	snprintf(sql, sizeof sql, "SELECT raw_digest FROM records WHERE id = %lld", (long long)ids[0]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "feed01");
	snprintf(sql, sizeof sql, "SELECT run_id FROM records WHERE id = %lld", (long long)ids[1]);
	query_text(db, sql, v, sizeof v);
	assert_string_equal(v, "import-1");
	snprintf(sql, sizeof sql, "SELECT n_samples FROM records WHERE id = %lld", (long long)ids[1]);
	assert_int_equal(query_int(db, sql), 2);
	snprintf(sql, sizeof sql, "SELECT body FROM records WHERE id = %lld", (long long)ids[1]);
	query_text(db, sql, v, sizeof v);
	assert_non_null(strstr(v, "\"x\""));
	assert_null(strstr(v, "profile"));

	ng_store_runs runs;
	get_runs(st, "8xH100", "", "nccl.all_reduce.busbw", 0, &runs);
	assert_int_equal(runs.n, 2);
	assert_string_equal(runs.runs[0].node, "gpu-002");
	assert_int_equal(runs.runs[0].n_samples, 2);
	assert_true(runs.runs[0].samples[0] == 5.0 && runs.runs[0].samples[1] == 7.0);
	ng_store_runs_free(&runs);
	done(st, spec);
}

/* Only accepted runs of idle nodes of exactly this (class, software,
 * metric), with samples, in the window, and after the class's last
 * retirement. */
static void baseline_runs_are_the_accepted_idle_runs_in_the_window(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("baseline_runs", spec, sizeof spec);
	double a[] = {100, 101, 102}, b[] = {90, 91}, c[] = {80};
	ng_store_record recs[] = {
		rec("in-1", CLASS, SW, METRIC, 1000, a, 3, true, true),
		rec("not-accepted", CLASS, SW, METRIC, 1000, a, 3, true, false),
		rec("not-idle", CLASS, SW, METRIC, 1000, a, 3, false, true),
		rec("other-class", "other-class", SW, METRIC, 1000, a, 3, true, true),
		rec("other-sw", CLASS, "other-sw", METRIC, 1000, a, 3, true, true),
		rec("other-metric", CLASS, SW, "nccl.all_gather.busbw", 1000, a, 3, true, true),
		rec("too-old", CLASS, SW, METRIC, 499, a, 3, true, true),
		rec("no-samples", CLASS, SW, METRIC, 1000, NULL, 0, true, true),
		rec("in-2", CLASS, SW, METRIC, 2000, b, 2, true, true),
		rec("in-1", CLASS, SW, METRIC, 1500, c, 1, true, true),
		rec("edge", CLASS, SW, METRIC, 500, c, 1, true, true),
	};
	put_ok(st, recs, sizeof recs / sizeof recs[0], NULL);

	ng_store_runs r;
	char nodes[512];
	get_runs(st, CLASS, SW, METRIC, 500, &r);
	assert_int_equal(r.n, 4);
	run_nodes(&r, nodes, sizeof nodes);
	fprintf(stderr, "[ info     ] runs: %s\n", nodes);
	assert_int_equal(r.newest, 2000);
	assert_int_equal(r.n_samples, 3 + 2 + 1 + 1);
	size_t seen = 0;
	for (size_t i = 0; i < r.n; i++) {
		const ng_baseline_run *x = &r.runs[i];
		if (strcmp(x->node, "in-1") == 0 && x->n_samples == 3) {
			assert_true(x->samples[0] == 100 && x->samples[1] == 101 && x->samples[2] == 102);
			seen |= 1;
		} else if (strcmp(x->node, "in-2") == 0) {
			assert_int_equal(x->n_samples, 2);
			assert_true(x->samples[0] == 90 && x->samples[1] == 91);
			seen |= 2;
		} else if (strcmp(x->node, "in-1") == 0) {
			assert_true(x->n_samples == 1 && x->samples[0] == 80);
			seen |= 4;
		} else if (strcmp(x->node, "edge") == 0) {
			seen |= 8;
		} else {
			fail_msg("run of %s should not be there", x->node);
		}
	}
	assert_int_equal(seen, 15);
	ng_store_runs_free(&r);

	/* The software defaults to "" when NULL, and nothing matches it here. */
	get_runs(st, CLASS, NULL, METRIC, 0, &r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.newest, 0);
	ng_store_runs_free(&r);

	/* (CLASS, SW, METRIC), (CLASS, SW, all_gather), (CLASS, other-sw, METRIC);
	 * other-class's too when no class is named */
	ng_err err = {0};
	char *keys = NULL;
	size_t nkeys = 0;
	assert_int_equal(ng_store_baseline_keys(st, CLASS, 500, &keys, &nkeys, &err), 0);
	assert_int_equal(nkeys, 3);
	free(keys);
	assert_int_equal(ng_store_baseline_keys(st, NULL, 500, &keys, &nkeys, &err), 0);
	assert_int_equal(nkeys, 4);
	free(keys);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 500, &err), 8);

	/* A retirement of another class changes nothing here. */
	assert_int_equal(ng_store_expire_baselines(st, "other-class", NULL, "driver update", 5000,
	                                           "tester", &err),
	                 0);
	get_runs(st, CLASS, SW, METRIC, 500, &r);
	assert_int_equal(r.n, 4);
	ng_store_runs_free(&r);
	/* Expiring one metric retires no samples. */
	assert_int_equal(
		ng_store_expire_baselines(st, CLASS, METRIC, "one metric", 1800, "tester", &err), 0);
	get_runs(st, CLASS, SW, METRIC, 500, &r);
	assert_int_equal(r.n, 4);
	ng_store_runs_free(&r);
	/* Expiring the class retires every sample taken before `at`; one taken
	 * at `at` stays. */
	assert_int_equal(ng_store_expire_baselines(st, CLASS, NULL, "firmware update", 1500,
	                                           "tester", &err),
	                 0);
	get_runs(st, CLASS, SW, METRIC, 0, &r);
	run_nodes(&r, nodes, sizeof nodes);
	assert_int_equal(r.n, 2);
	for (size_t i = 0; i < r.n; i++)
		assert_true(r.runs[i].n_samples == (strcmp(r.runs[i].node, "in-2") == 0 ? 2u : 1u));
	ng_store_runs_free(&r);
	/* Only the later retirement counts, whatever order they were made in. */
	assert_int_equal(
		ng_store_expire_baselines(st, CLASS, NULL, "older", 1000, "tester", &err), 0);
	get_runs(st, CLASS, SW, METRIC, 0, &r);
	assert_int_equal(r.n, 2);
	ng_store_runs_free(&r);

	/* What baselines can be built for honours the retirement too: only
	 * (CLASS, SW, METRIC) has samples from 1500 on. */
	assert_int_equal(ng_store_baseline_keys(st, CLASS, 500, &keys, &nkeys, &err), 0);
	assert_int_equal(nkeys, 1);
	assert_string_equal(keys, CLASS);
	assert_string_equal(keys + strlen(CLASS) + 1, SW);
	free(keys);
	done(st, spec);
}

static void accept_records_lets_runs_into_baselines(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("accept", spec, sizeof spec);
	double s[] = {5, 6, 7};
	ng_store_record recs[] = {
		rec("a", CLASS, SW, METRIC, 10, s, 3, true, false),
		rec("b", CLASS, SW, METRIC, 10, s, 3, true, false),
		rec("c", CLASS, SW, METRIC, 10, s, 3, true, false),
	};
	int64_t ids[3];
	put_ok(st, recs, 3, ids);
	ng_store_runs r;
	get_runs(st, CLASS, SW, METRIC, 0, &r);
	assert_int_equal(r.n, 0);
	ng_store_runs_free(&r);
	ng_err err = {0};
	assert_int_equal(ng_store_accept_records(st, ids, 0, &err), 0);
	int64_t pick[] = {ids[0], ids[2]};
	assert_int_equal(ng_store_accept_records(st, pick, 2, &err), 0);
	get_runs(st, CLASS, SW, METRIC, 0, &r);
	assert_int_equal(r.n, 2);
	char nodes[64];
	run_nodes(&r, nodes, sizeof nodes);
	assert_true(strcmp(nodes, "a,c") == 0 || strcmp(nodes, "c,a") == 0);
	ng_store_runs_free(&r);
	/* accepting again is harmless */
	assert_int_equal(ng_store_accept_records(st, pick, 2, &err), 0);
	done(st, spec);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Each other node's newest run only, of this class and software, in the
 * window; the node itself left out. */
static void cohort_drops_take_each_nodes_newest_run(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("cohort", spec, sizeof spec);
	double s100[] = {99, 100, 101}, s90[] = {90, 89, 91}, s80[] = {80}, s70[] = {70, 70},
	       s50[] = {50};
	ng_store_record recs[] = {
		rec("a", CLASS, SW, METRIC, 100, s100, 3, true, true),
		rec("a", CLASS, SW, METRIC, 200, s90, 3, false, false), /* a's newest */
		rec("b", CLASS, SW, METRIC, 150, s80, 1, true, true),
		rec("me", CLASS, SW, METRIC, 300, s50, 1, true, true),    /* excluded node */
		rec("old", CLASS, SW, METRIC, 50, s50, 1, true, true),    /* before since */
		rec("other", "other-class", SW, METRIC, 150, s50, 1, true, true),
		rec("othersw", CLASS, "sw-2", METRIC, 150, s50, 1, true, true),
		rec("c", CLASS, SW, METRIC, 120, s50, 1, true, true),
		rec("c", CLASS, SW, METRIC, 120, s70, 2, true, true), /* same time, written later */
		rec("d", CLASS, SW, METRIC, 130, s80, 1, true, true),
		rec("d", CLASS, SW, METRIC, 140, NULL, 0, true, true), /* nothing measured */
	};
	put_ok(st, recs, sizeof recs / sizeof recs[0], NULL);
	double *drops = NULL;
	size_t n = 0;
	ng_err err = {0};
	assert_int_equal(
		ng_store_cohort_drops(st, CLASS, SW, METRIC, "me", 60, 100.0, &drops, &n, &err), 0);
	assert_int_equal(n, 4);
	qsort(drops, n, sizeof *drops, cmp_double);
	const double want[] = {0.10, 0.20, 0.20, 0.30}; /* a 90, b 80, d 80, c 70 */
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(drops[i] - want[i]) < 1e-12);
	free(drops);
	/* nobody else: none */
	assert_int_equal(
		ng_store_cohort_drops(st, "empty-class", SW, METRIC, "me", 0, 100.0, &drops, &n, &err),
		0);
	assert_int_equal(n, 0);
	free(drops);
	done(st, spec);
}

/* A store from before schema 10 has its class nodes and cohort runs filled
 * from its records when it is opened: the same cohort and count as a store
 * that kept them from the start. */
static void cohort_is_filled_for_an_older_store(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("cohort_fill", spec, sizeof spec);
	double s100[] = {99, 100, 101}, s90[] = {90, 89, 91}, s50[] = {50}, s70[] = {70, 70};
	ng_store_record recs[] = {
		rec("a", CLASS, SW, METRIC, 100, s100, 3, true, true),
		rec("a", CLASS, SW, METRIC, 200, s90, 3, false, false),
		rec("c", CLASS, SW, METRIC, 120, s50, 1, true, true),
		rec("c", CLASS, SW, METRIC, 120, s70, 2, true, true),
		rec("e", CLASS, SW, METRIC, 40, s50, 1, true, true),
	};
	put_ok(st, recs, sizeof recs / sizeof recs[0], NULL);
	ng_err err = {0};
	assert_int_equal(ng_sql_exec(ng_store_sql(st),
	                             "DELETE FROM cohort_runs; DELETE FROM class_nodes;"
	                             "ALTER TABLE fleet_events DROP COLUMN kind;"
	                             "DROP INDEX baselines_by_family;"
	                             "ALTER TABLE baselines DROP COLUMN family;"
	                             "UPDATE meta SET value = '9' WHERE key = 'schema_version'",
	                             &err),
	                 0);
	ng_store_close(st);
	st = open_ok(spec);
	double *drops = NULL;
	size_t n = 0;
	assert_int_equal(
		ng_store_cohort_drops(st, CLASS, SW, METRIC, "me", 60, 100.0, &drops, &n, &err), 0);
	assert_int_equal(n, 2);
	qsort(drops, n, sizeof *drops, cmp_double);
	assert_true(fabs(drops[0] - 0.10) < 1e-12); /* a's newest: 90 */
	assert_true(fabs(drops[1] - 0.30) < 1e-12); /* c's last written at 120: 70 */
	free(drops);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 60, &err), 2);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 0, &err), 3);
	done(st, spec);
}

/* The sorted drops of the cohort of "me" since 60 against 100. */
static size_t sorted_drops(ng_store *st, double *out, size_t cap)
{
	double *drops = NULL;
	size_t n = 0;
	ng_err err = {0};
	if (ng_store_cohort_drops(st, CLASS, SW, METRIC, "me", 60, 100.0, &drops, &n, &err) != 0)
		fail_msg("cohort_drops: %s", err.msg);
	assert_true(n <= cap);
	qsort(drops, n, sizeof *drops, cmp_double);
	memcpy(out, drops, n * sizeof *drops);
	free(drops);
	return n;
}

/* A scratch store (the fleet simulator's) answers as an ordinary one: in
 * one batch of transactions, its in-memory copy of the cohort follows the
 * records written after it was made, forgets a rolled-back write, and what
 * the batch committed is there for an ordinary open. PostgreSQL cannot be
 * one. */
static void scratch_store_answers_as_an_ordinary_one(void **state)
{
	(void)state;
	char spec[1024];
	fresh_spec("scratch", spec, sizeof spec);
	ng_store *st = (ng_store *)1;
	ng_err err = {0};
	if (pg) {
		assert_int_equal(ng_store_open_scratch(spec, &st, &err), -1);
		assert_true(strstr(err.msg, "SQLite") != NULL);
		ng_test_store_cleanup(spec);
		return;
	}
	if (ng_store_open_scratch(spec, &st, &err) != 0)
		fail_msg("open_scratch: %s", err.msg);
	assert_int_equal(ng_store_batch_begin(st, &err), 0);
	assert_int_equal(ng_store_batch_begin(st, &err), -1); /* one at a time */
	double s90[] = {90, 89, 91}, s80[] = {80}, s70[] = {70, 70}, s60[] = {60}, s50[] = {50};
	ng_store_record first[] = {
		rec("a", CLASS, SW, METRIC, 100, s90, 3, true, true),
		rec("b", CLASS, SW, METRIC, 150, s80, 1, true, true),
		rec("me", CLASS, SW, METRIC, 300, s50, 1, true, true),
	};
	put_ok(st, first, 3, NULL);
	double d[8];
	assert_int_equal(sorted_drops(st, d, 8), 2); /* the copy is made here */
	assert_true(fabs(d[0] - 0.10) < 1e-12 && fabs(d[1] - 0.20) < 1e-12);
	/* written after the copy: b's newer run replaces its older, c is new,
	 * and a run at the same time as a's newest but stored later wins */
	ng_store_record more[] = {
		rec("b", CLASS, SW, METRIC, 160, s70, 2, true, true),
		rec("c", CLASS, SW, METRIC, 170, s60, 1, true, true),
		rec("a", CLASS, SW, METRIC, 100, s50, 1, true, true),
		rec("old", CLASS, SW, METRIC, 10, s50, 1, true, true), /* before since */
	};
	put_ok(st, more, 4, NULL);
	assert_int_equal(sorted_drops(st, d, 8), 3);
	assert_true(fabs(d[0] - 0.30) < 1e-12 && fabs(d[1] - 0.40) < 1e-12 &&
	            fabs(d[2] - 0.50) < 1e-12);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 60, &err), 4);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 0, &err), 5);
	/* a write that fails part way is rolled back, its first rows with it */
	ng_store_record bad[] = {
		rec("d", CLASS, SW, METRIC, 200, s90, 3, true, true),
		rec(NULL, CLASS, SW, METRIC, 200, s90, 3, true, true),
	};
	assert_int_equal(ng_store_put_records(st, bad, 2, NULL, &err), -1);
	assert_int_equal(sorted_drops(st, d, 8), 3);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 0, &err), 5);
	assert_int_equal(ng_store_batch_end(st, &err), 0);
	ng_store_close(st);

	/* committed: an ordinary open reads the same */
	st = open_ok(spec);
	assert_int_equal(sorted_drops(st, d, 8), 3);
	assert_true(fabs(d[0] - 0.30) < 1e-12 && fabs(d[2] - 0.50) < 1e-12);
	assert_int_equal(ng_store_count_class_nodes(st, CLASS, 0, &err), 5);
	done(st, spec);
}

/* ---- baselines ----------------------------------------------------------------------- */

static ng_store_baseline baseline(const char *metric, const char *status, double median,
                                  int64_t built_at)
{
	ng_store_baseline b;
	memset(&b, 0, sizeof b);
	ng_copy(b.class_key, sizeof b.class_key, CLASS);
	ng_copy(b.software, sizeof b.software, SW);
	ng_copy(b.metric, sizeof b.metric, metric);
	ng_copy(b.unit, sizeof b.unit, "GB/s");
	ng_copy(b.status, sizeof b.status, status);
	b.median = median;
	b.cv = strcmp(status, "ok") == 0 ? 0.01 : NAN;
	b.node_mad = 0.5;
	b.n_nodes = 12;
	b.n_runs = 30;
	b.n_samples = 270;
	b.min_nodes = 8;
	b.built_at = built_at;
	b.window_start = built_at - 86400;
	b.window_end = built_at;
	return b;
}

static void put_baseline_ok(ng_store *st, ng_store_baseline *b)
{
	ng_err err = {0};
	if (ng_store_put_baseline(st, b, "tester", &err) != 0)
		fail_msg("put_baseline: %s", err.msg);
	assert_true(b->id > 0);
}

/* 1 and its id, or 0. */
static int64_t current_id(ng_store *st, const char *metric)
{
	ng_store_baseline b;
	ng_err err = {0};
	int r = ng_store_current_baseline(st, CLASS, SW, metric, &b, &err);
	if (r < 0)
		fail_msg("current_baseline: %s", err.msg);
	return r == 1 ? b.id : 0;
}

static void baselines_pinned_beat_built_and_expired_are_never_current(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("baselines", spec, sizeof spec);
	ng_err err = {0};
	assert_int_equal(current_id(st, METRIC), 0);

	ng_store_baseline refusal = baseline(METRIC, "too-few-nodes", NAN, 50);
	put_baseline_ok(st, &refusal);
	assert_int_equal(current_id(st, METRIC), 0); /* a refusal is never current */

	ng_store_baseline b1 = baseline(METRIC, "ok", 200.0, 100), b2 = baseline(METRIC, "ok", 210.0, 200);
	put_baseline_ok(st, &b1);
	put_baseline_ok(st, &b2);
	assert_int_equal(current_id(st, METRIC), b2.id);

	/* everything round-trips, NaN included */
	ng_store_baseline got;
	assert_int_equal(ng_store_get_baseline(st, b2.id, &got, &err), 1);
	assert_string_equal(got.class_key, CLASS);
	assert_string_equal(got.software, SW);
	assert_string_equal(got.metric, METRIC);
	assert_string_equal(got.unit, "GB/s");
	assert_string_equal(got.status, "ok");
	assert_true(got.median == 210.0 && got.cv == 0.01 && got.node_mad == 0.5);
	assert_true(got.n_nodes == 12 && got.n_runs == 30 && got.n_samples == 270);
	assert_true(got.min_nodes == 8 && got.built_at == 200);
	assert_true(got.window_start == 200 - 86400 && got.window_end == 200);
	assert_true(got.pinned_at == 0 && got.expired_at == 0 && got.pinned_name[0] == '\0');
	assert_int_equal(ng_store_get_baseline(st, refusal.id, &got, &err), 1);
	assert_true(isnan(got.median) && isnan(got.cv));
	assert_int_equal(ng_store_get_baseline(st, 999999, &got, &err), 0);

	/* Pinned beats newer built, and stays ahead of baselines built later. */
	assert_int_equal(ng_store_pin_baseline(st, b1.id, "pre-upgrade", 250, "tester", &err), 0);
	assert_int_equal(current_id(st, METRIC), b1.id);
	ng_store_baseline b3 = baseline(METRIC, "ok", 220.0, 300);
	put_baseline_ok(st, &b3);
	assert_int_equal(current_id(st, METRIC), b1.id);
	assert_int_equal(ng_store_get_baseline(st, b1.id, &got, &err), 1);
	assert_string_equal(got.pinned_name, "pre-upgrade");
	assert_int_equal(got.pinned_at, 250);
	/* the newest pin wins among pins */
	assert_int_equal(ng_store_pin_baseline(st, b2.id, "later-pin", 260, "tester", &err), 0);
	assert_int_equal(current_id(st, METRIC), b2.id);

	/* A refusal cannot be pinned; nor can a missing baseline. */
	assert_int_equal(ng_store_pin_baseline(st, refusal.id, "x", 270, "tester", &err), -1);
	assert_non_null(strstr(err.msg, "refusal"));
	assert_int_equal(ng_store_pin_baseline(st, 424242, "x", 270, "tester", &err), -1);

	/* Another metric of the class, untouched by expiring this one. */
	ng_store_baseline other = baseline("nccl.all_gather.busbw", "ok", 150.0, 300);
	put_baseline_ok(st, &other);

	/* Expiring the metric: its three current baselines and the refusal. */
	assert_int_equal(
		ng_store_expire_baselines(st, CLASS, METRIC, "NCCL upgrade", 400, "tester", &err), 4);
	assert_int_equal(current_id(st, METRIC), 0); /* pinned or not, expired is never current */
	assert_int_equal(current_id(st, "nccl.all_gather.busbw"), other.id);
	assert_int_equal(ng_store_get_baseline(st, b2.id, &got, &err), 1);
	assert_int_equal(got.expired_at, 400);
	assert_string_equal(got.expired_reason, "NCCL upgrade");
	assert_int_equal(count_rows(st, "retirements"), 0); /* one metric: no samples retired */
	/* An expired baseline cannot be pinned back. */
	assert_int_equal(ng_store_pin_baseline(st, b3.id, "again", 410, "tester", &err), -1);
	assert_non_null(strstr(err.msg, "expired"));
	assert_int_equal(current_id(st, METRIC), 0);
	/* Expiring again expires nothing more. */
	assert_int_equal(
		ng_store_expire_baselines(st, CLASS, METRIC, "again", 420, "tester", &err), 0);

	/* A baseline built after the expiry is current again. */
	ng_store_baseline b4 = baseline(METRIC, "ok", 230.0, 500);
	put_baseline_ok(st, &b4);
	assert_int_equal(current_id(st, METRIC), b4.id);

	ng_store_baseline *list = NULL;
	size_t n = 0;
	assert_int_equal(ng_store_list_baselines(st, CLASS, true, &list, &n, &err), 0);
	assert_int_equal(n, 2); /* b4 and other */
	free(list);
	assert_int_equal(ng_store_list_baselines(st, NULL, false, &list, &n, &err), 0);
	assert_int_equal(n, 6);
	free(list);

	/* The whole class: every metric's baselines, and the samples before. */
	assert_int_equal(
		ng_store_expire_baselines(st, CLASS, NULL, "driver update", 600, "tester", &err), 2);
	assert_int_equal(current_id(st, "nccl.all_gather.busbw"), 0);
	assert_int_equal(current_id(st, METRIC), 0);
	assert_int_equal(count_rows(st, "retirements"), 1);
	/* six builds, two pins and three expiries are in the audit log; the
	 * refused pins left nothing */
	audit_verifies(st, 6 + 2 + 3);
	done(st, spec);
}

/* ---- cases, overrides, fleet events ------------------------------------------------ */

static ng_store_case a_case(const char *node, int64_t at)
{
	ng_store_case c;
	memset(&c, 0, sizeof c);
	ng_copy(c.node, sizeof c.node, node);
	ng_copy(c.class_key, sizeof c.class_key, CLASS);
	ng_copy(c.software, sizeof c.software, SW);
	ng_copy(c.domain, sizeof c.domain, "fabric");
	ng_copy(c.metric, sizeof c.metric, METRIC);
	ng_copy(c.release_condition, sizeof c.release_condition,
	        "nccl.all_reduce.busbw passes twice");
	c.opened_at = at;
	c.evidence = (char *)"{\"drop\":0.12,\"raw\":\"sha256:ab\"}";
	return c;
}

static void cases_open_retry_close(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("cases", spec, sizeof spec);
	ng_err err = {0};
	ng_store_case got;
	assert_int_equal(ng_store_open_case_of(st, "n1", &got, &err), 0);

	ng_store_case c1 = a_case("n1", 100);
	assert_int_equal(ng_store_open_case(st, &c1, "nodegate", &err), 0);
	assert_true(c1.id > 0);
	assert_int_equal(ng_store_open_case_of(st, "n1", &got, &err), 1);
	assert_int_equal(got.id, c1.id);
	assert_string_equal(got.class_key, CLASS);
	assert_string_equal(got.software, SW);
	assert_string_equal(got.metric, METRIC);
	assert_string_equal(got.domain, "fabric");
	assert_string_equal(got.release_condition, "nccl.all_reduce.busbw passes twice");
	assert_string_equal(got.evidence, "{\"drop\":0.12,\"raw\":\"sha256:ab\"}");
	assert_true(got.opened_at == 100 && got.closed_at == 0 && got.passes == 0 && got.retries == 0);
	ng_store_case_free(&got);

	/* A second open case for the node is refused, and nothing is written. */
	int64_t audit_before = count_rows(st, "audit_log");
	ng_store_case dup = a_case("n1", 110);
	assert_int_equal(ng_store_open_case(st, &dup, "nodegate", &err), -1);
	assert_non_null(strstr(err.msg, "already has open case"));
	assert_int_equal(count_rows(st, "cases"), 1);
	assert_int_equal(count_rows(st, "audit_log"), audit_before);

	ng_store_case c2 = a_case("n2", 120);
	c2.evidence = NULL;
	assert_int_equal(ng_store_open_case(st, &c2, "nodegate", &err), 0);
	assert_int_equal(ng_store_count_recent_cases(st, CLASS, 0, &err), 2);
	assert_int_equal(ng_store_count_recent_cases(st, CLASS, 115, &err), 1);
	/* per class, software and metric, in [from, until) */
	assert_int_equal(ng_store_count_metric_cases(st, CLASS, SW, METRIC, 0, 1000, &err), 2);
	assert_int_equal(ng_store_count_metric_cases(st, CLASS, SW, METRIC, 0, 120, &err), 1);
	assert_int_equal(ng_store_count_metric_cases(st, CLASS, SW, "gpu.gemm.tflops", 0, 1000, &err), 0);
	assert_int_equal(ng_store_count_metric_cases(st, CLASS, "sw-other", METRIC, 0, 1000, &err), 0);

	assert_int_equal(ng_store_case_retry(st, c1.id, true, "run-a", 130, &err), 0);
	assert_int_equal(ng_store_case_retry(st, c1.id, false, "run-b", 140, &err), 0);
	assert_int_equal(ng_store_case_retry(st, c1.id, true, NULL, 150, &err), 0);
	assert_int_equal(ng_store_get_case(st, c1.id, &got, &err), 1);
	assert_int_equal(got.passes, 2);
	assert_int_equal(got.retries, 3);
	ng_store_case_free(&got);

	/* A retry of a case that does not exist is refused. */
	assert_int_equal(ng_store_case_retry(st, 31337, true, "run-x", 155, &err), -1);
	assert_non_null(strstr(err.msg, "no case"));

	/* The node was quarantined; closing its case releases it (to be screened
	 * again, not admitted). */
	ng_store_node_state ns;
	memset(&ns, 0, sizeof ns);
	ng_copy(ns.node, sizeof ns.node, "n1");
	ng_copy(ns.class_key, sizeof ns.class_key, CLASS);
	ng_copy(ns.outcome, sizeof ns.outcome, "quarantined");
	ns.updated_at = 100;
	assert_int_equal(ng_store_put_decision(st, &ns, NULL, 0, NULL, "nodegate", &err), 0);
	assert_int_equal(ng_store_close_case(st, c1.id, 160, "alice", "passed twice", &err), 0);
	ng_store_node_state got_ns;
	assert_int_equal(ng_store_get_node_state(st, "n1", &got_ns, &err), 1);
	assert_string_equal(got_ns.outcome, "released");
	assert_int_equal(got_ns.updated_at, 160);
	assert_int_equal(ng_store_open_case_of(st, "n1", &got, &err), 0);
	assert_int_equal(ng_store_get_case(st, c1.id, &got, &err), 1);
	assert_int_equal(got.closed_at, 160);
	assert_string_equal(got.closed_by, "alice");
	assert_string_equal(got.close_reason, "passed twice");
	ng_store_case_free(&got);
	/* Closing twice fails; so does closing a case that does not exist. */
	assert_int_equal(ng_store_close_case(st, c1.id, 170, "bob", "again", &err), -1);
	assert_non_null(strstr(err.msg, "already closed"));
	assert_int_equal(ng_store_close_case(st, 31337, 170, "bob", "none", &err), -1);
	assert_non_null(strstr(err.msg, "no case"));
	assert_int_equal(ng_store_get_case(st, c1.id, &got, &err), 1);
	assert_string_equal(got.closed_by, "alice");
	ng_store_case_free(&got);

	ng_store_case *list = NULL;
	size_t n = 0;
	assert_int_equal(ng_store_list_cases(st, false, &list, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].node, "n2");
	assert_string_equal(list[0].evidence, "{}");
	for (size_t i = 0; i < n; i++)
		ng_store_case_free(&list[i]);
	free(list);
	assert_int_equal(ng_store_list_cases(st, true, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].node, "n2"); /* newest first */
	for (size_t i = 0; i < n; i++)
		ng_store_case_free(&list[i]);
	free(list);

	/* Once closed, the node may have a new case. */
	ng_store_case c3 = a_case("n1", 200);
	assert_int_equal(ng_store_open_case(st, &c3, "nodegate", &err), 0);
	assert_true(c3.id != c1.id);
	assert_int_equal(ng_store_open_case_of(st, "n1", &got, &err), 1);
	assert_int_equal(got.id, c3.id);
	ng_store_case_free(&got);
	/* open x3, retry x3, the decision, close x1 */
	audit_verifies(st, 8);
	done(st, spec);
}

static void overrides_are_active_from_created_until_expiry(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("overrides", spec, sizeof spec);
	ng_err err = {0};
	ng_store_override o;
	memset(&o, 0, sizeof o);
	ng_copy(o.node, sizeof o.node, "n1");
	ng_copy(o.reason, sizeof o.reason, "vendor RMA pending, admit for the benchmark");
	ng_copy(o.by, sizeof o.by, "alice");
	o.created_at = 1000;
	o.expires_at = 2000;
	assert_int_equal(ng_store_put_override(st, &o, &err), 0);
	assert_true(o.id > 0);

	ng_store_override got;
	assert_int_equal(ng_store_active_override(st, "n1", 999, &got, &err), 0);
	assert_int_equal(ng_store_active_override(st, "n1", 1000, &got, &err), 1);
	assert_int_equal(got.id, o.id);
	assert_string_equal(got.node, "n1");
	assert_string_equal(got.reason, o.reason);
	assert_string_equal(got.by, "alice");
	assert_true(got.created_at == 1000 && got.expires_at == 2000 && got.revoked_at == 0);
	assert_int_equal(ng_store_active_override(st, "n1", 1999, &got, &err), 1);
	assert_int_equal(ng_store_active_override(st, "n1", 2000, &got, &err), 0);
	assert_int_equal(ng_store_active_override(st, "n1", 5000, &got, &err), 0);
	assert_int_equal(ng_store_active_override(st, "n2", 1500, &got, &err), 0);

	/* Of two in force, the newest. */
	ng_store_override o2 = o;
	o2.created_at = 1500;
	o2.expires_at = 3000;
	ng_copy(o2.by, sizeof o2.by, "bob");
	assert_int_equal(ng_store_put_override(st, &o2, &err), 0);
	assert_int_equal(ng_store_active_override(st, "n1", 1600, &got, &err), 1);
	assert_int_equal(got.id, o2.id);
	assert_int_equal(ng_store_active_override(st, "n1", 1400, &got, &err), 1);
	assert_int_equal(got.id, o.id);
	assert_int_equal(ng_store_active_override(st, "n1", 2500, &got, &err), 1);
	assert_int_equal(got.id, o2.id);
	audit_verifies(st, 2);
	done(st, spec);
}

static void fleet_events_open_once_and_clear(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("fleet", spec, sizeof spec);
	ng_err err = {0};
	ng_store_fleet_event e;
	memset(&e, 0, sizeof e);
	ng_copy(e.class_key, sizeof e.class_key, CLASS);
	ng_copy(e.software, sizeof e.software, SW);
	e.opened_at = 100;
	e.nodes = (char *)"[\"n1\",\"n2\",\"n3\"]";
	e.detail = (char *)"{\"failing\":3,\"of\":8}";
	assert_int_equal(ng_store_open_fleet_event(st, &e, "nodegate", &err), 0);
	assert_true(e.id > 0);
	int64_t first = e.id;

	/* A second open for the class returns the open one, and writes nothing. */
	int64_t audit_before = count_rows(st, "audit_log");
	ng_store_fleet_event e2 = e;
	e2.id = 0;
	e2.opened_at = 150;
	e2.nodes = NULL;
	e2.detail = NULL;
	assert_int_equal(ng_store_open_fleet_event(st, &e2, "nodegate", &err), 0);
	assert_int_equal(e2.id, first);
	assert_int_equal(count_rows(st, "fleet_events"), 1);
	assert_int_equal(count_rows(st, "audit_log"), audit_before);

	ng_store_fleet_event got;
	assert_int_equal(ng_store_fleet_event_of(st, CLASS, &got, &err), 1);
	assert_int_equal(got.id, first);
	assert_string_equal(got.software, SW);
	assert_string_equal(got.nodes, "[\"n1\",\"n2\",\"n3\"]");
	assert_string_equal(got.detail, "{\"failing\":3,\"of\":8}");
	assert_true(got.opened_at == 100 && got.cleared_at == 0);
	ng_store_fleet_event_free(&got);
	assert_int_equal(ng_store_fleet_event_of(st, "other-class", &got, &err), 0);

	/* An event is about one metric: another metric of the class opens its
	 * own, and the class lists both; each keeps its count of clean runs. */
	ng_store_fleet_event e3 = e;
	e3.id = 0;
	ng_copy(e3.metric, sizeof e3.metric, "storage.seqread.gbps");
	assert_int_equal(ng_store_open_fleet_event(st, &e3, "nodegate", &err), 0);
	assert_true(e3.id != first);
	assert_int_equal(ng_store_fleet_event_update(st, e3.id, 4, NULL, &err), 0);
	assert_int_equal(ng_store_fleet_event_update(st, e3.id, 4, "[\"n1\",\"n9\"]", &err), 0);
	ng_store_fleet_event *of = NULL;
	size_t n_of = 0;
	assert_int_equal(ng_store_fleet_events_of_class(st, CLASS, &of, &n_of, &err), 0);
	assert_int_equal(n_of, 2);
	assert_int_equal(of[0].id, e3.id);
	assert_string_equal(of[0].metric, "storage.seqread.gbps");
	assert_int_equal(of[0].clean_runs, 4);
	assert_string_equal(of[0].nodes, "[\"n1\",\"n9\"]");
	assert_string_equal(of[1].metric, "");
	assert_int_equal(of[1].clean_runs, 0);
	for (size_t i = 0; i < n_of; i++)
		ng_store_fleet_event_free(&of[i]);
	free(of);
	assert_int_equal(ng_store_clear_fleet_event(st, e3.id, 190, "nodegate", "back", &err), 0);

	assert_int_equal(ng_store_clear_fleet_event(st, first, 200, "carol", "NCCL rolled back", &err),
	                 0);
	assert_int_equal(ng_store_fleet_event_of(st, CLASS, &got, &err), 0);
	assert_int_equal(ng_store_clear_fleet_event(st, first, 210, "carol", "again", &err), -1);
	assert_non_null(strstr(err.msg, "no open fleet-regression event"));

	ng_store_fleet_event *list = NULL;
	size_t n = 0;
	assert_int_equal(ng_store_list_fleet_events(st, true, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[1].id, first);
	assert_int_equal(list[1].cleared_at, 200);
	assert_string_equal(list[1].cleared_by, "carol");
	assert_string_equal(list[1].clear_reason, "NCCL rolled back");
	assert_string_equal(list[0].cleared_by, "nodegate");
	for (size_t i = 0; i < n; i++)
		ng_store_fleet_event_free(&list[i]);
	free(list);
	assert_int_equal(ng_store_list_fleet_events(st, false, &list, &n, &err), 0);
	assert_int_equal(n, 0);
	free(list);

	/* Once cleared, a new trip opens a new event. */
	e2.id = 0;
	assert_int_equal(ng_store_open_fleet_event(st, &e2, "nodegate", &err), 0);
	assert_true(e2.id != first);
	assert_int_equal(ng_store_fleet_event_of(st, CLASS, &got, &err), 1);
	assert_string_equal(got.nodes, "[]");
	assert_string_equal(got.detail, "{}");
	ng_store_fleet_event_free(&got);
	audit_verifies(st, 5);
	done(st, spec);
}

/* The configuration errors of GPU checks (schema 5): kept, then counted
 * per node, verb and kind within a window, the newest message with them. */
static void config_errors_are_kept_and_grouped(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("config_errors", spec, sizeof spec);
	ng_err err = {0};
	struct { const char *node, *verb, *kind, *msg; int64_t at; } in[] = {
		{"n1", "epilog", "policy", "old message", 100},
		{"n1", "epilog", "policy", "new message", 300},
		{"n1", "epilog", "option", "unknown option --bogus", 200},
		{"n2", "prolog", "policy", "gate.block = 2", 250},
		{"n3", "health", "policy", "too old", 10},
	};
	for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
		ng_store_config_error e = {.at = in[k].at};
		ng_copy(e.node, sizeof e.node, in[k].node);
		ng_copy(e.verb, sizeof e.verb, in[k].verb);
		ng_copy(e.kind, sizeof e.kind, in[k].kind);
		ng_copy(e.message, sizeof e.message, in[k].msg);
		assert_int_equal(ng_store_put_config_error(st, &e, &err), 0);
	}
	ng_store_config_error *got = NULL;
	size_t n = 0;
	assert_int_equal(ng_store_config_errors_since(st, 50, &got, &n, &err), 0);
	assert_int_equal(n, 3); /* n3's is before the window */
	assert_string_equal(got[0].node, "n1"); /* newest first */
	assert_string_equal(got[0].kind, "policy");
	assert_int_equal(got[0].count, 2);
	assert_int_equal(got[0].at, 300);
	assert_string_equal(got[0].message, "new message");
	assert_string_equal(got[1].node, "n2");
	assert_int_equal(got[1].count, 1);
	assert_string_equal(got[2].kind, "option");
	free(got);
	assert_int_equal(ng_store_config_errors_since(st, 1000, &got, &n, &err), 0);
	assert_int_equal(n, 0);
	free(got);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

/* Each node's GPUs between checks (schema 8): first_seen is kept, a
 * replaced UUID is forgotten, a missing GPU's row keeps where it was seen
 * and takes what the check found; marks per bus; every run, and the newest
 * per node and mode. */
static void gpu_inventory_marks_and_runs(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("gpu_inventory", spec, sizeof spec);
	ng_err err = {0};
	ng_store_gpu g[2] = {
		{.uuid = "GPU-a", .bus = "0000:18:00", .minor = 0, .first_seen = 100, .last_seen = 100,
		 .index = 0, .checked_at = 100, .mode = "health", .severity = "ok", .listed = true},
		{.uuid = "GPU-b", .bus = "0000:2a:00", .minor = 1, .first_seen = 100, .last_seen = 100,
		 .unresponsive = 2, .index = 1, .checked_at = 100, .mode = "health", .severity = "unresponsive",
		 .signals = "gpu.unresponsive=unresponsive", .listed = true},
	};
	assert_int_equal(ng_store_put_gpus(st, "n1", g, 2, NULL, 0, &err), 0);
	g[0].first_seen = g[0].last_seen = g[0].checked_at = 200;
	assert_int_equal(ng_store_put_gpus(st, "n1", g, 1, NULL, 0, &err), 0);
	/* GPU-b missing now: only what the check found is recorded */
	ng_store_gpu miss = g[1];
	miss.listed = false;
	miss.last_seen = miss.checked_at = 300;
	snprintf(miss.severity, sizeof miss.severity, "fatal");
	snprintf(miss.signals, sizeof miss.signals, "gpu.missing=fatal");
	assert_int_equal(ng_store_put_gpus(st, "n1", &miss, 1, NULL, 0, &err), 0);
	ng_store_gpu *out = NULL;
	size_t n = 0;
	assert_int_equal(ng_store_gpus_of(st, "n1", &out, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].uuid, "GPU-a");
	assert_true(out[0].first_seen == 100 && out[0].last_seen == 200);
	assert_string_equal(out[1].uuid, "GPU-b");
	assert_true(out[1].last_seen == 100 && out[1].checked_at == 300 && out[1].unresponsive == 2);
	assert_string_equal(out[1].severity, "fatal");
	assert_string_equal(out[1].signals, "gpu.missing=fatal");
	free(out);
	/* GPU-b replaced by GPU-c at its bus */
	ng_store_gpu c = g[1];
	snprintf(c.uuid, sizeof c.uuid, "GPU-c");
	const char *gone[] = {"GPU-b"};
	assert_int_equal(ng_store_put_gpus(st, "n1", &c, 1, gone, 1, &err), 0);
	char(*hosts)[256] = NULL;
	assert_int_equal(ng_store_all_gpus(st, NULL, &out, &hosts, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[1].uuid, "GPU-c");
	assert_string_equal(hosts[1], "n1");
	free(out);
	free(hosts);
	assert_int_equal(ng_store_gpus_of(st, "n2", &out, &n, &err), 0);
	assert_int_equal(n, 0);
	free(out);

	ng_store_kmsg_mark m[2] = {{"0000:18:00", "boot-1", 7200000000}, {"0000:2a:00", "boot-1", 5}};
	assert_int_equal(ng_store_put_kmsg_marks(st, "n1", m, 2, 400, &err), 0);
	m[0].at_usec = 7300000000;
	assert_int_equal(ng_store_put_kmsg_marks(st, "n1", m, 1, 500, &err), 0);
	ng_store_kmsg_mark *mk = NULL;
	assert_int_equal(ng_store_kmsg_marks(st, "n1", &mk, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(mk[0].at_usec == 7300000000 && strcmp(mk[0].boot_id, "boot-1") == 0);
	free(mk);

	assert_int_equal(ng_store_put_gpu_check_run(st, "n1", "epilog", "ok", 10, "", &err), 0);
	assert_int_equal(ng_store_put_gpu_check_run(st, "n1", "epilog", "unknown", 20, "NVML hung", &err), 0);
	assert_int_equal(ng_store_put_gpu_check_run(st, "n1", "health", "n/a", 15, "no NVML", &err), 0);
	assert_int_equal(ng_store_put_gpu_check_run(st, "n2", "epilog", "fatal", 30, "", &err), 0);
	ng_store_gpu_check_run *runs = NULL;
	assert_int_equal(ng_store_last_gpu_check_runs(st, NULL, &runs, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(runs[0].node, "n1");
	assert_string_equal(runs[0].mode, "epilog");
	assert_string_equal(runs[0].outcome, "unknown");
	assert_string_equal(runs[1].outcome, "n/a");
	assert_string_equal(runs[2].outcome, "fatal");
	free(runs);
	assert_int_equal(ng_store_last_gpu_check_runs(st, "n2", &runs, &n, &err), 0);
	assert_int_equal(n, 1);
	free(runs);
	assert_int_equal(count_rows(st, "gpu_check_runs"), 4);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

static void node_state_is_upserted(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("node_state", spec, sizeof spec);
	ng_err err = {0};
	ng_store_node_state s, got;
	assert_int_equal(ng_store_get_node_state(st, "n1", &got, &err), 0);
	memset(&s, 0, sizeof s);
	ng_copy(s.node, sizeof s.node, "n1");
	ng_copy(s.class_key, sizeof s.class_key, CLASS);
	ng_copy(s.software, sizeof s.software, SW);
	ng_copy(s.outcome, sizeof s.outcome, "admitted");
	ng_copy(s.run_id, sizeof s.run_id, "run-1");
	s.updated_at = 100;
	s.recheck_at = 0;
	ng_store_verdict lines[2] = {
		{"first", "fabric", METRIC, "GB/s", 200.0, 210.0, 150.0, 0.05, -4.7, "pass", "pass", 0},
		{"first", "compute", "cpu.fp64.gflops", "GFLOP/s", NAN, NAN, NAN, NAN, NAN,
		 "no-measurement", "held", 0},
	};
	assert_int_equal(ng_store_put_decision(st, &s, lines, 2, "{\"why\":\"test\"}", "nodegate", &err),
	                 0);
	assert_int_equal(ng_store_get_node_state(st, "n1", &got, &err), 1);
	assert_string_equal(got.node, "n1");
	assert_string_equal(got.class_key, CLASS);
	assert_string_equal(got.software, SW);
	assert_string_equal(got.outcome, "admitted");
	assert_string_equal(got.run_id, "run-1");
	assert_true(got.updated_at == 100 && got.recheck_at == 0);
	assert_int_equal(count_rows(st, "verdicts"), 2);

	ng_copy(s.outcome, sizeof s.outcome, "quarantined");
	ng_copy(s.run_id, sizeof s.run_id, "run-2");
	ng_copy(s.software, sizeof s.software, "sw-2");
	s.updated_at = 200;
	s.recheck_at = 900;
	assert_int_equal(ng_store_put_decision(st, &s, lines, 1, NULL, "nodegate", &err), 0);
	assert_int_equal(ng_store_get_node_state(st, "n1", &got, &err), 1);
	assert_string_equal(got.outcome, "quarantined");
	assert_string_equal(got.run_id, "run-2");
	assert_string_equal(got.software, "sw-2");
	assert_true(got.updated_at == 200 && got.recheck_at == 900);
	assert_int_equal(count_rows(st, "node_states"), 1);
	assert_int_equal(count_rows(st, "verdicts"), 3);
	assert_int_equal(count_rows(st, "audit_log"), 2);
	char action[64];
	query_text(ng_store_sql(st), "SELECT action FROM audit_log WHERE seq = 2", action,
	           sizeof action);
	assert_string_equal(action, "admit.quarantined");
	audit_verifies(st, 2);
	done(st, spec);
}

static void hysteresis_round_trips(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("hysteresis", spec, sizeof spec);
	ng_err err = {0};
	ng_strbuf h = {0};
	bool blocked = true;
	assert_int_equal(ng_store_get_hysteresis(st, "n1", METRIC, &h, &blocked, &err), 0);
	assert_string_equal(h.s, "[]");
	assert_false(blocked);
	assert_int_equal(
		ng_store_put_hysteresis(st, "n1", METRIC, "[\"pass\",\"block\"]", true, 100, &err), 0);
	assert_int_equal(ng_store_get_hysteresis(st, "n1", METRIC, &h, &blocked, &err), 0);
	assert_string_equal(h.s, "[\"pass\",\"block\"]");
	assert_true(blocked);
	/* another metric of the node, another node of the metric: untouched */
	assert_int_equal(ng_store_get_hysteresis(st, "n1", "other", &h, &blocked, &err), 0);
	assert_string_equal(h.s, "[]");
	assert_int_equal(ng_store_get_hysteresis(st, "n2", METRIC, &h, &blocked, &err), 0);
	assert_string_equal(h.s, "[]");
	assert_int_equal(ng_store_put_hysteresis(st, "n1", METRIC, "[\"block\",\"pass\",\"pass\"]",
	                                         false, 200, &err),
	                 0);
	assert_int_equal(ng_store_get_hysteresis(st, "n1", METRIC, &h, &blocked, &err), 0);
	assert_string_equal(h.s, "[\"block\",\"pass\",\"pass\"]");
	assert_false(blocked);
	assert_int_equal(count_rows(st, "hysteresis"), 1);
	ng_strbuf_free(&h);
	done(st, spec);
}

/* ---- the audit log ------------------------------------------------------------------- */

/* Everything that audits, once each, on one store: the chain verifies, and
 * its head is the last entry's hash. */
static void audit_chain_of_everything_verifies(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh_store("audit_all", spec, sizeof spec);
	ng_err err = {0};
	double s[] = {1, 2, 3};
	ng_store_record r = rec("n1", CLASS, SW, METRIC, 10, s, 3, true, true);
	put_ok(st, &r, 1, NULL); /* records do not audit */
	ng_store_baseline b = baseline(METRIC, "ok", 2.0, 20);
	put_baseline_ok(st, &b);                                                        /* 1 */
	assert_int_equal(ng_store_pin_baseline(st, b.id, "p", 21, "a", &err), 0);        /* 2 */
	assert_int_equal(ng_store_expire_baselines(st, CLASS, NULL, "x", 22, "a", &err), 1); /* 3 */
	ng_store_case c = a_case("n1", 30);
	assert_int_equal(ng_store_open_case(st, &c, "nodegate", &err), 0);               /* 4 */
	assert_int_equal(ng_store_case_retry(st, c.id, true, "r", 31, &err), 0);          /* 5 */
	assert_int_equal(ng_store_close_case(st, c.id, 32, "a", "ok", &err), 0);          /* 6 */
	ng_store_override o;
	memset(&o, 0, sizeof o);
	ng_copy(o.node, sizeof o.node, "n1");
	ng_copy(o.reason, sizeof o.reason, "r");
	ng_copy(o.by, sizeof o.by, "a");
	o.created_at = 40;
	o.expires_at = 50;
	assert_int_equal(ng_store_put_override(st, &o, &err), 0);                         /* 7 */
	ng_store_fleet_event e;
	memset(&e, 0, sizeof e);
	ng_copy(e.class_key, sizeof e.class_key, CLASS);
	e.opened_at = 60;
	assert_int_equal(ng_store_open_fleet_event(st, &e, "nodegate", &err), 0);        /* 8 */
	assert_int_equal(ng_store_clear_fleet_event(st, e.id, 61, "a", "ok", &err), 0);   /* 9 */
	ng_store_node_state ns;
	memset(&ns, 0, sizeof ns);
	ng_copy(ns.node, sizeof ns.node, "n1");
	ng_copy(ns.outcome, sizeof ns.outcome, "admitted");
	ns.updated_at = 70;
	assert_int_equal(ng_store_put_decision(st, &ns, NULL, 0, NULL, "nodegate", &err), 0); /* 10 */
	assert_int_equal(ng_store_put_hysteresis(st, "n1", METRIC, "[]", false, 80, &err), 0);
	assert_int_equal(ng_store_audit(st, false, 90, "a", "note", "store",
	                                "{\"text\":\"it's \\\"quoted\\\" \\u00b5s\"}", &err),
	                 0); /* 11 */

	ng_store_audit_report rep;
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 0);
	assert_int_equal(rep.entries, 11);
	assert_int_equal(rep.first_bad, 0);
	char head[80];
	query_text(ng_store_sql(st), "SELECT hash FROM audit_log WHERE seq = 11", head, sizeof head);
	assert_string_equal(rep.head, head);
	query_text(ng_store_sql(st), "SELECT value FROM meta WHERE key = 'audit_head_hash'", head,
	           sizeof head);
	assert_string_equal(rep.head, head);

	/* listed newest first, by subject when asked */
	cJSON *list = ng_store_audit_list(st, 3, NULL, &err);
	assert_non_null(list);
	assert_int_equal(cJSON_GetArraySize(list), 3);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "seq")->valueint, 11);
	cJSON_Delete(list);
	list = ng_store_audit_list(st, 0, "node:n1", &err);
	assert_non_null(list);
	int64_t of_n1 = query_int(ng_store_sql(st),
	                          "SELECT count(*) FROM audit_log WHERE subject = 'node:n1'");
	assert_true(of_n1 >= 3); /* the case, the override, the decision at least */
	assert_int_equal(cJSON_GetArraySize(list), of_n1);
	for (int i = 0; i < cJSON_GetArraySize(list); i++)
		assert_string_equal(
			cJSON_GetObjectItem(cJSON_GetArrayItem(list, i), "subject")->valuestring, "node:n1");
	cJSON_Delete(list);

	/* and it still verifies after reopening */
	ng_store_close(st);
	st = open_ok(spec);
	audit_verifies(st, 11);
	done(st, spec);
}

/* A store with five audit entries, for one tampering each. */
static ng_store *audited_store(const char *name, char *spec, size_t cap)
{
	ng_store *st = fresh_store(name, spec, cap);
	ng_err err = {0};
	for (int i = 1; i <= 5; i++) {
		char subject[32], detail[64];
		snprintf(subject, sizeof subject, "node:n%d", i);
		snprintf(detail, sizeof detail, "{\"entry\":%d}", i);
		if (ng_store_audit(st, false, 1000 + i, "alice", "test.entry", subject, detail, &err) != 0)
			fail_msg("audit: %s", err.msg);
	}
	audit_verifies(st, 5);
	return st;
}

static void expect_break(ng_store *st, int64_t first_bad, const char *problem_has)
{
	ng_store_audit_report rep;
	ng_err err = {0};
	int rc = ng_store_audit_verify(st, &rep, &err);
	fprintf(stderr, "[ info     ] verify: rc %d, first_bad %lld: %s\n", rc,
	        (long long)rep.first_bad, rep.problem);
	assert_int_equal(rc, 1);
	assert_int_equal(rep.first_bad, first_bad);
	assert_non_null(strstr(rep.problem, problem_has));
}

static void audit_finds_an_edited_field(void **state)
{
	(void)state;
	const char *edits[] = {
		"UPDATE audit_log SET detail = '{\"entry\":33}' WHERE seq = 3",
		"UPDATE audit_log SET actor = 'mallory' WHERE seq = 3",
		"UPDATE audit_log SET at = at + 1 WHERE seq = 3",
		"UPDATE audit_log SET subject = 'node:n9' WHERE seq = 3",
		"UPDATE audit_log SET action = 'test.other' WHERE seq = 3",
	};
	for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
		char spec[1024], name[32];
		snprintf(name, sizeof name, "audit_edit_%zu", k);
		ng_store *st = audited_store(name, spec, sizeof spec);
		exec_ok(ng_store_sql(st), edits[k]);
		expect_break(st, 3, "was changed");
		done(st, spec);
	}
	/* the first entry too */
	char spec[1024];
	ng_store *st = audited_store("audit_edit_first", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "UPDATE audit_log SET actor = 'mallory' WHERE seq = 1");
	expect_break(st, 1, "was changed");
	done(st, spec);
}

static void audit_finds_a_deleted_middle_entry(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = audited_store("audit_delete_middle", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "DELETE FROM audit_log WHERE seq = 3");
	expect_break(st, 4, "removed");
	done(st, spec);
	/* renumbered to hide the gap: the link breaks instead */
	st = audited_store("audit_delete_renumber", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "DELETE FROM audit_log WHERE seq = 3");
	exec_ok(ng_store_sql(st), "UPDATE audit_log SET seq = 3 WHERE seq = 4");
	exec_ok(ng_store_sql(st), "UPDATE audit_log SET seq = 4 WHERE seq = 5");
	expect_break(st, 3, "does not link");
	done(st, spec);
}

/* Two entries trade places: everything but seq swapped (seq 2 carries what
 * entry 3 was, and the other way round). */
static void audit_finds_two_swapped_entries(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = audited_store("audit_swap", spec, sizeof spec);
	ng_sql *db = ng_store_sql(st);
	exec_ok(db, "UPDATE audit_log SET seq = -2 WHERE seq = 2");
	exec_ok(db, "UPDATE audit_log SET seq = 2 WHERE seq = 3");
	exec_ok(db, "UPDATE audit_log SET seq = 3 WHERE seq = -2");
	char subj[32];
	query_text(db, "SELECT subject FROM audit_log WHERE seq = 2", subj, sizeof subj);
	assert_string_equal(subj, "node:n3");
	expect_break(st, 2, "does not link");
	done(st, spec);

	/* Only the contents swapped, hashes left where they were. */
	st = audited_store("audit_swap_contents", spec, sizeof spec);
	db = ng_store_sql(st);
	exec_ok(db, "UPDATE audit_log SET subject = 'tmp' WHERE seq = 2");
	exec_ok(db, "UPDATE audit_log SET subject = 'node:n2', detail = '{\"entry\":2}',"
	            " at = 1002 WHERE seq = 3");
	exec_ok(db, "UPDATE audit_log SET subject = 'node:n3', detail = '{\"entry\":3}',"
	            " at = 1003 WHERE seq = 2");
	expect_break(st, 2, "was changed");
	done(st, spec);
}

/* The tail cut and the head in meta edited to match: only the head anchored
 * outside the database shows it. */
static void audit_finds_a_cut_tail_with_its_head_edited(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = audited_store("audit_cut_tail", spec, sizeof spec);
	ng_sql *db = ng_store_sql(st);
	char hash3[80], sql[256];
	query_text(db, "SELECT hash FROM audit_log WHERE seq = 3", hash3, sizeof hash3);
	exec_ok(db, "DELETE FROM audit_log WHERE seq > 3");
	exec_ok(db, "UPDATE meta SET value = '3' WHERE key = 'audit_head_seq'");
	snprintf(sql, sizeof sql, "UPDATE meta SET value = '%s' WHERE key = 'audit_head_hash'", hash3);
	exec_ok(db, sql);
	expect_break(st, 4, "anchored at entry 5");
	done(st, spec);

	/* The chain rewritten from entry 3 on, meta and all: the anchored entry
	 * 5 is there, but not the entry anchored. */
	st = audited_store("audit_rewritten_tail", spec, sizeof spec);
	db = ng_store_sql(st);
	exec_ok(db, "UPDATE audit_log SET hash = 'x' WHERE seq = 5");
	exec_ok(db, "UPDATE meta SET value = 'x' WHERE key = 'audit_head_hash'");
	ng_store_audit_report rep;
	ng_err err = {0};
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 1);
	done(st, spec);

	/* The anchor removed: a short log cannot be told from a cut one. */
	st = audited_store("audit_anchor_removed", spec, sizeof spec);
	assert_int_equal(unlink(ng_store_anchor_path(st)), 0);
	expect_break(st, 5, "not anchored");
	done(st, spec);
}

/* Every covered table: written through the store, then one row edited,
 * added or removed behind its back. */
static ng_store *stateful_store(const char *name, char *spec, size_t cap)
{
	ng_store *st = fresh_store(name, spec, cap);
	ng_err err = {0};
	ng_store_baseline b = baseline(METRIC, "ok", 2.0, 20);
	put_baseline_ok(st, &b);
	assert_int_equal(ng_store_expire_baselines(st, CLASS, NULL, "x", 22, "a", &err), 1);
	ng_store_baseline b2 = baseline(METRIC, "ok", 2.5, 23);
	put_baseline_ok(st, &b2);
	assert_int_equal(ng_store_pin_baseline(st, b2.id, "p", 24, "a", &err), 0);
	ng_store_case c = a_case("n1", 30);
	assert_int_equal(ng_store_open_case(st, &c, "nodegate", &err), 0);
	assert_int_equal(ng_store_case_retry(st, c.id, true, "r", 31, &err), 0);
	ng_store_override o;
	memset(&o, 0, sizeof o);
	ng_copy(o.node, sizeof o.node, "n2");
	ng_copy(o.reason, sizeof o.reason, "cable swapped");
	ng_copy(o.by, sizeof o.by, "alice");
	o.created_at = 40;
	o.expires_at = 40 + 7200;
	assert_int_equal(ng_store_put_override(st, &o, &err), 0);
	ng_store_node_state ns;
	memset(&ns, 0, sizeof ns);
	ng_copy(ns.node, sizeof ns.node, "n3");
	ng_copy(ns.outcome, sizeof ns.outcome, "quarantined");
	ns.updated_at = 70;
	assert_int_equal(ng_store_put_decision(st, &ns, NULL, 0, NULL, "nodegate", &err), 0);
	ng_store_decision many[2] = {{.state = &ns}, {.state = &ns}};
	ng_store_node_state ns4 = ns, ns5 = ns;
	ng_copy(ns4.node, sizeof ns4.node, "n4");
	ng_copy(ns5.node, sizeof ns5.node, "n5");
	many[0].state = &ns4;
	many[1].state = &ns5;
	assert_int_equal(ng_store_put_decisions(st, many, 2, "nodegate", &err), 0);
	ng_store_audit_report rep;
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 0);
	assert_int_equal(rep.rows, 2 + 1 + 1 + 3); /* baselines, case, override, node states */
	assert_int_equal(rep.rows_bad, 0);
	return st;
}

static void audit_finds_state_changed_behind_its_back(void **state)
{
	(void)state;
	const struct {
		const char *sql, *problem;
	} edits[] = {
		/* the expiry past the 90-day cap: the override would admit for a year */
		{"UPDATE overrides SET expires_at = expires_at + 365 * 86400", "overrides row 1 was changed"},
		{"UPDATE overrides SET by_whom = 'mallory'", "overrides row 1 was changed"},
		{"UPDATE baselines SET median = 1.5 WHERE id = 2", "baselines row 2 was changed"},
		{"UPDATE baselines SET expired_at = 0 WHERE id = 1", "baselines row 1 was changed"},
		{"UPDATE cases SET closed_at = 99, closed_by = 'mallory'", "cases row 1 was changed"},
		{"UPDATE cases SET passes = 2", "cases row 1 was changed"},
		{"UPDATE node_states SET outcome = 'admitted' WHERE node = 'n3'",
		 "node_states row n3 was changed"},
		{"UPDATE node_states SET outcome = 'admitted' WHERE node = 'n5'",
		 "node_states row n5 was changed"},
		{"INSERT INTO overrides (node, reason, by_whom, created_at, expires_at)"
		 " VALUES ('n9', 'x', 'mallory', 1, 99999999)",
		 "overrides row 2 is in no audit entry"},
		{"DELETE FROM cases", "cases row 1 was removed"},
		{"DELETE FROM node_states WHERE node = 'n4'", "node_states row n4 was removed"},
	};
	for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
		char spec[1024], name[32];
		snprintf(name, sizeof name, "audit_state_%zu", k);
		ng_store *st = stateful_store(name, spec, sizeof spec);
		exec_ok(ng_store_sql(st), edits[k].sql);
		ng_store_audit_report rep;
		ng_err err = {0};
		int rc = ng_store_audit_verify(st, &rep, &err);
		fprintf(stderr, "[ info     ] verify: rc %d, %lld of %lld rows: %s\n", rc,
		        (long long)rep.rows_bad, (long long)rep.rows, rep.state_problem);
		assert_int_equal(rc, 1);
		assert_int_equal(rep.first_bad, 0); /* the chain itself is intact */
		assert_int_equal(rep.rows_bad, 1);
		if (!strstr(rep.state_problem, edits[k].problem))
			fail_msg("edit %zu: wanted \"%s\" in \"%s\"", k, edits[k].problem, rep.state_problem);
		done(st, spec);
	}
	/* Written through the store again, the row is what the chain says. */
	char spec[1024];
	ng_store *st = stateful_store("audit_state_rewritten", spec, sizeof spec);
	ng_err err = {0};
	assert_int_equal(ng_store_case_retry(st, 1, false, "r2", 50, &err), 0);
	ng_store_audit_report rep;
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 0);
	done(st, spec);
}

static void audit_finds_a_deleted_last_entry(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = audited_store("audit_delete_last", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "DELETE FROM audit_log WHERE seq = 5");
	expect_break(st, 5, "removed from its end");
	done(st, spec);
	/* and still found after the next entry is appended: the new entry
	 * follows the head the log was last written at, not what is left */
	st = audited_store("audit_delete_last_append", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "DELETE FROM audit_log WHERE seq = 5");
	ng_err err = {0};
	assert_int_equal(ng_store_audit(st, false, 2000, "alice", "test.entry", "node:n6", NULL, &err),
	                 0);
	expect_break(st, 6, "removed");
	done(st, spec);
	/* every entry gone */
	st = audited_store("audit_delete_all", spec, sizeof spec);
	exec_ok(ng_store_sql(st), "DELETE FROM audit_log");
	expect_break(st, 1, "removed from its end");
	done(st, spec);
}

/* A node is found by its stable id or its scheduler name; a name two ids
 * have had is ambiguous and names both; a case from before names were kept
 * is still found by its id. */
static void node_is_found_by_id_or_name(void **state)
{
	(void)state;
	char spec[1024];
	ng_err err;
	ng_store *st = fresh_store("node_is_found_by_id_or_name", spec, sizeof spec);
	ng_store_case old = {.opened_at = 100};
	snprintf(old.node, sizeof old.node, "id-old");
	snprintf(old.class_key, sizeof old.class_key, CLASS);
	assert_int_equal(ng_store_open_case(st, &old, "t", &err), 0);
	ng_store_node_ref ref;
	assert_int_equal(ng_store_resolve_node(st, "id-old", &ref, &err), 0);
	assert_string_equal(ref.id, "id-old");
	ng_store_case got;
	assert_int_equal(ng_store_open_case_of(st, ref.id, &got, &err), 1);
	assert_string_equal(got.node_name, "");
	ng_store_case_free(&got);

	double s[] = {200.0, 201.0};
	ng_store_record r = rec("id-a", CLASS, SW, METRIC, 100, s, 2, true, true);
	r.node_name = "gpu-7";
	put_ok(st, &r, 1, NULL);
	assert_int_equal(ng_store_resolve_node(st, "gpu-7", &ref, &err), 1);
	assert_string_equal(ref.id, "id-a");
	assert_string_equal(ref.name, "gpu-7");
	assert_int_equal(ng_store_resolve_node(st, "id-a", &ref, &err), 1);
	assert_string_equal(ref.name, "gpu-7");
	/* exact, never a prefix */
	assert_int_equal(ng_store_resolve_node(st, "gpu-", &ref, &err), 0);
	/* the old case's node gets a name later: its case reads it */
	assert_int_equal(ng_store_put_node_name(st, "id-old", "gpu-9", 150, &err), 0);
	assert_int_equal(ng_store_open_case_of(st, "id-old", &got, &err), 1);
	assert_string_equal(got.node_name, "gpu-9");
	ng_store_case_free(&got);
	/* a reinstall: a new id under the same name */
	r = rec("id-b", CLASS, SW, METRIC, 200, s, 2, true, true);
	r.node_name = "gpu-7";
	put_ok(st, &r, 1, NULL);
	assert_int_equal(ng_store_resolve_node(st, "gpu-7", &ref, &err), 2);
	assert_non_null(strstr(ref.candidates, "id-a (gpu-7)"));
	assert_non_null(strstr(ref.candidates, "id-b (gpu-7)"));
	assert_int_equal(ng_store_resolve_node(st, "id-b", &ref, &err), 1);
	char name[128];
	assert_int_equal(ng_store_node_name_of(st, "id-b", name, sizeof name, &err), 1);
	assert_string_equal(name, "gpu-7");
	assert_int_equal(ng_store_node_name_of(st, "nobody", name, sizeof name, &err), 0);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

int main(void)
{
	pg = ng_test_backend_is_postgres();
	fprintf(stderr, "[ info     ] backend %s\n", pg ? "postgres" : "sqlite");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_creates_schema_and_reopen_is_idempotent),
		cmocka_unit_test(older_schema_is_migrated),
		cmocka_unit_test(node_is_found_by_id_or_name),
		cmocka_unit_test(audit_finds_a_cut_tail_with_its_head_edited),
		cmocka_unit_test(audit_finds_state_changed_behind_its_back),
		cmocka_unit_test(foreign_database_is_refused),
		cmocka_unit_test(newer_schema_is_refused),
		cmocka_unit_test(random_bytes_are_refused),
		cmocka_unit_test(put_records_gives_ids_and_is_all_or_nothing),
		cmocka_unit_test(put_json_records_refuses_incomplete_batches),
		cmocka_unit_test(baseline_runs_are_the_accepted_idle_runs_in_the_window),
		cmocka_unit_test(accept_records_lets_runs_into_baselines),
		cmocka_unit_test(cohort_drops_take_each_nodes_newest_run),
		cmocka_unit_test(scratch_store_answers_as_an_ordinary_one),
		cmocka_unit_test(cohort_is_filled_for_an_older_store),
		cmocka_unit_test(baselines_pinned_beat_built_and_expired_are_never_current),
		cmocka_unit_test(cases_open_retry_close),
		cmocka_unit_test(overrides_are_active_from_created_until_expiry),
		cmocka_unit_test(fleet_events_open_once_and_clear),
		cmocka_unit_test(node_state_is_upserted),
		cmocka_unit_test(config_errors_are_kept_and_grouped),
		cmocka_unit_test(gpu_inventory_marks_and_runs),
		cmocka_unit_test(hysteresis_round_trips),
		cmocka_unit_test(audit_chain_of_everything_verifies),
		cmocka_unit_test(audit_finds_an_edited_field),
		cmocka_unit_test(audit_finds_a_deleted_middle_entry),
		cmocka_unit_test(audit_finds_two_swapped_entries),
		cmocka_unit_test(audit_finds_a_deleted_last_entry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
