/* libFuzzer target for the sysfs port file readers. For any bytes: a state
 * read has a printable name, a rate read is finite and positive, a counter
 * read is the value of its digits, and nothing is read from a second line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ib_counters.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	int code;
	char name[32], what[32];
	if (ng_ib_parse_state(text, size, &code, name, sizeof name)) {
		require(code >= 0 && code <= 255 && strnlen(name, sizeof name) > 0);
		for (size_t i = 0; name[i]; i++)
			require((unsigned char)name[i] >= 0x20 && (unsigned char)name[i] < 0x7f);
	}
	double g;
	if (ng_ib_parse_rate(text, size, &g, what, sizeof what))
		require(isfinite(g) && g > 0 && strnlen(what, sizeof what) < sizeof what);
	uint64_t v;
	if (ng_ib_parse_counter(text, size, &v) && size < 64) {
		/* The value is the digits of the text, as strtoull reads them. */
		char buf[64];
		memcpy(buf, text, size);
		buf[size] = '\0';
		require(strtoull(buf, NULL, 10) == v);
		require(memchr(text, '\n', size && text[size - 1] == '\n' ? size - 1 : size) == NULL);
	}
	return 0;
}
