/* Class baselines in the store: kept with what they were built from, pinned
 * by name, expired (with their samples retired) after a planned change. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

#define BASELINE_COLUMNS                                                                  \
	"id, class, software, metric, unit, status, median, cv, node_mad, n_nodes, n_runs, " \
	"n_samples, min_nodes, built_at, window_start, window_end, pinned_name, pinned_at, " \
	"expired_at, expired_reason, family"

static void read_baseline(ng_sql_stmt *q, ng_store_baseline *b)
{
	memset(b, 0, sizeof *b);
	b->id = ng_sql_column_int64(q, 0);
	ng_q_text(q, 1, b->class_key, sizeof b->class_key);
	ng_q_text(q, 2, b->software, sizeof b->software);
	ng_q_text(q, 3, b->metric, sizeof b->metric);
	ng_q_text(q, 4, b->unit, sizeof b->unit);
	ng_q_text(q, 5, b->status, sizeof b->status);
	b->median = ng_q_double(q, 6);
	b->cv = ng_q_double(q, 7);
	b->node_mad = ng_q_double(q, 8);
	b->n_nodes = ng_sql_column_int64(q, 9);
	b->n_runs = ng_sql_column_int64(q, 10);
	b->n_samples = ng_sql_column_int64(q, 11);
	b->min_nodes = ng_sql_column_int64(q, 12);
	b->built_at = ng_sql_column_int64(q, 13);
	b->window_start = ng_sql_column_int64(q, 14);
	b->window_end = ng_sql_column_int64(q, 15);
	ng_q_text(q, 16, b->pinned_name, sizeof b->pinned_name);
	b->pinned_at = ng_sql_column_int64(q, 17);
	b->expired_at = ng_sql_column_int64(q, 18);
	ng_q_text(q, 19, b->expired_reason, sizeof b->expired_reason);
	ng_q_text(q, 20, b->family, sizeof b->family);
}

/* Runs q and reads its first row: 1, 0 when none, -1 on error. */
static int one_baseline(ng_sql_stmt *q, ng_store_baseline *out, ng_err *err)
{
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		read_baseline(q, out);
	ng_sql_finalize(q);
	return r;
}

static void baseline_detail(const ng_store_baseline *b, ng_strbuf *d)
{
	ng_strbuf_reset(d);
	ng_strbuf_adds(d, "{\"class\":");
	ng_strbuf_add_json_string(d, b->class_key);
	ng_strbuf_adds(d, ",\"software\":");
	ng_strbuf_add_json_string(d, b->software);
	ng_strbuf_adds(d, ",\"metric\":");
	ng_strbuf_add_json_string(d, b->metric);
	ng_strbuf_adds(d, ",\"status\":");
	ng_strbuf_add_json_string(d, b->status);
	ng_strbuf_adds(d, ",\"median\":");
	if (b->median == b->median)
		ng_strbuf_add_double(d, b->median);
	else
		ng_strbuf_adds(d, "null");
	ng_strbuf_adds(d, ",\"cv\":");
	if (b->cv == b->cv)
		ng_strbuf_add_double(d, b->cv);
	else
		ng_strbuf_adds(d, "null");
	ng_strbuf_printf(d, ",\"n_nodes\":%" PRId64 "}", b->n_nodes);
}

static int put(ng_store *st, void *arg, ng_err *err)
{
	ng_store_baseline *b = ((void **)arg)[0];
	const char *actor = ((void **)arg)[1];
	if (ng_q_int64(st, err, &b->id,
	               "INSERT INTO baselines (class, software, metric, unit, status, median, cv,"
	               " node_mad, n_nodes, n_runs, n_samples, min_nodes, built_at, window_start,"
	               " window_end, family) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	               " RETURNING id",
	               "tttttdddiiiiiiit", b->class_key, b->software, b->metric, b->unit, b->status,
	               b->median, b->cv, b->node_mad, b->n_nodes, b->n_runs, b->n_samples,
	               b->min_nodes, b->built_at, b->window_start, b->window_end, b->family) != 1)
		return -1;
	ng_state_touch_id(st, "baselines", b->id);
	ng_strbuf d = {0};
	baseline_detail(b, &d);
	char subject[300];
	snprintf(subject, sizeof subject, "baseline:%" PRId64, b->id);
	int rc = ng_store_audit(st, true, b->built_at, actor, "baseline.build", subject, d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

int ng_store_put_baseline(ng_store *st, ng_store_baseline *b, const char *actor, ng_err *err)
{
	void *arg[2] = {b, (void *)actor};
	return ng_store_tx(st, put, arg, err);
}

int ng_store_current_baseline(ng_store *st, const char *class_key, const char *software,
                              const char *metric, ng_store_baseline *out, ng_err *err)
{
	/* A pinned baseline first (the newest pinned), else the newest built
	 * "ok" one: two queries, each an index walk that stops at its first row
	 * (baselines_by_pin), where one would sort every baseline of the key. */
	const char *sw = software ? software : "";
	int r = one_baseline(ng_q(st, err,
	                          "SELECT " BASELINE_COLUMNS " FROM baselines"
	                          " WHERE class = ? AND software = ? AND metric = ? AND pinned_at > 0"
	                          " AND expired_at = 0 ORDER BY pinned_at DESC, built_at DESC, id DESC"
	                          " LIMIT 1",
	                          "ttt", class_key, sw, metric),
	                     out, err);
	if (r != 0)
		return r;
	return one_baseline(ng_q(st, err,
	                         "SELECT " BASELINE_COLUMNS " FROM baselines"
	                         " WHERE class = ? AND software = ? AND metric = ? AND pinned_at = 0"
	                         " AND expired_at = 0 AND status = 'ok'"
	                         " ORDER BY built_at DESC, id DESC LIMIT 1",
	                         "ttt", class_key, sw, metric),
	                    out, err);
}

int ng_store_pinned_baseline(ng_store *st, const char *class_key, const char *software,
                             const char *metric, const char *unit, ng_store_baseline *out,
                             ng_err *err)
{
	return one_baseline(ng_q(st, err,
	                         "SELECT " BASELINE_COLUMNS " FROM baselines"
	                         " WHERE class = ? AND software = ? AND metric = ? AND unit = ?"
	                         " AND pinned_at > 0 AND status = 'ok'"
	                         " ORDER BY pinned_at DESC, built_at DESC, id DESC LIMIT 1",
	                         "tttt", class_key, software ? software : "", metric, unit ? unit : ""),
	                    out, err);
}

int ng_store_get_baseline(ng_store *st, int64_t id, ng_store_baseline *out, ng_err *err)
{
	return one_baseline(
		ng_q(st, err, "SELECT " BASELINE_COLUMNS " FROM baselines WHERE id = ?", "i", id), out,
		err);
}

static int read_baseline_row(ng_sql_stmt *q, void *elem)
{
	read_baseline(q, elem);
	return 0;
}

int ng_store_list_baselines(ng_store *st, const char *class_key, bool current_only,
                            ng_store_baseline **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " BASELINE_COLUMNS " FROM baselines"
	                      " WHERE (CAST(? AS TEXT) IS NULL OR class = ?) AND (? = 0 OR expired_at = 0)"
	                      " ORDER BY class, metric, built_at DESC, id DESC",
	                      "tti", class_key, class_key, (int64_t)current_only);
	return ng_q_rows(q, sizeof **out, read_baseline_row, NULL, (void **)out, n, err);
}

int ng_store_family_baselines(ng_store *st, const char *family, const char *metric,
                              int64_t since, ng_store_baseline **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " BASELINE_COLUMNS " FROM baselines"
	                      " WHERE family = ? AND metric = ? AND status = 'ok' AND expired_at = 0"
	                      " AND (built_at >= ? OR pinned_at > 0)"
	                      " ORDER BY class, software, built_at DESC, id DESC",
	                      "tti", family, metric, since);
	return ng_q_rows(q, sizeof **out, read_baseline_row, NULL, (void **)out, n, err);
}

struct pin {
	int64_t id, at;
	const char *name, *actor;
};

static int pin(ng_store *st, void *arg, ng_err *err)
{
	const struct pin *p = arg;
	ng_store_baseline b;
	int r = ng_store_get_baseline(st, p->id, &b, err);
	if (r <= 0)
		return r < 0 ? -1 : ng_fail_as(err, NG_ERR_STORE, "there is no baseline %" PRId64, p->id);
	if (strcmp(b.status, "ok") != 0)
		return ng_fail_as(err, NG_ERR_STORE, "baseline %" PRId64 " is a refusal (%s): there is nothing to pin",
		               p->id, b.status);
	if (b.expired_at)
		return ng_fail_as(err, NG_ERR_STORE, "baseline %" PRId64 " has expired (%s): build a new one", p->id,
		               b.expired_reason);
	if (ng_q_exec(st, err, "UPDATE baselines SET pinned_name = ?, pinned_at = ? WHERE id = ?",
	              "tii", p->name, p->at, p->id) < 0)
		return -1;
	ng_state_touch_id(st, "baselines", p->id);
	ng_strbuf d = {0};
	ng_strbuf_adds(&d, "{\"name\":");
	ng_strbuf_add_json_string(&d, p->name);
	ng_strbuf_adds(&d, "}");
	char subject[64];
	snprintf(subject, sizeof subject, "baseline:%" PRId64, p->id);
	r = ng_store_audit(st, true, p->at, p->actor, "baseline.pin", subject, d.s, err);
	ng_strbuf_free(&d);
	return r;
}

int ng_store_pin_baseline(ng_store *st, int64_t id, const char *name, int64_t at,
                          const char *actor, ng_err *err)
{
	struct pin p = {id, at, name, actor};
	return ng_store_tx(st, pin, &p, err);
}

struct expire {
	const char *class_key, *metric, *reason, *actor;
	int64_t at, count;
};

/* The rows expire() just wrote, for the audit entry to cover. */
static int touch_expired(ng_store *st, const struct expire *e, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT id FROM baselines WHERE class = ? AND expired_at = ?"
	                      " AND expired_reason = ? AND (CAST(? AS TEXT) IS NULL OR metric = ?)",
	                      "titt" "t", e->class_key, e->at, e->reason, e->metric, e->metric);
	if (!q)
		return -1;
	int r;
	while ((r = ng_sql_step(q, err)) == 1)
		ng_state_touch_id(st, "baselines", ng_sql_column_int64(q, 0));
	ng_sql_finalize(q);
	return r < 0 ? -1 : 0;
}

static int expire(ng_store *st, void *arg, ng_err *err)
{
	struct expire *e = arg;
	if (ng_q_int64(st, err, &e->count,
	               "SELECT count(*) FROM baselines WHERE class = ? AND expired_at = 0"
	               " AND (CAST(? AS TEXT) IS NULL OR metric = ?)",
	               "ttt", e->class_key, e->metric, e->metric) != 1)
		return -1;
	if (ng_q_exec(st, err,
	              "UPDATE baselines SET expired_at = ?, expired_reason = ? WHERE class = ?"
	              " AND expired_at = 0 AND (CAST(? AS TEXT) IS NULL OR metric = ?)",
	              "itttt", e->at, e->reason, e->class_key, e->metric, e->metric) < 0)
		return -1;
	if (touch_expired(st, e, err) < 0)
		return -1;
	/* A retirement covers the whole class: after a software or firmware
	 * change no metric's old samples describe the class any more. */
	if (!e->metric && ng_q_exec(st, err,
	                            "INSERT INTO retirements (class, before, reason, by_whom)"
	                            " VALUES (?, ?, ?, ?)",
	                            "titt", e->class_key, e->at, e->reason, e->actor) < 0)
		return -1;
	ng_strbuf d = {0};
	ng_strbuf_adds(&d, "{\"metric\":");
	if (e->metric)
		ng_strbuf_add_json_string(&d, e->metric);
	else
		ng_strbuf_adds(&d, "null");
	ng_strbuf_adds(&d, ",\"reason\":");
	ng_strbuf_add_json_string(&d, e->reason);
	ng_strbuf_printf(&d, ",\"expired\":%" PRId64 ",\"samples_retired\":%s}", e->count,
	                 e->metric ? "false" : "true");
	char subject[300];
	snprintf(subject, sizeof subject, "class:%s", e->class_key);
	int rc = ng_store_audit(st, true, e->at, e->actor, "baseline.expire", subject, d.s, err);
	ng_strbuf_free(&d);
	return rc;
}

int64_t ng_store_expire_baselines(ng_store *st, const char *class_key, const char *metric,
                                  const char *reason, int64_t at, const char *actor, ng_err *err)
{
	struct expire e = {class_key, metric, reason, actor, at, 0};
	return ng_store_tx(st, expire, &e, err) < 0 ? -1 : e.count;
}
