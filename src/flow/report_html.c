/* The report as one self-contained HTML page: inline CSS and SVG, no
 * script, nothing fetched. Every string that came from the store is
 * escaped (node names and reasons are whatever a host or a person wrote). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "flow/report_doc.h"

void ng_html_escape(ng_strbuf *o, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': ng_strbuf_adds(o, "&amp;"); break;
		case '<': ng_strbuf_adds(o, "&lt;"); break;
		case '>': ng_strbuf_adds(o, "&gt;"); break;
		case '"': ng_strbuf_adds(o, "&quot;"); break;
		case '\'': ng_strbuf_adds(o, "&#39;"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				ng_strbuf_printf(o, "&#%u;", c == '\t' || c == '\n' ? c : 0xfffd);
			else
				ng_strbuf_addc(o, (char)c);
		}
	}
}

static void esc(ng_strbuf *o, const char *s) { ng_html_escape(o, s); }

static void when(ng_strbuf *o, int64_t t)
{
	if (!t) {
		ng_strbuf_adds(o, "-");
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[32];
	gmtime_r(&tt, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%MZ", &tm);
	ng_strbuf_adds(o, buf);
}

static void age(ng_strbuf *o, int64_t seconds)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds >= 86400)
		ng_strbuf_printf(o, "%lldd %lldh", (long long)(seconds / 86400),
		                 (long long)(seconds % 86400 / 3600));
	else
		ng_strbuf_printf(o, "%lldh %lldm", (long long)(seconds / 3600),
		                 (long long)(seconds % 3600 / 60));
}

static void hours(ng_strbuf *o, double h) { ng_strbuf_printf(o, "%.1f", h); }

static const char *cls_name(const struct ng_report *r, long c)
{
	return c >= 0 ? r->class_map.keys[c] : "";
}

static const char css[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1b1f24;"
	"background:#fff;max-width:1100px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccd;"
	"padding-bottom:4px}h3{font-size:15px;margin:16px 0 4px}"
	".meta{color:#555}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}"
	".card{border:1px solid #ccd;border-radius:6px;padding:8px 12px;min-width:120px}"
	".card b{display:block;font-size:20px}"
	"table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}"
	"th,td{border:1px solid #dde;padding:3px 7px;text-align:left;vertical-align:top}"
	"th{background:#f3f4f8}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"tr.tripped td,tr.open td{background:#fff1f0}"
	".note{background:#fffbe6;border:1px solid #f0e0a0;padding:6px 10px;margin:4px 0}"
	"svg{display:block;margin:4px 0 10px;font:11px sans-serif}"
	".band{fill:#f7f8fb;stroke:#dde}.tick{stroke:#aab}.axis{fill:#555}"
	"line.median{stroke:#2b6cb0;stroke-width:2}line.bar{stroke:#dd6b20;stroke-width:2;stroke-dasharray:5 3}"
	"line.floor{stroke:#c53030;stroke-width:2}line.prev{stroke:#6b46c1;stroke-width:1.5;stroke-dasharray:2 3}"
	".lbl{font-size:10px}.lbl.median{fill:#2b6cb0}.lbl.bar{fill:#dd6b20}.lbl.floor{fill:#c53030}"
	".lbl.prev{fill:#6b46c1}"
	"circle.pt{fill:#5a7fa8;fill-opacity:.45}circle.pt.flagged{fill:#dd6b20;fill-opacity:.9}"
	"circle.pt.suspect{fill:#805ad5;fill-opacity:.9}circle.pt.held{fill:#333;fill-opacity:.9}"
	"circle.pt.quarantined{fill:#e53e3e;fill-opacity:1;stroke:#600;stroke-width:1}"
	"rect.admitted-warn{fill:#ecc94b}rect.held{fill:#718096}rect.suspect{fill:#805ad5}"
	"rect.quarantined{fill:#e53e3e}rect.gpufault{fill:#dd6b20}"
	"line.swchange{stroke:#3182ce;stroke-width:1.5;stroke-dasharray:4 3}"
	".alarm{color:#c53030;font-weight:600}"
	".fleetevent line{stroke:#c53030;stroke-width:2}.fleetevent polygon{fill:#c53030}"
	".legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:10px;"
	"height:10px;margin-right:4px;vertical-align:middle}"
	"code{font-size:12px}.nm{white-space:nowrap}.named{font-size:12px;margin:0 0 12px}"
	"text.dotlbl{font-size:10px;fill:#1b1f24}";

static void legend(ng_strbuf *o)
{
	ng_strbuf_adds(o,
	               "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#5a7fa8\"></i>node (recent "
	               "median)</span><span><i class=\"sw\" style=\"background:#dd6b20\"></i>below the bar"
	               "</span><span><i class=\"sw\" style=\"background:#e53e3e\"></i>quarantined</span>"
	               "<span><i class=\"sw\" style=\"background:#805ad5\"></i>suspect</span><span><i "
	               "class=\"sw\" style=\"background:#333\"></i>held</span><span style=\"color:#2b6cb0\">"
	               "&#9474; baseline median</span><span style=\"color:#dd6b20\">&#9478; flag bar</span>"
	               "<span style=\"color:#c53030\">&#9474; floor</span><span style=\"color:#6b46c1\">"
	               "&#9478; previous software's baseline</span></p>");
}

static void header(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_adds(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	                  "<meta name=\"viewport\" content=\"width=device-width\">"
	                  "<title>nodegate fleet report</title><style>");
	ng_strbuf_adds(o, css);
	ng_strbuf_adds(o, "</style></head><body>\n<h1>nodegate fleet report</h1><p class=\"meta\">Store ");
	esc(o, r->o.store_where);
	ng_strbuf_adds(o, " &middot; ");
	when(o, r->since);
	ng_strbuf_adds(o, " to ");
	when(o, r->o.now);
	ng_strbuf_printf(o, " (%lld days)", (long long)r->o.days);
	if (r->o.class_key) {
		ng_strbuf_adds(o, " &middot; class ");
		esc(o, r->o.class_key);
	}
	ng_strbuf_printf(o, " &middot; lines drawn with policy <code>%s</code> (flag below %.0f%% of the "
	                    "baseline median or the floor)</p>\n",
	                 r->policy, r->flag_fraction * 100);
	const cJSON *n;
	cJSON_ArrayForEach(n, r->notes)
	{
		ng_strbuf_adds(o, "<p class=\"note\">");
		esc(o, n->valuestring);
		ng_strbuf_adds(o, "</p>\n");
	}
	size_t open_cases = 0, open_events = 0, flagged = 0;
	for (size_t i = 0; i < r->n_cases; i++)
		open_cases += r->cases[i].c.closed_at == 0;
	for (size_t i = 0; i < r->n_events; i++)
		open_events += r->events[i].e.cleared_at == 0;
	for (size_t i = 0; i < r->n_nodes; i++)
		flagged += r->nodes[i].flagged;
	ng_strbuf_printf(o,
	                 "<div class=\"cards\"><div class=\"card\" id=\"card-nodes\"><b>%zu</b>nodes</div>"
	                 "<div class=\"card\"><b>%zu</b>classes</div>"
	                 "<div class=\"card\" id=\"card-flagged\"><b>%zu</b>below the bar</div>"
	                 "<div class=\"card\" id=\"card-quarantined\"><b>%zu</b>quarantined</div>"
	                 "<div class=\"card\" id=\"card-events\"><b>%zu</b>open fleet regressions</div>",
	                 ng_report_nodes_shown(r), r->o.class_key ? (size_t)1 : r->class_map.n, flagged,
	                 open_cases, open_events);
	if (r->have_jobs)
		ng_strbuf_printf(o,
		                 "<div class=\"card\" id=\"card-node-fault-hours\"><b>%.0f</b>GPU-hours lost to "
		                 "node faults</div><div class=\"card\" id=\"card-job-failure-hours\"><b>%.0f</b>"
		                 "GPU-hours lost to job failures</div>",
		                 r->gh_total.node_fault_hours, r->gh_total.job_failure_hours);
	ng_strbuf_adds(o, "</div>\n");
}

/* A GPU check that met a broken configuration exits 0 and checks nothing:
 * on many nodes at once that is a rollout gone wrong, and it goes first. */
static void config_errors(const struct ng_report *r, ng_strbuf *o)
{
	if (r->n_config_errors == 0)
		return;
	ng_strbuf_printf(o, "<h2 id=\"config-errors\">Configuration errors</h2><p class=\"alarm\">"
	                    "<b>%zu node%s</b> ran a GPU check that checked nothing because of a "
	                    "configuration error (a broken policy, a misspelt option or command): "
	                    "those checks drained nothing and caught nothing. Fix the configuration; "
	                    "<code>nodegate policy check FILE</code> validates a policy.</p>"
	                    "<table id=\"config-error-list\"><tr><th>node</th><th>command</th>"
	                    "<th>kind</th><th>times</th><th>last</th><th>error</th></tr>",
	                 r->config_error_nodes, r->config_error_nodes == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_config_errors; i++) {
		const ng_store_config_error *e = &r->config_errors[i];
		ng_strbuf_adds(o, "<tr data-config-error=\"");
		esc(o, e->kind);
		ng_strbuf_adds(o, "\"><td>");
		esc(o, e->node);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, e->verb);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, e->kind);
		ng_strbuf_printf(o, "</td><td class=\"n\">%lld</td><td>", (long long)e->count);
		when(o, e->at);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, e->message);
		ng_strbuf_adds(o, "</td></tr>");
	}
	ng_strbuf_adds(o, "</table>\n");
}

static void breaker(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_printf(o, "<h2 id=\"breaker\">Circuit breaker</h2><p>Quarantine stops in a class when "
	                    "more than %ld of its nodes, or more than %.0f%%, would be quarantined within "
	                    "%ld h; a fleet-regression event then stays open until an operator clears it.</p>"
	                    "<table><tr><th>class</th><th>nodes</th><th>quarantined in %ld h</th>"
	                    "<th>state</th><th>open event</th><th>software</th></tr>",
	                 r->breaker_count, r->breaker_share * 100, r->breaker_window_hours,
	                 r->breaker_window_hours);
	for (size_t c = 0; c < r->class_map.n; c++) {
		const struct ng_rclass *k = &r->classes[c];
		if (r->o.class_key && strcmp(r->o.class_key, r->class_map.keys[c]) != 0)
			continue;
		bool tripped = k->open_event >= 0;
		ng_strbuf_printf(o, "<tr id=\"breaker-%zu\" class=\"%s\" data-breaker=\"%s\" data-class=\"", c,
		                 tripped ? "tripped" : "armed", tripped ? "tripped" : "armed");
		esc(o, r->class_map.keys[c]);
		ng_strbuf_adds(o, "\"><td>");
		esc(o, r->class_map.keys[c]);
		ng_strbuf_printf(o, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td>%s</td><td>",
		                 k->n_nodes, k->recent_quarantines,
		                 tripped ? "tripped: quarantine stopped" : "armed");
		if (tripped) {
			const struct ng_revent *e = &r->events[k->open_event];
			ng_strbuf_printf(o, "<a href=\"#fleet-row-%lld\">%lld</a> since ", (long long)e->e.id,
			                 (long long)e->e.id);
			when(o, e->e.opened_at);
		} else {
			ng_strbuf_adds(o, "-");
		}
		ng_strbuf_adds(o, "</td><td><code>");
		esc(o, k->software);
		ng_strbuf_adds(o, "</code></td></tr>");
	}
	ng_strbuf_adds(o, "</table>\n");
}

static void timeline(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_adds(o, "<h2 id=\"timeline-section\">Timeline</h2><p>Per day: nodes warned, held, "
	                  "suspect and quarantined by admission, and GPUs found degraded or fatal "
	                  "between jobs (hover a day for the counts, admitted ones too). Red markers: "
	                  "fleet-regression events; blue dashes: a software identity first seen in a "
	                  "class.</p><p class=\"legend\"><span><i class=\"sw\" style=\"background:#ecc94b\">"
	                  "</i>admitted-warn</span><span><i class=\"sw\" style=\"background:#718096\"></i>"
	                  "held</span><span><i class=\"sw\" style=\"background:#805ad5\"></i>suspect</span>"
	                  "<span><i class=\"sw\" style=\"background:#e53e3e\"></i>quarantined</span><span>"
	                  "<i class=\"sw\" style=\"background:#dd6b20\"></i>GPU fault</span></p>");
	ng_report_svg_timeline(r, o);
	ng_strbuf_adds(o, "<h3 id=\"fleet-events\">Fleet-regression events</h3>");
	if (!r->n_events) {
		ng_strbuf_adds(o, "<p>None in the window.</p>");
		return;
	}
	ng_strbuf_adds(o, "<table><tr><th>id</th><th>class</th><th>opened</th><th>software</th>"
	                  "<th>coincided with</th><th>nodes</th><th>cleared</th></tr>");
	for (size_t k = 0; k < r->n_events; k++) {
		const struct ng_revent *e = &r->events[k];
		ng_strbuf_printf(o, "<tr id=\"fleet-row-%lld\" class=\"%s\" data-event=\"fleet-regression\" "
		                    "data-state=\"%s\" data-software=\"",
		                 (long long)e->e.id, e->e.cleared_at ? "cleared" : "open",
		                 e->e.cleared_at ? "cleared" : "open");
		esc(o, e->e.software);
		ng_strbuf_adds(o, "\" data-class=\"");
		esc(o, e->e.class_key);
		ng_strbuf_printf(o, "\"><td class=\"n\">%lld</td><td>", (long long)e->e.id);
		esc(o, e->e.class_key);
		ng_strbuf_adds(o, "</td><td>");
		when(o, e->e.opened_at);
		ng_strbuf_adds(o, "</td><td><code>");
		esc(o, e->e.software);
		ng_strbuf_adds(o, "</code></td><td>");
		if (e->software_changed) {
			ng_strbuf_adds(o, "software change: <code>");
			esc(o, e->prev_software);
			ng_strbuf_adds(o, "</code> &rarr; <code>");
			esc(o, e->e.software);
			ng_strbuf_adds(o, "</code>, first seen ");
			when(o, e->software_first);
		} else {
			ng_strbuf_adds(o, "no software change in the 3 days before: look at hardware, "
			                  "environment or fabric");
		}
		ng_strbuf_adds(o, "</td><td>");
		cJSON *nodes = cJSON_Parse(e->e.nodes ? e->e.nodes : "[]");
		const cJSON *it;
		int shown = 0, total = cJSON_GetArraySize(nodes);
		cJSON_ArrayForEach(it, nodes)
		{
			if (!cJSON_IsString(it) || shown == 8)
				continue;
			long n = ng_rmap_find(&r->node_map, it->valuestring);
			const char *name = n >= 0 && r->key_node[n] >= 0 ? r->nodes[r->key_node[n]].name
			                                                  : it->valuestring;
			ng_strbuf_adds(o, shown++ ? ", " : "");
			esc(o, name);
		}
		if (total > shown)
			ng_strbuf_printf(o, " and %d more", total - shown);
		cJSON_Delete(nodes);
		ng_strbuf_adds(o, "</td><td>");
		if (e->e.cleared_at) {
			when(o, e->e.cleared_at);
			ng_strbuf_adds(o, " by ");
			esc(o, e->e.cleared_by);
			ng_strbuf_adds(o, ": ");
			esc(o, e->e.clear_reason);
		} else {
			ng_strbuf_adds(o, "<b>open</b>");
		}
		ng_strbuf_adds(o, "</td></tr>");
	}
	ng_strbuf_adds(o, "</table>\n");
}

static void classes(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_printf(o, "<h2 id=\"distributions\">Nodes against their peers</h2><p>Each dot is one "
	                    "node's median over its runs of the last %lld days, as a share of the class "
	                    "baseline median. A node is flagged below the larger of the floor and %.0f%% "
	                    "of the median.</p>",
	                 (long long)(r->o.recent_days < r->o.days ? r->o.recent_days : r->o.days),
	                 r->flag_fraction * 100);
	legend(o);
	for (size_t c = 0; c < r->class_map.n; c++) {
		bool any = false;
		for (size_t s = 0; s < r->n_series; s++)
			any |= r->series[s].cls == c;
		if (!any)
			continue;
		ng_strbuf_printf(o, "<section id=\"class-%zu\" class=\"class\" data-class=\"", c);
		esc(o, r->class_map.keys[c]);
		ng_strbuf_adds(o, "\"><h3>Class <code>");
		esc(o, r->class_map.keys[c]);
		ng_strbuf_adds(o, "</code></h3>");
		for (size_t s = 0; s < r->n_series; s++) {
			const struct ng_rseries *se = &r->series[s];
			if (se->cls != c)
				continue;
			ng_strbuf_printf(o, "<div class=\"series\" id=\"series-%zu\" data-metric=\"", s);
			esc(o, se->metric);
			ng_strbuf_adds(o, "\"><p><b>");
			esc(o, se->metric);
			ng_strbuf_printf(o, "</b>: %zu nodes, <b>%zu below the bar</b>", se->n_pts, se->n_flagged);
			if (isfinite(se->median)) {
				ng_strbuf_printf(o, "; baseline %.4g ", se->median);
				esc(o, se->unit);
				ng_strbuf_printf(o, " from %lld nodes (<code>", (long long)se->baseline_nodes);
				esc(o, se->software);
				ng_strbuf_adds(o, "</code>, built ");
				when(o, se->baseline_built);
				ng_strbuf_printf(o, "), bar %.4g", se->bar);
			} else {
				ng_strbuf_adds(o, "; <b>no baseline</b>: positions are against the plotted nodes' mean");
			}
			if (isfinite(se->floor))
				ng_strbuf_printf(o, ", floor %.4g", se->floor);
			if (isfinite(se->prev_median)) {
				ng_strbuf_printf(o, "; baseline before the software change %.4g (<code>",
				                 se->prev_median);
				esc(o, se->prev_software);
				ng_strbuf_printf(o, "</code>: now %.1f%% of it)", se->median / se->prev_median * 100);
			}
			ng_strbuf_adds(o, "</p>");
			ng_report_svg_strip(r, se, o);
			ng_report_html_named(r, se, o);
			ng_strbuf_adds(o, "</div>");
		}
		ng_strbuf_adds(o, "</section>\n");
	}
}

/* The first failed metric of a case's evidence, in words. */
static void evidence(ng_strbuf *o, const char *text)
{
	cJSON *ev = cJSON_Parse(text ? text : "{}");
	const cJSON *failed = ng_json_get(ev, "failed"), *f;
	int n = 0;
	cJSON_ArrayForEach(f, failed)
	{
		if (n++ == 2)
			break;
		const cJSON *m = ng_json_get(f, "metric"), *v = ng_json_get(f, "value"),
		            *b = ng_json_get(f, "bar"), *p = ng_json_get(f, "percent_of_median"),
		            *st = ng_json_get(f, "stage"), *s = ng_json_get(f, "status");
		ng_strbuf_adds(o, n > 1 ? "; " : "");
		if (cJSON_IsString(st)) {
			esc(o, st->valuestring);
			ng_strbuf_adds(o, " ");
		}
		esc(o, cJSON_IsString(m) ? m->valuestring : "?");
		if (cJSON_IsNumber(v))
			ng_strbuf_printf(o, " %.4g", v->valuedouble);
		if (cJSON_IsNumber(b))
			ng_strbuf_printf(o, " (bar %.4g", b->valuedouble);
		if (cJSON_IsNumber(p))
			ng_strbuf_printf(o, ", %.0f%% of median", p->valuedouble);
		if (cJSON_IsNumber(b))
			ng_strbuf_adds(o, ")");
		if (cJSON_IsString(s)) {
			ng_strbuf_adds(o, " ");
			esc(o, s->valuestring);
		}
	}
	if (!n)
		ng_strbuf_adds(o, "-");
	cJSON_Delete(ev);
}

static void quarantine(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_adds(o, "<h2 id=\"quarantine\">Quarantine</h2><table id=\"quarantine-list\"><tr><th>case"
	                  "</th><th>node</th><th>class</th><th>failed</th><th>opened</th><th>age</th>"
	                  "<th>passes</th><th>evidence</th><th>release condition</th></tr>");
	size_t shown = 0;
	for (size_t i = 0; i < r->n_cases; i++) {
		const struct ng_rcase *c = &r->cases[i];
		if (c->c.closed_at)
			continue;
		shown++;
		const struct ng_rnode *n = &r->nodes[c->node];
		ng_strbuf_printf(o, "<tr id=\"case-%lld\" class=\"open\" data-state=\"quarantined\" data-node=\"",
		                 (long long)c->c.id);
		esc(o, n->name);
		ng_strbuf_printf(o, "\"><td class=\"n\">%lld</td><td class=\"nm\">", (long long)c->c.id);
		esc(o, n->name);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->c.class_key);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->c.domain);
		ng_strbuf_adds(o, " ");
		esc(o, c->c.metric);
		ng_strbuf_adds(o, "</td><td>");
		when(o, c->c.opened_at);
		ng_strbuf_adds(o, "</td><td>");
		age(o, r->o.now - c->c.opened_at);
		ng_strbuf_printf(o, "</td><td class=\"n\">%lld of %lld runs</td><td>", (long long)c->c.passes,
		                 (long long)c->c.retries);
		evidence(o, c->c.evidence);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->c.release_condition);
		ng_strbuf_adds(o, "</td></tr>");
	}
	ng_strbuf_adds(o, "</table>");
	if (!shown)
		ng_strbuf_adds(o, "<p>No node is quarantined.</p>");
	ng_strbuf_adds(o, "\n");
}

/* Each node's last GPU check, by outcome: a fleet-wide monitoring failure
 * reads as one event, not as healthy nodes. */
static void gpu_checks(const struct ng_report *r, ng_strbuf *o)
{
	static const char *const modes[] = {"epilog", "prolog", "health"};
	static const char *const outcomes[] = {"ok", "transient", "unresponsive", "unknown", "n/a", "degraded",
	                                       "fatal"};
	struct ng_gpu_check_summary gs;
	ng_report_gpu_checks(r, &gs);
	ng_strbuf_printf(o, "<h2 id=\"gpu-checks\">GPU checks</h2><p>Each node's last epilog, prolog and "
	                    "health check, by outcome (%zu nodes).</p>",
	                 gs.nodes);
	if (gs.event)
		ng_strbuf_printf(o, "<p class=\"event\">Monitoring failure: %zu of %zu nodes could not be checked "
		                    "(unknown or n/a) at their last check: NVML, the driver or the hooks, not the "
		                    "GPUs. These nodes are not known healthy.</p>",
		                 gs.failing, gs.nodes);
	if (!r->n_gpu_runs) {
		ng_strbuf_adds(o, "<p>No GPU check is kept in this store.</p>\n");
		return;
	}
	ng_strbuf_adds(o, "<table id=\"gpu-check-list\"><tr><th>check</th>");
	for (size_t k = 0; k < sizeof outcomes / sizeof *outcomes; k++)
		ng_strbuf_printf(o, "<th>%s</th>", outcomes[k]);
	ng_strbuf_adds(o, "</tr>");
	for (size_t m = 0; m < 3; m++) {
		ng_strbuf_printf(o, "<tr><td>%s</td>", modes[m]);
		for (size_t k = 0; k < sizeof outcomes / sizeof *outcomes; k++) {
			size_t n = 0;
			for (size_t i = 0; i < r->n_gpu_runs; i++)
				n += strcmp(r->gpu_runs[i].mode, modes[m]) == 0 &&
				     strcmp(r->gpu_runs[i].outcome, outcomes[k]) == 0;
			ng_strbuf_printf(o, "<td>%zu</td>", n);
		}
		ng_strbuf_adds(o, "</tr>");
	}
	ng_strbuf_adds(o, "</table>\n");
}

static void gpu_hours(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_adds(o, "<h2 id=\"gpu-hours\">GPU-hours lost</h2><p>Job accounting: ");
	esc(o, r->jobs_source[0] ? r->jobs_source : "none");
	ng_strbuf_adds(o, ".</p>");
	if (r->have_jobs) {
		ng_strbuf_printf(o,
		                 "<p id=\"gpu-hours-total\" data-node-fault-hours=\"%.1f\" data-job-failure-hours="
		                 "\"%.1f\"><b>%.1f</b> GPU-hours lost to node faults (%zu jobs, %zu where Slurm "
		                 "named no node), <b>%.1f</b> to job failures (%zu jobs), %.1f completed on a GPU "
		                 "its own epilog then found faulty (%zu jobs: results suspect). Node faults "
		                 "justify hardware; job failures are the job owner's to fix.</p>",
		                 r->gh_total.node_fault_hours, r->gh_total.job_failure_hours,
		                 r->gh_total.node_fault_hours, r->gh_counts.jobs_node_fault,
		                 r->gh_counts.jobs_node_fault_unlocated, r->gh_total.job_failure_hours,
		                 r->gh_counts.jobs_job_failure, r->gh_total.suspect_hours,
		                 r->gh_counts.jobs_suspect);
		ng_strbuf_adds(o, "<table id=\"gpu-hours-by-class\"><tr><th>class</th><th>node faults</th>"
		                  "<th>job failures</th><th>suspect</th></tr>");
		for (size_t c = 0; c < r->class_map.n; c++) {
			const ng_gh_tally *t = &r->classes[c].gh;
			if (r->o.class_key && strcmp(r->o.class_key, r->class_map.keys[c]) != 0)
				continue;
			ng_strbuf_adds(o, "<tr><td>");
			esc(o, r->class_map.keys[c]);
			ng_strbuf_adds(o, "</td><td class=\"n\">");
			hours(o, t->node_fault_hours);
			ng_strbuf_adds(o, "</td><td class=\"n\">");
			hours(o, t->job_failure_hours);
			ng_strbuf_adds(o, "</td><td class=\"n\">");
			hours(o, t->suspect_hours);
			ng_strbuf_adds(o, "</td></tr>");
		}
		ng_strbuf_adds(o, "</table>");
	} else {
		ng_strbuf_adds(o, "<p>No GPU-hours without job accounting: the nodes below are ranked by "
		                  "what was found on them.</p>");
	}
	size_t n = 0;
	size_t *top = ng_report_top_nodes(r, &n);
	ng_strbuf_printf(o, "<h3>Top %zu nodes by GPU-hours lost to node faults</h3>"
	                    "<table id=\"top-nodes\"><tr><th>#</th><th>node</th><th>class</th><th>state</th>"
	                    "<th>node-fault GPU-h</th><th>jobs</th><th>job-failure GPU-h</th>"
	                    "<th>suspect GPU-h</th><th>GPU faults (epilog / health)</th><th>quarantines"
	                    "</th></tr>",
	                 n);
	for (size_t i = 0; top && i < n; i++) {
		const struct ng_rnode *nd = &r->nodes[top[i]];
		ng_strbuf_printf(o, "<tr data-node=\"");
		esc(o, nd->name);
		ng_strbuf_printf(o, "\" data-node-fault-hours=\"%.1f\"><td class=\"n\">%zu</td>"
		                    "<td class=\"nm\">",
		                 nd->gh.node_fault_hours, i + 1);
		esc(o, nd->name);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, cls_name(r, nd->cls));
		ng_strbuf_adds(o, "</td><td>");
		esc(o, ng_report_state_of(r, top[i]));
		ng_strbuf_adds(o, "</td><td class=\"n\">");
		if (r->have_jobs) {
			hours(o, nd->gh.node_fault_hours);
			ng_strbuf_printf(o, "</td><td class=\"n\">%.1f</td><td class=\"n\">", nd->gh.node_fault_jobs);
			hours(o, nd->gh.job_failure_hours);
			ng_strbuf_adds(o, "</td><td class=\"n\">");
			hours(o, nd->gh.suspect_hours);
		} else {
			ng_strbuf_adds(o, "-</td><td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-");
		}
		ng_strbuf_printf(o, "</td><td class=\"n\">%zu / %zu</td><td class=\"n\">%zu</td></tr>",
		                 nd->epilog_faults, nd->health_faults, nd->quarantines);
	}
	free(top);
	ng_strbuf_adds(o, "</table>\n");
}

static void false_rejects(const struct ng_report *r, ng_strbuf *o)
{
	ng_strbuf_printf(o,
	                 "<h2 id=\"false-rejects\">False rejects and later stragglers</h2><p>Per class and "
	                 "policy version. <i>Released, same hardware</i>: quarantines released with no "
	                 "change in the hardware part of the node's profile &mdash; possible false "
	                 "rejects (a cable or cooling repair leaves no trace there; see the reasons "
	                 "below) unless the node was quarantined again or found faulty since, which "
	                 "makes it a repeat offender, not a false reject. <i>Later stragglers</i>: "
	                 "admissions followed within %lld days by a quarantine, a flagged screen or a "
	                 "GPU fault on the same node.</p>"
	                 "<table id=\"false-reject-table\"><tr><th>class</th><th>policy</th><th>admissions"
	                 "</th><th>later stragglers</th><th>quarantines</th><th>released, same hardware"
	                 "</th><th>possible false rejects</th><th>released, hardware changed</th>"
	                 "<th>released, unknown</th><th>still open</th></tr>",
	                 (long long)r->o.straggle_days);
	for (size_t i = 0; i < r->n_fr; i++) {
		const struct ng_rfr *f = &r->fr[i];
		ng_strbuf_adds(o, "<tr data-class=\"");
		esc(o, cls_name(r, (long)f->cls));
		ng_strbuf_adds(o, "\" data-policy=\"");
		esc(o, f->policy);
		ng_strbuf_adds(o, "\"><td>");
		esc(o, cls_name(r, (long)f->cls));
		ng_strbuf_adds(o, "</td><td><code>");
		esc(o, f->policy);
		ng_strbuf_printf(o, "</code></td><td class=\"n\">%zu</td><td class=\"n\">%zu (%.2f%%)</td>"
		                    "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
		                    "<td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
		                    "<td class=\"n\">%zu</td></tr>",
		                 f->admissions, f->straggled,
		                 f->admissions ? 100.0 * (double)f->straggled / (double)f->admissions : 0.0,
		                 f->quarantines, f->released_same, f->possible_false_rejects,
		                 f->released_changed, f->released_unknown,
		                 f->still_open);
	}
	ng_strbuf_adds(o, "</table><h3>Released quarantines</h3><table id=\"released\"><tr><th>case</th>"
	                  "<th>node</th><th>failed</th><th>opened</th><th>released</th><th>by</th>"
	                  "<th>reason</th><th>hardware</th></tr>");
	for (size_t i = 0; i < r->n_cases; i++) {
		const struct ng_rcase *c = &r->cases[i];
		if (!c->c.closed_at)
			continue;
		ng_strbuf_printf(o, "<tr id=\"released-%lld\" data-node=\"", (long long)c->c.id);
		esc(o, r->nodes[c->node].name);
		ng_strbuf_printf(o, "\" data-release=\"%s\" data-possible-false-reject=\"%s\"><td class=\"n\">"
		                    "%lld</td><td class=\"nm\">",
		                 ng_case_class_name(c->klass),
		                 c->klass == NG_CASE_RELEASED_SAME_HW && !c->after_release ? "true" : "false",
		                 (long long)c->c.id);
		esc(o, r->nodes[c->node].name);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->c.metric);
		ng_strbuf_adds(o, "</td><td>");
		when(o, c->c.opened_at);
		ng_strbuf_adds(o, "</td><td>");
		when(o, c->c.closed_at);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->c.closed_by);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->c.close_reason);
		ng_strbuf_adds(o, "</td><td>");
		esc(o, c->klass == NG_CASE_RELEASED_SAME_HW
		           ? (c->after_release ? "same" : "same: possible false reject")
		       : c->klass == NG_CASE_RELEASED_HW_CHANGED ? "changed"
		                                                 : "unknown (no profile before or after)");
		if (c->after_release) {
			ng_strbuf_adds(o, "; <b class=\"alarm\">");
			esc(o, c->after_release);
			ng_strbuf_adds(o, "</b>");
		}
		ng_strbuf_adds(o, "</td></tr>");
	}
	ng_strbuf_adds(o, "</table>\n");
}

int ng_report_html(const struct ng_report *r, ng_strbuf *o)
{
	header(r, o);
	config_errors(r, o);
	ng_report_html_attention(r, o);
	breaker(r, o);
	timeline(r, o);
	classes(r, o);
	quarantine(r, o);
	gpu_checks(r, o);
	gpu_hours(r, o);
	false_rejects(r, o);
	ng_strbuf_adds(o, "<p class=\"meta\">Made by nodegate report. docs/report.md says how each "
	                  "number is counted.</p></body></html>\n");
	return o->oom ? -1 : 0;
}

static double loss_of(const struct ng_rnode *n)
{
	return n->gh.node_fault_hours;
}

static int by_loss(const void *a, const void *b, void *arg)
{
	const struct ng_report *r = arg;
	const struct ng_rnode *x = &r->nodes[*(const size_t *)a];
	const struct ng_rnode *y = &r->nodes[*(const size_t *)b];
	double lx = loss_of(x), ly = loss_of(y);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	size_t fx = x->epilog_faults + x->health_faults + x->quarantines;
	size_t fy = y->epilog_faults + y->health_faults + y->quarantines;
	if (fx != fy)
		return fx > fy ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t *ng_report_top_nodes(const struct ng_report *r, size_t *n)
{
	size_t *idx = malloc((r->n_nodes ? r->n_nodes : 1) * sizeof *idx);
	*n = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct ng_rnode *nd = &r->nodes[i];
		if (r->o.class_key &&
		    (nd->cls < 0 || strcmp(r->class_map.keys[nd->cls], r->o.class_key) != 0))
			continue;
		if (loss_of(nd) > 0 || nd->epilog_faults + nd->health_faults + nd->quarantines > 0)
			idx[(*n)++] = i;
	}
	qsort_r(idx, *n, sizeof *idx, by_loss, (void *)r);
	if (*n > (size_t)r->o.top)
		*n = (size_t)r->o.top;
	return idx;
}
