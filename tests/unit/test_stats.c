/* Statistics against numpy 1.24 and against sorting.
 *
 * ng_np_sum, ng_np_mean and ng_np_std_over_mean must equal numpy bit for bit,
 * because the gate compares their results against bars and a value one
 * rounding off can land on the other side. The expected values below were
 * produced once with /usr/bin/python3 and numpy 1.24.2, on float64 arrays
 * a = np.array([f(i) for i in range(n)]) for each formula f and size n:
 *
 *   A: f(i) = 1.0 + float((i * 7919) % 1000) / 997.0
 *   B: f(i) = float((i * 104729) % 65536) * 1e6 + 1.0 / float(i + 1)
 *   C: f(i) = (-1e16 if i & 1 else 1e16) + float((i * 7919) % 1000) / 7.0
 *
 *   sum = float(np.add.reduce(a))            mean = float(np.mean(a))
 *   som = float(np.std(a) / np.mean(a))      median = float(np.median(a))
 *
 * each printed with float.hex(). The formulas are evaluated identically here
 * (IEEE double, no contraction: the project builds with -ffp-contract=off).
 * A plain left-to-right sum differs from numpy's in 24 of these 36 sums, so
 * the table tells the two apart. The sizes straddle numpy's pairwise block
 * (8 accumulators, blocks of 128) and its 8192-element reduction buffer.
 *
 * ng_np_median is checked against a full sort on arrays of many sizes and
 * orders, including the orders that defeat naive quickselect pivots. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

static double formula(char f, size_t i)
{
	switch (f) {
	case 'A': return 1.0 + (double)((i * 7919) % 1000) / 997.0;
	case 'B': return (double)((i * 104729) % 65536) * 1e6 + 1.0 / (double)(i + 1);
	case 'C': return ((i & 1) ? -1e16 : 1e16) + (double)((i * 7919) % 1000) / 7.0;
	}
	fail_msg("no formula %c", f);
	return 0;
}

static const struct expected {
	char f;
	size_t n;
	double sum, mean, std_over_mean, median;
} numpy_values[] = {
	{'A', 1, 0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x0.0p+0, 0x1.0000000000000p+0},
	{'A', 7, 0x1.69fb60cd6a8f4p+3, 0x1.9db19333e77f2p+0, 0x1.65e0c534b95c2p-3, 0x1.ad93a496fb1f1p+0},
	{'A', 8, 0x1.97e130041bbb4p+3, 0x1.97e130041bbb4p+0, 0x1.5c35c2b113212p-3, 0x1.a32d72c6bd7f2p+0},
	{'A', 9, 0x1.c32d72c6bd7f3p+3, 0x1.910bf43ee154ap+0, 0x1.5c2b78710e986p-3, 0x1.98c740f67fdf2p+0},
	{'A', 127, 0x1.7c37765f01487p+7, 0x1.7f35e22347d82p+0, 0x1.9146ba9ca57b4p-3, 0x1.7f19ef0d9bdc1p+0},
	{'A', 128, 0x1.7fa59de9eaf1ep+7, 0x1.7fa59de9eaf1ep+0, 0x1.901d0bf9b581ap-3, 0x1.818a6631d03dap+0},
	{'A', 129, 0x1.82ea2cad93a4ap+7, 0x1.7fea57fd9873cp+0, 0x1.8e9c4008433b7p-3, 0x1.83fadd56049f3p+0},
	{'A', 1000, 0x1.7740314cc63a0p+10, 0x1.8041bbb2f80a4p+0, 0x1.8b0f344f807fcp-3, 0x1.8041bbb2f80a4p+0},
	{'A', 8191, 0x1.8034868c3253bp+13, 0x1.8040889076d76p+0, 0x1.8b1beae0f8625p-3, 0x1.8062998c740f6p+0},
	{'A', 8192, 0x1.8040c53318e82p+13, 0x1.8040c53318e82p+0, 0x1.8b159091e5df1p-3, 0x1.8062998c740f6p+0},
	{'A', 8193, 0x1.804c5d76e278bp+13, 0x1.80405b7406d88p+0, 0x1.8b10035a5fd32p-3, 0x1.8062998c740f6p+0},
	{'A', 20000, 0x1.d5103d9ff7c88p+14, 0x1.8041bbb2f80a4p+0, 0x1.8b0f344f807fcp-3, 0x1.8041bbb2f80a4p+0},
	{'B', 1, 0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x0.0p+0, 0x1.0000000000000p+0},
	{'B', 7, 0x1.b26c40ea14be3p+37, 0x1.f07bb7e6f3228p+34, 0x1.3df12004f6052p-1, 0x1.1f384a3004925p+35},
	{'B', 8, 0x1.c929013815be3p+37, 0x1.c929013815be3p+34, 0x1.575d2c64abcc8p-1, 0x1.deb326500af8cp+34},
	{'B', 9, 0x1.147337a40b50ep+38, 0x1.eb777f5c85e52p+34, 0x1.3da4c1cf467c3p-1, 0x1.1f384a3004925p+35},
	{'B', 127, 0x1.ef2569c422b68p+41, 0x1.f30b80c5ae12ap+34, 0x1.223ae266f5848p-1, 0x1.fb5ea09001862p+34},
	{'B', 128, 0x1.f6666cf802b76p+41, 0x1.f6666cf802b76p+34, 0x1.21bcb9f7f98f8p-1, 0x1.001486b400d04p+35},
	{'B', 129, 0x1.fa965b0802b86p+41, 0x1.f6a908f6168b5p+34, 0x1.207a6b941946fp-1, 0x1.0279bd2000dd6p+35},
	{'B', 1000, 0x1.e17432b6b077cp+44, 0x1.ed024038007aap+34, 0x1.24a9dc22c353bp-1, 0x1.f085871000120p+34},
	{'B', 8191, 0x1.e91ae49370932p+47, 0x1.e92a2de4dfba2p+34, 0x1.271bca18ae240p-1, 0x1.e8b2cfc00002ap+34},
	{'B', 8192, 0x1.e92af97800132p+47, 0x1.e92af97800132p+34, 0x1.2716bc6f44ef6p-1, 0x1.e8c5e2900002ap+34},
	{'B', 8193, 0x1.e92eca0800132p+47, 0x1.e91f810bf7b36p+34, 0x1.2720dc8f15c92p-1, 0x1.e8b2cfc00002ap+34},
	{'B', 20000, 0x1.2a1989d99e054p+49, 0x1.e86819f80008ap+34, 0x1.278aea8038010p-1, 0x1.e85ee3600001ap+34},
	{'C', 1, 0x1.1c37937e08000p+53, 0x1.1c37937e08000p+53, 0x0.0p+0, 0x1.1c37937e08000p+53},
	{'C', 7, 0x1.1c37937e08133p+53, 0x1.44d1cd22525f1p+50, 0x1.bb67ae8584abfp+2, 0x1.1c37937e08000p+53},
	{'C', 8, 0x1.5200000000000p+9, 0x1.5200000000000p+6, 0x1.ae87b07633803p+46, 0x1.0800000000000p+6},
	{'C', 9, 0x1.1c37937e0816bp+53, 0x1.f9465b8ab90bep+49, 0x1.1e3779b97f334p+3, 0x1.1c37937e08000p+53},
	{'C', 127, 0x1.1c37937e09168p+53, 0x1.1e747c76f7049p+46, 0x1.fbfbf7ebc5641p+6, 0x1.1c37937e08000p+53},
	{'C', 128, 0x1.1a00000000000p+13, 0x1.1a00000000000p+6, 0x1.02033f15d0cb6p+47, 0x1.1800000000000p+6},
	{'C', 129, 0x1.1c37937e091ddp+53, 0x1.1a038c653ea09p+46, 0x1.01fe03f61aa99p+7, 0x1.1c37937e08000p+53},
	{'C', 1000, 0x1.1520000000000p+16, 0x1.1bc6a7ef9db23p+6, 0x1.0065de158c962p+47, 0x1.1c00000000000p+6},
	{'C', 8191, 0x1.1c37937e4f304p+53, 0x1.1c407581fb402p+40, 0x1.ffefffbf7dc5fp+12, 0x1.1c37937e08000p+53},
	{'C', 8192, 0x1.1ce0000000000p+19, 0x1.1ce0000000000p+6, 0x1.fed14b95913e2p+46, 0x1.1c00000000000p+6},
	{'C', 8193, 0x1.1c37937e4f3a0p+53, 0x1.1c2eb208bef41p+40, 0x1.0007ffdfc0d63p+13, 0x1.1c37937e08000p+53},
	{'C', 20000, 0x1.5bd3000000000p+20, 0x1.1cf0068db8bacp+6, 0x1.feb490cb2438fp+46, 0x1.1c00000000000p+6},
};

static void assert_bits(double got, double want, const char *what, char f, size_t n)
{
	if (memcmp(&got, &want, sizeof got) != 0)
		fail_msg("%s of %c[%zu]: got %a (%.17g), numpy says %a (%.17g)", what, f, n, got, got,
		         want, want);
}

static double *make(char f, size_t n)
{
	double *v = malloc((n ? n : 1) * sizeof *v);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = formula(f, i);
	return v;
}

static void test_sum_mean_std_match_numpy(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof numpy_values / sizeof *numpy_values; k++) {
		const struct expected *e = &numpy_values[k];
		double *v = make(e->f, e->n);
		assert_bits(ng_np_sum(v, e->n), e->sum, "sum", e->f, e->n);
		assert_bits(ng_np_mean(v, e->n), e->mean, "mean", e->f, e->n);
		assert_bits(ng_np_std_over_mean(v, e->n), e->std_over_mean, "std/mean", e->f, e->n);
		free(v);
	}
}

static void test_median_matches_numpy(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof numpy_values / sizeof *numpy_values; k++) {
		const struct expected *e = &numpy_values[k];
		double *v = make(e->f, e->n);
		double *copy = make(e->f, e->n);
		double *work = malloc(e->n * sizeof *work);
		assert_non_null(work);
		assert_bits(ng_np_median(v, e->n, work), e->median, "median", e->f, e->n);
		/* the input is left as it was */
		assert_memory_equal(v, copy, e->n * sizeof *v);
		assert_bits(ng_np_median_inplace(v, e->n), e->median, "median in place", e->f, e->n);
		free(v);
		free(copy);
		free(work);
	}
}

static void test_sum_edges(void **state)
{
	(void)state;
	double v[3] = {1.5, 2.25, -3.75};
	/* numpy: np.add.reduce of an empty float64 array is 0.0 */
	assert_bits(ng_np_sum(v, 0), 0.0, "sum", '-', 0);
	assert_bits(ng_np_sum(v, 1), 1.5, "sum", '-', 1);
	assert_bits(ng_np_sum(v, 3), 0.0, "sum", '-', 3);
	/* numpy sums an array of negative zeros to +0.0 */
	double z[9000];
	for (size_t i = 0; i < 9000; i++)
		z[i] = -0.0;
	size_t ns[] = {1, 2, 7, 8, 9, 200, 8192, 9000};
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
		assert_bits(ng_np_sum(z, ns[i]), 0.0, "sum of -0.0", '-', ns[i]);
	/* overflow is numpy's too: inf, and std/mean is then NaN */
	double big[3] = {1.7976931348623157e308, 1.7976931348623157e308, 1.0};
	assert_true(isinf(ng_np_sum(big, 3)));
	assert_true(isnan(ng_np_std_over_mean(big, 3)));
	/* one value has no spread */
	assert_bits(ng_np_std_over_mean(v, 1), 0.0, "std/mean", '-', 1);
}

/* ---- median against sorting --------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* np.median by definition: sort, then np.mean of the middle one or two,
 * which is a sum that starts from 0.0 and a division by the count. */
static double median_by_sorting(const double *v, size_t n)
{
	double *s = malloc(n * sizeof *s);
	assert_non_null(s);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	double m = n % 2 ? (0.0 + s[n / 2]) / 1.0 : (0.0 + s[n / 2 - 1] + s[n / 2]) / 2.0;
	free(s);
	return m;
}

/* An order-independent digest of the values' bit patterns. */
static uint64_t multiset_digest(const double *v, size_t n)
{
	uint64_t sum = 0, sq = 0, x = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof b);
		b *= 0x9E3779B97F4A7C15ULL;
		sum += b;
		sq += b * b;
		x ^= b;
	}
	return sum ^ (sq * 0xC2B2AE3D27D4EB4FULL) ^ (x << 1);
}

static void check_median(const double *v, size_t n, const char *what)
{
	double want = median_by_sorting(v, n);
	double *work = malloc(n * sizeof *work);
	double *inplace = malloc(n * sizeof *inplace);
	assert_non_null(work);
	assert_non_null(inplace);
	double got = ng_np_median(v, n, work);
	if (memcmp(&got, &want, sizeof got) != 0)
		fail_msg("median of %s, n=%zu: got %a, sorting says %a", what, n, got, want);
	memcpy(inplace, v, n * sizeof *v);
	got = ng_np_median_inplace(inplace, n);
	if (memcmp(&got, &want, sizeof got) != 0)
		fail_msg("in-place median of %s, n=%zu: got %a, sorting says %a", what, n, got, want);
	/* reordering in place keeps every value: the multiset of bit patterns,
	 * summarised without another sort, is unchanged */
	if (multiset_digest(v, n) != multiset_digest(inplace, n))
		fail_msg("in-place median of %s, n=%zu, lost or changed a value", what, n);
	free(work);
	free(inplace);
}

enum order { RANDOM, FEW_VALUES, SORTED, REVERSED, ALL_EQUAL, ORGAN_PIPE, SAWTOOTH, ALTERNATING,
             PIPE_DOWN, N_ORDERS };
static const char *const order_name[N_ORDERS] = {
	"random", "few distinct values", "sorted", "reversed", "all equal", "organ pipe",
	"sawtooth", "alternating", "inverted organ pipe",
};

static void fill(double *v, size_t n, enum order o)
{
	for (size_t i = 0; i < n; i++) {
		switch (o) {
		case RANDOM: v[i] = (double)(rng() >> 11) * 0x1p-53 * 1000.0 - 500.0; break;
		case FEW_VALUES: v[i] = (double)(rng() % 5); break;
		case SORTED: v[i] = (double)i; break;
		case REVERSED: v[i] = (double)(n - i); break;
		case ALL_EQUAL: v[i] = 240.0; break;
		case ORGAN_PIPE: v[i] = (double)(i < n / 2 ? i : n - i); break;
		case SAWTOOTH: v[i] = (double)(i % 17); break;
		case ALTERNATING: v[i] = i % 2 ? 1.0 : 2.0; break;
		case PIPE_DOWN: v[i] = (double)(i < n / 2 ? n / 2 - i : i - n / 2); break;
		default: break;
		}
	}
}

static void test_median_against_sorting_small(void **state)
{
	(void)state;
	rng_state = 0x9E3779B97F4A7C15ULL;
	double v[300];
	for (size_t n = 1; n <= 300; n++) {
		for (int o = 0; o < N_ORDERS; o++) {
			fill(v, n, (enum order)o);
			check_median(v, n, order_name[o]);
		}
	}
	/* many random arrays of every small size, odd and even */
	for (int rep = 0; rep < 200; rep++) {
		for (size_t n = 1; n <= 40; n++) {
			fill(v, n, rep % 2 ? RANDOM : FEW_VALUES);
			check_median(v, n, "random small");
		}
	}
}

static void test_median_against_sorting_large(void **state)
{
	(void)state;
	rng_state = 0xD1B54A32D192ED03ULL;
	size_t sizes[] = {1000, 1001, 4096, 4097, 8192, 8193, 65537};
	size_t cap = 65537;
	double *v = malloc(cap * sizeof *v);
	assert_non_null(v);
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (int o = 0; o < N_ORDERS; o++) {
			fill(v, sizes[s], (enum order)o);
			check_median(v, sizes[s], order_name[o]);
		}
	free(v);
}

static void test_median_million(void **state)
{
	(void)state;
	rng_state = 0x2545F4914F6CDD1DULL;
	size_t n = 1000000;
	double *v = malloc(n * sizeof *v);
	assert_non_null(v);
	enum order orders[] = {RANDOM, ORGAN_PIPE, REVERSED};
	for (size_t o = 0; o < sizeof orders / sizeof *orders; o++) {
		fill(v, n, orders[o]);
		check_median(v, n, order_name[orders[o]]);
	}
	fill(v, n - 1, FEW_VALUES);
	check_median(v, n - 1, order_name[FEW_VALUES]);
	free(v);
}

static void test_median_special_values(void **state)
{
	(void)state;
	/* numpy's median is np.mean of the middle: a sum from 0.0, so a middle
	 * of negative zeros comes out +0.0 (np.median([-0.0]) is 0.0) */
	double z[5] = {-0.0, -0.0, -0.0, -0.0, 5.0};
	double w[5];
	assert_bits(ng_np_median(z, 1, w), 0.0, "median", 'z', 1);
	assert_bits(ng_np_median(z, 2, w), 0.0, "median", 'z', 2);
	assert_bits(ng_np_median(z, 3, w), 0.0, "median", 'z', 3);
	assert_bits(ng_np_median(z, 5, w), 0.0, "median", 'z', 5);
	double mixed[4] = {1.0, -1.0, -0.0, 0.0};
	assert_bits(ng_np_median(mixed, 4, w), 0.0, "median", 'm', 4);
	/* infinities are ordinary ordered values */
	double inf[4] = {INFINITY, -INFINITY, 1.0, 2.0};
	assert_bits(ng_np_median(inf, 4, w), 1.5, "median", 'i', 4);
	assert_bits(ng_np_median(inf, 3, w), 1.0, "median", 'i', 3);
	/* the two middle values overflow when added: numpy says inf */
	double big[2] = {1.7976931348623157e308, 1.7976931348623157e308};
	assert_true(isinf(ng_np_median(big, 2, w)));
	/* and a middle of tiny values halves without losing the subnormal */
	double tiny[2] = {5e-324, 1e-323};
	assert_bits(ng_np_median(tiny, 2, w), 1e-323, "median", 't', 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum_mean_std_match_numpy),
		cmocka_unit_test(test_median_matches_numpy),
		cmocka_unit_test(test_sum_edges),
		cmocka_unit_test(test_median_against_sorting_small),
		cmocka_unit_test(test_median_against_sorting_large),
		cmocka_unit_test(test_median_million),
		cmocka_unit_test(test_median_special_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
