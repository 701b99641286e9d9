/* Every gate verdict as a document (flow/verdict_table.h). */
#include "flow/verdict_table.h"

#include "core/verdict.h"

cJSON *ng_verdict_table_json(void)
{
	cJSON *arr = cJSON_CreateArray();
	for (int v = 0; v < NG_V_COUNT; v++) {
		const struct ng_verdict_info *vi = ng_verdict_info((ng_verdict)v);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "verdict", vi->name);
		cJSON_AddStringToObject(o, "family", vi->family);
		cJSON_AddBoolToObject(o, "admissible", vi->admissible);
		cJSON_AddBoolToObject(o, "hard", vi->hard);
		cJSON_AddStringToObject(o, "meaning", vi->meaning);
		cJSON_AddStringToObject(o, "lands", vi->lands);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
