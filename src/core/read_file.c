/* Reading a whole file (core/read_file.h). */
#include "core/read_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ng_read_file(const char *path, size_t *len, ng_err *err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		ng_fail_as(err, NG_ERR_INPUT, "cannot open %s: %s", path, strerror(errno));
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
		bool oom = !buf;
		free(buf);
		ng_fail_as(err, oom ? NG_ERR_INTERNAL : NG_ERR_INPUT, "cannot read %s: %s", path,
		           oom ? "out of memory" : "read error");
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}
