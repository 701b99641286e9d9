/* The admission-queue rows of `nodegate selftest` (selftest_queue.c). */
#ifndef NODEGATE_CLI_SELFTEST_QUEUE_H
#define NODEGATE_CLI_SELFTEST_QUEUE_H

#include "cli/fabric.h"

/* dir: the selftest's temporary directory; self: the nodegate binary;
 * policy: its policy file. */
void ng_selftest_queue(const char *dir, const char *self, const char *policy,
                       ng_selftest_row_fn row, void *ctx);

#endif
