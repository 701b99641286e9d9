/* Repeat offenders: a node, or one GPU by its UUID, quarantined K times
 * within D days is a lemon (policy quarantine.lemon_count, lemon_days):
 * never released automatically. A GPU replaced since (its UUID no longer in
 * the node) takes its quarantines with it: the new one starts its own
 * count. Pure: the quarantines in, the verdict out. */
#ifndef NODEGATE_JUDGE_LEMON_H
#define NODEGATE_JUDGE_LEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NG_LEMON_UUIDS 8

/* One quarantine (a case), of the node judged or of another node that a
 * GPU of the node was in. */
typedef struct {
	int64_t id, opened_at;
	const char *domain, *metric;
	bool this_node;
	const char *uuid[NG_LEMON_UUIDS]; /* the GPUs the case's evidence blames */
	size_t n_uuids;
	bool part_gone; /* every GPU it blames has left the node since */
} ng_lemon_case;

typedef struct {
	bool lemon;
	size_t node_count;   /* the node's quarantines in the window, those of replaced parts left out */
	char gpu[96];        /* the GPU counted most often in the window, "" when none */
	size_t gpu_count;
	double mtbi_s;       /* mean time between the node's quarantines, all of them; < 0 with fewer than 2 */
	char why[256];       /* "3 quarantines in 30 days (limit 3)", or "" */
	char replace[512];   /* what the evidence says to replace, or "" */
} ng_lemon_verdict;

/* cases in any order; now and the policy's count and days. */
void ng_lemon_judge(const ng_lemon_case *cases, size_t n, int64_t now, long count, long days,
                    ng_lemon_verdict *out);

#endif
