/* `nodegate fabric`: tests across nodes through a launcher (docs/fabric.md).
 *
 * fabric_run.c launches one test (an nccl-tests all-reduce over a set of
 * nodes, or one perftest pair on one HCA) through the harness, reads which
 * network it used and the port counters of its nodes before and after, and
 * judges it; fabric_gang.c bisects a gang with it; fabric_pair.c pairs a
 * candidate with known-good peers, one variable changed at a time. */
#ifndef NODEGATE_CLI_FABRIC_H
#define NODEGATE_CLI_FABRIC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli/cmd.h"
#include "judge/fabric.h"

#define FABRIC_MAX_TOKENS 48
#define FABRIC_MAX_HCAS 32

struct fabric_opts {
	char *launcher[FABRIC_MAX_TOKENS]; /* the template, split on spaces; {nodes} {n} */
	size_t n_launcher;
	char *nccl[FABRIC_MAX_TOKENS]; /* the all-reduce program and its options */
	size_t n_nccl;
	const char *perftest;          /* ib_write_bw */
	double perftest_seconds;       /* -D */
	double timeout_s;              /* per test */
	double expect_busbw;           /* GB/s at every gang size (--expect-busbw) */
	double expect_rail;            /* Gb/s per HCA, the floor of the rail split; 0: siblings */
	double fraction;               /* admission.flag_fraction */
	char *hcas[FABRIC_MAX_HCAS];   /* the class's HCAs (--hcas) */
	size_t n_hcas;
	bool need_gdr;
	bool counters;                 /* read port counters before and after */
	const char *remote_nodegate;   /* nodegate as the nodes run it */
	char raw_dir[4096];            /* where raw outputs are kept, per test */
	bool json;
	const char *store;             /* NULL: keep nothing */
	const char *class_key;
	const char *out_path;          /* pair: the candidate's record for admit --confirm-from */
	const char *diag_path;         /* pair --out: the DCGM diagnostics the gate requires */
	bool per_rail;                 /* gang: bisect each HCA alone too */
	struct fabric_baseline {
		size_t nodes;
		bool one_rail;
		double median; /* NAN: the store has none */
		char key[160];
	} baselines[64];               /* from the store, when --expect-busbw is not given */
	size_t n_baselines;
	char spec_buf[1024];           /* backing for the split template tokens */
	char nccl_buf[1024];
	char hca_buf[512];
};

/* Reads the options every fabric verb shares (one getopt loop). Returns -1 to
 * go on with argv[optind..] the node arguments, else an exit status. */
/* The options of `nodegate fabric` (fabric_opts.c): one table for its --help
 * and every subcommand. */
extern const struct ng_opt ng_fabric_opts[];
int fabric_parse_opts(const struct ng_cmd_entry *e, struct ng_cli *cli, int argc, char **argv,
                      struct fabric_opts *o, const char **peers);

/* The class key of a test's topology: "CLASS/Nnode/Rrail" (R: the HCAs of
 * --hcas, 1 for one rail alone; "CLASS/Nnode" when --hcas is not given). */
void fabric_topology_key(const struct fabric_opts *o, size_t n, const char *hca, char *out,
                         size_t cap);
/* Without --expect-busbw: reads the store's current baseline of
 * nccl.all_reduce.busbw for each topology a test may have (sizes, with
 * one rail alone too when per_rail). Returns -1 (printed) when the store
 * cannot be read. */
int fabric_load_baselines(struct fabric_opts *o, struct ng_cli *cli, const struct ng_cmd_entry *e,
                          const size_t *sizes, size_t n_sizes, bool per_rail);
/* What a test over n nodes (hca: one rail alone) is judged against; NAN
 * with the reason in why when nothing is known. */
double fabric_expected(const struct fabric_opts *o, size_t n, const char *hca, char *why, size_t cap);

/* Checks the tools' own help texts through the launcher (the option trap of
 * the harness, for a launched command). NULL when fine, else why not run. */
char *fabric_check_tools(const struct fabric_opts *o, const char *node, bool perftest);

/* One all-reduce over nodes (hca: NULL for all of the class's, else that one
 * alone, through NCCL_IB_HCA). The result object: nodes, hca, outcome,
 * verdict, busbw, expected, reason, transport, changed (filled by callers),
 * seconds, record. */
cJSON *fabric_allreduce(const struct fabric_opts *o, char *const *nodes, size_t n,
                        const char *hca, unsigned test_no);
/* One perftest on one HCA, client on `client`, server on `server`. */
cJSON *fabric_perftest(const struct fabric_opts *o, const char *client, const char *server,
                       const char *hca, unsigned test_no);

/* Runs the tests of one round at the same time: fn(arg, i) for i < n. */
void fabric_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg);

/* {node: snapshot} for nodes, read on each node through the launcher. */
cJSON *fabric_ports(const struct fabric_opts *o, char *const *nodes, size_t n);
/* Adds "counters_risen" (and per node) to result from two fabric_ports. */
void fabric_note_ports(cJSON *result, const cJSON *before, const cJSON *after);

/* Stores every record of the results (a JSON array) under run_id. */
int fabric_store(const struct fabric_opts *o, struct ng_cli *cli, const cJSON *results,
                 const char *run_id, char *problem, size_t cap);

int fabric_gang(struct ng_cli *cli, const struct ng_cmd_entry *e, int argc, char **argv);
int fabric_pair(struct ng_cli *cli, const struct ng_cmd_entry *e, int argc, char **argv);

/* selftest_fabric.c: the fabric rows of `nodegate selftest`. */
typedef void (*ng_selftest_row_fn)(void *ctx, const char *name, const char *expected,
                                   const char *got, const char *problem);
void ng_selftest_fabric(const char *dir, const char *self, const char *policy,
                        ng_selftest_row_fn row, void *ctx);

#endif
