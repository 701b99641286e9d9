/* `nodegate selftest`'s runner (flow/testing/selftest.h). */
#include "flow/testing/selftest.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "flow/testing/selftest_fabric.h"
#include "flow/testing/selftest_probation.h"
#include "flow/testing/selftest_queue.h"

#define PEERS 12
/* The defaults, but for the circuit breaker: in a class of 13 nodes the second
 * quarantine is already more than its share, and the selftest plants two. */
#define POLICY "{\"admission\": {\"breaker_share\": 1}}\n"
#define CLASS "selftest"
#define SOFTWARE "sw-selftest"

struct row {
	char name[32], expected[128], got[128], problem[1024];
};

/* ---- files ------------------------------------------------------------------------- */

static int write_text(const char *path, const char *text, ng_err *err)
{
	return ng_write_file_atomic(path, text, strlen(text), err);
}

/* Writes doc (taken) to a fresh file of the temporary directory; its path in out. */
static int write_json(ng_selftest *c, cJSON *doc, char *out, size_t cap, ng_err *err)
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

/* ---- the environment every run gets --------------------------------------------------- */

static void base_env(const ng_selftest *c)
{
	char scontrol[PATH_MAX];
	ng_env_unset_prefix("SLURM_");
	ng_env_unset_prefix("NODEGATE_");
	snprintf(scontrol, sizeof scontrol, "%s/no-scontrol", c->dir);
	setenv("NODEGATE_SCONTROL", scontrol, 1);
	/* a probation's gang is read through sacct: none here either */
	snprintf(scontrol, sizeof scontrol, "%s/no-sacct", c->dir);
	setenv("NODEGATE_SACCT", scontrol, 1);
	setenv("NODEGATE_KMSG", c->kmsg, 1);
}

/* Runs self with argv (after the program name); its JSON output in *out when
 * it printed one. Returns 0 when it ran and ended by itself. */
static int run_self(const ng_selftest *c, const char *const *args, double timeout,
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

/* Counts the row and hands it to the front end. */
static void finish_row(ng_selftest *c, const struct row *row)
{
	c->rows++;
	c->failed += row->problem[0] != '\0';
	c->req->row(c->req->row_arg, row->name, row->expected, row->got, row->problem);
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

static void run_gpu_case(ng_selftest *c, const struct gpu_case *g, const char *broken_lib)
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
static void run_exit_case(ng_selftest *c, const char *name, const char *const *args, int want,
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

static void run_admit_case(ng_selftest *c, const struct admit_case *k, int64_t now)
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

static void run_admission(ng_selftest *c)
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

/* ---- the run -------------------------------------------------------------------------- */

/* The rows of the hooks (fabric, probation) counted as the runner's own. */
static void counted_row(void *arg, const char *name, const char *expected, const char *got,
                        const char *problem)
{
	struct row row;
	snprintf(row.name, sizeof row.name, "%s", name);
	snprintf(row.expected, sizeof row.expected, "%s", expected);
	snprintf(row.got, sizeof row.got, "%s", got);
	snprintf(row.problem, sizeof row.problem, "%s", problem);
	finish_row(arg, &row);
}

int ng_selftest_begin(ng_selftest *c, const ng_selftest_request *req, ng_err *err)
{
	memset(c, 0, sizeof *c);
	c->req = req;
	snprintf(c->self, sizeof c->self, "%s", req->self);
	snprintf(c->lib, sizeof c->lib, "%s", req->lib);
	const char *tmp = getenv("TMPDIR");
	snprintf(c->dir, sizeof c->dir, "%s/nodegate-selftest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(c->dir))
		return ng_fail_as(err, NG_ERR_INPUT, "cannot make a temporary directory (%s): %s",
		                  c->dir, strerror(errno));
	c->made = true;
	snprintf(c->policy, sizeof c->policy, "%s/policy.json", c->dir);
	snprintf(c->kmsg, sizeof c->kmsg, "%s/kmsg.log", c->dir);
	snprintf(c->gpu_store, sizeof c->gpu_store, "%s/gpu-store.db", c->dir);
	if (req->brk && strcmp(req->brk, "store") == 0) /* under a plain file: cannot be made */
		snprintf(c->store, sizeof c->store, "%s/kmsg.log/store.db", c->dir);
	else
		snprintf(c->store, sizeof c->store, "%s/store.db", c->dir);
	snprintf(c->broken_lib, sizeof c->broken_lib, "%s/broken/libnodegate-nvml-synth.so", c->dir);
	if (write_text(c->policy, POLICY, err) < 0 || write_text(c->kmsg, "", err) < 0)
		return -1;
	return 0;
}

void ng_selftest_run(ng_selftest *c)
{
	bool break_nvml = c->req->brk && strcmp(c->req->brk, "nvml") == 0;
	for (size_t i = 0; i < sizeof gpu_cases / sizeof gpu_cases[0]; i++)
		run_gpu_case(c, &gpu_cases[i], break_nvml ? c->broken_lib : NULL);
	run_admission(c);
	ng_selftest_fabric(c->dir, c->self, c->policy, counted_row, c);
	ng_selftest_probation(c->dir, c->self, c->policy, break_nvml ? c->broken_lib : c->lib,
	                      counted_row, c);
	ng_selftest_queue(c->dir, c->self, c->policy, c->req->scontrol, counted_row, c);
}

int ng_selftest_remove(ng_selftest *c)
{
	if (!c->made)
		return 0;
	c->made = false;
	return ng_remove_tree(c->dir);
}
