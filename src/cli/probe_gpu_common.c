/* What `nodegate probe gpu-*` share: the --gpus option and loading the
 * backend (collect/gpu_backend_load.h). */
#include <errno.h>
#include <stdlib.h>

#include "cli/probe.h"
#include "collect/gpu_backend_load.h"
#include "collect/probe_gpu.h"

static int gpu_list(const char *s, int *out, size_t cap, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end;
		errno = 0;
		long lo = strtol(s, &end, 10), hi = lo;
		if (end == s || errno || lo < 0 || lo >= NG_GPU_DEVICES_MAX)
			return -1;
		if (*end == '-') {
			const char *h = end + 1;
			hi = strtol(h, &end, 10);
			if (end == h || errno || hi < lo || hi >= NG_GPU_DEVICES_MAX)
				return -1;
		}
		for (long i = lo; i <= hi; i++) {
			if (*n == cap)
				return -1;
			out[(*n)++] = (int)i;
		}
		if (*end == ',' && end[1])
			s = end + 1;
		else if (*end)
			return -1;
		else
			s = end;
	}
	return *n ? 0 : -1;
}

int ng_probe_gpus_option(const struct ng_probe_kind *kind, const char *arg, int *out,
                         struct ng_gpu_pick *pick)
{
	if (gpu_list(arg, out, NG_GPU_DEVICES_MAX, &pick->n) < 0)
		return ng_probe_usage(kind, "--gpus takes GPU indexes, such as 0,2,4-7", arg);
	pick->index = out;
	return -1;
}
