/* Reading a policy file, as --policy, `nodegate policy check` and the
 * policy changes read one. */
#ifndef NODEGATE_CORE_POLICY_FILE_H
#define NODEGATE_CORE_POLICY_FILE_H

#include "core/error.h"
#include "core/policy.h"

/* Reads a policy file over p (ng_policy_apply_json); err names the file and
 * what is wrong with it. A key given twice anywhere is refused. */
int ng_policy_load_file(ng_policy *p, const char *path, ng_err *err);

#endif
