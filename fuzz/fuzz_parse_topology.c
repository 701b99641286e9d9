/* libFuzzer target for Slurm's topology.conf reader. For any bytes: either
 * a refusal with a one-line message and nothing left behind, or a tree in
 * which every node's leaf is a switch that lists nodes, the nodes are sorted
 * and each found by name, every walk up from a switch ends, and the common
 * switch of two leaves is above (or at) both. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/topology.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static int above(const ng_topology *t, size_t up, size_t s)
{
	for (size_t x = s, steps = 0; x != SIZE_MAX && steps <= t->n_switches;
	     x = t->switches[x].parent, steps++)
		if (x == up)
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ng_topology t;
	ng_err err = {0};
	if (ng_topology_parse((const char *)data, size, &t, &err) < 0) {
		require(t.switches == NULL && t.nodes == NULL && t.n_switches == 0);
		require(strchr(err.msg, '\n') == NULL && err.msg[0] != '\0');
		return 0;
	}
	for (size_t i = 0; i < t.n_switches; i++) {
		size_t steps = 0;
		for (size_t x = i; x != SIZE_MAX; x = t.switches[x].parent)
			require(++steps <= t.n_switches);
	}
	for (size_t i = 0; i < t.n_nodes; i++) {
		require(t.nodes[i].leaf < t.n_switches && t.switches[t.nodes[i].leaf].n_nodes > 0);
		require(i == 0 || strcmp(t.nodes[i - 1].name, t.nodes[i].name) < 0);
		require(ng_topology_leaf(&t, t.nodes[i].name) == t.nodes[i].leaf);
		size_t a = t.nodes[i].leaf, b = t.nodes[t.n_nodes - 1 - i].leaf;
		size_t c = ng_topology_common(&t, a, b);
		require(c == SIZE_MAX || (above(&t, c, a) && above(&t, c, b)));
	}
	ng_topology_free(&t);
	return 0;
}
