#include "parse/parse.h"

#include <string.h>

static const struct ng_parser parsers[] = {
	{"nccl-tests", ng_parse_nccl_tests,
	 "all_reduce_perf and the other collectives: text (pre-2.13 to 2.19) and -J JSON"},
	{"dcgmi", ng_parse_dcgmi, "dcgmi diag: -j JSON (DCGM 3.x, 4.x) and the text table"},
	{"perftest", ng_parse_perftest, "ib_write_bw, ib_read_bw, ib_send_bw: single sizes and -a sweeps"},
	{"nvbandwidth", ng_parse_nvbandwidth, "nvbandwidth: text matrices and -j JSON"},
};

const struct ng_parser *ng_parser_table(size_t *n)
{
	*n = sizeof parsers / sizeof parsers[0];
	return parsers;
}

const struct ng_parser *ng_parser_find(const char *tool)
{
	for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++)
		if (strcmp(parsers[i].tool, tool) == 0)
			return &parsers[i];
	return NULL;
}
