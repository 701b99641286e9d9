/* nodegate parse: what a tool printed, as nodegate records. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/parse_readers.h"
#include "parse/parse.h"

static int exec_parse(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt parse_opts[] = {
	NG_OPT_JSON("JSON (the default)"),
	{"table", 't', NULL, "a readable view instead of JSON"},
	{"exit-status", 'x', "N", "how the tool exited, when known (dcgmi's exit codes\n"
	 "205, 226, 217, 204, 203 carry meaning)"},
	{"signal", 's', "N", "the tool was killed by signal N"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_parse_entry = {
	.name = "parse",
	.usage = "[--json | --table] [--exit-status N | --signal N] TOOL FILE",
	.summary = "Read a tool's saved output into records (JSON).",
	.help =
	"TOOL is one of: nccl-tests, dcgmi, perftest, nvbandwidth (measurement\n"
	"records, docs/record.md), or nvidia-smi (a saved nvidia-smi -q, read into\n"
	"the GPU snapshot epilog and health judge), xid (kernel log text: its Xid\n"
	"lines) or sacct (sacct --parsable2 job accounting). FILE \"-\" reads\n"
	"standard input. Launcher prefixes (srun -l, mpirun --tag-output, kubectl\n"
	"--prefix, ts and journald timestamps) are read through (docs/parsers.md).\n",
	.opts = parse_opts,
	.help_tail =
	"Anything the parser could not read becomes a record with no samples and a\n"
	"\"reason\", never a number. Exit status: 0 when every record holds a\n"
	"measurement (nvidia-smi: a dump that reached NVML; xid: always; sacct:\n"
	"every line read), 1 when some record holds none (or some sacct line was\n"
	"refused), 2 on usage or input errors (a file that is no nvidia-smi -q).\n",
	.exec = exec_parse,
};

/* "nccl-tests, dcgmi, ..., sacct": every TOOL, from the tables themselves. */
static void tool_list(char *buf, size_t cap)
{
	size_t n, m, used = 0;
	const struct ng_parser *p = ng_parser_table(&n);
	const struct ng_parse_reader *r = ng_parse_reader_table(&m);
	buf[0] = '\0';
	for (size_t i = 0; i < n + m && used < cap; i++) {
		int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", i < n ? p[i].tool : r[i - n].tool);
		used += w > 0 ? (size_t)w : 0;
	}
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end || errno || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static int print_records(cJSON *records, bool table)
{
	int rc = NG_EXIT_OK;
	for (const cJSON *r = records->child; r; r = r->next)
		if (!ng_record_measured(r))
			rc = NG_EXIT_NOT_ADMISSIBLE;
	if (table) {
		ng_print_record_table(stdout, records);
	} else {
		char *s = cJSON_Print(records);
		if (s)
			printf("%s\n", s);
		free(s);
	}
	return rc;
}

static int exec_parse(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	bool table = false, json = false;
	ng_run_status st = NG_RUN_STATUS_UNKNOWN;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_parse_entry, argc, argv);
	op.in_order = true;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'j': json = true; break;
		case 't': table = true; break;
		case 'x':
			if (!parse_int(op.arg, 0, 255, &st.exit_status))
				return ng_cmd_usage_error(&ng_cmd_parse_entry, "--exit-status takes 0 to 255");
			break;
		case 's':
			if (!parse_int(op.arg, 1, 64, &st.signal))
				return ng_cmd_usage_error(&ng_cmd_parse_entry, "--signal takes 1 to 64");
			st.exit_status = -1;
			break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (json && table)
		return ng_cmd_usage_error(&ng_cmd_parse_entry, "--json and --table are two views of one output: choose one");
	if (argc - optind != 2)
		return ng_cmd_usage_error(&ng_cmd_parse_entry, "name a TOOL and a FILE");
	const struct ng_parser *p = ng_parser_find(argv[optind]);
	const struct ng_parse_reader *reader = p ? NULL : ng_parse_reader_find(argv[optind]);
	if (!p && !reader) {
		char tools[256];
		tool_list(tools, sizeof tools);
		return ng_cmd_usage_error(&ng_cmd_parse_entry, "unknown tool \"%s\" (%s)", argv[optind], tools);
	}
	if (reader && (st.exit_status >= 0 || st.signal > 0))
		return ng_cmd_usage_error(&ng_cmd_parse_entry, "--exit-status and --signal are for the tools nodegate runs, "
		                                               "not for %s", reader->tool);
	ng_err err;
	size_t len;
	char *text = ng_read_file(argv[optind + 1], &len, &err);
	if (!text) {
		fprintf(stderr, "nodegate parse: %s\n", err.msg);
		return ng_exit_for(&err, NG_ERR_INPUT);
	}
	if (reader) {
		cJSON *doc = NULL;
		int rc = reader->read(text, len, &doc, &err);
		free(text);
		if (!doc) {
			fprintf(stderr, "nodegate parse: %s: %s\n", reader->tool, err.msg);
			return NG_EXIT_USAGE;
		}
		if (table) {
			reader->table(stdout, doc);
		} else {
			char *s = cJSON_Print(doc);
			if (s)
				printf("%s\n", s);
			free(s);
		}
		cJSON_Delete(doc);
		return rc;
	}
	cJSON *records = p->parse(text, len, st, &err);
	free(text);
	if (!records) {
		fprintf(stderr, "nodegate parse: %s: %s\n", p->tool, err.msg);
		return NG_EXIT_USAGE;
	}
	int rc = print_records(records, table);
	cJSON_Delete(records);
	return rc;
}
