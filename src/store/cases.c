/* Quarantine cases, overrides and fleet-regression events: every change to
 * them is written with its audit entry in one transaction. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

/* ---- quarantine cases ------------------------------------------------------------- */

#define CASE_COLUMNS                                                                   \
	"id, node, class, software, domain, metric, opened_at, release_condition, passes, " \
	"retries, closed_at, closed_by, close_reason, evidence, "                          \
	"COALESCE(NULLIF(node_name, ''), (SELECT n.name FROM node_names n WHERE n.node = cases.node), '')"

void ng_store_case_free(ng_store_case *c)
{
	if (c) {
		free(c->evidence);
		c->evidence = NULL;
	}
}

static int read_case(ng_sql_stmt *q, ng_store_case *c)
{
	memset(c, 0, sizeof *c);
	c->id = ng_sql_column_int64(q, 0);
	ng_q_text(q, 1, c->node, sizeof c->node);
	ng_q_text(q, 2, c->class_key, sizeof c->class_key);
	ng_q_text(q, 3, c->software, sizeof c->software);
	ng_q_text(q, 4, c->domain, sizeof c->domain);
	ng_q_text(q, 5, c->metric, sizeof c->metric);
	c->opened_at = ng_sql_column_int64(q, 6);
	ng_q_text(q, 7, c->release_condition, sizeof c->release_condition);
	c->passes = ng_sql_column_int64(q, 8);
	c->retries = ng_sql_column_int64(q, 9);
	c->closed_at = ng_sql_column_int64(q, 10);
	ng_q_text(q, 11, c->closed_by, sizeof c->closed_by);
	ng_q_text(q, 12, c->close_reason, sizeof c->close_reason);
	c->evidence = ng_q_strdup(q, 13);
	ng_q_text(q, 14, c->node_name, sizeof c->node_name);
	return c->evidence ? 0 : -1;
}

static int one_case(ng_sql_stmt *q, ng_store_case *out, ng_err *err)
{
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1 && read_case(q, out) < 0)
		r = ng_fail(err, "out of memory");
	ng_sql_finalize(q);
	return r;
}

static void subject_of(char *out, size_t cap, const char *kind, int64_t id)
{
	snprintf(out, cap, "%s:%" PRId64, kind, id);
}

static int open_case(ng_store *st, void *arg, ng_err *err)
{
	ng_store_case *c = ((void **)arg)[0];
	const char *actor = ((void **)arg)[1];
	ng_store_case existing;
	int r = ng_store_open_case_of(st, c->node, &existing, err);
	if (r < 0)
		return -1;
	if (r == 1) {
		/* One open case per node: a second failure adds to it, never hides it. */
		ng_store_case_free(&existing);
		return ng_fail(err, "node %s already has open case %" PRId64, c->node, existing.id);
	}
	if (ng_q_int64(st, err, &c->id,
	               "INSERT INTO cases (node, class, software, domain, metric, opened_at,"
	               " release_condition, evidence, node_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
	               " RETURNING id",
	               "tttttittt", c->node, c->class_key, c->software, c->domain, c->metric,
	               c->opened_at, c->release_condition, c->evidence ? c->evidence : "{}",
	               c->node_name) != 1 ||
	    ng_store_put_node_name(st, c->node, c->node_name, c->opened_at, err) < 0)
		return -1;
	ng_state_touch_id(st, "cases", c->id);
	if (st->policy[0] &&
	    (ng_store_keep_policy(st, c->opened_at, err) < 0 ||
	     ng_q_exec(st, err, "INSERT INTO case_policies (case_id, policy) VALUES (?, ?)", "it",
	              c->id, st->policy) < 0))
		return -1;
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", c->node);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"case\":%" PRId64 ",\"node_name\":", c->id);
	ng_strbuf_add_json_string(&d, c->node_name);
	ng_strbuf_adds(&d, ",\"domain\":");
	ng_strbuf_add_json_string(&d, c->domain);
	ng_strbuf_adds(&d, ",\"metric\":");
	ng_strbuf_add_json_string(&d, c->metric);
	ng_strbuf_adds(&d, ",\"release_condition\":");
	ng_strbuf_add_json_string(&d, c->release_condition);
	ng_strbuf_adds(&d, ",\"evidence\":");
	ng_strbuf_adds(&d, c->evidence ? c->evidence : "{}");
	ng_strbuf_adds(&d, "}");
	r = ng_store_audit(st, true, c->opened_at, actor, "quarantine.open", subject, d.s, err);
	ng_strbuf_free(&d);
	return r;
}

int ng_store_open_case(ng_store *st, ng_store_case *c, const char *actor, ng_err *err)
{
	void *arg[2] = {c, (void *)actor};
	return ng_store_tx(st, open_case, arg, err);
}

int ng_store_open_case_of(ng_store *st, const char *node, ng_store_case *out, ng_err *err)
{
	return one_case(ng_q(st, err,
	                     "SELECT " CASE_COLUMNS " FROM cases WHERE node = ? AND closed_at = 0"
	                     " ORDER BY id DESC LIMIT 1",
	                     "t", node),
	                out, err);
}

int ng_store_get_case(ng_store *st, int64_t id, ng_store_case *out, ng_err *err)
{
	return one_case(ng_q(st, err, "SELECT " CASE_COLUMNS " FROM cases WHERE id = ?", "i", id),
	                out, err);
}

static int read_case_row(ng_sql_stmt *q, void *elem) { return read_case(q, elem); }
static void free_case_row(void *elem) { ng_store_case_free(elem); }

int ng_store_list_cases(ng_store *st, bool all, ng_store_case **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " CASE_COLUMNS " FROM cases WHERE ? = 1 OR closed_at = 0"
	                      " ORDER BY opened_at DESC, id DESC",
	                      "i", (int64_t)all);
	return ng_q_rows(q, sizeof **out, read_case_row, free_case_row, (void **)out, n, err);
}

struct retry {
	int64_t id, at;
	bool passed;
	const char *run_id;
};

/* Every entry about a case is filed under its node, so `audit show
 * --subject node:X` tells the node's whole story. */
static int open_case_subject(ng_store *st, int64_t id, char *out, size_t cap, ng_err *err)
{
	ng_store_case c;
	int r = ng_store_get_case(st, id, &c, err);
	if (r <= 0)
		return r < 0 ? -1 : ng_fail(err, "there is no case %" PRId64, id);
	snprintf(out, cap, "node:%s", c.node);
	bool closed = c.closed_at != 0;
	ng_store_case_free(&c);
	return closed ? ng_fail(err, "case %" PRId64 " is closed: a later run counts for nothing", id)
	              : 0;
}

static int retry(ng_store *st, void *arg, ng_err *err)
{
	const struct retry *t = arg;
	char subject[160];
	if (open_case_subject(st, t->id, subject, sizeof subject, err) < 0)
		return -1;
	if (ng_q_exec(st, err,
	              "UPDATE cases SET retries = retries + 1, passes = passes + ? WHERE id = ?"
	              " AND closed_at = 0",
	              "ii", (int64_t)t->passed, t->id) < 0)
		return -1;
	ng_state_touch_id(st, "cases", t->id);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"case\":%" PRId64 ",\"passed\":%s,\"run\":", t->id,
	                 t->passed ? "true" : "false");
	ng_strbuf_add_json_string(&d, t->run_id ? t->run_id : "");
	ng_strbuf_adds(&d, "}");
	int rc = ng_store_audit(st, true, t->at, "nodegate", "quarantine.retry", subject, d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

int ng_store_case_retry(ng_store *st, int64_t id, bool passed, const char *run_id, int64_t at,
                        ng_err *err)
{
	struct retry t = {id, at, passed, run_id};
	return ng_store_tx(st, retry, &t, err);
}

struct close_case {
	int64_t id, at;
	const char *by, *reason;
};

static int close_case(ng_store *st, void *arg, ng_err *err)
{
	const struct close_case *c = arg;
	ng_store_case cur;
	int r = ng_store_get_case(st, c->id, &cur, err);
	if (r <= 0)
		return r < 0 ? -1 : ng_fail(err, "there is no case %" PRId64, c->id);
	bool was_closed = cur.closed_at != 0;
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", cur.node);
	ng_store_case_free(&cur);
	if (was_closed)
		return ng_fail(err, "case %" PRId64 " is already closed", c->id);
	if (ng_q_exec(st, err,
	              "UPDATE cases SET closed_at = ?, closed_by = ?, close_reason = ? WHERE id = ?",
	              "itti", c->at, c->by, c->reason, c->id) < 0)
		return -1;
	/* Released is not admitted: the node is screened again before use. */
	if (ng_q_exec(st, err,
	              "UPDATE node_states SET outcome = 'released', updated_at = ? WHERE node = ?",
	              "it", c->at, subject + 5) < 0)
		return -1;
	ng_state_touch_id(st, "cases", c->id);
	ng_state_touch(st, "node_states", subject + 5);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"case\":%" PRId64 ",\"reason\":", c->id);
	ng_strbuf_add_json_string(&d, c->reason);
	ng_strbuf_adds(&d, "}");
	r = ng_store_audit(st, true, c->at, c->by, "quarantine.release", subject, d.s, err);
	ng_strbuf_free(&d);
	return r;
}

int ng_store_close_case(ng_store *st, int64_t id, int64_t at, const char *by, const char *reason,
                        ng_err *err)
{
	struct close_case c = {id, at, by, reason};
	return ng_store_tx(st, close_case, &c, err);
}

int64_t ng_store_count_metric_cases(ng_store *st, const char *class_key, const char *software,
                                    const char *metric, int64_t from, int64_t until, ng_err *err)
{
	int64_t n = 0;
	return ng_q_int64(st, err, &n,
	                  "SELECT count(DISTINCT node) FROM cases WHERE class = ? AND software = ?"
	                  " AND metric = ? AND opened_at >= ? AND opened_at < ?",
	                  "tttii", class_key, software, metric, from, until) < 0
	               ? -1
	               : n;
}

int64_t ng_store_count_recent_cases(ng_store *st, const char *class_key, int64_t since,
                                    ng_err *err)
{
	int64_t n = 0;
	return ng_q_int64(st, err, &n,
	                  "SELECT count(DISTINCT node) FROM cases WHERE class = ? AND opened_at >= ?",
	                  "ti", class_key, since) < 0
	               ? -1
	               : n;
}

/* ---- overrides -------------------------------------------------------------------- */

static int put_override(ng_store *st, void *arg, ng_err *err)
{
	ng_store_override *o = arg;
	if (ng_q_int64(st, err, &o->id,
	               "INSERT INTO overrides (node, reason, by_whom, created_at, expires_at)"
	               " VALUES (?, ?, ?, ?, ?) RETURNING id",
	               "tttii", o->node, o->reason, o->by, o->created_at, o->expires_at) != 1)
		return -1;
	ng_state_touch_id(st, "overrides", o->id);
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", o->node);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"override\":%" PRId64 ",\"expires_at\":%" PRId64 ",\"reason\":",
	                 o->id, o->expires_at);
	ng_strbuf_add_json_string(&d, o->reason);
	ng_strbuf_adds(&d, "}");
	int rc = ng_store_audit(st, true, o->created_at, o->by, "override.grant", subject, d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

int ng_store_put_override(ng_store *st, ng_store_override *o, ng_err *err)
{
	return ng_store_tx(st, put_override, o, err);
}

int ng_store_active_override(ng_store *st, const char *node, int64_t at, ng_store_override *out,
                             ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT id, node, reason, by_whom, created_at, expires_at, revoked_at"
	                      " FROM overrides WHERE node = ? AND revoked_at = 0 AND created_at <= ?"
	                      " AND expires_at > ? ORDER BY created_at DESC, id DESC LIMIT 1",
	                      "tii", node, at, at);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		memset(out, 0, sizeof *out);
		out->id = ng_sql_column_int64(q, 0);
		ng_q_text(q, 1, out->node, sizeof out->node);
		ng_q_text(q, 2, out->reason, sizeof out->reason);
		ng_q_text(q, 3, out->by, sizeof out->by);
		out->created_at = ng_sql_column_int64(q, 4);
		out->expires_at = ng_sql_column_int64(q, 5);
		out->revoked_at = ng_sql_column_int64(q, 6);
	}
	ng_sql_finalize(q);
	return r;
}

/* ---- fleet-regression events ------------------------------------------------------ */

#define EVENT_COLUMNS \
	"id, class, software, opened_at, cleared_at, cleared_by, clear_reason, nodes, detail," \
	" metric, clean_runs, kind"

void ng_store_fleet_event_free(ng_store_fleet_event *e)
{
	if (e) {
		free(e->nodes);
		free(e->detail);
		e->nodes = e->detail = NULL;
	}
}

static int read_event(ng_sql_stmt *q, ng_store_fleet_event *e)
{
	memset(e, 0, sizeof *e);
	e->id = ng_sql_column_int64(q, 0);
	ng_q_text(q, 1, e->class_key, sizeof e->class_key);
	ng_q_text(q, 2, e->software, sizeof e->software);
	e->opened_at = ng_sql_column_int64(q, 3);
	e->cleared_at = ng_sql_column_int64(q, 4);
	ng_q_text(q, 5, e->cleared_by, sizeof e->cleared_by);
	ng_q_text(q, 6, e->clear_reason, sizeof e->clear_reason);
	e->nodes = ng_q_strdup(q, 7);
	e->detail = ng_q_strdup(q, 8);
	ng_q_text(q, 9, e->metric, sizeof e->metric);
	e->clean_runs = ng_sql_column_int64(q, 10);
	ng_q_text(q, 11, e->kind, sizeof e->kind);
	if (e->nodes && e->detail)
		return 0;
	ng_store_fleet_event_free(e);
	return -1;
}

static int open_event(ng_store *st, void *arg, ng_err *err)
{
	ng_store_fleet_event *e = ((void **)arg)[0];
	const char *actor = ((void **)arg)[1];
	int64_t cur = 0;
	if (!e->kind[0])
		snprintf(e->kind, sizeof e->kind, "breaker");
	/* A drift is told about beside the breaker's event of the same metric,
	 * never folded into it (nor it into a drift: a drift declines nothing);
	 * the breaker's and a partial regression's are one. */
	bool drift = strcmp(e->kind, "drift") == 0;
	int r = ng_q_int64(st, err, &cur,
	                   "SELECT id FROM fleet_events WHERE class = ? AND software = ? AND metric = ?"
	                   " AND cleared_at = 0 AND (kind = 'drift') = (? = 1) ORDER BY id DESC LIMIT 1",
	                   "ttti", e->class_key, e->software, e->metric, (int64_t)drift);
	if (r < 0)
		return -1;
	if (r == 1) {
		/* Already tripped: the open event stands; say so rather than stack. */
		e->id = cur;
		return 0;
	}
	if (ng_q_int64(st, err, &e->id,
	               "INSERT INTO fleet_events (class, software, opened_at, nodes, detail, metric, kind)"
	               " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
	               "ttitttt", e->class_key, e->software, e->opened_at, e->nodes ? e->nodes : "[]",
	               e->detail ? e->detail : "{}", e->metric, e->kind) != 1)
		return -1;
	char subject[300];
	snprintf(subject, sizeof subject, "class:%s", e->class_key);
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"event\":%" PRId64 ",\"software\":", e->id);
	ng_strbuf_add_json_string(&d, e->software);
	ng_strbuf_adds(&d, ",\"metric\":");
	ng_strbuf_add_json_string(&d, e->metric);
	ng_strbuf_adds(&d, ",\"kind\":");
	ng_strbuf_add_json_string(&d, e->kind);
	ng_strbuf_adds(&d, ",\"nodes\":");
	ng_strbuf_adds(&d, e->nodes ? e->nodes : "[]");
	ng_strbuf_adds(&d, ",\"detail\":");
	ng_strbuf_adds(&d, e->detail ? e->detail : "{}");
	ng_strbuf_adds(&d, "}");
	r = ng_store_audit(st, true, e->opened_at, actor, "fleet-regression.open", subject, d.s, err);
	ng_strbuf_free(&d);
	return r;
}

int ng_store_open_fleet_event(ng_store *st, ng_store_fleet_event *e, const char *actor,
                              ng_err *err)
{
	void *arg[2] = {e, (void *)actor};
	return ng_store_tx(st, open_event, arg, err);
}

int ng_store_fleet_event_of(ng_store *st, const char *class_key, ng_store_fleet_event *out,
                            ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " EVENT_COLUMNS " FROM fleet_events WHERE class = ?"
	                      " AND cleared_at = 0 ORDER BY id DESC LIMIT 1",
	                      "t", class_key);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1 && read_event(q, out) < 0)
		r = ng_fail(err, "out of memory");
	ng_sql_finalize(q);
	return r;
}

static int read_event_row(ng_sql_stmt *q, void *elem) { return read_event(q, elem); }
static void free_event_row(void *elem) { ng_store_fleet_event_free(elem); }

int ng_store_fleet_events_of_class(ng_store *st, const char *class_key,
                                   ng_store_fleet_event **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " EVENT_COLUMNS " FROM fleet_events WHERE class = ?"
	                      " AND cleared_at = 0 ORDER BY id DESC",
	                      "t", class_key);
	return ng_q_rows(q, sizeof **out, read_event_row, free_event_row, (void **)out, n, err);
}

struct event_update {
	int64_t id, clean;
	const char *nodes;
};

static int update_event(ng_store *st, void *arg, ng_err *err)
{
	const struct event_update *u = arg;
	if (u->nodes)
		return ng_q_exec(st, err,
		                 "UPDATE fleet_events SET clean_runs = ?, nodes = ? WHERE id = ?"
		                 " AND cleared_at = 0",
		                 "iti", u->clean, u->nodes, u->id) < 0
		               ? -1
		               : 0;
	return ng_q_exec(st, err, "UPDATE fleet_events SET clean_runs = ? WHERE id = ? AND cleared_at = 0",
	                 "ii", u->clean, u->id) < 0
	               ? -1
	               : 0;
}

int ng_store_fleet_event_update(ng_store *st, int64_t id, int64_t clean_runs, const char *nodes,
                                ng_err *err)
{
	struct event_update u = {id, clean_runs, nodes};
	return ng_store_tx(st, update_event, &u, err);
}

struct event_detail {
	int64_t id;
	const char *detail;
};

static int set_detail(ng_store *st, void *arg, ng_err *err)
{
	const struct event_detail *u = arg;
	return ng_q_exec(st, err, "UPDATE fleet_events SET detail = ? WHERE id = ? AND cleared_at = 0",
	                 "ti", u->detail, u->id) < 0
	               ? -1
	               : 0;
}

int ng_store_fleet_event_set_detail(ng_store *st, int64_t id, const char *detail, ng_err *err)
{
	struct event_detail u = {id, detail};
	return ng_store_tx(st, set_detail, &u, err);
}

int ng_store_list_fleet_events(ng_store *st, bool all, ng_store_fleet_event **out, size_t *n,
                               ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " EVENT_COLUMNS " FROM fleet_events WHERE ? = 1 OR cleared_at = 0"
	                      " ORDER BY opened_at DESC, id DESC",
	                      "i", (int64_t)all);
	return ng_q_rows(q, sizeof **out, read_event_row, free_event_row, (void **)out, n, err);
}

struct clear {
	int64_t id, at;
	const char *by, *reason;
};

static int clear_event(ng_store *st, void *arg, ng_err *err)
{
	const struct clear *c = arg;
	int64_t open = 0;
	int r = ng_q_int64(st, err, &open,
	                   "SELECT count(*) FROM fleet_events WHERE id = ? AND cleared_at = 0", "i",
	                   c->id);
	if (r < 0)
		return -1;
	if (!open)
		return ng_fail(err, "there is no open fleet-regression event %" PRId64, c->id);
	if (ng_q_exec(st, err,
	              "UPDATE fleet_events SET cleared_at = ?, cleared_by = ?, clear_reason = ?"
	              " WHERE id = ?",
	              "itti", c->at, c->by, c->reason, c->id) < 0)
		return -1;
	char subject[64];
	subject_of(subject, sizeof subject, "fleet-event", c->id);
	ng_strbuf d = {0};
	ng_strbuf_adds(&d, "{\"reason\":");
	ng_strbuf_add_json_string(&d, c->reason);
	ng_strbuf_adds(&d, "}");
	r = ng_store_audit(st, true, c->at, c->by, "fleet-regression.clear", subject, d.s, err);
	ng_strbuf_free(&d);
	return r;
}

int ng_store_clear_fleet_event(ng_store *st, int64_t id, int64_t at, const char *by,
                               const char *reason, ng_err *err)
{
	struct clear c = {id, at, by, reason};
	return ng_store_tx(st, clear_event, &c, err);
}
