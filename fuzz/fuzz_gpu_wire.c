/* libFuzzer target for the GPU snapshot as a child hands it to its parent
 * (src/core/gpu_wire.c). For any bytes: unpack accepts or refuses without
 * reading past them; what it accepts is a snapshot every later reader can
 * take (the JSON writer, which refuses any out-of-range state or
 * unterminated string, takes it), and a refusal leaves no GPU behind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static ng_gpu_snapshot snap;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	ng_err err;
	int rc = ng_gpu_snapshot_unpack(buf, size, &snap, &err);
	free(buf);
	if (rc != 0) {
		require(snap.n_gpus == 0);
		require(memchr(err.msg, '\0', sizeof err.msg) != NULL);
		return 0;
	}
	require(snap.n_gpus <= NG_GPU_MAX);
	cJSON *doc = ng_gpu_snapshot_to_json(&snap);
	require(doc != NULL);
	cJSON_Delete(doc);
	return 0;
}
