/* The report's policy sections (docs/policy-changes.md): a replay's file
 * (`nodegate policy replay --json`) given with --replay, and the shadow
 * policy's would-be quarantines and drains over the report's window. Kept
 * apart from the report's own model: they are spliced in last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_file.h"
#include "flow/report_doc.h"
#include "flow/report_policy.h"
#include "flow/shadow.h"

int ng_report_policy_load(ng_store *st, int64_t since, const char *replay_file, cJSON **replay,
                          cJSON **shadow, ng_err *err)
{
	*replay = *shadow = NULL;
	if (replay_file) {
		char *text;
		size_t len;
		ng_err lerr;
		*replay = ng_load_json_file(replay_file, &text, &len, &lerr);
		free(text);
		if (!*replay)
			return ng_fail_as(err, NG_ERR_INPUT, "--replay: %s", lerr.msg);
		const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(*replay, "schema"));
		if (!schema || strcmp(schema, "nodegate/replay/1") != 0) {
			cJSON_Delete(*replay);
			*replay = NULL;
			return ng_fail_as(err, NG_ERR_INPUT, "--replay %s: not the output of `nodegate "
			                  "policy replay --json` (schema nodegate/replay/1)", replay_file);
		}
	}
	ng_err serr;
	if (ng_flow_shadow_summary(st, since, NULL, shadow, &serr) < 0) {
		cJSON_Delete(*replay);
		*replay = NULL;
		return ng_fail_as(err, NG_ERR_STORE, "%s", serr.msg);
	}
	/* No shadow run and nothing it judged in the window: no section. */
	if (!cJSON_IsString(cJSON_GetObjectItem(*shadow, "policy")) &&
	    !cJSON_GetArraySize(cJSON_GetObjectItem(*shadow, "evaluated"))) {
		cJSON_Delete(*shadow);
		*shadow = NULL;
	}
	return 0;
}

void ng_report_policy_json(cJSON *doc, const cJSON *replay, const cJSON *shadow)
{
	if (replay)
		cJSON_AddItemToObject(doc, "replay", cJSON_Duplicate(replay, true));
	if (shadow)
		cJSON_AddItemToObject(doc, "shadow", cJSON_Duplicate(shadow, true));
}

static const char *s_of(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return s ? s : "";
}

static double n_of(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static void cell(ng_strbuf *o, const char *s)
{
	ng_strbuf_adds(o, "<td>");
	ng_html_escape(o, s);
	ng_strbuf_adds(o, "</td>");
}

static void num_cell(ng_strbuf *o, double v)
{
	if (isfinite(v))
		ng_strbuf_printf(o, "<td>%g</td>", v);
	else
		ng_strbuf_adds(o, "<td>-</td>");
}

#define CHANGED_SHOWN 200

/* The GPU checks judged again from their readings. */
static void replay_gpu_html(const cJSON *g, ng_strbuf *o)
{
	if (!g)
		return;
	ng_strbuf_printf(o, "<p>GPU checks: %g runs, %g judged again from their readings, %g "
	                    "change; %g with no readings kept (not judged again).</p>",
	                 n_of(g, "runs"), n_of(g, "rejudged"), n_of(g, "changed_count"),
	                 n_of(cJSON_GetObjectItem(g, "no_readings"), "runs"));
	ng_strbuf_adds(o, "<table id=\"replay-gpu-changed\"><tr><th>node</th><th>verb</th>"
	                  "<th>current</th><th>proposed</th><th>GPU</th><th>signal</th></tr>");
	size_t k = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(g, "changed"))
	{
		if (k++ == CHANGED_SHOWN)
			break;
		const cJSON *gpu = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "gpus"), 0);
		ng_strbuf_adds(o, "<tr>");
		cell(o, *s_of(e, "node_name") ? s_of(e, "node_name") : s_of(e, "node"));
		cell(o, s_of(e, "mode"));
		cell(o, s_of(e, "current"));
		cell(o, s_of(e, "proposed"));
		num_cell(o, gpu ? n_of(gpu, "index") : NAN);
		cell(o, gpu ? s_of(gpu, "signal") : "");
		ng_strbuf_adds(o, "</tr>");
	}
	ng_strbuf_adds(o, "</table>");
}

static void replay_html(const cJSON *r, ng_strbuf *o)
{
	const cJSON *p = cJSON_GetObjectItem(r, "proposed"), *w = cJSON_GetObjectItem(r, "window");
	ng_strbuf_adds(o, "<h2 id=\"policy-replay\">Policy replay: ");
	ng_html_escape(o, s_of(p, "version"));
	ng_strbuf_adds(o, " (");
	ng_html_escape(o, s_of(p, "source"));
	ng_strbuf_printf(o, ")</h2><p>The last %g days' admission decisions decided again under the "
	                    "proposed policy and, as the control, under the policy that decided "
	                    "each: %g decisions, %g replayed, %g changed, %g not replayed.</p>",
	                 n_of(w, "days"), n_of(r, "decisions"), n_of(r, "replayed"),
	                 n_of(r, "changed_count"),
	                 n_of(cJSON_GetObjectItem(r, "not_replayed"), "runs"));
	ng_strbuf_adds(o, "<table id=\"replay-summary\"><tr><th>outcome</th><th>current</th>"
	                  "<th>proposed</th><th>recorded</th></tr>");
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r, "summary"))
	{
		ng_strbuf_adds(o, "<tr>");
		cell(o, e->string);
		num_cell(o, n_of(e, "current"));
		num_cell(o, cJSON_IsNumber(cJSON_GetObjectItem(e, "proposed")) ? n_of(e, "proposed") : NAN);
		num_cell(o, cJSON_IsNumber(cJSON_GetObjectItem(e, "recorded")) ? n_of(e, "recorded") : NAN);
		ng_strbuf_adds(o, "</tr>");
	}
	const cJSON *q = cJSON_GetObjectItem(r, "quarantines");
	ng_strbuf_printf(o, "</table><p>Quarantines added %g (later passed: %g, possible false "
	                    "rejects; later failed: %g, stragglers kept out); removed %g (later "
	                    "failed: %g, stragglers let in).</p>",
	                 n_of(q, "added"), n_of(q, "added_later_passed"), n_of(q, "added_later_failed"),
	                 n_of(q, "removed"), n_of(q, "removed_later_failed"));
	ng_strbuf_adds(o, "<table id=\"replay-changed\"><tr><th>node</th><th>class</th><th>run</th>"
	                  "<th>current</th><th>proposed</th><th>metric</th><th>value</th>"
	                  "<th>bar now</th><th>bar proposed</th><th>later</th></tr>");
	size_t k = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r, "changed"))
	{
		if (k++ == CHANGED_SHOWN)
			break;
		const cJSON *x = cJSON_GetObjectItem(e, "decisive");
		ng_strbuf_adds(o, "<tr>");
		cell(o, *s_of(e, "node_name") ? s_of(e, "node_name") : s_of(e, "node"));
		cell(o, s_of(e, "class"));
		cell(o, s_of(e, "run_id"));
		cell(o, s_of(e, "current"));
		cell(o, s_of(e, "proposed"));
		cell(o, s_of(x, "metric"));
		num_cell(o, n_of(x, "value"));
		num_cell(o, n_of(x, "bar_current"));
		num_cell(o, n_of(x, "bar_proposed"));
		cell(o, s_of(cJSON_GetObjectItem(e, "later"), "reading"));
		ng_strbuf_adds(o, "</tr>");
	}
	ng_strbuf_adds(o, "</table>");
	if (k > CHANGED_SHOWN)
		ng_strbuf_printf(o, "<p>The first %d changed decisions; the replay's file has all %g.</p>",
		                 CHANGED_SHOWN, n_of(r, "changed_count"));
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(cJSON_GetObjectItem(r, "not_replayed"), "by_policy"))
	{
		ng_strbuf_printf(o, "<p class=\"alarm\">Not replayed: %g runs of policy ", n_of(e, "runs"));
		ng_html_escape(o, s_of(e, "policy"));
		ng_strbuf_adds(o, ": ");
		ng_html_escape(o, s_of(e, "why"));
		ng_strbuf_adds(o, "</p>");
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "gate"),
	                                                              "not_rerun"),
	                                          "by_reason"))
	{
		ng_strbuf_printf(o, "<p>Gate not judged again on %g verdict lines (their recorded "
		                    "verdict stands): ", n_of(e, "lines"));
		ng_html_escape(o, s_of(e, "why"));
		ng_strbuf_adds(o, "</p>");
	}
	replay_gpu_html(cJSON_GetObjectItem(r, "gpu_checks"), o);
}

static void shadow_html(const cJSON *s, ng_strbuf *o)
{
	ng_strbuf_adds(o, "<h2 id=\"shadow-policy\">Shadow policy</h2><p>");
	if (cJSON_IsString(cJSON_GetObjectItem(s, "policy"))) {
		ng_strbuf_adds(o, "Policy ");
		ng_html_escape(o, s_of(s, "policy"));
		ng_strbuf_adds(o, " runs in shadow (set by ");
		ng_html_escape(o, s_of(s, "set_by"));
		ng_strbuf_adds(o, ": ");
		ng_html_escape(o, s_of(s, "reason"));
		ng_strbuf_adds(o, "): judged on every admission and GPU check, landed never.");
	} else {
		ng_strbuf_adds(o, "No policy runs in shadow now; these are the window's earlier runs.");
	}
	ng_strbuf_adds(o, "</p><table id=\"shadow-would\"><tr><th>policy</th><th>check</th>"
	                  "<th>class</th><th>rule</th><th>would</th><th>runs</th>"
	                  "<th>enforcing did too</th></tr>");
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(s, "would"))
	{
		ng_strbuf_adds(o, "<tr>");
		cell(o, s_of(e, "policy"));
		cell(o, s_of(e, "kind"));
		cell(o, s_of(e, "class"));
		cell(o, s_of(e, "rule"));
		cell(o, strcmp(s_of(e, "outcome"), "drain") == 0 ? "drain" : "quarantine");
		num_cell(o, n_of(e, "count"));
		num_cell(o, n_of(e, "enforcing_did"));
		ng_strbuf_adds(o, "</tr>");
	}
	ng_strbuf_adds(o, "</table>");
}

int ng_report_policy_html(const cJSON *replay, const cJSON *shadow, ng_strbuf *page)
{
	if (!replay && !shadow)
		return 0;
	ng_strbuf sec = {0};
	if (replay)
		replay_html(replay, &sec);
	if (shadow)
		shadow_html(shadow, &sec);
	/* Before the page's closing note, so it reads as the page's last section. */
	const char *foot = page->s ? strstr(page->s, "<p class=\"meta\">Made by") : NULL;
	if (!foot && page->s)
		foot = strstr(page->s, "</body>");
	size_t at = foot ? (size_t)(foot - page->s) : page->len;
	ng_strbuf out = {0};
	ng_strbuf_add(&out, page->s, at);
	ng_strbuf_add(&out, sec.s ? sec.s : "", sec.len);
	ng_strbuf_adds(&out, page->s + at);
	ng_strbuf_free(&sec);
	if (out.oom) {
		ng_strbuf_free(&out);
		return -1;
	}
	ng_strbuf_free(page);
	*page = out;
	return 0;
}
