/* nodegate scenarios: its options, and the table of rows (docs/epilog.md);
 * reading and running a scenario is flow/testing/scenario.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/install_tree.h"
#include "flow/testing/scenario.h"

#ifndef NODEGATE_SCENARIO_DIR
#define NODEGATE_SCENARIO_DIR "scenarios"
#endif
#define SYNTH_LIBRARY "libnodegate-nvml-synth.so"


static int scenarios_main(struct ng_cli *cli, int argc, char **argv);

enum { O_DIR = 256, O_LIBRARY, O_ONLY };

static const struct ng_opt scenarios_opts[] = {
	{"dir", O_DIR, "DIR", "the scenario files (default: ../share/nodegate/scenarios\n"
	 "from the binary when installed, else the source tree's)"},
	{"library", O_LIBRARY, "PATH", "the synthetic NVML library (default: " SYNTH_LIBRARY "\n"
	 "beside the nodegate binary, else in ../lib/nodegate/)"},
	{"only", O_ONLY, "NAME", "run one scenario"},
	{"verbose", 'v', NULL, "print each run's output under its row"},
	NG_OPT_JSON("the rows as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_scenarios_entry = {
	.name = "scenarios",
	.usage = "[--dir DIR] [--library PATH] [--only NAME] [--verbose] [--json]",
	.summary = "Run every GPU fault scenario through `nodegate epilog` on synthetic GPUs.",
	.help =
	"Runs `nodegate epilog` once per scenario file (scenarios/*.json, in name\n"
	"order) against the synthetic NVML library, and prints the epilog seed's table:\n"
	"\n"
	"  SCENARIO        SEVERITY  DRAIN  EXIT\n"
	"  healthy         ok        no     0\n"
	"  ...\n"
	"\n"
	"A row that differs from its scenario's expectation is marked and makes the\n"
	"exit status 1. No GPU, driver or Slurm is needed; nothing of this machine's\n"
	"policy, kernel log or store is used.\n",
	.opts = scenarios_opts,
	.help_tail =
	"Exit status: 0 every row as expected; 1 some row is not; 2 a usage error, or a\n"
	"scenario file or the library could not be used.\n",
	.exec = scenarios_main,
};

/* --verbose: each run's output under its row; without it, only a run's that
 * was not as expected. */
static void show_output(void *arg, const char *name, double seconds, int exit_status, bool ok,
                        const char *out, size_t out_len, const char *err, size_t err_len)
{
	bool verbose = *(const bool *)arg;
	if (!verbose && ok)
		return;
	fprintf(stderr, "--- %s (%.2f s, exit %d)\n", name, seconds, exit_status);
	if (out_len)
		fprintf(stderr, "%s%s", out, out[out_len - 1] == '\n' ? "" : "\n");
	if (err_len)
		fprintf(stderr, "%s%s", err, err[err_len - 1] == '\n' ? "" : "\n");
}

static void say_problem(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "nodegate scenarios: %s\n", msg);
}

/* The rows: the table's, or --json's array, each as its scenario ends. */
struct rows {
	bool json;
	size_t width;
	cJSON *rows;
};

static void print_row(void *arg, const struct scenario *s, const struct scenario_row *row)
{
	struct rows *o = arg;
	if (o->json) {
		cJSON_AddItemToArray(o->rows, ng_scenario_row_json(s->name, row));
		return;
	}
	char ex[16];
	snprintf(ex, sizeof ex, "%d", row->exit);
	printf("%-*s %-9s %-6s %s%s%s\n", (int)o->width, s->name, row->severity,
	       row->drain ? "yes" : "no", row->exit < 0 ? "-" : ex, row->ok ? "" : "    <- ",
	       row->ok ? "" : row->problem);
	fflush(stdout);
}

static int scenarios_main(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	const struct ng_cmd_entry *e = &ng_cmd_scenarios_entry;
	const char *dir = NULL, *library = NULL, *only = NULL;
	bool json = false, verbose = false;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_scenarios_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'v': verbose = true; break;
		case 'j': json = true; break;
		case O_DIR: dir = op.arg; break;
		case O_LIBRARY: library = op.arg; break;
		case O_ONLY: only = op.arg; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[optind]);

	char self[PATH_MAX], self_dir[PATH_MAX - 64], lib[PATH_MAX];
	if (ng_self_path(self, sizeof self, self_dir, sizeof self_dir) < 0) {
		fprintf(stderr, "nodegate scenarios: cannot find the nodegate binary (/proc/self/exe)\n");
		return NG_EXIT_USAGE;
	}
	if (!library) {
		/* beside the binary (a build), else lib/nodegate/ of the install */
		ng_shipped_path(SYNTH_LIBRARY, "lib/nodegate/" SYNTH_LIBRARY, lib, sizeof lib);
		library = lib;
	}
	if (access(library, R_OK) != 0) {
		fprintf(stderr, "nodegate scenarios: no synthetic NVML library at %s (%s): build the "
		                "nodegate-nvml-synth target, or give --library\n",
		        library, strerror(errno));
		return NG_EXIT_USAGE;
	}
	/* The library is loaded by the runs from their own directory: make it absolute. */
	char lib_abs[PATH_MAX];
	if (!realpath(library, lib_abs)) {
		fprintf(stderr, "nodegate scenarios: %s: %s\n", library, strerror(errno));
		return NG_EXIT_USAGE;
	}

	/* An install's share/nodegate/scenarios, found from the binary; the
	 * source tree's only for a binary that was never installed. */
	char shipped[1024];
	if (!dir)
		dir = ng_shipped_path(NULL, "share/nodegate/scenarios", shipped, sizeof shipped) == 0
		              ? shipped
		              : NODEGATE_SCENARIO_DIR;
	struct scenario *sc;
	size_t n;
	int rc = ng_scenarios_load(dir, &sc, &n, say_problem, NULL) < 0 ? NG_EXIT_USAGE : NG_EXIT_OK;
	size_t selected = rc == NG_EXIT_OK ? ng_scenarios_selected(sc, n, only) : 0;
	if (rc == NG_EXIT_OK && selected == 0) {
		if (only)
			fprintf(stderr, "nodegate scenarios: no scenario named \"%s\" in %s\n", only, dir);
		else
			fprintf(stderr, "nodegate scenarios: no scenarios in %s\n", dir);
		rc = NG_EXIT_USAGE;
	}

	if (rc == NG_EXIT_OK) {
		size_t width = 15;
		for (size_t i = 0; i < n; i++)
			if (strlen(sc[i].name) > width)
				width = strlen(sc[i].name);
		cJSON *rows = json ? cJSON_CreateArray() : NULL;
		if (!json) {
			printf("%-*s %-9s %-6s %s\n", (int)width, "SCENARIO", "SEVERITY", "DRAIN", "EXIT");
			fflush(stdout);
		}
		struct rows out = {json, width, rows};
		size_t failed = ng_scenarios_run(sc, n, only, self, lib_abs, show_output, &verbose,
		                                 print_row, &out);
		if (json) {
			ng_print_json(rows);
			cJSON_Delete(rows);
		} else if (failed) {
			printf("%zu of %zu scenario%s not as expected\n", failed, selected,
			       selected == 1 ? "" : "s");
		}
		rc = failed ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
	}
	ng_scenarios_free(sc, n);
	return rc;
}
