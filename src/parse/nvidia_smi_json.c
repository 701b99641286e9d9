/* A saved nvidia-smi -q as the GPU snapshot's JSON (parse/nvidia_smi.h), as
 * `nodegate parse nvidia-smi` prints it. */
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "parse/nvidia_smi.h"

int ng_nvidia_smi_json(const char *text, size_t len, cJSON **out, ng_err *err)
{
	ng_gpu_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return ng_fail(err, "out of memory");
	int rc = ng_nvidia_smi_parse(text, len, s, err);
	*out = rc == 0 ? ng_gpu_snapshot_to_json(s) : NULL;
	free(s);
	if (rc != 0)
		return -1;
	if (!*out)
		return ng_fail(err, "out of memory");
	/* nvidia-smi's report that it could not reach NVML is read, but holds
	 * no GPU: nothing was measured. */
	const cJSON *nvml = cJSON_GetObjectItemCaseSensitive(*out, "nvml");
	return cJSON_IsString(nvml) && strcmp(nvml->valuestring, "ok") != 0 ? 1 : 0;
}
