/* Which jobs `nodegate admit --prolog` screens the nodes of (docs/slurm.md,
 * "Screening in the Prolog"): the policy's admission.prolog_min_nodes,
 * prolog_feature and prolog_comment; any one asks. Pure: the job as
 * `scontrol show job ID -o` prints it in, the answer out. */
#ifndef NODEGATE_JUDGE_PROLOG_ASK_H
#define NODEGATE_JUDGE_PROLOG_ASK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/policy.h"

typedef struct {
	long num_nodes;      /* NumNodes=, 0 unknown */
	char features[512];  /* Features= (the job's constraint), "" none */
	char comment[512];   /* Comment=, "" none (it may hold blanks: read up to the next key) */
} ng_prolog_job;

/* Reads NumNodes=, Features= and Comment= from `scontrol show job ID -o`
 * (or its multi-line form). -1 when there is no JobId= (not a job's answer). */
int ng_prolog_job_parse(const char *text, ng_prolog_job *out);

/* Whether the job asks to have its nodes screened; why says which rule
 * ("12 nodes, at least admission.prolog_min_nodes 8", ...) or why not. */
bool ng_prolog_job_asks(const ng_policy *pol, const ng_prolog_job *job, char *why, size_t len);

#endif
