/* The probation, repeat-offender and evidence rows of `nodegate selftest`.
 *
 * This machine's own node id is quarantined in a store of the selftest's
 * (planted slow runs of a metric, judged against planted peers), released,
 * and then `nodegate epilog` runs on the synthetic NVML library as the end
 * of a job, as Slurm would run it:
 *   probation-pass   a healthy job: the node is admitted again
 *   probation-fail   a job ending with an ECC fault: the case opens again
 *   lemon            a third quarantine in 30 days: release refuses
 *   evidence-power   a GPU compute metric quarantined on GPUs whose power
 *                    limit is planted at 300 W of 700 W: the case's evidence
 *                    summary says so
 * Nothing here reaches Slurm: every run has --land none. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/testing/selftest_probation.h"
#include "collect/identity.h"
#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"

#define PEERS 12

struct pctx {
	const char *dir, *self, *policy, *lib;
	char node[256], name[128];
	ng_test_row_fn row;
	void *ctx;
	int n_files;
	int64_t now;
};

static int run(struct pctx *c, const char *const *args, cJSON **doc, char *err_line,
               size_t cap, char *out_text, size_t out_cap)
{
	return ng_test_run_self(c->self, c->policy, c->now, args, doc, err_line, cap, out_text, out_cap);
}

static int write_doc(struct pctx *c, cJSON *doc, char *path, size_t cap)
{
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
	cJSON_Delete(doc);
	snprintf(path, cap, "%s/probation%02d.json", c->dir, ++c->n_files);
	ng_err err;
	int rc = text ? ng_write_file_atomic(path, text, strlen(text), &err) : -1;
	free(text);
	return rc;
}

static cJSON *domain_record(const char *node, double median, const char *domain,
                            const char *metric, const char *unit)
{
	return ng_test_record(node, "selftest-probation", median, domain, metric, unit);
}

static cJSON *record(const char *node, double median)
{
	return domain_record(node, median, "fabric", "nccl.all_reduce.busbw", "GB/s");
}

static cJSON *one(cJSON *rec)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, rec);
	return a;
}

/* A fresh store with the peers a day back; 0 or a problem. */
static int seed_store(struct pctx *c, const char *store, char *problem, size_t cap)
{
	cJSON *peers = cJSON_CreateArray();
	for (int i = 0; i < PEERS; i++) {
		char node[32];
		snprintf(node, sizeof node, "stp-peer%02d", i);
		cJSON_AddItemToArray(peers,
		                     record(node, 300.0 * (1 + (i % 2 ? -1 : 1) * 0.0005 * (i / 2 + 1))));
	}
	char path[PATH_MAX];
	if (write_doc(c, peers, path, sizeof path) < 0) {
		snprintf(problem, cap, "cannot write the peers' records");
		return -1;
	}
	const char *args[] = {"--store", store, "ingest", "--accepted", path, NULL};
	int64_t now = c->now;
	c->now -= 86400;
	char line[320];
	int st = run(c, args, NULL, line, sizeof line, NULL, 0);
	c->now = now;
	if (st != 0) {
		snprintf(problem, cap, "ingest of the peers exited %d: %s", st, line);
		return -1;
	}
	return 0;
}

/* Quarantines this node (slow twice), then releases it by hand: 0 or a problem. */
static int quarantine_and_release(struct pctx *c, const char *store, char *problem, size_t cap)
{
	char slow[PATH_MAX];
	if (write_doc(c, one(record(c->node, 250)), slow, sizeof slow) < 0) {
		snprintf(problem, cap, "cannot write the slow run");
		return -1;
	}
	const char *admit[] = {"--store", store, "admit", "--json", "--land", "none", "--from",
	                       slow, "--confirm-from", slow, NULL};
	cJSON *doc;
	char line[320];
	int st = run(c, admit, &doc, line, sizeof line, NULL, 0);
	const cJSON *oc = ng_json_get(doc, "outcome");
	bool quarantined = cJSON_IsString(oc) && strcmp(oc->valuestring, "quarantined") == 0;
	cJSON_Delete(doc);
	if (!quarantined) {
		snprintf(problem, cap, "the planted slow runs were not quarantined (exit %d): %s", st,
		         line);
		return -1;
	}
	c->now += 60;
	const char *rel[] = {"--store", store, "release", c->node, "--manual", "--by", "selftest",
	                     "--reason", "selftest release", NULL};
	st = run(c, rel, NULL, line, sizeof line, NULL, 0);
	if (st != 0) {
		snprintf(problem, cap, "release exited %d: %s", st, line);
		return -1;
	}
	return 0;
}

/* `nodegate epilog` at the end of job `job` on the planted GPUs. */
static int epilog(struct pctx *c, const char *store, const char *gpus, const char *job,
                  char *line, size_t cap)
{
	char path[PATH_MAX];
	if (write_doc(c, cJSON_Parse(gpus), path, sizeof path) < 0) {
		snprintf(line, cap, "cannot write the GPUs");
		return -1;
	}
	char start[32];
	snprintf(start, sizeof start, "%lld", (long long)(c->now - 600));
	setenv("NODEGATE_NVML_LIBRARY", c->lib, 1);
	setenv("NODEGATE_SYNTH_GPUS", path, 1);
	setenv("SLURM_JOB_GPUS", "0,1", 1);
	setenv("SLURM_JOB_ID", job, 1);
	setenv("SLURM_JOB_NAME", "selftest-canary", 1);
	setenv("SLURM_JOB_START_TIME", start, 1);
	const char *args[] = {"epilog", "--json", "--land", "none", "--store", store, NULL};
	int st = run(c, args, NULL, line, cap, NULL, 0);
	unsetenv("SLURM_JOB_GPUS");
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_JOB_NAME");
	unsetenv("SLURM_JOB_START_TIME");
	return st;
}

/* `quarantine show CASE --json` as a document, or NULL. */
static cJSON *show(struct pctx *c, const char *store, const char *id)
{
	const char *args[] = {"--store", store, "quarantine", "show", id, "--json", NULL};
	cJSON *doc;
	char line[320];
	run(c, args, &doc, line, sizeof line, NULL, 0);
	return doc;
}

static const char *str_at(const cJSON *doc, const char *a, const char *b)
{
	const cJSON *o = ng_json_get(doc, a);
	if (b)
		o = ng_json_get(o, b);
	return cJSON_IsString(o) ? o->valuestring : "-";
}

#define HEALTHY "{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":[{},{},{},{}]}"
#define ECC                                                                                  \
	"{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":[{\"ecc\":{\"volatile\":"          \
	"{\"uncorrected\":2},\"aggregate\":{\"uncorrected\":2}}},{},{},{}]}"

static void probation_pass(struct pctx *c)
{
	char problem[1024] = "", got[128] = "-", store[PATH_MAX], line[320];
	snprintf(store, sizeof store, "%s/probation-pass.db", c->dir);
	if (seed_store(c, store, problem, sizeof problem) == 0 &&
	    quarantine_and_release(c, store, problem, sizeof problem) == 0) {
		cJSON *before = show(c, store, "1");
		snprintf(got, sizeof got, "%s", str_at(before, "state", NULL));
		cJSON_Delete(before);
		c->now += 600;
		int st = epilog(c, store, HEALTHY, "9001", line, sizeof line);
		cJSON *after = show(c, store, "1");
		snprintf(got + strlen(got), sizeof got - strlen(got), ", job exit %d, %s, %s", st,
		         str_at(after, "probation", "outcome"), str_at(after, "state", NULL));
		if (strcmp(got, "probation, job exit 0, passed, closed") != 0)
			snprintf(problem, sizeof problem, "expected probation, job exit 0, passed, closed; "
			                                  "got %s (%s)",
			         got, str_at(after, "probation", "why"));
		cJSON_Delete(after);
	}
	c->row(c->ctx, "probation-pass", "probation, job exit 0, passed, closed", got, problem);
}

static void probation_fail(struct pctx *c)
{
	char problem[1024] = "", got[128] = "-", store[PATH_MAX], line[320];
	snprintf(store, sizeof store, "%s/probation-fail.db", c->dir);
	if (seed_store(c, store, problem, sizeof problem) == 0 &&
	    quarantine_and_release(c, store, problem, sizeof problem) == 0) {
		c->now += 600;
		int st = epilog(c, store, ECC, "9002", line, sizeof line);
		cJSON *after = show(c, store, "1");
		const cJSON *retries = ng_json_get(after, "retries");
		snprintf(got, sizeof got, "job exit %d, %s, %s, %d retry", st,
		         str_at(after, "probation", "outcome"), str_at(after, "state", NULL),
		         cJSON_IsNumber(retries) ? (int)retries->valuedouble : -1);
		if (strcmp(got, "job exit 1, failed, open, 1 retry") != 0)
			snprintf(problem, sizeof problem, "expected job exit 1, failed, open, 1 retry; got "
			                                  "%s (%s)",
			         got, str_at(after, "probation", "why"));
		cJSON_Delete(after);
	}
	c->row(c->ctx, "probation-fail", "job exit 1, failed, open, 1 retry", got, problem);
}

static void lemon(struct pctx *c)
{
	char problem[1024] = "", got[128] = "-", store[PATH_MAX], line[320];
	snprintf(store, sizeof store, "%s/lemon.db", c->dir);
	int rc = seed_store(c, store, problem, sizeof problem);
	/* two quarantines, each released and passed by a clean job */
	for (int k = 0; rc == 0 && k < 2; k++) {
		char job[16];
		snprintf(job, sizeof job, "%d", 9100 + k);
		c->now += 86400;
		rc = quarantine_and_release(c, store, problem, sizeof problem);
		if (rc == 0 && epilog(c, store, HEALTHY, job, line, sizeof line) != 0) {
			snprintf(problem, sizeof problem, "the clean job's epilog failed: %s", line);
			rc = -1;
		}
	}
	if (rc == 0) {
		c->now += 86400;
		rc = quarantine_and_release(c, store, problem, sizeof problem);
		if (rc == 0) {
			snprintf(problem, sizeof problem, "release of the third quarantine went through");
		} else if (strstr(problem, "release exited 1") && strstr(problem, "--force")) {
			problem[0] = '\0';
			cJSON *doc = show(c, store, "3");
			const cJSON *l = ng_json_get(doc, "lemon");
			snprintf(got, sizeof got, "release exit 1, lemon %s",
			         cJSON_IsTrue(l) ? "true" : "false");
			if (!cJSON_IsTrue(l))
				snprintf(problem, sizeof problem, "quarantine show does not mark the lemon");
			cJSON_Delete(doc);
		}
	}
	c->row(c->ctx, "lemon", "release exit 1, lemon true", got, problem);
}

/* GPUs held at 300 W of their 700 W default, as the compute metric falls. */
#define CAPPED                                                                               \
	"{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":[{\"power_limit_mw\":300000,"   \
	"\"clock_reasons\":[\"sw_power_cap\"]},{},{},{}]}"

static void evidence_power(struct pctx *c)
{
	char problem[1024] = "", got[128] = "-", store[PATH_MAX], line[320];
	snprintf(store, sizeof store, "%s/evidence.db", c->dir);
	cJSON *peers = cJSON_CreateArray();
	for (int i = 0; i < PEERS; i++) {
		char node[32];
		snprintf(node, sizeof node, "stp-peer%02d", i);
		cJSON_AddItemToArray(peers, domain_record(node, 700.0 * (1 + (i % 2 ? -1 : 1) * 0.0005 *
		                                                                   (i / 2 + 1)),
		                                          "compute", "gpu.gemm.tflops", "TFLOP/s"));
	}
	char peers_path[PATH_MAX], slow[PATH_MAX], gpus[PATH_MAX];
	if (write_doc(c, peers, peers_path, sizeof peers_path) < 0 ||
	    write_doc(c, one(domain_record(c->node, 300, "compute", "gpu.gemm.tflops", "TFLOP/s")),
	              slow, sizeof slow) < 0 ||
	    write_doc(c, cJSON_Parse(CAPPED), gpus, sizeof gpus) < 0) {
		c->row(c->ctx, "evidence-power", "summary: power limit 300 W of 700 W", got,
		       "cannot write the planted runs");
		return;
	}
	const char *ingest[] = {"--store", store, "ingest", "--accepted", peers_path, NULL};
	const char *admit[] = {"--store", store, "admit", "--json", "--land", "none", "--from",
	                       slow, "--confirm-from", slow, NULL};
	const char *show_text[] = {"--store", store, "quarantine", "show", "1", NULL};
	setenv("NODEGATE_NVML_LIBRARY", c->lib, 1);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	c->now -= 86400;
	int st = run(c, ingest, NULL, line, sizeof line, NULL, 0);
	c->now += 86400;
	static char text[1 << 16];
	text[0] = '\0';
	if (st != 0) {
		snprintf(problem, sizeof problem, "ingest exited %d: %s", st, line);
	} else if ((st = run(c, admit, NULL, line, sizeof line, NULL, 0)) != 1) {
		snprintf(problem, sizeof problem, "admit exited %d, not 1 (quarantined): %s", st, line);
	} else if ((st = run(c, show_text, NULL, line, sizeof line, text, sizeof text)) != 0) {
		snprintf(problem, sizeof problem, "quarantine show exited %d: %s", st, line);
	} else {
		const char *says = strstr(text, "what the evidence says:");
		bool power = says && strstr(says, "GPU 0: power limit 300 W of 700 W");
		bool cap = says && strstr(says, "GPU 0: clocks held back by sw_power_cap");
		snprintf(got, sizeof got, "%s", power ? "summary: power limit 300 W of 700 W"
		                                : says ? "a summary without the power limit"
		                                       : "no summary");
		if (!power || !cap)
			snprintf(problem, sizeof problem, "the summary does not name the planted cap%s: %.600s",
			         cap ? "" : " and its clock reason", says ? says : text);
	}
	unsetenv("NODEGATE_SYNTH_GPUS");
	c->row(c->ctx, "evidence-power", "summary: power limit 300 W of 700 W", got, problem);
}

void ng_selftest_probation(const char *dir, const char *self, const char *policy,
                           const char *lib, ng_test_row_fn row, void *ctx)
{
	struct pctx c = {.dir = dir, .self = self, .policy = policy, .lib = lib, .row = row,
	                 .ctx = ctx, .now = (int64_t)time(NULL)};
	ng_node_names(c.node, sizeof c.node, c.name, sizeof c.name);
	probation_pass(&c);
	probation_fail(&c);
	lemon(&c);
	evidence_power(&c);
}
