/* The fabric across nodes (docs/fabric.md): tests through a launcher, a
 * gang bisected, a candidate paired with known-good peers.
 *
 * fabric_run.c launches one test (an nccl-tests all-reduce over a set of
 * nodes, or one perftest pair on one HCA) through the harness, reads which
 * network it used and the port counters of its nodes before and after, and
 * judges it; fabric_gang.c bisects a gang with it; fabric_pair.c pairs a
 * candidate with known-good peers, one variable changed at a time;
 * fabric_baseline.c keeps the topologies' baselines from the passing runs;
 * fabric_domains.c says which switch domain a node and a fault are in.
 * The decisions are judge/fabric.c's; nothing here prints (the command line
 * prints the documents these return). */
#ifndef NODEGATE_FLOW_FABRIC_H
#define NODEGATE_FLOW_FABRIC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "flow/ctx.h"
#include "judge/fabric.h"
#include "parse/topology.h"

#define NG_FABRIC_MAX_TOKENS 48
#define NG_FABRIC_MAX_HCAS 32
#define NG_FABRIC_MAX_NODES 4096
#define NG_FABRIC_MAX_BASELINES 64

struct ng_fabric_baseline {
	size_t nodes;
	bool one_rail;
	double median; /* NAN: the store has none */
	char key[160];
};

/* How the tests run and what they are judged against: filled by the front
 * end (the command line's options), read by the flows. */
typedef struct {
	char *launcher[NG_FABRIC_MAX_TOKENS]; /* the template, split on spaces; {nodes} {n} */
	size_t n_launcher;
	char *nccl[NG_FABRIC_MAX_TOKENS]; /* the all-reduce program and its options */
	size_t n_nccl;
	const char *perftest;          /* ib_write_bw */
	double perftest_seconds;       /* -D */
	double timeout_s;              /* per test */
	double expect_busbw;           /* GB/s at every gang size (--expect-busbw) */
	double expect_rail;            /* Gb/s per HCA, the floor of the rail split; 0: siblings */
	double fraction;               /* admission.flag_fraction */
	char *hcas[NG_FABRIC_MAX_HCAS]; /* the class's HCAs (--hcas) */
	size_t n_hcas;
	bool need_gdr;
	bool counters;                 /* read port counters before and after */
	const char *remote_nodegate;   /* nodegate as the nodes run it */
	char raw_dir[4096];            /* where raw outputs are kept, per test */
	const char *class_key;
	const char *out_path;          /* pair: the candidate's record for admit --confirm-from */
	const char *diag_path;         /* pair --out: the DCGM diagnostics the gate requires */
	bool per_rail;                 /* gang: bisect each HCA alone too */
	const ng_topology *topology;   /* switch domains (topology.conf), or NULL: unknown */
	struct ng_fabric_baseline baselines[NG_FABRIC_MAX_BASELINES]; /* when no --expect-busbw */
	size_t n_baselines;
	char spec_buf[1024];           /* backing for the split template tokens */
	char nccl_buf[1024];
	char hca_buf[512];
} ng_fabric_opts;

/* ---- the options (fabric_opts.c) ------------------------------------------------------ */

/* The defaults: srun as the launcher, all_reduce_perf, ib_write_bw for 5 s,
 * 120 s per test, the policy's admission.flag_fraction, counters read, class
 * "fabric", and nodegate on the nodes at self (NULL: "nodegate" on PATH). */
void ng_fabric_opts_default(ng_fabric_opts *o, const ng_policy *pol, const char *self);
/* Once the front end has filled spec_buf, nccl_buf, hca_buf and raw_dir:
 * splits the launcher and nccl on spaces and the HCAs on commas, reads
 * topology_path (NULL: none) into *topology for o->topology, and makes the
 * raw directory (raw_dir empty: a fresh one under $TMPDIR). -1 with err:
 * NG_ERR_USAGE when the launcher or nccl names no program, NG_ERR_INPUT
 * for the topology or the directory. */
int ng_fabric_opts_settle(ng_fabric_opts *o, const char *topology_path, ng_topology *topology,
                          ng_err *err);

/* ---- one test (fabric_run.c) ---------------------------------------------------------- */

/* The class key of a test's topology: "CLASS/Nnode/Rrail" (R: the HCAs of
 * --hcas, 1 for one rail alone; "CLASS/Nnode" when --hcas is not given). */
void ng_fabric_topology_key(const ng_fabric_opts *o, size_t n, const char *hca, char *out,
                            size_t cap);
/* What a test over n nodes (hca: one rail alone) is judged against; NAN
 * with the reason in why when nothing is known. */
double ng_fabric_expected(const ng_fabric_opts *o, size_t n, const char *hca, char *why,
                          size_t cap);

/* Checks the tools' own help texts through the launcher (the option trap of
 * the harness, for a launched command). NULL when fine, else why not run. */
char *ng_fabric_check_tools(const ng_fabric_opts *o, const char *node, bool perftest);

/* One all-reduce over nodes (hca: NULL for all of the class's, else that one
 * alone, through NCCL_IB_HCA). The result object: nodes, hca, outcome,
 * verdict, busbw, expected, reason, transport, changed (filled by callers),
 * seconds, record. */
cJSON *ng_fabric_allreduce(const ng_fabric_opts *o, char *const *nodes, size_t n,
                           const char *hca, unsigned test_no);
/* One perftest on one HCA, client on `client`, server on `server`. */
cJSON *ng_fabric_perftest(const ng_fabric_opts *o, const char *client, const char *server,
                          const char *hca, unsigned test_no);

/* Runs the tests of one round at the same time: fn(arg, i) for i < n. */
void ng_fabric_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg);

/* {node: snapshot} for nodes, read on each node through the launcher. */
cJSON *ng_fabric_ports(const ng_fabric_opts *o, char *const *nodes, size_t n);
/* Adds "ports_changed" (and "ports_unread") to result from two ng_fabric_ports. */
void ng_fabric_note_ports(cJSON *result, const cJSON *before, const cJSON *after);

/* Stores every record of the results (a JSON array) under run_id in
 * ctx->store (nothing when NULL): the passing ones accepted, then builds
 * their topologies' baselines (fabric_baseline.c), named in doc's
 * "baselines". -1 with problem. */
int ng_fabric_store(const ng_ctx *ctx, const ng_fabric_opts *o, cJSON *results,
                    const char *run_id, cJSON *doc, char *problem, size_t cap);

/* ---- baselines (fabric_baseline.c) ---------------------------------------------------- */

/* Without --expect-busbw: the baseline of nccl.all_reduce.busbw for each
 * topology a test may have (sizes, with one rail alone too when per_rail),
 * from ctx->store: the current one while young, else built afresh from the
 * accepted runs, as admission's are. -1 with err when the store fails. */
int ng_fabric_load_baselines(const ng_ctx *ctx, ng_fabric_opts *o, const size_t *sizes,
                             size_t n_sizes, bool per_rail, ng_err *err);
/* After a run's records are stored: builds the baseline of each topology
 * its accepted records have (results: the tests), so the next run is
 * judged against what passed. Names each built key in out (an array of
 * {topology, status, median, nodes}). -1 with err. */
int ng_fabric_build_baselines(const ng_ctx *ctx, const ng_fabric_opts *o, const cJSON *results,
                              cJSON *out, ng_err *err);

/* ---- switch domains (fabric_domains.c) ------------------------------------------------ */

/* The leaf switch of node, or NULL (no topology, or not in it). */
const char *ng_fabric_leaf(const ng_fabric_opts *o, const char *node);
/* Known-good candidates ordered for a suspect: those under its leaf first,
 * then under the same switch higher up, then the rest, each group in its
 * given order. Sorts idx[0..n) of names in place. */
void ng_fabric_order_by_domain(const ng_fabric_opts *o, const char *suspect, char *const *names,
                               size_t *idx, size_t n);
/* The leaf of each of names[0..n) as an index into o->topology's switches
 * (SIZE_MAX unknown), into leaf. */
void ng_fabric_leaves(const ng_fabric_opts *o, char *const *names, size_t n, size_t *leaf);
/* The gang document's switch domains (b: its bisection over names): per
 * leaf, its nodes and the faulty ones ("switch_domains"); where the fault
 * localises ("fault_domain"); and, for a test that failed while its halves
 * passed, the switches between the halves ("unattributed_paths"). */
void ng_fabric_gang_domains(const ng_fabric_opts *o, const ng_fabric_bisect *b,
                            char *const *names, cJSON *doc);

/* ---- the gang (fabric_gang.c) --------------------------------------------------------- */

/* A gang of n nodes (names[0..n)) and n_refs known-good reference peers
 * outside it (names[n..n+n_refs)): the document of docs/fabric.md (tests,
 * verdicts, rounds, unattributed, verdict, overhead), its records stored in
 * ctx->store when there is one ("store_problem" when that failed). NULL
 * with err when the store cannot be read before the tests or memory runs
 * out. */
cJSON *ng_fabric_gang(const ng_ctx *ctx, ng_fabric_opts *o, char *const *names, size_t n,
                      size_t n_refs, ng_err *err);

/* ---- the pair (fabric_pair.c) --------------------------------------------------------- */

/* Up to cap known-good reference peers for cand from ctx->store: nodes of
 * its class whose last admission admitted them, in its switch domain first
 * when the topology is known. malloc'd names; how many, or -1 with err. */
int ng_fabric_pick_peers(const ng_ctx *ctx, const ng_fabric_opts *o, const char *cand,
                         char **out, size_t cap, ng_err *err);

typedef struct {
	bool store_failed;     /* the records could not be stored ("store_problem") */
	bool out_failed;       /* --out could not be written */
	char out_problem[1024];
} ng_fabric_pair_status;

/* Whether this process runs on node: its short host name or
 * $SLURMD_NODENAME. A pair's --out record carries this node's identity, so
 * it is written only on the candidate. */
bool ng_fabric_runs_on(const char *node);

/* The candidate with np (1 or 2) peers: the document of docs/fabric.md
 * (tests, blame, verdict, rails), the records stored in ctx->store when
 * there is one, and o->out_path written when set. NULL with err when memory
 * runs out. */
cJSON *ng_fabric_pair(const ng_ctx *ctx, const ng_fabric_opts *o, const char *cand,
                      char *const *peers, size_t np, ng_fabric_pair_status *status, ng_err *err);

#endif
