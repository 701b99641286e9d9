/* The CPU compute probe: a fixed floating-point kernel on every core.
 *
 * Each thread, pinned to one core, runs a register-blocked dgemm micro-kernel
 * (C[MR x NR] = A[MR x K] * B[K x NR]) over panels that stay in its L1 cache,
 * again and again, and compares every C it computes, bit for bit, with the C
 * computed once up front by plain scalar code. FMA rounds once, so the vector
 * FMA lanes and scalar fma() agree exactly; the SSE2 tier multiplies and adds
 * separately and the reference does the same. A core whose arithmetic is wrong
 * therefore shows as a mismatch, not as noise in a throughput figure.
 *
 * The widest vector tier the CPU supports is chosen at run time (AVX-512F,
 * AVX2+FMA, SSE2 on x86-64; portable C elsewhere), so one binary serves every
 * node; the tier is recorded in the conditions. */
#ifndef NODEGATE_COLLECT_PROBE_CPU_H
#define NODEGATE_COLLECT_PROBE_CPU_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "core/error.h"

struct ng_cpu_opts {
	double duration_s; /* measured time, after the warm-up */
	double interval_s; /* one sample per interval */
	unsigned threads;  /* 0: one per physical core the process may run on */
	/* Force a tier ("avx512", "avx2", "sse2", "portable"); NULL picks the
	 * widest the CPU has. A tier the CPU lacks is an error. */
	const char *tier;
	/* Test-only: when >= 0, the thread with this index has one bit of its A
	 * panel flipped after the warm-up, as a core that computes wrongly would. */
	int test_corrupt_thread;
};

/* Defaults: 10 s, 1 s intervals, every core, widest tier, no corruption. */
void ng_cpu_opts_default(struct ng_cpu_opts *o);

/* Runs the probe. Returns an array holding one record, "cpu.fp64.gflops":
 * samples are the aggregate GFLOP/s of every thread per interval, "wrong" is
 * the number of threads whose results did not match, "detail" holds the
 * per-thread figures and the clock frequency seen each interval. A run that
 * cannot measure (no thread could start) is a record with no samples and a
 * reason. NULL only for a usage error (err says which) or out of memory. */
cJSON *ng_probe_cpu_run(const struct ng_cpu_opts *o, ng_err *err);

/* The tiers this CPU can run, widest first, e.g. {"avx512", "avx2", "sse2"}.
 * Returns how many were stored (at most max). */
size_t ng_cpu_tiers(const char **out, size_t max);

/* The CPUs this process may run on, one per physical core first (the lowest
 * numbered SMT sibling of each core), then the remaining siblings. Returns
 * how many were stored, at most max; *n_cores is set to the number of
 * physical cores among them. Shared with the host-memory probe. */
size_t ng_cpu_list(int *cpus, size_t max, size_t *n_cores);

/* Pins the calling thread to one CPU. 0, or an errno value. */
int ng_cpu_pin_self(int cpu);

#endif
