/* What the store knows of each node: the verdict lines of its runs, its
 * current state, and the hysteresis state of each of its metrics. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store/store_internal.h"

struct decision {
	const ng_store_node_state *state;
	const ng_store_verdict *lines;
	size_t n;
	const char *detail, *actor;
};

static int put_decision(ng_store *st, void *arg, ng_err *err)
{
	const struct decision *d = arg;
	const ng_store_node_state *s = d->state;
	ng_sql_stmt *ins;
	if (ng_sql_prepare(st->db,
	                   "INSERT INTO verdicts (run_id, node, at, stage, domain, metric, unit, value,"
	                   " baseline_median, floor, bar, percent, gate_verdict, status, record_id)"
	                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	                   &ins, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < d->n && rc == 0; i++) {
		const ng_store_verdict *v = &d->lines[i];
		const double nums[] = {v->value, v->baseline_median, v->floor, v->bar, v->percent};
		ng_sql_reset(ins);
		ng_sql_bind_text(ins, 1, s->run_id);
		ng_sql_bind_text(ins, 2, s->node);
		ng_sql_bind_int64(ins, 3, s->updated_at);
		ng_sql_bind_text(ins, 4, v->stage);
		ng_sql_bind_text(ins, 5, v->domain ? v->domain : "");
		ng_sql_bind_text(ins, 6, v->metric);
		ng_sql_bind_text(ins, 7, v->unit ? v->unit : "");
		for (int k = 0; k < 5; k++) {
			if (nums[k] != nums[k])
				ng_sql_bind_null(ins, 8 + k);
			else
				ng_sql_bind_double(ins, 8 + k, nums[k]);
		}
		ng_sql_bind_text(ins, 13, v->gate_verdict);
		ng_sql_bind_text(ins, 14, v->status);
		if (v->record_id)
			ng_sql_bind_int64(ins, 15, v->record_id);
		else
			ng_sql_bind_null(ins, 15);
		if (ng_sql_step(ins, err) < 0)
			rc = -1;
	}
	ng_sql_finalize(ins);
	if (rc < 0)
		return -1;
	if (ng_q_exec(st, err,
	              "INSERT INTO node_states (node, class, software, outcome, updated_at, recheck_at,"
	              " run_id, duration_ms, node_name) VALUES (?, ?, ?, ?, ?, ?, ?, NULLIF(?, 0), ?)"
	              " ON CONFLICT (node) DO UPDATE SET class = excluded.class,"
	              " software = excluded.software, outcome = excluded.outcome,"
	              " updated_at = excluded.updated_at, recheck_at = excluded.recheck_at,"
	              " run_id = excluded.run_id, duration_ms = excluded.duration_ms,"
	              " node_name = excluded.node_name",
	              "ttttiitit", s->node, s->class_key, s->software, s->outcome, s->updated_at,
	              s->recheck_at, s->run_id, s->duration_ms, s->node_name) < 0 ||
	    ng_store_put_node_name(st, s->node, s->node_name, s->updated_at, err) < 0)
		return -1;
	ng_state_touch(st, "node_states", s->node);
	/* The decision itself, kept beside the node's latest state: the report
	 * counts admissions that later straggled per class and policy. */
	if (ng_store_keep_policy(st, s->updated_at, err) < 0 ||
	    ng_q_exec(st, err,
	              "INSERT INTO decisions (run_id, node, class, software, outcome, at, policy,"
	              " node_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	              "tttttitt", s->run_id, s->node, s->class_key, s->software, s->outcome,
	              s->updated_at, st->policy, s->node_name) < 0)
		return -1;
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", s->node);
	char action[48];
	snprintf(action, sizeof action, "admit.%s", s->outcome);
	return ng_store_audit(st, true, s->updated_at, d->actor, action, subject, d->detail, err);
}

int ng_store_put_decision(ng_store *st, const ng_store_node_state *state,
                          const ng_store_verdict *lines, size_t n, const char *detail,
                          const char *actor, ng_err *err)
{
	struct decision d = {state, lines, n, detail, actor};
	return ng_store_tx(st, put_decision, &d, err);
}

/* ---- many decisions at once ---------------------------------------------------------- */

static const char verdict_sql[] =
	"INSERT INTO verdicts (run_id, node, at, stage, domain, metric, unit, value,"
	" baseline_median, floor, bar, percent, gate_verdict, status, record_id)"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char state_sql[] =
	"INSERT INTO node_states (node, class, software, outcome, updated_at, recheck_at,"
	" run_id, duration_ms, node_name) VALUES (?, ?, ?, ?, ?, ?, ?, NULLIF(?, 0), ?)"
	" ON CONFLICT (node) DO UPDATE SET class = excluded.class,"
	" software = excluded.software, outcome = excluded.outcome,"
	" updated_at = excluded.updated_at, recheck_at = excluded.recheck_at,"
	" run_id = excluded.run_id, duration_ms = excluded.duration_ms,"
	" node_name = excluded.node_name";
static const char decision_sql[] =
	"INSERT INTO decisions (run_id, node, class, software, outcome, at, policy, node_name)"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

struct batch {
	const ng_store_decision *d;
	size_t n;
	const char *actor;
};

static int step_done(ng_sql_stmt *q, ng_err *err)
{
	int r;
	while ((r = ng_sql_step(q, err)) == 1)
		;
	return r;
}

static int put_one_of_batch(ng_store *st, ng_sql_stmt *const q[3], ng_audit_cursor *cur,
                            const ng_store_decision *d, const char *actor, ng_err *err)
{
	const ng_store_node_state *s = d->state;
	for (size_t i = 0; i < d->n_lines; i++) {
		const ng_store_verdict *v = &d->lines[i];
		const double nums[] = {v->value, v->baseline_median, v->floor, v->bar, v->percent};
		ng_sql_reset(q[0]);
		ng_sql_bind_text(q[0], 1, s->run_id);
		ng_sql_bind_text(q[0], 2, s->node);
		ng_sql_bind_int64(q[0], 3, s->updated_at);
		ng_sql_bind_text(q[0], 4, v->stage);
		ng_sql_bind_text(q[0], 5, v->domain ? v->domain : "");
		ng_sql_bind_text(q[0], 6, v->metric);
		ng_sql_bind_text(q[0], 7, v->unit ? v->unit : "");
		for (int k = 0; k < 5; k++) {
			if (nums[k] != nums[k])
				ng_sql_bind_null(q[0], 8 + k);
			else
				ng_sql_bind_double(q[0], 8 + k, nums[k]);
		}
		ng_sql_bind_text(q[0], 13, v->gate_verdict);
		ng_sql_bind_text(q[0], 14, v->status);
		if (v->record_id)
			ng_sql_bind_int64(q[0], 15, v->record_id);
		else
			ng_sql_bind_null(q[0], 15);
		if (step_done(q[0], err) < 0)
			return -1;
	}
	ng_sql_reset(q[1]);
	ng_sql_bind_text(q[1], 1, s->node);
	ng_sql_bind_text(q[1], 2, s->class_key);
	ng_sql_bind_text(q[1], 3, s->software);
	ng_sql_bind_text(q[1], 4, s->outcome);
	ng_sql_bind_int64(q[1], 5, s->updated_at);
	ng_sql_bind_int64(q[1], 6, s->recheck_at);
	ng_sql_bind_text(q[1], 7, s->run_id);
	ng_sql_bind_int64(q[1], 8, s->duration_ms);
	ng_sql_bind_text(q[1], 9, s->node_name);
	if (step_done(q[1], err) < 0 ||
	    ng_store_put_node_name(st, s->node, s->node_name, s->updated_at, err) < 0)
		return -1;
	ng_state_touch(st, "node_states", s->node);
	ng_sql_reset(q[2]);
	ng_sql_bind_text(q[2], 1, s->run_id);
	ng_sql_bind_text(q[2], 2, s->node);
	ng_sql_bind_text(q[2], 3, s->class_key);
	ng_sql_bind_text(q[2], 4, s->software);
	ng_sql_bind_text(q[2], 5, s->outcome);
	ng_sql_bind_int64(q[2], 6, s->updated_at);
	ng_sql_bind_text(q[2], 7, st->policy);
	ng_sql_bind_text(q[2], 8, s->node_name);
	if (step_done(q[2], err) < 0)
		return -1;
	char subject[160], action[48];
	snprintf(subject, sizeof subject, "node:%s", s->node);
	snprintf(action, sizeof action, "admit.%s", s->outcome);
	return ng_audit_cursor_append(st, cur, s->updated_at, actor, action, subject, d->detail, err);
}

static int put_batch(ng_store *st, void *arg, ng_err *err)
{
	const struct batch *b = arg;
	ng_sql_stmt *q[3] = {NULL, NULL, NULL};
	ng_audit_cursor cur;
	if (ng_audit_cursor_open(st, &cur, err) < 0) {
		ng_audit_cursor_close(st, &cur, false, err);
		return -1;
	}
	int rc = ng_sql_prepare(st->db, verdict_sql, &q[0], err);
	if (rc == 0 && b->n)
		rc = ng_store_keep_policy(st, b->d[0].state->updated_at, err);
	if (rc == 0)
		rc = ng_sql_prepare(st->db, state_sql, &q[1], err);
	if (rc == 0)
		rc = ng_sql_prepare(st->db, decision_sql, &q[2], err);
	for (size_t i = 0; rc == 0 && i < b->n; i++)
		rc = put_one_of_batch(st, q, &cur, &b->d[i], b->actor, err);
	for (int k = 0; k < 3; k++)
		ng_sql_finalize(q[k]);
	int closed = ng_audit_cursor_close(st, &cur, rc == 0, err);
	return rc < 0 ? -1 : closed;
}

int ng_store_put_decisions(ng_store *st, const ng_store_decision *d, size_t n, const char *actor,
                           ng_err *err)
{
	struct batch b = {d, n, actor};
	return n ? ng_store_tx(st, put_batch, &b, err) : 0;
}

int ng_store_get_node_state(ng_store *st, const char *node, ng_store_node_state *out, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT node, class, software, outcome, updated_at, recheck_at, run_id,"
	                      " duration_ms, node_name FROM node_states WHERE node = ?",
	                      "t", node);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		memset(out, 0, sizeof *out);
		ng_q_text(q, 0, out->node, sizeof out->node);
		ng_q_text(q, 1, out->class_key, sizeof out->class_key);
		ng_q_text(q, 2, out->software, sizeof out->software);
		ng_q_text(q, 3, out->outcome, sizeof out->outcome);
		out->updated_at = ng_sql_column_int64(q, 4);
		out->recheck_at = ng_sql_column_int64(q, 5);
		ng_q_text(q, 6, out->run_id, sizeof out->run_id);
		out->duration_ms = ng_sql_column_int64(q, 7); /* NULL reads as 0: not measured */
		ng_q_text(q, 8, out->node_name, sizeof out->node_name);
	}
	ng_sql_finalize(q);
	return r;
}

int ng_store_get_hysteresis(ng_store *st, const char *node, const char *metric,
                            ng_strbuf *history, bool *blocked, ng_err *err)
{
	ng_strbuf_reset(history);
	*blocked = false;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT history, blocked FROM hysteresis WHERE node = ? AND metric = ?",
	                      "tt", node, metric);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		ng_strbuf_adds(history, ng_sql_column_text(q, 0));
		*blocked = ng_sql_column_int64(q, 1) != 0;
	} else {
		ng_strbuf_adds(history, "[]");
	}
	ng_sql_finalize(q);
	return r < 0 ? -1 : 0;
}

int ng_store_put_hysteresis(ng_store *st, const char *node, const char *metric,
                            const char *history, bool blocked, int64_t at, ng_err *err)
{
	if (ng_sql_begin_write(st->db, err) < 0)
		return -1;
	if (ng_q_exec(st, err,
	              "INSERT INTO hysteresis (node, metric, history, blocked, updated_at)"
	              " VALUES (?, ?, ?, ?, ?) ON CONFLICT (node, metric) DO UPDATE SET"
	              " history = excluded.history, blocked = excluded.blocked,"
	              " updated_at = excluded.updated_at",
	              "tttii", node, metric, history, (int64_t)blocked, at) < 0) {
		ng_sql_rollback(st->db);
		return -1;
	}
	return ng_sql_commit(st->db, err);
}

/* ---- GPU counters ----------------------------------------------------------------- */

struct counters {
	const char *node;
	const ng_store_gpu_counters *c;
	size_t n;
};

static int bind_counter(ng_sql_stmt *q, int i, int64_t v)
{
	return v < 0 ? ng_sql_bind_null(q, i) : ng_sql_bind_int64(q, i, v);
}

static int put_counters(ng_store *st, void *arg, ng_err *err)
{
	const struct counters *a = arg;
	ng_sql_stmt *q;
	if (ng_sql_prepare(st->db,
	                   "INSERT INTO gpu_counters (node, uuid, at, retired_pages, remapped_rows,"
	                   " pcie_replays, nvlink_errors) VALUES (?, ?, ?, ?, ?, ?, ?)",
	                   &q, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < a->n && rc == 0; i++) {
		const ng_store_gpu_counters *c = &a->c[i];
		ng_sql_reset(q);
		ng_sql_bind_text(q, 1, a->node);
		ng_sql_bind_text(q, 2, c->uuid);
		ng_sql_bind_int64(q, 3, c->at);
		bind_counter(q, 4, c->retired_pages);
		bind_counter(q, 5, c->remapped_rows);
		bind_counter(q, 6, c->pcie_replays);
		bind_counter(q, 7, c->nvlink_errors);
		if (ng_sql_step(q, err) < 0)
			rc = -1;
	}
	ng_sql_finalize(q);
	return rc;
}

int ng_store_put_gpu_counters(ng_store *st, const char *node, const ng_store_gpu_counters *c,
                              size_t n, ng_err *err)
{
	struct counters a = {node, c, n};
	return n ? ng_store_tx(st, put_counters, &a, err) : 0;
}

static int one_counters(ng_sql_stmt *q, ng_store_gpu_counters *out, ng_err *err)
{
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		memset(out, 0, sizeof *out);
		ng_q_text(q, 0, out->uuid, sizeof out->uuid);
		out->at = ng_sql_column_int64(q, 1);
		int64_t *v[] = {&out->retired_pages, &out->remapped_rows, &out->pcie_replays,
		                &out->nvlink_errors};
		for (int k = 0; k < 4; k++)
			*v[k] = ng_sql_column_is_null(q, 2 + k) ? -1 : ng_sql_column_int64(q, 2 + k);
	}
	ng_sql_finalize(q);
	return r;
}

#define COUNTER_COLUMNS "uuid, at, retired_pages, remapped_rows, pcie_replays, nvlink_errors"

int ng_store_gpu_counters_past(ng_store *st, const char *node, const char *uuid, int64_t before,
                               int64_t now, ng_store_gpu_counters *out, ng_err *err)
{
	int r = one_counters(ng_q(st, err,
	                          "SELECT " COUNTER_COLUMNS " FROM gpu_counters WHERE node = ?"
	                          " AND uuid = ? AND at <= ? ORDER BY at DESC, id DESC LIMIT 1",
	                          "tti", node, uuid, before),
	                     out, err);
	if (r != 0)
		return r;
	return one_counters(ng_q(st, err,
	                         "SELECT " COUNTER_COLUMNS " FROM gpu_counters WHERE node = ?"
	                         " AND uuid = ? AND at < ? ORDER BY at ASC, id ASC LIMIT 1",
	                         "tti", node, uuid, now),
	                    out, err);
}

int64_t ng_store_count_node_verdicts(ng_store *st, const char *node, const char *metric,
                                     const char *stage, const char *status, int64_t from,
                                     int64_t until, ng_err *err)
{
	int64_t n = 0;
	return ng_q_int64(st, err, &n,
	                  "SELECT count(*) FROM verdicts WHERE node = ? AND at >= ? AND at < ?"
	                  " AND metric = ? AND stage = ? AND status = ?",
	                  "tiittt", node, from, until, metric, stage, status) < 0
	               ? -1
	               : n;
}

int ng_store_last_node_status(ng_store *st, const char *node, const char *software,
                              const char *metric, const char *stage, int64_t before, char *status,
                              size_t cap, ng_err *err)
{
	status[0] = '\0';
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT v.status FROM verdicts v JOIN records r ON r.id = v.record_id"
	                      " WHERE v.node = ? AND v.at < ? AND v.metric = ? AND v.stage = ?"
	                      " AND r.software = ? ORDER BY v.at DESC, v.id DESC LIMIT 1",
	                      "tittt", node, before, metric, stage, software);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		ng_q_text(q, 0, status, cap);
	ng_sql_finalize(q);
	return r;
}

int64_t ng_store_count_gate_verdicts(ng_store *st, const char *node, const char *metric,
                                     const char *gate_verdict, int64_t from, int64_t until,
                                     ng_err *err)
{
	int64_t n = 0;
	return ng_q_int64(st, err, &n,
	                  "SELECT count(*) FROM verdicts WHERE node = ? AND at >= ? AND at < ?"
	                  " AND metric = ? AND gate_verdict = ?",
	                  "tiitt", node, from, until, metric, gate_verdict) < 0
	               ? -1
	               : n;
}
