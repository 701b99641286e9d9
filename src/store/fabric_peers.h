/* The fabric tests' reads of the store: known-good reference peers for a
 * paired test (nodes of the class whose last admission admitted them: not
 * admitted-warn, not held, no open quarantine case; newest first), and the
 * accepted runs a topology's baseline is built from. */
#ifndef NODEGATE_STORE_FABRIC_PEERS_H
#define NODEGATE_STORE_FABRIC_PEERS_H

#include <stddef.h>

#include "store/store.h"

/* Up to cap node names (malloc'd, the caller frees each) other than
 * exclude; class_key NULL: the class of exclude's own last state. Returns
 * how many, or -1 with err. */
int ng_store_fabric_peers(ng_store *st, const char *class_key, const char *exclude, char **out,
                          size_t cap, ng_err *err);

/* The accepted records of one fabric topology (class_key, metric) taken at
 * or after since and after the class's last retirement, as
 * fn(body, samples, n_samples, taken_at, arg) per record (views valid only
 * during the call; fn returns non-zero to stop with an out-of-memory
 * error). The fabric baseline reads its test's node set from the body. */
int ng_store_fabric_runs(ng_store *st, const char *class_key, const char *metric, int64_t since,
                         int (*fn)(const char *body, const double *samples, size_t n,
                                   int64_t taken_at, void *arg),
                         void *arg, ng_err *err);

#endif
