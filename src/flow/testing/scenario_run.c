/* Running the GPU fault scenarios of `nodegate scenarios`
 * (flow/testing/scenario.h): every case through the real binary and the
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
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "flow/testing/scenario.h"
#include "flow/testing/test_env.h"

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

static void run_one(const struct scenario *s, const char *self, const char *library,
                    ng_scenario_output_fn output, void *output_arg, const char *store,
                    struct scenario_row *row)
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
	ng_env_unset_prefix("SLURM_"); /* nothing of the machine it runs on */
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
	if (output)
		output(output_arg, s->name, r.seconds, r.exit_status, row->ok, r.out, r.out_len, r.err,
		       r.err_len);
	cJSON_Delete(out);
	ng_spawn_result_free(&r);
}

void ng_scenario_run(const struct scenario *s, const char *self, const char *library,
                     ng_scenario_output_fn output, void *output_arg, struct scenario_row *row)
{
	if (!s->n_runs) {
		run_one(s, self, library, output, output_arg, NULL, row);
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
		run_one(&s->run[k], self, library, output, output_arg, store[0] ? store : NULL, row);
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

size_t ng_scenarios_selected(const struct scenario *sc, size_t n, const char *only)
{
	size_t selected = 0;
	for (size_t i = 0; i < n; i++)
		selected += !only || strcmp(sc[i].name, only) == 0;
	return selected;
}

size_t ng_scenarios_run(const struct scenario *sc, size_t n, const char *only, const char *self,
                        const char *library, ng_scenario_output_fn output, void *output_arg,
                        ng_scenario_row_fn row, void *row_arg)
{
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (only && strcmp(sc[i].name, only) != 0)
			continue;
		struct scenario_row r;
		ng_scenario_run(&sc[i], self, library, output, output_arg, &r);
		failed += !r.ok;
		row(row_arg, &sc[i], &r);
	}
	return failed;
}
