/* CPU features for the CPU probe's tiers (cpu_features.h). */
#include "collect/cpu_features.h"

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

enum {
	HAVE_SSE2 = 1,
	HAVE_AVX2_FMA = 2,
	HAVE_AVX512F = 4,
	ASKED = 8,
};

static _Atomic unsigned features; /* 0 until asked; the probe's threads may ask at once */

/* XCR0: which register state the OS saves on a context switch. */
static uint64_t xcr0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static unsigned ask(void)
{
	unsigned f = ASKED, a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return f;
	if (d & bit_SSE2)
		f |= HAVE_SSE2;
	bool fma = c & bit_FMA, avx = c & bit_AVX, osxsave = c & bit_OSXSAVE;
	if (!osxsave || !avx)
		return f;
	uint64_t x = xcr0();
	bool ymm = (x & 0x6) == 0x6;    /* SSE and AVX state */
	bool zmm = (x & 0xe6) == 0xe6;  /* and opmask, ZMM0-15 high halves, ZMM16-31 */
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return f;
	if (ymm && fma && (b & bit_AVX2))
		f |= HAVE_AVX2_FMA;
	if (zmm && (b & bit_AVX512F))
		f |= HAVE_AVX512F;
	return f;
}

static bool has(unsigned bit)
{
	if (!features)
		features = ask();
	return features & bit;
}

bool ng_cpu_has_sse2(void) { return has(HAVE_SSE2); }
bool ng_cpu_has_avx2_fma(void) { return has(HAVE_AVX2_FMA); }
bool ng_cpu_has_avx512f(void) { return has(HAVE_AVX512F); }

#else

bool ng_cpu_has_sse2(void) { return false; }
bool ng_cpu_has_avx2_fma(void) { return false; }
bool ng_cpu_has_avx512f(void) { return false; }

#endif
