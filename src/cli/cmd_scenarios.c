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
#include "cli/store_cli.h"
#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"

#ifndef NODEGATE_SCENARIO_DIR
#define NODEGATE_SCENARIO_DIR "scenarios"
#endif
#define SYNTH_LIBRARY "libnodegate-nvml-synth.so"
#define SCENARIOS_MAX 256
#define NAME_MAX_LEN 31


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

struct row {
	char severity[16];
	bool drain;
	int exit;
	double seconds;
	bool ok;
	char problem[512];
};

/* ---- reading the scenarios ---------------------------------------------------------- */

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* "07-remap-failure.json" -> "remap-failure" (the digits and dash are an order). */
static void name_of_file(const char *base, char *out, size_t cap)
{
	const char *p = base;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p != base && *p == '-')
		p++;
	else
		p = base;
	snprintf(out, cap, "%.*s", (int)(strlen(p) > 5 ? strlen(p) - 5 : 0), p);
}

static bool string_array(const cJSON *a)
{
	if (!cJSON_IsArray(a))
		return false;
	const cJSON *e;
	cJSON_ArrayForEach(e, a)
		if (!cJSON_IsString(e))
			return false;
	return true;
}

static bool env_name_ok(const char *k)
{
	if (strncmp(k, "SLURM_", 6) != 0 || !k[6])
		return false;
	for (const char *p = k; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* A PCI address as a directory name: "0000:18:00.0" and nothing else. */
static bool pci_name_ok(const char *s)
{
	unsigned d, b, v, f;
	char tail;
	return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &v, &f, &tail) == 4;
}

static int check_kernel(const cJSON *k, const char *file, ng_err *err)
{
	if (!cJSON_IsObject(k))
		return ng_fail(err, "%s: \"kernel\" must be an object", file);
	const cJSON *m;
	cJSON_ArrayForEach(m, k) {
		if (strcmp(m->string, "boot_id") == 0 && cJSON_IsString(m))
			continue;
		if (strcmp(m->string, "gpus") != 0 || !cJSON_IsArray(m))
			return ng_fail(err, "%s: kernel \"%s\": only \"boot_id\" (a string) and \"gpus\" (a list)",
			               file, m->string);
		const cJSON *g;
		cJSON_ArrayForEach(g, m) {
			const cJSON *bus = ng_json_get(g, "bus"), *drv = ng_json_get(g, "driver"),
			            *minor = ng_json_get(g, "minor"), *uuid = ng_json_get(g, "uuid"),
			            *ex = ng_json_get(g, "excluded");
			if (ex && !cJSON_IsBool(ex))
				return ng_fail(err, "%s: kernel gpus: \"excluded\" is true or false", file);
			if (!cJSON_IsObject(g) || !cJSON_IsString(bus) || !pci_name_ok(bus->valuestring))
				return ng_fail(err, "%s: kernel gpus: each needs \"bus\" like \"0000:18:00.0\"", file);
			if ((drv && !(cJSON_IsString(drv) && drv->valuestring[0] && !strchr(drv->valuestring, '/'))) ||
			    (minor && !(cJSON_IsNumber(minor) && minor->valuedouble >= 0 && minor->valuedouble < 256)) ||
			    (uuid && !cJSON_IsString(uuid)))
				return ng_fail(err, "%s: kernel gpus: \"driver\" a name, \"minor\" 0-255, \"uuid\" a string",
				               file);
		}
	}
	return 0;
}

static int read_body(struct scenario *s, const cJSON *d, ng_err *err);

static int load_scenario(struct scenario *s, const char *dir, const char *base, ng_err *err)
{
	snprintf(s->file, sizeof s->file, "%s/%s", dir, base);
	char *text;
	size_t len;
	s->doc = ng_load_json_file(s->file, &text, &len, err);
	if (!s->doc)
		return -1;
	free(text);
	const cJSON *d = s->doc;
	static const char *const keys[] = {"name", "about", "env", "args", "kmsg", "library",
	                                   "expect", "synthetic", "mode", "kernel", "runs", "store"};
	const cJSON *m;
	cJSON_ArrayForEach(m, d) {
		bool known = false;
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			known = known || strcmp(m->string, keys[i]) == 0;
		if (!known)
			return ng_fail(err, "%s: unknown key \"%s\"", s->file, m->string);
	}
	char from_file[64];
	name_of_file(base, from_file, sizeof from_file);
	const cJSON *name = ng_json_get(d, "name");
	if (!cJSON_IsString(name) || !valid_name(name->valuestring))
		return ng_fail(err, "%s: \"name\" must be a short name of a-z, 0-9 and -", s->file);
	if (strcmp(name->valuestring, from_file) != 0)
		return ng_fail(err, "%s: \"name\" is \"%s\" but the file is named for \"%s\"", s->file,
		               name->valuestring, from_file);
	snprintf(s->name, sizeof s->name, "%s", name->valuestring);
	const cJSON *runs = ng_json_get(d, "runs"), *store = ng_json_get(d, "store");
	if (store && !cJSON_IsBool(store))
		return ng_fail(err, "%s: \"store\" is true or false", s->file);
	s->keep_store = cJSON_IsTrue(store);
	if (!runs)
		return read_body(s, d, err);
	if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) < 1 || cJSON_GetArraySize(runs) > 16)
		return ng_fail(err, "%s: \"runs\" is a list of 1 to 16 runs", s->file);
	s->n_runs = (size_t)cJSON_GetArraySize(runs);
	if (!(s->run = calloc(s->n_runs, sizeof *s->run)))
		return ng_fail(err, "out of memory");
	size_t k = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, runs) {
		struct scenario *one = &s->run[k++];
		snprintf(one->file, sizeof one->file, "%.4000s (run %zu)", s->file, k);
		snprintf(one->name, sizeof one->name, "%s", s->name);
		if (!cJSON_IsObject(r))
			return ng_fail(err, "%s: each run is an object of scenario keys", one->file);
		cJSON *merged = cJSON_Duplicate(d, 1);
		one->doc = merged;
		if (!merged)
			return ng_fail(err, "out of memory");
		cJSON_DeleteItemFromObjectCaseSensitive(merged, "runs");
		cJSON_DeleteItemFromObjectCaseSensitive(merged, "store");
		const cJSON *m2;
		cJSON_ArrayForEach(m2, r) {
			bool known = false;
			for (size_t i = 2; i < 10; i++)
				known = known || strcmp(m2->string, keys[i]) == 0;
			if (!known)
				return ng_fail(err, "%s: unknown key \"%s\" in a run", one->file, m2->string);
			cJSON_DeleteItemFromObjectCaseSensitive(merged, m2->string);
			cJSON_AddItemToObject(merged, m2->string, cJSON_Duplicate(m2, 1));
		}
		if (read_body(one, merged, err) < 0)
			return -1;
	}
	/* The table's row is the last run's. */
	s->want_severity = s->run[s->n_runs - 1].want_severity;
	return 0;
}

/* Everything but the name: what to run and what to expect. */
static int read_body(struct scenario *s, const cJSON *d, ng_err *err)
{
	const cJSON *m;
	s->env = ng_json_get(d, "env");
	if (s->env) {
		if (!cJSON_IsObject(s->env))
			return ng_fail(err, "%s: \"env\" must be an object", s->file);
		cJSON_ArrayForEach(m, s->env)
			if (!env_name_ok(m->string) || !cJSON_IsString(m))
				return ng_fail(err, "%s: env \"%s\": only SLURM_* variables, as strings", s->file,
				               m->string);
	}
	s->args = ng_json_get(d, "args");
	if (s->args && !string_array(s->args))
		return ng_fail(err, "%s: \"args\" must be a list of strings", s->file);
	s->kmsg = ng_json_get(d, "kmsg");
	if (s->kmsg && !string_array(s->kmsg))
		return ng_fail(err, "%s: \"kmsg\" must be a list of lines", s->file);
	const cJSON *lib = ng_json_get(d, "library");
	if (lib && !(cJSON_IsString(lib) && (strcmp(lib->valuestring, "synthetic") == 0 ||
	                                     strcmp(lib->valuestring, "missing") == 0)))
		return ng_fail(err, "%s: \"library\" is \"synthetic\" or \"missing\"", s->file);
	s->missing_library = lib && strcmp(lib->valuestring, "missing") == 0;
	const cJSON *mode = ng_json_get(d, "mode");
	s->mode = "epilog";
	if (mode) {
		if (!cJSON_IsString(mode) || (strcmp(mode->valuestring, "epilog") != 0 &&
		                              strcmp(mode->valuestring, "prolog") != 0 &&
		                              strcmp(mode->valuestring, "health") != 0))
			return ng_fail(err, "%s: \"mode\" is \"epilog\", \"prolog\" or \"health\"", s->file);
		s->mode = mode->valuestring;
	}
	s->kernel = ng_json_get(d, "kernel");
	if (s->kernel && check_kernel(s->kernel, s->file, err) < 0)
		return -1;
	s->synthetic = ng_json_get(d, "synthetic");
	if (!s->missing_library && !cJSON_IsObject(s->synthetic))
		return ng_fail(err, "%s: \"synthetic\" (the GPUs) must be an object", s->file);

	const cJSON *ex = ng_json_get(d, "expect");
	const cJSON *sev = ng_json_get(ex, "severity"), *drain = ng_json_get(ex, "drain"),
	            *ext = ng_json_get(ex, "exit"), *max = ng_json_get(ex, "max_seconds");
	if (!cJSON_IsString(sev) || !cJSON_IsBool(drain) || !cJSON_IsNumber(ext) ||
	    (max && !(cJSON_IsNumber(max) && max->valuedouble > 0)))
		return ng_fail(err, "%s: \"expect\" needs severity (a name), drain (true or false) and "
		                    "exit (a number), and max_seconds is a number above 0",
		               s->file);
	s->want_severity = sev->valuestring;
	s->want_drain = cJSON_IsTrue(drain);
	s->want_exit = (int)ext->valuedouble;
	s->max_seconds = max ? max->valuedouble : 0;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scenario files of dir, sorted; *n of them. */
static char **list_dir(const char *dir, size_t *n, ng_err *err)
{
	DIR *d = opendir(dir);
	if (!d) {
		ng_fail(err, "cannot read the scenario directory %s: %s (give --dir)", dir,
		        strerror(errno));
		return NULL;
	}
	char **names = calloc(SCENARIOS_MAX, sizeof *names);
	bool failed = !names;
	if (failed)
		ng_fail(err, "out of memory");
	*n = 0;
	struct dirent *de;
	while (!failed && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0 || de->d_name[0] == '.')
			continue;
		if (*n == SCENARIOS_MAX) {
			failed = true;
			ng_fail(err, "%s: more than %d scenarios", dir, SCENARIOS_MAX);
		} else if (!(names[*n] = strdup(de->d_name))) {
			failed = true;
			ng_fail(err, "out of memory");
		} else {
			(*n)++;
		}
	}
	closedir(d);
	if (failed) {
		for (size_t i = 0; names && i < *n; i++)
			free(names[i]);
		free(names);
		return NULL;
	}
	qsort(names, *n, sizeof *names, cmp_names);
	return names;
}

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
	char **files = list_dir(dir, &n_files, &err);
	if (!files) {
		fprintf(stderr, "nodegate scenarios: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	struct scenario *sc = calloc(n_files ? n_files : 1, sizeof *sc);
	size_t n = 0;
	int rc = NG_EXIT_OK;
	for (size_t i = 0; sc && i < n_files; i++) {
		if (load_scenario(&sc[n], dir, files[i], &err) < 0) {
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
