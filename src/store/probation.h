/* Probation after a release, the evidence of a failing domain, and the
 * runtimes of the jobs the epilog saw (schema 11).
 *
 * A release closes the case and puts the node on probation: node_states
 * says "probation", and a probations row stays open until a watched job ends
 * it. A clean job makes the node admitted; a failing one opens the same case
 * again, counting a retry. Every change is written with its audit entry. */
#ifndef NODEGATE_STORE_PROBATION_H
#define NODEGATE_STORE_PROBATION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

typedef struct {
	int64_t id, case_id;
	char node[128];
	int64_t started_at, ended_at; /* ended_at 0: still on probation */
	char outcome[16];             /* "" while on, "passed", "failed", "superseded" */
	char job[64];                 /* the job that ended it */
	char detail[512];             /* why it ended, one sentence */
} ng_store_probation;

/* Closes the open case as ng_store_close_case does, and puts its node on
 * probation, in one transaction audited as quarantine.release (detail, a
 * JSON object's text or NULL, is added to the entry: a forced release of a
 * lemon says so there). */
int ng_store_release_to_probation(ng_store *st, int64_t case_id, int64_t at, const char *by,
                                  const char *reason, const char *detail, ng_err *err);
/* The node's probation in force: 1 found, 0 none. */
int ng_store_probation_of(ng_store *st, const char *node, ng_store_probation *out, ng_err *err);
/* The newest probation of a case (in force or ended): 1 found, 0 none. */
int ng_store_probation_of_case(ng_store *st, int64_t case_id, ng_store_probation *out,
                               ng_err *err);
/* Probations newest first; only those in force unless all (*out malloc'd). */
int ng_store_list_probations(ng_store *st, bool all, ng_store_probation **out, size_t *n,
                             ng_err *err);

typedef enum {
	NG_PROBATION_PASSED,     /* the node is admitted */
	NG_PROBATION_FAILED,     /* its case opens again, as a retry */
	NG_PROBATION_SUPERSEDED, /* a new case opened meanwhile: it speaks for the node */
} ng_probation_end;

/* Ends probation `id` (in force) by a job, with a sentence saying why;
 * audited as probation.pass, probation.fail or probation.superseded. */
int ng_store_end_probation(ng_store *st, int64_t id, ng_probation_end how, int64_t at,
                           const char *job, const char *why, ng_err *err);

/* One job as a node's epilog saw it: its name, runtime (-1 unknown) and
 * whether the epilog found the node clean. Kept per (node, job). */
int ng_store_put_job_run(ng_store *st, const char *node, const char *job, const char *job_name,
                         int64_t runtime_s, bool clean, int64_t at, ng_err *err);
/* Runtimes of the newest clean runs of job_name on nodes other than node,
 * at most cap of them, into out. */
int ng_store_job_runtimes(ng_store *st, const char *job_name, const char *node, double *out,
                          size_t cap, size_t *n, ng_err *err);

/* The evidence a domain's collector captured for a run (body: a JSON
 * object's text). */
int ng_store_put_evidence(ng_store *st, const char *node, const char *run_id,
                          const char *domain, int64_t at, const char *body, ng_err *err);
/* The run's evidence as a JSON array of {"domain", "captured_at", "evidence"},
 * in capture order (*out NULL-safe; an empty array when none). */
int ng_store_evidence_of_run(ng_store *st, const char *node, const char *run_id, cJSON **out,
                             ng_err *err);
/* The node's newest complete evidence of domain from a run other than
 * run_id (one whose collector finished: no "incomplete"), as
 * {"run_id", "captured_at", "evidence"}; *out NULL when there is none. The
 * earlier read a counter's change is measured against. */
int ng_store_previous_evidence(ng_store *st, const char *node, const char *domain,
                               const char *run_id, cJSON **out, ng_err *err);

#endif
