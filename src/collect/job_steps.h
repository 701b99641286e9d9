/* A Slurm job's steps, through sacct (parse/sacct_steps.h), for the
 * probation's comparison of a node with its gang peers. sacct is
 * $NODEGATE_SACCT, else "sacct" on the PATH, run with an argv and a
 * timeout. */
#ifndef NODEGATE_COLLECT_JOB_STEPS_H
#define NODEGATE_COLLECT_JOB_STEPS_H

#include <stddef.h>

#include "parse/sacct_steps.h"

#define NG_JOB_STEPS_TIMEOUT_S 5.0
#define NG_JOB_STEPS_MAX 4096

/* Reads job's steps into out (cap of them), *n read. 0 when sacct
 * answered, -1 with why (len bytes) when it could not be run, timed out or
 * failed. */
int ng_job_steps_read(const char *job, ng_sacct_step *out, size_t cap, size_t *n, char *why,
                      size_t len);

#endif
