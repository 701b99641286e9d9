/* The gate over a stream of cases (`nodegate gate --batch`, docs/gate.md):
 * one JSON object per line in ({"record", "baseline", "cohort_drops",
 * "history", "blocked", "clear_after", "escalate_after"}), one JSON line out
 * per line in, in order ({"verdict"...} or {"error"...}), under ctx's policy. */
#ifndef NODEGATE_FLOW_GATE_BATCH_H
#define NODEGATE_FLOW_GATE_BATCH_H

#include <stdio.h>

#include "flow/ctx.h"

/* 0 when every line was judged; 1 when a line was refused (its error line is
 * out, and the run went on); -1 when in could not be read, out not written,
 * or memory ran out (a note says which, and what was judged is out). */
int ng_flow_gate_batch(const ng_ctx *ctx, FILE *in, FILE *out);

#endif
