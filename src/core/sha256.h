/* SHA-256 of a buffer as 64 lowercase hex digits (nettle). */
#ifndef NODEGATE_CORE_SHA256_H
#define NODEGATE_CORE_SHA256_H

#include <stddef.h>

void ng_sha256_hex(const void *data, size_t len, char out[65]);

#endif
