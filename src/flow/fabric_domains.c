/* Switch domains of the fabric tests (flow/fabric.h): which leaf a node
 * hangs from (Slurm's topology.conf, parse/topology.c), known-good peers in
 * the suspect's own domain first, and where a gang's fault localises. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "flow/fabric.h"

const char *ng_fabric_leaf(const ng_fabric_opts *o, const char *node)
{
	return o->topology ? ng_topology_leaf_name(o->topology, node) : NULL;
}

void ng_fabric_leaves(const ng_fabric_opts *o, char *const *names, size_t n, size_t *leaf)
{
	for (size_t i = 0; i < n; i++)
		leaf[i] = o->topology ? ng_topology_leaf(o->topology, names[i]) : SIZE_MAX;
}

/* 0 same leaf, 1 same switch higher up, 2 elsewhere or unknown. */
static int distance(const ng_topology *t, size_t a, size_t b)
{
	if (a == SIZE_MAX || b == SIZE_MAX)
		return 2;
	if (a == b)
		return 0;
	return ng_topology_common(t, a, b) != SIZE_MAX ? 1 : 2;
}

void ng_fabric_order_by_domain(const ng_fabric_opts *o, const char *suspect, char *const *names,
                               size_t *idx, size_t n)
{
	if (!o->topology || n < 2)
		return;
	size_t me = ng_topology_leaf(o->topology, suspect);
	/* A stable insertion sort by distance: the given order stays within a group. */
	for (size_t i = 1; i < n; i++) {
		size_t x = idx[i];
		int dx = distance(o->topology, me, ng_topology_leaf(o->topology, names[x]));
		size_t j = i;
		while (j > 0 &&
		       distance(o->topology, me, ng_topology_leaf(o->topology, names[idx[j - 1]])) > dx) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = x;
	}
}

static bool faulty(const char *verdict)
{
	return strcmp(verdict, "slow") == 0 || strcmp(verdict, "slow-rail") == 0 ||
	       strcmp(verdict, "held-unmeasured") == 0 || strcmp(verdict, "pass-counters-rose") == 0;
}

/* The one leaf every gang node of test t (its helper left out) is under, or
 * SIZE_MAX when they span several or one is unknown. */
static size_t test_leaf(const ng_topology *topo, const ng_fb_test *t, char *const *names,
                        size_t n_nodes)
{
	size_t leaf = SIZE_MAX;
	for (size_t k = 0; k < t->n; k++) {
		if (t->nodes[k] >= n_nodes)
			continue;
		size_t l = ng_topology_leaf(topo, names[t->nodes[k]]);
		if (l == SIZE_MAX || (leaf != SIZE_MAX && l != leaf))
			return SIZE_MAX;
		leaf = l;
	}
	return leaf;
}

static void unattributed_paths(const ng_topology *topo, const ng_fabric_bisect *b,
                               char *const *names, cJSON *doc)
{
	cJSON *paths = cJSON_CreateArray();
	const cJSON *un = ng_json_get(doc, "unattributed");
	for (const cJSON *u = cJSON_IsArray(un) ? un->child : NULL; u; u = u->next) {
		size_t ti = (size_t)u->valuedouble;
		if (ti >= b->n_tests)
			continue;
		size_t halves[2], nh = 0;
		for (size_t k = 0; k < b->n_tests && nh < 2; k++)
			if (b->tests[k].parent == ti)
				halves[nh++] = test_leaf(topo, &b->tests[k], names, b->n_nodes);
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "test", (double)ti);
		if (nh == 2 && halves[0] != SIZE_MAX && halves[1] != SIZE_MAX && halves[0] != halves[1]) {
			size_t up = ng_topology_common(topo, halves[0], halves[1]);
			cJSON *between = cJSON_AddArrayToObject(p, "between");
			cJSON_AddItemToArray(between, cJSON_CreateString(topo->switches[halves[0]].name));
			cJSON_AddItemToArray(between, cJSON_CreateString(topo->switches[halves[1]].name));
			char why[400];
			if (up != SIZE_MAX) {
				cJSON_AddStringToObject(p, "through", topo->switches[up].name);
				snprintf(why, sizeof why, "each half passed under its own leaf (%s, %s); together "
				         "they were slow: the links from those leaves up to %s, or %s itself",
				         topo->switches[halves[0]].name, topo->switches[halves[1]].name,
				         topo->switches[up].name, topo->switches[up].name);
			} else {
				snprintf(why, sizeof why, "each half passed under its own leaf (%s, %s), which "
				         "share no switch in the topology: the path between them",
				         topo->switches[halves[0]].name, topo->switches[halves[1]].name);
			}
			cJSON_AddStringToObject(p, "why", why);
		} else {
			cJSON_AddStringToObject(p, "why", "its halves are not each under one leaf: the "
			                        "topology does not tell which switch lies between them");
		}
		cJSON_AddItemToArray(paths, p);
	}
	if (cJSON_GetArraySize(paths))
		cJSON_AddItemToObject(doc, "unattributed_paths", paths);
	else
		cJSON_Delete(paths);
}

void ng_fabric_gang_domains(const ng_fabric_opts *o, const ng_fabric_bisect *b,
                            char *const *names, cJSON *doc)
{
	const ng_topology *topo = o->topology;
	if (!topo)
		return;
	const cJSON *verdicts = ng_json_get(doc, "verdicts");
	size_t ns = topo->n_switches;
	size_t *count = calloc(ns + 1, sizeof *count), *bad = calloc(ns + 1, sizeof *bad);
	if (!count || !bad) {
		free(count);
		free(bad);
		return;
	}
	cJSON *domains = cJSON_CreateObject(), *unknown = cJSON_CreateArray();
	size_t n_bad = 0, bad_leaf = SIZE_MAX;
	bool one_leaf = true;
	for (const cJSON *v = verdicts ? verdicts->child : NULL; v; v = v->next) {
		const char *node = ng_json_get(v, "node")->valuestring;
		const char *verdict = ng_json_get(v, "verdict")->valuestring;
		size_t l = ng_topology_leaf(topo, node);
		bool f = faulty(verdict);
		if (l == SIZE_MAX) {
			cJSON_AddItemToArray(unknown, cJSON_CreateString(node));
			one_leaf = one_leaf && !f;
			continue;
		}
		cJSON *d = cJSON_GetObjectItemCaseSensitive(domains, topo->switches[l].name);
		if (!d) {
			d = cJSON_AddObjectToObject(domains, topo->switches[l].name);
			cJSON_AddArrayToObject(d, "nodes");
			cJSON_AddArrayToObject(d, "faulty");
		}
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d, "nodes"), cJSON_CreateString(node));
		count[l]++;
		if (f) {
			cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d, "faulty"),
			                     cJSON_CreateString(node));
			bad[l]++;
			n_bad++;
			if (bad_leaf != SIZE_MAX && bad_leaf != l)
				one_leaf = false;
			bad_leaf = l;
		}
	}
	cJSON_AddItemToObject(doc, "switch_domains", domains);
	if (cJSON_GetArraySize(unknown))
		cJSON_AddItemToObject(doc, "switch_unknown", unknown);
	else
		cJSON_Delete(unknown);
	char why[512];
	if (n_bad && one_leaf && bad_leaf != SIZE_MAX) {
		cJSON *fd = cJSON_AddObjectToObject(doc, "fault_domain");
		const char *name = topo->switches[bad_leaf].name;
		cJSON_AddStringToObject(fd, "switch", name);
		size_t others_ok = 0;
		for (size_t s = 0; s < ns; s++)
			others_ok += s != bad_leaf ? count[s] - bad[s] : 0;
		bool whole = bad[bad_leaf] == count[bad_leaf] && count[bad_leaf] >= 2 && others_ok > 0;
		cJSON_AddBoolToObject(fd, "whole_leaf", whole);
		if (whole)
			snprintf(why, sizeof why, "every node of the gang under leaf %s (%zu) is faulty while "
			         "the nodes under other leaves pass: suspect %s or its uplinks before the nodes",
			         name, count[bad_leaf], name);
		else
			snprintf(why, sizeof why, "the faulty node%s (%zu of the %zu under leaf %s) %s under "
			         "%s alone: the nodes or their links to %s, not the spine", n_bad > 1 ? "s" : "",
			         bad[bad_leaf], count[bad_leaf], name, n_bad > 1 ? "are" : "is", name, name);
		cJSON_AddStringToObject(fd, "why", why);
	} else if (n_bad) {
		cJSON *fd = cJSON_AddObjectToObject(doc, "fault_domain");
		cJSON *leaves = cJSON_AddArrayToObject(fd, "switches");
		for (size_t s = 0; s < ns; s++)
			if (bad[s])
				cJSON_AddItemToArray(leaves, cJSON_CreateString(topo->switches[s].name));
		cJSON_AddStringToObject(fd, "why", "faulty nodes under more than one leaf (or of unknown "
		                        "leaf): faults of the nodes, not of one switch domain");
	}
	free(count);
	free(bad);
	unattributed_paths(topo, b, names, doc);
}
