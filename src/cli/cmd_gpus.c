/* nodegate gpus: the GPUs the store knows each node by, between checks, and
 * forgetting one taken out on purpose (flow/gpu_forget.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/ctx.h"
#include "flow/gpu_forget.h"

static int exec_gpus(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt gpus_opts[] = {
	{"reason", 'r', "TEXT", "forget: why (a ticket, an RMA), 1 to 255 characters; required"},
	NG_OPT_STORE,
	NG_OPT_JSON("the result as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_gpus_entry = {
	.name = "gpus",
	.usage = "list [NODE] [--store S] [--json]\n"
	         "       nodegate gpus forget NODE UUID|BUS --reason TEXT [--store S] [--json]",
	.summary = "The GPUs each node's checks know it by; forget one removed on purpose.",
	.help =
	"The GPU checks (epilog, prolog, health) keep each node's GPUs between checks:\n"
	"UUID, PCI bus, device minor, first and last seen. A GPU the node had and NVML\n"
	"no longer lists is missing: fatal, a drain (docs/gpu.md). That is right for a\n"
	"GPU fallen off the bus, and wrong for one an operator took out.\n"
	"\n"
	"  list [NODE]            the GPUs kept for every node, or for NODE (its id or\n"
	"                         scheduler name)\n"
	"  forget NODE UUID|BUS   remove one GPU from NODE's inventory, by its UUID or its\n"
	"                         PCI bus (0000:3b:00, 00000000:3B:00.0, 3b:00.0), with an\n"
	"                         audit entry (gpu.forget) naming who and why; the next\n"
	"                         check starts from the GPUs the node has. A GPU that\n"
	"                         comes back is recorded afresh\n"
	"\n"
	,
	.opts = gpus_opts,
	.help_tail =
	"Example:\n"
	"  nodegate gpus forget gpu-node-013 0000:3b:00 --reason \"RMA-2231: GPU 3 pulled\"\n"
	"\n"
	"Exit status: 0 done; 2 usage error (no --reason, a GPU the node's inventory\n"
	"does not hold, a bus naming more than one); 3 the store could not be opened,\n"
	"read or written.\n",
	.exec = exec_gpus,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

struct opts {
	const char *spec, *reason;
	bool json;
	int next; /* the first operand */
};

/* -1 to go on, else the exit status. */
static int parse_opts(const struct ng_cmd_entry *e, int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	struct ng_opt_parser op;
	ng_opt_begin(&op, e, argc, argv);
	int c;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case NG_OPT_EXIT: return op.status;
		case 'r': o->reason = op.arg; break;
		case 's': o->spec = op.arg; break;
		case 'j': o->json = true; break;
		}
	}
	o->next = op.next;
	return -1;
}

/* The node NODE names, as the inventory keys it (its stable id). */
static int node_of(ng_store *st, const struct ng_cmd_entry *e, const char *arg,
                   ng_store_node_ref *ref)
{
	if (!*arg || strlen(arg) >= sizeof ref->id)
		return ng_cmd_usage_error(e, "NODE must be 1 to %zu characters", sizeof ref->id - 1);
	return ng_cli_resolve_node(st, e, arg, ref);
}

static int cmd_list(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_gpus_entry;
	struct opts o;
	int rc = parse_opts(e, argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (argc - o.next > 1)
		return ng_cmd_usage_error(e, "gpus list takes at most one NODE");
	if (o.reason)
		return ng_cmd_usage_error(e, "--reason is for gpus forget");
	ng_store *st = ng_cli_store(cli, o.spec);
	if (!st)
		return NG_EXIT_STORE;
	ng_store_node_ref ref = {0};
	if (o.next < argc && (rc = node_of(st, e, argv[o.next], &ref)) != 0)
		return rc;
	ng_store_gpu *gpus = NULL;
	char(*nodes)[256] = NULL;
	size_t n = 0;
	ng_err err;
	rc = ng_store_all_gpus(st, ref.id[0] ? ref.id : NULL, &gpus, &nodes, &n, &err);
	if (rc < 0)
		return ng_cli_store_error(e, &err);
	if (o.json) {
		cJSON *doc = ng_gpu_list_json(gpus, (const char(*)[256])nodes, n);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (n == 0) {
		ng_cli_print_line(stdout, ref.id[0] ? "no GPUs kept for " : "no GPUs kept", ref.id);
	} else {
		for (size_t i = 0; i < n; i++) {
			char seen[32];
			ng_format_time(gpus[i].last_seen, seen);
			char line[600];
			snprintf(line, sizeof line, "%-24s %-10s %-40s minor %-3lld last seen %s", nodes[i],
			         gpus[i].bus, gpus[i].uuid, (long long)gpus[i].minor, seen);
			ng_cli_print_line(stdout, "", line);
		}
	}
	free(gpus);
	free(nodes);
	return NG_EXIT_OK;
}

static int cmd_forget(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_gpus_entry;
	struct opts o;
	int rc = parse_opts(e, argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (argc - o.next != 2)
		return ng_cmd_usage_error(e, "gpus forget takes NODE and the GPU's UUID or PCI bus");
	if (!o.reason)
		return ng_cmd_usage_error(e, "gpus forget needs --reason: why the GPU was taken out");
	if (!*o.reason || strlen(o.reason) > 255)
		return ng_cmd_usage_error(e, "--reason must be 1 to 255 characters");
	ng_store *st = ng_cli_store(cli, o.spec);
	if (!st)
		return NG_EXIT_STORE;
	ng_store_node_ref ref;
	if ((rc = node_of(st, e, argv[o.next], &ref)) != 0)
		return rc;
	ng_ctx ctx = {.policy = cli->policy, .store = st, .store_spec = o.spec, .actor = ng_actor()};
	ng_gpu_forgotten f;
	ng_err err = {0};
	rc = ng_gpu_forget(&ctx, ref.id, argv[o.next + 1], o.reason, &f, &err);
	if (rc < 0)
		return err.code == NG_ERR_USAGE ? ng_cmd_usage_error(e, "%s", err.msg)
		                                : ng_cli_store_error(e, &err);
	if (o.json) {
		cJSON *doc = ng_gpu_forgotten_json(&f, ref.name);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		char line[900];
		snprintf(line, sizeof line, "forgot GPU %s at %s of node %s%s%s%s: %s (audited as gpu.forget)",
		         f.gpu.uuid, f.gpu.bus, f.node, ref.name[0] ? " (" : "", ref.name,
		         ref.name[0] ? ")" : "", f.reason);
		ng_cli_print_line(stdout, "", line);
	}
	return NG_EXIT_OK;
}

static const struct ng_subcmd subcommands[] = {
	{"list", cmd_list},
	{"forget", cmd_forget},
};

static int exec_gpus(struct ng_cli *cli, int argc, char **argv)
{
	return ng_cmd_dispatch(&ng_cmd_gpus_entry, subcommands,
	                       sizeof subcommands / sizeof subcommands[0], cli, argc, argv);
}
