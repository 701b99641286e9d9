/* A job's steps as `sacct` prints them for the probation's gang comparison
 * (flow/probation.c):
 *
 *   sacct --jobs JOB --parsable2 --noheader
 *         --format=JobID,JobName,NodeList,ElapsedRaw,State
 *
 * one line per allocation and per step, fields separated by '|'. Only the
 * numbered steps ("123.0", "123.4") are kept: the allocation line, .batch,
 * .extern and .interactive say nothing of one node's share of the work.
 * Pure: text in, steps out. */
#ifndef NODEGATE_PARSE_SACCT_STEPS_H
#define NODEGATE_PARSE_SACCT_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	char id[64];      /* "123.0" */
	char name[128];   /* JobName: the step's program, as srun names it */
	char node[256];   /* its one node; "" when the step spanned several */
	int64_t elapsed_s; /* ElapsedRaw */
	char state[24];   /* the first word: COMPLETED, FAILED, ... */
} ng_sacct_step;

/* Reads up to cap steps; *bad counts lines that did not read cleanly
 * (allocation and batch lines are not bad, only passed over). */
size_t ng_sacct_steps_parse(const char *text, size_t len, ng_sacct_step *out, size_t cap,
                            size_t *bad);

/* For a node in a gang: the ratio of node's elapsed time to the median of
 * its gang peers' for the step name where that ratio is largest, over the
 * COMPLETED single-node steps whose name ran both on node and on at least
 * min_peers other nodes. *peers and *own (may be NULL) get that step's
 * peer count and node's elapsed, *median the peers' median, and step
 * (cap bytes) its name. Returns the ratio, or -1 when no step qualifies. */
double ng_sacct_gang_ratio(const ng_sacct_step *s, size_t n, const char *node, size_t min_peers,
                           size_t *peers, double *own, double *median, char *step, size_t cap);

#endif
