/* Attributing a partial regression, and a baseline's drift under its pinned
 * one: the pure rules behind two kinds of fleet event.
 *
 * A partial regression: part of a class moved together on one metric (a
 * firmware rolled out to some racks, a container digest on some nodes). The
 * breaker sees many quarantines at once; this says what the moved nodes
 * share that the others do not, so the event can name it, decline only the
 * quarantines of nodes that hold it, and leave the others judged as before.
 *
 * Pure: no I/O, no clock, no globals, no allocation (the caller hands in the
 * pairs and the room for the answer). */
#ifndef NODEGATE_JUDGE_ATTRIBUTION_H
#define NODEGATE_JUDGE_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>

#include "core/policy.h"

/* The rule for "shared": a field value held by at least this share of the
 * shifted nodes and at most this share of the others. 90/10 leaves room for
 * one stray fault among ten shifted nodes without naming a field half the
 * class holds. */
#define NG_ATTR_SHIFTED_SHARE 0.90
#define NG_ATTR_OTHERS_SHARE 0.10
/* Fewest nodes on each side for a field to say anything: two shifted nodes
 * share by chance what one cannot, and without three others measured since
 * the shift nothing shows the value is not everywhere. */
#define NG_ATTR_MIN_SHIFTED 2
#define NG_ATTR_MIN_OTHERS 3

/* A node's ratio to its class's baseline median on the metric (its newest
 * run's median over the baseline's) says it shifted when it is under the
 * flag bar (admission.flag_fraction): the same line admission flags at. */
bool ng_attr_shifted(double ratio, const ng_policy *pol);

/* One profile field of one node: `field` a dotted path ("ib.devices[].fw_ver",
 * "container.digest", "rack"), `value` its value as text, `node` an index
 * into the caller's nodes. A node has at most one value per field. */
typedef struct {
	const char *field, *value;
	size_t node;
} ng_attr_pair;

/* A field value the shifted nodes share and the others do not. */
typedef struct {
	const char *field, *value;
	size_t shifted_with, others_with; /* how many of each side hold it */
	const char *others_value; /* the others' commonest value of the field; NULL: none has it */
} ng_attr_field;

typedef enum {
	NG_ATTR_NAMED,           /* fields named: out[0 .. n_fields) */
	NG_ATTR_NO_SHARED_FIELD, /* enough nodes on both sides, and no field separates them */
	NG_ATTR_TOO_FEW_SHIFTED, /* fewer than NG_ATTR_MIN_SHIFTED shifted nodes */
	NG_ATTR_TOO_FEW_OTHERS,  /* fewer than NG_ATTR_MIN_OTHERS others (the whole class moved) */
} ng_attr_status;

typedef struct {
	ng_attr_status status;
	size_t n_shifted, n_others;
	size_t n_fields;   /* named; at most cap (more_fields: how many did not fit) */
	size_t more_fields;
	double shift;      /* the shifted nodes' median ratio less one (-0.12: 12% down) */
} ng_attribution;

/* Finds the field values that separate the shifted nodes from the others.
 * shifted[i] and ratio[i] describe node i of n_nodes (each measured since the
 * shift began); pairs are every node's profile fields, sorted here in place.
 * Named fields come out by field name; a field whose value every shifted node
 * and every other node hold alike is never named. */
ng_attribution ng_attribute(const bool *shifted, const double *ratio, size_t n_nodes,
                            ng_attr_pair *pairs, size_t n_pairs, ng_attr_field *out, size_t cap);

/* Whether a node's profile (its pairs, any order, node index ignored) holds
 * every named field's value: then a quarantine of the event's metric is the
 * event's, not the node's. With no fields named, nothing matches. */
bool ng_attr_matches(const ng_attr_field *fields, size_t n_fields, const ng_attr_pair *node_pairs,
                     size_t n_pairs);

/* A class baseline rebuilt under the newest pinned baseline of the same
 * class, software identity and metric: pinned and rebuilt are the two
 * medians, higher_is_better the metric's direction. *drop is the share it
 * fell (0.07: 7% down; negative when it rose; NaN when either is not a
 * positive finite number). True when it fell by more than
 * admission.drift_fraction: peers alone would follow the class down, so it
 * is a fleet event. */
bool ng_baseline_drifted(double pinned, double rebuilt, bool higher_is_better, const ng_policy *pol,
                         double *drop);

#endif
