/* libFuzzer target for a job's steps from sacct (parse/sacct_steps.h). For
 * any bytes: at most cap steps, each a numbered step with NUL-terminated,
 * printable fields, a node without a host list's '[' or ',', a
 * non-negative time; the steps read plus the lines refused never exceed
 * the lines given; a gang ratio is -1 or a finite non-negative number. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/sacct_steps.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static void printable(const char *s, size_t cap)
{
	require(memchr(s, '\0', cap) != NULL);
	for (; *s; s++)
		require((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ng_sacct_step st[32];
	size_t lines = size ? 1 : 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	size_t bad = 0;
	size_t n = ng_sacct_steps_parse((const char *)data, size, st, 32, &bad);
	require(n <= 32 && n + bad <= lines);
	for (size_t i = 0; i < n; i++) {
		printable(st[i].id, sizeof st[i].id);
		printable(st[i].name, sizeof st[i].name);
		printable(st[i].node, sizeof st[i].node);
		printable(st[i].state, sizeof st[i].state);
		require(strchr(st[i].id, '.') != NULL);
		require(!strpbrk(st[i].node, "[,"));
		require(st[i].elapsed_s >= 0);
	}
	for (size_t i = 0; i < n; i++) {
		double r = ng_sacct_gang_ratio(st, n, st[i].node, 1, NULL, NULL, NULL, NULL, 0);
		require(r == -1 || (isfinite(r) && r >= 0));
	}
	return 0;
}
