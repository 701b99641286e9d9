/* The options every fabric verb shares, and what a test is judged against:
 * --expect-busbw, or the store's baseline of the test's topology (fabric.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/fabric.h"
#include "cli/store_cli.h"
#define DEFAULT_LAUNCHER "srun --nodelist={nodes} --nodes={n} --ntasks-per-node=1 --exclusive"
#define DEFAULT_NCCL "all_reduce_perf -b 1G -e 1G -g 8 -n 20 -N 3"


static size_t split_spaces(char *buf, char **tok, size_t cap)
{
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n + 1 < cap;
	     t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	tok[n] = NULL;
	return n;
}

static bool positive(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || !isfinite(v))
		return false;
	*out = v;
	return true;
}

enum { O_LAUNCHER = NG_OPT_LONG, O_NCCL, O_PERFTEST, O_SECONDS, O_TIMEOUT, O_EXPECT, O_RAIL,
       O_HCAS, O_GDR, O_NOCOUNT, O_REMOTE, O_RAW, O_PEERS, O_CLASS, O_OUT, O_PER_RAIL, O_DIAG };

const struct ng_opt ng_fabric_opts[] = {
	{"expect-busbw", O_EXPECT, "GBPS", "the class's all-reduce busbw for this topology; slow below\n"
	 "admission.flag_fraction of it (one rail alone: its share).\n"
	 "Without it, the store's current baseline of\n"
	 "nccl.all_reduce.busbw for CLASS/Nnode/Rrail (R: the HCAs of\n"
	 "--hcas; CLASS/Nnode without --hcas), per group size"},
	{"expect-rail", O_RAIL, "GBPS", "floor per HCA for the rail split (else the sibling rails)"},
	{"hcas", O_HCAS, "LIST", "the class's HCAs, e.g. mlx5_0,mlx5_1 (pair: also the rails)"},
	{"gdr", O_GDR, NULL, "the class expects GPUDirect RDMA"},
	{"launcher", O_LAUNCHER, "TEMPLATE", "default \"srun --nodelist={nodes} --nodes={n}\n"
	 "--ntasks-per-node=1 --exclusive\"; split on spaces, no shell"},
	{"nccl", O_NCCL, "CMD", "default \"all_reduce_perf -b 1G -e 1G -g 8 -n 20 -N 3\""},
	{"perftest", O_PERFTEST, "PROG", "default ib_write_bw"},
	{"perftest-seconds", O_SECONDS, "S", "perftest's run time (its -D, default 5)"},
	{"timeout", O_TIMEOUT, "S", "per test (default 120): past it, the test measured nothing"},
	{"peers", O_PEERS, "A,B", "reference peers (pair); known-good nodes for a lone suspect (gang)"},
	{"per-rail", O_PER_RAIL, NULL, "gang: bisect again with each HCA of --hcas alone (NCCL_IB_HCA),\n"
	 "against its share of --expect-busbw: a slow rail stands out"},
	{"out", O_OUT, "FILE", "pair, run on the candidate: its all-reduce record (with the\n"
	 "peer not blamed), stamped with this node's identity, for\n"
	 "`nodegate admit --from FIRST --confirm-from FILE`"},
	{"diag", O_DIAG, "FILE", "with --out: the DCGM diagnostics the gate requires (the\n"
	 "--out of `nodegate run dcgmi`)"},
	{"no-counters", O_NOCOUNT, NULL, "do not read port counters on the nodes"},
	{"remote-nodegate", O_REMOTE, "P", "nodegate as the nodes run it (default: this binary's path)"},
	{"raw-dir", O_RAW, "DIR", "keep raw outputs there (default: a fresh directory under\n"
	 "$TMPDIR, kept and named in the output as raw_dir)"},
	{"class", O_CLASS, "KEY", "the class of the topology keys (default \"fabric\"); each\n"
	 "all-reduce record has class CLASS/Nnode/Rrail"},
	{"root", 'r', "DIR", "ports: read the HCAs under DIR instead of / (also\n"
	 "$NODEGATE_FABRIC_ROOT)"},
	NG_OPT_JSON("the result as JSON"),
	NG_OPT_HELP,
	{0},
};

int fabric_parse_opts(const struct ng_cmd_entry *e, struct ng_cli *cli, int argc, char **argv,
                      struct fabric_opts *o, const char **peers)
{
	memset(o, 0, sizeof *o);
	snprintf(o->spec_buf, sizeof o->spec_buf, "%s", DEFAULT_LAUNCHER);
	snprintf(o->nccl_buf, sizeof o->nccl_buf, "%s", DEFAULT_NCCL);
	o->perftest = "ib_write_bw";
	o->perftest_seconds = 5;
	o->timeout_s = 120;
	o->fraction = cli->policy.flag_fraction;
	o->counters = true;
	o->class_key = "fabric";
	if (peers)
		*peers = NULL;
	static char self[4096], dir[4096];
	if (ng_self_path(self, sizeof self, dir, sizeof dir) == 0)
		o->remote_nodegate = self;
	else
		o->remote_nodegate = "nodegate";
	int opt;
	struct ng_opt_parser op;
	ng_opt_begin(&op, e, argc, argv);
	while ((opt = ng_opt_next(&op)) != NG_OPT_END) {
		switch (opt) {
		case NG_OPT_EXIT: return op.status;
		case 'j': o->json = true; break;
		case O_LAUNCHER: snprintf(o->spec_buf, sizeof o->spec_buf, "%s", op.arg); break;
		case O_NCCL: snprintf(o->nccl_buf, sizeof o->nccl_buf, "%s", op.arg); break;
		case O_PERFTEST: o->perftest = op.arg; break;
		case O_SECONDS:
			if (!positive(op.arg, &o->perftest_seconds))
				return ng_cmd_usage_error(e, "--perftest-seconds wants a positive number, not \"%s\"", op.arg);
			break;
		case O_TIMEOUT:
			if (!positive(op.arg, &o->timeout_s))
				return ng_cmd_usage_error(e, "--timeout wants positive seconds, not \"%s\"", op.arg);
			break;
		case O_EXPECT:
			if (!positive(op.arg, &o->expect_busbw))
				return ng_cmd_usage_error(e, "--expect-busbw wants GB/s, not \"%s\"", op.arg);
			break;
		case O_RAIL:
			if (!positive(op.arg, &o->expect_rail))
				return ng_cmd_usage_error(e, "--expect-rail wants Gb/s, not \"%s\"", op.arg);
			break;
		case O_HCAS: snprintf(o->hca_buf, sizeof o->hca_buf, "%s", op.arg); break;
		case O_GDR: o->need_gdr = true; break;
		case O_NOCOUNT: o->counters = false; break;
		case O_REMOTE: o->remote_nodegate = op.arg; break;
		case O_RAW: snprintf(o->raw_dir, sizeof o->raw_dir, "%s", op.arg); break;
		case O_CLASS: o->class_key = op.arg; break;
		case O_OUT: o->out_path = op.arg; break;
		case O_PER_RAIL: o->per_rail = true; break;
		case O_DIAG: o->diag_path = op.arg; break;
		case O_PEERS:
			if (!peers)
				return ng_cmd_usage_error(e, "--peers is for `fabric pair`");
			*peers = op.arg;
			break;
		case 'r': return ng_cmd_usage_error(e, "--root is for `fabric ports`");
		}
	}
	o->n_launcher = split_spaces(o->spec_buf, o->launcher, FABRIC_MAX_TOKENS);
	o->n_nccl = split_spaces(o->nccl_buf, o->nccl, FABRIC_MAX_TOKENS);
	if (o->n_launcher == 0 || o->n_nccl == 0)
		return ng_cmd_usage_error(e, "--launcher and --nccl must name a program");
	for (char *save = NULL, *t = strtok_r(o->hca_buf, ",", &save); t && o->n_hcas < FABRIC_MAX_HCAS;
	     t = strtok_r(NULL, ",", &save))
		o->hcas[o->n_hcas++] = t;
	if (!o->raw_dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(o->raw_dir, sizeof o->raw_dir, "%s/nodegate-fabric-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(o->raw_dir)) {
			fprintf(stderr, "nodegate %s: cannot make a directory for raw outputs (%s): %s\n",
			        e->name, o->raw_dir, strerror(errno));
			return NG_EXIT_USAGE;
		}
	} else if (mkdir(o->raw_dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "nodegate %s: cannot create --raw-dir %s: %s\n", e->name, o->raw_dir,
		        strerror(errno));
		return NG_EXIT_USAGE;
	}
	return -1;
}

/* ---- what a test is judged against --------------------------------------------------- */

void fabric_topology_key(const struct fabric_opts *o, size_t n, const char *hca, char *out, size_t cap)
{
	if (hca || o->n_hcas)
		snprintf(out, cap, "%.100s/%zunode/%zurail", o->class_key, n, hca ? (size_t)1 : o->n_hcas);
	else
		snprintf(out, cap, "%.100s/%zunode", o->class_key, n);
}

int fabric_load_baselines(struct fabric_opts *o, struct ng_cli *cli, const struct ng_cmd_entry *e,
                          const size_t *sizes, size_t n_sizes, bool per_rail)
{
	if (o->expect_busbw > 0)
		return 0;
	ng_store *st = ng_cli_open_existing_store(cli, e, NULL);
	if (!st)
		return -1;
	int rc = 0;
	for (int rail = 0; rail <= (per_rail ? 1 : 0) && rc == 0; rail++) {
		for (size_t i = 0; i < n_sizes && o->n_baselines < 64; i++) {
			struct fabric_baseline *b = &o->baselines[o->n_baselines++];
			b->nodes = sizes[i];
			b->one_rail = rail == 1;
			b->median = NAN;
			fabric_topology_key(o, sizes[i], rail ? "one" : NULL, b->key, sizeof b->key);
			ng_store_baseline sb;
			ng_err err;
			int got = ng_store_current_baseline(st, b->key, "", "nccl.all_reduce.busbw", &sb, &err);
			if (got < 0) {
				rc = ng_cli_store_error(e, &err);
				break;
			}
			if (got == 1 && sb.median > 0)
				b->median = sb.median;
		}
	}
	ng_store_close(st);
	return rc < 0 ? -1 : 0;
}

double fabric_expected(const struct fabric_opts *o, size_t n, const char *hca, char *why, size_t cap)
{
	if (o->expect_busbw > 0)
		/* One rail alone carries its share of the all-rail figure. */
		return hca && o->n_hcas ? o->expect_busbw / (double)o->n_hcas : o->expect_busbw;
	char key[160];
	fabric_topology_key(o, n, hca, key, sizeof key);
	for (size_t i = 0; i < o->n_baselines; i++) {
		const struct fabric_baseline *b = &o->baselines[i];
		if (b->nodes == n && b->one_rail == (hca != NULL) && b->median > 0)
			return b->median;
	}
	snprintf(why, cap, "no baseline of nccl.all_reduce.busbw for %s in the store, and no "
	         "--expect-busbw: nothing to judge against", key);
	return NAN;
}
