/* The GPUs' peer access through NVML (collect/nvml_p2p.h): for each pair,
 * what nvmlDeviceGetP2PStatus says of reads, writes, NVLink, atomics and
 * PCI. Its own dlopen of the library the snapshot reads (collect/nvml.c),
 * so the snapshot's fixed struct carries no matrix. A call that never
 * returns blocks here: the evidence runs this in a bounded child. */
#include "collect/nvml_p2p.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/nvml.h"
#include "collect/nvml_abi.h"

#define DEFAULT_LIBRARY "libnvidia-ml.so.1"

static const char *const caps[] = {"read", "write", "nvlink", "atomics", "pci"};
static const char *const statuses[] = {
	"ok", "chipset_not_supported", "gpu_not_supported", "ioh_topology_not_supported",
	"disabled_by_regkey", "not_supported", "unknown",
};

struct lib {
	void *h;
	__typeof__(nvmlInit_v2) *init;
	__typeof__(nvmlShutdown) *shutdown;
	__typeof__(nvmlDeviceGetCount_v2) *count;
	__typeof__(nvmlDeviceGetHandleByIndex_v2) *handle;
	__typeof__(nvmlDeviceGetP2PStatus) *p2p;
};

static void *sym(void *h, const char *a, const char *b)
{
	void *f = dlsym(h, a);
	return f || !b ? f : dlsym(h, b);
}

static void note(cJSON *unreadable, const char *fmt, const char *what)
{
	char buf[256];
	snprintf(buf, sizeof buf, fmt, what);
	cJSON_AddItemToArray(unreadable, cJSON_CreateString(buf));
}

static const char *status_name(nvmlGpuP2PStatus_t s)
{
	return (unsigned)s < sizeof statuses / sizeof *statuses ? statuses[s] : "unknown";
}

/* One pair's statuses; "failed: ..." for a cap whose call failed. */
static cJSON *pair_json(const struct lib *l, nvmlDevice_t a, nvmlDevice_t b, unsigned i,
                        unsigned j, size_t *not_ok)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *g = cJSON_AddArrayToObject(o, "gpus");
	cJSON_AddItemToArray(g, cJSON_CreateNumber(i));
	cJSON_AddItemToArray(g, cJSON_CreateNumber(j));
	for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
		nvmlGpuP2PStatus_t st = NVML_P2P_STATUS_UNKNOWN;
		nvmlReturn_t rc = l->p2p(a, b, (nvmlGpuP2PCapsIndex_t)c, &st);
		if (rc == NVML_ERROR_NOT_SUPPORTED)
			continue; /* the driver does not answer this cap: nothing to say */
		if (rc != NVML_SUCCESS) {
			char buf[160];
			snprintf(buf, sizeof buf, "failed: %s", ng_nvml_return_name(rc));
			cJSON_AddStringToObject(o, caps[c], buf);
			continue;
		}
		cJSON_AddStringToObject(o, caps[c], status_name(st));
		/* NVLink not_supported is a PCIe-only pair, not a fault of it */
		if (st != NVML_P2P_STATUS_OK && !(c == NVML_P2P_CAPS_INDEX_NVLINK &&
		                                  st == NVML_P2P_STATUS_NOT_SUPPORTED))
			(*not_ok)++;
	}
	return o;
}

cJSON *ng_nvml_p2p_read(const char *lib_path, cJSON *unreadable)
{
	const char *env = getenv("NODEGATE_NVML_LIBRARY");
	const char *path = lib_path && *lib_path ? lib_path : env && *env ? env : DEFAULT_LIBRARY;
	struct lib l = {0};
	l.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l.h) {
		note(unreadable, "peer access: cannot load %.200s", path);
		return NULL;
	}
	l.init = (__typeof__(l.init))sym(l.h, "nvmlInit_v2", "nvmlInit");
	l.shutdown = (__typeof__(l.shutdown))sym(l.h, "nvmlShutdown", NULL);
	l.count = (__typeof__(l.count))sym(l.h, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	l.handle = (__typeof__(l.handle))sym(l.h, "nvmlDeviceGetHandleByIndex_v2",
	                                     "nvmlDeviceGetHandleByIndex");
	l.p2p = (__typeof__(l.p2p))sym(l.h, "nvmlDeviceGetP2PStatus", NULL);
	if (!l.init || !l.shutdown || !l.count || !l.handle || !l.p2p) {
		note(unreadable, "peer access: %s lacks nvmlDeviceGetP2PStatus or its companions", path);
		dlclose(l.h);
		return NULL;
	}
	nvmlReturn_t rc = l.init();
	bool inited = rc == NVML_SUCCESS;
	unsigned count = 0;
	if (inited)
		rc = l.count(&count);
	if (rc != NVML_SUCCESS) {
		note(unreadable, "peer access: NVML: %s", ng_nvml_return_name(rc));
		if (inited)
			(void)l.shutdown();
		dlclose(l.h);
		return NULL;
	}
	cJSON *out = cJSON_CreateObject();
	unsigned n = count < NG_P2P_GPUS_MAX ? count : NG_P2P_GPUS_MAX;
	cJSON_AddNumberToObject(out, "gpus", count);
	if (count > n)
		cJSON_AddNumberToObject(out, "gpus_read", n);
	nvmlDevice_t dev[NG_P2P_GPUS_MAX];
	bool have[NG_P2P_GPUS_MAX];
	for (unsigned i = 0; i < n; i++)
		have[i] = l.handle(i, &dev[i]) == NVML_SUCCESS;
	cJSON *pairs = cJSON_AddArrayToObject(out, "pairs");
	size_t not_ok = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++) {
			if (!have[i] || !have[j]) {
				char what[64];
				snprintf(what, sizeof what, "GPU %u or %u has no handle", i, j);
				note(unreadable, "peer access: %s", what);
				continue;
			}
			cJSON_AddItemToArray(pairs, pair_json(&l, dev[i], dev[j], i, j, &not_ok));
		}
	cJSON_AddNumberToObject(out, "pairs_not_ok", (double)not_ok);
	(void)l.shutdown();
	dlclose(l.h);
	return out;
}
