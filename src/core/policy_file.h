/* Reading a policy file, as --policy, `nodegate policy check` and the
 * policy changes read one. */
#ifndef NODEGATE_CORE_POLICY_FILE_H
#define NODEGATE_CORE_POLICY_FILE_H

#include <stdbool.h>

#include "core/error.h"
#include "core/policy.h"

/* Reads a policy file over p (ng_policy_apply_json); err names the file and
 * what is wrong with it. A key given twice anywhere is refused. */
int ng_policy_load_file(ng_policy *p, const char *path, ng_err *err);

/* Where the policy is when none is named: a file installed there, if any. */
#define NG_DEFAULT_POLICY "/etc/nodegate/policy.json"

/* The policy in force, over the defaults: the file given (--policy), else
 * $NODEGATE_POLICY, else NG_DEFAULT_POLICY. A file named either way must
 * exist; the default one may not (the defaults stand). read_none: only the
 * defaults (`policy check FILE` reads FILE alone: the policy in force may be
 * the broken one being replaced). 0, or -1 with err naming the file. */
int ng_policy_load_in_force(ng_policy *p, const char *given, bool read_none, ng_err *err);

#endif
