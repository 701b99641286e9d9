/* The fabric rows of `nodegate selftest`: `nodegate fabric` on the stand-in
 * fleet (nodegate-fabric-synth beside the binary, run as srun,
 * all_reduce_perf and ib_write_bw through symlinks in the temporary
 * directory, first on PATH): a slow node planted in a 16-node gang is found
 * by bisection, a socket fallback is incomparable, and a bad peer is not
 * blamed on the candidate. */
#include "flow/testing/selftest_fabric.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/spawn.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "flow/install_tree.h"

#define SYNTH "nodegate-fabric-synth"

struct fctx {
	char bin[PATH_MAX], fleet[PATH_MAX], self[PATH_MAX], raw[PATH_MAX];
	const char *policy;
	ng_test_row_fn row;
	void *ctx;
};

static int write_fleet(const struct fctx *c, const char *json)
{
	ng_err err;
	return ng_write_file_atomic(c->fleet, json, strlen(json), &err);
}

/* Runs `nodegate fabric ARGS --json`; its document, or NULL with problem. */
static cJSON *run_fabric(const struct fctx *c, const char *const *args, int *exit_status,
                         char *problem, size_t cap)
{
	const char *argv[44];
	size_t a = 0;
	argv[a++] = c->self;
	argv[a++] = "--policy";
	argv[a++] = c->policy;
	argv[a++] = "fabric";
	for (size_t i = 0; args[i] && a < 36; i++)
		argv[a++] = args[i];
	argv[a++] = "--json";
	argv[a++] = "--no-counters";
	argv[a++] = "--raw-dir"; /* inside the selftest's directory, removed with it */
	argv[a++] = c->raw;
	argv[a] = NULL;
	ng_spawn_result r;
	char ebuf[256];
	if (ng_spawn_capture((char *const *)argv, 60, 1 << 22, &r, ebuf, sizeof ebuf) < 0) {
		snprintf(problem, cap, "could not run nodegate: %s", ebuf);
		return NULL;
	}
	cJSON *doc = NULL;
	if (!r.spawned || r.timed_out || r.signal) {
		char how[256];
		ng_spawn_describe(&r, how, sizeof how);
		snprintf(problem, cap, "nodegate fabric %s", how);
	} else {
		ng_err err;
		doc = r.out_len ? ng_json_parse(r.out, r.out_len, &err) : NULL;
		*exit_status = r.exit_status;
		if (!doc)
			snprintf(problem, cap, "no JSON from nodegate fabric (exit %d): %.200s", r.exit_status,
			         r.err ? r.err : "");
	}
	ng_spawn_result_free(&r);
	return doc;
}

static const char *verdict_of(const cJSON *doc, const char *node)
{
	for (const cJSON *v = ng_json_get(doc, "verdicts") ? ng_json_get(doc, "verdicts")->child : NULL; v;
	     v = v->next)
		if (strcmp(ng_json_get(v, "node")->valuestring, node) == 0)
			return ng_json_get(v, "verdict")->valuestring;
	return "absent";
}

static void gang_slow(const struct fctx *c)
{
	char problem[1024] = "", got[128] = "";
	int rc = -1;
	if (write_fleet(c, "{\"busbw\": 180, \"hcas\": [\"mlx5_0\"], \"seconds\": 0.01,"
	                   " \"nodes\": {\"g11\": {\"slow\": 0.6}}}") < 0)
		snprintf(problem, sizeof problem, "cannot write %.900s", c->fleet);
	const char *args[] = {"gang", "g[01-16]", "--expect-busbw", "180", "--hcas", "mlx5_0", NULL};
	cJSON *doc = problem[0] ? NULL : run_fabric(c, args, &rc, problem, sizeof problem);
	if (doc) {
		size_t slow = 0, passed = 0;
		for (const cJSON *v = ng_json_get(doc, "verdicts")->child; v; v = v->next) {
			const char *s = ng_json_get(v, "verdict")->valuestring;
			slow += strcmp(s, "slow") == 0;
			passed += strcmp(s, "pass") == 0;
		}
		double rounds = ng_json_get(doc, "rounds")->valuedouble;
		snprintf(got, sizeof got, "g11 %s, %zu slow, %zu pass, %g rounds, exit %d",
		         verdict_of(doc, "g11"), slow, passed, rounds, rc);
		if (strcmp(verdict_of(doc, "g11"), "slow") != 0 || slow != 1 || passed != 15 || rc != 1 ||
		    rounds > 6)
			snprintf(problem, sizeof problem, "the planted slow node g11 was not found alone");
		cJSON_Delete(doc);
	}
	c->row(c->ctx, "fabric-gang-slow", "g11 slow, 15 pass, <=6 rounds", got, problem);
}

static void socket_fallback(const struct fctx *c)
{
	char problem[1024] = "", got[160] = "";
	int rc = -1;
	if (write_fleet(c, "{\"busbw\": 180, \"hcas\": [\"mlx5_0\"], \"seconds\": 0.01,"
	                   " \"nodes\": {\"s2\": {\"socket\": true}}}") < 0)
		snprintf(problem, sizeof problem, "cannot write %.900s", c->fleet);
	const char *args[] = {"gang", "s1,s2", "--expect-busbw", "180", NULL};
	cJSON *doc = problem[0] ? NULL : run_fabric(c, args, &rc, problem, sizeof problem);
	if (doc) {
		const cJSON *t = ng_json_get(doc, "tests")->child;
		const char *v = t ? ng_json_get(t, "verdict")->valuestring : "none";
		snprintf(got, sizeof got, "first test %s, s1 %s, exit %d", v, verdict_of(doc, "s1"), rc);
		if (strcmp(v, "incomparable") != 0 || strcmp(verdict_of(doc, "s1"), "pass") == 0 || rc != 1)
			snprintf(problem, sizeof problem, "a socket fallback was taken as a fabric measurement");
		cJSON_Delete(doc);
	}
	c->row(c->ctx, "fabric-socket", "incomparable, none pass", got, problem);
}

static void bad_peer(const struct fctx *c)
{
	char problem[1024] = "", got[160] = "";
	int rc = -1;
	if (write_fleet(c, "{\"busbw\": 180, \"hcas\": [\"mlx5_0\"], \"seconds\": 0.01,"
	                   " \"bad_pairs\": [[\"cand\", \"peer1\"]]}") < 0)
		snprintf(problem, sizeof problem, "cannot write %.900s", c->fleet);
	const char *args[] = {"pair", "cand", "--peers", "peer1,peer2", "--expect-busbw", "180", NULL};
	cJSON *doc = problem[0] ? NULL : run_fabric(c, args, &rc, problem, sizeof problem);
	if (doc) {
		const cJSON *bp = ng_json_get(doc, "blamed_peer");
		snprintf(got, sizeof got, "%s, blamed %s, exit %d", ng_json_get(doc, "verdict")->valuestring,
		         cJSON_IsString(bp) ? bp->valuestring : "-", rc);
		if (strcmp(ng_json_get(doc, "verdict")->valuestring, "pass") != 0 || !cJSON_IsString(bp) ||
		    strcmp(bp->valuestring, "peer1") != 0 || rc != 0)
			snprintf(problem, sizeof problem, "the bad peer was blamed on the candidate, or not named");
		cJSON_Delete(doc);
	}
	c->row(c->ctx, "fabric-bad-peer", "pass, blamed peer1, exit 0", got, problem);
}

void ng_selftest_fabric(const char *dir, const char *self, const char *policy,
                        ng_test_row_fn row, void *ctx)
{
	static struct fctx c;
	memset(&c, 0, sizeof c);
	c.row = row;
	c.ctx = ctx;
	c.policy = policy;
	snprintf(c.self, sizeof c.self, "%s", self);
	/* beside the binary (a build), else lib/nodegate/ of the install */
	char synth[PATH_MAX];
	ng_shipped_path(SYNTH, "lib/nodegate/" SYNTH, synth, sizeof synth);
	snprintf(c.bin, sizeof c.bin, "%.*s/fabric-bin", (int)(sizeof c.bin - 16), dir);
	snprintf(c.fleet, sizeof c.fleet, "%.*s/fabric-fleet.json", (int)(sizeof c.fleet - 24), dir);
	snprintf(c.raw, sizeof c.raw, "%.*s/fabric-raw", (int)(sizeof c.raw - 16), dir);
	char problem[PATH_MAX + 128] = "";
	if (access(synth, X_OK) != 0)
		snprintf(problem, sizeof problem, "no stand-in fleet at %.*s: build the " SYNTH " target",
		         PATH_MAX - 64, synth);
	else if (mkdir(c.bin, 0755) < 0 && errno != EEXIST)
		snprintf(problem, sizeof problem, "cannot make %.*s", PATH_MAX - 16, c.bin);
	const char *tools[] = {"srun", "all_reduce_perf", "ib_write_bw"};
	for (size_t i = 0; !problem[0] && i < 3; i++) {
		char link[PATH_MAX + 32];
		snprintf(link, sizeof link, "%s/%s", c.bin, tools[i]);
		if (symlink(synth, link) < 0 && errno != EEXIST)
			snprintf(problem, sizeof problem, "cannot link %.*s", PATH_MAX - 16, link);
	}
	if (problem[0]) {
		row(ctx, "fabric", "the stand-in fleet runs", "not set up", problem);
		return;
	}
	const char *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL, newpath[PATH_MAX * 2];
	snprintf(newpath, sizeof newpath, "%s:%s", c.bin, path ? path : "/usr/bin:/bin");
	setenv("PATH", newpath, 1);
	setenv("NODEGATE_FABRIC_SYNTH", c.fleet, 1);
	gang_slow(&c);
	socket_fallback(&c);
	bad_peer(&c);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	unsetenv("NODEGATE_FABRIC_SYNTH");
}
