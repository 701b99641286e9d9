/* An admission run decided again under another policy (flow/redecide.h). */
#include <string.h>

#include "flow/redecide.h"

ng_redecision ng_redecide(const ng_admit_result *first, size_t n_first,
                          const ng_admit_result *confirm, size_t n_confirm, const ng_policy *pol,
                          ng_admit_result *work)
{
	/* The floor is the policy's: the one the run was judged with may be
	 * another's. */
	ng_admit_result *f = work, *c = work + n_first;
	for (size_t i = 0; i < n_first; i++) {
		f[i] = first[i];
		f[i].floor = ng_policy_floor(pol, f[i].metric);
	}
	ng_redecision out = {0};
	ng_admit_decision d = ng_admit_decide(f, n_first, NULL, 0, pol);
	if (d.outcome == NG_ADMIT_SUSPECT) {
		size_t nc = 0;
		for (size_t i = 0; i < n_confirm; i++) {
			bool asked = false;
			for (size_t k = 0; k < d.n_confirm && !asked; k++)
				asked = strcmp(d.confirm[k], confirm[i].domain) == 0;
			if (!asked)
				continue;
			c[nc] = confirm[i];
			c[nc].floor = ng_policy_floor(pol, c[nc].metric);
			nc++;
		}
		if (nc)
			d = ng_admit_decide(f, n_first, c, nc, pol);
		else
			out.unconfirmed = true;
	}
	out.outcome = d.outcome;
	out.metric = d.n_named ? d.named[0]->metric : NULL;
	return out;
}
