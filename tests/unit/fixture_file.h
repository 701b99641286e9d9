/* Reading a whole test input file (the published fixtures under
 * NODEGATE_FIXTURES) into a NUL-terminated buffer, for the parser tests. */
#ifndef NODEGATE_TESTS_FIXTURE_FILE_H
#define NODEGATE_TESTS_FIXTURE_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes with a NUL after them, or NULL when it cannot be read. */
static inline char *slurp(const char *path, size_t *len)
{
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0, got;
	char *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			char *b2 = realloc(buf, cap * 2);
			if (!b2) {
				free(buf);
				buf = NULL;
			}
			buf = b2;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

#endif
