/* nodegate parse: what a tool printed, as nodegate records. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "parse/parse.h"

static int exec_parse(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_parse_entry = {
	.name = "parse",
	.usage = "[--table] [--exit-status N | --signal N] TOOL FILE",
	.summary = "Read a tool's saved output into records (JSON).",
	.help =
	"TOOL is one of: nccl-tests, dcgmi, perftest, nvbandwidth. FILE \"-\" reads\n"
	"standard input. Prints a JSON array of records (docs/record.md).\n"
	"\n"
	"Options:\n"
	"  -t, --table          a readable view instead of JSON\n"
	"  -x, --exit-status N  how the tool exited, when known (dcgmi's exit codes\n"
	"                       205, 226, 217, 204, 203 carry meaning)\n"
	"  -s, --signal N       the tool was killed by signal N\n"
	"  -h, --help           this text\n"
	"\n"
	"Anything the parser could not read becomes a record with no samples and a\n"
	"\"reason\", never a number. Exit status: 0 when every record holds a\n"
	"measurement, 1 when some record holds none, 2 on usage or input errors.\n",
	.exec = exec_parse,
};

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

static int exec_parse(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	static const struct option longopts[] = {
		{"table", no_argument, NULL, 't'},
		{"exit-status", required_argument, NULL, 'x'},
		{"signal", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool table = false;
	ng_run_status st = NG_RUN_STATUS_UNKNOWN;
	int c;
	while ((c = getopt_long(argc, argv, "+tx:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': table = true; break;
		case 'x':
			if (!parse_int(optarg, 0, 255, &st.exit_status))
				return ng_cmd_usage_error(&ng_cmd_parse_entry, "--exit-status takes 0 to 255");
			break;
		case 's':
			if (!parse_int(optarg, 1, 64, &st.signal))
				return ng_cmd_usage_error(&ng_cmd_parse_entry, "--signal takes 1 to 64");
			st.exit_status = -1;
			break;
		case 'h': ng_cmd_print_help(&ng_cmd_parse_entry, stdout); return NG_EXIT_OK;
		default: return ng_cmd_usage_error(&ng_cmd_parse_entry, "unrecognised option");
		}
	}
	if (argc - optind != 2)
		return ng_cmd_usage_error(&ng_cmd_parse_entry, "name a TOOL and a FILE");
	const struct ng_parser *p = ng_parser_find(argv[optind]);
	if (!p)
		return ng_cmd_usage_error(&ng_cmd_parse_entry,
		                          "unknown tool \"%s\" (nccl-tests, dcgmi, perftest, nvbandwidth)",
		                          argv[optind]);
	ng_err err;
	size_t len;
	char *text = ng_read_file(argv[optind + 1], &len, &err);
	if (!text) {
		fprintf(stderr, "nodegate parse: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	cJSON *records = p->parse(text, len, st, &err);
	free(text);
	if (!records) {
		fprintf(stderr, "nodegate parse: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
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
	cJSON_Delete(records);
	return rc;
}
