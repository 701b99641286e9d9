/* Fabric decisions across nodes (docs/fabric.md): was the intended path
 * measured, which counters rose, is a group's all-reduce slow, which node of
 * a slow gang is the slow one (bisection), and whom a paired test blames.
 * Pure: data in, decisions out; no I/O, no clock. */
#ifndef NODEGATE_JUDGE_FABRIC_H
#define NODEGATE_JUDGE_FABRIC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- the path a test used --------------------------------------------------------- */

typedef struct {
	const char *const *hcas; /* the HCAs the class has ("mlx5_0"...); NULL/0: any */
	size_t n_hcas;
	bool need_gdr;           /* the class expects GPUDirect RDMA */
} ng_fabric_path;

/* Whether a run's transport summary (ng_nccl_transport_json) shows the
 * intended path. false with the reason in why: the run is `incomparable`,
 * whatever bandwidth it printed. A cross-node run must show its channels
 * going over IB; one that shows nothing was not shown to use the fabric. */
bool ng_fabric_transport_ok(const cJSON *transport, const ng_fabric_path *p, char *why,
                            size_t cap);

/* Counters of two port snapshots (ng_ib_ports_read) that rose between them,
 * and ports that left ACTIVE or changed rate: an array of
 * {hca, port, counter, before, after} and {hca, port, change, before, after}.
 * A port missing from after is named too ("change": "gone"). */
cJSON *ng_fabric_ports_changed(const cJSON *before, const cJSON *after);

/* ---- one group's all-reduce ------------------------------------------------------- */

typedef enum { NG_FT_PASS, NG_FT_SLOW, NG_FT_UNMEASURED } ng_fabric_outcome;
const char *ng_fabric_outcome_name(ng_fabric_outcome o);

/* The flag rule of admission: slow when the median of samples is below
 * fraction x expected; wrong results are a failure whatever the speed;
 * no samples, or no expectation, measured nothing. */
ng_fabric_outcome ng_fabric_judge_bw(const double *samples, size_t n, double expected,
                                     double fraction, double wrong, double *median);

/* ---- bisection of a gang ---------------------------------------------------------- */

enum ng_fb_node {
	NG_FB_UNTESTED,  /* no measured test covered it yet */
	NG_FB_PASSED,    /* a measured test it was in passed */
	NG_FB_SLOW,      /* slow alone with a known-good peer */
	NG_FB_NO_ANSWER, /* its test with a known-good peer measured nothing */
	NG_FB_HELD,      /* never covered by a measured test: not passed */
};
const char *ng_fb_node_name(enum ng_fb_node s);

typedef struct {
	size_t *nodes;     /* indices: < n_nodes a gang member, else reference peer n - n_nodes */
	size_t n;
	size_t helper;     /* the known-good node added to a lone member, or SIZE_MAX */
	size_t parent;     /* the test whose failure this one splits; SIZE_MAX: the first */
	unsigned round;    /* 0: not run yet */
	bool done;
	ng_fabric_outcome outcome;
} ng_fb_test;

typedef struct {
	size_t n_nodes, n_refs;
	enum ng_fb_node *state;
	ng_fb_test *tests;
	size_t n_tests, cap;
	unsigned rounds;
	bool oom;
	size_t *leaf;      /* per node (gang, then references): its leaf switch; NULL: unknown */
} ng_fabric_bisect;

/* A gang of n nodes, with n_refs known-good reference peers outside it
 * (they may stand beside a lone suspect). -1 when out of memory. */
int ng_fabric_bisect_init(ng_fabric_bisect *b, size_t n, size_t n_refs);
void ng_fabric_bisect_free(ng_fabric_bisect *b);
/* The switch domain (leaf switch, any number; SIZE_MAX unknown) of each of
 * the n_nodes + n_refs nodes: a lone suspect is then tested beside a
 * known-good node of its own leaf when there is one, so the test changes
 * the node and not the path through the spine. -1 when out of memory. */
int ng_fabric_bisect_set_leaves(ng_fabric_bisect *b, const size_t *leaf);
/* The next round: tests whose node sets are disjoint, so they may run at
 * the same time. Writes their indices into out (at most cap) and returns
 * how many; 0 when nothing is left to test. */
size_t ng_fabric_bisect_next(ng_fabric_bisect *b, size_t *out, size_t cap);
/* What one test of the round measured. A slow or unmeasured group is split
 * in halves; a lone member beside a known-good peer is named. */
void ng_fabric_bisect_report(ng_fabric_bisect *b, size_t test, ng_fabric_outcome o);
/* Ends the procedure: every node no measured test covered is held. */
void ng_fabric_bisect_finish(ng_fabric_bisect *b);

/* ---- paired tests ----------------------------------------------------------------- */

typedef enum {
	NG_BLAME_NONE,      /* fine with two good peers */
	NG_BLAME_CANDIDATE, /* slow with two peers that are fine together */
	NG_BLAME_PEER_A,    /* slow with A only: A, or the path to A */
	NG_BLAME_PEER_B,
	NG_BLAME_UNKNOWN,   /* the tests cannot tell (held, with the reason) */
} ng_fabric_blame;
const char *ng_fabric_blame_name(ng_fabric_blame b);

/* Changing one variable at a time: the candidate with peer A, then with
 * peer B (the peer changed), then A with B (the candidate changed; pass
 * NG_FT_UNMEASURED when it was not run). has_b false: one peer only. */
ng_fabric_blame ng_fabric_attribute(ng_fabric_outcome ca, bool has_b, ng_fabric_outcome cb,
                                    ng_fabric_outcome ab, const char **why);

/* One pair's per-HCA rates: rail k is slow when below fraction x the larger
 * of floor and the median of the other rails (a rail is judged against its
 * siblings, so one HCA of eight at half rate stands out when the all-reduce
 * over all of them looks fine). Non-finite or non-positive rates are
 * unmeasured (slow[k] false, unmeasured[k] true). Returns the number slow. */
size_t ng_fabric_rail_outliers(const double *gbps, size_t n, double fraction, double floor,
                               bool *slow, bool *unmeasured);

#endif
