/* What `nodegate report` reads from the store, streamed row by row so a
 * month of a 10,000-node fleet is never held as rows in memory twice.
 *
 * Each function runs one query and calls fn for each row; the row's strings
 * and samples are valid only during the call. fn returning non-zero stops
 * the walk and is returned; otherwise 0, or -1 with err set. Wrap the
 * calls in ng_store_read_begin/_end to read one consistent snapshot. */
#ifndef NODEGATE_STORE_REPORT_QUERIES_H
#define NODEGATE_STORE_REPORT_QUERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

int ng_store_read_begin(ng_store *st, ng_err *err);
void ng_store_read_end(ng_store *st);

/* One measurement run with samples (health records have none). */
typedef struct {
	const char *node, *class_key, *software, *metric, *unit;
	int64_t taken_at;
	const double *samples; /* n_samples of them, copied out of the blob */
	size_t n_samples;
} ng_report_run;

/* Runs taken at or after since, of one class when class_key is set. */
int ng_store_report_runs(ng_store *st, int64_t since, const char *class_key,
                         int (*fn)(const ng_report_run *r, void *arg), void *arg, ng_err *err);

/* Every node's current state (node_states). */
int ng_store_report_states(ng_store *st, int (*fn)(const ng_store_node_state *s, void *arg),
                           void *arg, ng_err *err);

typedef struct {
	const char *run_id, *node, *class_key, *software, *outcome, *policy;
	int64_t at;
} ng_report_decision;

/* Admission decisions taken at or after since, oldest first. */
int ng_store_report_decisions(ng_store *st, int64_t since,
                              int (*fn)(const ng_report_decision *d, void *arg), void *arg,
                              ng_err *err);

typedef struct {
	const char *node;
	int64_t taken_at;
	const char *body; /* the gpu.health record: severity, uuid, job, mode, reasons */
} ng_report_health;

/* gpu.health records taken at or after since whose body names a degraded
 * or fatal severity (the caller reads the body to be sure which). */
int ng_store_report_health_faults(ng_store *st, int64_t since,
                                  int (*fn)(const ng_report_health *h, void *arg), void *arg,
                                  ng_err *err);

/* Every stored profile (node_id, hostname and the hardware are in it). */
int ng_store_report_profiles(ng_store *st,
                             int (*fn)(const char *digest, const char *body, void *arg),
                             void *arg, ng_err *err);

/* The profile digest of the node's newest record taken at or before `at`
 * (after false), or its oldest taken at or after `at` (after true), and
 * when that record was taken. 1 found, 0 none, -1 error. */
int ng_store_report_profile_at(ng_store *st, const char *node, int64_t at, bool after,
                               char digest[65], int64_t *taken, ng_err *err);

/* A stored profile's body: 1 found, 0 none, -1 error. */
int ng_store_report_profile_body(ng_store *st, const char *digest, ng_strbuf *body, ng_err *err);

/* The policy digest each quarantine case was opened under (case_policies). */
int ng_store_report_case_policies(ng_store *st,
                                  int (*fn)(int64_t case_id, const char *policy, void *arg),
                                  void *arg, ng_err *err);

/* The first time each (class, software) was seen in a record: a software
 * change is the first record of a new identity in a class. */
int ng_store_report_software_seen(ng_store *st,
                                  int (*fn)(const char *class_key, const char *software,
                                            int64_t first, int64_t last, void *arg),
                                  void *arg, ng_err *err);

#endif
