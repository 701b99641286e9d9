/* The report's plots, as inline SVG: no script, no font or file from
 * anywhere. Every mark a test (or a person with the inspector) may look
 * for carries data- attributes: data-node and data-state on each node's
 * dot, data-event on each fleet-regression line. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "flow/report_doc.h"

#define W 760.0
#define STRIP_H 150.0
#define LEFT 40.0
#define RIGHT 20.0
#define BAND_TOP 22.0
#define BAND_H 90.0

/* A fixed jitter per node, so the same fleet draws the same picture. */
static double jitter(size_t node, size_t series)
{
	uint64_t h = (uint64_t)node * 0x9E3779B97F4A7C15ull ^ (uint64_t)series * 0xC2B2AE3D27D4EB4Full;
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return (double)(h % 10000) / 10000.0;
}

static void vline(ng_strbuf *o, double x, const char *cls, const char *label, double label_y)
{
	ng_strbuf_printf(o, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", cls,
	                 x, x, BAND_TOP - 6, BAND_TOP + BAND_H + 4);
	if (label) {
		ng_strbuf_printf(o, "<text class=\"lbl %s\" x=\"%.1f\" y=\"%.1f\">", cls, x + 3, label_y);
		ng_html_escape(o, label);
		ng_strbuf_adds(o, "</text>");
	}
}

void ng_report_svg_strip(const struct ng_report *r, const struct ng_rseries *s, ng_strbuf *o)
{
	size_t sidx = (size_t)(s - r->series);
	/* Values as a share of the baseline median (or, with none, of the
	 * plotted nodes' own median), so every metric reads the same way. */
	double ref = s->median;
	if (!isfinite(ref) || ref <= 0) {
		double sum = 0;
		for (size_t i = 0; i < s->n_pts; i++)
			sum += s->pts[i].value;
		ref = s->n_pts ? sum / (double)s->n_pts : 1;
	}
	double lo = 0.7, hi = 1.15;
	for (size_t i = 0; i < s->n_pts; i++) {
		double v = s->pts[i].value / ref;
		if (v < lo)
			lo = v;
		if (v > hi)
			hi = v;
	}
	if (isfinite(s->floor) && s->floor / ref < lo)
		lo = s->floor / ref;
	lo = floor(fmax(lo, 0.0) * 10) / 10 - 0.02;
	hi = ceil(fmin(hi, 3.0) * 10) / 10 + 0.02;
	double span = hi - lo;
#define X(v) (LEFT + ((v) / ref - lo) / span * (W - LEFT - RIGHT))
	ng_strbuf_printf(o,
	                 "<svg class=\"strip\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\""
	                 " role=\"img\" data-series=\"%zu\">",
	                 W, STRIP_H, W, STRIP_H, sidx);
	ng_strbuf_printf(o, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
	                 LEFT, BAND_TOP, W - LEFT - RIGHT, BAND_H);
	for (double t = ceil(lo * 10) / 10; t <= hi + 1e-9; t += 0.1) {
		double x = LEFT + (t - lo) / span * (W - LEFT - RIGHT);
		ng_strbuf_printf(o,
		                 "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
		                 "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">%.0f%%</text>",
		                 x, x, BAND_TOP + BAND_H, BAND_TOP + BAND_H + 5, x - 10,
		                 BAND_TOP + BAND_H + 17, t * 100);
	}
	char label[160];
	if (isfinite(s->prev_median)) {
		snprintf(label, sizeof label, "baseline of %s", s->prev_software);
		vline(o, X(s->prev_median), "prev", label, BAND_TOP - 9);
	}
	if (isfinite(s->median)) {
		snprintf(label, sizeof label, "baseline %.4g %s", s->median, s->unit);
		vline(o, X(s->median), "median", label, BAND_TOP + BAND_H + 30);
	}
	if (isfinite(s->bar) && (!isfinite(s->floor) || s->bar > s->floor)) {
		snprintf(label, sizeof label, "%.0f%% bar", r->flag_fraction * 100);
		vline(o, X(s->bar), "bar", label, BAND_TOP + BAND_H + 30);
	}
	if (isfinite(s->floor)) {
		snprintf(label, sizeof label, "floor %.4g", s->floor);
		vline(o, X(s->floor), "floor", label, BAND_TOP - 9);
	}
	/* Healthy dots first, marked ones last so they draw on top. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->n_pts; i++) {
			const struct ng_rpoint *p = &s->pts[i];
			const struct ng_rnode *n = &r->nodes[p->node];
			const char *state = ng_report_state_of(r, p->node);
			bool flagged = isfinite(s->bar) && p->value < s->bar;
			bool marked = flagged || n->case_id || strcmp(state, "suspect") == 0 ||
			              strcmp(state, "held") == 0;
			if (marked != (pass == 1))
				continue;
			double x = X(p->value);
			if (x < LEFT)
				x = LEFT;
			double y = BAND_TOP + 6 + jitter(p->node, sidx) * (BAND_H - 12);
			ng_strbuf_printf(o,
			                 "<circle id=\"s%zu-n%zu\" class=\"pt %s%s\" cx=\"%.1f\" cy=\"%.1f\""
			                 " r=\"%s\" data-node=\"",
			                 sidx, p->node, state, flagged ? " flagged" : "", x, y,
			                 marked ? "3.6" : "2.2");
			ng_html_escape(o, n->name);
			ng_strbuf_printf(o, "\" data-state=\"%s\" data-flagged=\"%s\" data-value=\"%.6g\">",
			                 state, flagged ? "true" : "false", p->value);
			if (marked) {
				ng_strbuf_adds(o, "<title>");
				ng_html_escape(o, n->name);
				ng_strbuf_printf(o, ": %.4g %s (%.1f%% of baseline), %s%s</title>", p->value,
				                 s->unit, p->value / ref * 100, state, flagged ? ", below the bar" : "");
			}
			ng_strbuf_adds(o, "</circle>");
		}
	}
	/* The lowest marked nodes named on the plot itself, so a screenshot
	 * names them (the list below the plot names the rest). */
	enum { LABELS = 5 };
	size_t lab[LABELS], n_lab = 0;
	for (size_t i = 0; i < s->n_pts; i++) {
		const struct ng_rpoint *p = &s->pts[i];
		const char *state = ng_report_state_of(r, p->node);
		bool marked = (isfinite(s->bar) && p->value < s->bar) || strcmp(state, "quarantined") == 0 ||
		              strcmp(state, "suspect") == 0 || strcmp(state, "held") == 0;
		if (!marked)
			continue;
		size_t at = n_lab < LABELS ? n_lab++ : LABELS;
		if (at == LABELS) {
			if (p->value >= s->pts[lab[LABELS - 1]].value)
				continue;
			at = LABELS - 1;
		}
		while (at > 0 && s->pts[lab[at - 1]].value > p->value) {
			lab[at] = lab[at - 1];
			at--;
		}
		lab[at] = i;
	}
	for (size_t k = 0; k < n_lab; k++) {
		const struct ng_rpoint *p = &s->pts[lab[k]];
		double x = X(p->value);
		if (x < LEFT)
			x = LEFT;
		double y = BAND_TOP + 6 + jitter(p->node, sidx) * (BAND_H - 12);
		ng_strbuf_printf(o, "<text class=\"dotlbl\" x=\"%.1f\" y=\"%.1f\" data-label-node=\"", x + 5,
		                 y + 3);
		ng_html_escape(o, r->nodes[p->node].name);
		ng_strbuf_adds(o, "\">");
		ng_html_escape(o, r->nodes[p->node].name);
		ng_strbuf_adds(o, "</text>");
	}
#undef X
	ng_strbuf_adds(o, "</svg>");
}

static void date_of(int64_t t, char out[16])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 16, "%m-%d", &tm);
}

/* A tick step of 1, 2 or 5 times a power of ten, so that at most `ticks`
 * steps reach max. */
static size_t tick_step(size_t max, size_t ticks)
{
	for (size_t p = 1;; p *= 10)
		for (size_t m = 1; m <= 5; m += m == 1 ? 1 : 3)
			if (m * p * ticks >= max)
				return m * p;
}

/* A lane's y axis: grid lines and labelled ticks from 0 to *top (rounded
 * up to a whole step), about `ticks` steps. */
static void y_axis(ng_strbuf *o, const char *lane, double y0, double lane_h, size_t ticks,
                   size_t *top)
{
	size_t step = tick_step(*top ? *top : 1, ticks);
	*top = (((*top ? *top : 1) + step - 1) / step) * step;
	for (size_t v = 0; v <= *top; v += step) {
		double y = y0 + lane_h - (double)v / (double)*top * lane_h;
		ng_strbuf_printf(o, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
		                    "<text class=\"axis ytick\" data-lane=\"%s\" data-tick=\"%zu\" x=\"%.1f\" "
		                    "y=\"%.1f\" text-anchor=\"end\">%zu</text>",
		                 LEFT - 3, W - RIGHT, y, y, lane, v, LEFT - 5, y + 3.5, v);
	}
}

void ng_report_svg_timeline(const struct ng_report *r, ng_strbuf *o)
{
	/* Two lanes, each with its own scale: admission outcomes above, GPU
	 * faults below, so a day with 3 GPU faults beside 300 warnings still
	 * shows its bar. */
	const double h = 250, top = 30, plot_h = 110, gap = 22, fault_h = 50;
	const double fault_top = top + plot_h + gap;
	const double pw = W - LEFT - RIGHT;
	size_t nd = r->n_days ? r->n_days : 1;
	double bw = pw / (double)nd;
	size_t max = 0, max_faults = 0;
	for (size_t d = 0; d < r->n_days; d++) {
		size_t t = 0;
		for (int k = NG_RDAY_WARN; k < NG_RDAY_OUTCOMES; k++)
			t += r->days[d].outcomes[k];
		if (t > max)
			max = t;
		if (r->days[d].gpu_faults > max_faults)
			max_faults = r->days[d].gpu_faults;
	}
	ng_strbuf_printf(o,
	                 "<svg id=\"timeline\" class=\"timeline\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\""
	                 " height=\"%.0f\" role=\"img\">",
	                 W, h, W, h);
	ng_strbuf_printf(o, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
	                    "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
	                 LEFT, top, pw, plot_h, LEFT, fault_top, pw, fault_h);
	y_axis(o, "admission", top, plot_h, 4, &max);
	y_axis(o, "gpu-faults", fault_top, fault_h, 2, &max_faults);
	ng_strbuf_printf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">nodes warned, held, suspect, "
	                    "quarantined</text><text class=\"axis\" x=\"%.1f\" y=\"%.1f\">GPUs found "
	                    "degraded or fatal</text>",
	                 LEFT + 4, top - 4, LEFT + 4, fault_top - 4);
	static const char *const cls[NG_RDAY_OUTCOMES] = {"admitted", "admitted-warn", "held",
	                                                  "suspect", "quarantined"};
	for (size_t d = 0; d < r->n_days; d++) {
		const struct ng_rday *day = &r->days[d];
		double x = LEFT + (double)d * bw, y = top + plot_h;
		char date[16];
		date_of(r->since + (int64_t)d * 86400, date);
		ng_strbuf_printf(o, "<g class=\"day\" data-day=\"%s\"><title>%s: %zu admitted, %zu warned,"
		                    " %zu held, %zu suspect, %zu quarantined, %zu GPU faults</title>",
		                 date, date, day->outcomes[0], day->outcomes[1], day->outcomes[2],
		                 day->outcomes[3], day->outcomes[4], day->gpu_faults);
		for (int k = NG_RDAY_WARN; k < NG_RDAY_OUTCOMES; k++) {
			size_t v = day->outcomes[k];
			if (!v)
				continue;
			double bh = (double)v / (double)max * plot_h;
			y -= bh;
			ng_strbuf_printf(o, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
			                 cls[k], x + 0.5, y, bw > 2 ? bw - 1 : bw, bh);
		}
		if (day->gpu_faults) {
			double bh = (double)day->gpu_faults / (double)max_faults * fault_h;
			ng_strbuf_printf(o, "<rect class=\"gpufault\" data-gpu-faults=\"%zu\" x=\"%.1f\" y=\"%.1f\" "
			                    "width=\"%.1f\" height=\"%.1f\"/>",
			                 day->gpu_faults, x + 0.5, fault_top + fault_h - bh, bw > 2 ? bw - 1 : bw, bh);
		}
		ng_strbuf_adds(o, "</g>");
		if (d % (nd > 20 ? 5 : 1) == 0)
			ng_strbuf_printf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">%s</text>", x,
			                 fault_top + fault_h + 14, date);
	}
	/* Software identities that appeared within the window. */
	for (size_t i = 0; i < r->n_sw; i++) {
		const struct ng_rsw *s = &r->sw[i];
		bool older = false;
		for (size_t k = 0; k < r->n_sw; k++)
			older |= r->sw[k].cls == s->cls && r->sw[k].first < s->first;
		if (!older || s->first < r->since || s->first > r->o.now)
			continue;
		double x = LEFT + (double)(s->first - r->since) / 86400.0 * bw;
		ng_strbuf_printf(o, "<line class=\"swchange\" data-software-change=\"");
		ng_html_escape(o, s->software);
		ng_strbuf_adds(o, "\" data-class=\"");
		ng_html_escape(o, r->class_map.keys[s->cls]);
		ng_strbuf_printf(o, "\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"><title>software ", x,
		                 x, top - 4, fault_top + fault_h);
		ng_html_escape(o, s->software);
		ng_strbuf_adds(o, " first seen in ");
		ng_html_escape(o, r->class_map.keys[s->cls]);
		ng_strbuf_adds(o, "</title></line>");
	}
	for (size_t k = 0; k < r->n_events; k++) {
		const struct ng_revent *e = &r->events[k];
		if (e->e.opened_at < r->since)
			continue;
		double x = LEFT + (double)(e->e.opened_at - r->since) / 86400.0 * bw;
		ng_strbuf_printf(o, "<g id=\"fleet-event-%lld\" class=\"fleetevent\" data-event=\"fleet-regression\""
		                    " data-state=\"%s\" data-software=\"",
		                 (long long)e->e.id, e->e.cleared_at ? "cleared" : "open");
		ng_html_escape(o, e->e.software);
		ng_strbuf_adds(o, "\" data-class=\"");
		ng_html_escape(o, e->e.class_key);
		ng_strbuf_printf(o, "\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
		                    "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/><title>fleet regression %lld: ",
		                 x, x, top - 10, fault_top + fault_h, x - 5, top - 18, x + 5, top - 18, x, top - 8,
		                 (long long)e->e.id);
		ng_html_escape(o, e->e.class_key);
		ng_strbuf_adds(o, ", software ");
		ng_html_escape(o, e->e.software);
		ng_strbuf_adds(o, "</title></g>");
	}
	ng_strbuf_adds(o, "</svg>");
}
