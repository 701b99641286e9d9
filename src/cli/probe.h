/* The probe kinds behind `nodegate probe KIND`: each kind is one
 * src/cli/probe_<kind>.c (its options and output, through ng_emit_records)
 * over one src/collect/probe_<kind>.c (the measurement). */
#ifndef NODEGATE_CLI_PROBE_H
#define NODEGATE_CLI_PROBE_H

#include "cli/cmd.h"

struct ng_probe_kind {
	const char *name;
	const char *usage;
	const char *summary;
	const char *help;
	/* argv[0] is the kind's name; options follow. Returns the exit status. */
	int (*main)(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);
};

extern const struct ng_probe_kind ng_probe_storage;
extern const struct ng_probe_kind ng_probe_cpu;
extern const struct ng_probe_kind ng_probe_hostmem;

#endif
