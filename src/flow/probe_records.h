/* What every `nodegate probe KIND` does with its records once measured,
 * before they are shown, kept and judged: the same for every kind, so a
 * record from any probe reads the same to the gate and the store. */
#ifndef NODEGATE_FLOW_PROBE_RECORDS_H
#define NODEGATE_FLOW_PROBE_RECORDS_H

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/policy.h"

/* Names the tool in rec: nodegate, the probe kind, nodegate's version, and
 * (argv not NULL) the argv "nodegate probe" argv[0..argc). */
void ng_probe_record_tool(cJSON *rec, const char *kind, int argc, char **argv);

/* Names the tool in every record (nodegate, the probe kind, nodegate's
 * version and the argv "nodegate probe" argv[0..argc)), stamps the node's
 * identity and class (collect/identity.h, the policy's template), and
 * settles the records that measured nothing (core/record_build.h). -1 with
 * err when the identity gave no class; the records are finished all the
 * same. */
int ng_probe_records_finish(cJSON *records, const char *kind, int argc, char **argv,
                            const ng_policy *pol, ng_err *err);

#endif
