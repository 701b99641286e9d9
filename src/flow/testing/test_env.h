/* What the runners that check nodegate end to end (`nodegate selftest`,
 * `nodegate scenarios`) share: each runs the real binary in a temporary
 * directory of its own, with nothing of the machine it runs on, and says
 * each case as a row. */
#ifndef NODEGATE_FLOW_TESTING_TEST_ENV_H
#define NODEGATE_FLOW_TESTING_TEST_ENV_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* One case's row: its name, what was expected, what came, and, when the two
 * differ, why (problem ""; as expected). */
typedef void (*ng_test_row_fn)(void *arg, const char *name, const char *expected,
                               const char *got, const char *problem);

/* Runs self --policy policy args... as at now (NODEGATE_NOW), for 60 s at
 * most: its exit status, its output (parsed into *doc when it is a JSON
 * object; copied into out_text) and the last line of its standard error
 * (300 bytes at most). -1 when it did not run or did not end by itself,
 * with why in err_line. doc, err_line and out_text may each be NULL. */
int ng_test_run_self(const char *self, const char *policy, int64_t now, const char *const *args,
                     cJSON **doc, char *err_line, size_t cap, char *out_text, size_t out_cap);

/* A healthy record of node in class_key: nine samples within 0.4% of
 * median, nothing wrong, its diagnostics passed, software "sw-selftest". */
cJSON *ng_test_record(const char *node, const char *class_key, double median, const char *domain,
                      const char *metric, const char *unit);

/* Removes every variable whose name starts with prefix ("SLURM_") from this
 * process's environment, for the runs it starts. */
void ng_env_unset_prefix(const char *prefix);

/* Removes dir and everything in it (links not followed). -1 with errno
 * when something could not be removed. */
int ng_remove_tree(const char *dir);

#endif
