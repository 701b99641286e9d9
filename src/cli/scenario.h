/* A GPU-check scenario (one JSON file of scenarios/, docs/epilog.md), as
 * `nodegate scenarios` reads it (scenario_read.c) and runs it
 * (cmd_scenarios.c). */
#ifndef NODEGATE_CLI_SCENARIO_H
#define NODEGATE_CLI_SCENARIO_H

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

#endif
