/* JSON documents read from files: what every layer that takes a file of
 * records or a policy from its caller reads it with. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/json_file.h"
#include "core/strbuf.h"

char *ng_read_file(const char *path, size_t *len, ng_err *err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		ng_fail(err, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		char *b2 = realloc(buf, cap * 2);
		if (!b2) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = b2;
		cap *= 2;
	}
	bool failed = ferror(f);
	if (f != stdin)
		fclose(f);
	if (!buf || failed) {
		free(buf);
		ng_fail(err, "cannot read %s: %s", path, buf ? "read error" : "out of memory");
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

cJSON *ng_load_json_file(const char *path, char **text, size_t *len, ng_err *err)
{
	*text = ng_read_file(path, len, err);
	if (!*text)
		return NULL;
	ng_err perr;
	cJSON *doc = ng_json_parse(*text, *len, &perr);
	ng_strbuf dup = {0};
	if (!doc) {
		ng_fail(err, "%s: %s", path, perr.msg);
	} else if (ng_json_find_duplicate(doc, &dup)) {
		ng_fail(err, "%s: key \"%.200s\" is given twice: which value was meant? (remove one)",
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
