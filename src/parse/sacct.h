/* Slurm job accounting as `sacct` prints it with
 *
 *   sacct --allusers --allocations --parsable2 --noheader
 *         --format=JobID,NodeList,AllocTRES,Start,End,State,ExitCode
 *
 * one job allocation a line, fields separated by '|'. Pure: text in, jobs
 * out. Node lists are Slurm host lists ("gpu-[001-004,009]") and are
 * expanded; times are read as UTC (run sacct with TZ=UTC: it prints local
 * time). A line that does not read cleanly is counted and named, never
 * guessed at: a job with an unreadable time has no hours, rather than wrong
 * ones. Job steps ("123.batch", "123.0") are skipped: the allocation line
 * already covers their nodes and time. */
#ifndef NODEGATE_PARSE_SACCT_H
#define NODEGATE_PARSE_SACCT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Host names one job line may expand to: a larger list is refused as a bad
 * line (no real allocation is that large; a hostile one would eat memory). */
#define NG_SACCT_MAX_NODES 65536

typedef struct {
	char id[64];      /* JobID as printed: 12345, 12345_7 (array), 12345+0 (het) */
	size_t first_name; /* index of its first host name in ng_sacct.name_at */
	size_t n_nodes;
	int64_t gpus;     /* GPUs of the whole allocation (AllocTRES gres/gpu); 0 when none */
	int64_t start, end; /* unix seconds, UTC; 0 when sacct says Unknown or None */
	char state[24];   /* the first word: COMPLETED, FAILED, CANCELLED, NODE_FAIL, ... */
	int exit_code, exit_signal; /* ExitCode "code:signal"; -1 when unreadable */
} ng_sacct_job;

typedef struct {
	ng_sacct_job *jobs;
	size_t n, cap;
	char *names; /* expanded host names, each NUL-terminated, in job order */
	size_t names_len, names_cap;
	/* Where each name starts in names, in the same order: the k-th name of
	 * a job is names + name_at[first_name + k], in constant time. */
	size_t *name_at;
	size_t n_names, name_at_cap;
	size_t lines;      /* non-empty lines read */
	size_t steps;      /* job-step lines skipped */
	size_t bad;        /* lines refused */
	size_t first_bad;  /* 1-based line number of the first, 0 when none */
	char bad_why[160]; /* why it was refused */
} ng_sacct;

/* Parses the whole text. -1 only when out of memory (err set); bad lines
 * are counted in out->bad. Free with ng_sacct_free, also after -1. */
int ng_sacct_parse(const char *text, size_t len, ng_sacct *out, ng_err *err);
void ng_sacct_free(ng_sacct *s);
/* The text's jobs as JSON: {"jobs": [{id, nodes, gpus, start, end, state,
 * exit_code, exit_signal}], "lines", "steps_skipped", "lines_refused", and
 * the first refused line and why}. 0 every line read, 1 some line refused,
 * -1 (err set, *out untouched) out of memory. */
int ng_sacct_json(const char *text, size_t len, cJSON **out, ng_err *err);

/* The k-th host name of a job (k < j->n_nodes), in constant time: callers
 * walk every name of every job, and a walk from the first name would make
 * that quadratic in the size of one host list. */
const char *ng_sacct_node(const ng_sacct *s, const ng_sacct_job *j, size_t k);

/* Expands one Slurm host list ("a[1-3,07],b", "r[1-2]-n[01-02]") calling fn
 * for each name (NUL-terminated, valid only during the call). Returns the
 * count, or -1 when the list is malformed or would exceed max names, or -2
 * when fn returned non-zero (which stops it). */
long ng_hostlist_expand(const char *list, size_t len, size_t max,
                        int (*fn)(const char *name, size_t len, void *arg), void *arg);

#endif
