/* JSON documents read from files: what every layer that takes a file of
 * records or a policy from its caller reads it with. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/json_file.h"
#include "core/read_file.h"
#include "core/strbuf.h"

cJSON *ng_load_json_file(const char *path, char **text, size_t *len, ng_err *err)
{
	*text = ng_read_file(path, len, err);
	if (!*text)
		return NULL;
	ng_err perr;
	cJSON *doc = ng_json_parse(*text, *len, &perr);
	ng_strbuf dup = {0};
	if (!doc) {
		ng_fail_as(err, NG_ERR_INPUT, "%s: %s", path, perr.msg);
	} else if (ng_json_find_duplicate(doc, &dup)) {
		ng_fail_as(err, NG_ERR_INPUT, "%s: key \"%.200s\" is given twice: which value was meant? (remove one)",
		        path, dup.s ? dup.s : "");
		cJSON_Delete(doc);
		doc = NULL;
	}
	ng_strbuf_free(&dup);
	if (!doc) {
		free(*text);
		*text = NULL;
	}
	return doc;
}
