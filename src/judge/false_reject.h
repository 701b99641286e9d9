/* False rejects and later stragglers: how the gate's two kinds of mistake
 * show up in what the store keeps (docs/report.md, "False rejects").
 *
 * - A quarantined node later released with the same hardware (the hardware
 *   part of its profile before the quarantine equals the one after) is a
 *   possible false reject: nothing visible was replaced. A cable reseat or a
 *   cooling repair leaves no trace in the profile, so it is "possible", and
 *   the release reason is shown beside it.
 * - An admitted node that straggled later (quarantined, flagged by a later
 *   admission, or found degraded or fatal by an epilog or health check within
 *   a window after it was admitted) is a later straggler of the admission
 *   that let it in.
 * Pure: profiles, decisions and findings in, classifications out. */
#ifndef NODEGATE_JUDGE_FALSE_REJECT_H
#define NODEGATE_JUDGE_FALSE_REJECT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The digest (64 hex digits) of the hardware part of a profile
 * (docs/identity.md): GPU UUIDs, PCI ids and buses; InfiniBand GUIDs and
 * boards; NIC MACs; drive models and serials; DIMM population; board and
 * product serials; CPU model and sockets. Software, firmware versions,
 * link states and counters are left out: they change without a part being
 * swapped. false (out "") when the profile has none of them. */
bool ng_profile_hw_digest(const cJSON *profile, char out[65]);

typedef enum {
	NG_CASE_OPEN,
	NG_CASE_RELEASED_SAME_HW,    /* possible false reject */
	NG_CASE_RELEASED_HW_CHANGED, /* a part was replaced: a true reject */
	NG_CASE_RELEASED_UNKNOWN,    /* no profile before or after: cannot tell */
} ng_case_class;

/* hw_before / hw_after: digests, "" when unknown. */
ng_case_class ng_case_classify(bool closed, const char *hw_before, const char *hw_after);
const char *ng_case_class_name(ng_case_class c);

typedef struct {
	size_t node;
	int64_t at;
	bool admits; /* admitted or admitted-warn */
} ng_fr_decision;

typedef struct {
	size_t node;
	int64_t at;
} ng_fr_finding;

/* Sorts by node, then time. */
void ng_fr_sort_decisions(ng_fr_decision *d, size_t n);
void ng_fr_sort_findings(ng_fr_finding *f, size_t n);

/* For each admitting decision (sorted), whether a finding (sorted) on its node
 * came after it, within window seconds, and before the node's next
 * admitting decision. straggled[i] is false for decisions that do not admit.
 * Returns how many straggled. */
size_t ng_fr_stragglers(const ng_fr_decision *d, size_t n, const ng_fr_finding *f, size_t nf,
                        int64_t window, bool *straggled);

#endif
