/* The fabric rows of `nodegate selftest` (selftest_fabric.c): `nodegate
 * fabric` on the stand-in fleet. */
#ifndef NODEGATE_FLOW_TESTING_SELFTEST_FABRIC_H
#define NODEGATE_FLOW_TESTING_SELFTEST_FABRIC_H

#include "flow/testing/test_env.h"

/* dir: the selftest's temporary directory; self: the nodegate binary;
 * policy: its policy file. Each row is said through row(ctx, ...). */
void ng_selftest_fabric(const char *dir, const char *self, const char *policy,
                        ng_test_row_fn row, void *ctx);

#endif
