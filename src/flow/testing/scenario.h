/* A GPU-check scenario (one JSON file of scenarios/, docs/epilog.md), as
 * `nodegate scenarios` reads it (scenario_read.c) and runs it
 * (scenario_run.c). */
#ifndef NODEGATE_FLOW_TESTING_SCENARIO_H
#define NODEGATE_FLOW_TESTING_SCENARIO_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define NAME_MAX_LEN 31
#define SCENARIOS_MAX 256

struct scenario {
	char file[PATH_MAX];
	char name[NAME_MAX_LEN + 1];
	cJSON *doc;
	const cJSON *env, *args, *kmsg, *synthetic, *kernel;
	const char *mode; /* "epilog", "prolog", "health" */
	bool missing_library;
	const char *want_severity;
	bool want_drain;
	int want_exit;
	double max_seconds; /* 0: no limit beyond the run's timeout */
	/* "runs": the same node checked again and again, one store kept between
	 * the runs; each run is this scenario with its own keys put over it. */
	size_t n_runs;
	struct scenario *run;
	bool keep_store;
};

/* Reads and checks dir/base into *s (s->doc owns what it points into). */
int ng_scenario_load(struct scenario *s, const char *dir, const char *base, ng_err *err);
/* The scenario files of dir (*.json), sorted by name; NULL with err. */
char **ng_scenario_list(const char *dir, size_t *n, ng_err *err);
/* Every scenario of dir, in name order, into a malloc'd *out of *n (free
 * with ng_scenarios_free, also after -1). -1 when one could not be used:
 * problem is told of the list or the first file that does not load, of
 * every name two files share, or of memory running out. */
int ng_scenarios_load(const char *dir, struct scenario **out, size_t *n,
                      void (*problem)(void *arg, const char *msg), void *arg);
void ng_scenarios_free(struct scenario *sc, size_t n);


/* One scenario's row: what the check said and whether it was expected. */
struct scenario_row {
	char severity[16];
	bool drain;
	int exit; /* -1: the run gave none */
	double seconds;
	bool ok;
	char problem[512];
};

/* Each run's output, as it ends (ok: as expected), for a front end that
 * shows it. */
typedef void (*ng_scenario_output_fn)(void *arg, const char *name, double seconds,
                                      int exit_status, bool ok, const char *out, size_t out_len,
                                      const char *err, size_t err_len);

/* Runs every run of s, in order, through `self epilog|prolog|health --json`
 * on the synthetic NVML library, each in a fresh temporary directory, with
 * one store between them when s keeps one; *row is the first run not as
 * expected, else the last. Nothing of the machine it runs on (its SLURM_*
 * variables, policy, store, kernel log) reaches a row. */
void ng_scenario_run(const struct scenario *s, const char *self, const char *library,
                     ng_scenario_output_fn output, void *output_arg, struct scenario_row *row);

/* How many of the n scenarios only names (NULL: all of them). */
size_t ng_scenarios_selected(const struct scenario *sc, size_t n, const char *only);
/* Each row as its scenario ends. */
typedef void (*ng_scenario_row_fn)(void *arg, const struct scenario *s,
                                   const struct scenario_row *row);
/* Runs the scenarios only names (NULL: every one), in order, as
 * ng_scenario_run, telling row of each. Returns those not as expected. */
size_t ng_scenarios_run(const struct scenario *sc, size_t n, const char *only, const char *self,
                        const char *library, ng_scenario_output_fn output, void *output_arg,
                        ng_scenario_row_fn row, void *row_arg);

/* A row as `nodegate scenarios --json` lists it (rows_json.c): {"scenario",
 * "severity", "drain", "exit", "seconds", "as_expected", "problem" when not}. */
cJSON *ng_scenario_row_json(const char *name, const struct scenario_row *row);

#endif
