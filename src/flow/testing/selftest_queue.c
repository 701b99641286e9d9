/* The admission-queue rows of `nodegate selftest`.
 *
 * `nodegate admit --queue` runs as the admission partition's job would
 * (docs/slurm.md), on planted runs of a node judged against planted peers,
 * and lands its outcome on the node's features through a stand-in
 * scontrol (nodegate-scontrol-synth, beside the binary or in lib/nodegate/
 * of the install) that holds the node in a file:
 *   queue-admit       an unscreened node whose run is healthy: admitted,
 *                     it gains ng_admitted and loses unscreened
 *   queue-quarantine  an admitted node whose run is slow twice:
 *                     quarantined, it loses ng_admitted, gains unscreened,
 *                     and its comment names the case
 * The row reads the node from the stand-in's file, not from nodegate's
 * answer. What a stand-in cannot show is Slurm keeping a job off the node
 * for want of the feature: the real-cluster test (tests/slurm) does that. */
#include "flow/testing/selftest_queue.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "core/read_file.h"
#include "land/slurm_features.h"

#define SYNTH "nodegate-scontrol-synth"
#define NODE "st-queue"
#define PEERS 12

struct qctx {
	char dir[PATH_MAX - 64], self[PATH_MAX], policy[PATH_MAX], synth[PATH_MAX];
	ng_test_row_fn row;
	void *ctx;
	int n_files;
	int64_t now;
};

static cJSON *record(const char *node, double median)
{
	return ng_test_record(node, "selftest-queue", median, "fabric", "nccl.all_reduce.busbw", "GB/s");
}

static int write_text(const char *path, const char *text)
{
	ng_err err;
	return ng_write_file_atomic(path, text, strlen(text), &err);
}

static int write_doc(struct qctx *c, cJSON *doc, char *path, size_t cap)
{
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
	cJSON_Delete(doc);
	snprintf(path, cap, "%s/queue%02d.json", c->dir, ++c->n_files);
	int rc = text ? write_text(path, text) : -1;
	free(text);
	return rc;
}

/* Runs nodegate with args (the policy first) at c->now; its exit status
 * and the last line of its stderr, -1 when it did not run. */
static int run(struct qctx *c, const char *const *args, char *err_line, size_t cap)
{
	return ng_test_run_self(c->self, c->policy, c->now, args, NULL, err_line, cap, NULL, 0);
}

/* The value of key= in the stand-in's node file, "" when absent. */
static void node_value(const char *text, const char *key, char *out, size_t cap)
{
	out[0] = '\0';
	size_t k = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, k) == 0 && p[k] == '=') {
			size_t n = strcspn(p + k + 1, "\n");
			snprintf(out, cap, "%.*s", (int)n, p + k + 1);
			return;
		}
}

struct queue_case {
	const char *name, *expected;
	const char *features; /* the node's features before */
	double median;        /* its run, against peers at 300 GB/s */
	int exit;             /* admit's */
	bool admitted;        /* ng_admitted after */
};

static const struct queue_case cases[] = {
	{"queue-admit", "ng_admitted on, unscreened off", "gpu," NG_SLURM_UNSCREENED_FEATURE, 300,
	 0, true},
	{"queue-quarantine", "ng_admitted off, case in comment", "gpu," NG_SLURM_ADMITTED_FEATURE,
	 200, 1, false},
};

static void queue_case(struct qctx *c, const struct queue_case *k, const char *peers)
{
	char problem[1024] = "", got[128] = "-", line[320], store[PATH_MAX], node[PATH_MAX];
	char runs[PATH_MAX];
	snprintf(store, sizeof store, "%s/%s.db", c->dir, k->name);
	snprintf(node, sizeof node, "%s/%s.node", c->dir, k->name);
	char text[512];
	snprintf(text, sizeof text, "name=" NODE "\nstate=IDLE\navailable=%s\nactive=%s\ncomment=\n",
	         k->features, k->features);
	if (write_text(node, text) < 0) {
		c->row(c->ctx, k->name, k->expected, got, "cannot write the stand-in's node");
		return;
	}
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, record(NODE, k->median));
	if (write_doc(c, a, runs, sizeof runs) < 0) {
		c->row(c->ctx, k->name, k->expected, got, "cannot write the planted run");
		return;
	}
	/* the stand-in for these rows only: the others' scontrol is put back */
	const char *was = getenv("NODEGATE_SCONTROL");
	char before[PATH_MAX];
	snprintf(before, sizeof before, "%s", was ? was : "");
	setenv("NODEGATE_SCONTROL", c->synth, 1);
	setenv("NODEGATE_SYNTH_SCONTROL", node, 1);
	const char *ingest[] = {"--store", store, "ingest", "--accepted", peers, NULL};
	const char *admit[] = {"--store", store, "admit", "--json", "--land", "none", "--queue",
	                       "--node", NODE, "--from", runs, "--confirm-from", runs, NULL};
	c->now -= 86400;
	int st = run(c, ingest, line, sizeof line);
	c->now += 86400;
	if (st != 0) {
		snprintf(problem, sizeof problem, "ingest exited %d: %s", st, line);
	} else if ((st = run(c, admit, line, sizeof line)) != k->exit) {
		snprintf(problem, sizeof problem, "admit --queue exited %d, not %d: %s", st, k->exit,
		         line);
	} else {
		size_t len;
		ng_err err;
		char *after = ng_read_file(node, &len, &err);
		char active[1024], comment[1024];
		node_value(after ? after : "", "active", active, sizeof active);
		node_value(after ? after : "", "comment", comment, sizeof comment);
		free(after);
		bool on = ng_slurm_feature_has(active, NG_SLURM_ADMITTED_FEATURE);
		bool unscreened = ng_slurm_feature_has(active, NG_SLURM_UNSCREENED_FEATURE);
		bool says_case = strncmp(comment, "ng:quarantined: case ", 21) == 0;
		snprintf(got, sizeof got, "%s %s, unscreened %s%s", NG_SLURM_ADMITTED_FEATURE,
		         on ? "on" : "off", unscreened ? "on" : "off",
		         k->admitted ? "" : says_case ? ", case in comment" : "");
		if (on != k->admitted || unscreened == k->admitted || (!k->admitted && !says_case))
			snprintf(problem, sizeof problem,
			         "the node reads ActiveFeatures=%.300s Comment=%.300s after the run",
			         active, comment);
		else
			snprintf(got, sizeof got, "%s", k->expected);
	}
	if (was)
		setenv("NODEGATE_SCONTROL", before, 1);
	else
		unsetenv("NODEGATE_SCONTROL");
	unsetenv("NODEGATE_SYNTH_SCONTROL");
	c->row(c->ctx, k->name, k->expected, got, problem);
}

void ng_selftest_queue(const char *dir, const char *self, const char *policy, const char *scontrol,
                       ng_test_row_fn row, void *ctx)
{
	static struct qctx c;
	memset(&c, 0, sizeof c);
	snprintf(c.dir, sizeof c.dir, "%s", dir);
	snprintf(c.self, sizeof c.self, "%s", self);
	snprintf(c.policy, sizeof c.policy, "%s", policy);
	c.row = row;
	c.ctx = ctx;
	c.now = (int64_t)time(NULL);
	snprintf(c.synth, sizeof c.synth, "%s", scontrol ? scontrol : "");
	cJSON *peers = cJSON_CreateArray();
	for (int i = 0; i < PEERS; i++) {
		char name[32];
		snprintf(name, sizeof name, "stq-peer%02d", i);
		/* node medians in pairs either side of 300 GB/s */
		cJSON_AddItemToArray(peers,
		                     record(name, 300.0 * (1 + (i % 2 ? -1 : 1) * 0.0005 * (i / 2 + 1))));
	}
	char peers_path[PATH_MAX];
	const char *problem = access(c.synth, X_OK) != 0 ? "no stand-in scontrol (build the " SYNTH
	                                                   " target)"
	                      : write_doc(&c, peers, peers_path, sizeof peers_path) < 0
	                          ? "cannot write the planted peers"
	                          : NULL;
	if (access(c.synth, X_OK) != 0)
		cJSON_Delete(peers);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (problem)
			row(ctx, cases[i].name, cases[i].expected, "-", problem);
		else
			queue_case(&c, &cases[i], peers_path);
	}
}
