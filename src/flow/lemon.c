/* Repeat offenders, from the store (flow/lemon.h). */
#include "flow/lemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static bool has(char (*uuids)[96], size_t n, const char *u)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(uuids[i], u) == 0)
			return true;
	return false;
}

/* Walks a JSON value for objects with a "uuid" string: into flagged when
 * the object says it stood out ("outlier": true), into named in any case. */
static void walk(const cJSON *v, char (*flagged)[96], size_t *nf, char (*named)[96], size_t *nn,
                 size_t cap, int depth)
{
	if (!v || depth > 16)
		return;
	if (cJSON_IsObject(v)) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(v, "uuid");
		if (cJSON_IsString(u) && strncmp(u->valuestring, "GPU-", 4) == 0 &&
		    strlen(u->valuestring) < 96) {
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "outlier")) && *nf < cap &&
			    !has(flagged, *nf, u->valuestring))
				strcpy(flagged[(*nf)++], u->valuestring);
			if (*nn < cap && !has(named, *nn, u->valuestring))
				strcpy(named[(*nn)++], u->valuestring);
		}
	}
	const cJSON *c;
	cJSON_ArrayForEach(c, v)
		walk(c, flagged, nf, named, nn, cap, depth + 1);
}

size_t ng_lemon_case_gpus(const char *evidence, char (*uuids)[96], size_t cap)
{
	cJSON *ev = evidence ? cJSON_Parse(evidence) : NULL;
	const cJSON *failed = cJSON_GetObjectItemCaseSensitive(ev, "failed");
	char named[NG_LEMON_UUIDS][96];
	size_t nf = 0, nn = 0;
	if (cap > NG_LEMON_UUIDS)
		cap = NG_LEMON_UUIDS;
	walk(failed, uuids, &nf, named, &nn, cap, 0);
	cJSON_Delete(ev);
	if (nf)
		return nf;
	if (nn == 1 && cap) {
		strcpy(uuids[0], named[0]);
		return 1;
	}
	return 0;
}

struct gathered {
	ng_store_case *cases;
	size_t n;
	char (*uuids)[NG_LEMON_UUIDS][96]; /* per case */
	size_t *n_uuids;
};

static void release_gathered(struct gathered *g)
{
	for (size_t i = 0; i < g->n; i++)
		ng_store_case_free(&g->cases[i]);
	free(g->cases);
	free(g->uuids);
	free(g->n_uuids);
}

static int gather(ng_store *st, struct gathered *g, ng_err *err)
{
	memset(g, 0, sizeof *g);
	if (ng_store_list_cases(st, true, &g->cases, &g->n, err) < 0)
		return -1;
	g->uuids = calloc(g->n ? g->n : 1, sizeof *g->uuids);
	g->n_uuids = calloc(g->n ? g->n : 1, sizeof *g->n_uuids);
	if (!g->uuids || !g->n_uuids) {
		release_gathered(g);
		return ng_fail(err, "out of memory");
	}
	for (size_t i = 0; i < g->n; i++)
		g->n_uuids[i] = ng_lemon_case_gpus(g->cases[i].evidence, g->uuids[i], NG_LEMON_UUIDS);
	return 0;
}

/* Judges one node over the gathered cases. */
static int judge_node(ng_store *st, const ng_policy *pol, const struct gathered *g,
                      const char *node, int64_t now, ng_lemon_verdict *out, ng_err *err)
{
	ng_store_gpu *inv = NULL;
	size_t n_inv = 0;
	if (ng_store_gpus_of(st, node, &inv, &n_inv, err) < 0)
		return -1;
	ng_lemon_case *lc = calloc(g->n ? g->n : 1, sizeof *lc);
	if (!lc) {
		free(inv);
		return ng_fail(err, "out of memory");
	}
	/* This node's GPUs ever blamed, so their quarantines elsewhere count too. */
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		bool mine = strcmp(g->cases[i].node, node) == 0;
		bool shares = false;
		for (size_t j = 0; !mine && j < g->n && !shares; j++) {
			if (strcmp(g->cases[j].node, node) != 0)
				continue;
			for (size_t u = 0; u < g->n_uuids[i] && !shares; u++)
				for (size_t w = 0; w < g->n_uuids[j] && !shares; w++)
					shares = strcmp(g->uuids[i][u], g->uuids[j][w]) == 0;
		}
		if (!mine && !shares)
			continue;
		ng_lemon_case *c = &lc[k++];
		c->id = g->cases[i].id;
		c->opened_at = g->cases[i].opened_at;
		c->domain = g->cases[i].domain;
		c->metric = g->cases[i].metric;
		c->this_node = mine;
		c->n_uuids = g->n_uuids[i];
		bool present = false;
		for (size_t u = 0; u < c->n_uuids; u++) {
			c->uuid[u] = g->uuids[i][u];
			for (size_t x = 0; x < n_inv; x++)
				present = present || strcmp(inv[x].uuid, c->uuid[u]) == 0;
		}
		/* A part is gone only when the node's GPUs are known and none of
		 * those the case blamed is among them. */
		c->part_gone = mine && c->n_uuids && n_inv && !present;
	}
	ng_lemon_judge(lc, k, now, pol->lemon_count, pol->lemon_days, out);
	free(lc);
	free(inv);
	return 0;
}

int ng_lemon_of(ng_store *st, const ng_policy *pol, const char *node, int64_t now,
                ng_lemon_verdict *out, ng_err *err)
{
	struct gathered g;
	if (gather(st, &g, err) < 0)
		return -1;
	int rc = judge_node(st, pol, &g, node, now, out, err);
	release_gathered(&g);
	return rc;
}

int ng_lemon_all(ng_store *st, const ng_policy *pol, int64_t now, char (**nodes)[256],
                 ng_lemon_verdict **out, size_t *n, ng_err *err)
{
	*nodes = NULL;
	*out = NULL;
	*n = 0;
	struct gathered g;
	if (gather(st, &g, err) < 0)
		return -1;
	*nodes = calloc(g.n ? g.n : 1, sizeof **nodes);
	*out = calloc(g.n ? g.n : 1, sizeof **out);
	int rc = *nodes && *out ? 0 : ng_fail(err, "out of memory");
	for (size_t i = 0; rc == 0 && i < g.n; i++) {
		bool seen = false;
		for (size_t j = 0; j < *n && !seen; j++)
			seen = strcmp((*nodes)[j], g.cases[i].node) == 0;
		if (seen)
			continue;
		snprintf((*nodes)[*n], 256, "%s", g.cases[i].node);
		rc = judge_node(st, pol, &g, g.cases[i].node, now, &(*out)[*n], err);
		(*n)++;
	}
	release_gathered(&g);
	if (rc < 0) {
		free(*nodes);
		free(*out);
		*nodes = NULL;
		*out = NULL;
		*n = 0;
	}
	return rc;
}
