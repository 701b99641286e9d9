/* Kernel log text as JSON: every Xid line, in order, for `nodegate parse
 * xid` and any front end that shows what the checks attach to GPUs. */
#include "parse/xid.h"

static void add_xid(const ng_xid_event *e, void *arg)
{
	cJSON *arr = arg, *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return;
	}
	cJSON_AddStringToObject(o, "bus", e->bus);
	cJSON_AddNumberToObject(o, "code", e->code);
	if (e->gpu_instance >= 0)
		cJSON_AddNumberToObject(o, "gpu_instance", e->gpu_instance);
	if (e->compute_instance >= 0)
		cJSON_AddNumberToObject(o, "compute_instance", e->compute_instance);
	if (e->pid >= 0)
		cJSON_AddNumberToObject(o, "pid", (double)e->pid);
	if (e->name[0])
		cJSON_AddStringToObject(o, "name", e->name);
	if (e->at_usec >= 0)
		cJSON_AddNumberToObject(o, "at_usec", (double)e->at_usec);
	cJSON_AddStringToObject(o, "message", e->message);
}

int ng_xid_json(const char *text, size_t len, cJSON **out, ng_err *err)
{
	cJSON *arr = cJSON_CreateArray();
	if (!arr)
		return ng_fail(err, "out of memory");
	size_t n = ng_xid_scan(text, len, -1, add_xid, arr);
	if ((size_t)cJSON_GetArraySize(arr) != n) {
		cJSON_Delete(arr);
		return ng_fail(err, "out of memory");
	}
	*out = arr;
	return 0;
}
