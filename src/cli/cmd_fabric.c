/* nodegate fabric: the node-to-node path (docs/fabric.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fabric.h"
#include "cli/store_cli.h"
#include "collect/ib_ports.h"

static int fabric_main(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_fabric_entry = {
	.name = "fabric",
	.usage = "pair NODE [--peers A,B] | gang NODELIST | ports [--root DIR] [OPTIONS]",
	.summary = "Test the fabric across nodes: a candidate with known-good peers, or a gang by bisection.",
	.help =
	"  fabric pair NODE [--peers A,B]   the candidate with two known-good peers (else\n"
	"                                   admitted nodes of its class from the store):\n"
	"                                   all-reduce with A, with B (peer changed), A with B\n"
	"                                   when both were slow (candidate changed); with --hcas,\n"
	"                                   perftest per HCA and direction with each peer\n"
	"  fabric gang NODELIST             one all-reduce across the gang (n[01-16] or a,b,c);\n"
	"                                   a slow or unmeasured group is split in halves down to\n"
	"                                   a lone node beside a known-good one\n"
	"  fabric ports [--root DIR]        this node's HCA ports: state, rate, error counters\n"
	"                                   (what the others read on each node, before and after)\n"
	"\n"
	"Every test runs through the launcher with NCCL_DEBUG=INFO; a run whose channels\n"
	"did not go over NET/IB (socket fallback), or used an HCA not in --hcas, or no GDR\n"
	"under --gdr, is incomparable: it measured another path. Error counters that rose\n"
	"during a test are named. A node no measured test passed is held, never passed.\n"
	"\n"
	"Options:\n"
	"      --expect-busbw GBPS  the class's all-reduce busbw for this topology; slow below\n"
	"                           admission.flag_fraction of it (one rail alone: its share).\n"
	"                           Without it, the store's current baseline of\n"
	"                           nccl.all_reduce.busbw for CLASS/Nnode/Rrail (R: the HCAs of\n"
	"                           --hcas; CLASS/Nnode without --hcas), per group size\n"
	"      --expect-rail GBPS   floor per HCA for the rail split (else the sibling rails)\n"
	"      --hcas LIST          the class's HCAs, e.g. mlx5_0,mlx5_1 (pair: also the rails)\n"
	"      --gdr                the class expects GPUDirect RDMA\n"
	"      --launcher TEMPLATE  default \"srun --nodelist={nodes} --nodes={n}\n"
	"                           --ntasks-per-node=1 --exclusive\"; split on spaces, no shell\n"
	"      --nccl CMD           default \"all_reduce_perf -b 1G -e 1G -g 8 -n 20 -N 3\"\n"
	"      --perftest PROG      default ib_write_bw; --perftest-seconds S (-D, default 5)\n"
	"      --timeout S          per test (default 120): past it, the test measured nothing\n"
	"      --peers A,B          reference peers (pair); known-good nodes for a lone suspect (gang)\n"
	"      --per-rail           gang: bisect again with each HCA of --hcas alone (NCCL_IB_HCA),\n"
	"                           against its share of --expect-busbw: a slow rail stands out\n"
	"      --out FILE           pair, run on the candidate: its all-reduce record (with the\n"
	"                           peer not blamed), stamped with this node's identity, for\n"
	"                           `nodegate admit --from FIRST --confirm-from FILE`\n"
	"      --diag FILE          with --out: the DCGM diagnostics the gate requires (the\n"
	"                           --out of `nodegate run dcgmi`)\n"
	"      --no-counters        do not read port counters on the nodes\n"
	"      --remote-nodegate P  nodegate as the nodes run it (default: this binary's path)\n"
	"      --raw-dir DIR        keep raw outputs there (default: a fresh directory under\n"
	"                           $TMPDIR, kept and named in the output as raw_dir)\n"
	"      --class KEY          the class of the topology keys (default \"fabric\"); each\n"
	"                           all-reduce record has class CLASS/Nnode/Rrail\n"
	"  -j, --json               the result as JSON\n"
	"\n"
	"With a store (--store or NODEGATE_STORE) every test's record lands there with its\n"
	"nodes, the variable it changed, its transport and the counters that rose.\n"
	"Exit status: 0 every node passed; 1 a node slow, held or with risen counters;\n"
	"2 usage; 3 the store.\n",
	.exec = fabric_main,
};

static int ports_main(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	static const struct option longopts[] = {
		{"root", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *root = getenv("NODEGATE_FABRIC_ROOT");
	bool json = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "r:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': root = optarg; break;
		case 'j': json = true; break;
		case 'h': ng_cmd_print_help(&ng_cmd_fabric_entry, stdout); return NG_EXIT_OK;
		default: return ng_cmd_usage_error(&ng_cmd_fabric_entry, "unknown option (see --help)");
		}
	}
	ng_err err;
	cJSON *doc = ng_ib_ports_read(root ? root : "/", &err);
	if (!doc) {
		fprintf(stderr, "nodegate fabric ports: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	if (json) {
		ng_print_json(doc);
	} else {
		printf("%-10s %-4s %-8s %-10s %s\n", "HCA", "PORT", "STATE", "RATE", "ERROR COUNTERS");
		for (const cJSON *p = cJSON_GetObjectItem(doc, "ports")->child; p; p = p->next) {
			const cJSON *st = cJSON_GetObjectItem(p, "state"), *r = cJSON_GetObjectItem(p, "rate_gbps");
			printf("%-10s %-4g %-8s %-10g", cJSON_GetObjectItem(p, "hca")->valuestring,
			       cJSON_GetObjectItem(p, "port")->valuedouble, cJSON_IsString(st) ? st->valuestring : "?",
			       cJSON_IsNumber(r) ? r->valuedouble : 0);
			for (const cJSON *c = cJSON_GetObjectItem(p, "counters")->child; c; c = c->next)
				printf(" %s=%.0f", c->string, c->valuedouble);
			printf("\n");
		}
		const cJSON *note = cJSON_GetObjectItem(doc, "note");
		if (cJSON_IsString(note))
			printf("%s\n", note->valuestring);
	}
	cJSON_Delete(doc);
	return NG_EXIT_OK;
}

static int pair_sub(struct ng_cli *cli, int argc, char **argv)
{
	return fabric_pair(cli, &ng_cmd_fabric_entry, argc, argv);
}

static int gang_sub(struct ng_cli *cli, int argc, char **argv)
{
	return fabric_gang(cli, &ng_cmd_fabric_entry, argc, argv);
}

static int fabric_main(struct ng_cli *cli, int argc, char **argv)
{
	static const struct ng_subcmd subs[] = {
		{"pair", pair_sub},
		{"gang", gang_sub},
		{"ports", ports_main},
	};
	return ng_cmd_dispatch(&ng_cmd_fabric_entry, subs, sizeof subs / sizeof subs[0], cli, argc, argv);
}
