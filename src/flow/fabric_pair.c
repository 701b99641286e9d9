/* A candidate with two known-good peers, one variable changed per test
 * (seed 000): the peer, then the candidate (the peers together), then per
 * HCA and direction with perftest (flow/fabric.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flow/fabric.h"
#include "core/json.h"
#include "collect/identity.h"
#include "core/atomic_file.h"
#include "core/record_build.h"
#include "flow/records_in.h"
#include "store/fabric_peers.h"

static ng_fabric_outcome outcome_of(const cJSON *r)
{
	const cJSON *o = ng_json_get(r, "outcome");
	if (!cJSON_IsString(o))
		return NG_FT_UNMEASURED;
	return strcmp(o->valuestring, "pass") == 0 ? NG_FT_PASS
	       : strcmp(o->valuestring, "slow") == 0 ? NG_FT_SLOW : NG_FT_UNMEASURED;
}

struct pair_ctx {
	const ng_fabric_opts *o;
	cJSON *tests;
	unsigned no;
};

/* One test with its counters before and after, and the variable it changed. */
static cJSON *run_test(struct pair_ctx *c, char *const *nodes, const char *changed,
                       const char *hca, const char *client, const char *server)
{
	cJSON *before = ng_fabric_ports(c->o, nodes, 2);
	cJSON *r = client ? ng_fabric_perftest(c->o, client, server, hca, c->no++)
	                  : ng_fabric_allreduce(c->o, nodes, 2, NULL, c->no++);
	cJSON *after = ng_fabric_ports(c->o, nodes, 2);
	ng_fabric_note_ports(r, before, after);
	cJSON_Delete(before);
	cJSON_Delete(after);
	cJSON_AddStringToObject(r, "changed", changed);
	cJSON_AddItemToArray(c->tests, r);
	return r;
}

/* Per HCA and direction with one peer: the rails' rates (candidate as
 * client) and the slow ones among them. */
static void rails_with(struct pair_ctx *c, char *cand, char *peer, bool first_peer, double *gbps,
                       cJSON *rail_out)
{
	const ng_fabric_opts *o = c->o;
	char *nodes[2] = {cand, peer};
	cJSON *runs[NG_FABRIC_MAX_HCAS][2];
	for (size_t k = 0; k < o->n_hcas; k++) {
		char changed[160];
		if (k == 0)
			snprintf(changed, sizeof changed, first_peer ? "none: the first HCA with the first peer"
			                                             : "peer: %s", peer);
		else
			snprintf(changed, sizeof changed, "hca: %s -> %s", o->hcas[k - 1], o->hcas[k]);
		cJSON *fwd = run_test(c, nodes, changed, o->hcas[k], cand, peer);
		snprintf(changed, sizeof changed, "direction: %s sends to %s", peer, cand);
		cJSON *rev = run_test(c, nodes, changed, o->hcas[k], peer, cand);
		runs[k][0] = fwd;
		runs[k][1] = rev;
		const cJSON *a = ng_json_get(fwd, "gbps"), *b = ng_json_get(rev, "gbps");
		double x = cJSON_IsNumber(a) ? a->valuedouble : NAN, y = cJSON_IsNumber(b) ? b->valuedouble : NAN;
		gbps[k] = isfinite(x) && isfinite(y) ? (x < y ? x : y) : NAN; /* the slower direction */
	}
	bool slow[NG_FABRIC_MAX_HCAS], un[NG_FABRIC_MAX_HCAS];
	ng_fabric_rail_outliers(gbps, o->n_hcas, o->fraction, o->expect_rail, slow, un);
	for (size_t k = 0; k < o->n_hcas; k++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "peer", peer);
		cJSON_AddStringToObject(r, "hca", o->hcas[k]);
		ng_json_add_number(r, "gbps", gbps[k]);
		const char *v = un[k] ? "no-measurement" : slow[k] ? "slow" : "pass";
		cJSON_AddStringToObject(r, "verdict", v);
		cJSON_AddItemToArray(rail_out, r);
		for (int d = 0; d < 2; d++)
			cJSON_AddStringToObject(runs[k][d], "verdict", v); /* the rail's, both directions */
	}
}


/* The candidate's fabric record for `admit --confirm-from`: the all-reduce
 * with the peer the attribution did not blame (with a bad peer, the other
 * pair measured the candidate), stamped with this node's identity; when
 * the tests cannot tell, the same record with no samples and the reason. */
static int write_admission_record(const ng_ctx *ctx, const char *path, const char *diag,
                                  char *const *peers, size_t np, const cJSON *ca,
                                  const cJSON *cb, ng_fabric_blame blame, const char *because,
                                  char *problem, size_t cap)
{
	const cJSON *pick = blame == NG_BLAME_PEER_A && cb ? cb : ca;
	const cJSON *rec = ng_json_get(pick, "record");
	if (!rec) {
		snprintf(problem, cap, "no all-reduce record to write");
		return -1;
	}
	cJSON *r = cJSON_Duplicate(rec, 1);
	static const char *const ident[] = {"node", "class", "software", "profile"};
	for (size_t i = 0; i < 4; i++)
		cJSON_DeleteItemFromObjectCaseSensitive(r, ident[i]);
	if (blame == NG_BLAME_UNKNOWN) {
		ng_json_set(r, "samples", cJSON_CreateArray());
		ng_record_set_reason(r, "paired tests cannot tell: %s", because);
	}
	cJSON *fab = cJSON_Duplicate(pick, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(fab, "record");
	cJSON_AddStringToObject(fab, "blame", ng_fabric_blame_name(blame));
	cJSON_AddStringToObject(fab, "because", because);
	cJSON *pj = cJSON_AddArrayToObject(fab, "peers");
	for (size_t i = 0; i < np; i++)
		cJSON_AddItemToArray(pj, cJSON_CreateString(peers[i]));
	ng_json_set(r, "fabric", fab);
	cJSON *all = cJSON_CreateArray();
	cJSON_AddItemToArray(all, r);
	ng_err err;
	int rc = 0;
	if (ng_identity_stamp(all, &ctx->policy, NULL, &err) < 0) {
		snprintf(problem, cap, "node identity: %.480s", err.msg);
		rc = -1;
	} else if (diag && ng_apply_diag_file(all, diag, &err) < 0) {
		snprintf(problem, cap, "--diag %.480s", err.msg);
		rc = -1;
	}
	char *text = rc == 0 ? cJSON_Print(all) : NULL;
	if (rc == 0 && (!text || ng_write_file_atomic(path, text, strlen(text), &err) < 0)) {
		snprintf(problem, cap, "%s", text ? err.msg : "out of memory");
		rc = -1;
	}
	free(text);
	cJSON_Delete(all);
	return rc;
}

int ng_fabric_pick_peers(const ng_ctx *ctx, const ng_fabric_opts *o, const char *cand,
                         char **out, size_t cap, ng_err *err)
{
	if (!ctx->store)
		return ng_fail_as(err, NG_ERR_USAGE, "no store to choose peers from");
	/* Every admitted node of the class (newest first), then the suspect's
	 * own leaf first: beside a peer under the same switch, a slow pair is
	 * the nodes, not the spine between two leaves. */
	size_t want = o->topology ? 256 : cap;
	char **all = calloc(want ? want : 1, sizeof *all);
	if (!all)
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	int got = ng_store_fabric_peers(ctx->store, NULL, cand, all, want, err);
	if (got < 0) {
		free(all);
		return -1;
	}
	size_t n = (size_t)got, *idx = malloc((n ? n : 1) * sizeof *idx);
	if (!idx) {
		for (size_t i = 0; i < n; i++)
			free(all[i]);
		free(all);
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	ng_fabric_order_by_domain(o, cand, all, idx, n);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k < cap) {
			out[k++] = all[idx[i]];
			all[idx[i]] = NULL;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(all[i]);
	free(all);
	free(idx);
	return (int)k;
}

bool ng_fabric_runs_on(const char *node)
{
	const char *sl = getenv("SLURMD_NODENAME");
	if (sl && strcmp(sl, node) == 0)
		return true;
	char host[256];
	if (gethostname(host, sizeof host) != 0)
		return false;
	host[sizeof host - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	return strcmp(host, node) == 0;
}

cJSON *ng_fabric_pair(const ng_ctx *ctx, const ng_fabric_opts *o, const char *cand_in,
                      char *const *peers, size_t np, ng_fabric_pair_status *status, ng_err *err)
{
	memset(status, 0, sizeof *status);
	char *cand = (char *)cand_in;
	cJSON *doc = cJSON_CreateObject(), *tests = cJSON_CreateArray(), *rails = cJSON_CreateArray();
	cJSON *rail_blame = cJSON_CreateArray();
	if (!doc || !tests || !rails || !rail_blame) {
		cJSON_Delete(doc), cJSON_Delete(tests), cJSON_Delete(rails), cJSON_Delete(rail_blame);
		ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	struct pair_ctx c = {o, tests, 0};
	char *why = ng_fabric_check_tools(o, cand, o->n_hcas > 0);
	ng_fabric_blame blame = NG_BLAME_UNKNOWN;
	const char *because = why;
	cJSON *ca = NULL, *cb = NULL;
	if (!why) {
		char *ca_nodes[2] = {cand, peers[0]};
		ca = run_test(&c, ca_nodes, "none: the first pair", NULL, NULL, NULL);
		ng_fabric_outcome oa = outcome_of(ca), ob = NG_FT_UNMEASURED, oab = NG_FT_UNMEASURED;
		if (np > 1) {
			char *cb_nodes[2] = {cand, peers[1]}, changed[160];
			snprintf(changed, sizeof changed, "peer: %s -> %s", peers[0], peers[1]);
			cb = run_test(&c, cb_nodes, changed, NULL, NULL, NULL);
			ob = outcome_of(cb);
			if (oa == NG_FT_SLOW && ob == NG_FT_SLOW) {
				char *ab_nodes[2] = {peers[0], peers[1]};
				snprintf(changed, sizeof changed, "candidate: %s -> the peers together", cand);
				oab = outcome_of(run_test(&c, ab_nodes, changed, NULL, NULL, NULL));
			}
		}
		blame = ng_fabric_attribute(oa, np > 1, ob, oab, &because);
		if (o->n_hcas) {
			double ga[NG_FABRIC_MAX_HCAS], gb[NG_FABRIC_MAX_HCAS];
			rails_with(&c, cand, peers[0], true, ga, rails);
			if (np > 1)
				rails_with(&c, cand, peers[1], false, gb, rails);
			/* A rail slow with both peers is the candidate's HCA; with one, that peer's side. */
			for (size_t k = 0; k < o->n_hcas; k++) {
				const cJSON *ra = cJSON_GetArrayItem(rails, (int)k);
				const cJSON *rb = np > 1 ? cJSON_GetArrayItem(rails, (int)(o->n_hcas + k)) : NULL;
				bool sa = strcmp(ng_json_get(ra, "verdict")->valuestring, "slow") == 0;
				bool sb = rb && strcmp(ng_json_get(rb, "verdict")->valuestring, "slow") == 0;
				if (!sa && !sb)
					continue;
				cJSON *r = cJSON_CreateObject();
				cJSON_AddStringToObject(r, "hca", o->hcas[k]);
				const char *who = sa && (sb || np < 2) ? (np < 2 ? "candidate-or-peer" : "candidate")
				                  : sa ? peers[0] : peers[1];
				cJSON_AddStringToObject(r, "blame", who);
				cJSON_AddItemToArray(rail_blame, r);
			}
		}
	}
	cJSON_AddStringToObject(doc, "candidate", cand);
	cJSON *pj = cJSON_AddArrayToObject(doc, "peers");
	for (size_t i = 0; i < np; i++)
		cJSON_AddItemToArray(pj, cJSON_CreateString(peers[i]));
	if (o->topology) {
		/* Where the peers stand: under the candidate's leaf, or across the spine. */
		const char *mine = ng_fabric_leaf(o, cand);
		cJSON *sw = cJSON_AddObjectToObject(doc, "switches");
		if (mine)
			cJSON_AddStringToObject(sw, cand, mine);
		for (size_t i = 0; i < np; i++) {
			const char *l = ng_fabric_leaf(o, peers[i]);
			if (l)
				cJSON_AddStringToObject(sw, peers[i], l);
		}
	}
	const char *bname = ng_fabric_blame_name(blame);
	if (blame == NG_BLAME_PEER_A || blame == NG_BLAME_PEER_B)
		bname = "peer-or-path";
	cJSON_AddStringToObject(doc, "blame", bname);
	if (blame == NG_BLAME_PEER_A || blame == NG_BLAME_PEER_B)
		cJSON_AddStringToObject(doc, "blamed_peer", peers[blame == NG_BLAME_PEER_A ? 0 : 1]);
	cJSON_AddStringToObject(doc, "because", because ? because : "");
	bool cand_rail = false;
	for (const cJSON *r = rail_blame->child; r; r = r->next)
		cand_rail = cand_rail || strncmp(ng_json_get(r, "blame")->valuestring, "candidate", 9) == 0;
	const char *verdict = why ? "held" : blame == NG_BLAME_CANDIDATE ? "slow"
	                    : blame == NG_BLAME_UNKNOWN ? "held" : cand_rail ? "slow-rail" : "pass";
	cJSON_AddStringToObject(doc, "verdict", verdict);
	cJSON_AddItemToObject(doc, "rails", rails);
	cJSON_AddItemToObject(doc, "slow_rails", rail_blame);
	cJSON_AddItemToObject(doc, "tests", tests);
	char run_id[96], problem[512] = "";
	snprintf(run_id, sizeof run_id, "fabric-pair-%lld-%ld", (long long)ng_ctx_now(ctx), (long)getpid());
	int store_rc = ng_fabric_store(ctx, o, tests, run_id, doc, problem, sizeof problem);
	if (store_rc < 0) {
		cJSON_AddStringToObject(doc, "store_problem", problem);
		status->store_failed = true;
	}
	if (o->out_path && !why) {
		if (write_admission_record(ctx, o->out_path, o->diag_path, peers, np, ca, cb, blame,
		                           because ? because : "", status->out_problem,
		                           sizeof status->out_problem) < 0)
			status->out_failed = true;
		else
			cJSON_AddStringToObject(doc, "out", o->out_path);
	}
	if (why)
		cJSON_AddStringToObject(doc, "not_run", why);
	free(why);
	return doc;
}
