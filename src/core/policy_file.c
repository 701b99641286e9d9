#include "core/policy_file.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/json.h"
#include "core/read_file.h"

int ng_policy_load_file(ng_policy *p, const char *path, ng_err *err)
{
	size_t len;
	ng_err lerr;
	char *text = ng_read_file(path, &len, err);
	if (!text)
		return -1;
	/* Parsed here rather than by ng_load_json_file so that a repeat is
	 * named as the policy sees it ("policy section \"gate\" is given
	 * twice"): ng_policy_apply_json refuses every repeated key. */
	cJSON *doc = ng_json_parse(text, len, &lerr);
	if (!doc) {
		free(text);
		return ng_fail(err, "%s: %s", path, lerr.msg);
	}
	int rc = ng_policy_apply_json(p, doc, path, &lerr);
	if (rc < 0)
		ng_fail(err, "%s: %s", path, lerr.msg);
	cJSON_Delete(doc);
	free(text);
	return rc;
}

int ng_policy_load_in_force(ng_policy *p, const char *given, bool read_none, ng_err *err)
{
	ng_policy_default(p);
	const char *env = getenv("NODEGATE_POLICY");
	const char *path = given ? given : env && *env ? env : NULL;
	bool must_exist = path != NULL;
	if (!path)
		path = NG_DEFAULT_POLICY;
	if (read_none)
		return 0;
	if (!must_exist && access(path, F_OK) != 0 && errno == ENOENT)
		return 0;
	return ng_policy_load_file(p, path, err);
}
