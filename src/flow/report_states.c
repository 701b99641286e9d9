/* The states a node is shown in, one list for every section of the report
 * (the first screen, the strip plots' marks, the tables, the JSON), so a
 * state the store learns to keep is added here once. Most pressing first. */
#include <string.h>

#include "flow/report_doc.h"

size_t ng_report_states_of(const struct ng_report *r, size_t node, const char **out, size_t max)
{
	const struct ng_rnode *n = &r->nodes[node];
	size_t k = 0;
#define PUT(s)                 \
	do {                       \
		if (k < max)           \
			out[k++] = (s);    \
	} while (0)
	/* A repeat offender first: it is never released automatically. A node
	 * on probation after a release has "probation" as its outcome. */
	if (n->lemon)
		PUT("lemon");
	if (n->case_id)
		PUT("quarantined");
	else if (n->outcome[0])
		PUT(n->outcome);
#undef PUT
	return k;
}

const char *ng_report_state_of(const struct ng_report *r, size_t node)
{
	const char *s[4];
	return ng_report_states_of(r, node, s, 4) ? s[0] : "unknown";
}
