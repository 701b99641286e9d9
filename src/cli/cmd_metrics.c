/* nodegate metrics: the store as Prometheus metrics, for node_exporter's
 * textfile collector (src/land/metrics.c, docs/metrics.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "core/atomic_file.h"
#include "land/metrics.h"

static int exec_metrics(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_metrics_entry = {
	.name = "metrics",
	.usage = "[--textfile DIR] [--store S]",
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
	"Options:\n"
	"  -t, --textfile DIR  write DIR/nodegate.prom (DIR must exist)\n"
	"  -s, --store S       the store (else the global --store, $NODEGATE_STORE, default)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 written; 2 usage error (or DIR is not a directory); 3 the store\n"
	"could not be opened or read, or the file could not be written (the old file, if\n"
	"any, is left whole).\n",
	.exec = exec_metrics,
};

static int exec_metrics(struct ng_cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"textfile", required_argument, NULL, 't'},
		{"store", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const struct ng_cmd_entry *e = &ng_cmd_metrics_entry;
	const char *dir = NULL, *spec = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "t:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': ng_cmd_print_help(e, stdout); return NG_EXIT_OK;
		case 't': dir = optarg; break;
		case 's': spec = optarg; break;
		default: return ng_cmd_usage_error(e, "unknown option (see --help)");
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[optind]);
	struct stat sb;
	if (dir && (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)))
		return ng_cmd_usage_error(e, "--textfile %s is not a directory", dir);
	ng_store *st = ng_cli_open_existing_store(cli, e, spec);
	if (!st)
		return NG_EXIT_STORE;
	ng_err err = {{0}};
	ng_strbuf text = {0};
	int rc = ng_metrics_render(st, ng_cli_now(), &text, &err);
	ng_store_close(st);
	if (rc < 0) {
		ng_strbuf_free(&text);
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
