/* The probe kinds behind `nodegate probe KIND`: each kind is one
 * src/cli/probe_<kind>.c (its options and output, through ng_emit_records)
 * over one src/collect/probe_<kind>.c (the measurement). */
#ifndef NODEGATE_CLI_PROBE_H
#define NODEGATE_CLI_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cmd.h"
#include "collect/probe_gpu_common.h"

/* What every probe's arguments start with: the options all probes share. */
struct ng_probe_args {
	struct ng_emit_opts emit;
	double *duration, *interval; /* the kind's own, pointed at by its defaults */
	bool quick, have_duration, have_interval;
};

/* A probe kind: its text, its option table, and the four steps ng_probe_main
 * runs it through (defaults, one option at a time, settle, measure). */
struct ng_probe_kind {
	const char *name;
	const char *usage;
	const char *summary;
	const char *help;
	const struct ng_opt *opts; /* its options, with NG_PROBE_EMIT_OPTS (cli/options.h) */
	const char *help_tail;     /* after the options in --help */
	size_t args_size;          /* its arguments: a struct whose first member is ng_probe_args */
	double min_interval;       /* the shortest --interval */
	double quick_duration, quick_interval; /* --quick's, for what was not given */
	/* Fills the arguments' defaults (the policy's values among them) and
	 * points duration and interval at the kind's own. */
	void (*defaults)(struct ng_cli *cli, void *args);
	/* Takes one of the kind's own options: -1 to go on, else the exit status. */
	int (*option)(const struct ng_probe_kind *kind, void *args, int c, const char *arg);
	/* After the options, before duration and interval are settled (may be NULL). */
	int (*settle)(const struct ng_probe_kind *kind, void *args);
	/* Measures into *records: -1 to go on, else the exit status. */
	int (*measure)(const struct ng_probe_kind *kind, void *args, cJSON **records);
};

/* probe_common.c: what every probe's command line shares. */

/* Keys of the probes' long-only options. */
enum { NG_PROBE_O_COHORT = NG_OPT_LONG, NG_PROBE_O_OWN };

/* The options every probe takes for ng_emit_records, ending its table. */
#define NG_PROBE_EMIT_OPTS                                                                   \
	{"baseline", 'b', "FILE", "judge the records with the gate against this baseline"},   \
	{"cohort-drops", NG_PROBE_O_COHORT, "L", "the cohort's drops, as for `nodegate gate`"}, \
	{"explain", 'e', NULL, "show the gate's arithmetic"},                                   \
	NG_OPT_JSON("print {\"records\": [...], \"verdicts\": [...]} as JSON"),             \
	{"out", 'o', "FILE", "also write the records there (atomically)"},                      \
	NG_OPT_HELP
#define NG_PROBE_QUICK_OPT {"quick", 'Q', NULL, "the short profile"}

/* Runs one probe: parses its options (--help, the shared ones, the timing
 * ones, then the kind's), measures, and shows, keeps and judges the records.
 * Returns the exit status. */
int ng_probe_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);
/* Prints the message and the usage line; returns NG_EXIT_USAGE. */
int ng_probe_usage(const struct ng_probe_kind *kind, const char *msg, const char *arg);
/* Seconds, more than 0 and at most an hour. */
int ng_probe_seconds(const char *s, double *out);
/* A thread count: a whole number, 1 to 4096. */
int ng_probe_threads(const char *s, unsigned *out);
/* Bytes with binary suffixes: "4G", "512M", "4KiB", "4096". */
int ng_probe_bytes(const char *s, uint64_t *out);

/* probe_gpu_common.c: what the GPU probes' command lines share. */
struct ng_gpu_loaded;
struct ng_gpu_pick;
/* --gpus LIST: GPU indexes, "0,2,4-7", into out (NG_GPU_DEVICES_MAX of
 * them), which *pick then names. Returns -1 to go on, else the exit status
 * of a usage error. */
int ng_probe_gpus_option(const struct ng_probe_kind *kind, const char *arg, int *out,
                         struct ng_gpu_pick *pick);
/* ng_probe_gpu_open, ng_probe_gpu_close: collect/probe_gpu_common.h. */

extern const struct ng_probe_kind ng_probe_storage;
extern const struct ng_probe_kind ng_probe_cpu;
extern const struct ng_probe_kind ng_probe_hostmem;
extern const struct ng_probe_kind ng_probe_gpu_compute;
extern const struct ng_probe_kind ng_probe_gpu_memory;
extern const struct ng_probe_kind ng_probe_gpu_copy;

#endif
