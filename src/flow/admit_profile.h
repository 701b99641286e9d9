/* The admission profile: which probes `nodegate admit` runs for each domain,
 * with what settings, the same on every candidate of a class. */
#ifndef NODEGATE_FLOW_ADMIT_PROFILE_H
#define NODEGATE_FLOW_ADMIT_PROFILE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "flow/ctx.h"
#include "parse/parse.h"

struct ng_admit_profile {
	bool quick;              /* the short profile: seconds per probe, not tens */
	const char *storage_dir; /* where the storage probe makes its test file */
	bool skip_compute, skip_memory, skip_storage;
	/* Fabric, when configured: a tool run through the harness (its parser
	 * and command), with the DCGM diagnostics of diag_path copied into its
	 * records, raw outputs kept in raw_dir. */
	const struct ng_parser *fabric_parser;
	char *const *fabric_argv;
	size_t fabric_argc;
	const char *fabric_diag;
	const char *raw_dir;
	double fabric_timeout_s;
};

/* Runs the profile's probes for the named domains (all of them when
 * n_domains is 0) and returns their records, each named with the probe that
 * made it, stamped with the node's identity and settled (an empty record
 * says nothing was measured). A domain with no probe on this node gives no
 * records; *missing lists the names of asked-for domains that had none.
 * NULL only when out of memory. */
cJSON *ng_admit_collect(const ng_ctx *ctx, const struct ng_admit_profile *p,
                        const char *const *domains, size_t n_domains, cJSON **missing);

/* Other runnable tasks on the node now (procs_running in /proc/stat, less
 * this one), or -1 when it cannot be read. */
long ng_admit_other_runnable(void);

#endif
