/* The memory domain's evidence (collect/evidence.h): what the diagnostic
 * said, and every counter that remembers a memory error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/evidence.h"
#include "collect/identity_read.h"
#include "collect/nvml.h"
#include "core/gpu.h"

/* The flagged records of the memory domain: their metric, reason, tool
 * (test name, version, exit status) and diagnostic results, as they were. */
static void add_diagnostics(cJSON *ev, const cJSON *records)
{
	cJSON *out = cJSON_AddArrayToObject(ev, "diagnostics");
	const cJSON *r;
	cJSON_ArrayForEach(r, records)
	{
		const cJSON *dom = cJSON_GetObjectItemCaseSensitive(r, "domain");
		if (!cJSON_IsString(dom) || strcmp(dom->valuestring, "memory") != 0)
			continue;
		cJSON *d = cJSON_CreateObject();
		static const char *const keep[] = {"metric", "reason", "tool", "diag", "wrong",
		                                   "error_code", "test"};
		for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, keep[k]);
			if (v)
				cJSON_AddItemToObject(d, keep[k], cJSON_Duplicate(v, true));
		}
		cJSON_AddItemToArray(out, d);
	}
}

static cJSON *gpu_json(const ng_gpu_state *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", g->index);
	cJSON_AddStringToObject(o, "uuid", g->uuid);
	ng_evidence_add_field(o, "ecc_volatile_uncorrected", &g->ecc_volatile_uncorrected);
	ng_evidence_add_field(o, "ecc_aggregate_uncorrected", &g->ecc_aggregate_uncorrected);
	ng_evidence_add_field(o, "ecc_volatile_corrected", &g->ecc_volatile_corrected);
	ng_evidence_add_field(o, "ecc_aggregate_corrected", &g->ecc_aggregate_corrected);
	ng_evidence_add_field(o, "retired_pages_sbe", &g->retired_pages_sbe);
	ng_evidence_add_field(o, "retired_pages_dbe", &g->retired_pages_dbe);
	ng_evidence_add_field(o, "retired_pending", &g->retired_pending);
	ng_evidence_add_field(o, "remap_corrected", &g->remap_corrected);
	ng_evidence_add_field(o, "remap_uncorrected", &g->remap_uncorrected);
	ng_evidence_add_field(o, "remap_pending", &g->remap_pending);
	ng_evidence_add_field(o, "remap_failed", &g->remap_failed);
	return o;
}

/* The host's memory controllers (EDAC): corrected and uncorrected counts. */
static void add_edac(cJSON *ev, const char *root)
{
	cJSON *mcs = cJSON_AddArrayToObject(ev, "edac");
	char **names = NULL;
	size_t n = ng_id_list(root, "/sys/devices/system/edac/mc", "mc", &names);
	for (size_t i = 0; i < n; i++) {
		long long ce, ue;
		char p[320];
		snprintf(p, sizeof p, "/sys/devices/system/edac/mc/%s/ce_count", names[i]);
		bool has_ce = ng_id_read_int(root, p, &ce);
		snprintf(p, sizeof p, "/sys/devices/system/edac/mc/%s/ue_count", names[i]);
		bool has_ue = ng_id_read_int(root, p, &ue);
		if (!has_ce && !has_ue)
			continue;
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "mc", names[i]);
		if (has_ce)
			cJSON_AddNumberToObject(m, "corrected", (double)ce);
		if (has_ue)
			cJSON_AddNumberToObject(m, "uncorrected", (double)ue);
		cJSON_AddItemToArray(mcs, m);
	}
	ng_id_free_list(names, n);
}

cJSON *ng_evidence_memory(const ng_evidence_opts *o)
{
	const char *root = ng_evidence_root(o);
	cJSON *unreadable;
	cJSON *ev = ng_evidence_begin("memory", &unreadable);
	if (!ev)
		return NULL;
	add_diagnostics(ev, o ? o->records : NULL);
	ng_evidence_add_gpus(ev, o, gpu_json, false, unreadable);
	add_edac(ev, root);
	char *meminfo = ng_id_read(root, "/proc/meminfo");
	char buf[64];
	const char *hc = meminfo ? ng_id_field(meminfo, "HardwareCorrupted", ':', buf, sizeof buf)
	                         : NULL;
	if (hc)
		cJSON_AddStringToObject(ev, "hardware_corrupted", hc);
	else
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/proc/meminfo"));
	free(meminfo);
	cJSON_AddItemToObject(ev, "unreadable", unreadable);
	return ev;
}
