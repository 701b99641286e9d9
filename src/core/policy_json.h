/* A policy as a policy file: every value and floor, so the text read back
 * over the defaults is the same policy with the same digest. The store keeps
 * this text under the digest (store/policies.h), and a replay decides again
 * with the policy that decided, not only its name. */
#ifndef NODEGATE_CORE_POLICY_JSON_H
#define NODEGATE_CORE_POLICY_JSON_H

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/policy.h"

/* {"schema": "nodegate/policy/1", "gate": {...}, ..., "floors": {...}}; NULL
 * when out of memory. */
cJSON *ng_policy_to_json(const ng_policy *p);
/* The same as text (unformatted, malloc'd), or NULL. */
char *ng_policy_to_text(const ng_policy *p);
/* Reads a policy text over the defaults, as --policy reads a file: unknown
 * and out-of-range values are refused, naming them. source: where it came
 * from, for messages and `nodegate policy`. */
int ng_policy_from_text(const char *text, const char *source, ng_policy *out, ng_err *err);

#endif
