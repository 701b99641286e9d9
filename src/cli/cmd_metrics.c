/* nodegate metrics: the store as Prometheus metrics, for node_exporter's
 * textfile collector (src/land/metrics.c, docs/metrics.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "cli/exit.h"
#include "core/atomic_file.h"
#include "flow/metrics.h"

static int exec_metrics(struct ng_cli *cli, int argc, char **argv);

enum { O_SCOPE = 256, O_NODE };

static const struct ng_opt metrics_opts[] = {
	{"textfile", 't', "DIR", "write DIR/nodegate.prom (DIR must exist)"},
	{"scope", O_SCOPE, "S", "all (default): everything; node: this node's GPUs and GPU\n"
	 "checks; fleet: everything but the per-GPU series"},
	{"node", O_NODE, "NAME", "the node for --scope node (default: the host name)"},
	NG_OPT_STORE,
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_metrics_entry = {
	.name = "metrics",
	.usage = "[--textfile DIR] [--store S] [--scope all|node|fleet] [--node NAME]",
	.summary = "Write the store's state as Prometheus metrics (node_exporter textfile).",
	.help =
	"Reads the store and writes its state in Prometheus text format: each node's\n"
	"admission outcome and last run, open quarantine cases, current class baselines,\n"
	"each node's last measurement against its baseline, gate verdict counts, open\n"
	"fleet-regression events (the circuit breaker) and whether the audit chain\n"
	"verifies. With --textfile the text replaces DIR/nodegate.prom atomically, for\n"
	"node_exporter's --collector.textfile.directory; run it from cron or a timer.\n"
	"Without it the text goes to standard output. The metrics are in\n"
	"docs/metrics.md.\n"
	"\n"
	"Each GPU's last epilog, prolog and health severity and signals carry\n"
	"dcgm-exporter's labels (gpu, UUID, pci_bus_id, Hostname). With one store\n"
	"shared by the fleet, run --scope node on every node and --scope fleet on one\n"
	"host: never all from every host, or each series is exported once per node.\n",
	.opts = metrics_opts,
	.help_tail =
	"Exit status: 0 written; 2 usage error (or DIR is not a directory); 3 the store\n"
	"could not be opened or read, or the file could not be written (the old file, if\n"
	"any, is left whole).\n",
	.exec = exec_metrics,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

static int exec_metrics(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_metrics_entry;
	const char *dir = NULL, *spec = NULL, *node = NULL;
	ng_metrics_scope scope = NG_METRICS_ALL;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_metrics_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 't': dir = op.arg; break;
		case 's': spec = op.arg; break;
		case O_NODE: node = op.arg; break;
		case O_SCOPE:
			if (strcmp(op.arg, "all") == 0)
				scope = NG_METRICS_ALL;
			else if (strcmp(op.arg, "node") == 0)
				scope = NG_METRICS_NODE;
			else if (strcmp(op.arg, "fleet") == 0)
				scope = NG_METRICS_FLEET;
			else
				return ng_cmd_usage_error(e, "--scope takes all, node or fleet");
			break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[optind]);
	if (node && scope != NG_METRICS_NODE)
		return ng_cmd_usage_error(e, "--node is for --scope node");
	struct stat sb;
	if (dir && (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)))
		return ng_cmd_usage_error(e, "--textfile %s is not a directory", dir);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err = {0};
	ng_strbuf text = {0};
	int rc = ng_flow_metrics(&ctx, scope, node, &text, &err);
	if (rc < 0) {
		ng_strbuf_free(&text);
		if (err.code == NG_ERR_USAGE)
			return ng_cmd_usage_error(e, "--node %s", err.msg);
		return ng_cli_store_error(e, &err);
	}
	/* What went wrong writing it is the path's, not the store's. */
	if (dir) {
		ng_strbuf path = {0};
		ng_strbuf_printf(&path, "%s/%s", dir, NG_METRICS_FILE);
		rc = path.oom ? ng_fail(&err, "out of memory")
		              : ng_write_file_atomic(path.s, text.s ? text.s : "", text.len, &err);
		ng_strbuf_free(&path);
	} else if (fwrite(text.s ? text.s : "", 1, text.len, stdout) != text.len ||
	           fflush(stdout) != 0) {
		rc = ng_fail(&err, "standard output: write failed");
	}
	ng_strbuf_free(&text);
	if (rc < 0) {
		fprintf(stderr, "nodegate %s: %s\n", e->name, err.msg);
		return NG_EXIT_USAGE;
	}
	return NG_EXIT_OK;
}
