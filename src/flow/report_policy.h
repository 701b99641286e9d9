/* The report's policy sections (report_policy.c): a replay (--replay FILE)
 * and the shadow policy's would-be outcomes over the window. */
#ifndef NODEGATE_FLOW_REPORT_POLICY_H
#define NODEGATE_FLOW_REPORT_POLICY_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "store/store.h"

/* replay: the file's document (NULL when no file); shadow: the summary
 * since `since`, NULL when no shadow policy ran. err's class says whether
 * the file (input) or the store failed. */
int ng_report_policy_load(ng_store *st, int64_t since, const char *replay_file, cJSON **replay,
                          cJSON **shadow, ng_err *err);
void ng_report_policy_json(cJSON *doc, const cJSON *replay, const cJSON *shadow);
/* Splices the sections into the page before its closing note. */
int ng_report_policy_html(const cJSON *replay, const cJSON *shadow, ng_strbuf *page);

#endif
