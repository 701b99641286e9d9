/* A gang: one all-reduce across it; when it is slow or measures nothing,
 * the halves, and so on down to a lone node beside a known-good one
 * (src/judge/fabric.c decides what runs next; flow/fabric.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flow/fabric.h"
#include "core/json.h"

#define MAX_NODES NG_FABRIC_MAX_NODES

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct round_job {
	const ng_fabric_opts *o;
	ng_fabric_bisect *b;
	char **names;
	const size_t *tests;
	cJSON **results;
	unsigned first_no;
	const char *hca;
};

static void run_one(void *arg, size_t i)
{
	struct round_job *j = arg;
	ng_fb_test *t = &j->b->tests[j->tests[i]];
	size_t n = t->n + (t->helper != SIZE_MAX);
	char **nodes = calloc(n, sizeof *nodes);
	if (!nodes)
		return;
	for (size_t k = 0; k < n; k++)
		nodes[k] = j->names[t->nodes[k]];
	j->results[i] = ng_fabric_allreduce(j->o, nodes, n, j->hca, j->first_no + (unsigned)i);
	free(nodes);
}

static const char *node_verdict(enum ng_fb_node s, bool risen)
{
	switch (s) {
	case NG_FB_PASSED: return risen ? "pass-counters-rose" : "pass";
	case NG_FB_SLOW: return "slow";
	case NG_FB_NO_ANSWER: return "held-unmeasured";
	default: return "held-untested";
	}
}

/* One bisection (hca NULL: every rail at once; else that HCA alone). Appends
 * each test's result to tests; b holds what it found per node. */
static void bisect(const ng_fabric_opts *o, char **names, size_t n, size_t n_refs, const char *hca,
                   unsigned *test_no, cJSON *tests, double *tests_s, ng_fabric_bisect *b)
{
	static size_t round_tests[MAX_NODES];
	for (;;) {
		size_t k = ng_fabric_bisect_next(b, round_tests, MAX_NODES);
		if (k == 0)
			break;
		/* Every node of the round, before and after, for the counters. */
		char **in_round = calloc(n + n_refs, sizeof *in_round);
		cJSON **res = calloc(k, sizeof *res);
		if (!in_round || !res) {
			free(in_round);
			free(res);
			break;
		}
		size_t m = 0;
		for (size_t i = 0; i < k; i++) {
			ng_fb_test *t = &b->tests[round_tests[i]];
			for (size_t x = 0; x < t->n + (t->helper != SIZE_MAX); x++)
				in_round[m++] = names[t->nodes[x]];
		}
		cJSON *before = ng_fabric_ports(o, in_round, m);
		struct round_job j = {o, b, names, round_tests, res, *test_no, hca};
		ng_fabric_parallel(k, run_one, &j);
		cJSON *after = ng_fabric_ports(o, in_round, m);
		double longest = 0;
		for (size_t i = 0; i < k; i++) {
			ng_fb_test *t = &b->tests[round_tests[i]];
			cJSON *r = res[i];
			if (!r) { /* out of memory before the test ran: it measured nothing */
				r = cJSON_CreateObject();
				cJSON_AddStringToObject(r, "test", "all_reduce");
				cJSON_AddArrayToObject(r, "nodes");
				cJSON_AddStringToObject(r, "outcome", "unmeasured");
				cJSON_AddStringToObject(r, "verdict", "no-measurement");
				cJSON_AddStringToObject(r, "reason", "out of memory");
			}
			const cJSON *out = ng_json_get(r, "outcome");
			ng_fabric_outcome oc = NG_FT_UNMEASURED;
			if (cJSON_IsString(out))
				oc = strcmp(out->valuestring, "pass") == 0 ? NG_FT_PASS
				     : strcmp(out->valuestring, "slow") == 0 ? NG_FT_SLOW : NG_FT_UNMEASURED;
			const cJSON *secs = ng_json_get(r, "seconds");
			if (cJSON_IsNumber(secs) && secs->valuedouble > longest)
				longest = secs->valuedouble;
			cJSON_AddNumberToObject(r, "round", t->round);
			/* A gang's result is named by its test number; the run's own
			 * "test" (always "all_reduce" here) would be a second key of
			 * the same name, which nodegate refuses in what it reads. */
			cJSON_DeleteItemFromObjectCaseSensitive(r, "test");
			cJSON_AddNumberToObject(r, "test", (double)round_tests[i]);
			char changed[256];
			if (t->parent == SIZE_MAX)
				snprintf(changed, sizeof changed, "the whole gang");
			else if (t->helper != SIZE_MAX)
				snprintf(changed, sizeof changed, "alone beside known-good %.64s (from test %zu)",
				         names[t->helper], t->parent);
			else
				snprintf(changed, sizeof changed, "half of test %zu", t->parent);
			cJSON_AddStringToObject(r, "changed", changed);
			ng_fabric_note_ports(r, before, after);
			ng_fabric_bisect_report(b, round_tests[i], oc);
			cJSON_AddItemToArray(tests, r);
		}
		/* The tests of a round run side by side: the round lasts its longest. */
		*tests_s += longest;
		*test_no += (unsigned)k;
		cJSON_Delete(before);
		cJSON_Delete(after);
		free(res);
		free(in_round);
	}
	ng_fabric_bisect_finish(b);
}

/* Why a lone node was judged: its test beside a known-good node. */
static const char *lone_reason(const cJSON *tests, const char *node, enum ng_fb_node s, char *buf,
                               size_t cap)
{
	for (const cJSON *t = tests->child; t; t = t->next) {
		const cJSON *ch = ng_json_get(t, "changed"), *nodes = ng_json_get(t, "nodes");
		if (!cJSON_IsString(ch) || !strstr(ch->valuestring, "known-good") || !nodes || !nodes->child ||
		    strcmp(nodes->child->valuestring, node) != 0 || cJSON_IsString(ng_json_get(t, "hca")))
			continue;
		const cJSON *why = ng_json_get(t, "reason"), *bw = ng_json_get(t, "busbw");
		const cJSON *peer = nodes->child->next;
		if (s == NG_FB_SLOW && cJSON_IsNumber(bw))
			snprintf(buf, cap, "slow beside known-good %s: %.2f GB/s, expected %.2f", peer->valuestring,
			         bw->valuedouble, ng_json_get(t, "expected")->valuedouble);
		else
			snprintf(buf, cap, "%s beside known-good %s: %s", s == NG_FB_SLOW ? "slow" : "unmeasured",
			         peer ? peer->valuestring : "?", cJSON_IsString(why) ? why->valuestring : "no reason given");
		return buf;
	}
	return s == NG_FB_SLOW ? "slow beside a known-good peer" : "unmeasured beside a known-good peer";
}

/* Groups slow or unmeasured as a whole whose halves both passed: no node is
 * to blame, but the gang is not shown fine either (the path between them,
 * contention, or no baseline for the whole). */
static cJSON *unattributed(const ng_fabric_bisect *b)
{
	cJSON *out = cJSON_CreateArray();
	for (size_t i = 0; i < b->n_tests; i++) {
		if (!b->tests[i].done || b->tests[i].outcome == NG_FT_PASS || b->tests[i].n < 2)
			continue;
		size_t kids = 0, passed = 0;
		for (size_t k = 0; k < b->n_tests; k++)
			if (b->tests[k].parent == i) {
				kids++;
				passed += b->tests[k].done && b->tests[k].outcome == NG_FT_PASS;
			}
		if (kids && kids == passed)
			cJSON_AddItemToArray(out, cJSON_CreateNumber((double)i));
	}
	return out;
}

/* Every group size the bisection of n nodes may test: the halves of the
 * halves, and 2 for a lone node beside a known-good one. */
static void group_sizes(size_t n, size_t *out, size_t *k)
{
	size_t todo[128], nt = 0;
	todo[nt++] = n;
	while (nt) {
		size_t m = todo[--nt];
		if (m < 2)
			m = 2;
		bool seen = false;
		for (size_t i = 0; i < *k; i++)
			seen = seen || out[i] == m;
		if (seen || *k >= 64)
			continue;
		out[(*k)++] = m;
		if (m > 2 && nt + 2 <= 128) {
			todo[nt++] = m / 2;
			todo[nt++] = m - m / 2;
		}
	}
}

/* Each node's leaf switch for the bisection, when the topology is known. */
static int set_leaves(ng_fabric_bisect *b, const ng_fabric_opts *o, char *const *names, size_t n)
{
	if (!o->topology)
		return 0;
	size_t *leaf = malloc((n ? n : 1) * sizeof *leaf);
	if (!leaf)
		return -1;
	ng_fabric_leaves(o, names, n, leaf);
	int rc = ng_fabric_bisect_set_leaves(b, leaf);
	free(leaf);
	return rc;
}

static cJSON *gang_sorted(const ng_ctx *ctx, ng_fabric_opts *o, char **names, size_t n,
                          size_t n_refs, ng_err *err);

cJSON *ng_fabric_gang(const ng_ctx *ctx, ng_fabric_opts *o, char *const *names_in, size_t n,
                      size_t n_refs, ng_err *err)
{
	/* With switch domains known, the gang is bisected in leaf order: each
	 * half then lies under as few leaves as it can, and a test that fails
	 * while its halves pass names the switch between them. */
	char **names = malloc((n + n_refs ? n + n_refs : 1) * sizeof *names);
	size_t *leaf = malloc((n ? n : 1) * sizeof *leaf);
	if (!names || !leaf) {
		free(names);
		free(leaf);
		ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	memcpy(names, names_in, (n + n_refs) * sizeof *names);
	ng_fabric_leaves(o, names, n, leaf);
	for (size_t i = 1; o->topology && i < n; i++) /* stable: the given order within a leaf */
		for (size_t j = i; j > 0 && leaf[j - 1] > leaf[j]; j--) {
			size_t l = leaf[j];
			leaf[j] = leaf[j - 1], leaf[j - 1] = l;
			char *x = names[j];
			names[j] = names[j - 1], names[j - 1] = x;
		}
	free(leaf);
	cJSON *doc = gang_sorted(ctx, o, names, n, n_refs, err);
	free(names);
	return doc;
}

static cJSON *gang_sorted(const ng_ctx *ctx, ng_fabric_opts *o, char **names, size_t n,
                          size_t n_refs, ng_err *err)
{
	size_t sizes[64], n_sizes = 0;
	group_sizes(n, sizes, &n_sizes);
	if (ng_fabric_load_baselines(ctx, o, sizes, n_sizes, o->per_rail, err) < 0)
		return NULL;
	double t0 = mono(), tests_s = 0;
	ng_fabric_bisect b;
	if (ng_fabric_bisect_init(&b, n, n_refs) < 0) {
		ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if (set_leaves(&b, o, names, n + n_refs) < 0) {
		ng_fabric_bisect_free(&b);
		ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	cJSON *doc = cJSON_CreateObject(), *tests = cJSON_CreateArray();
	char *why = ng_fabric_check_tools(o, names[0], false);
	unsigned test_no = 0, rounds = 0;
	if (!why)
		bisect(o, names, n, n_refs, NULL, &test_no, tests, &tests_s, &b);
	else
		ng_fabric_bisect_finish(&b);
	rounds = b.rounds;
	/* Per rail: the same procedure with one HCA at a time, against a rail's
	 * share of the bandwidth; one rail at half rate hides in the all-rail
	 * all-reduce (an eighth of the links) and stands out here. */
	cJSON *rail_slow = cJSON_CreateObject();
	if (!why && o->per_rail) {
		for (size_t h = 0; h < o->n_hcas; h++) {
			ng_fabric_bisect rb;
			if (ng_fabric_bisect_init(&rb, n, n_refs) < 0)
				break;
			if (set_leaves(&rb, o, names, n + n_refs) < 0) {
				ng_fabric_bisect_free(&rb);
				break;
			}
			bisect(o, names, n, n_refs, o->hcas[h], &test_no, tests, &tests_s, &rb);
			rounds += rb.rounds;
			for (size_t i = 0; i < n; i++) {
				if (rb.state[i] == NG_FB_PASSED)
					continue;
				cJSON *list = cJSON_GetObjectItemCaseSensitive(rail_slow, names[i]);
				if (!list)
					list = cJSON_AddArrayToObject(rail_slow, names[i]);
				char what[160];
				snprintf(what, sizeof what, "%s: %s", o->hcas[h], ng_fb_node_name(rb.state[i]));
				cJSON_AddItemToArray(list, cJSON_CreateString(what));
			}
			ng_fabric_bisect_free(&rb);
		}
	}
	cJSON *verdicts = cJSON_CreateArray();
	bool all_pass = !why;
	char reason[768];
	for (size_t i = 0; i < n; i++) {
		/* Counters that rose in a test this node was in, on this node. */
		cJSON *rose = cJSON_CreateArray();
		for (const cJSON *t = tests->child; t; t = t->next)
			for (const cJSON *c = ng_json_get(t, "ports_changed")->child; c; c = c->next)
				if (strcmp(ng_json_get(c, "node")->valuestring, names[i]) == 0)
					cJSON_AddItemToArray(rose, cJSON_Duplicate(c, 1));
		const cJSON *rails = ng_json_get(rail_slow, names[i]);
		cJSON *v = cJSON_CreateObject();
		cJSON_AddStringToObject(v, "node", names[i]);
		bool risen = cJSON_GetArraySize(rose) > 0;
		const char *verdict = why ? "held-untested" : node_verdict(b.state[i], risen);
		if (!why && b.state[i] == NG_FB_PASSED && rails)
			verdict = "slow-rail";
		cJSON_AddStringToObject(v, "verdict", verdict);
		if (why)
			cJSON_AddStringToObject(v, "reason", why);
		else if (b.state[i] == NG_FB_HELD)
			cJSON_AddStringToObject(v, "reason", "no measured test covered it");
		else if (b.state[i] == NG_FB_NO_ANSWER || b.state[i] == NG_FB_SLOW)
			cJSON_AddStringToObject(v, "reason", lone_reason(tests, names[i], b.state[i], reason,
			                                                 sizeof reason));
		else if (rails)
			cJSON_AddStringToObject(v, "reason", "fine over all rails, not on every rail alone");
		else if (risen)
			cJSON_AddStringToObject(v, "reason", "error counters rose during its tests");
		cJSON_AddItemToObject(v, "slow_rails", rails ? cJSON_Duplicate(rails, 1) : cJSON_CreateArray());
		cJSON_AddItemToObject(v, "ports_changed", rose);
		const char *leaf = ng_fabric_leaf(o, names[i]);
		if (leaf)
			cJSON_AddStringToObject(v, "switch", leaf);
		all_pass = all_pass && b.state[i] == NG_FB_PASSED && !risen && !rails;
		cJSON_AddItemToArray(verdicts, v);
	}
	cJSON_Delete(rail_slow);
	cJSON *unattr = unattributed(&b);
	all_pass = all_pass && cJSON_GetArraySize(unattr) == 0;
	cJSON_AddItemToObject(doc, "unattributed", unattr);
	cJSON_AddStringToObject(doc, "verdict", all_pass ? "pass" : "fail");
	double wall = mono() - t0;
	cJSON_AddNumberToObject(doc, "nodes_n", (double)n);
	cJSON_AddNumberToObject(doc, "rounds", rounds);
	cJSON_AddItemToObject(doc, "tests", tests);
	cJSON_AddItemToObject(doc, "verdicts", verdicts);
	cJSON_AddNumberToObject(doc, "wall_s", round(wall * 1000) / 1000);
	cJSON_AddNumberToObject(doc, "tests_s", round(tests_s * 1000) / 1000);
	cJSON_AddNumberToObject(doc, "overhead_s", round((wall - tests_s) * 1000) / 1000);
	cJSON_AddStringToObject(doc, "raw_dir", o->raw_dir);
	if (why)
		cJSON_AddStringToObject(doc, "not_run", why);
	free(why);
	if (o->topology)
		ng_fabric_gang_domains(o, &b, names, doc);
	char run_id[96], problem[512] = "";
	snprintf(run_id, sizeof run_id, "fabric-gang-%lld-%ld", (long long)ng_ctx_now(ctx), (long)getpid());
	int store_rc = ng_fabric_store(ctx, o, tests, run_id, doc, problem, sizeof problem);
	if (store_rc < 0)
		cJSON_AddStringToObject(doc, "store_problem", problem);
	else if (ctx->store)
		cJSON_AddStringToObject(doc, "run_id", run_id);
	ng_fabric_bisect_free(&b);
	return doc;
}
