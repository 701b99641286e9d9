/* Reading a file whole, and a JSON document from one. */
#ifndef NODEGATE_CORE_JSON_FILE_H
#define NODEGATE_CORE_JSON_FILE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "core/error.h"
#include "core/read_file.h"

/* Reads and parses a JSON file; *text keeps the source for literal checks.
 * A key given twice in one object is refused, naming it. */
cJSON *ng_load_json_file(const char *path, char **text, size_t *len, ng_err *err);

#endif
