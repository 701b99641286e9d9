/* Known-good peers from the node states (fabric_peers.h). */
#include "store/fabric_peers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store_internal.h"

int ng_store_fabric_peers(ng_store *st, const char *class_key, const char *exclude, char **out,
                          size_t cap, ng_err *err)
{
	ng_sql *db = ng_store_sql(st);
	ng_sql_stmt *q;
	const char *sql =
		"SELECT s.node FROM node_states s WHERE s.outcome = 'admitted' AND s.node <> ?"
		" AND s.class = COALESCE(?, (SELECT class FROM node_states WHERE node = ?))"
		" AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.node = s.node AND c.closed_at = 0)"
		" ORDER BY s.updated_at DESC, s.node LIMIT ?";
	if (ng_sql_prepare(db, sql, &q, err) < 0)
		return -1;
	ng_sql_bind_text(q, 1, exclude);
	if (class_key)
		ng_sql_bind_text(q, 2, class_key);
	else
		ng_sql_bind_null(q, 2);
	ng_sql_bind_text(q, 3, exclude);
	ng_sql_bind_int64(q, 4, (int64_t)cap);
	int n = 0, rc;
	while ((size_t)n < cap && (rc = ng_sql_step(q, err)) == 1) {
		const char *name = ng_sql_column_text(q, 0);
		if (name && (out[n] = strdup(name)))
			n++;
	}
	ng_sql_finalize(q);
	return rc < 0 ? -1 : n;
}

int ng_store_fabric_runs(ng_store *st, const char *class_key, const char *metric, int64_t since,
                         int (*fn)(const char *body, const double *samples, size_t n,
                                   int64_t taken_at, void *arg),
                         void *arg, ng_err *err)
{
	ng_sql_stmt *q = ng_q(
		st, err,
		"SELECT body, samples, taken_at FROM records"
		" WHERE class = ? AND metric = ? AND accepted = 1 AND idle = 1"
		" AND n_samples > 0 AND taken_at >= ?"
		" AND taken_at >= (SELECT COALESCE(MAX(before), 0) FROM retirements WHERE class = ?)",
		"ttit", class_key, metric, since, class_key);
	if (!q)
		return -1;
	int r;
	double *buf = NULL;
	size_t cap = 0;
	while ((r = ng_sql_step(q, err)) == 1) {
		size_t len;
		const void *blob = ng_sql_column_blob(q, 1, &len);
		size_t k = len / sizeof(double);
		if (k > cap) { /* the blob is not kept aligned: copied */
			double *g = realloc(buf, k * sizeof *g);
			if (!g) {
				r = ng_fail_as(err, NG_ERR_STORE, "out of memory reading the runs of %s", class_key);
				break;
			}
			buf = g;
			cap = k;
		}
		if (k)
			memcpy(buf, blob, k * sizeof(double));
		const char *body = ng_sql_column_text(q, 0);
		if (fn(body ? body : "", buf, k, ng_sql_column_int64(q, 2), arg) != 0) {
			r = ng_fail_as(err, NG_ERR_STORE, "out of memory reading the runs of %s", class_key);
			break;
		}
	}
	free(buf);
	ng_sql_finalize(q);
	return r < 0 ? -1 : 0;
}
