/* A node's two names: its stable id and its scheduler name. Records,
 * decisions and cases key a node by the id (a host name changes with a
 * rename or a reinstall); operators, Slurm and Kubernetes know it by name.
 * node_names keeps the latest name of each id, so every verb that takes a
 * NODE can take either, and landing can find the name the scheduler uses. */
#include <stdio.h>
#include <string.h>

#include "store/store_internal.h"

/* Inside a transaction the caller holds. */
int ng_store_put_node_name(ng_store *st, const char *node, const char *name, int64_t at,
                           ng_err *err)
{
	if (!node || !*node || !name || !*name)
		return 0;
	return ng_q_exec(st, err,
	                 "INSERT INTO node_names (node, name, seen_at) VALUES (?, ?, ?)"
	                 " ON CONFLICT (node) DO UPDATE SET name = excluded.name,"
	                 " seen_at = excluded.seen_at",
	                 "tti", node, name, at);
}

int ng_store_resolve_node(ng_store *st, const char *arg, ng_store_node_ref *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_copy(out->id, sizeof out->id, arg);
	/* An id and a name are both exact: "gpu-1" never finds "gpu-10". */
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT node, name FROM node_names WHERE node = ? OR name = ?"
	                      " ORDER BY seen_at DESC, node",
	                      "tt", arg, arg);
	if (!q)
		return -1;
	int r, n = 0;
	size_t used = 0;
	while ((r = ng_sql_step(q, err)) == 1) {
		const char *id = ng_sql_column_text(q, 0), *name = ng_sql_column_text(q, 1);
		if (n == 0) {
			ng_copy(out->id, sizeof out->id, id);
			ng_copy(out->name, sizeof out->name, name);
		}
		if (used < sizeof out->candidates) {
			int w = snprintf(out->candidates + used, sizeof out->candidates - used, "%s%s (%s)",
			                 n ? ", " : "", id ? id : "", name ? name : "");
			used += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	ng_sql_finalize(q);
	if (r < 0)
		return -1;
	if (n > 1) {
		ng_copy(out->id, sizeof out->id, arg);
		out->name[0] = '\0';
		return 2;
	}
	return n;
}

int ng_store_node_name_of(ng_store *st, const char *node, char *name, size_t cap, ng_err *err)
{
	if (cap)
		name[0] = '\0';
	ng_sql_stmt *q = ng_q(st, err, "SELECT name FROM node_names WHERE node = ?", "t", node);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		ng_q_text(q, 0, name, cap);
	ng_sql_finalize(q);
	return r;
}
