/* The snapshot's own helpers (core/gpu.h). */
#include "core/gpu.h"

#include <stddef.h>
#include <string.h>

void ng_gpu_snapshot_clear(ng_gpu_snapshot *s)
{
	memset(s, 0, offsetof(ng_gpu_snapshot, gpu));
	size_t tail = offsetof(ng_gpu_snapshot, gpu) + sizeof s->gpu;
	memset((char *)s + tail, 0, sizeof *s - tail);
}
