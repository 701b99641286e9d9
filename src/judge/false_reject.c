/* False rejects and later stragglers (docs/report.md). */
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/sha256.h"
#include "core/strbuf.h"
#include "judge/false_reject.h"

/* Copies the named members of src (those present) into a new object. */
static cJSON *pick(const cJSON *src, const char *const *keys, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < n; i++) {
		const cJSON *v = ng_json_get(src, keys[i]);
		if (v && !cJSON_IsNull(v))
			cJSON_AddItemToObject(o, keys[i], cJSON_Duplicate(v, true));
	}
	return o;
}

/* The members of each element of src[list] that identify a part. */
static void pick_list(cJSON *into, const cJSON *sec, const char *list, const char *const *keys,
                      size_t n, const char *name)
{
	const cJSON *arr = ng_json_get(sec, list), *el;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return;
	cJSON *out = cJSON_AddArrayToObject(into, name);
	cJSON_ArrayForEach(el, arr)
	{
		cJSON_AddItemToArray(out, pick(el, keys, n));
	}
}

bool ng_profile_hw_digest(const cJSON *profile, char out[65])
{
	out[0] = '\0';
	if (!cJSON_IsObject(profile))
		return false;
	static const char *const gpu_keys[] = {"uuid", "bus", "device_id"};
	static const char *const ib_keys[] = {"node_guid", "board_id", "hca_type"};
	static const char *const nic_keys[] = {"mac", "pci"};
	static const char *const drive_keys[] = {"model", "serial", "size_bytes"};
	static const char *const dimm_keys[] = {"locator", "part", "size_bytes", "manufacturer"};
	static const char *const fw_keys[] = {"product_serial", "board_serial", "product_uuid"};
	static const char *const cpu_keys[] = {"model", "sockets"};
	cJSON *hw = cJSON_CreateObject();
	if (!hw)
		return false;
	const cJSON *gpu = ng_json_get(profile, "gpu");
	const cJSON *uuids = ng_json_get(gpu, "uuids");
	if (cJSON_IsArray(uuids) && cJSON_GetArraySize(uuids) > 0)
		cJSON_AddItemToObject(hw, "gpu_uuids", cJSON_Duplicate(uuids, true));
	pick_list(hw, gpu, "devices", gpu_keys, 3, "gpus");
	pick_list(hw, ng_json_get(profile, "ib"), "devices", ib_keys, 3, "ib");
	pick_list(hw, ng_json_get(profile, "nics"), "devices", nic_keys, 2, "nics");
	pick_list(hw, ng_json_get(profile, "drives"), "devices", drive_keys, 3, "drives");
	pick_list(hw, ng_json_get(ng_json_get(profile, "memory"), "dimms"), "devices", dimm_keys, 4,
	          "dimms");
	cJSON *fw = pick(ng_json_get(profile, "firmware"), fw_keys, 3);
	if (fw && fw->child)
		cJSON_AddItemToObject(hw, "board", fw);
	else
		cJSON_Delete(fw);
	cJSON *cpu = pick(ng_json_get(profile, "cpu"), cpu_keys, 2);
	if (cpu && cpu->child)
		cJSON_AddItemToObject(hw, "cpu", cpu);
	else
		cJSON_Delete(cpu);
	bool any = hw->child != NULL;
	if (any) {
		ng_strbuf text = {0};
		ng_json_canonical(hw, &text);
		ng_sha256_hex(text.s ? text.s : "", text.len, out);
		ng_strbuf_free(&text);
	}
	cJSON_Delete(hw);
	return any;
}

ng_case_class ng_case_classify(bool closed, const char *hw_before, const char *hw_after)
{
	if (!closed)
		return NG_CASE_OPEN;
	if (!hw_before || !hw_after || !hw_before[0] || !hw_after[0])
		return NG_CASE_RELEASED_UNKNOWN;
	return strcmp(hw_before, hw_after) == 0 ? NG_CASE_RELEASED_SAME_HW
	                                        : NG_CASE_RELEASED_HW_CHANGED;
}

const char *ng_case_class_name(ng_case_class c)
{
	switch (c) {
	case NG_CASE_OPEN: return "open";
	case NG_CASE_RELEASED_SAME_HW: return "released-same-hardware";
	case NG_CASE_RELEASED_HW_CHANGED: return "released-hardware-changed";
	case NG_CASE_RELEASED_UNKNOWN: return "released-hardware-unknown";
	}
	return "open";
}

static int dec_cmp(const void *a, const void *b)
{
	const ng_fr_decision *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

static int fin_cmp(const void *a, const void *b)
{
	const ng_fr_finding *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

void ng_fr_sort_decisions(ng_fr_decision *d, size_t n)
{
	if (n > 1)
		qsort(d, n, sizeof *d, dec_cmp);
}

void ng_fr_sort_findings(ng_fr_finding *f, size_t n)
{
	if (n > 1)
		qsort(f, n, sizeof *f, fin_cmp);
}

size_t ng_fr_stragglers(const ng_fr_decision *d, size_t n, const ng_fr_finding *f, size_t nf,
                        int64_t window, bool *straggled)
{
	size_t count = 0, fi = 0;
	for (size_t i = 0; i < n; i++) {
		straggled[i] = false;
		if (!d[i].admits)
			continue;
		/* The next admitting decision of the same node bounds this one. */
		int64_t until = d[i].at + window;
		for (size_t k = i + 1; k < n && d[k].node == d[i].node; k++) {
			if (d[k].admits && d[k].at > d[i].at) {
				if (d[k].at <= until)
					until = d[k].at - 1;
				break;
			}
		}
		/* Findings are walked once overall: both lists go node by node. */
		while (fi < nf && (f[fi].node < d[i].node ||
		                   (f[fi].node == d[i].node && f[fi].at <= d[i].at)))
			fi++;
		straggled[i] = fi < nf && f[fi].node == d[i].node && f[fi].at <= until;
		count += straggled[i];
	}
	return count;
}
