/* The policy as `nodegate policy` shows it: the effective values with
 * where each came from, and a policy file checked before it is rolled out
 * (`policy check`), as the documents --json prints. */
#ifndef NODEGATE_FLOW_POLICY_VIEW_H
#define NODEGATE_FLOW_POLICY_VIEW_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "core/policy.h"

/* {"policy": {NAME: {value, source, meaning}}, "floors": {metric: value},
 * "version": digest}. */
cJSON *ng_policy_view_json(const ng_policy *p);

/* How many values p takes from its file rather than the defaults. */
size_t ng_policy_values_set(const ng_policy *p);

/* {file, valid, nodegate (this version), version, values_set and floors
 * when valid, else error, warnings}: pol is the policy read from file, or
 * NULL when it was refused for error. */
cJSON *ng_policy_check_json(const char *file, const ng_policy *pol, const char *error);

#endif
