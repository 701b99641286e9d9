/* Each node's GPUs between checks: the inventory its checks saw, the
 * kernel-log marks of what they judged, and every run's outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

static int read_gpu(ng_sql_stmt *q, void *elem)
{
	ng_store_gpu *g = elem;
	memset(g, 0, sizeof *g);
	ng_q_text(q, 0, g->uuid, sizeof g->uuid);
	ng_q_text(q, 1, g->bus, sizeof g->bus);
	g->minor = ng_sql_column_int64(q, 2);
	g->first_seen = ng_sql_column_int64(q, 3);
	g->last_seen = ng_sql_column_int64(q, 4);
	g->unresponsive = ng_sql_column_int64(q, 5);
	g->hw_thermal = ng_sql_column_int64(q, 6);
	g->index = ng_sql_column_int64(q, 7);
	g->checked_at = ng_sql_column_int64(q, 8);
	ng_q_text(q, 9, g->mode, sizeof g->mode);
	ng_q_text(q, 10, g->severity, sizeof g->severity);
	ng_q_text(q, 11, g->signals, sizeof g->signals);
	return 0;
}

#define GPU_COLUMNS                                                                        \
	"uuid, bus, minor, first_seen, last_seen, unresponsive, hw_thermal, gpu_index, checked_at," \
	" mode, severity, signals"

int ng_store_gpus_of(ng_store *st, const char *node, ng_store_gpu **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT " GPU_COLUMNS " FROM gpu_inventory WHERE node = ? ORDER BY bus, uuid",
	                      "t", node);
	if (!q)
		return -1;
	return ng_q_rows(q, sizeof **out, read_gpu, NULL, (void **)out, n, err);
}

struct gpu_and_node {
	ng_store_gpu g;
	char node[256];
};

static int read_gpu_and_node(ng_sql_stmt *q, void *elem)
{
	struct gpu_and_node *e = elem;
	read_gpu(q, &e->g);
	ng_q_text(q, 12, e->node, sizeof e->node);
	return 0;
}

int ng_store_all_gpus(ng_store *st, const char *node, ng_store_gpu **out, char (**nodes)[256],
                      size_t *n, ng_err *err)
{
	*out = NULL;
	*nodes = NULL;
	ng_sql_stmt *q = node ? ng_q(st, err,
	                             "SELECT " GPU_COLUMNS ", node FROM gpu_inventory WHERE node = ?"
	                             " ORDER BY node, gpu_index, bus",
	                             "t", node)
	                      : ng_q(st, err,
	                             "SELECT " GPU_COLUMNS ", node FROM gpu_inventory"
	                             " ORDER BY node, gpu_index, bus",
	                             "");
	if (!q)
		return -1;
	struct gpu_and_node *rows = NULL;
	if (ng_q_rows(q, sizeof *rows, read_gpu_and_node, NULL, (void **)&rows, n, err) < 0)
		return -1;
	*out = calloc(*n ? *n : 1, sizeof **out);
	*nodes = calloc(*n ? *n : 1, sizeof **nodes);
	if (!*out || !*nodes) {
		free(rows);
		free(*out);
		free(*nodes);
		*out = NULL;
		*nodes = NULL;
		return ng_fail_as(err, NG_ERR_STORE, "out of memory");
	}
	for (size_t i = 0; i < *n; i++) {
		(*out)[i] = rows[i].g;
		memcpy((*nodes)[i], rows[i].node, sizeof rows[i].node);
	}
	free(rows);
	return 0;
}

static int read_run(ng_sql_stmt *q, void *elem)
{
	ng_store_gpu_check_run *r = elem;
	memset(r, 0, sizeof *r);
	ng_q_text(q, 0, r->node, sizeof r->node);
	ng_q_text(q, 1, r->mode, sizeof r->mode);
	ng_q_text(q, 2, r->outcome, sizeof r->outcome);
	r->at = ng_sql_column_int64(q, 3);
	return 0;
}

int ng_store_last_gpu_check_runs(ng_store *st, const char *node, ng_store_gpu_check_run **out,
                                 size_t *n, ng_err *err)
{
	/* The newest run of each node and mode (the highest id among the newest). */
	static const char *const sql_all =
		"SELECT r.node, r.mode, r.outcome, r.at FROM gpu_check_runs r JOIN"
		" (SELECT MAX(id) AS id FROM gpu_check_runs GROUP BY node, mode) l ON r.id = l.id"
		" ORDER BY r.node, r.mode";
	static const char *const sql_one =
		"SELECT r.node, r.mode, r.outcome, r.at FROM gpu_check_runs r JOIN"
		" (SELECT MAX(id) AS id FROM gpu_check_runs WHERE node = ? GROUP BY mode) l ON r.id = l.id"
		" ORDER BY r.mode";
	ng_sql_stmt *q = node ? ng_q(st, err, sql_one, "t", node) : ng_q(st, err, sql_all, "");
	if (!q)
		return -1;
	return ng_q_rows(q, sizeof **out, read_run, NULL, (void **)out, n, err);
}

struct put_gpus {
	const char *node;
	const ng_store_gpu *g;
	size_t n;
	const char *const *gone;
	size_t n_gone;
};

static int put_gpus(ng_store *st, void *arg, ng_err *err)
{
	const struct put_gpus *a = arg;
	for (size_t i = 0; i < a->n_gone; i++)
		if (ng_q_exec(st, err, "DELETE FROM gpu_inventory WHERE node = ? AND uuid = ?", "tt", a->node,
		              a->gone[i]) < 0)
			return -1;
	for (size_t i = 0; i < a->n; i++) {
		const ng_store_gpu *g = &a->g[i];
		/* A GPU not listed (missing now) keeps where and when it was last
		 * seen; only what the check found is recorded. */
		int rc = g->listed
		             ? ng_q_exec(st, err,
		                         "INSERT INTO gpu_inventory (node, uuid, bus, minor, first_seen, last_seen,"
		                         " unresponsive, hw_thermal, gpu_index, checked_at, mode, severity, signals)"
		                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		                         " ON CONFLICT (node, uuid) DO UPDATE SET bus = excluded.bus,"
		                         " minor = excluded.minor, last_seen = excluded.last_seen,"
		                         " unresponsive = excluded.unresponsive, hw_thermal = excluded.hw_thermal,"
		                         " gpu_index = excluded.gpu_index, checked_at = excluded.checked_at,"
		                         " mode = excluded.mode, severity = excluded.severity,"
		                         " signals = excluded.signals",
		                         "tttiiiiiiittt", a->node, g->uuid, g->bus, g->minor, g->first_seen,
		                         g->last_seen, g->unresponsive, g->hw_thermal, g->index, g->checked_at,
		                         g->mode, g->severity, g->signals)
		             : ng_q_exec(st, err,
		                         "UPDATE gpu_inventory SET checked_at = ?, mode = ?, severity = ?,"
		                         " signals = ? WHERE node = ? AND uuid = ?",
		                         "ittttt", g->checked_at, g->mode, g->severity, g->signals, a->node,
		                         g->uuid);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int ng_store_put_gpus(ng_store *st, const char *node, const ng_store_gpu *g, size_t n,
                      const char *const *gone, size_t n_gone, ng_err *err)
{
	struct put_gpus a = {node, g, n, gone, n_gone};
	return n || n_gone ? ng_store_tx(st, put_gpus, &a, err) : 0;
}

static int read_mark(ng_sql_stmt *q, void *elem)
{
	ng_store_kmsg_mark *m = elem;
	memset(m, 0, sizeof *m);
	ng_q_text(q, 0, m->bus, sizeof m->bus);
	ng_q_text(q, 1, m->boot_id, sizeof m->boot_id);
	m->at_usec = ng_sql_column_int64(q, 2);
	return 0;
}

int ng_store_kmsg_marks(ng_store *st, const char *node, ng_store_kmsg_mark **out, size_t *n,
                        ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err, "SELECT bus, boot_id, at_usec FROM kmsg_marks WHERE node = ?"
	                               " ORDER BY bus",
	                      "t", node);
	if (!q)
		return -1;
	return ng_q_rows(q, sizeof **out, read_mark, NULL, (void **)out, n, err);
}

struct put_marks {
	const char *node;
	const ng_store_kmsg_mark *m;
	size_t n;
	int64_t now;
};

static int put_marks(ng_store *st, void *arg, ng_err *err)
{
	const struct put_marks *a = arg;
	for (size_t i = 0; i < a->n; i++)
		if (ng_q_exec(st, err,
		              "INSERT INTO kmsg_marks (node, bus, boot_id, at_usec, updated_at)"
		              " VALUES (?, ?, ?, ?, ?) ON CONFLICT (node, bus) DO UPDATE SET"
		              " boot_id = excluded.boot_id, at_usec = excluded.at_usec,"
		              " updated_at = excluded.updated_at",
		              "tttii", a->node, a->m[i].bus, a->m[i].boot_id, a->m[i].at_usec, a->now) < 0)
			return -1;
	return 0;
}

int ng_store_put_kmsg_marks(ng_store *st, const char *node, const ng_store_kmsg_mark *m, size_t n,
                            int64_t now, ng_err *err)
{
	struct put_marks a = {node, m, n, now};
	return n ? ng_store_tx(st, put_marks, &a, err) : 0;
}

int ng_store_put_gpu_check_run(ng_store *st, const char *node, const char *mode,
                               const char *outcome, int64_t at, const char *reason, ng_err *err)
{
	return ng_q_exec(st, err,
	                 "INSERT INTO gpu_check_runs (node, mode, outcome, at, reason) VALUES (?, ?, ?, ?, ?)",
	                 "tttit", node, mode, outcome, at, reason ? reason : "");
}

struct put_run {
	const char *node, *mode, *outcome, *reason, *policy, *policy_text, *readings;
	int64_t at;
};

static int put_run(ng_store *st, void *arg, ng_err *err)
{
	const struct put_run *a = arg;
	int64_t id;
	if (ng_q_int64(st, err, &id,
	               "INSERT INTO gpu_check_runs (node, mode, outcome, at, reason)"
	               " VALUES (?, ?, ?, ?, ?) RETURNING id",
	               "tttit", a->node, a->mode, a->outcome, a->at, a->reason ? a->reason : "") != 1)
		return -1;
	if (!a->readings)
		return 0;
	if (a->policy_text && ng_q_exec(st, err,
	                                "INSERT INTO policies (digest, body, first_seen) VALUES (?, ?, ?)"
	                                " ON CONFLICT (digest) DO NOTHING",
	                                "tti", a->policy, a->policy_text, a->at) < 0)
		return -1;
	return ng_q_exec(st, err,
	                 "INSERT INTO gpu_check_readings (check_id, policy, body) VALUES (?, ?, ?)",
	                 "itt", id, a->policy ? a->policy : "", a->readings);
}

int ng_store_put_gpu_check_run_readings(ng_store *st, const char *node, const char *mode,
                                        const char *outcome, int64_t at, const char *reason,
                                        const char *policy, const char *policy_text,
                                        const char *readings, ng_err *err)
{
	struct put_run a = {node, mode, outcome, reason, policy, policy_text, readings, at};
	return ng_store_tx(st, put_run, &a, err);
}

struct forget_gpu {
	const char *node, *uuid, *actor, *detail;
	int64_t at;
};

static int forget_gpu(ng_store *st, void *arg, ng_err *err)
{
	const struct forget_gpu *a = arg;
	int64_t n = 0;
	if (ng_q_int64(st, err, &n, "SELECT count(*) FROM gpu_inventory WHERE node = ? AND uuid = ?",
	               "tt", a->node, a->uuid) < 0)
		return -1;
	if (n == 0)
		return ng_fail_as(err, NG_ERR_USAGE, "node %s has no GPU %s in the inventory (it was "
		                  "forgotten already?)", a->node, a->uuid);
	if (ng_q_exec(st, err, "DELETE FROM gpu_inventory WHERE node = ? AND uuid = ?", "tt", a->node,
	              a->uuid) < 0)
		return -1;
	char subject[400];
	snprintf(subject, sizeof subject, "gpu:%s/%s", a->node, a->uuid);
	return ng_store_audit(st, true, a->at, a->actor, "gpu.forget", subject, a->detail, err);
}

int ng_store_forget_gpu(ng_store *st, const char *node, const char *uuid, int64_t at,
                        const char *actor, const char *detail, ng_err *err)
{
	struct forget_gpu a = {node, uuid, actor, detail, at};
	return ng_store_tx(st, forget_gpu, &a, err);
}
