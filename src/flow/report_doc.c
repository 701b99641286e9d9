/* The report's two documents whole (flow/report_doc.h): the page and the
 * JSON, each its model's sections with the policy sections added last, so a
 * front end makes either with one call in the order the report reads. */
#include "flow/report_doc.h"
#include "flow/report_policy.h"

int ng_report_page(const struct ng_report *r, const cJSON *replay, const cJSON *shadow,
                   ng_strbuf *page)
{
	if (ng_report_html(r, page) < 0)
		return -1;
	return ng_report_policy_html(replay, shadow, page);
}

cJSON *ng_report_document(const struct ng_report *r, const cJSON *replay, const cJSON *shadow)
{
	cJSON *doc = ng_report_json(r);
	ng_report_policy_json(doc, replay, shadow);
	return doc;
}
