/* The fleet report's documents: how the report is drawn. What it shows is
 * the model (flow/report_model.h: the store read into struct ng_report);
 * report_html.c and report_svg.c write the HTML page, report_json.c the
 * same content as JSON, report_policy.c (flow/report_policy.h) the policy
 * sections added to both. They build the documents in memory and never
 * print or write a file: a front end prints the JSON or writes the page
 * (the nodegate binary's cli/cmd_report.c, through the safe writer). */
#ifndef NODEGATE_FLOW_REPORT_DOC_H
#define NODEGATE_FLOW_REPORT_DOC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strbuf.h"
#include "flow/report_model.h"

/* report_doc.c: the two documents whole, what a front end calls once the
 * model is loaded: the report's own sections, then a replay's and the
 * shadow policy's (flow/report_policy.h: ng_report_policy_load; either may
 * be NULL). The page is appended to page; -1 when out of memory. The JSON
 * document is the caller's to cJSON_Delete. */
int ng_report_page(const struct ng_report *r, const cJSON *replay, const cJSON *shadow,
                   ng_strbuf *page);
cJSON *ng_report_document(const struct ng_report *r, const cJSON *replay, const cJSON *shadow);

/* report_states.c: the states a node is in, most pressing first, as the
 * report shows them ("quarantined", "admitted", ...). The one place a new
 * state (probation, lemon) is added for every section. Returns how many
 * were written to out (at most max). */
size_t ng_report_states_of(const struct ng_report *r, size_t node, const char **out, size_t max);
/* The first of them, or "unknown". */
const char *ng_report_state_of(const struct ng_report *r, size_t node);

/* report_attention.c: the first screen: the nodes losing the most GPU-hours
 * to node faults, and admitted nodes with repeated epilog faults. */
#define NG_REPORT_ATTENTION_TOP 10
#define NG_REPORT_REPEATED_FAULTS 2 /* epilog faults that make an admitted node suspect */
size_t *ng_report_costliest(const struct ng_report *r, size_t *n);
size_t *ng_report_admitted_repeat_faults(const struct ng_report *r, size_t *n);
void ng_report_html_attention(const struct ng_report *r, ng_strbuf *out);
cJSON *ng_report_json_attention(const struct ng_report *r);
/* Below a strip plot: the marked nodes by name, lowest first, printed. */
void ng_report_html_named(const struct ng_report *r, const struct ng_rseries *s, ng_strbuf *out);

/* report_json.c / report_html.c */
cJSON *ng_report_json(const struct ng_report *r);
int ng_report_html(const struct ng_report *r, ng_strbuf *out);

/* report_svg.c: one strip plot, and the timeline. */
void ng_report_svg_strip(const struct ng_report *r, const struct ng_rseries *s, ng_strbuf *out);
void ng_report_svg_timeline(const struct ng_report *r, ng_strbuf *out);

/* report_html.c: s with & < > " ' escaped, for text and attribute values. */
void ng_html_escape(ng_strbuf *out, const char *s);

/* Sorting helpers the writers share: node indexes by GPU-hours lost. */
size_t *ng_report_top_nodes(const struct ng_report *r, size_t *n);

#endif
