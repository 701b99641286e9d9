/* libFuzzer target for what nodegate reads back from scontrol and what it
 * sends: `scontrol show node` text (State=, Reason= and its [user@time]
 * stamp) and drain reasons. For any bytes: the parsed state and reason are
 * NUL-terminated within their buffers; a stamp, when found, is a time; a
 * sanitized reason is printable ASCII, at most NG_SLURM_REASON_MAX bytes,
 * starts "ng:", ends " [nodegate]", is nodegate's, and sanitizing it again
 * changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "land/slurm.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char state[64], reason[256];
	if (ng_slurm_parse_node(text, state, sizeof state, reason, sizeof reason) == 0) {
		require(memchr(state, '\0', sizeof state) != NULL && state[0]);
		require(memchr(reason, '\0', sizeof reason) != NULL);
		(void)ng_slurm_state_drain(state);
		(void)ng_slurm_state_down(state);
	}
	long long at = 0;
	if (ng_slurm_parse_stamp(text, &at) == 0)
		(void)ng_slurm_hook_drain_is_ours("Epilog error", at, "epilog", true, at);
	char out[NG_SLURM_REASON_MAX + 1], again[NG_SLURM_REASON_MAX + 1];
	ng_slurm_sanitize_reason(text, out);
	size_t n = strlen(out), mark = sizeof NG_SLURM_REASON_MARK - 1;
	require(n <= NG_SLURM_REASON_MAX && n > mark + 3);
	require(strncmp(out, NG_SLURM_REASON_PREFIX, 3) == 0);
	require(strcmp(out + n - mark, NG_SLURM_REASON_MARK) == 0);
	for (size_t i = 0; i < n; i++)
		require((unsigned char)out[i] >= 0x20 && (unsigned char)out[i] < 0x7f);
	require(ng_slurm_reason_ours(out));
	ng_slurm_sanitize_reason(out, again);
	require(strcmp(out, again) == 0);
	(void)ng_slurm_reason_of_case(text, 7);
	free(text);
	return 0;
}
