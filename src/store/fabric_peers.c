/* Known-good peers from the node states (fabric_peers.h). */
#include "store/fabric_peers.h"

#include <stdlib.h>
#include <string.h>

#include "store/sql.h"

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
