/* nodegate ingest: records from files into the store, one transaction per file. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/ingest.h"

static int exec_ingest(struct ng_cli *cli, int argc, char **argv);

enum { OPT_NOT_IDLE = 256 };

static const struct ng_opt ingest_opts[] = {
	NG_OPT_STORE,
	{"accepted", 'a', NULL, "the runs admitted their nodes: baselines are built from\n"
	 "accepted runs of idle nodes only"},
	{"not-idle", OPT_NOT_IDLE, NULL, "the nodes were running other work when measured: such runs\n"
	 "never make a baseline, accepted or not"},
	{"run-id", 'r', "ID", "the run or import batch the records belong to (default: a\n"
	 "fresh id, one per invocation)"},
	{"at", 't', "TIME", "when the records were taken: 2026-11-30, 2026-11-30T05:00Z,\n"
	 "@UNIXSECONDS (default: now; never in the future)"},
	NG_OPT_JSON("{\"stored\": [{\"file\", \"records\", \"run_id\", \"ids\"}],\n"
	 " \"failed\": [{\"file\", \"error\"}]}"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_ingest_entry = {
	.name = "ingest",
	.usage = "[--store S] [--accepted] [--not-idle] [--run-id ID] [--at TIME] [--json] FILE...",
	.summary = "Store measurement records, e.g. a fleet's history to build baselines from.",
	.help = "",
	.opts = ingest_opts,
	.help_tail =
	"A FILE holds a JSON array of records, one record object, or JSON Lines (one\n"
	"record per line); \"-\" reads standard input. Each record needs its node,\n"
	"class, metric and domain (a registered metric implies its domain and unit).\n"
	"Baselines are kept per (class, software identity, metric): records without\n"
	"\"software\" make baselines of their own, apart from those `nodegate admit`\n"
	"uses for nodes whose records carry it (as `run` and `probe` records do).\n"
	"Each file is stored in one transaction: a file with any bad record stores\n"
	"nothing, and the other files are still read. A record is bad when a sample\n"
	"is not a finite number greater than 0 (\"240\", null, 1e400), \"wrong\" is\n"
	"negative or not a whole number, its schema is not nodegate/record/1, or a\n"
	"key is given twice; the message names the record and the field.\n"
	"\n"
	"Importing history to build a first baseline:\n"
	"  nodegate ingest --accepted --at 2026-11-28 fleet-nccl.jsonl\n"
	"  nodegate baseline build\n"
	"\n"
	"Exit status: 0 every file stored; 2 a file could not be read or holds a bad\n"
	"record (nothing from it was stored); 3 the store could not be opened or written.\n",
	.exec = exec_ingest,
	.needs = NG_CMD_NEEDS_STORE,
};

/* What a file of the batch came to, said as it is done. */
struct said {
	ng_store *st;
	bool json, accepted;
	const char *run_id;
	int rc; /* the worst status so far */
};

static void say_file(void *arg, const char *name, const ng_ingested *got, const ng_err *err)
{
	struct said *s = arg;
	if (!got) {
		if (err->code == NG_ERR_STORE)
			fprintf(stderr, "nodegate ingest: store %s: %s: nothing from %s was stored\n",
			        ng_store_where(s->st), err->msg, name);
		else
			fprintf(stderr, "nodegate ingest: %s: nothing from %s was stored\n", err->msg,
			        name);
		/* A file that cannot be read (2) and a store that fails (3): the worse. */
		int frc = ng_exit_for(err, NG_ERR_INPUT);
		if (frc > s->rc)
			s->rc = frc;
		return;
	}
	size_t n = got->n;
	if (!s->json)
		printf("stored %zu record%s from %s (run %s)\n", n, n == 1 ? "" : "s", name, s->run_id);
	if (s->accepted && got->bare)
		fprintf(stderr,
		        "nodegate ingest: note: %zu of %zu records from %s carry no software "
		        "identity: their baselines are kept apart from those of nodes that "
		        "have one, which is what `nodegate admit` judges against\n",
		        got->bare, n, name);
}

static int exec_ingest(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_ingest_entry;
	const char *spec = NULL, *run_arg = NULL, *at_arg = NULL;
	bool accepted = false, idle = true, json = false;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_ingest_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 's': spec = op.arg; break;
		case 'a': accepted = true; break;
		case OPT_NOT_IDLE: idle = false; break;
		case 'r': run_arg = op.arg; break;
		case 't': at_arg = op.arg; break;
		case 'j': json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind == argc)
		return ng_cmd_usage_error(e, "name at least one FILE of records (\"-\" for standard "
		                             "input)");
	int stdin_uses = 0;
	for (int i = optind; i < argc; i++)
		stdin_uses += strcmp(argv[i], "-") == 0;
	if (stdin_uses > 1)
		return ng_cmd_usage_error(e, "standard input (\"-\") can be read only once");

	int64_t now = ng_now(), at = now;
	if (at_arg) {
		if (ng_parse_time(at_arg, now, &at) < 0)
			return ng_cmd_usage_error(e, "--at \"%s\" is not a time: 2026-11-30, "
			                             "2026-11-30T05:00:00Z or @UNIXSECONDS (UTC)",
			                          at_arg);
		if (at > now) {
			char t[32];
			ng_format_time(at, t);
			return ng_cmd_usage_error(e, "--at %s is in the future: records are stored with "
			                             "the time they were taken",
			                          t);
		}
	}
	char run_id[80];
	if (run_arg) {
		if (!*run_arg || strlen(run_arg) >= sizeof run_id)
			return ng_cmd_usage_error(e, "--run-id must be 1 to %zu characters",
			                          sizeof run_id - 1);
		snprintf(run_id, sizeof run_id, "%s", run_arg);
	} else {
		ng_run_id(run_id, "ingest", now);
	}

	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, spec, &ctx))
		return NG_EXIT_STORE;
	ng_store_ingest how = {.run_id = run_id, .taken_at = at, .idle = idle, .accepted = accepted,
	                       .actor = ng_actor()};
	struct said said = {.st = ctx.store, .json = json, .accepted = accepted, .run_id = run_id,
	                    .rc = NG_EXIT_OK};
	cJSON *doc = NULL;
	ng_ingest_files(&ctx, argv + optind, (size_t)(argc - optind), &how, say_file, &said,
	                json ? &doc : NULL);
	if (json) {
		ng_print_json(doc);
		cJSON_Delete(doc);
	}
	return said.rc;
}
