/* Policies the store has seen, the shadow policy, and a replay's reads
 * (store/policies.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "store/policies.h"
#include "store/store_internal.h"

static const char *text(ng_sql_stmt *q, int col)
{
	const char *s = ng_sql_column_text(q, col);
	return s ? s : "";
}

void ng_store_set_policy_text(ng_store *st, const char *digest, const char *body)
{
	ng_store_set_policy(st, digest);
	free(st->policy_text);
	st->policy_text = body ? strdup(body) : NULL;
}

static int keep(ng_store *st, const char *digest, const char *body, int64_t at, ng_err *err)
{
	return ng_q_exec(st, err,
	                 "INSERT INTO policies (digest, body, first_seen) VALUES (?, ?, ?)"
	                 " ON CONFLICT (digest) DO NOTHING",
	                 "tti", digest, body, at);
}

int ng_store_keep_policy(ng_store *st, int64_t at, ng_err *err)
{
	if (!st->policy[0] || !st->policy_text)
		return 0;
	return keep(st, st->policy, st->policy_text, at, err);
}

struct put_text {
	const char *digest, *body;
	int64_t at;
};

static int put_text_tx(ng_store *st, void *arg, ng_err *err)
{
	const struct put_text *p = arg;
	return keep(st, p->digest, p->body, p->at, err);
}

int ng_store_put_policy_text(ng_store *st, const char *digest, const char *body, int64_t at,
                             ng_err *err)
{
	struct put_text p = {digest, body, at};
	return ng_store_tx(st, put_text_tx, &p, err);
}

int ng_store_policies(ng_store *st, int (*fn)(const ng_store_policy_row *p, void *arg), void *arg,
                      ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT digest, body, first_seen, promoted_by, promoted_at, promote_reason"
	                      " FROM policies ORDER BY first_seen, digest",
	                      "");
	if (!q)
		return -1;
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1) {
		ng_store_policy_row p = {
			.digest = text(q, 0), .body = text(q, 1), .first_seen = ng_sql_column_int64(q, 2),
			.promoted_by = text(q, 3), .promoted_at = ng_sql_column_int64(q, 4),
			.promote_reason = text(q, 5),
		};
		stop = fn(&p, arg);
	}
	ng_sql_finalize(q);
	return stop ? stop : r < 0 ? -1 : 0;
}

int ng_store_policy_usage(ng_store *st,
                          int (*fn)(const char *policy, const char *outcome, int64_t n,
                                    int64_t first, int64_t last, void *arg),
                          void *arg, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT policy, outcome, count(*), min(at), max(at) FROM decisions"
	                      " GROUP BY policy, outcome ORDER BY min(at), policy, outcome",
	                      "");
	if (!q)
		return -1;
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1)
		stop = fn(text(q, 0), text(q, 1), ng_sql_column_int64(q, 2), ng_sql_column_int64(q, 3),
		          ng_sql_column_int64(q, 4), arg);
	ng_sql_finalize(q);
	return stop ? stop : r < 0 ? -1 : 0;
}

/* ---- shadow ---------------------------------------------------------------------- */

struct shadow_change {
	const char *digest, *body, *actor, *reason;
	int64_t at;
	int ended; /* clear: 1 when a shadow run was ended */
};

static int end_shadow(ng_store *st, int64_t at, int64_t *ended, ng_err *err)
{
	if (ng_q_int64(st, err, ended, "SELECT count(*) FROM shadow_policy WHERE cleared_at = 0", "") < 0)
		return -1;
	return ng_q_exec(st, err, "UPDATE shadow_policy SET cleared_at = ? WHERE cleared_at = 0", "i",
	                 at);
}

static int audit_detail(ng_store *st, const struct shadow_change *c, const char *action,
                        ng_err *err)
{
	ng_strbuf d = {0};
	ng_strbuf_adds(&d, "{\"policy\":");
	ng_strbuf_add_json_string(&d, c->digest ? c->digest : "");
	ng_strbuf_adds(&d, ",\"reason\":");
	ng_strbuf_add_json_string(&d, c->reason ? c->reason : "");
	ng_strbuf_addc(&d, '}');
	int rc = d.oom ? ng_fail(err, "out of memory")
	               : ng_store_audit(st, true, c->at, c->actor, action, "policy:shadow", d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

static int set_shadow_tx(ng_store *st, void *arg, ng_err *err)
{
	struct shadow_change *c = arg;
	int64_t ended;
	if (keep(st, c->digest, c->body, c->at, err) < 0 || end_shadow(st, c->at, &ended, err) < 0 ||
	    ng_q_exec(st, err,
	              "INSERT INTO shadow_policy (digest, set_at, set_by, reason) VALUES (?, ?, ?, ?)",
	              "titt", c->digest, c->at, c->actor, c->reason ? c->reason : "") < 0)
		return -1;
	return audit_detail(st, c, "policy.shadow", err);
}

int ng_store_set_shadow(ng_store *st, const char *digest, const char *body, int64_t at,
                        const char *actor, const char *reason, ng_err *err)
{
	struct shadow_change c = {digest, body, actor, reason, at, 0};
	return ng_store_tx(st, set_shadow_tx, &c, err);
}

static int clear_shadow_tx(ng_store *st, void *arg, ng_err *err)
{
	struct shadow_change *c = arg;
	int64_t ended;
	if (end_shadow(st, c->at, &ended, err) < 0)
		return -1;
	c->ended = ended > 0;
	return c->ended ? audit_detail(st, c, "policy.shadow-clear", err) : 0;
}

int ng_store_clear_shadow(ng_store *st, int64_t at, const char *actor, const char *reason,
                          ng_err *err)
{
	struct shadow_change c = {NULL, NULL, actor, reason, at, 0};
	if (ng_store_tx(st, clear_shadow_tx, &c, err) < 0)
		return -1;
	return c.ended;
}

int ng_store_get_shadow(ng_store *st, ng_store_shadow *out, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT s.digest, p.body, s.set_at, s.set_by, s.reason FROM shadow_policy s"
	                      " JOIN policies p ON p.digest = s.digest WHERE s.cleared_at = 0"
	                      " ORDER BY s.id DESC LIMIT 1",
	                      "");
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		memset(out, 0, sizeof *out);
		ng_q_text(q, 0, out->digest, sizeof out->digest);
		ng_strbuf_adds(&out->body, text(q, 1));
		out->set_at = ng_sql_column_int64(q, 2);
		ng_q_text(q, 3, out->set_by, sizeof out->set_by);
		ng_q_text(q, 4, out->reason, sizeof out->reason);
		if (out->body.oom)
			r = ng_fail(err, "out of memory");
	}
	ng_sql_finalize(q);
	return r;
}

static int put_outcome_tx(ng_store *st, void *arg, ng_err *err)
{
	const ng_store_shadow_outcome *o = arg;
	return ng_q_exec(st, err,
	                 "INSERT INTO shadow_outcomes (kind, run_id, node, class, policy, enforced,"
	                 " shadow, rule, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	                 "tttttttti", o->kind, o->run_id ? o->run_id : "", o->node,
	                 o->class_key ? o->class_key : "", o->policy, o->enforced, o->shadow,
	                 o->rule ? o->rule : "", o->at);
}

int ng_store_put_shadow_outcome(ng_store *st, const ng_store_shadow_outcome *o, ng_err *err)
{
	return ng_store_tx(st, put_outcome_tx, (void *)o, err);
}

int ng_store_shadow_outcomes(ng_store *st, int64_t since,
                             int (*fn)(const ng_store_shadow_outcome *o, void *arg), void *arg,
                             ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT kind, run_id, node, class, policy, enforced, shadow, rule, at"
	                      " FROM shadow_outcomes WHERE at >= ? ORDER BY at, id",
	                      "i", since);
	if (!q)
		return -1;
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1) {
		ng_store_shadow_outcome o = {
			.kind = text(q, 0), .run_id = text(q, 1), .node = text(q, 2),
			.class_key = text(q, 3), .policy = text(q, 4), .enforced = text(q, 5),
			.shadow = text(q, 6), .rule = text(q, 7), .at = ng_sql_column_int64(q, 8),
		};
		stop = fn(&o, arg);
	}
	ng_sql_finalize(q);
	return stop ? stop : r < 0 ? -1 : 0;
}

struct promote {
	const char *digest, *body, *actor, *reason, *detail;
	int64_t at;
};

static int promote_tx(ng_store *st, void *arg, ng_err *err)
{
	const struct promote *p = arg;
	int64_t ended;
	if (keep(st, p->digest, p->body, p->at, err) < 0 ||
	    ng_q_exec(st, err,
	              "UPDATE policies SET promoted_by = ?, promoted_at = ?, promote_reason = ?"
	              " WHERE digest = ?",
	              "titt", p->actor, p->at, p->reason, p->digest) < 0 ||
	    ng_q_int64(st, err, &ended,
	               "SELECT count(*) FROM shadow_policy WHERE cleared_at = 0 AND digest = ?", "t",
	               p->digest) < 0 ||
	    (ended > 0 && ng_q_exec(st, err,
	                            "UPDATE shadow_policy SET cleared_at = ? WHERE cleared_at = 0", "i",
	                            p->at) < 0))
		return -1;
	char subject[64];
	snprintf(subject, sizeof subject, "policy:%s", p->digest);
	return ng_store_audit(st, true, p->at, p->actor, "policy.promote", subject, p->detail, err);
}

int ng_store_promote_policy(ng_store *st, const char *digest, const char *body, int64_t at,
                            const char *actor, const char *reason, const char *detail,
                            ng_err *err)
{
	struct promote p = {digest, body, actor, reason, detail, at};
	return ng_store_tx(st, promote_tx, &p, err);
}

/* ---- the reads of a replay ------------------------------------------------------------ */

struct line_copy {
	char stage[16], domain[32], metric[128], unit[24], gate[32], status[24];
	double value, baseline_median, floor;
	int64_t record_id;
};

struct decision_copy {
	int64_t id, at;
	char run_id[80], node[128], node_name[128], class_key[256], software[80], outcome[24],
		policy[32];
	struct line_copy *lines;
	ng_store_replay_line *view;
	size_t n, cap;
};

static int deliver(struct decision_copy *c, int (*fn)(const ng_store_replay_decision *d, void *arg),
                   void *arg)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct line_copy *l = &c->lines[i];
		c->view[i] = (ng_store_replay_line){
			.stage = l->stage, .domain = l->domain, .metric = l->metric, .unit = l->unit,
			.value = l->value, .baseline_median = l->baseline_median, .floor = l->floor,
			.gate_verdict = l->gate, .status = l->status, .record_id = l->record_id,
		};
	}
	ng_store_replay_decision d = {
		.id = c->id, .run_id = c->run_id, .node = c->node, .node_name = c->node_name,
		.class_key = c->class_key, .software = c->software, .outcome = c->outcome,
		.policy = c->policy, .at = c->at, .lines = c->view, .n_lines = c->n,
	};
	return fn(&d, arg);
}

int ng_store_replay_decisions(ng_store *st, int64_t since, const char *class_key,
                              int (*fn)(const ng_store_replay_decision *d, void *arg), void *arg,
                              ng_err *err)
{
	/* One walk: each decision with its run's verdict lines (the same node,
	 * run and time), found through verdicts_by_node. */
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT d.id, d.run_id, d.node, d.node_name, d.class, d.software, d.outcome,"
	                      " d.at, d.policy, v.stage, v.domain, v.metric, v.unit, v.value,"
	                      " v.baseline_median, v.floor, v.gate_verdict, v.status, v.record_id"
	                      " FROM decisions d LEFT JOIN verdicts v ON v.node = d.node AND v.at = d.at"
	                      " AND v.run_id = d.run_id WHERE d.at >= ? AND (? = '' OR d.class = ?)"
	                      " ORDER BY d.at, d.id, v.id",
	                      "itt", since, class_key ? class_key : "", class_key ? class_key : "");
	if (!q)
		return -1;
	struct decision_copy c = {.id = -1};
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1) {
		int64_t id = ng_sql_column_int64(q, 0);
		if (id != c.id) {
			if (c.id >= 0 && (stop = deliver(&c, fn, arg)) != 0)
				break;
			c.id = id;
			c.n = 0;
			ng_q_text(q, 1, c.run_id, sizeof c.run_id);
			ng_q_text(q, 2, c.node, sizeof c.node);
			ng_q_text(q, 3, c.node_name, sizeof c.node_name);
			ng_q_text(q, 4, c.class_key, sizeof c.class_key);
			ng_q_text(q, 5, c.software, sizeof c.software);
			ng_q_text(q, 6, c.outcome, sizeof c.outcome);
			c.at = ng_sql_column_int64(q, 7);
			ng_q_text(q, 8, c.policy, sizeof c.policy);
		}
		if (ng_sql_column_is_null(q, 9))
			continue; /* a decision with no verdict lines */
		if (c.n == c.cap) {
			size_t cap = c.cap ? c.cap * 2 : 16;
			struct line_copy *l = realloc(c.lines, cap * sizeof *l);
			ng_store_replay_line *v = l ? realloc(c.view, cap * sizeof *v) : NULL;
			if (l)
				c.lines = l;
			if (!l || !v) {
				stop = ng_fail(err, "out of memory");
				break;
			}
			c.view = v;
			c.cap = cap;
		}
		struct line_copy *l = &c.lines[c.n++];
		ng_q_text(q, 9, l->stage, sizeof l->stage);
		ng_q_text(q, 10, l->domain, sizeof l->domain);
		ng_q_text(q, 11, l->metric, sizeof l->metric);
		ng_q_text(q, 12, l->unit, sizeof l->unit);
		l->value = ng_q_double(q, 13);
		l->baseline_median = ng_q_double(q, 14);
		l->floor = ng_q_double(q, 15);
		ng_q_text(q, 16, l->gate, sizeof l->gate);
		ng_q_text(q, 17, l->status, sizeof l->status);
		l->record_id = ng_sql_column_int64(q, 18);
	}
	if (!stop && r == 0 && c.id >= 0)
		stop = deliver(&c, fn, arg);
	ng_sql_finalize(q);
	free(c.lines);
	free(c.view);
	if (stop)
		return stop;
	return r < 0 ? -1 : 0;
}

int ng_store_node_after(ng_store *st, const char *node, const char *name, int64_t after,
                        ng_store_after *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	const char *other = name && *name ? name : node;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT outcome, at FROM decisions WHERE node = ? AND at > ?"
	                      " ORDER BY at, id LIMIT 1",
	                      "ti", node, after);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		ng_q_text(q, 0, out->next_outcome, sizeof out->next_outcome);
		out->next_at = ng_sql_column_int64(q, 1);
	}
	ng_sql_finalize(q);
	if (r < 0)
		return -1;
	/* min() of no rows is NULL, which reads as 0: none. */
	if (ng_q_int64(st, err, &out->quarantined_at,
	               "SELECT min(at) FROM decisions WHERE node = ? AND at > ?"
	               " AND outcome = 'quarantined'",
	               "ti", node, after) < 0 ||
	    ng_q_int64(st, err, &out->fault_at,
	               "SELECT min(taken_at) FROM records WHERE (node = ? OR node = ?) AND taken_at > ?"
	               " AND metric = 'gpu.health'"
	               " AND (body LIKE '%\"degraded\"%' OR body LIKE '%\"fatal\"%')",
	               "tti", node, other, after) < 0)
		return -1;
	return 0;
}

int ng_store_gpu_check_counts(ng_store *st, int64_t since,
                              int (*fn)(const char *mode, const char *outcome, int64_t n, void *arg),
                              void *arg, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT mode, outcome, count(*) FROM gpu_check_runs WHERE at >= ?"
	                      " GROUP BY mode, outcome ORDER BY mode, outcome",
	                      "i", since);
	if (!q)
		return -1;
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1)
		stop = fn(text(q, 0), text(q, 1), ng_sql_column_int64(q, 2), arg);
	ng_sql_finalize(q);
	return stop ? stop : r < 0 ? -1 : 0;
}

int ng_store_replay_gpu_checks(ng_store *st, int64_t since,
                               int (*fn)(const ng_store_replay_gpu_check *c, void *arg),
                               void *arg, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT r.id, r.at, r.node, r.mode, r.outcome, r.reason, g.policy, g.body,"
	                      " ns.class, nn.name FROM gpu_check_runs r"
	                      " LEFT JOIN gpu_check_readings g ON g.check_id = r.id"
	                      " LEFT JOIN node_states ns ON ns.node = r.node"
	                      " LEFT JOIN node_names nn ON nn.node = r.node"
	                      " WHERE r.at >= ? ORDER BY r.at, r.id",
	                      "i", since);
	if (!q)
		return -1;
	int r, stop = 0;
	while (!stop && (r = ng_sql_step(q, err)) == 1) {
		ng_store_replay_gpu_check c = {
			.id = ng_sql_column_int64(q, 0), .at = ng_sql_column_int64(q, 1),
			.node = text(q, 2), .mode = text(q, 3), .outcome = text(q, 4), .reason = text(q, 5),
			.policy = ng_sql_column_text(q, 6), .readings = ng_sql_column_text(q, 7),
			.class_key = text(q, 8), .node_name = text(q, 9),
		};
		if (!c.readings)
			c.policy = NULL;
		stop = fn(&c, arg);
	}
	ng_sql_finalize(q);
	return stop ? stop : r < 0 ? -1 : 0;
}

int ng_store_record_body(ng_store *st, int64_t id, ng_strbuf *out, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err, "SELECT body FROM records WHERE id = ?", "i", id);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	ng_strbuf_reset(out);
	if (r == 1) {
		ng_strbuf_adds(out, text(q, 0));
		if (out->oom)
			r = ng_fail(err, "out of memory");
	}
	ng_sql_finalize(q);
	return r;
}

int ng_store_baseline_as_of(ng_store *st, const char *class_key, const char *software,
                            const char *metric, int64_t at, double median, double *cv,
                            char *metric_out, size_t metric_cap, char *unit_out, size_t unit_cap,
                            ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT cv, metric, unit FROM baselines WHERE class = ? AND software = ?"
	                      " AND metric = ? AND built_at <= ? AND median = ?"
	                      " ORDER BY built_at DESC, id DESC LIMIT 1",
	                      "tttid", class_key, software ? software : "", metric, at, median);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		*cv = ng_q_double(q, 0);
		ng_q_text(q, 1, metric_out, metric_cap);
		ng_q_text(q, 2, unit_out, unit_cap);
	}
	ng_sql_finalize(q);
	return r;
}

int ng_store_cohort_as_of(ng_store *st, const char *class_key, const char *software,
                          const char *metric, const char *exclude_node, int64_t before_id,
                          int64_t since, double median, double **drops, size_t *n, ng_err *err)
{
	*drops = NULL;
	*n = 0;
	/* Each node's newest first: the first row of a node is its cohort run. */
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT node, samples FROM records WHERE class = ? AND software = ?"
	                      " AND metric = ? AND node <> ? AND n_samples > 0 AND id < ?"
	                      " AND taken_at >= ? ORDER BY node, taken_at DESC, id DESC",
	                      "ttttii", class_key, software ? software : "", metric, exclude_node,
	                      before_id, since);
	if (!q)
		return -1;
	char last[256] = "";
	size_t cap = 0;
	double *work = NULL;
	size_t work_cap = 0;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		const char *node = text(q, 0);
		if (*n && strcmp(node, last) == 0)
			continue;
		ng_copy(last, sizeof last, node);
		size_t len;
		const void *blob = ng_sql_column_blob(q, 1, &len);
		size_t k = len / sizeof(double);
		if (!k)
			continue;
		if (k > work_cap) {
			double *w = realloc(work, k * sizeof *w);
			if (!w) {
				r = ng_fail(err, "out of memory");
				break;
			}
			work = w;
			work_cap = k;
		}
		/* A blob's bytes may sit anywhere: copied before they are read as doubles. */
		memcpy(work, blob, k * sizeof(double));
		if (*n == cap) {
			size_t c2 = cap ? cap * 2 : 64;
			double *d = realloc(*drops, c2 * sizeof *d);
			if (!d) {
				r = ng_fail(err, "out of memory");
				break;
			}
			*drops = d;
			cap = c2;
		}
		(*drops)[(*n)++] = 1.0 - ng_np_median_inplace(work, k) / median;
	}
	ng_sql_finalize(q);
	free(work);
	if (r < 0) {
		free(*drops);
		*drops = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
