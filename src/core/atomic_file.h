/* Writing a file so that a crash leaves either the old file or the whole new
 * one, never a torn one: write a temporary beside it, fsync, rename, fsync
 * the directory. */
#ifndef NODEGATE_CORE_ATOMIC_FILE_H
#define NODEGATE_CORE_ATOMIC_FILE_H

#include <stddef.h>

#include "core/error.h"

int ng_write_file_atomic(const char *path, const void *data, size_t len, ng_err *err);

#endif
