/* Records read from files for a flow. */
#ifndef NODEGATE_FLOW_RECORDS_IN_H
#define NODEGATE_FLOW_RECORDS_IN_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "core/error.h"

/* Loads record files into one array: each file an array of records or one
 * record, each checked as `nodegate ingest` checks them. NULL with err (an
 * NG_ERR_INPUT failure naming the file and the record) otherwise. */
cJSON *ng_records_load_files(const char *const *files, size_t n, ng_err *err);
/* Checks records (an array of them, or one) as `nodegate ingest` checks
 * them (judge/record.h: ng_record_check_strict, a sample of 0 allowed: a
 * dead path measured is evidence); err names what and the record. */
int ng_records_check(const cJSON *doc, const char *what, ng_err *err);
/* Copies the "diag" map of the records in path (the --out of `nodegate run
 * dcgmi`) into every record that has none. */
int ng_apply_diag_file(cJSON *records, const char *path, ng_err *err);

#endif
