/* nodegate fabric: the node-to-node path (docs/fabric.md). */
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
	"during a test are named. A node no measured test passed is held, never passed.\n",
	.opts = ng_fabric_opts,
	.help_tail =
	"With a store (--store or NODEGATE_STORE) every test's record lands there with its\n"
	"nodes, the variable it changed, its transport and the counters that rose.\n"
	"Exit status: 0 every node passed; 1 a node slow, held or with risen counters;\n"
	"2 usage; 3 the store.\n",
	.exec = fabric_main,
};

static int ports_main(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	const char *root = getenv("NODEGATE_FABRIC_ROOT");
	bool json = false;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_fabric_entry, argc, argv);
	int opt;
	while ((opt = ng_opt_next(&op)) != NG_OPT_END) {
		switch (opt) {
		case NG_OPT_EXIT: return op.status;
		case 'r': root = op.arg; break;
		case 'j': json = true; break;
		default:
			return ng_cmd_usage_error(&ng_cmd_fabric_entry, "--%s is for `fabric pair` and "
			                          "`fabric gang`", ng_opt_find(ng_fabric_opts, opt)->name);
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
