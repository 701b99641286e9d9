/* The options every fabric subcommand shares (fabric.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fabric.h"
#include "flow/install_tree.h"

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
       O_HCAS, O_GDR, O_NOCOUNT, O_REMOTE, O_RAW, O_PEERS, O_CLASS, O_OUT, O_PER_RAIL, O_DIAG,
       O_TOPOLOGY };

const struct ng_opt ng_fabric_option_table[] = {
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
	{"topology", O_TOPOLOGY, "FILE", "the switch domains: Slurm's topology.conf (SwitchName=leaf1\n"
	 "Nodes=gpu[01-32]). Peers under the suspect's leaf first; a\n"
	 "gang's fault named by switch domain"},
	{"root", 'r', "DIR", "ports: read the HCAs under DIR instead of / (also\n"
	 "$NODEGATE_FABRIC_ROOT)"},
	NG_OPT_JSON("the result as JSON"),
	NG_OPT_HELP,
	{0},
};

void fabric_cli_free(struct fabric_cli *f)
{
	ng_topology_free(&f->topology);
	f->o.topology = NULL;
}

int fabric_parse_opts(const struct ng_cmd_entry *e, struct ng_cli *cli, int argc, char **argv,
                      struct fabric_cli *f, bool want_peers, int *next)
{
	memset(f, 0, sizeof *f);
	ng_fabric_opts *o = &f->o;
	const char **peers = want_peers ? &f->peers : NULL;
	if (peers)
		*peers = NULL;
	static char self[4096], dir[4096];
	ng_fabric_opts_default(o, &cli->policy,
	                       ng_self_path(self, sizeof self, dir, sizeof dir) == 0 ? self : NULL);
	int opt;
	struct ng_opt_parser op;
	ng_opt_begin(&op, e, argc, argv);
	while ((opt = ng_opt_next(&op)) != NG_OPT_END) {
		switch (opt) {
		case NG_OPT_EXIT: return op.status;
		case 'j': f->json = true; break;
		case O_TOPOLOGY: f->topology_path = op.arg; break;
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
	ng_err err;
	if (ng_fabric_opts_settle(o, f->topology_path, &f->topology, &err) < 0) {
		if (err.code == NG_ERR_USAGE)
			return ng_cmd_usage_error(e, "%s", err.msg);
		fprintf(stderr, "nodegate %s: %s\n", e->name, err.msg);
		return NG_EXIT_USAGE;
	}
	*next = op.next;
	return -1;
}

