/* The probation, repeat-offender and evidence rows of `nodegate selftest`
 * (selftest_probation.c). */
#ifndef NODEGATE_FLOW_TESTING_SELFTEST_PROBATION_H
#define NODEGATE_FLOW_TESTING_SELFTEST_PROBATION_H

#include "flow/testing/test_env.h"

/* dir: the selftest's temporary directory; self: the nodegate binary;
 * policy: its policy file; lib: the synthetic NVML library. */
void ng_selftest_probation(const char *dir, const char *self, const char *policy,
                           const char *lib, ng_test_row_fn row, void *ctx);

#endif
