/* Gate verdicts: names, families and where each one lands.
 *
 * The sixteen verdicts and their landing places are the fabric-gate runbook's.
 * The table is data so that `nodegate verdicts` prints exactly what the code
 * uses, and so that later policy can reroute a verdict without new code. */
#ifndef NODEGATE_CORE_VERDICT_H
#define NODEGATE_CORE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	NG_V_PASS,
	NG_V_WARN,
	NG_V_BLOCK,
	NG_V_FLEET_REGRESSION,
	NG_V_CORRUPT,
	NG_V_DIAG_FAILED,
	NG_V_BIMODAL,
	NG_V_INSUFFICIENT_SAMPLES,
	NG_V_CORRECTNESS_UNVERIFIED,
	NG_V_INCOMPARABLE,
	NG_V_NO_MEASUREMENT,
	NG_V_DIAG_INCOMPLETE,
	NG_V_NO_BASELINE,
	NG_V_UNSTABLE,
	NG_V_IMPLAUSIBLE,
	NG_V_INVALID_INPUT,
	NG_V_COUNT
} ng_verdict;

struct ng_verdict_info {
	ng_verdict verdict;
	const char *name;
	/* "performance", "correctness", "diagnostic", "attribution" or "unmeasured". */
	const char *family;
	bool admissible; /* may the node take work on this verdict alone */
	bool hard;       /* not about performance: hysteresis never rewrites it */
	const char *meaning;
	const char *lands; /* the runbook's "where it lands" */
};

const struct ng_verdict_info *ng_verdict_info(ng_verdict v);
const char *ng_verdict_name(ng_verdict v);
/* Returns false when the name is not a verdict. */
bool ng_verdict_from_name(const char *name, ng_verdict *out);
bool ng_verdict_admissible(ng_verdict v);
bool ng_verdict_hard(ng_verdict v);

#endif
