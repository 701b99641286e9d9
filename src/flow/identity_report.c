/* `nodegate identity`'s document (flow/identity_report.h). */
#include "flow/identity_report.h"

#include "core/strbuf.h"

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "dev"
#endif

cJSON *ng_identity_report(const ng_identity_opts *o, const char *tmpl, ng_err *err)
{
	cJSON *prof = ng_identity_profile(o, err);
	if (!prof)
		return NULL;
	/* Only nodegate itself knows its own version. */
	cJSON *tools = cJSON_AddObjectToObject(prof, "tools");
	cJSON_AddStringToObject(tools, "nodegate", NODEGATE_VERSION);

	ng_strbuf cls = {0}, sw = {0};
	ng_err cerr = {0};
	int rc = ng_identity_class(prof, tmpl, &cls, &cerr);
	ng_identity_software(prof, &sw);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "profile", prof);
	cJSON_AddItemToObject(doc, "class", rc == 0 ? cJSON_CreateString(cls.s) : cJSON_CreateNull());
	cJSON_AddStringToObject(doc, "software", sw.s);
	cJSON_AddStringToObject(doc, "template", tmpl);
	if (rc < 0)
		cJSON_AddStringToObject(doc, "class_error", cerr.msg);
	ng_strbuf_free(&cls);
	ng_strbuf_free(&sw);
	return doc;
}
