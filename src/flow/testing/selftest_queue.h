/* The admission-queue rows of `nodegate selftest` (selftest_queue.c). */
#ifndef NODEGATE_FLOW_TESTING_SELFTEST_QUEUE_H
#define NODEGATE_FLOW_TESTING_SELFTEST_QUEUE_H

#include "flow/testing/test_env.h"

/* dir: the selftest's temporary directory; self: the nodegate binary;
 * policy: its policy file; scontrol: the stand-in scontrol
 * (nodegate-scontrol-synth), NULL or missing: the rows say so and fail. */
void ng_selftest_queue(const char *dir, const char *self, const char *policy, const char *scontrol,
                       ng_test_row_fn row, void *ctx);

#endif
