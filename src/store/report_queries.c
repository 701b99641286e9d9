/* The report's reads (report_queries.h). Plain SELECTs both dialects share;
 * filtering that needs JSON is left to the caller, so the same SQL runs on
 * SQLite and PostgreSQL. */
#include <stdlib.h>
#include <string.h>

#include "store/report_queries.h"
#include "store/store_internal.h"

int ng_store_read_begin(ng_store *st, ng_err *err) { return ng_sql_begin_read(st->db, err); }
void ng_store_read_end(ng_store *st) { ng_sql_rollback(st->db); }

static const char *text(ng_sql_stmt *q, int col)
{
	const char *s = ng_sql_column_text(q, col);
	return s ? s : "";
}

/* Steps q to the end calling row(q, arg) for each row; finalizes q. */
static int walk(ng_sql_stmt *q, int (*row)(ng_sql_stmt *q, void *arg), void *arg, ng_err *err)
{
	if (!q)
		return -1;
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1)
		stop = row(q, arg);
	ng_sql_finalize(q);
	if (stop)
		return stop;
	return r < 0 ? -1 : 0;
}

struct runs_walk {
	int (*fn)(const ng_report_run *r, void *arg);
	void *arg;
	double *buf;
	size_t cap;
	bool oom;
};

static int run_row(ng_sql_stmt *q, void *arg)
{
	struct runs_walk *w = arg;
	size_t len = 0;
	const void *blob = ng_sql_column_blob(q, 6, &len);
	size_t n = len / sizeof(double);
	if (n > w->cap) {
		double *b = realloc(w->buf, n * sizeof *b);
		if (!b) {
			w->oom = true;
			return -1;
		}
		w->buf = b;
		w->cap = n;
	}
	if (n)
		memcpy(w->buf, blob, n * sizeof(double)); /* the blob may be unaligned */
	ng_report_run r = {
		.node = text(q, 0), .class_key = text(q, 1), .software = text(q, 2),
		.metric = text(q, 3), .unit = text(q, 4), .taken_at = ng_sql_column_int64(q, 5),
		.samples = w->buf, .n_samples = n,
	};
	return w->fn(&r, w->arg);
}

int ng_store_report_runs(ng_store *st, int64_t since, const char *class_key,
                         int (*fn)(const ng_report_run *r, void *arg), void *arg, ng_err *err)
{
	struct runs_walk w = {fn, arg, NULL, 0, false};
	ng_sql_stmt *q =
		class_key ? ng_q(st, err,
		                 "SELECT node, class, software, metric, unit, taken_at, samples FROM records"
		                 " WHERE taken_at >= ? AND n_samples > 0 AND class = ?",
		                 "it", since, class_key)
		          : ng_q(st, err,
		                 "SELECT node, class, software, metric, unit, taken_at, samples FROM records"
		                 " WHERE taken_at >= ? AND n_samples > 0",
		                 "i", since);
	int rc = walk(q, run_row, &w, err);
	free(w.buf);
	if (w.oom)
		return ng_fail_as(err, NG_ERR_STORE, "out of memory reading records");
	return rc;
}

struct cb {
	void (*fn)(void);
	void *arg;
};

static int state_row(ng_sql_stmt *q, void *arg)
{
	struct cb *c = arg;
	ng_store_node_state s;
	memset(&s, 0, sizeof s);
	ng_q_text(q, 0, s.node, sizeof s.node);
	ng_q_text(q, 1, s.class_key, sizeof s.class_key);
	ng_q_text(q, 2, s.software, sizeof s.software);
	ng_q_text(q, 3, s.outcome, sizeof s.outcome);
	s.updated_at = ng_sql_column_int64(q, 4);
	s.recheck_at = ng_sql_column_int64(q, 5);
	ng_q_text(q, 6, s.run_id, sizeof s.run_id);
	s.duration_ms = ng_sql_column_int64(q, 7);
	ng_q_text(q, 8, s.node_name, sizeof s.node_name);
	return ((int (*)(const ng_store_node_state *, void *))c->fn)(&s, c->arg);
}

int ng_store_report_states(ng_store *st, int (*fn)(const ng_store_node_state *s, void *arg),
                           void *arg, ng_err *err)
{
	struct cb c = {(void (*)(void))fn, arg};
	return walk(ng_q(st, err,
	                 "SELECT s.node, s.class, s.software, s.outcome, s.updated_at, s.recheck_at,"
	                 " s.run_id, s.duration_ms, COALESCE(n.name, s.node_name) FROM node_states s"
	                 " LEFT JOIN node_names n ON n.node = s.node",
	                 ""),
	            state_row, &c, err);
}

static int decision_row(ng_sql_stmt *q, void *arg)
{
	struct cb *c = arg;
	ng_report_decision d = {
		.run_id = text(q, 0), .node = text(q, 1), .class_key = text(q, 2),
		.software = text(q, 3), .outcome = text(q, 4), .at = ng_sql_column_int64(q, 5),
		.policy = text(q, 6),
	};
	return ((int (*)(const ng_report_decision *, void *))c->fn)(&d, c->arg);
}

int ng_store_report_decisions(ng_store *st, int64_t since,
                              int (*fn)(const ng_report_decision *d, void *arg), void *arg,
                              ng_err *err)
{
	struct cb c = {(void (*)(void))fn, arg};
	return walk(ng_q(st, err,
	                 "SELECT run_id, node, class, software, outcome, at, policy FROM decisions"
	                 " WHERE at >= ? ORDER BY at, id",
	                 "i", since),
	            decision_row, &c, err);
}

static int health_row(ng_sql_stmt *q, void *arg)
{
	struct cb *c = arg;
	ng_report_health h = {.node = text(q, 0), .taken_at = ng_sql_column_int64(q, 1),
	                      .body = text(q, 2)};
	return ((int (*)(const ng_report_health *, void *))c->fn)(&h, c->arg);
}

int ng_store_report_health_faults(ng_store *st, int64_t since,
                                  int (*fn)(const ng_report_health *h, void *arg), void *arg,
                                  ng_err *err)
{
	struct cb c = {(void (*)(void))fn, arg};
	/* A GPU's severity is the worst of its reasons', so a body without
	 * either word anywhere cannot be degraded or fatal: most are skipped
	 * here without being parsed. */
	return walk(ng_q(st, err,
	                 "SELECT node, taken_at, body FROM records WHERE metric = 'gpu.health'"
	                 " AND taken_at >= ? AND (body LIKE '%\"degraded\"%' OR body LIKE '%\"fatal\"%')",
	                 "i", since),
	            health_row, &c, err);
}

static int profile_row(ng_sql_stmt *q, void *arg)
{
	struct cb *c = arg;
	return ((int (*)(const char *, const char *, void *))c->fn)(text(q, 0), text(q, 1), c->arg);
}

int ng_store_report_profiles(ng_store *st,
                             int (*fn)(const char *digest, const char *body, void *arg),
                             void *arg, ng_err *err)
{
	struct cb c = {(void (*)(void))fn, arg};
	return walk(ng_q(st, err, "SELECT digest, body FROM profiles", ""), profile_row, &c, err);
}

int ng_store_report_profile_at(ng_store *st, const char *node, int64_t at, bool after,
                               char digest[65], int64_t *taken, ng_err *err)
{
	digest[0] = '\0';
	*taken = 0;
	ng_sql_stmt *q =
		after ? ng_q(st, err,
		             "SELECT profile_digest, taken_at FROM records WHERE node = ? AND taken_at >= ?"
		             " AND profile_digest IS NOT NULL ORDER BY taken_at LIMIT 1",
		             "ti", node, at)
		      : ng_q(st, err,
		             "SELECT profile_digest, taken_at FROM records WHERE node = ? AND taken_at <= ?"
		             " AND profile_digest IS NOT NULL ORDER BY taken_at DESC LIMIT 1",
		             "ti", node, at);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		ng_q_text(q, 0, digest, 65);
		*taken = ng_sql_column_int64(q, 1);
	}
	ng_sql_finalize(q);
	return r;
}

int ng_store_report_profile_body(ng_store *st, const char *digest, ng_strbuf *body, ng_err *err)
{
	ng_strbuf_reset(body);
	ng_sql_stmt *q = ng_q(st, err, "SELECT body FROM profiles WHERE digest = ?", "t", digest);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		ng_strbuf_adds(body, text(q, 0));
	ng_sql_finalize(q);
	return r;
}

static int case_policy_row(ng_sql_stmt *q, void *arg)
{
	struct cb *c = arg;
	return ((int (*)(int64_t, const char *, void *))c->fn)(ng_sql_column_int64(q, 0),
	                                                        text(q, 1), c->arg);
}

int ng_store_report_case_policies(ng_store *st,
                                  int (*fn)(int64_t case_id, const char *policy, void *arg),
                                  void *arg, ng_err *err)
{
	struct cb c = {(void (*)(void))fn, arg};
	return walk(ng_q(st, err, "SELECT case_id, policy FROM case_policies", ""), case_policy_row,
	            &c, err);
}

static int software_row(ng_sql_stmt *q, void *arg)
{
	struct cb *c = arg;
	return ((int (*)(const char *, const char *, int64_t, int64_t, void *))c->fn)(
		text(q, 0), text(q, 1), ng_sql_column_int64(q, 2), ng_sql_column_int64(q, 3), c->arg);
}

int ng_store_report_software_seen(ng_store *st,
                                  int (*fn)(const char *class_key, const char *software,
                                            int64_t first, int64_t last, void *arg),
                                  void *arg, ng_err *err)
{
	struct cb c = {(void (*)(void))fn, arg};
	return walk(ng_q(st, err,
	                 "SELECT class, software, min(taken_at), max(taken_at) FROM records"
	                 " WHERE class <> '' GROUP BY class, software ORDER BY class, 3",
	                 ""),
	            software_row, &c, err);
}
