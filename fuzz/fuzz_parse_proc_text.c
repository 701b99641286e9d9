/* libFuzzer target for the /proc readers of the failing domain's evidence
 * (parse/proc_text.h). For any bytes: every device and mount read has a
 * NUL-terminated name within its field, a mount point that starts with /,
 * and the rows read plus the lines refused never exceed the lines given;
 * the longest-prefix lookup returns one of the mounts or none. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/proc_text.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static size_t lines_in(const uint8_t *data, size_t size)
{
	size_t n = size ? 1 : 0;
	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ng_diskstat d[64];
	static ng_mount m[64];
	const char *text = (const char *)data;
	size_t lines = lines_in(data, size), bad = 0;
	size_t nd = ng_diskstats_parse(text, size, d, 64, &bad);
	require(nd <= 64 && nd + bad <= lines);
	for (size_t i = 0; i < nd; i++)
		require(memchr(d[i].name, '\0', sizeof d[i].name) != NULL && d[i].name[0]);
	size_t nm = ng_mounts_parse(text, size, m, 64, &bad);
	require(nm <= 64 && nm + bad <= lines);
	for (size_t i = 0; i < nm; i++) {
		require(memchr(m[i].mountpoint, '\0', sizeof m[i].mountpoint) != NULL);
		require(memchr(m[i].options, '\0', sizeof m[i].options) != NULL);
		require(m[i].mountpoint[0] == '/');
	}
	const ng_mount *hit = ng_mount_of(m, nm, "/data/x");
	require(!hit || (hit >= m && hit < m + nm));
	return 0;
}
