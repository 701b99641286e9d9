/* A probe's records, finished the same for every kind (flow/probe_records.h). */
#include "flow/probe_records.h"

#include "collect/identity.h"
#include "core/json.h"
#include "core/record_build.h"

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "dev"
#endif

void ng_probe_record_tool(cJSON *rec, const char *kind, int argc, char **argv)
{
	cJSON *tool = ng_record_tool(rec);
	ng_json_set(tool, "name", cJSON_CreateString("nodegate"));
	ng_json_set(tool, "probe", cJSON_CreateString(kind));
	ng_json_set(tool, "version", cJSON_CreateString(NODEGATE_VERSION));
	if (!argv)
		return;
	cJSON *av = cJSON_CreateArray();
	cJSON_AddItemToArray(av, cJSON_CreateString("nodegate"));
	cJSON_AddItemToArray(av, cJSON_CreateString("probe"));
	for (int i = 0; i < argc; i++)
		cJSON_AddItemToArray(av, cJSON_CreateString(argv[i]));
	ng_json_set(tool, "argv", av);
}

int ng_probe_records_finish(cJSON *records, const char *kind, int argc, char **argv,
                            const ng_policy *pol, ng_err *err)
{
	for (cJSON *rec = records->child; rec; rec = rec->next)
		ng_probe_record_tool(rec, kind, argc, argv);
	int rc = ng_identity_stamp(records, pol, NULL, err);
	ng_records_settle_unmeasured(records);
	return rc < 0 ? -1 : 0;
}
