/* The GPU checks in the metrics (docs/metrics.md): each node's last epilog,
 * prolog or health check, as the gpu.health records the store keeps of it,
 * one per GPU checked. Apart from metrics.c, which renders admission's
 * state: these come from per-job records, not from a node state. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "land/metrics.h"

static void label(ng_strbuf *o, const char *k, const char *v, bool first)
{
	ng_strbuf_printf(o, "%s%s=\"", first ? "" : ",", k);
	ng_metrics_add_label_value(o, v);
	ng_strbuf_addc(o, '"');
}

static void node_labels(ng_strbuf *o, const char *node, const char *name)
{
	label(o, "node", node, true);
	if (name && *name)
		label(o, "node_name", name, false);
}

struct gpu_row {
	char node[128], name[128], gpu[16], uuid[96], severity[16];
	long long at;
};

int ng_metrics_render_gpu(ng_strbuf *o, ng_sql *db, ng_err *err)
{
	ng_sql_stmt *q = NULL;
	/* Only each node's newest check: its records share one taken_at. */
	if (ng_sql_prepare(db,
	                   "SELECT r.node, COALESCE(n.name, ''), r.body, r.taken_at FROM records r"
	                   " JOIN (SELECT node, max(taken_at) AS t FROM records"
	                   "       WHERE metric = 'gpu.health' GROUP BY node) m"
	                   " ON m.node = r.node AND m.t = r.taken_at"
	                   " LEFT JOIN node_names n ON n.node = r.node"
	                   " WHERE r.metric = 'gpu.health' ORDER BY r.node, r.id",
	                   &q, err) < 0)
		return -1;
	struct gpu_row *rows = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = ng_sql_step(q, err)) == 1) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 32;
			struct gpu_row *g = realloc(rows, c * sizeof *g);
			if (!g) {
				rc = ng_fail(err, "out of memory");
				break;
			}
			rows = g;
			cap = c;
		}
		struct gpu_row *r = &rows[n];
		memset(r, 0, sizeof *r);
		const char *node = ng_sql_column_text(q, 0), *name = ng_sql_column_text(q, 1);
		snprintf(r->node, sizeof r->node, "%s", node ? node : "");
		snprintf(r->name, sizeof r->name, "%s", name ? name : "");
		r->at = (long long)ng_sql_column_int64(q, 3);
		cJSON *b = cJSON_Parse(ng_sql_column_text(q, 2) ? ng_sql_column_text(q, 2) : "");
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(b, "index"),
		            *uuid = cJSON_GetObjectItemCaseSensitive(b, "uuid"),
		            *sev = cJSON_GetObjectItemCaseSensitive(b, "severity");
		if (cJSON_IsNumber(idx) && cJSON_IsString(sev)) {
			snprintf(r->gpu, sizeof r->gpu, "%d", idx->valueint);
			snprintf(r->uuid, sizeof r->uuid, "%s", cJSON_IsString(uuid) ? uuid->valuestring : "");
			snprintf(r->severity, sizeof r->severity, "%s", sev->valuestring);
			n++;
		}
		cJSON_Delete(b);
	}
	ng_sql_finalize(q);
	if (rc < 0) {
		free(rows);
		return -1;
	}
	static const char *const severities[] = {"ok", "transient", "degraded", "fatal", "unknown"};
	ng_strbuf_adds(o, "# HELP nodegate_gpu_health Each GPU's severity in its node's last GPU "
	                  "check (epilog, prolog, health): 1 for it, 0 for the others.\n"
	                  "# TYPE nodegate_gpu_health gauge\n");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof severities / sizeof *severities; k++) {
			ng_strbuf_adds(o, "nodegate_gpu_health{");
			node_labels(o, rows[i].node, rows[i].name);
			label(o, "gpu", rows[i].gpu, false);
			label(o, "uuid", rows[i].uuid, false);
			label(o, "severity", severities[k], false);
			ng_strbuf_printf(o, "} %d\n", strcmp(rows[i].severity, severities[k]) == 0);
		}
	ng_strbuf_adds(o, "# HELP nodegate_gpu_check_timestamp_seconds When the node's last GPU "
	                  "check kept its records (unix seconds).\n"
	                  "# TYPE nodegate_gpu_check_timestamp_seconds gauge\n");
	for (size_t i = 0; i < n; i++) {
		if (i && strcmp(rows[i].node, rows[i - 1].node) == 0)
			continue;
		ng_strbuf_adds(o, "nodegate_gpu_check_timestamp_seconds{");
		node_labels(o, rows[i].node, rows[i].name);
		ng_strbuf_printf(o, "} %lld\n", rows[i].at);
	}
	free(rows);
	return 0;
}
