/* The store beside plain SQL on the same database engine, same machine, one run.
 *
 * Two figures, for SQLite (a file in --dir) and, with --pg URI, for
 * PostgreSQL (fresh databases on the server the URI reaches):
 *
 *   ingest    records stored per second by ng_store_put_records in batches
 *             of 1000: 100,000 records of about 600 bytes of JSON and nine
 *             samples each, into a new store. The reference is the same rows
 *             inserted with the engine's own prepared statements (sqlite3,
 *             libpq) in one transaction per batch, into a new database with
 *             the same schema: the ratio is what the store's layer costs.
 *             Target (SQLite): at least 20,000 records/s.
 *   baseline  the time to build one metric's baseline for a class of 10,000
 *             nodes with a nine-sample run each: ng_store_baseline_runs and
 *             ng_baseline_build (src/judge/baseline.h), scratch included. The
 *             reference is a plain SELECT of the same rows' samples into
 *             memory, no statistics. Target (both): under 200 ms.
 *
 * Rounds alternate store and reference; ingest reports the best round of
 * each, baseline the median of its repetitions. Exit 1 when a target is
 * missed, 2 when something did not run. */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/policy.h"
#include "judge/baseline.h"
#include "store/store.h"

#define INGEST_TARGET 20000.0 /* records/s into SQLite */
#define BASELINE_TARGET_MS 200.0
#define N_SAMPLES 9

static const char CLASS[] = "8xH100-SXM/2node/1rail";
static const char SW[] = "drv550.54.15/cuda12.4/nccl2.21.5/fw28.39.1002";
static const char *const METRICS[] = {
	"nccl.all_reduce.busbw", "nccl.all_gather.busbw", "nccl.reduce_scatter.busbw",
	"rdma.ib_write_bw.bw_average", "hostmem.triad.gbps",
};
#define N_METRICS (sizeof METRICS / sizeof METRICS[0])

static const char INSERT_SQL[] =
	"INSERT INTO records (node, class, software, domain, metric, unit, run_id, raw_digest,"
	" profile_digest, taken_at, idle, accepted, n_samples, samples, body)"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char PG_INSERT_SQL[] =
	"INSERT INTO records (node, class, software, domain, metric, unit, run_id, raw_digest,"
	" profile_digest, taken_at, idle, accepted, n_samples, samples, body)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)";
static const char SELECT_SQL[] =
	"SELECT samples FROM records WHERE class = ? AND software = ? AND metric = ?"
	" AND accepted = 1 AND idle = 1 AND taken_at >= ?";
static const char PG_SELECT_SQL[] =
	"SELECT samples FROM records WHERE class = $1 AND software = $2 AND metric = $3"
	" AND accepted = 1 AND idle = 1 AND taken_at >= $4";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "store_bench: %s: %s\n", what, msg);
	exit(2);
}

/* xorshift64*: the same records on every run. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1du;
}
static double unit_rand(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

/* ---- the records ----------------------------------------------------------------------- */

struct corpus {
	ng_store_record *recs;
	size_t n;
	double *samples;
	char *text; /* node names, run ids, digests and bodies, NUL-separated */
	size_t body_bytes;
};

static char *pool_put(char **at, const char *s)
{
	size_t l = strlen(s) + 1;
	memcpy(*at, s, l);
	char *p = *at;
	*at += l;
	return p;
}

/* n records of nodes node 0..nodes-1 round-robin, each of metric
 * METRICS[metric_of(i)]; every one accepted, idle and taken at 1000 + i. */
static void make_corpus(struct corpus *c, size_t n, size_t nodes, bool one_metric)
{
	c->n = n;
	c->recs = calloc(n, sizeof *c->recs);
	c->samples = malloc(n * N_SAMPLES * sizeof *c->samples);
	c->text = malloc(n * 1024);
	if (!c->recs || !c->samples || !c->text)
		die("corpus", "out of memory");
	c->body_bytes = 0;
	char *at = c->text;
	for (size_t i = 0; i < n; i++) {
		size_t node = i % nodes;
		const char *metric = METRICS[one_metric ? 0 : (i / nodes) % N_METRICS];
		double level = 230.0 * (1.0 + 0.02 * (unit_rand() - 0.5));
		double *s = c->samples + i * N_SAMPLES;
		for (int k = 0; k < N_SAMPLES; k++)
			s[k] = round(level * (1.0 + 0.004 * (unit_rand() - 0.5)) * 10000.0) / 10000.0;
		char name[32], run[48], digest[65], body[1024];
		snprintf(name, sizeof name, "gpu-node-%05zu", node);
		snprintf(run, sizeof run, "admit-%08zu", i / 16);
		for (int k = 0; k < 64; k += 16)
			snprintf(digest + k, 17, "%016" PRIx64, next_u64());
		int len = snprintf(
			body, sizeof body,
			"{\"schema\":\"nodegate/record/1\",\"id\":\"%s-%zu\",\"node\":\"%s\",\"class\":\"%s\","
			"\"software\":\"%s\",\"domain\":\"fabric\",\"metric\":\"%s\",\"unit\":\"GB/s\","
			"\"samples\":[%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f],\"wrong\":0,"
			"\"diag\":{\"pcie\":\"pass\",\"memory\":\"pass\",\"nccl_tests\":\"pass\"},"
			"\"conditions\":{\"idle\":true,\"exclusive\":true},"
			"\"tool\":{\"name\":\"all_reduce_perf\",\"version\":\"2.13.9\",\"argv\":"
			"[\"all_reduce_perf\",\"-b\",\"1M\",\"-e\",\"1G\",\"-f\",\"4\",\"-g\",\"8\",\"-I\",\"1\"],"
			"\"exit\":0,\"raw_sha256\":\"%s\"}}",
			run, i, name, CLASS, SW, metric, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7],
			s[8], digest);
		c->body_bytes += (size_t)len;
		c->recs[i] = (ng_store_record){
			.node = pool_put(&at, name),
			.class_key = CLASS,
			.software = SW,
			.domain = "fabric",
			.metric = metric,
			.unit = "GB/s",
			.run_id = pool_put(&at, run),
			.raw_digest = pool_put(&at, digest),
			.taken_at = 1000 + (int64_t)i,
			.samples = s,
			.n_samples = N_SAMPLES,
			.idle = true,
			.accepted = true,
			.body = pool_put(&at, body),
			.profile = NULL,
		};
	}
}

static void corpus_free(struct corpus *c)
{
	free(c->recs);
	free(c->samples);
	free(c->text);
}

/* ---- where the databases are --------------------------------------------------------- */

struct backend {
	bool pg;
	const char *dir; /* SQLite */
	const char *uri; /* PostgreSQL: the maintenance database */
};

/* A URI for database db on the server uri reaches: same query, other path. */
static void pg_uri_for(const char *uri, const char *db, char *out, size_t cap)
{
	const char *auth = strstr(uri, "://");
	auth = auth ? auth + 3 : uri;
	size_t head = (size_t)(auth - uri) + strcspn(auth, "/?");
	const char *query = strchr(auth, '?');
	snprintf(out, cap, "%.*s/%s%s", (int)head, uri, db, query ? query : "");
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void pg_fresh_db(const char *uri, const char *db)
{
	PGconn *c = PQconnectdb(uri);
	if (PQstatus(c) != CONNECTION_OK)
		die(uri, PQerrorMessage(c));
	PQsetNoticeProcessor(c, quiet, NULL);
	char sql[160];
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\"", db);
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		die(sql, PQresultErrorMessage(r));
	PQclear(r);
	snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", db);
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		die(sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
}

/* A new, empty place for a database called name: a path or a URI. */
static void fresh(const struct backend *b, const char *name, char *out, size_t cap)
{
	if (b->pg) {
		char db[64];
		snprintf(db, sizeof db, "ng_bench_%s", name);
		pg_fresh_db(b->uri, db);
		pg_uri_for(b->uri, db, out, cap);
		return;
	}
	snprintf(out, cap, "%s/%s.db", b->dir, name);
	const char *suffix[] = {"", "-wal", "-shm"};
	for (int k = 0; k < 3; k++) {
		char p[1200];
		snprintf(p, sizeof p, "%s%s", out, suffix[k]);
		unlink(p);
	}
}

static ng_store *open_store(const char *spec)
{
	ng_store *st = NULL;
	ng_err err;
	if (ng_store_open(spec, &st, &err) != 0)
		die("opening the store", err.msg);
	return st;
}

/* ---- ingest ---------------------------------------------------------------------------- */

static double ingest_store(const struct backend *b, const struct corpus *c, size_t batch)
{
	char spec[1200];
	fresh(b, "ingest_store", spec, sizeof spec);
	ng_store *st = open_store(spec);
	int64_t *ids = malloc(batch * sizeof *ids);
	if (!ids)
		die("ingest", "out of memory");
	ng_err err;
	double t0 = now_s();
	for (size_t i = 0; i < c->n; i += batch) {
		size_t k = c->n - i < batch ? c->n - i : batch;
		if (ng_store_put_records(st, c->recs + i, k, ids, &err) != 0)
			die("ng_store_put_records", err.msg);
	}
	double t = now_s() - t0;
	if (ng_store_count_records(st, &err) != (int64_t)c->n)
		die("ingest", "the store does not hold every record");
	free(ids);
	ng_store_close(st);
	return (double)c->n / t;
}

static void sq_check(sqlite3 *h, int rc, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		die(what, sqlite3_errmsg(h));
}

/* The same rows with sqlite3's own prepared statement, on a database with the
 * store's schema and pragmas (WAL, synchronous=FULL). */
static double ingest_sqlite_raw(const struct backend *b, const struct corpus *c, size_t batch)
{
	char path[1200];
	fresh(b, "ingest_ref", path, sizeof path);
	ng_store_close(open_store(path)); /* the same schema, made by the store */
	sqlite3 *h;
	if (sqlite3_open(path, &h) != SQLITE_OK)
		die(path, sqlite3_errmsg(h));
	sq_check(h, sqlite3_exec(h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL", NULL, NULL, NULL),
	         "pragmas");
	sqlite3_stmt *ins;
	sq_check(h, sqlite3_prepare_v2(h, INSERT_SQL, -1, &ins, NULL), "prepare");
	double t0 = now_s();
	for (size_t i = 0; i < c->n; i += batch) {
		size_t k = c->n - i < batch ? c->n - i : batch;
		sq_check(h, sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), "begin");
		for (size_t j = i; j < i + k; j++) {
			const ng_store_record *r = &c->recs[j];
			sqlite3_reset(ins);
			sqlite3_bind_text(ins, 1, r->node, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, r->class_key, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 3, r->software, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 4, r->domain, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 5, r->metric, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 6, r->unit, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 7, r->run_id, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 8, r->raw_digest, -1, SQLITE_TRANSIENT);
			sqlite3_bind_null(ins, 9);
			sqlite3_bind_int64(ins, 10, r->taken_at);
			sqlite3_bind_int64(ins, 11, r->idle);
			sqlite3_bind_int64(ins, 12, r->accepted);
			sqlite3_bind_int64(ins, 13, (sqlite3_int64)r->n_samples);
			sqlite3_bind_blob64(ins, 14, r->samples, r->n_samples * sizeof(double),
			                    SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 15, r->body, -1, SQLITE_TRANSIENT);
			sq_check(h, sqlite3_step(ins), "insert");
			(void)sqlite3_last_insert_rowid(h); /* the id, as the store hands it back */
		}
		sq_check(h, sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), "commit");
	}
	double t = now_s() - t0;
	sqlite3_finalize(ins);
	sqlite3_close(h);
	return (double)c->n / t;
}

static void pg_ok(PGconn *c, PGresult *r, ExecStatusType want, const char *what)
{
	if (PQresultStatus(r) != want)
		die(what, PQresultErrorMessage(r) && *PQresultErrorMessage(r) ? PQresultErrorMessage(r)
		                                                               : PQerrorMessage(c));
	PQclear(r);
}

/* The same rows with libpq's own prepared statement (text parameters, the
 * samples as binary bytea), one transaction per batch. */
static double ingest_pg_raw(const struct backend *b, const struct corpus *c, size_t batch)
{
	char uri[1200];
	fresh(b, "ingest_ref", uri, sizeof uri);
	ng_store_close(open_store(uri));
	PGconn *pc = PQconnectdb(uri);
	if (PQstatus(pc) != CONNECTION_OK)
		die(uri, PQerrorMessage(pc));
	pg_ok(pc, PQprepare(pc, "ins", PG_INSERT_SQL, 15, NULL), PGRES_COMMAND_OK, "prepare");
	double t0 = now_s();
	for (size_t i = 0; i < c->n; i += batch) {
		size_t k = c->n - i < batch ? c->n - i : batch;
		pg_ok(pc, PQexec(pc, "BEGIN"), PGRES_COMMAND_OK, "begin");
		for (size_t j = i; j < i + k; j++) {
			const ng_store_record *r = &c->recs[j];
			char taken[24], n[8];
			snprintf(taken, sizeof taken, "%" PRId64, r->taken_at);
			snprintf(n, sizeof n, "%zu", r->n_samples);
			const char *v[15] = {r->node,     r->class_key, r->software, r->domain, r->metric,
			                     r->unit,     r->run_id,    r->raw_digest, NULL,    taken,
			                     r->idle ? "1" : "0", r->accepted ? "1" : "0", n,
			                     (const char *)r->samples, r->body};
			int len[15] = {0}, fmt[15] = {0};
			len[13] = (int)(r->n_samples * sizeof(double));
			fmt[13] = 1;
			pg_ok(pc, PQexecPrepared(pc, "ins", 15, v, len, fmt, 0), PGRES_COMMAND_OK, "insert");
		}
		pg_ok(pc, PQexec(pc, "COMMIT"), PGRES_COMMAND_OK, "commit");
	}
	double t = now_s() - t0;
	PQfinish(pc);
	return (double)c->n / t;
}

/* ---- baselines ------------------------------------------------------------------------- */

/* One build from the store: the runs read back, the statistics, the scratch. */
static double baseline_store(ng_store *st, const ng_policy *pol, ng_baseline *out)
{
	ng_err err;
	double t0 = now_s();
	ng_store_runs runs;
	if (ng_store_baseline_runs(st, CLASS, SW, METRICS[0], 0, &runs, &err) != 0)
		die("ng_store_baseline_runs", err.msg);
	size_t nd, ni;
	ng_baseline_work_need(runs.runs, runs.n, &nd, &ni);
	ng_baseline_work w = {malloc((nd ? nd : 1) * sizeof(double)), nd,
	                      malloc((ni ? ni : 1) * sizeof(size_t)), ni};
	if (!w.buf || !w.idx)
		die("baseline", "out of memory");
	ng_baseline_build(runs.runs, runs.n, pol, w, out);
	free(w.buf);
	free(w.idx);
	ng_store_runs_free(&runs);
	return now_s() - t0;
}

/* Appends a blob to a growing array of doubles. */
static void keep(double **all, size_t *n, size_t *cap, const void *blob, size_t len)
{
	size_t k = len / sizeof(double);
	if (*n + k > *cap) {
		*cap = (*n + k) * 2;
		*all = realloc(*all, *cap * sizeof **all);
		if (!*all)
			die("reference", "out of memory");
	}
	memcpy(*all + *n, blob, k * sizeof(double));
	*n += k;
}

/* The plain read: the same rows' samples into memory. */
static double baseline_sqlite_raw(sqlite3 *h, size_t *got)
{
	double t0 = now_s();
	sqlite3_stmt *q;
	sq_check(h, sqlite3_prepare_v2(h, SELECT_SQL, -1, &q, NULL), "prepare");
	sqlite3_bind_text(q, 1, CLASS, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, SW, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, METRICS[0], -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 4, 0);
	double *all = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const void *p = sqlite3_column_blob(q, 0);
		keep(&all, &n, &cap, p, (size_t)sqlite3_column_bytes(q, 0));
	}
	sq_check(h, rc, "select");
	sqlite3_finalize(q);
	double t = now_s() - t0;
	free(all);
	*got = n;
	return t;
}

static double baseline_pg_raw(PGconn *pc, size_t *got)
{
	double t0 = now_s();
	const char *v[4] = {CLASS, SW, METRICS[0], "0"};
	/* binary results: the bytea as it is, no hex to decode */
	PGresult *r = PQexecParams(pc, PG_SELECT_SQL, 4, NULL, v, NULL, NULL, 1);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		die("select", PQresultErrorMessage(r));
	double *all = NULL;
	size_t n = 0, cap = 0;
	for (int i = 0; i < PQntuples(r); i++)
		keep(&all, &n, &cap, PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0));
	PQclear(r);
	double t = now_s() - t0;
	free(all);
	*got = n;
	return t;
}

/* ---- the run --------------------------------------------------------------------------- */

struct figures {
	double ingest_store, ingest_ref;     /* records/s, best round */
	double baseline_store, baseline_ref; /* seconds, median */
	size_t baseline_nodes;
};

static void run_backend(const struct backend *b, const struct corpus *ingest,
                        const struct corpus *classes, size_t batch, int rounds, int reps,
                        struct figures *f)
{
	memset(f, 0, sizeof *f);
	for (int r = 0; r < rounds; r++) {
		double s = ingest_store(b, ingest, batch);
		double ref = b->pg ? ingest_pg_raw(b, ingest, batch) : ingest_sqlite_raw(b, ingest, batch);
		if (s > f->ingest_store)
			f->ingest_store = s;
		if (ref > f->ingest_ref)
			f->ingest_ref = ref;
	}

	/* The class: every node with one run of each metric. */
	char spec[1200];
	fresh(b, "baseline", spec, sizeof spec);
	ng_store *st = open_store(spec);
	ng_err err;
	for (size_t i = 0; i < classes->n; i += 1000) {
		size_t k = classes->n - i < 1000 ? classes->n - i : 1000;
		if (ng_store_put_records(st, classes->recs + i, k, NULL, &err) != 0)
			die("populating the class", err.msg);
	}
	sqlite3 *h = NULL;
	PGconn *pc = NULL;
	if (b->pg) {
		pc = PQconnectdb(spec);
		if (PQstatus(pc) != CONNECTION_OK)
			die(spec, PQerrorMessage(pc));
		pg_ok(pc, PQexec(pc, "ANALYZE records"), PGRES_COMMAND_OK, "analyze");
	} else if (sqlite3_open(spec, &h) != SQLITE_OK) {
		die(spec, sqlite3_errmsg(h));
	}
	ng_policy pol;
	ng_policy_default(&pol);
	double *ts = calloc((size_t)reps, sizeof *ts), *tr = calloc((size_t)reps, sizeof *tr);
	if (!ts || !tr)
		die("baseline", "out of memory");
	for (int r = 0; r < reps; r++) {
		ng_baseline bl;
		ts[r] = baseline_store(st, &pol, &bl);
		size_t got;
		tr[r] = b->pg ? baseline_pg_raw(pc, &got) : baseline_sqlite_raw(h, &got);
		if (bl.status != NG_BASELINE_OK)
			die("baseline", ng_baseline_status_text(bl.status));
		if (got != bl.n_samples)
			die("baseline", "the reference read other rows than the store");
		f->baseline_nodes = bl.n_nodes;
	}
	f->baseline_store = median(ts, (size_t)reps);
	f->baseline_ref = median(tr, (size_t)reps);
	free(ts);
	free(tr);
	if (pc)
		PQfinish(pc);
	if (h)
		sqlite3_close(h);
	ng_store_close(st);
}

static bool report(const char *engine, const char *raw, const struct figures *f, bool ingest_target,
                   size_t batch)
{
	bool ok = true;
	double ratio = f->ingest_store / f->ingest_ref;
	printf("%-9s ingest    store %9.0f records/s   %-12s %9.0f records/s   rate ratio %.2f",
	       engine, f->ingest_store, raw, f->ingest_ref, ratio);
	if (ingest_target) {
		bool met = f->ingest_store >= INGEST_TARGET;
		ok = ok && met;
		printf("   target >= %.0f/s: %s\n", INGEST_TARGET, met ? "target met" : "TARGET MISSED");
	} else {
		printf("   (no target; batches of %zu)\n", batch);
	}
	double ms = f->baseline_store * 1e3, ref_ms = f->baseline_ref * 1e3;
	bool met = ms < BASELINE_TARGET_MS;
	ok = ok && met;
	printf("%-9s baseline  store %9.1f ms          plain SELECT %9.1f ms          time ratio %.2f"
	       "   target < %.0f ms: %s\n",
	       engine, ms, ref_ms, ms / ref_ms, BASELINE_TARGET_MS,
	       met ? "target met" : "TARGET MISSED");
	return ok;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *pg = NULL;
	size_t n_records = 100000, batch = 1000, nodes = 10000;
	int rounds = 3, reps = 7;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--dir") == 0 && v)
			dir = v, i++;
		else if (strcmp(argv[i], "--pg") == 0 && v)
			pg = v, i++;
		else if (strcmp(argv[i], "--records") == 0 && v)
			n_records = strtoul(v, NULL, 10), i++;
		else if (strcmp(argv[i], "--batch") == 0 && v)
			batch = strtoul(v, NULL, 10), i++;
		else if (strcmp(argv[i], "--nodes") == 0 && v)
			nodes = strtoul(v, NULL, 10), i++;
		else if (strcmp(argv[i], "--rounds") == 0 && v)
			rounds = atoi(v), i++;
		else if (strcmp(argv[i], "--reps") == 0 && v)
			reps = atoi(v), i++;
		else
			dir = NULL, rounds = 0;
	}
	if (!dir || !*dir || rounds < 1 || reps < 1 || batch < 1 || n_records < 1 || nodes < 1) {
		fprintf(stderr, "usage: store_bench --dir DIR [--pg URI] [--records N] [--batch B] "
		                "[--nodes N] [--rounds R] [--reps R]\n"
		                "  DIR: where the SQLite files go (made if missing, on the disk to measure)\n"
		                "  URI: a PostgreSQL server whose user may create databases\n");
		return 2;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		die(dir, strerror(errno));
#if !defined(__OPTIMIZE__)
	fprintf(stderr, "store_bench: warning: not an optimised build; the figures are not "
	                "comparable with the targets\n");
#endif
#if defined(__SANITIZE_ADDRESS__)
	fprintf(stderr, "store_bench: warning: a sanitizer build; the figures are not comparable "
	                "with the targets\n");
#endif
	struct corpus ingest, classes;
	make_corpus(&ingest, n_records, nodes, false);
	make_corpus(&classes, nodes * N_METRICS, nodes, false);
	printf("ingest    %zu records of %zu bytes of JSON on average, %d samples each, batches of "
	       "%zu; best of %d rounds\n",
	       ingest.n, ingest.body_bytes / ingest.n, N_SAMPLES, batch, rounds);
	printf("baseline  %s, %zu nodes x one %d-sample run of each of %zu metrics; one metric "
	       "built; median of %d\n",
	       CLASS, nodes, N_SAMPLES, N_METRICS, reps);

	bool ok = true;
	struct figures f;
	struct backend sq = {false, dir, NULL};
	printf("sqlite    %s (sqlite %s, WAL, synchronous=FULL)\n", dir, sqlite3_libversion());
	fflush(stdout);
	run_backend(&sq, &ingest, &classes, batch, rounds, reps, &f);
	if (f.baseline_nodes != nodes)
		die("baseline", "the baseline does not count every node");
	ok = report("sqlite", "raw sqlite3", &f, true, batch) && ok;
	const char *suffix[] = {"ingest_store", "ingest_ref", "baseline"};
	for (int k = 0; k < 3; k++) {
		const char *ext[] = {".db", ".db-wal", ".db-shm"};
		for (int e = 0; e < 3; e++) {
			char p[1200];
			snprintf(p, sizeof p, "%s/%s%s", dir, suffix[k], ext[e]);
			unlink(p);
		}
	}
	if (pg) {
		struct backend pb = {true, NULL, pg};
		PGconn *c = PQconnectdb(pg);
		if (PQstatus(c) != CONNECTION_OK)
			die(pg, PQerrorMessage(c));
		printf("postgres  server %d (the URI's server; its fsync setting is its own)\n",
		       PQserverVersion(c));
		PQfinish(c);
		fflush(stdout);
		run_backend(&pb, &ingest, &classes, batch, rounds, reps, &f);
		if (f.baseline_nodes != nodes)
			die("baseline", "the baseline does not count every node");
		ok = report("postgres", "raw libpq", &f, false, batch) && ok;
	}
	corpus_free(&ingest);
	corpus_free(&classes);
	return ok ? 0 : 1;
}
