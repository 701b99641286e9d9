/* Configuration errors of the GPU checks: what a fleet whose Epilog exits 0
 * on a broken policy would otherwise hide (cli/config_error.h). */
#include <string.h>

#include "store/store_internal.h"

static int put_error(ng_store *st, void *arg, ng_err *err)
{
	const ng_store_config_error *e = arg;
	return ng_q_exec(st, err,
	                 "INSERT INTO config_errors (node, verb, kind, message, at)"
	                 " VALUES (?, ?, ?, ?, ?)",
	                 "tttti", e->node, e->verb, e->kind, e->message, e->at);
}

int ng_store_put_config_error(ng_store *st, const ng_store_config_error *e, ng_err *err)
{
	return ng_store_tx(st, put_error, (void *)e, err);
}

static int read_row(ng_sql_stmt *q, void *elem)
{
	ng_store_config_error *e = elem;
	memset(e, 0, sizeof *e);
	ng_q_text(q, 0, e->node, sizeof e->node);
	ng_q_text(q, 1, e->verb, sizeof e->verb);
	ng_q_text(q, 2, e->kind, sizeof e->kind);
	e->count = ng_sql_column_int64(q, 3);
	e->at = ng_sql_column_int64(q, 4);
	ng_q_text(q, 5, e->message, sizeof e->message);
	return 0;
}

int ng_store_config_errors_since(ng_store *st, int64_t since, ng_store_config_error **out,
                                 size_t *n, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT node, verb, kind, count(*), max(at),"
	                      " (SELECT m.message FROM config_errors m WHERE m.node = c.node"
	                      "  AND m.verb = c.verb AND m.kind = c.kind"
	                      "  ORDER BY m.at DESC, m.id DESC LIMIT 1)"
	                      " FROM config_errors c WHERE at >= ? GROUP BY node, verb, kind"
	                      " ORDER BY max(at) DESC, node, verb, kind",
	                      "i", since);
	return ng_q_rows(q, sizeof **out, read_row, NULL, (void **)out, n, err);
}
