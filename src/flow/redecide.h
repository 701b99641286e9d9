/* One admission run decided again under another policy, from what was
 * judged when it ran: the replay of the store's decisions and the shadow
 * policy beside the enforcing one both ask it (docs/policy-changes.md).
 *
 * What is decided again: the flag rule (admission.flag_fraction and the
 * floors) and the two-stage rule over the run's results. The gate's verdict
 * of each result stands as it was given: the gate's own lines (gate.*), the
 * cohort and the hysteresis are read from the run, not judged again. */
#ifndef NODEGATE_FLOW_REDECIDE_H
#define NODEGATE_FLOW_REDECIDE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/policy.h"
#include "judge/admit.h"

typedef struct {
	ng_admit_outcome outcome;
	/* SUSPECT: the policy flags a domain the run never confirmed (under
	 * the policy that ran it, it was not flagged), so what the
	 * confirmation would have said is not known. */
	bool unconfirmed;
	const char *metric; /* the first metric that decided it (named), or NULL */
} ng_redecision;

/* first and confirm as the run judged them; work: scratch for
 * n_first + n_confirm results. A confirmation is read only for the domains
 * the policy flags in the first run. */
ng_redecision ng_redecide(const ng_admit_result *first, size_t n_first,
                          const ng_admit_result *confirm, size_t n_confirm, const ng_policy *pol,
                          ng_admit_result *work);

#endif
