/* `nodegate npd`'s decision (cli/cmd_npd.c runs the health check and prints
 * the answer): node-problem-detector's custom plugin protocol, exit 0 OK,
 * 1 a problem, 2 unknown, and the problem kept between invocations so that a
 * monitoring failure never clears a problem already found
 * (docs/kubernetes.md). */
#ifndef NODEGATE_FLOW_NPD_H
#define NODEGATE_FLOW_NPD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

enum { NG_NPD_OK = 0, NG_NPD_PROBLEM = 1, NG_NPD_UNKNOWN = 2 };

/* Where the last problem is kept between invocations: /run is emptied at a
 * reboot, and a reboot is when a problem may really have gone. */
#define NG_NPD_STATE_DEFAULT "/run/nodegate/npd-problem"

/* The state file: given (--state), else the default on a node reading the
 * real NVML; a stand-in library (library, or $NODEGATE_NVML_LIBRARY: tests,
 * scenarios) keeps none unless told. NULL: none (none set: --no-state). */
const char *ng_npd_state_path(const char *given, bool none, const char *library);

/* The problem kept from an earlier invocation, or "" when none (or no path). */
void ng_npd_state_read(const char *path, char *out, size_t cap);

/* The answer to node-problem-detector from the health check's `--json`
 * result (doc, NULL when it gave none), the check's exit status and the
 * problem kept earlier: the status (NG_NPD_*) and its one line in msg. A
 * measured answer keeps its problem in path, or forgets it, through the safe
 * writer; failing to is not the node's fault and changes no answer. */
int ng_npd_decide(const cJSON *doc, int check_rc, const char *path, const char *kept, char *msg,
                  size_t cap);

#endif
