/* The tool harness: runs a measurement tool and turns what it printed into
 * records, never mistaking "it exited 0" for "it measured something".
 *
 * Before running, it asks the binary for its help text and refuses to pass an
 * option the build does not list (the nccl-tests -I trap). Each run goes
 * through posix_spawn with a timeout; raw output is kept with its sha256. A
 * missing binary, a timeout or a crash yields records that say so and carry
 * no samples. --repeat N runs the tool N times and merges the records of each
 * metric into one with every run's samples. */
#ifndef NODEGATE_COLLECT_HARNESS_H
#define NODEGATE_COLLECT_HARNESS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "collect/spawn.h"
#include "core/error.h"
#include "parse/parse.h"

struct ng_harness_opts {
	const struct ng_parser *parser;
	char *const *argv;   /* the command, NULL-terminated */
	size_t argc;
	unsigned repeat;     /* runs, at least 1 */
	double timeout_s;    /* per run */
	const char *raw_dir; /* where raw outputs are kept; NULL keeps none */
	bool probe;          /* check options against the help text first */
	const char *node;    /* the node identity to record */
	const char *cls;     /* the class to record; NULL leaves it absent */
	size_t max_output;   /* bytes kept per stream per run */
};

/* Returns an array of records, or NULL with err set when nodegate itself
 * failed (out of memory, cannot write the raw directory). */
cJSON *ng_harness_run(const struct ng_harness_opts *o, ng_err *err);

/* The first of args that a tool's help output (r, from `TOOL -h`; both
 * streams, as glibc and some tools print usage on stderr) does not list, in
 * buf; NULL when every one is listed. *oom set when the help could not be
 * put together. */
const char *ng_harness_unlisted_option(const ng_spawn_result *r, char *const *args, size_t n,
                                       char *buf, size_t buflen, bool *oom);

/* Merges one metric's records from several runs into the first (pure; used
 * by the harness, exposed for tests). Samples are concatenated in run order;
 * wrong is the sum of the counts when any is positive, else null when any is
 * null, else 0, and absent when any run's wrong was unusable; a diag test
 * keeps its worst status, and one that some run did not report counts as
 * skipped. */
void ng_records_merge(cJSON *into, const cJSON *from);

#endif
