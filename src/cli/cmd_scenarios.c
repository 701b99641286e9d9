/* nodegate scenarios: every GPU fault case, through the real binary and the
 * synthetic NVML library, as the epilog seed's table.
 *
 * A scenario is one JSON file in scenarios/ (docs/epilog.md):
 *   {"name": "ecc", "about": "...",
 *    "env": {"SLURM_JOB_GPUS": "0,1"},    the job's environment (SLURM_* only)
 *    "args": ["--deadline", "2"],         more options for `nodegate epilog`
 *    "kmsg": ["6,1,5000000,-;NVRM: Xid (PCI:0000:18:00): 79, ..."],
 *    "library": "synthetic" | "missing",  NVML present (default) or absent
 *    "expect": {"severity": "fatal", "drain": true, "exit": 1, "max_seconds": 3},
 *    "synthetic": {...},                  the GPUs (docs/synthetic-gpus.md)
 *    "mode": "epilog" | "prolog" | "health",  the verb (default epilog)
 *    "kernel": {"boot_id": "...", "gpus": [{"bus": "0000:18:00.0", "driver": "nvidia",
 *               "minor": 0, "uuid": "GPU-..."}]}}  what the kernel sees, apart from NVML
 * Each runs `nodegate --policy {} epilog --json --no-store --root DIR` through
 * collect/spawn.h with NODEGATE_NVML_LIBRARY, NODEGATE_SYNTH_GPUS and
 * NODEGATE_KMSG pointing at files in a fresh temporary directory, and every
 * other SLURM_* variable removed: nothing of the machine it runs on (its
 * policy, its kernel log, its GPUs, its store) reaches a row. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/scenario.h"
#include "cli/store_cli.h"
#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"

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

struct row {
	char severity[16];
	bool drain;
	int exit;
	double seconds;
	bool ok;
	char problem[512];
};

/* ---- running one --------------------------------------------------------------------- */

static int write_text(const char *path, const char *text, ng_err *err)
{
	return ng_write_file_atomic(path, text, strlen(text), err);
}

struct paths {
	char dir[PATH_MAX - 64]; /* room for the file names below */
	char gpus[PATH_MAX], kmsg[PATH_MAX], policy[PATH_MAX], absent[PATH_MAX], root[PATH_MAX];
};

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void cleanup(const struct paths *p)
{
	unlink(p->gpus);
	unlink(p->kmsg);
	unlink(p->policy);
	nftw(p->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(p->dir);
}

/* mkdir -p under the scenario's own directory. */
static int make_dirs(char *path)
{
	for (char *q = path + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		int rc = mkdir(path, 0700);
		*q = '/';
		if (rc < 0 && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* What the kernel sees, as the files gpu_kernel.c reads: each GPU on the
 * PCI bus (vendor, class, a driver link) and in the driver's list. */
static int write_kernel(const cJSON *k, const char *root, ng_err *err)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/sys/bus/pci/devices", root);
	if (make_dirs(path) < 0)
		return ng_fail(err, "cannot make %s: %s", path, strerror(errno));
	const cJSON *boot = ng_json_get(k, "boot_id");
	if (cJSON_IsString(boot)) {
		snprintf(path, sizeof path, "%s/proc/sys/kernel/random", root);
		if (make_dirs(path) < 0)
			return ng_fail(err, "cannot make %s: %s", path, strerror(errno));
		char text[128];
		snprintf(text, sizeof text, "%.100s\n", boot->valuestring);
		snprintf(path, sizeof path, "%s/proc/sys/kernel/random/boot_id", root);
		if (write_text(path, text, err) < 0)
			return -1;
	}
	const cJSON *g;
	cJSON_ArrayForEach(g, ng_json_get(k, "gpus")) {
		const char *bus = ng_json_get(g, "bus")->valuestring;
		const cJSON *drv = ng_json_get(g, "driver"), *minor = ng_json_get(g, "minor"),
		            *uuid = ng_json_get(g, "uuid");
		bool excluded = cJSON_IsTrue(ng_json_get(g, "excluded"));
		const char *driver = cJSON_IsString(drv) ? drv->valuestring : "nvidia";
		snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s", root, bus);
		if (make_dirs(path) < 0)
			return ng_fail(err, "cannot make %s: %s", path, strerror(errno));
		char file[PATH_MAX + 96];
		snprintf(file, sizeof file, "%s/vendor", path);
		if (write_text(file, "0x10de\n", err) < 0)
			return -1;
		snprintf(file, sizeof file, "%s/class", path);
		if (write_text(file, "0x030200\n", err) < 0)
			return -1;
		char target[128];
		snprintf(target, sizeof target, "../../../bus/pci/drivers/%.60s", driver);
		snprintf(file, sizeof file, "%s/driver", path);
		if (symlink(target, file) < 0)
			return ng_fail(err, "cannot link %s: %s", file, strerror(errno));
		if (strcmp(driver, "nvidia") != 0)
			continue; /* only the nvidia driver lists a GPU in /proc/driver/nvidia */
		snprintf(path, sizeof path, "%s/proc/driver/nvidia/gpus/%s", root, bus);
		if (make_dirs(path) < 0)
			return ng_fail(err, "cannot make %s: %s", path, strerror(errno));
		char info[512];
		snprintf(info, sizeof info,
		         "Model:           NVIDIA H100 80GB HBM3\nIRQ:             100\nGPU UUID:        %.60s\n"
		         "Bus Location:    %s\nDevice Minor:    %d\nGPU Excluded:    %s\n",
		         cJSON_IsString(uuid) ? uuid->valuestring : "GPU-00000000-0000-0000-0000-000000000000",
		         bus, cJSON_IsNumber(minor) ? (int)minor->valuedouble : 0, excluded ? "Yes" : "No");
		snprintf(file, sizeof file, "%s/information", path);
		if (write_text(file, info, err) < 0)
			return -1;
	}
	return 0;
}

static int write_files(const struct scenario *s, const struct paths *p, ng_err *err);

static int prepare(const struct scenario *s, struct paths *p, ng_err *err)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(p->dir, sizeof p->dir, "%s/nodegate-scenario-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir))
		return ng_fail(err, "cannot make a temporary directory (%s): %s", p->dir,
		               strerror(errno));
	snprintf(p->gpus, sizeof p->gpus, "%s/gpus.json", p->dir);
	snprintf(p->kmsg, sizeof p->kmsg, "%s/kmsg.log", p->dir);
	snprintf(p->policy, sizeof p->policy, "%s/policy.json", p->dir);
	snprintf(p->absent, sizeof p->absent, "%s/libnvidia-ml.so.1", p->dir);
	snprintf(p->root, sizeof p->root, "%s/root", p->dir);
	if (write_files(s, p, err) < 0) {
		cleanup(p);
		return -1;
	}
	return 0;
}

static int write_files(const struct scenario *s, const struct paths *p, ng_err *err)
{
	if (write_text(p->policy, "{}\n", err) < 0)
		return -1;
	if (mkdir(p->root, 0700) < 0)
		return ng_fail(err, "cannot make %s: %s", p->root, strerror(errno));
	if (s->kernel && write_kernel(s->kernel, p->root, err) < 0)
		return -1;
	ng_strbuf k = {0};
	const cJSON *line;
	cJSON_ArrayForEach(line, s->kmsg) {
		ng_strbuf_adds(&k, line->valuestring);
		ng_strbuf_addc(&k, '\n');
	}
	int rc = write_text(p->kmsg, k.s ? k.s : "", err);
	ng_strbuf_free(&k);
	if (rc < 0)
		return -1;
	if (s->synthetic) {
		char *g = cJSON_Print(s->synthetic);
		rc = g ? write_text(p->gpus, g, err) : ng_fail(err, "out of memory");
		free(g);
	}
	return rc;
}

static void run_one(const struct scenario *s, const char *self, const char *library, bool verbose,
                    const char *store, struct row *row)
{
	memset(row, 0, sizeof *row);
	snprintf(row->severity, sizeof row->severity, "-");
	row->exit = -1;
	struct paths p = {0};
	ng_err err;
	if (prepare(s, &p, &err) < 0) {
		snprintf(row->problem, sizeof row->problem, "%s", err.msg);
		return;
	}
	ng_cli_unset_prefix("SLURM_"); /* nothing of the machine it runs on */
	const cJSON *m;
	cJSON_ArrayForEach(m, s->env)
		setenv(m->string, m->valuestring, 1);
	setenv("NODEGATE_NVML_LIBRARY", s->missing_library ? p.absent : library, 1);
	setenv("NODEGATE_SYNTH_GPUS", p.gpus, 1);
	setenv("NODEGATE_KMSG", p.kmsg, 1);
	/* The health lock (and anything else kept between runs) in the row's own
	 * directory: rows run side by side, and none is this host's real check. */
	setenv("NODEGATE_STATE_DIR", p.dir, 1);
	unsetenv("NODEGATE_STORE");
	unsetenv("NODEGATE_POLICY");

	size_t n_args = s->args ? (size_t)cJSON_GetArraySize(s->args) : 0;
	char **argv = calloc(n_args + 12, sizeof *argv);
	if (!argv) {
		snprintf(row->problem, sizeof row->problem, "out of memory");
		cleanup(&p);
		return;
	}
	size_t a = 0;
	argv[a++] = (char *)self;
	argv[a++] = "--policy";
	argv[a++] = p.policy;
	argv[a++] = (char *)s->mode;
	argv[a++] = "--json";
	if (store) {
		argv[a++] = "--store";
		argv[a++] = (char *)store;
	} else {
		argv[a++] = "--no-store";
	}
	argv[a++] = "--root";
	argv[a++] = p.root;
	cJSON_ArrayForEach(m, s->args)
		argv[a++] = m->valuestring;
	argv[a] = NULL;

	ng_spawn_result r;
	char ebuf[256];
	double timeout = s->max_seconds > 0 ? s->max_seconds + 30 : 60;
	int rc = ng_spawn_capture(argv, timeout, 1 << 20, &r, ebuf, sizeof ebuf);
	free(argv);
	cleanup(&p);
	if (rc < 0) {
		snprintf(row->problem, sizeof row->problem, "could not run nodegate: %s", ebuf);
		return;
	}
	row->seconds = r.seconds;
	row->exit = r.exit_status;
	ng_err perr;
	cJSON *out = r.out && r.out_len ? ng_json_parse(r.out, r.out_len, &perr) : NULL;
	const cJSON *sev = ng_json_get(out, "severity"), *drain = ng_json_get(out, "drain"),
	            *ext = ng_json_get(out, "exit");
	if (!r.spawned || r.timed_out || r.signal) {
		char how[256];
		ng_spawn_describe(&r, how, sizeof how);
		snprintf(row->problem, sizeof row->problem, "the run did not end well: %s", how);
	} else if (!cJSON_IsString(sev) || !cJSON_IsBool(drain) || !cJSON_IsNumber(ext)) {
		snprintf(row->problem, sizeof row->problem, "the run's output is not its JSON result");
	} else {
		snprintf(row->severity, sizeof row->severity, "%s", sev->valuestring);
		row->drain = cJSON_IsTrue(drain);
		if ((int)ext->valuedouble != r.exit_status)
			snprintf(row->problem, sizeof row->problem,
			         "the result says exit %d but the process exited %d", (int)ext->valuedouble,
			         r.exit_status);
	}
	if (!row->problem[0]) {
		if (strcmp(row->severity, s->want_severity) != 0 || row->drain != s->want_drain ||
		    row->exit != s->want_exit)
			snprintf(row->problem, sizeof row->problem, "expected %s %s %d", s->want_severity,
			         s->want_drain ? "yes" : "no", s->want_exit);
		else if (s->max_seconds > 0 && row->seconds > s->max_seconds)
			snprintf(row->problem, sizeof row->problem, "took %.2f s; at most %g s expected",
			         row->seconds, s->max_seconds);
	}
	row->ok = !row->problem[0];
	if (verbose || !row->ok) {
		fprintf(stderr, "--- %s (%.2f s, exit %d)\n", s->name, r.seconds, r.exit_status);
		if (r.out_len)
			fprintf(stderr, "%s%s", r.out, r.out[r.out_len - 1] == '\n' ? "" : "\n");
		if (r.err_len)
			fprintf(stderr, "%s%s", r.err, r.err[r.err_len - 1] == '\n' ? "" : "\n");
	}
	cJSON_Delete(out);
	ng_spawn_result_free(&r);
}

/* Every run of a scenario, in order, with one store between them when it
 * keeps one; the row is the first run not as expected, else the last. */
static void run_scenario(const struct scenario *s, const char *self, const char *library,
                         bool verbose, struct row *row)
{
	if (!s->n_runs) {
		run_one(s, self, library, verbose, NULL, row);
		return;
	}
	char dir[PATH_MAX - 64] = "", store[PATH_MAX] = "";
	if (s->keep_store) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/nodegate-scenario-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			memset(row, 0, sizeof *row);
			snprintf(row->severity, sizeof row->severity, "-");
			snprintf(row->problem, sizeof row->problem, "cannot make a store directory: %s",
			         strerror(errno));
			return;
		}
		snprintf(store, sizeof store, "%s/nodegate.db", dir);
	}
	for (size_t k = 0; k < s->n_runs; k++) {
		run_one(&s->run[k], self, library, verbose, store[0] ? store : NULL, row);
		if (!row->ok) {
			char was[sizeof row->problem];
			snprintf(was, sizeof was, "%s", row->problem);
			snprintf(row->problem, sizeof row->problem, "run %zu of %zu: %.400s", k + 1, s->n_runs, was);
			break;
		}
	}
	if (dir[0]) {
		static const char *const files[] = {"nodegate.db", "nodegate.db-wal", "nodegate.db-shm",
		                                    "nodegate.db-journal"};
		for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
			char f[PATH_MAX];
			snprintf(f, sizeof f, "%s/%s", dir, files[i]);
			unlink(f);
		}
		rmdir(dir);
	}
}

/* ---- the command ----------------------------------------------------------------------- */


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
	ng_err err;
	size_t n_files = 0;
	char **files = ng_scenario_list(dir, &n_files, &err);
	if (!files) {
		fprintf(stderr, "nodegate scenarios: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	struct scenario *sc = calloc(n_files ? n_files : 1, sizeof *sc);
	size_t n = 0;
	int rc = NG_EXIT_OK;
	for (size_t i = 0; sc && i < n_files; i++) {
		if (ng_scenario_load(&sc[n], dir, files[i], &err) < 0) {
			fprintf(stderr, "nodegate scenarios: %s\n", err.msg);
			cJSON_Delete(sc[n].doc);
			rc = NG_EXIT_USAGE;
			break;
		}
		for (size_t k = 0; k < n; k++)
			if (strcmp(sc[k].name, sc[n].name) == 0) {
				fprintf(stderr, "nodegate scenarios: two scenarios named %s\n", sc[n].name);
				rc = NG_EXIT_USAGE;
			}
		n++;
	}
	if (!sc) {
		fprintf(stderr, "nodegate scenarios: out of memory\n");
		rc = NG_EXIT_USAGE;
	}
	size_t selected = 0;
	for (size_t i = 0; rc == NG_EXIT_OK && i < n; i++)
		selected += !only || strcmp(sc[i].name, only) == 0;
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
		size_t failed = 0;
		for (size_t i = 0; i < n; i++) {
			if (only && strcmp(sc[i].name, only) != 0)
				continue;
			struct row row;
			run_scenario(&sc[i], self, lib_abs, verbose, &row);
			failed += !row.ok;
			if (json) {
				cJSON *o = cJSON_CreateObject();
				cJSON_AddStringToObject(o, "scenario", sc[i].name);
				cJSON_AddStringToObject(o, "severity", row.severity);
				cJSON_AddBoolToObject(o, "drain", row.drain);
				cJSON_AddNumberToObject(o, "exit", row.exit);
				cJSON_AddNumberToObject(o, "seconds", row.seconds);
				cJSON_AddBoolToObject(o, "as_expected", row.ok);
				if (!row.ok)
					cJSON_AddStringToObject(o, "problem", row.problem);
				cJSON_AddItemToArray(rows, o);
			} else {
				char ex[16];
				snprintf(ex, sizeof ex, "%d", row.exit);
				printf("%-*s %-9s %-6s %s%s%s\n", (int)width, sc[i].name, row.severity,
				       row.drain ? "yes" : "no", row.exit < 0 ? "-" : ex,
				       row.ok ? "" : "    <- ", row.ok ? "" : row.problem);
				fflush(stdout);
			}
		}
		if (json) {
			ng_print_json(rows);
			cJSON_Delete(rows);
		} else if (failed) {
			printf("%zu of %zu scenario%s not as expected\n", failed, selected,
			       selected == 1 ? "" : "s");
		}
		rc = failed ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
	}
	for (size_t i = 0; sc && i < n; i++) {
		for (size_t k = 0; k < sc[i].n_runs; k++)
			cJSON_Delete(sc[i].run[k].doc);
		free(sc[i].run);
		cJSON_Delete(sc[i].doc);
	}
	free(sc);
	for (size_t i = 0; i < n_files; i++)
		free(files[i]);
	free(files);
	return rc;
}
