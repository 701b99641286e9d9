/* The readers `nodegate parse` offers beside the record parsers
 * (parse/parse.h): their output is JSON of their own, not records. */
#ifndef NODEGATE_CLI_PARSE_READERS_H
#define NODEGATE_CLI_PARSE_READERS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "core/error.h"

struct ng_parse_reader {
	const char *tool;
	/* Fills *out; returns the exit status: NG_EXIT_OK when all was read,
	 * NG_EXIT_NOT_ADMISSIBLE when part could not be, NG_EXIT_USAGE (err
	 * set, *out NULL) when the input is not this tool's output. */
	int (*read)(const char *text, size_t len, cJSON **out, ng_err *err);
	void (*table)(FILE *f, const cJSON *doc);
	const char *reads;
};

const struct ng_parse_reader *ng_parse_reader_find(const char *tool);
const struct ng_parse_reader *ng_parse_reader_table(size_t *n);

#endif
