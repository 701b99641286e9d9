/* Reading a whole file into memory, for every layer that reads one it was
 * given (a policy, a saved tool output, a scenario). */
#ifndef NODEGATE_CORE_READ_FILE_H
#define NODEGATE_CORE_READ_FILE_H

#include <stddef.h>

#include "core/error.h"

/* Reads a whole file ("-" is standard input), NUL-terminated; *len is its
 * length. NULL with err set when it cannot be opened or read. */
char *ng_read_file(const char *path, size_t *len, ng_err *err);

#endif
