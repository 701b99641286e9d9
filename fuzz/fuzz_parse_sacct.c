/* libFuzzer target for the sacct parser and Slurm host lists. For any bytes:
 * every job read has a printable id and state, its host names are printable
 * and within the limit, times are 0 or after 1970, and the counts add up;
 * expanding a host list never yields more names than the limit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/sacct.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static void printable(const char *s)
{
	for (; *s; s++)
		require((unsigned char)*s > 0x20 && (unsigned char)*s < 0x7f);
}

static int count_name(const char *name, size_t len, void *arg)
{
	require(strlen(name) == len && len > 0 && len <= 255);
	printable(name);
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	ng_sacct s;
	ng_err err;
	if (ng_sacct_parse(text, size, &s, &err) == 0) {
		require(s.n + s.bad + s.steps <= s.lines);
		require(!s.bad == !s.first_bad);
		size_t names = 0, bytes = 0;
		for (size_t i = 0; i < s.n; i++) {
			const ng_sacct_job *j = &s.jobs[i];
			require(j->id[0] >= '0' && j->id[0] <= '9');
			printable(j->id);
			printable(j->state);
			require(j->state[0]);
			require(j->gpus >= 0 && j->start >= 0 && j->end >= 0);
			require(j->n_nodes <= NG_SACCT_MAX_NODES);
			require(j->first_name == names);
			for (size_t k = 0; k < j->n_nodes; k++) {
				const char *n = ng_sacct_node(&s, j, k);
				require(n[0]);
				printable(n);
				/* Names lie end to end, in order. */
				require(n == s.names + bytes);
				bytes += strlen(n) + 1;
			}
			names += j->n_nodes;
		}
		require(names == s.n_names && bytes == s.names_len);
	}
	ng_sacct_free(&s);

	/* The whole input as one host list, with a small limit. */
	size_t n = 0;
	long got = ng_hostlist_expand(text, size, 64, count_name, &n);
	require(got == -1 || (got >= 0 && (size_t)got == n && n <= 64));
	return 0;
}
