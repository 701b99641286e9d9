/* Parsers: what a tool printed, in; nodegate records (docs/record.md), out.
 *
 * Pure: no I/O, no clock, no globals. Each parser reads every format of its
 * tool that it knows, survives foreign lines anywhere, and turns anything it
 * cannot read into a record with no samples and a "reason" rather than into a
 * number. Each returns a cJSON array of records (never empty: a run that
 * printed nothing useful is still one record saying so), or NULL with err set
 * when out of memory. The caller owns the array. */
#ifndef NODEGATE_PARSE_PARSE_H
#define NODEGATE_PARSE_PARSE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "core/error.h"

/* How the tool ended, when known: the harness knows, a log file does not. */
typedef struct {
	int exit_status; /* -1 when unknown or when killed by a signal */
	int signal;      /* 0 when not killed by a signal */
} ng_run_status;

#define NG_RUN_STATUS_UNKNOWN ((ng_run_status){-1, 0})

/* text is NUL-terminated at text[len]; it may contain other NUL bytes. */
cJSON *ng_parse_nccl_tests(const char *text, size_t len, ng_run_status st, ng_err *err);
cJSON *ng_parse_dcgmi(const char *text, size_t len, ng_run_status st, ng_err *err);
cJSON *ng_parse_perftest(const char *text, size_t len, ng_run_status st, ng_err *err);
cJSON *ng_parse_nvbandwidth(const char *text, size_t len, ng_run_status st, ng_err *err);

struct ng_parser {
	const char *tool; /* as named on the command line */
	cJSON *(*parse)(const char *text, size_t len, ng_run_status st, ng_err *err);
	const char *reads; /* one line: what it reads */
};

/* The parsers, by tool name; NULL when unknown. */
const struct ng_parser *ng_parser_find(const char *tool);
const struct ng_parser *ng_parser_table(size_t *n);

#endif
