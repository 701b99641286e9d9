/* nodegate selftest: known faults through the whole path, on this machine,
 * touching nothing of it.
 *
 * Every case runs the real binary through collect/spawn.h in a fresh
 * temporary directory with its own SQLite store and policy file:
 *   GPU path:       `nodegate epilog --json --land none --store TMP` on the
 *                   synthetic NVML library (docs/synthetic-gpus.md), a
 *                   scenario file written here, an empty kernel log;
 *   admission path: `nodegate ingest --accepted` of generated healthy peers,
 *                   then `nodegate admit --json --land none --from` planted
 *                   runs, then `nodegate audit verify`.
 * The landing is checked in dry-run: every run has --land none, and the row
 * compares what the landing would do (the verdict, the drain flag and the
 * drain reason of the JSON) with the table below. NODEGATE_SCONTROL points at
 * a file that does not exist, so nothing here can reach Slurm. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/fabric.h"
#include "cli/selftest_probation.h"
#include "cli/selftest_queue.h"
#include "cli/store_cli.h"
#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"

#define SYNTH_LIBRARY "libnodegate-nvml-synth.so"
#define PEERS 12
/* The defaults, but for the circuit breaker: in a class of 13 nodes the second
 * quarantine is already more than its share, and the selftest plants two. */
#define POLICY "{\"admission\": {\"breaker_share\": 1}}\n"
#define CLASS "selftest"
#define SOFTWARE "sw-selftest"


static int selftest_main(struct ng_cli *cli, int argc, char **argv);

enum { O_LIBRARY = 256, O_KEEP, O_BREAK };

static const struct ng_opt selftest_opts[] = {
	{"library", O_LIBRARY, "PATH", "the synthetic NVML library (default: " SYNTH_LIBRARY "\n"
	 "beside the nodegate binary, else in ../lib/nodegate/)"},
	{"break", O_BREAK, "LINK", "break one link on purpose, to see the selftest catch it:\n"
	 "nvml (the GPU cases get a library that does not exist:\n"
	 "the faults no longer drain) or store (the admission\n"
	 "cases get a store that cannot be written)"},
	{"keep", O_KEEP, NULL, "keep the temporary directory (its path is printed)"},
	NG_OPT_JSON("the rows as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_selftest_entry = {
	.name = "selftest",
	.usage = "[--library PATH] [--break nvml|store] [--keep] [--json]",
	.summary = "Inject known faults through the whole path and check where each lands.",
	.help =
	"Injects known faults through the whole path (synthetic GPU or planted probe\n"
	"failure -> record -> store -> verdict -> landing) and checks that each lands\n"
	"where the table says:\n"
	"\n"
	"  CASE            EXPECTED                  GOT                       RESULT\n"
	"  gpu-healthy     ok, no drain, exit 0      ok, no drain, exit 0      pass\n"
	"  ...\n"
	"\n"
	"GPU cases run `nodegate epilog` on the synthetic NVML library with SLURM_JOB_GPUS\n"
	"0,1: healthy, volatile uncorrectable ECC on GPU 0, PCIe x8 of x16 on GPU 1, a\n"
	"fault on GPU 3 (not the job's), GPU 0 vanished from NVML (the store knows it),\n"
	"no NVML library, an NVML call that hangs\n"
	"(--deadline 1, done within 2 s). Admission cases ingest 12 healthy peers and\n"
	"run `nodegate admit --from` on planted runs: healthy (admitted), slow twice\n"
	"(quarantined, with a case), wrong results (quarantined), no samples (held);\n"
	"then `nodegate audit verify`. Fabric cases run `nodegate fabric` on the stand-in\n"
	"fleet (nodegate-fabric-synth beside the binary, as srun, all_reduce_perf and\n"
	"ib_write_bw): a slow node planted in a 16-node gang found by bisection, a\n"
	"socket fallback caught (incomparable), a bad peer not blamed on the candidate.\n"
	"Probation cases quarantine this machine's own node id in a store of their own,\n"
	"release it, and run `nodegate epilog` as the end of a job: a healthy job\n"
	"returns the node to admitted, one ending with an ECC fault opens its case\n"
	"again, and a third quarantine in 30 days is a lemon that release refuses.\n"
	"Queue cases run `nodegate admit --queue` against a stand-in scontrol\n"
	"(nodegate-scontrol-synth beside the binary) holding one node in a file: a\n"
	"healthy unscreened node gains ng_admitted, a slow one loses it.\n"
	"\n"
	"Landing is checked in dry-run: every run has --land none, and a row compares\n"
	"what the landing would do (verdict, drain flag, drain reason) with the table;\n"
	"no real scontrol is run.\n"
	"Everything happens in a fresh temporary directory with its own store and\n"
	"policy; this machine's store, policy, kernel log, GPUs and Slurm are not used.\n",
	.opts = selftest_opts,
	.help_tail =
	"Exit status: 0 every row as expected; 1 some row is not (each says why);\n"
	"2 a usage error, or the temporary directory or library could not be used.\n",
	.exec = selftest_main,
};

struct ctx {
	char dir[PATH_MAX - 128]; /* room for the file names below */
	char self[PATH_MAX], lib[PATH_MAX], policy[PATH_MAX], kmsg[PATH_MAX], store[PATH_MAX];
	char gpu_store[PATH_MAX];
	int n_files;
	bool json;
	size_t failed, rows;
	cJSON *out_rows;
};

struct row {
	char name[32], expected[128], got[128], problem[1024];
};

/* ---- files ------------------------------------------------------------------------- */

static int write_text(const char *path, const char *text, ng_err *err)
{
	return ng_write_file_atomic(path, text, strlen(text), err);
}

/* Writes doc (taken) to a fresh file of the temporary directory; its path in out. */
static int write_json(struct ctx *c, cJSON *doc, char *out, size_t cap, ng_err *err)
{
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
	cJSON_Delete(doc);
	if (!text)
		return ng_fail(err, "out of memory");
	snprintf(out, cap, "%s/in%02d.json", c->dir, ++c->n_files);
	int rc = write_text(out, text, err);
	free(text);
	return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* Removes the temporary directory and everything in it (links not followed). */
static void remove_dir(const char *dir)
{
	if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "nodegate selftest: could not remove %s: %s\n", dir, strerror(errno));
}

/* ---- the environment every run gets --------------------------------------------------- */

static void base_env(const struct ctx *c)
{
	char scontrol[PATH_MAX];
	ng_cli_unset_prefix("SLURM_");
	ng_cli_unset_prefix("NODEGATE_");
	snprintf(scontrol, sizeof scontrol, "%s/no-scontrol", c->dir);
	setenv("NODEGATE_SCONTROL", scontrol, 1);
	/* a probation's gang is read through sacct: none here either */
	snprintf(scontrol, sizeof scontrol, "%s/no-sacct", c->dir);
	setenv("NODEGATE_SACCT", scontrol, 1);
	setenv("NODEGATE_KMSG", c->kmsg, 1);
}

/* Runs self with argv (after the program name); its JSON output in *out when
 * it printed one. Returns 0 when it ran and ended by itself. */
static int run_self(const struct ctx *c, const char *const *args, double timeout,
                    ng_spawn_result *r, cJSON **out, char *problem, size_t plen)
{
	const char *argv[32];
	size_t a = 0;
	argv[a++] = c->self;
	argv[a++] = "--policy";
	argv[a++] = c->policy;
	for (size_t i = 0; args[i] && a < 31; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	*out = NULL;
	char ebuf[256];
	if (ng_spawn_capture((char *const *)argv, timeout, 1 << 22, r, ebuf, sizeof ebuf) < 0) {
		memset(r, 0, sizeof *r);
		snprintf(problem, plen, "could not run nodegate: %s", ebuf);
		return -1;
	}
	if (!r->spawned || r->timed_out || r->signal) {
		char how[256];
		ng_spawn_describe(r, how, sizeof how);
		snprintf(problem, plen, "the run did not end well: %s", how);
		return -1;
	}
	ng_err perr;
	*out = r->out && r->out_len ? ng_json_parse(r->out, r->out_len, &perr) : NULL;
	return 0;
}

/* The last line of a run's standard error, for a row's reason. */
static void last_err_line(const ng_spawn_result *r, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (!r->err || !r->err_len)
		return;
	size_t end = r->err_len;
	while (end > 0 && (r->err[end - 1] == '\n' || r->err[end - 1] == '\0'))
		end--;
	size_t start = end;
	while (start > 0 && r->err[start - 1] != '\n')
		start--;
	snprintf(buf, cap, "%.*s", (int)(end - start > 300 ? 300 : end - start), r->err + start);
}

static void finish_row(struct ctx *c, const struct row *row)
{
	bool ok = !row->problem[0];
	c->rows++;
	c->failed += !ok;
	if (c->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "case", row->name);
		cJSON_AddStringToObject(o, "expected", row->expected);
		cJSON_AddStringToObject(o, "got", row->got);
		cJSON_AddBoolToObject(o, "as_expected", ok);
		if (!ok)
			cJSON_AddStringToObject(o, "problem", row->problem);
		cJSON_AddItemToArray(c->out_rows, o);
		return;
	}
	printf("%-16s %-28s %-32s %s\n", row->name, row->expected, row->got, ok ? "pass" : "FAIL");
	if (!ok)
		printf("  %s: %s\n", row->name, row->problem);
	fflush(stdout);
}

/* ---- the GPU path ---------------------------------------------------------------------- */

struct gpu_case {
	const char *name;
	const char *gpus;          /* the synthetic scenario; NULL: no library at all */
	const char *deadline;      /* --deadline, or NULL */
	const char *severity;
	bool drain;
	int exit;
	const char *reason_has[2]; /* the drain reason names these (any case) */
	double max_seconds;        /* 0: no limit */
};

#define SCHEMA "\"schema\":\"nodegate/synthetic-gpus/1\""
#define ECC_FAULT "{\"ecc\":{\"volatile\":{\"uncorrected\":2},\"aggregate\":{\"uncorrected\":2}}}"

static const struct gpu_case gpu_cases[] = {
	{"gpu-healthy", "{" SCHEMA ",\"gpus\":[{},{},{},{}]}", NULL, "ok", false, 0, {0}, 0},
	{"gpu-ecc", "{" SCHEMA ",\"gpus\":[" ECC_FAULT ",{},{},{}]}", NULL, "fatal", true, 1,
	 {"GPU0", "ecc"}, 0},
	{"gpu-pcie-x8", "{" SCHEMA ",\"gpus\":[{},{\"pcie\":{\"width\":8}},{},{}]}", NULL, "degraded",
	 true, 1, {"GPU1", "pcie"}, 0},
	{"gpu-not-the-jobs", "{" SCHEMA ",\"gpus\":[{},{},{}," ECC_FAULT "]}", NULL, "ok", false, 0,
	 {0}, 0},
	/* GPU 0 gone from NVML, the rest renumbered: the store (the cases above
	 * kept the node's GPUs) knows minor 0, so the job's ordinal 0 is missing,
	 * not its neighbour at NVML index 0. */
	{"gpu-vanished", "{" SCHEMA ",\"gpus\":[{\"pci_bus_id\":\"00000000:2A:00.0\",\"minor\":1,"
	 "\"uuid\":\"GPU-00000000-0000-4000-8000-000000000001\"},{\"pci_bus_id\":\"00000000:3A:00.0\","
	 "\"minor\":2,\"uuid\":\"GPU-00000000-0000-4000-8000-000000000002\"}]}", NULL, "fatal", true, 1,
	 {"GPU0", "missing"}, 0},
	{"gpu-no-nvml", NULL, NULL, "n/a", false, 0, {0}, 0},
	{"gpu-nvml-hang", "{" SCHEMA ",\"fail\":{\"hang\":\"nvmlDeviceGetTotalEccErrors\"}}", "1",
	 "unknown", false, 0, {0}, 2},
};

static void run_gpu_case(struct ctx *c, const struct gpu_case *g, const char *broken_lib)
{
	struct row row = {0};
	snprintf(row.name, sizeof row.name, "%s", g->name);
	snprintf(row.expected, sizeof row.expected, "%s, %s, exit %d", g->severity,
	         g->drain ? "drain" : "no drain", g->exit);
	snprintf(row.got, sizeof row.got, "-");

	char gpus_path[PATH_MAX] = "", absent[PATH_MAX];
	snprintf(absent, sizeof absent, "%s/absent/libnvidia-ml.so.1", c->dir);
	ng_err err;
	if (g->gpus) {
		cJSON *doc = cJSON_Parse(g->gpus);
		if (write_json(c, doc, gpus_path, sizeof gpus_path, &err) < 0) {
			snprintf(row.problem, sizeof row.problem, "%s", err.msg);
			finish_row(c, &row);
			return;
		}
	}
	base_env(c);
	setenv("SLURM_JOB_GPUS", "0,1", 1);
	setenv("NODEGATE_NVML_LIBRARY", broken_lib ? broken_lib : g->gpus ? c->lib : absent, 1);
	setenv("NODEGATE_SYNTH_GPUS", gpus_path, 1);

	const char *args[] = {"epilog", "--json", "--land", "none", "--store", c->gpu_store,
	                      g->deadline ? "--deadline" : NULL, g->deadline, NULL};
	ng_spawn_result r;
	cJSON *out;
	double timeout = g->max_seconds > 0 ? g->max_seconds + 20 : 60;
	if (run_self(c, args, timeout, &r, &out, row.problem, sizeof row.problem) == 0) {
		const cJSON *sev = ng_json_get(out, "severity"), *drain = ng_json_get(out, "drain"),
		            *ext = ng_json_get(out, "exit"), *reason = ng_json_get(out, "reason");
		if (!cJSON_IsString(sev) || !cJSON_IsBool(drain) || !cJSON_IsNumber(ext)) {
			char line[320];
			last_err_line(&r, line, sizeof line);
			snprintf(row.problem, sizeof row.problem,
			         "exit %d, and the output is not epilog's JSON result%s%s", r.exit_status,
			         line[0] ? ": " : "", line);
		} else {
			bool d = cJSON_IsTrue(drain);
			snprintf(row.got, sizeof row.got, "%s, %s, exit %d", sev->valuestring,
			         d ? "drain" : "no drain", r.exit_status);
			const char *why = cJSON_IsString(reason) ? reason->valuestring : "";
			if (strcmp(sev->valuestring, g->severity) != 0 || d != g->drain ||
			    r.exit_status != g->exit) {
				snprintf(row.problem, sizeof row.problem, "expected %s; got %s (reason: %.300s)",
				         row.expected, row.got, why[0] ? why : "none");
			} else if ((int)ext->valuedouble != r.exit_status) {
				snprintf(row.problem, sizeof row.problem,
				         "the result says exit %d but the process exited %d",
				         (int)ext->valuedouble, r.exit_status);
			} else if (g->max_seconds > 0 && r.seconds > g->max_seconds) {
				snprintf(row.problem, sizeof row.problem, "took %.2f s; at most %g s expected",
				         r.seconds, g->max_seconds);
			} else {
				for (size_t i = 0; i < 2 && g->reason_has[i]; i++)
					if (!strcasestr(why, g->reason_has[i])) {
						snprintf(row.problem, sizeof row.problem,
						         "the drain reason does not name \"%s\": %.300s",
						         g->reason_has[i], why);
						break;
					}
			}
		}
		ng_spawn_result_free(&r);
	}
	cJSON_Delete(out);
	finish_row(c, &row);
}

/* ---- the admission path ---------------------------------------------------------------- */

/* One record of the fabric metric: 9 samples around median (none when
 * median is 0), spread by about 0.4%. */
static cJSON *fabric_record(const char *node, double median, int wrong)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "schema", "nodegate/record/1");
	cJSON_AddStringToObject(r, "node", node);
	cJSON_AddStringToObject(r, "class", CLASS);
	cJSON_AddStringToObject(r, "software", SOFTWARE);
	cJSON_AddStringToObject(r, "domain", "fabric");
	cJSON_AddStringToObject(r, "metric", "nccl.all_reduce.busbw");
	cJSON_AddStringToObject(r, "unit", "GB/s");
	cJSON *s = cJSON_AddArrayToObject(r, "samples");
	for (int k = 0; median > 0 && k < 9; k++)
		cJSON_AddItemToArray(s, cJSON_CreateNumber(median * (1 + 0.001 * (k - 4))));
	cJSON_AddNumberToObject(r, "wrong", wrong);
	cJSON *d = cJSON_AddObjectToObject(r, "diag");
	cJSON_AddStringToObject(d, "pcie", "pass");
	cJSON_AddStringToObject(d, "memory", "pass");
	cJSON_AddStringToObject(d, "nccl_tests", "pass");
	return r;
}

static cJSON *one(cJSON *rec)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, rec);
	return a;
}

static void set_now(int64_t t)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)t);
	setenv("NODEGATE_NOW", buf, 1);
}

/* A row for a plain run: exit status only. */
static void run_exit_case(struct ctx *c, const char *name, const char *const *args, int want,
                          int64_t now)
{
	struct row row = {0};
	snprintf(row.name, sizeof row.name, "%s", name);
	snprintf(row.expected, sizeof row.expected, "exit %d", want);
	snprintf(row.got, sizeof row.got, "-");
	base_env(c);
	set_now(now);
	ng_spawn_result r;
	cJSON *out;
	if (run_self(c, args, 120, &r, &out, row.problem, sizeof row.problem) == 0) {
		snprintf(row.got, sizeof row.got, "exit %d", r.exit_status);
		if (r.exit_status != want) {
			char line[320];
			last_err_line(&r, line, sizeof line);
			snprintf(row.problem, sizeof row.problem, "expected exit %d, got %d%s%s", want,
			         r.exit_status, line[0] ? ": " : "", line);
		}
		ng_spawn_result_free(&r);
	}
	cJSON_Delete(out);
	finish_row(c, &row);
}

struct admit_case {
	const char *name, *node;
	double median, confirm; /* confirm 0: no --confirm-from */
	int wrong;
	const char *outcome;
	bool drain; /* a quarantine: --land slurm would drain */
	int exit;
};

static const struct admit_case admit_cases[] = {
	{"admit-healthy", "st-healthy", 300, 0, 0, "admitted", false, 0},
	{"admit-slow", "st-slow", 250, 250, 0, "quarantined", true, 1},
	{"admit-wrong", "st-wrong", 300, 0, 3, "quarantined", true, 1},
	{"admit-unmeasured", "st-unmeasured", 0, 0, 0, "held", false, 1},
};

static void run_admit_case(struct ctx *c, const struct admit_case *k, int64_t now)
{
	struct row row = {0};
	snprintf(row.name, sizeof row.name, "%s", k->name);
	snprintf(row.expected, sizeof row.expected, "%s, %s, exit %d", k->outcome,
	         k->drain ? "drain" : "no drain", k->exit);
	snprintf(row.got, sizeof row.got, "-");
	char first[PATH_MAX], confirm[PATH_MAX];
	ng_err err;
	if (write_json(c, one(fabric_record(k->node, k->median, k->wrong)), first, sizeof first,
	               &err) < 0 ||
	    (k->confirm > 0 && write_json(c, one(fabric_record(k->node, k->confirm, k->wrong)),
	                                  confirm, sizeof confirm, &err) < 0)) {
		snprintf(row.problem, sizeof row.problem, "%s", err.msg);
		finish_row(c, &row);
		return;
	}
	base_env(c);
	set_now(now);
	const char *args[] = {"--store", c->store, "admit", "--json", "--land", "none", "--from",
	                      first, k->confirm > 0 ? "--confirm-from" : NULL, confirm, NULL};
	ng_spawn_result r;
	cJSON *out;
	if (run_self(c, args, 120, &r, &out, row.problem, sizeof row.problem) == 0) {
		const cJSON *oc = ng_json_get(out, "outcome"), *cs = ng_json_get(out, "case");
		if (!cJSON_IsString(oc)) {
			char line[320];
			last_err_line(&r, line, sizeof line);
			snprintf(row.got, sizeof row.got, "no decision, exit %d", r.exit_status);
			snprintf(row.problem, sizeof row.problem, "exit %d, and no admit decision%s%s",
			         r.exit_status, line[0] ? ": " : "", line);
		} else {
			bool drain = strcmp(oc->valuestring, "quarantined") == 0;
			snprintf(row.got, sizeof row.got, "%s, %s, exit %d", oc->valuestring,
			         drain ? "drain" : "no drain", r.exit_status);
			if (strcmp(oc->valuestring, k->outcome) != 0 || drain != k->drain ||
			    r.exit_status != k->exit)
				snprintf(row.problem, sizeof row.problem, "expected %s; got %s", row.expected,
				         row.got);
			else if (drain && !(cJSON_IsNumber(cs) && cs->valuedouble > 0))
				snprintf(row.problem, sizeof row.problem, "quarantined without a case");
		}
		ng_spawn_result_free(&r);
	}
	cJSON_Delete(out);
	finish_row(c, &row);
}

static void run_admission(struct ctx *c)
{
	int64_t now = (int64_t)time(NULL);
	cJSON *peers = cJSON_CreateArray();
	for (int i = 0; i < PEERS; i++) {
		char node[32];
		snprintf(node, sizeof node, "st-peer%02d", i);
		/* node medians in pairs either side of 300 GB/s */
		double m = 300.0 * (1 + (i % 2 ? -1 : 1) * 0.0005 * (i / 2 + 1));
		cJSON_AddItemToArray(peers, fabric_record(node, m, 0));
	}
	char peers_path[PATH_MAX];
	ng_err err;
	if (write_json(c, peers, peers_path, sizeof peers_path, &err) < 0) {
		struct row row = {0};
		snprintf(row.name, sizeof row.name, "ingest-peers");
		snprintf(row.expected, sizeof row.expected, "exit 0");
		snprintf(row.got, sizeof row.got, "-");
		snprintf(row.problem, sizeof row.problem, "%s", err.msg);
		finish_row(c, &row);
		return;
	}
	const char *ingest[] = {"--store", c->store, "ingest", "--accepted", peers_path, NULL};
	run_exit_case(c, "ingest-peers", ingest, 0, now - 86400);
	for (size_t i = 0; i < sizeof admit_cases / sizeof admit_cases[0]; i++)
		run_admit_case(c, &admit_cases[i], now);
	const char *audit[] = {"--store", c->store, "audit", "verify", NULL};
	run_exit_case(c, "audit-verify", audit, 0, now + 60);
}

/* ---- the fabric (selftest_fabric.c) --------------------------------------------------- */

static void fabric_row(void *ctx, const char *name, const char *expected, const char *got,
                       const char *problem)
{
	struct row row;
	snprintf(row.name, sizeof row.name, "%s", name);
	snprintf(row.expected, sizeof row.expected, "%s", expected);
	snprintf(row.got, sizeof row.got, "%s", got);
	snprintf(row.problem, sizeof row.problem, "%s", problem);
	finish_row(ctx, &row);
}

/* ---- the command ----------------------------------------------------------------------- */


static int selftest_main(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	const struct ng_cmd_entry *e = &ng_cmd_selftest_entry;
	const char *library = NULL, *brk = NULL;
	bool keep = false;
	static struct ctx c; /* large; one per process */
	memset(&c, 0, sizeof c);
	int opt;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_selftest_entry, argc, argv);
	while ((opt = ng_opt_next(&op)) != NG_OPT_END) {
		switch (opt) {
		case 'j': c.json = true; break;
		case O_LIBRARY: library = op.arg; break;
		case O_KEEP: keep = true; break;
		case O_BREAK:
			if (strcmp(op.arg, "nvml") != 0 && strcmp(op.arg, "store") != 0)
				return ng_cmd_usage_error(e, "--break is nvml or store, not \"%s\"", op.arg);
			brk = op.arg;
			break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[optind]);

	char self_dir[PATH_MAX - 64], lib[PATH_MAX];
	if (ng_self_path(c.self, sizeof c.self, self_dir, sizeof self_dir) < 0) {
		fprintf(stderr, "nodegate selftest: cannot find the nodegate binary (/proc/self/exe)\n");
		return NG_EXIT_USAGE;
	}
	if (!library) {
		/* beside the binary (a build), else lib/nodegate/ of the install */
		ng_shipped_path(SYNTH_LIBRARY, "lib/nodegate/" SYNTH_LIBRARY, lib, sizeof lib);
		library = lib;
	}
	if (!realpath(library, c.lib)) {
		fprintf(stderr, "nodegate selftest: no synthetic NVML library at %s (%s): build the "
		                "nodegate-nvml-synth target, or give --library\n",
		        library, strerror(errno));
		return NG_EXIT_USAGE;
	}

	const char *tmp = getenv("TMPDIR");
	snprintf(c.dir, sizeof c.dir, "%s/nodegate-selftest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(c.dir)) {
		fprintf(stderr, "nodegate selftest: cannot make a temporary directory (%s): %s\n", c.dir,
		        strerror(errno));
		return NG_EXIT_USAGE;
	}
	snprintf(c.policy, sizeof c.policy, "%s/policy.json", c.dir);
	snprintf(c.kmsg, sizeof c.kmsg, "%s/kmsg.log", c.dir);
	snprintf(c.gpu_store, sizeof c.gpu_store, "%s/gpu-store.db", c.dir);
	if (brk && strcmp(brk, "store") == 0) /* under a plain file: cannot be made */
		snprintf(c.store, sizeof c.store, "%s/kmsg.log/store.db", c.dir);
	else
		snprintf(c.store, sizeof c.store, "%s/store.db", c.dir);
	char broken_lib[PATH_MAX];
	snprintf(broken_lib, sizeof broken_lib, "%s/broken/" SYNTH_LIBRARY, c.dir);
	ng_err err;
	if (write_text(c.policy, POLICY, &err) < 0 || write_text(c.kmsg, "", &err) < 0) {
		fprintf(stderr, "nodegate selftest: %s\n", err.msg);
		if (!keep)
			remove_dir(c.dir);
		return NG_EXIT_USAGE;
	}

	if (c.json)
		c.out_rows = cJSON_CreateArray();
	else {
		if (brk)
			printf("broken on purpose: %s\n", brk);
		printf("%-16s %-28s %-32s %s\n", "CASE", "EXPECTED", "GOT", "RESULT");
		fflush(stdout);
	}
	bool break_nvml = brk && strcmp(brk, "nvml") == 0;
	for (size_t i = 0; i < sizeof gpu_cases / sizeof gpu_cases[0]; i++)
		run_gpu_case(&c, &gpu_cases[i], break_nvml ? broken_lib : NULL);
	run_admission(&c);
	ng_selftest_fabric(c.dir, c.self, c.policy, fabric_row, &c);
	ng_selftest_probation(c.dir, c.self, c.policy, break_nvml ? broken_lib : c.lib, fabric_row, &c);
	ng_selftest_queue(c.dir, c.self, c.policy, fabric_row, &c);

	if (c.json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddItemToObject(doc, "rows", c.out_rows);
		cJSON_AddNumberToObject(doc, "failed", (double)c.failed);
		if (brk)
			cJSON_AddStringToObject(doc, "broken", brk);
		if (keep)
			cJSON_AddStringToObject(doc, "dir", c.dir);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		if (c.failed)
			printf("%zu of %zu cases not as expected\n", c.failed, c.rows);
		else
			printf("all %zu cases as expected\n", c.rows);
		if (keep)
			printf("kept: %s\n", c.dir);
	}
	if (!keep)
		remove_dir(c.dir);
	return c.failed ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}
