/* What a failing domain's evidence says explicitly (collect/evidence.h), as
 * plain sentences for the end of `nodegate quarantine show`: "GPU 0: power
 * limit 300 W of 700 W", "another process (pid 4242) was on GPU 1, at 60%
 * utilization", "mlx5_0 port 1: link downed counter 3". Only what the
 * evidence states outright; nothing inferred. Pure: JSON in, lines out. */
#ifndef NODEGATE_JUDGE_EVIDENCE_SUMMARY_H
#define NODEGATE_JUDGE_EVIDENCE_SUMMARY_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define NG_SUMMARY_LINE 256

/* captures: an array of {"domain", "evidence": {...}} (store/probation.h's
 * ng_store_evidence_of_run). Up to cap lines into lines; returns how many. */
size_t ng_evidence_summary(const cJSON *captures, char (*lines)[NG_SUMMARY_LINE], size_t cap);

#endif
