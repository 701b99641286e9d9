/* GPU-hours lost, attributed: to node faults (a job that failed, was
 * requeued or was cancelled on a node found faulty during it or soon after)
 * apart from job failures (a job that failed on nodes with no such finding).
 * The two drive different fixes: the first justifies replacement hardware,
 * the second is the job's owner's to fix. Pure: jobs and findings in,
 * tallies out. The exact rules are in docs/report.md. */
#ifndef NODEGATE_JUDGE_GPU_HOURS_H
#define NODEGATE_JUDGE_GPU_HOURS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a job ended, from Slurm's state word. */
typedef enum {
	NG_JOB_COMPLETED, /* COMPLETED */
	NG_JOB_FAILED,    /* FAILED, TIMEOUT, OUT_OF_MEMORY, DEADLINE, REQUEUED: ended unfinished */
	NG_JOB_NODE_FAIL, /* NODE_FAIL, BOOT_FAIL: Slurm itself blamed a node */
	NG_JOB_CANCELLED, /* CANCELLED: a person's choice unless a fault explains it */
	NG_JOB_OTHER,     /* RUNNING, PENDING, PREEMPTED, SUSPENDED, anything else: not counted */
} ng_job_end;

ng_job_end ng_job_end_of(const char *state);
const char *ng_job_end_name(ng_job_end e);

typedef struct {
	const char *id;      /* Slurm's job id, as the epilog keeps it (SLURM_JOB_ID) */
	const size_t *nodes; /* indexes into the caller's node table */
	size_t n_nodes;
	double gpus;         /* GPUs of the whole allocation */
	int64_t start, end;  /* unix seconds; 0 unknown */
	ng_job_end how;
} ng_gh_job;

typedef enum {
	NG_FINDING_EPILOG,     /* an epilog or prolog found a GPU degraded or fatal */
	NG_FINDING_HEALTH,     /* a health check found one */
	NG_FINDING_QUARANTINE, /* admission quarantined the node */
} ng_finding_kind;

typedef struct {
	size_t node;
	int64_t at;
	ng_finding_kind kind;
	const char *job; /* the job whose epilog found it; NULL or "" when none */
} ng_gh_finding;

typedef struct {
	double node_fault_hours;  /* lost to node faults, whole jobs, on the faulty nodes */
	double job_failure_hours; /* lost to job failures, each node its share */
	double suspect_hours;     /* completed on a GPU its own epilog found faulty: results suspect */
	double node_fault_jobs, job_failure_jobs, suspect_jobs; /* shares of jobs (a job split over nodes) */
} ng_gh_tally;

typedef struct {
	int64_t window_start, window_end; /* count jobs that ended in [start, end) */
	int64_t grace; /* a finding this long after a job's end still explains its failure */
} ng_gh_params;

typedef struct {
	size_t jobs_in_window;  /* ended in the window */
	size_t jobs_no_hours;   /* of those, no GPUs, or an unknown or backwards time */
	size_t jobs_node_fault, jobs_job_failure, jobs_suspect;
	size_t jobs_node_fault_unlocated; /* NODE_FAIL with no finding: spread over all its nodes */
} ng_gh_counts;

/* Sorts findings by node, then time: ng_gpu_hours needs them so. */
void ng_gh_sort_findings(ng_gh_finding *f, size_t n);

/* Tallies every job against the findings (sorted). per_node (n_nodes
 * entries) and total are zeroed first. -1 only when out of memory. */
int ng_gpu_hours(const ng_gh_job *jobs, size_t n_jobs, const ng_gh_finding *findings,
                 size_t n_findings, size_t n_nodes, const ng_gh_params *p, ng_gh_tally *per_node,
                 ng_gh_tally *total, ng_gh_counts *counts);

#endif
