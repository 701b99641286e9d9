/* What `nodegate identity` shows: this node's profile and the class key its
 * records get (collect/identity.h), as one document. */
#ifndef NODEGATE_FLOW_IDENTITY_REPORT_H
#define NODEGATE_FLOW_IDENTITY_REPORT_H

#include <cjson/cJSON.h>

#include "collect/identity.h"
#include "core/error.h"

/* {"profile": {... "tools": {"nodegate": VERSION}}, "class": KEY or null,
 * "software", "template": tmpl, and "class_error" when tmpl gives no class
 * for this node}. NULL with err when the profile could not be collected. */
cJSON *ng_identity_report(const ng_identity_opts *o, const char *tmpl, ng_err *err);

#endif
