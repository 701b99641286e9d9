/* Probation after a release, the evidence of a failing domain, and the
 * runtimes of the jobs the epilog saw (store/probation.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "store/probation.h"
#include "store/store_internal.h"

/* ---- probation ------------------------------------------------------------------ */

#define PROBATION_COLUMNS "id, case_id, node, started_at, ended_at, outcome, job, detail"

static int read_probation(ng_sql_stmt *q, void *elem)
{
	ng_store_probation *p = elem;
	memset(p, 0, sizeof *p);
	p->id = ng_sql_column_int64(q, 0);
	p->case_id = ng_sql_column_int64(q, 1);
	ng_q_text(q, 2, p->node, sizeof p->node);
	p->started_at = ng_sql_column_int64(q, 3);
	p->ended_at = ng_sql_column_int64(q, 4);
	ng_q_text(q, 5, p->outcome, sizeof p->outcome);
	ng_q_text(q, 6, p->job, sizeof p->job);
	ng_q_text(q, 7, p->detail, sizeof p->detail);
	return 0;
}

static int one_probation(ng_sql_stmt *q, ng_store_probation *out, ng_err *err)
{
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		read_probation(q, out);
	ng_sql_finalize(q);
	return r;
}

int ng_store_probation_of(ng_store *st, const char *node, ng_store_probation *out, ng_err *err)
{
	return one_probation(ng_q(st, err,
	                          "SELECT " PROBATION_COLUMNS " FROM probations WHERE node = ?"
	                          " AND ended_at = 0 ORDER BY id DESC LIMIT 1",
	                          "t", node),
	                     out, err);
}

int ng_store_probation_of_case(ng_store *st, int64_t case_id, ng_store_probation *out,
                               ng_err *err)
{
	return one_probation(ng_q(st, err,
	                          "SELECT " PROBATION_COLUMNS " FROM probations WHERE case_id = ?"
	                          " ORDER BY id DESC LIMIT 1",
	                          "i", case_id),
	                     out, err);
}

int ng_store_list_probations(ng_store *st, bool all, ng_store_probation **out, size_t *n,
                             ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " PROBATION_COLUMNS " FROM probations WHERE ? = 1 OR ended_at = 0"
	                      " ORDER BY started_at DESC, id DESC",
	                      "i", (int64_t)all);
	return ng_q_rows(q, sizeof **out, read_probation, NULL, (void **)out, n, err);
}

struct release {
	int64_t id, at;
	const char *by, *reason, *detail;
};

static int release(ng_store *st, void *arg, ng_err *err)
{
	const struct release *r = arg;
	ng_store_case c;
	int got = ng_store_get_case(st, r->id, &c, err);
	if (got <= 0)
		return got < 0 ? -1 : ng_fail(err, "there is no case %" PRId64, r->id);
	bool was_closed = c.closed_at != 0;
	char node[128];
	ng_copy(node, sizeof node, c.node);
	ng_store_case_free(&c);
	if (was_closed)
		return ng_fail(err, "case %" PRId64 " is already closed", r->id);
	if (ng_q_exec(st, err,
	              "UPDATE cases SET closed_at = ?, closed_by = ?, close_reason = ? WHERE id = ?",
	              "itti", r->at, r->by, r->reason, r->id) < 0 ||
	    ng_q_exec(st, err,
	              "UPDATE node_states SET outcome = 'probation', updated_at = ? WHERE node = ?",
	              "it", r->at, node) < 0)
		return -1;
	/* One probation in force per node: an older one (of an earlier case)
	 * is superseded by this release. */
	if (ng_q_exec(st, err,
	              "UPDATE probations SET ended_at = ?, outcome = 'superseded',"
	              " detail = 'a later release started a new probation' WHERE node = ?"
	              " AND ended_at = 0",
	              "it", r->at, node) < 0)
		return -1;
	int64_t pid = 0;
	if (ng_q_int64(st, err, &pid,
	               "INSERT INTO probations (case_id, node, started_at) VALUES (?, ?, ?)"
	               " RETURNING id",
	               "iti", r->id, node, r->at) != 1)
		return -1;
	ng_state_touch_id(st, "cases", r->id);
	ng_state_touch(st, "node_states", node);
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", node);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"case\":%" PRId64 ",\"probation\":%" PRId64 ",\"reason\":", r->id,
	                 pid);
	ng_strbuf_add_json_string(&d, r->reason);
	if (r->detail && r->detail[0] == '{' && r->detail[1] != '}') {
		ng_strbuf_adds(&d, ",");
		ng_strbuf_adds(&d, r->detail + 1); /* the object's members, its brace closes ours */
	} else {
		ng_strbuf_adds(&d, "}");
	}
	int rc = ng_store_audit(st, true, r->at, r->by, "quarantine.release", subject, d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

int ng_store_release_to_probation(ng_store *st, int64_t case_id, int64_t at, const char *by,
                                  const char *reason, const char *detail, ng_err *err)
{
	struct release r = {case_id, at, by, reason, detail};
	return ng_store_tx(st, release, &r, err);
}

struct end {
	int64_t id, at;
	ng_probation_end how;
	const char *job, *why;
};

static int end_probation(ng_store *st, void *arg, ng_err *err)
{
	const struct end *e = arg;
	ng_store_probation p;
	int got = one_probation(ng_q(st, err,
	                             "SELECT " PROBATION_COLUMNS " FROM probations WHERE id = ?", "i",
	                             e->id),
	                        &p, err);
	if (got <= 0)
		return got < 0 ? -1 : ng_fail(err, "there is no probation %" PRId64, e->id);
	if (p.ended_at)
		return ng_fail(err, "probation %" PRId64 " already ended (%s)", e->id, p.outcome);
	static const char *const names[] = {"passed", "failed", "superseded"};
	static const char *const actions[] = {"probation.pass", "probation.fail",
	                                      "probation.superseded"};
	const char *job = e->job ? e->job : "", *why = e->why ? e->why : "";
	if (ng_q_exec(st, err,
	              "UPDATE probations SET ended_at = ?, outcome = ?, job = ?, detail = ? WHERE id = ?",
	              "ittti", e->at, names[e->how], job, why, e->id) < 0)
		return -1;
	if (e->how == NG_PROBATION_PASSED) {
		if (ng_q_exec(st, err,
		              "UPDATE node_states SET outcome = 'admitted', updated_at = ? WHERE node = ?"
		              " AND outcome = 'probation'",
		              "it", e->at, p.node) < 0)
			return -1;
		ng_state_touch(st, "node_states", p.node);
	} else if (e->how == NG_PROBATION_FAILED) {
		/* The same case again, as a retry: what it failed before is what it
		 * failed again; the passing runs that released it count no more. */
		if (ng_q_exec(st, err,
		              "UPDATE cases SET closed_at = 0, closed_by = '', close_reason = '',"
		              " retries = retries + 1, passes = 0 WHERE id = ?",
		              "i", p.case_id) < 0 ||
		    ng_q_exec(st, err,
		              "UPDATE node_states SET outcome = 'quarantined', updated_at = ? WHERE node = ?",
		              "it", e->at, p.node) < 0)
			return -1;
		ng_state_touch_id(st, "cases", p.case_id);
		ng_state_touch(st, "node_states", p.node);
	}
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", p.node);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"case\":%" PRId64 ",\"probation\":%" PRId64 ",\"job\":", p.case_id,
	                 p.id);
	ng_strbuf_add_json_string(&d, job);
	ng_strbuf_adds(&d, ",\"why\":");
	ng_strbuf_add_json_string(&d, why);
	ng_strbuf_adds(&d, "}");
	int rc = ng_store_audit(st, true, e->at, "nodegate", actions[e->how], subject, d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

int ng_store_end_probation(ng_store *st, int64_t id, ng_probation_end how, int64_t at,
                           const char *job, const char *why, ng_err *err)
{
	struct end e = {id, at, how, job, why};
	return ng_store_tx(st, end_probation, &e, err);
}

/* ---- job runtimes ------------------------------------------------------------------ */

struct job_run {
	const char *node, *job, *name;
	int64_t runtime, at;
	bool clean;
};

static int put_job_run(ng_store *st, void *arg, ng_err *err)
{
	const struct job_run *j = arg;
	return ng_q_exec(st, err,
	                 "INSERT INTO job_runs (node, job, job_name, runtime_s, clean, at)"
	                 " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (node, job) DO UPDATE SET"
	                 " job_name = excluded.job_name, runtime_s = excluded.runtime_s,"
	                 " clean = excluded.clean, at = excluded.at",
	                 "tttiii", j->node, j->job, j->name, j->runtime, (int64_t)j->clean, j->at) < 0
	               ? -1
	               : 0;
}

int ng_store_put_job_run(ng_store *st, const char *node, const char *job, const char *job_name,
                         int64_t runtime_s, bool clean, int64_t at, ng_err *err)
{
	struct job_run j = {node, job, job_name ? job_name : "", runtime_s, at, clean};
	return ng_store_tx(st, put_job_run, &j, err);
}

int ng_store_job_runtimes(ng_store *st, const char *job_name, const char *node, double *out,
                          size_t cap, size_t *n, ng_err *err)
{
	*n = 0;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT runtime_s FROM job_runs WHERE job_name = ? AND node <> ?"
	                      " AND clean = 1 AND runtime_s >= 0 ORDER BY at DESC LIMIT ?",
	                      "tti", job_name, node, (int64_t)cap);
	if (!q)
		return -1;
	int r;
	while ((r = ng_sql_step(q, err)) == 1 && *n < cap)
		out[(*n)++] = (double)ng_sql_column_int64(q, 0);
	ng_sql_finalize(q);
	return r < 0 ? -1 : 0;
}

/* ---- evidence of the failing domain ------------------------------------------------- */

struct evidence {
	const char *node, *run_id, *domain, *body;
	int64_t at;
};

static int put_evidence(ng_store *st, void *arg, ng_err *err)
{
	const struct evidence *e = arg;
	return ng_q_exec(st, err,
	                 "INSERT INTO case_evidence (node, run_id, domain, captured_at, body)"
	                 " VALUES (?, ?, ?, ?, ?)",
	                 "tttit", e->node, e->run_id, e->domain, e->at, e->body) < 0
	               ? -1
	               : 0;
}

int ng_store_put_evidence(ng_store *st, const char *node, const char *run_id,
                          const char *domain, int64_t at, const char *body, ng_err *err)
{
	struct evidence e = {node, run_id, domain, body, at};
	return ng_store_tx(st, put_evidence, &e, err);
}

int ng_store_evidence_of_run(ng_store *st, const char *node, const char *run_id, cJSON **out,
                             ng_err *err)
{
	*out = NULL;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT domain, captured_at, body FROM case_evidence WHERE node = ?"
	                      " AND run_id = ? ORDER BY id",
	                      "tt", node, run_id);
	if (!q)
		return -1;
	cJSON *arr = cJSON_CreateArray();
	int r;
	while (arr && (r = ng_sql_step(q, err)) == 1) {
		cJSON *o = cJSON_CreateObject();
		const char *body = ng_sql_column_text(q, 2);
		cJSON *ev = body ? cJSON_Parse(body) : NULL;
		cJSON_AddStringToObject(o, "domain", ng_sql_column_text(q, 0) ? ng_sql_column_text(q, 0) : "");
		cJSON_AddNumberToObject(o, "captured_at", (double)ng_sql_column_int64(q, 1));
		cJSON_AddItemToObject(o, "evidence", ev ? ev : cJSON_CreateNull());
		cJSON_AddItemToArray(arr, o);
	}
	ng_sql_finalize(q);
	if (!arr)
		return ng_fail(err, "out of memory");
	if (r < 0) {
		cJSON_Delete(arr);
		return -1;
	}
	*out = arr;
	return 0;
}

/* How many of the newest captures are looked at for a complete one: a run
 * of collectors that did not finish is not looked behind for ever. */
#define PREVIOUS_LOOKBACK 16

int ng_store_previous_evidence(ng_store *st, const char *node, const char *domain,
                               const char *run_id, cJSON **out, ng_err *err)
{
	*out = NULL;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT run_id, captured_at, body FROM case_evidence WHERE node = ?"
	                      " AND domain = ? AND run_id <> ? ORDER BY id DESC LIMIT ?",
	                      "ttti", node, domain, run_id ? run_id : "", (int64_t)PREVIOUS_LOOKBACK);
	if (!q)
		return -1;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		const char *body = ng_sql_column_text(q, 2);
		cJSON *ev = body ? cJSON_Parse(body) : NULL;
		if (!cJSON_IsObject(ev) || cJSON_GetObjectItemCaseSensitive(ev, "incomplete")) {
			cJSON_Delete(ev);
			continue;
		}
		cJSON *o = cJSON_CreateObject();
		const char *run = ng_sql_column_text(q, 0);
		if (!o || !cJSON_AddStringToObject(o, "run_id", run ? run : "") ||
		    !cJSON_AddNumberToObject(o, "captured_at", (double)ng_sql_column_int64(q, 1))) {
			cJSON_Delete(o);
			cJSON_Delete(ev);
			ng_sql_finalize(q);
			return ng_fail(err, "out of memory");
		}
		cJSON_AddItemToObject(o, "evidence", ev);
		*out = o;
		break;
	}
	ng_sql_finalize(q);
	if (r < 0) {
		cJSON_Delete(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
