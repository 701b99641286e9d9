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
	return 0;
}

int ng_store_gpus_of(ng_store *st, const char *node, ng_store_gpu **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT uuid, bus, minor, first_seen, last_seen, unresponsive, hw_thermal"
	                      " FROM gpu_inventory WHERE node = ? ORDER BY bus, uuid",
	                      "t", node);
	if (!q)
		return -1;
	return ng_q_rows(q, sizeof **out, read_gpu, NULL, (void **)out, n, err);
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
		if (ng_q_exec(st, err,
		              "INSERT INTO gpu_inventory (node, uuid, bus, minor, first_seen, last_seen,"
		              " unresponsive, hw_thermal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
		              " ON CONFLICT (node, uuid) DO UPDATE SET bus = excluded.bus,"
		              " minor = excluded.minor, last_seen = excluded.last_seen,"
		              " unresponsive = excluded.unresponsive, hw_thermal = excluded.hw_thermal",
		              "tttiiiii", a->node, g->uuid, g->bus, g->minor, g->first_seen, g->last_seen,
		              g->unresponsive, g->hw_thermal) < 0)
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
