/* Known-good reference peers for a paired fabric test: nodes of the class
 * whose last admission admitted them (not admitted-warn, not held, no open
 * quarantine case), newest first. */
#ifndef NODEGATE_STORE_FABRIC_PEERS_H
#define NODEGATE_STORE_FABRIC_PEERS_H

#include <stddef.h>

#include "store/store.h"

/* Up to cap node names (malloc'd, the caller frees each) other than
 * exclude; class_key NULL: the class of exclude's own last state. Returns
 * how many, or -1 with err. */
int ng_store_fabric_peers(ng_store *st, const char *class_key, const char *exclude, char **out,
                          size_t cap, ng_err *err);

#endif
