/* What the runners that check nodegate end to end (`nodegate selftest`,
 * `nodegate scenarios`) share: each runs the real binary in a temporary
 * directory of its own, with nothing of the machine it runs on, and says
 * each case as a row. */
#ifndef NODEGATE_FLOW_TESTING_TEST_ENV_H
#define NODEGATE_FLOW_TESTING_TEST_ENV_H

/* One case's row: its name, what was expected, what came, and, when the two
 * differ, why (problem ""; as expected). */
typedef void (*ng_test_row_fn)(void *arg, const char *name, const char *expected,
                               const char *got, const char *problem);

/* Removes every variable whose name starts with prefix ("SLURM_") from this
 * process's environment, for the runs it starts. */
void ng_env_unset_prefix(const char *prefix);

/* Removes dir and everything in it (links not followed). -1 with errno
 * when something could not be removed. */
int ng_remove_tree(const char *dir);

#endif
