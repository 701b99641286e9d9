/* libFuzzer target: the launcher layer every tool's parser reads through.
 * Whatever the bytes: it never fails but for memory; each stream is
 * NUL-terminated; the joined text is the streams one after another (with at
 * most one newline between two) and never longer than the input plus those
 * newlines; input it did not change comes back byte for byte; and the
 * detail it writes is JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/launcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ng_launch l;
	if (!ng_launch_read(text, size, &l))
		abort(); /* only out of memory may fail */
	if (l.nstreams < 1 || l.nstreams > NG_LAUNCH_MAX_STREAMS + 1)
		abort();
	size_t total = 0, at = 0;
	for (size_t k = 0; k < l.nstreams; k++) {
		const ng_launch_stream *st = &l.streams[k];
		if (st->text[st->len] != '\0' || memchr(st->tag, '\0', sizeof st->tag) == NULL)
			abort();
		if (!st->len)
			continue;
		if (at && l.joined[at - 1] != '\n' && l.joined[at++] != '\n')
			abort();
		if (at + st->len > l.joined_len || memcmp(l.joined + at, st->text, st->len) != 0)
			abort();
		at += st->len;
		total += st->len;
	}
	if (at != l.joined_len || total > size || l.joined[l.joined_len] != '\0')
		abort();
	if (!ng_launch_changed(&l) && (l.joined_len != size || memcmp(l.joined, text, size) != 0))
		abort();
	cJSON *j = ng_launch_json(&l);
	if (ng_launch_changed(&l) && !j)
		abort();
	cJSON_Delete(j);
	ng_launch_free(&l);
	free(text);
	return 0;
}
