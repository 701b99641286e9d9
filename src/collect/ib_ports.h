/* The fabric evidence of one node: every InfiniBand/RoCE port's state, rate
 * and error counters, read from ROOT/sys/class/infiniband/HCA/ports/N.
 *
 * ROOT is "/" on a node; tests and the stand-in fleet hand in a directory
 * laid out the same way. A file that cannot be read or parsed is listed
 * under the port's "unreadable", never read as 0. */
#ifndef NODEGATE_COLLECT_IB_PORTS_H
#define NODEGATE_COLLECT_IB_PORTS_H

#include <cjson/cJSON.h>

#include "core/error.h"

/* {"root": ..., "ports": [{"hca", "port", "state", "state_code", "phys_state",
 * "rate_gbps", "rate", "link_layer", "counters": {name: n}, "unreadable": [...]}]}
 * sorted by HCA and port; "ports" is empty (with "note") when the host has no
 * HCA. NULL with err only when out of memory. */
cJSON *ng_ib_ports_read(const char *root, ng_err *err);

#endif
