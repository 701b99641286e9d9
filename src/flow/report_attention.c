/* The report's first screen: what costs the fleet the most, named in
 * printed text (a screenshot or a printout must name the nodes; a tooltip
 * does not print). Two lists: the nodes losing the most GPU-hours to node
 * faults, and nodes admission still admits although their epilogs keep
 * finding faulty GPUs (admission screens compute, memory and storage; it
 * cannot see a GPU that fails only under a real job). Below each strip
 * plot, the marked nodes by name. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "flow/report_doc.h"

static bool shown(const struct ng_report *r, const struct ng_rnode *n)
{
	return !r->o.class_key || (n->cls >= 0 && strcmp(r->class_map.keys[n->cls], r->o.class_key) == 0);
}

static bool admitted(const struct ng_report *r, size_t node)
{
	const char *s = ng_report_state_of(r, node);
	return strcmp(s, "admitted") == 0 || strcmp(s, "admitted-warn") == 0;
}

size_t *ng_report_costliest(const struct ng_report *r, size_t *n)
{
	size_t *top = ng_report_top_nodes(r, n);
	/* With hours, only nodes that lost some (the order is by hours). */
	while (top && r->have_jobs && *n && !(r->nodes[top[*n - 1]].gh.node_fault_hours > 0))
		(*n)--;
	if (*n > NG_REPORT_ATTENTION_TOP)
		*n = NG_REPORT_ATTENTION_TOP;
	return top;
}

static int by_faults(const void *a, const void *b, void *arg)
{
	const struct ng_report *r = arg;
	const struct ng_rnode *x = &r->nodes[*(const size_t *)a], *y = &r->nodes[*(const size_t *)b];
	if (x->epilog_faults != y->epilog_faults)
		return x->epilog_faults > y->epilog_faults ? -1 : 1;
	if (x->gh.node_fault_hours != y->gh.node_fault_hours)
		return x->gh.node_fault_hours > y->gh.node_fault_hours ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t *ng_report_admitted_repeat_faults(const struct ng_report *r, size_t *n)
{
	size_t *idx = malloc((r->n_nodes ? r->n_nodes : 1) * sizeof *idx);
	*n = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < r->n_nodes; i++)
		if (shown(r, &r->nodes[i]) && admitted(r, i) &&
		    r->nodes[i].epilog_faults >= NG_REPORT_REPEATED_FAULTS)
			idx[(*n)++] = i;
	qsort_r(idx, *n, sizeof *idx, by_faults, (void *)r);
	if (*n > NG_REPORT_ATTENTION_TOP)
		*n = NG_REPORT_ATTENTION_TOP;
	return idx;
}

static void states_cell(const struct ng_report *r, size_t node, ng_strbuf *o)
{
	const char *s[8];
	size_t k = ng_report_states_of(r, node, s, 8);
	ng_strbuf_adds(o, "<td class=\"nm\">");
	for (size_t i = 0; i < k; i++) {
		ng_strbuf_adds(o, i ? ", " : "");
		ng_html_escape(o, s[i]);
	}
	if (!k)
		ng_strbuf_adds(o, "unknown");
	const struct ng_rnode *n = &r->nodes[node];
	if (admitted(r, node) && n->epilog_faults >= NG_REPORT_REPEATED_FAULTS)
		ng_strbuf_printf(o, " <b class=\"alarm\">with %zu epilog faults</b>", n->epilog_faults);
	ng_strbuf_adds(o, "</td>");
}

static void rows(const struct ng_report *r, const size_t *idx, size_t n, ng_strbuf *o)
{
	for (size_t i = 0; i < n; i++) {
		const struct ng_rnode *nd = &r->nodes[idx[i]];
		ng_strbuf_adds(o, "<tr data-node=\"");
		ng_html_escape(o, nd->name);
		ng_strbuf_adds(o, "\" data-state=\"");
		ng_html_escape(o, ng_report_state_of(r, idx[i]));
		ng_strbuf_printf(o, "\" data-node-fault-hours=\"%.1f\"><td class=\"n\">%zu</td><td class=\"nm\">",
		                 nd->gh.node_fault_hours, i + 1);
		ng_html_escape(o, nd->name);
		ng_strbuf_adds(o, "</td>");
		states_cell(r, idx[i], o);
		ng_strbuf_adds(o, "<td class=\"nm\">");
		ng_html_escape(o, nd->cls >= 0 ? r->class_map.keys[nd->cls] : "-");
		if (r->have_jobs)
			ng_strbuf_printf(o, "</td><td class=\"n\">%.1f</td>", nd->gh.node_fault_hours);
		else
			ng_strbuf_adds(o, "</td><td class=\"n\">-</td>");
		ng_strbuf_printf(o, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>",
		                 nd->epilog_faults, nd->health_faults, nd->quarantines);
	}
}

static const char head[] = "<tr><th>#</th><th>node</th><th>state</th><th>class</th>"
                           "<th>node-fault GPU-h</th><th>epilog faults</th><th>health faults</th>"
                           "<th>quarantines</th></tr>";

void ng_report_html_attention(const struct ng_report *r, ng_strbuf *o)
{
	size_t n = 0, m = 0;
	size_t *top = ng_report_costliest(r, &n);
	size_t *rep = ng_report_admitted_repeat_faults(r, &m);
	ng_strbuf_adds(o, "<h2 id=\"attention\">Costing the fleet most</h2>");
	if (r->have_jobs)
		ng_strbuf_adds(o, "<p>The nodes that lost the most GPU-hours to node faults (whole jobs "
		                  "their faults failed), worst first.</p>");
	else
		ng_strbuf_adds(o, "<p>No job accounting: the nodes with the most findings, worst first.</p>");
	if (n) {
		ng_strbuf_printf(o, "<table id=\"costliest\">%s", head);
		rows(r, top, n, o);
		ng_strbuf_adds(o, "</table>");
	} else {
		ng_strbuf_adds(o, "<p>No node lost GPU-hours to a node fault.</p>");
	}
	ng_strbuf_printf(o, "<h3>Admitted, yet their epilogs keep finding faults</h3><p>Nodes admission "
	                    "admits with %d or more GPU faults found by epilogs in the window: "
	                    "admission's probes cannot see a GPU that fails only under a real job.</p>",
	                 NG_REPORT_REPEATED_FAULTS);
	if (m) {
		ng_strbuf_printf(o, "<table id=\"admitted-repeat-faults\">%s", head);
		rows(r, rep, m, o);
		ng_strbuf_adds(o, "</table>\n");
	} else {
		ng_strbuf_adds(o, "<p>None.</p>\n");
	}
	free(top);
	free(rep);
}

static cJSON *node_json(const struct ng_report *r, size_t i)
{
	const struct ng_rnode *nd = &r->nodes[i];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "node", nd->name);
	cJSON_AddStringToObject(o, "node_id", nd->id[0] ? nd->id : nd->name);
	if (nd->cls >= 0)
		cJSON_AddStringToObject(o, "class", r->class_map.keys[nd->cls]);
	else
		cJSON_AddNullToObject(o, "class");
	cJSON_AddStringToObject(o, "state", ng_report_state_of(r, i));
	const char *s[8];
	size_t k = ng_report_states_of(r, i, s, 8);
	cJSON *st = cJSON_AddArrayToObject(o, "states");
	for (size_t q = 0; q < k; q++)
		cJSON_AddItemToArray(st, cJSON_CreateString(s[q]));
	if (r->have_jobs)
		ng_json_add_number(o, "node_fault_gpu_hours", nd->gh.node_fault_hours);
	else
		cJSON_AddNullToObject(o, "node_fault_gpu_hours");
	cJSON_AddNumberToObject(o, "epilog_faults", (double)nd->epilog_faults);
	cJSON_AddNumberToObject(o, "health_faults", (double)nd->health_faults);
	cJSON_AddNumberToObject(o, "quarantines", (double)nd->quarantines);
	return o;
}

cJSON *ng_report_json_attention(const struct ng_report *r)
{
	cJSON *a = cJSON_CreateObject();
	size_t n = 0, m = 0;
	size_t *top = ng_report_costliest(r, &n);
	size_t *rep = ng_report_admitted_repeat_faults(r, &m);
	cJSON_AddNumberToObject(a, "repeated_epilog_faults", NG_REPORT_REPEATED_FAULTS);
	cJSON *c = cJSON_AddArrayToObject(a, "costliest");
	for (size_t i = 0; top && i < n; i++)
		cJSON_AddItemToArray(c, node_json(r, top[i]));
	cJSON *x = cJSON_AddArrayToObject(a, "admitted_with_repeated_epilog_faults");
	for (size_t i = 0; rep && i < m; i++)
		cJSON_AddItemToArray(x, node_json(r, rep[i]));
	free(top);
	free(rep);
	return a;
}

/* ---- the marked nodes below a strip plot ------------------------------------------ */

#define NAMED_MAX 40

static bool marked(const struct ng_report *r, const struct ng_rseries *s, const struct ng_rpoint *p)
{
	const char *st = ng_report_state_of(r, p->node);
	return (isfinite(s->bar) && p->value < s->bar) || strcmp(st, "quarantined") == 0 ||
	       strcmp(st, "suspect") == 0 || strcmp(st, "held") == 0;
}

static int by_value(const void *a, const void *b)
{
	const struct ng_rpoint *x = *(const struct ng_rpoint *const *)a;
	const struct ng_rpoint *y = *(const struct ng_rpoint *const *)b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

void ng_report_html_named(const struct ng_report *r, const struct ng_rseries *s, ng_strbuf *o)
{
	const struct ng_rpoint **pts = malloc((s->n_pts ? s->n_pts : 1) * sizeof *pts);
	if (!pts) {
		o->oom = true;
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->n_pts; i++)
		if (marked(r, s, &s->pts[i]))
			pts[n++] = &s->pts[i];
	if (n) {
		qsort(pts, n, sizeof *pts, by_value);
		ng_strbuf_printf(o, "<p class=\"named\" data-series=\"%zu\">Marked, lowest first: ",
		                 (size_t)(s - r->series));
		for (size_t i = 0; i < n && i < NAMED_MAX; i++) {
			const struct ng_rnode *nd = &r->nodes[pts[i]->node];
			ng_strbuf_adds(o, i ? "; " : "");
			ng_strbuf_adds(o, "<span class=\"nm\" data-node=\"");
			ng_html_escape(o, nd->name);
			ng_strbuf_adds(o, "\">");
			ng_html_escape(o, nd->name);
			ng_strbuf_adds(o, "</span> ");
			if (isfinite(s->median) && s->median > 0)
				ng_strbuf_printf(o, "%.0f%%", pts[i]->value / s->median * 100);
			else
				ng_strbuf_printf(o, "%.4g", pts[i]->value);
			const char *st = ng_report_state_of(r, pts[i]->node);
			if (strcmp(st, "admitted") != 0) {
				ng_strbuf_adds(o, " ");
				ng_html_escape(o, st);
			}
		}
		if (n > NAMED_MAX)
			ng_strbuf_printf(o, "; and %zu more (the JSON lists every node)", n - NAMED_MAX);
		ng_strbuf_adds(o, "</p>");
	}
	free(pts);
}
