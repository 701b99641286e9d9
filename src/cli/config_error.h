/* A broken configuration never drains a node (flow/config_guard.h says why
 * and decides which invocations are guarded): the command line's side, the
 * one loud line and npd's answer. */
#ifndef NODEGATE_CLI_CONFIG_ERROR_H
#define NODEGATE_CLI_CONFIG_ERROR_H

#include "cli/cmd.h"
#include "flow/config_guard.h"

/* Reports a configuration error for a guarded invocation: one line on
 * standard error (control characters escaped), a row in the store within a
 * second or two when one is named, and for npd its one-line answer on
 * standard output. Returns the exit status: 0, or 2 for npd. */
int ng_config_error(const ng_config_guard *g, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
