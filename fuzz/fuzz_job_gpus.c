/* libFuzzer target for SLURM_JOB_GPUS parsing (src/parse/job_gpus.c). For any
 * bytes (up to the first NUL, as the environment holds them): the list keeps
 * at most NG_JOB_GPUS_MAX distinct GPUs, each a plausible ordinal or a
 * well-formed UUID; every item is accounted for; notes are bounded and
 * printable; and resolving against a node marks only GPUs the node has. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/job_gpus.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static ng_job_gpus J;
static ng_gpu_snapshot node;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	ng_job_gpus_parse(s, &J);
	free(s);

	require(J.n <= NG_JOB_GPUS_MAX);
	require(J.n_notes <= NG_JOB_GPUS_NOTES_MAX);
	for (size_t i = 0; i < J.n; i++) {
		const ng_job_gpu *g = &J.gpu[i];
		if (g->ordinal >= 0) {
			require(g->ordinal <= NG_JOB_GPU_ORDINAL_MAX);
			require(g->uuid[0] == '\0');
		} else {
			require(g->ordinal == -1);
			require(strlen(g->uuid) == NG_JOB_GPU_UUID_LEN && strncmp(g->uuid, "GPU-", 4) == 0);
		}
		for (size_t k = 0; k < i; k++)
			require(g->ordinal != J.gpu[k].ordinal || g->ordinal < 0);
	}
	require(J.n + J.n_over_cap <= J.n_items * (NG_JOB_GPU_ORDINAL_MAX + 1));
	require(J.n_mig + J.n_refused <= J.n_items);
	for (size_t i = 0; i < J.n_notes; i++) {
		size_t n = strnlen(J.note[i], sizeof J.note[i]);
		require(n < sizeof J.note[i]);
		for (size_t k = 0; k < n; k++)
			require((unsigned char)J.note[i][k] >= 0x20 && (unsigned char)J.note[i][k] < 0x7f);
	}

	if (node.n_gpus == 0) {
		node.nvml = NG_FIELD_OK;
		node.n_gpus = 8;
		for (int i = 0; i < 8; i++) {
			node.gpu[i].index = i;
			snprintf(node.gpu[i].uuid, sizeof node.gpu[i].uuid,
			         "GPU-00000000-0000-4000-8000-00000000000%d", i);
		}
	}
	bool keep[NG_GPU_MAX];
	size_t marked = ng_job_gpus_resolve(&J, &node, keep);
	size_t counted = 0;
	for (size_t i = 0; i < NG_GPU_MAX; i++) {
		require(!keep[i] || i < node.n_gpus);
		counted += keep[i];
	}
	require(counted == marked && marked <= J.n);
	return 0;
}
