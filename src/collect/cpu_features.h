/* What the CPU and the OS let the CPU probe's tiers use, asked only when a
 * tier is chosen.
 *
 * GCC's __builtin_cpu_supports links libgcc's CPU model, whose constructor
 * runs a dozen CPUID instructions as every nodegate process starts. Under a
 * hypervisor each CPUID is a VM exit (11-13 us each on a KVM guest), which
 * made the CPU model a measurable part of `nodegate --version` and of every
 * epilog. These ask the same questions, once, on first use. */
#ifndef NODEGATE_COLLECT_CPU_FEATURES_H
#define NODEGATE_COLLECT_CPU_FEATURES_H

#include <stdbool.h>

bool ng_cpu_has_sse2(void);
bool ng_cpu_has_avx2_fma(void);   /* AVX2 and FMA, with the OS saving ymm state */
bool ng_cpu_has_avx512f(void);    /* AVX-512F, with the OS saving zmm and opmask state */

#endif
