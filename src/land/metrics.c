/* The store as Prometheus metrics (docs/metrics.md).
 *
 * Every family is a gauge: these are states read from the store each time
 * the file is written, not counters nodegate increments, so none ends in
 * _total. Names are snake_case with the base unit last (_seconds); a
 * measurement's own unit, which differs per metric, is the `unit` label. A
 * family's samples are written together, after its HELP and TYPE lines, as
 * the text format requires. */
#include "land/metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verdict.h"

/* ---- text exposition ------------------------------------------------------------------ */

#define family ng_metrics_family
#define sample ng_metrics_sample

void ng_metrics_add_label_value(ng_strbuf *out, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++) {
		switch (*p) {
		case '\\': ng_strbuf_adds(out, "\\\\"); break;
		case '"': ng_strbuf_adds(out, "\\\""); break;
		case '\n': ng_strbuf_adds(out, "\\n"); break;
		default: ng_strbuf_addc(out, *p);
		}
	}
}

void ng_metrics_family(ng_strbuf *out, const char *name, const char *help)
{
	/* HELP text escapes backslash and newline; ours has neither. */
	ng_strbuf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void add_value(ng_strbuf *out, double v)
{
	if (isnan(v))
		ng_strbuf_adds(out, "NaN");
	else if (isinf(v))
		ng_strbuf_adds(out, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9e15)
		ng_strbuf_printf(out, "%lld", (long long)v);
	else
		ng_strbuf_add_double(out, v);
}

/* name{k1="v1",k2="v2"} value: labels are name, value pairs ending with NULL. */
void ng_metrics_sample(ng_strbuf *out, const char *name, double v, ...)
{
	ng_strbuf_adds(out, name);
	va_list ap;
	va_start(ap, v);
	const char *k = va_arg(ap, const char *);
	if (k) {
		ng_strbuf_addc(out, '{');
		for (bool first = true; k; k = va_arg(ap, const char *)) {
			const char *val = va_arg(ap, const char *);
			/* "?key": a label left out when empty (a node whose scheduler
			 * name the store does not know). */
			if (*k == '?' && !(val && *val))
				continue;
			k += *k == '?';
			ng_strbuf_printf(out, "%s%s=\"", first ? "" : ",", k);
			first = false;
			ng_metrics_add_label_value(out, val);
			ng_strbuf_addc(out, '"');
		}
		ng_strbuf_addc(out, '}');
	}
	va_end(ap);
	ng_strbuf_addc(out, ' ');
	add_value(out, v);
	ng_strbuf_addc(out, '\n');
}

/* ---- reading the store ---------------------------------------------------------------- */

static const char *text_of(ng_sql_stmt *q, int col)
{
	const char *s = ng_sql_column_text(q, col);
	return s ? s : "";
}

static double real_of(ng_sql_stmt *q, int col)
{
	return ng_sql_column_is_null(q, col) ? NAN : ng_sql_column_double(q, col);
}

struct node_row {
	char node[128], node_name[128], class_key[256], outcome[24];
	int64_t updated_at, recheck_at;
	int64_t duration_ms; /* 0: not measured */
};

struct line_row {
	char node[128], node_name[128], domain[32], metric[96], unit[24], verdict[40];
	double value, median, percent;
};

/* A growable array of rows. */
static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 16;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static int load_nodes(ng_sql *db, struct node_row **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = NULL;
	if (ng_sql_prepare(db,
	                   "SELECT s.node, s.class, s.outcome, s.updated_at, s.recheck_at,"
	                   " s.duration_ms, COALESCE(n.name, s.node_name, '') FROM node_states s"
	                   " LEFT JOIN node_names n ON n.node = s.node ORDER BY s.node",
	                   &q, err) < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = ng_sql_step(q, err)) == 1) {
		struct node_row *g = grow(*out, &cap, *n, sizeof **out);
		if (!g) {
			rc = ng_fail(err, "out of memory");
			break;
		}
		*out = g;
		struct node_row *r = &g[(*n)++];
		ng_copy(r->node, sizeof r->node, text_of(q, 0));
		ng_copy(r->class_key, sizeof r->class_key, text_of(q, 1));
		ng_copy(r->outcome, sizeof r->outcome, text_of(q, 2));
		r->updated_at = ng_sql_column_int64(q, 3);
		r->recheck_at = ng_sql_column_int64(q, 4);
		r->duration_ms = ng_sql_column_int64(q, 5);
		ng_copy(r->node_name, sizeof r->node_name, text_of(q, 6));
	}
	ng_sql_finalize(q);
	return rc < 0 ? -1 : 0;
}

/* The latest verdict line of each (node, metric) in each node's last run:
 * the confirmation's when the run had one. */
static int load_lines(ng_sql *db, struct line_row **out, size_t *n, ng_err *err)
{
	ng_sql_stmt *q = NULL;
	if (ng_sql_prepare(db,
	                   "SELECT v.node, v.domain, v.metric, v.unit, v.gate_verdict, v.value,"
	                   " v.baseline_median, v.percent, COALESCE(n.name, s.node_name, '')"
	                   " FROM verdicts v JOIN node_states s"
	                   " ON s.node = v.node AND s.run_id = v.run_id"
	                   " LEFT JOIN node_names n ON n.node = v.node ORDER BY v.node, v.metric, v.id",
	                   &q, err) < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = ng_sql_step(q, err)) == 1) {
		const char *node = text_of(q, 0), *metric = text_of(q, 2);
		struct line_row *r = *n ? &(*out)[*n - 1] : NULL;
		if (!r || strcmp(r->node, node) != 0 || strcmp(r->metric, metric) != 0) {
			struct line_row *g = grow(*out, &cap, *n, sizeof **out);
			if (!g) {
				rc = ng_fail(err, "out of memory");
				break;
			}
			*out = g;
			r = &g[(*n)++];
		}
		ng_copy(r->node, sizeof r->node, node);
		ng_copy(r->domain, sizeof r->domain, text_of(q, 1));
		ng_copy(r->metric, sizeof r->metric, metric);
		ng_copy(r->unit, sizeof r->unit, text_of(q, 3));
		ng_copy(r->verdict, sizeof r->verdict, text_of(q, 4));
		r->value = real_of(q, 5);
		r->median = real_of(q, 6);
		r->percent = real_of(q, 7);
		ng_copy(r->node_name, sizeof r->node_name, text_of(q, 8));
	}
	ng_sql_finalize(q);
	return rc < 0 ? -1 : 0;
}

/* ---- the families --------------------------------------------------------------------- */

static const char *const outcomes[] = {"admitted", "admitted-warn", "held", "suspect",
                                       "quarantined", "released", "probation"};
#define N_OUTCOMES (sizeof outcomes / sizeof outcomes[0])

static bool known_outcome(const char *s)
{
	for (size_t i = 0; i < N_OUTCOMES; i++)
		if (strcmp(outcomes[i], s) == 0)
			return true;
	return false;
}

static void render_nodes(ng_strbuf *o, const struct node_row *r, size_t n)
{
	family(o, "nodegate_node_outcome",
	       "Admission outcome of each node: 1 for its current outcome, 0 for the others.");
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < N_OUTCOMES; k++)
			sample(o, "nodegate_node_outcome", strcmp(r[i].outcome, outcomes[k]) == 0,
			       "node", r[i].node, "?node_name", r[i].node_name, "class", r[i].class_key, "outcome", outcomes[k], NULL);
		if (!known_outcome(r[i].outcome))
			sample(o, "nodegate_node_outcome", 1, "node", r[i].node, "?node_name", r[i].node_name, "class", r[i].class_key,
			       "outcome", r[i].outcome, NULL);
	}
	family(o, "nodegate_nodes", "Nodes in the store by admission outcome.");
	for (size_t k = 0; k < N_OUTCOMES; k++) {
		size_t c = 0;
		for (size_t i = 0; i < n; i++)
			c += strcmp(r[i].outcome, outcomes[k]) == 0;
		sample(o, "nodegate_nodes", (double)c, "outcome", outcomes[k], NULL);
	}
	family(o, "nodegate_last_run_timestamp_seconds",
	       "When the node's last admission decision was made (unix seconds).");
	for (size_t i = 0; i < n; i++)
		sample(o, "nodegate_last_run_timestamp_seconds", (double)r[i].updated_at, "node",
		       r[i].node, "?node_name", r[i].node_name, NULL);
	family(o, "nodegate_last_run_duration_seconds",
	       "How long the node's last admission run took, measuring and confirming included.");
	for (size_t i = 0; i < n; i++)
		if (r[i].duration_ms > 0)
			sample(o, "nodegate_last_run_duration_seconds", (double)r[i].duration_ms / 1000.0,
			       "node", r[i].node, "?node_name", r[i].node_name, NULL);
	family(o, "nodegate_recheck_timestamp_seconds",
	       "When an admitted-warn node is due to be measured again (unix seconds).");
	for (size_t i = 0; i < n; i++)
		if (r[i].recheck_at > 0)
			sample(o, "nodegate_recheck_timestamp_seconds", (double)r[i].recheck_at, "node",
			       r[i].node, "?node_name", r[i].node_name, NULL);
}

static int render_cases(ng_strbuf *o, ng_sql *db, ng_err *err)
{
	ng_sql_stmt *q = NULL;
	int rc;
	family(o, "nodegate_quarantine_cases_open", "Open quarantine cases by node class.");
	if (ng_sql_prepare(db,
	                   "SELECT class, COUNT(*) FROM cases WHERE closed_at = 0 GROUP BY class"
	                   " ORDER BY class",
	                   &q, err) < 0)
		return -1;
	while ((rc = ng_sql_step(q, err)) == 1)
		sample(o, "nodegate_quarantine_cases_open", (double)ng_sql_column_int64(q, 1), "class",
		       text_of(q, 0), NULL);
	ng_sql_finalize(q);
	if (rc < 0)
		return -1;

	static const char *const fams[][2] = {
		{"nodegate_quarantine_case_opened_timestamp_seconds",
		 "When each node's open quarantine case was opened (unix seconds)."},
		{"nodegate_quarantine_case_passes",
		 "Passing runs of the failed test since each open case was opened."},
		{"nodegate_quarantine_case_retries",
		 "Runs of the failed test since each open case was opened, passing or not."},
	};
	for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
		family(o, fams[f][0], fams[f][1]);
		if (ng_sql_prepare(db,
		                   "SELECT node, class, domain, metric, opened_at, passes, retries, id"
		                   " FROM cases WHERE closed_at = 0 ORDER BY node, id",
		                   &q, err) < 0)
			return -1;
		while ((rc = ng_sql_step(q, err)) == 1) {
			char id[24];
			snprintf(id, sizeof id, "%lld", (long long)ng_sql_column_int64(q, 7));
			sample(o, fams[f][0], (double)ng_sql_column_int64(q, 4 + (int)f), "node",
			       text_of(q, 0), "class", text_of(q, 1), "domain", text_of(q, 2), "metric",
			       text_of(q, 3), "case", id, NULL);
		}
		ng_sql_finalize(q);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int render_baselines(ng_strbuf *o, ng_store *st, ng_err *err)
{
	ng_store_baseline *all = NULL, *cur = NULL;
	size_t n = 0, n_cur = 0;
	if (ng_store_list_baselines(st, NULL, true, &all, &n, err) < 0)
		return -1;
	cur = calloc(n ? n : 1, sizeof *cur);
	if (!cur) {
		free(all);
		return ng_fail(err, "out of memory");
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		bool seen = false;
		for (size_t k = 0; k < n_cur && !seen; k++)
			seen = strcmp(cur[k].class_key, all[i].class_key) == 0 &&
			       strcmp(cur[k].software, all[i].software) == 0 &&
			       strcmp(cur[k].metric, all[i].metric) == 0;
		if (seen)
			continue;
		int got = ng_store_current_baseline(st, all[i].class_key, all[i].software,
		                                    all[i].metric, &cur[n_cur], err);
		if (got < 0)
			rc = -1;
		else if (got == 1)
			n_cur++;
	}
	free(all);
	static const char *const fams[][2] = {
		{"nodegate_baseline_median",
		 "The current class baseline: median of node medians, in the metric's unit."},
		{"nodegate_baseline_cv", "The current class baseline's coefficient of variation (ratio)."},
		{"nodegate_baseline_nodes", "Nodes the current class baseline was built from."},
		{"nodegate_baseline_built_timestamp_seconds",
		 "When the current class baseline was built (unix seconds)."},
	};
	for (size_t f = 0; rc == 0 && f < sizeof fams / sizeof fams[0]; f++) {
		family(o, fams[f][0], fams[f][1]);
		for (size_t k = 0; k < n_cur; k++) {
			const ng_store_baseline *b = &cur[k];
			double v = f == 0 ? b->median
			         : f == 1 ? b->cv
			         : f == 2 ? (double)b->n_nodes
			                  : (double)b->built_at;
			sample(o, fams[f][0], v, "class", b->class_key, "software", b->software, "metric",
			       b->metric, "unit", b->unit, NULL);
		}
	}
	free(cur);
	return rc;
}

static void render_lines(ng_strbuf *o, const struct line_row *l, size_t n)
{
	family(o, "nodegate_metric_value",
	       "Each node's last admission measurement of a metric (its median), in its unit.");
	for (size_t i = 0; i < n; i++)
		if (isfinite(l[i].value))
			sample(o, "nodegate_metric_value", l[i].value, "node", l[i].node, "?node_name", l[i].node_name, "domain",
			       l[i].domain, "metric", l[i].metric, "unit", l[i].unit, NULL);
	family(o, "nodegate_metric_baseline_median",
	       "The class baseline median that measurement was judged against, in its unit.");
	for (size_t i = 0; i < n; i++)
		if (isfinite(l[i].median))
			sample(o, "nodegate_metric_baseline_median", l[i].median, "node", l[i].node, "?node_name", l[i].node_name,
			       "domain", l[i].domain, "metric", l[i].metric, "unit", l[i].unit, NULL);
	family(o, "nodegate_metric_ratio_to_median",
	       "Each node's last measurement of a metric as a ratio to its class median (1 is the median).");
	for (size_t i = 0; i < n; i++)
		if (isfinite(l[i].percent))
			sample(o, "nodegate_metric_ratio_to_median", l[i].percent / 100.0, "node", l[i].node,
			       "?node_name", l[i].node_name,
			       "domain", l[i].domain, "metric", l[i].metric, NULL);

	family(o, "nodegate_verdicts",
	       "Gate verdicts of the latest line of each metric in each node's last run.");
	for (int v = 0; v < NG_V_COUNT; v++) {
		size_t c = 0;
		for (size_t i = 0; i < n; i++)
			c += strcmp(l[i].verdict, ng_verdict_name((ng_verdict)v)) == 0;
		sample(o, "nodegate_verdicts", (double)c, "verdict", ng_verdict_name((ng_verdict)v), NULL);
	}
	/* A name this build does not know, from a newer nodegate: counted too, once. */
	for (size_t i = 0; i < n; i++) {
		bool known = false, earlier = false;
		for (int v = 0; v < NG_V_COUNT && !known; v++)
			known = strcmp(l[i].verdict, ng_verdict_name((ng_verdict)v)) == 0;
		for (size_t k = 0; k < i && !earlier; k++)
			earlier = strcmp(l[k].verdict, l[i].verdict) == 0;
		if (known || earlier)
			continue;
		size_t c = 0;
		for (size_t k = i; k < n; k++)
			c += strcmp(l[k].verdict, l[i].verdict) == 0;
		sample(o, "nodegate_verdicts", (double)c, "verdict", l[i].verdict, NULL);
	}
}

static int render_fleet(ng_strbuf *o, ng_store *st, ng_err *err)
{
	ng_store_fleet_event *ev = NULL;
	size_t n = 0;
	if (ng_store_list_fleet_events(st, false, &ev, &n, err) < 0)
		return -1;
	family(o, "nodegate_fleet_regression_events_open",
	       "Open fleet-regression events: classes whose quarantine the circuit breaker stopped.");
	sample(o, "nodegate_fleet_regression_events_open", (double)n, NULL);
	family(o, "nodegate_fleet_regression_open",
	       "1 while a fleet event is open for the class: kind breaker (the class's metric moved), "
	       "partial (part of it moved; what those nodes share is named) or drift (a rebuilt "
	       "baseline under its pinned one).");
	for (size_t i = 0; i < n; i++) {
		char id[24];
		snprintf(id, sizeof id, "%lld", (long long)ev[i].id);
		sample(o, "nodegate_fleet_regression_open", 1, "class", ev[i].class_key, "software",
		       ev[i].software, "event", id, "metric", ev[i].metric, "kind",
		       ev[i].kind[0] ? ev[i].kind : "breaker", NULL);
	}
	family(o, "nodegate_fleet_regression_opened_timestamp_seconds",
	       "When each open fleet-regression event was opened (unix seconds).");
	for (size_t i = 0; i < n; i++) {
		char id[24];
		snprintf(id, sizeof id, "%lld", (long long)ev[i].id);
		sample(o, "nodegate_fleet_regression_opened_timestamp_seconds", (double)ev[i].opened_at,
		       "class", ev[i].class_key, "software", ev[i].software, "event", id, "metric",
		       ev[i].metric, "kind", ev[i].kind[0] ? ev[i].kind : "breaker", NULL);
	}
	for (size_t i = 0; i < n; i++)
		ng_store_fleet_event_free(&ev[i]);
	free(ev);
	return 0;
}

static int render_audit(ng_strbuf *o, ng_store *st, ng_err *err)
{
	ng_store_audit_report rep;
	memset(&rep, 0, sizeof rep);
	int rc = ng_store_audit_verify(st, &rep, err);
	if (rc < 0)
		return -1;
	family(o, "nodegate_audit_chain_ok",
	       "1 when the audit log's hash chain verified end to end, 0 when an entry was altered.");
	sample(o, "nodegate_audit_chain_ok", rc == 0, NULL);
	family(o, "nodegate_audit_entries", "Entries in the audit log.");
	sample(o, "nodegate_audit_entries", (double)rep.entries, NULL);
	return 0;
}

/* Configuration errors of the GPU checks over the last day: each one exited
 * 0 instead of draining, so without this a fleet whose policy rollout broke
 * would look healthy while checking nothing. */
#define CONFIG_ERROR_WINDOW_S 86400
static int render_config_errors(ng_strbuf *o, ng_store *st, int64_t now, ng_err *err)
{
	ng_store_config_error *e = NULL;
	size_t n = 0;
	if (ng_store_config_errors_since(st, now - CONFIG_ERROR_WINDOW_S, &e, &n, err) < 0)
		return -1;
	family(o, "nodegate_config_errors",
	       "GPU checks (epilog, prolog, health, npd) in the last 24 hours that checked nothing "
	       "because of a configuration error (a broken policy, a misspelt option or command), "
	       "per node, command and kind.");
	for (size_t i = 0; i < n; i++)
		sample(o, "nodegate_config_errors", (double)e[i].count, "node", e[i].node, "verb",
		       e[i].verb, "kind", e[i].kind, NULL);
	family(o, "nodegate_config_error_nodes",
	       "Nodes with a configuration error in the last 24 hours: more than a few is a "
	       "fleet-wide configuration failure.");
	size_t nodes = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(e[k].node, e[i].node) == 0;
		nodes += !seen;
	}
	sample(o, "nodegate_config_error_nodes", (double)nodes, NULL);
	family(o, "nodegate_config_error_last_timestamp_seconds",
	       "When the node's newest configuration error happened (unix seconds).");
	for (size_t i = 0; i < n; i++)
		sample(o, "nodegate_config_error_last_timestamp_seconds", (double)e[i].at, "node",
		       e[i].node, "verb", e[i].verb, "kind", e[i].kind, NULL);
	free(e);
	return 0;
}

int ng_metrics_render(ng_store *st, int64_t now, ng_strbuf *out, ng_err *err)
{
	return ng_metrics_render_scope(st, now, NG_METRICS_ALL, NULL, out, err);
}

int ng_metrics_render_scope(ng_store *st, int64_t now, ng_metrics_scope scope, const char *node,
                            ng_strbuf *out, ng_err *err)
{
	ng_metrics_build_info(out);
	int rc0 = ng_metrics_render_gpus(st, scope, node, out, err);
	if (rc0 < 0)
		return -1;
	if (scope == NG_METRICS_NODE) {
		family(out, "nodegate_metrics_generated_timestamp_seconds",
		       "When nodegate last wrote this file (unix seconds): alert when it is old.");
		sample(out, "nodegate_metrics_generated_timestamp_seconds", (double)now, NULL);
		return out->oom ? ng_fail(err, "out of memory") : 0;
	}
	ng_sql *db = ng_store_sql(st);
	struct node_row *nodes = NULL;
	struct line_row *lines = NULL;
	size_t n_nodes = 0, n_lines = 0;
	int rc = load_nodes(db, &nodes, &n_nodes, err);
	if (rc == 0)
		rc = load_lines(db, &lines, &n_lines, err);
	if (rc == 0) {
		render_nodes(out, nodes, n_nodes);
		rc = render_cases(out, db, err);
	}
	if (rc == 0)
		rc = render_baselines(out, st, err);
	if (rc == 0) {
		render_lines(out, lines, n_lines);
		rc = render_fleet(out, st, err);
	}
	if (rc == 0)
		rc = render_audit(out, st, err);
	if (rc == 0)
		rc = render_config_errors(out, st, now, err);
	if (rc == 0)
		rc = ng_metrics_render_shadow(st, out, err);
	if (rc == 0) {
		family(out, "nodegate_metrics_generated_timestamp_seconds",
		       "When nodegate last wrote this file (unix seconds): alert when it is old.");
		sample(out, "nodegate_metrics_generated_timestamp_seconds", (double)now, NULL);
	}
	free(nodes);
	free(lines);
	if (rc == 0 && out->oom)
		rc = ng_fail(err, "out of memory");
	return rc;
}
