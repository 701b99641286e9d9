/* Hysteresis over raw gate verdicts: the runbook's with_hysteresis().
 *
 * It damps both edges of a noisy performance signal: one good run does not
 * clear a block, and repeated warnings become one. It takes RAW verdicts plus
 * an explicit blocked flag; fed its own output it could never clear a block.
 * Verdicts that are not about performance pass through untouched and blocked. */
#ifndef NODEGATE_JUDGE_HYSTERESIS_H
#define NODEGATE_JUDGE_HYSTERESIS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/verdict.h"

/* What a history entry counts as. Anything that is not a verdict name, or is
 * a performance verdict other than pass and warn, is NG_HIST_OTHER. */
typedef enum { NG_HIST_PASS, NG_HIST_WARN, NG_HIST_HARD, NG_HIST_OTHER } ng_hist_kind;

ng_hist_kind ng_hist_kind_of(const char *raw_verdict);

typedef struct {
	ng_verdict effective;
	bool blocked;
} ng_hysteresis;

/* clear_after and escalate_after are counts of runs, at least 1; anything else
 * returns -1 and leaves out untouched. */
int ng_with_hysteresis(ng_verdict verdict, const ng_hist_kind *history, size_t n_history,
                       bool blocked, unsigned long long clear_after,
                       unsigned long long escalate_after, ng_hysteresis *out);

#endif
