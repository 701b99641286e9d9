/* Slurm's topology.conf (the topology/tree plugin's file): which leaf switch
 * each node hangs from, and which switch is above which. Pure.
 *
 *   # comment
 *   SwitchName=leaf1 Nodes=gpu[001-032]
 *   SwitchName=leaf2 Nodes=gpu[033-064] LinkSpeed=400
 *   SwitchName=spine Switches=leaf[1-2]
 *
 * Keys are case-insensitive, as Slurm reads them; a line ending in a
 * backslash goes on on the next one. A node's switch domain is the switch
 * whose Nodes= lists it (its leaf). What Slurm would refuse is refused here,
 * with the line: a line without SwitchName=, a switch named twice, a node
 * under two switches, a switch with two parents, a Switches= naming a switch
 * the file does not define, a loop, an unreadable host list; and an Include
 * line (a pure reader opens no file: give it the included file). LinkSpeed= and
 * unknown keys are ignored (Slurm warns of the latter). An empty file is an
 * empty topology: every node's domain unknown. */
#ifndef NODEGATE_PARSE_TOPOLOGY_H
#define NODEGATE_PARSE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define NG_TOPOLOGY_NAME_MAX 64     /* switch and node names, as Slurm's hostlists allow */
#define NG_TOPOLOGY_MAX_SWITCHES 4096
#define NG_TOPOLOGY_MAX_NODES 65536

typedef struct {
	char name[NG_TOPOLOGY_NAME_MAX];
	size_t parent;  /* index of the switch above, or SIZE_MAX (a top switch) */
	size_t n_nodes; /* nodes directly under it (a leaf has some) */
	size_t line;
} ng_topology_switch;

typedef struct {
	char name[NG_TOPOLOGY_NAME_MAX];
	size_t leaf; /* the switch whose Nodes= lists it */
} ng_topology_node;

typedef struct {
	ng_topology_switch *switches;
	size_t n_switches;
	ng_topology_node *nodes; /* sorted by name after parsing, for lookups */
	size_t n_nodes;
} ng_topology;

/* Reads text (len bytes, need not end in NUL). 0 with out filled (free with
 * ng_topology_free), or -1 with err (NG_ERR_INPUT, naming the line; out is
 * left empty). */
int ng_topology_parse(const char *text, size_t len, ng_topology *out, ng_err *err);
void ng_topology_free(ng_topology *t);

/* The leaf switch of node (index into switches), or SIZE_MAX: unknown. */
size_t ng_topology_leaf(const ng_topology *t, const char *node);
/* The leaf switch's name of node, or NULL. */
const char *ng_topology_leaf_name(const ng_topology *t, const char *node);
/* The lowest switch above (or at) both a and b, switch indices; SIZE_MAX
 * when they share none (two trees) or either is SIZE_MAX. */
size_t ng_topology_common(const ng_topology *t, size_t a, size_t b);

#endif
