/* A short, stable name for the decision rule in force: the digest of every
 * policy value and floor. Kept with each admission decision and quarantine
 * case, so outcomes can be counted per policy version and a threshold change
 * (docs/report.md) shows up as a new version rather than as noise. */
#ifndef NODEGATE_CORE_POLICY_DIGEST_H
#define NODEGATE_CORE_POLICY_DIGEST_H

#include "core/policy.h"

/* "pol-" and 12 hex digits, NUL-terminated. */
#define NG_POLICY_DIGEST_LEN 17

/* Where a value came from (default or a file) does not change the digest:
 * the same values are the same rule wherever they were written. */
void ng_policy_digest(const ng_policy *p, char out[NG_POLICY_DIGEST_LEN]);

#endif
