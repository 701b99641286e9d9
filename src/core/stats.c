#include "core/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* numpy's buffered reductions hand the inner loop at most this many elements. */
#define NP_BUFSIZE 8192
#define PW_BLOCKSIZE 128

/* np.add.reduce's pairwise summation over x[0, n), where x[i] is v[i]
 * (pairwise_sum) or (v[i] - mean)^2 (pairwise_sqdev): np.std squares the
 * deviations into a temporary array and then sums it, and computing each
 * element on the fly gives the same values in the same order. Two copies
 * rather than one with a flag, so neither tests the flag per element. */
#define DEFINE_PAIRWISE(name, ELEM)                                                          \
	static double name(const double *v, size_t n, double mean)                           \
	{                                                                                    \
		(void)mean;                                                                  \
		if (n < 8) {                                                                 \
			double res = -0.0;                                                   \
			for (size_t i = 0; i < n; i++)                                       \
				res += ELEM(v[i]);                                           \
			return res;                                                          \
		}                                                                            \
		if (n <= PW_BLOCKSIZE) {                                                     \
			double r[8];                                                         \
			size_t i;                                                            \
			for (int j = 0; j < 8; j++)                                          \
				r[j] = ELEM(v[j]);                                           \
			for (i = 8; i < n - (n % 8); i += 8)                                 \
				for (int j = 0; j < 8; j++)                                  \
					r[j] += ELEM(v[i + (size_t)j]);                      \
			double res = ((r[0] + r[1]) + (r[2] + r[3])) +                       \
			             ((r[4] + r[5]) + (r[6] + r[7]));                        \
			for (; i < n; i++)                                                   \
				res += ELEM(v[i]);                                           \
			return res;                                                          \
		}                                                                            \
		size_t n2 = n / 2;                                                           \
		n2 -= n2 % 8;                                                                \
		return name(v, n2, mean) + name(v + n2, n - n2, mean);                       \
	}

#define PW_VALUE(x) (x)
#define PW_SQDEV(x) (((x) - mean) * ((x) - mean))
DEFINE_PAIRWISE(pairwise_sum, PW_VALUE)
DEFINE_PAIRWISE(pairwise_sqdev, PW_SQDEV)

static double chunked_sum(const double *v, size_t n, const double *mean)
{
	double acc = 0.0;
	for (size_t off = 0; off < n; off += NP_BUFSIZE) {
		size_t len = n - off < NP_BUFSIZE ? n - off : NP_BUFSIZE;
		acc += mean ? pairwise_sqdev(v + off, len, *mean) : pairwise_sum(v + off, len, 0.0);
	}
	return acc;
}

double ng_np_sum(const double *v, size_t n) { return chunked_sum(v, n, NULL); }

double ng_np_mean(const double *v, size_t n) { return chunked_sum(v, n, NULL) / (double)n; }

double ng_np_std_over_mean(const double *v, size_t n)
{
	double mean = ng_np_mean(v, n);
	double var = chunked_sum(v, n, &mean) / (double)n;
	return sqrt(var) / mean;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

static inline double min2(double a, double b) { return b < a ? b : a; }
static inline double max2(double a, double b) { return b > a ? b : a; }

static inline double median3(const double *a, size_t lo, size_t hi)
{
	double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
	return max2(min2(x, y), min2(max2(x, y), z));
}

/* Moves the elements of a[lo, hi) that are below p (or_equal: not above p) to
 * the front and returns where the rest begins. Branch free: every element is
 * swapped, and the comparison only decides whether the front grows, so the
 * cost does not depend on how well a branch predictor guesses random data. */
static size_t partition_below(double *a, size_t lo, size_t hi, double p, bool or_equal)
{
	size_t i = lo;
	if (or_equal) {
		for (size_t j = lo; j < hi; j++) {
			double x = a[j];
			size_t below = x <= p;
			a[j] = a[i];
			a[i] = x;
			i += below;
		}
	} else {
		for (size_t j = lo; j < hi; j++) {
			double x = a[j];
			size_t below = x < p;
			a[j] = a[i];
			a[i] = x;
			i += below;
		}
	}
	return i;
}

/* Orders x[i] and x[j], the smaller first, without a branch (minsd, maxsd).
 * Values that compare equal come out as two copies of one of them, which
 * changes nothing but, for -0.0 against 0.0, a sign that middle() drops. */
#define CX(i, j)                                                   \
	do {                                                           \
		double p_ = x[i], q_ = x[j];                               \
		x[i] = min2(p_, q_);                                       \
		x[j] = max2(p_, q_);                                       \
	} while (0)

/* Sorts a[0, m), m <= 16 and no NaN, with Batcher's odd-even merge network
 * for 16 inputs (63 compare-exchanges, padded with +inf). No branch depends
 * on the data, which for runs this short costs less than the mispredicted
 * branches of an insertion sort or of more quickselect rounds. */
static void sort_small(double *a, size_t m)
{
	double x[16] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY,
	                INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
	memcpy(x, a, m * sizeof *a);
	CX(0, 1); CX(2, 3); CX(4, 5); CX(6, 7); CX(8, 9); CX(10, 11); CX(12, 13); CX(14, 15);
	CX(0, 2); CX(1, 3); CX(4, 6); CX(5, 7); CX(8, 10); CX(9, 11); CX(12, 14); CX(13, 15);
	CX(1, 2); CX(5, 6); CX(9, 10); CX(13, 14);
	CX(0, 4); CX(1, 5); CX(2, 6); CX(3, 7); CX(8, 12); CX(9, 13); CX(10, 14); CX(11, 15);
	CX(2, 4); CX(3, 5); CX(10, 12); CX(11, 13);
	CX(1, 2); CX(3, 4); CX(5, 6); CX(9, 10); CX(11, 12); CX(13, 14);
	CX(0, 8); CX(1, 9); CX(2, 10); CX(3, 11); CX(4, 12); CX(5, 13); CX(6, 14); CX(7, 15);
	CX(4, 8); CX(5, 9); CX(6, 10); CX(7, 11);
	CX(2, 4); CX(3, 5); CX(6, 8); CX(7, 9); CX(10, 12); CX(11, 13);
	CX(1, 2); CX(3, 4); CX(5, 6); CX(7, 8); CX(9, 10); CX(11, 12); CX(13, 14);
	memcpy(a, x, m * sizeof *a);
}
#undef CX

/* Puts the k-th smallest of a[lo, hi) at a[k], smaller ones before it, larger
 * after, and returns where the sorted run that ends at k begins (a[r..k] is in
 * order). Quickselect with a median-of-three pivot and branch-free partitions
 * down to 16 values, then a sorting network; after too many rounds (an input
 * built to defeat the pivot) it sorts what is left, so it stays O(n log n). */
static size_t select_kth(double *a, size_t lo, size_t hi, size_t k)
{
	/* [lo, hi) contains index k */
	unsigned budget = 64;
	while (hi - lo > 16) {
		if (budget-- == 0) {
			qsort(a + lo, hi - lo, sizeof *a, cmp_double);
			return lo;
		}
		double p = median3(a, lo, hi);
		/* [lo, i) < p <= [i, hi), and p itself is in the second part. */
		size_t i = partition_below(a, lo, hi, p, false);
		if (i == lo) {
			/* p is the least value left: set its copies aside together,
			 * or a run of equal values would cost a round each. */
			size_t m = partition_below(a, lo, hi, p, true);
			if (k < m)
				return lo;
			lo = m;
		} else if (k < i) {
			hi = i;
		} else {
			lo = i;
		}
	}
	sort_small(a + lo, hi - lo);
	return lo;
}

/* np.median of work[0, n) once select_kth() has put k = n / 2 in place and
 * sorted work[sorted_from..k]. */
static double middle(const double *work, size_t n, size_t sorted_from)
{
	size_t k = n / 2;
	/* np.median is np.mean of the middle one or two values, and numpy 1.24's
	 * sum starts from +0.0: a middle of negative zeros comes out +0.0. */
	if (n % 2)
		return 0.0 + work[k];
	/* The lower middle is the largest element left of k: its neighbour when
	 * that is in the sorted run, else a scan. */
	double lower = work[k - 1];
	if (sorted_from >= k)
		for (size_t i = 0; i < k - 1; i++)
			lower = max2(lower, work[i]);
	return (0.0 + lower + work[k]) / 2.0;
}

double ng_np_median(const double *v, size_t n, double *work)
{
	size_t k = n / 2, lo = 0, hi = n;
	if (n > 16) { /* shorter runs go straight to the sorting network */
		/* The first round partitions while copying: below the pivot from the
		 * front of work, the rest from the back, each value stored to both
		 * ends and the comparison only choosing which end moves on. */
		double p = median3(v, 0, n);
		size_t front = 0, back = n - 1;
		for (size_t j = 0; j < n; j++) {
			double x = v[j];
			size_t below = x < p;
			work[front] = x;
			work[back] = x;
			front += below;
			back -= 1 - below;
		}
		/* front == 0 when p is the least value; then select over all of it. */
		if (front > 0) {
			if (k < front)
				hi = front;
			else
				lo = front;
		}
	} else {
		memcpy(work, v, n * sizeof *v);
	}
	return middle(work, n, select_kth(work, lo, hi, k));
}

double ng_np_median_inplace(double *work, size_t n)
{
	return middle(work, n, select_kth(work, 0, n, n / 2));
}

/* The regularized incomplete beta I_x(a, b), by its continued fraction
 * (Lentz's method), on the side of x where it converges fast. */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = fabs(d) < tiny ? tiny : d;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m;
		double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
		d = 1 + aa * d, c = 1 + aa / c;
		d = fabs(d) < tiny ? tiny : d, c = fabs(c) < tiny ? tiny : c;
		d = 1 / d, h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		d = 1 + aa * d, c = 1 + aa / c;
		d = fabs(d) < tiny ? tiny : d, c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

static double ibeta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

static double student_t_cdf(double t, double df)
{
	double tail = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t));
	return t >= 0 ? 1 - tail : tail;
}

double ng_student_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	/* Bisection: the cdf is monotone, and a quantile is wanted to a few
	 * digits, not many. */
	double lo = -1e6, hi = 1e6;
	for (int i = 0; i < 200 && hi - lo > 1e-10 * (1 + fabs(lo)); i++) {
		double mid = 0.5 * (lo + hi);
		if (student_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}
