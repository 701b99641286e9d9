/* The CPU probe's micro-kernels, one per vector tier (cpu_kernels.inc holds
 * the bodies; included by probe_cpu.c only, so the build needs no new file).
 *
 * Every kernel computes C = A * B for an MR x K panel A (packed k-major:
 * A[k * MR + i]) and a K x NR panel B (B[k * NR + j]) into C[j * MR + i],
 * `reps` times, and counts the repetitions whose C differs in any bit from
 * `expect`. Accumulators start at zero each repetition, so every repetition
 * must give exactly the same C. */
#ifndef NODEGATE_COLLECT_CPU_KERNELS_H
#define NODEGATE_COLLECT_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ng_cpu_tier {
	const char *name;  /* "avx512", "avx2", "sse2", "portable" */
	const char *isa;   /* what it executes, for the conditions */
	unsigned mr, nr, k;
	bool fused;        /* one rounding per multiply-add (fma) or two */
	uint64_t (*run)(const double *a, const double *b, const double *expect, uint64_t reps);
	bool (*supported)(void);
};

#endif
