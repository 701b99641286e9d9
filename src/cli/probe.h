/* The probe kinds behind `nodegate probe KIND`: each kind is one
 * src/cli/probe_<kind>.c (its options and output, through ng_emit_records)
 * over one src/collect/probe_<kind>.c (the measurement). */
#ifndef NODEGATE_CLI_PROBE_H
#define NODEGATE_CLI_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cmd.h"
#include "collect/probe_gpu_common.h"

struct ng_probe_kind {
	const char *name;
	const char *usage;
	const char *summary;
	const char *help;
	/* argv[0] is the kind's name; options follow. Returns the exit status. */
	int (*main)(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);
};

/* probe_common.c: what every probe's command line shares. */

/* The options every probe takes for ng_emit_records, for a getopt_long table. */
#define NG_PROBE_EMIT_LONGOPTS                                   \
	{"baseline", required_argument, NULL, 'b'},               \
	{"cohort-drops", required_argument, NULL, 'C'},           \
	{"explain", no_argument, NULL, 'e'},                      \
	{"json", no_argument, NULL, 'j'},                         \
	{"out", required_argument, NULL, 'o'},                    \
	{"help", no_argument, NULL, 'h'}
#define NG_PROBE_EMIT_SHORTOPTS "b:ejo:h"

/* Prints the message and the usage line; returns NG_EXIT_USAGE. */
int ng_probe_usage(const struct ng_probe_kind *kind, const char *msg, const char *arg);
void ng_probe_help(const struct ng_probe_kind *kind);
/* Seconds, more than 0 and at most an hour. */
int ng_probe_seconds(const char *s, double *out);
/* A thread count: a whole number, 1 to 4096. */
int ng_probe_threads(const char *s, unsigned *out);
/* Bytes with binary suffixes: "4G", "512M", "4KiB", "4096". */
int ng_probe_bytes(const char *s, uint64_t *out);
/* Takes c if it is one of NG_PROBE_EMIT_LONGOPTS (but help); false if not. */
bool ng_probe_emit_option(struct ng_emit_opts *e, int c, char *arg);
/* Runs getopt_long over a probe's argv: --help prints help, an unknown option
 * is a usage error, the emit options fill *emit, and every other option goes
 * to one(kind, args, c), which returns -1 to go on or an exit status. A stray
 * argument is a usage error. Returns -1 to go on, else the exit status. */
struct option;
int ng_probe_getopt(const struct ng_probe_kind *kind, int argc, char **argv, const char *shortopts,
                    const struct option *longopts,
                    int (*one)(const struct ng_probe_kind *kind, void *args, int c), void *args,
                    struct ng_emit_opts *emit);
/* Takes --duration (c 'd') into *duration and --interval (c 'i') into
 * *interval, at least min_interval seconds, noting which was given. Returns
 * -2 when c is neither, -1 when taken, else the exit status of a usage
 * error. */
int ng_probe_timing_option(const struct ng_probe_kind *kind, int c, const char *arg,
                           double min_interval, double *duration, double *interval,
                           bool *have_duration, bool *have_interval);
/* Settles a probe's duration and interval: --quick's short defaults for what
 * was not given, an interval shortened to a quarter of a --duration given
 * alone, and a usage error when the interval is still the longer. Returns -1
 * to go on, else the exit status. */
int ng_probe_timing(const struct ng_probe_kind *kind, bool quick, bool have_duration,
                    bool have_interval, double quick_duration, double quick_interval,
                    double *duration, double *interval);
/* The checks on those options that need no measurement: run before measuring. */
int ng_probe_check_emit(const struct ng_probe_kind *kind, const struct ng_emit_opts *e);
/* After measuring: names the tool and argv in every record, says on stderr
 * what was not measured, stamps node identity and class, settles unmeasured
 * records, and shows, keeps and judges them (ng_emit_records). Frees records.
 * Returns the exit status. */
int ng_probe_finish(struct ng_cli *cli, const struct ng_probe_kind *kind, cJSON *records,
                    int argc, char **argv, const struct ng_emit_opts *e);

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
