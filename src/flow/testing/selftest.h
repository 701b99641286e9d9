/* `nodegate selftest`'s runner: known faults through the whole path, on this
 * machine, touching nothing of it.
 *
 * Every case runs the real binary through collect/spawn.h in a fresh
 * temporary directory with its own SQLite store and policy file:
 *   GPU path:       `nodegate epilog --json --land none --store TMP` on the
 *                   synthetic NVML library (docs/synthetic-gpus.md), a
 *                   scenario file written here, an empty kernel log;
 *   admission path: `nodegate ingest --accepted` of generated healthy peers,
 *                   then `nodegate admit --json --land none --from` planted
 *                   runs, then `nodegate audit verify`;
 *   fabric:         flow/testing/selftest_fabric.h;
 *   probation:      flow/testing/selftest_probation.h.
 * The landing is checked in dry-run: every run has --land none, and the row
 * compares what the landing would do (the verdict, the drain flag and the
 * drain reason of the JSON) with the table. NODEGATE_SCONTROL points at a
 * file that does not exist, so nothing here can reach Slurm. The runner
 * prints nothing: each row goes to the request's function. */
#ifndef NODEGATE_FLOW_TESTING_SELFTEST_H
#define NODEGATE_FLOW_TESTING_SELFTEST_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "flow/testing/test_env.h"

typedef struct {
	const char *self;     /* the nodegate binary to run */
	const char *lib;      /* the synthetic NVML library (a real path) */
	const char *scontrol; /* the stand-in scontrol the queue rows run (nodegate-scontrol-synth) */
	const char *brk;      /* NULL, "nvml" (the GPU cases get a library that does not
	                         exist) or "store" (the admission cases' store cannot be made) */
	ng_test_row_fn row;   /* each row, as it is decided */
	void *row_arg;
} ng_selftest_request;

typedef struct {
	char dir[PATH_MAX - 128]; /* room for the file names below */
	char self[PATH_MAX], lib[PATH_MAX], policy[PATH_MAX], kmsg[PATH_MAX], store[PATH_MAX];
	char gpu_store[PATH_MAX], broken_lib[PATH_MAX];
	bool made;            /* dir exists */
	int n_files;
	size_t rows, failed;  /* rows said, and those not as expected */
	const ng_selftest_request *req;
} ng_selftest;

/* Makes the temporary directory (under $TMPDIR, else /tmp) and its policy
 * and kernel log. 0, or -1 with err (t->made says whether dir is there). */
int ng_selftest_begin(ng_selftest *t, const ng_selftest_request *req, ng_err *err);
/* Runs every case, in the table's order. */
void ng_selftest_run(ng_selftest *t);
/* Removes the directory, if made. 0, or -1 with errno. */
int ng_selftest_remove(ng_selftest *t);

/* The rows as `nodegate selftest --json` lists them (rows_json.c): one row
 * {"case", "expected", "got", "as_expected", "problem" when not}, and the
 * whole run {"rows" (taken over), "failed", "broken" when asked, "dir" when
 * kept}. */
cJSON *ng_selftest_row_json(const char *name, const char *expected, const char *got,
                            const char *problem);
cJSON *ng_selftest_json(const ng_selftest *t, cJSON *rows, bool kept);

#endif
