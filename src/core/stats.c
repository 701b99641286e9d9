#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* numpy's buffered reductions hand the inner loop at most this many elements. */
#define NP_BUFSIZE 8192
#define PW_BLOCKSIZE 128

/* x[i] is v[i] when mean is NULL, else (v[i] - *mean)^2: np.std squares the
 * deviations into a temporary array and then sums it, and computing each
 * element on the fly gives the same values in the same order. */
static inline double elem(const double *v, size_t i, const double *mean)
{
	if (!mean)
		return v[i];
	double d = v[i] - *mean;
	return d * d;
}

static double pairwise(const double *v, size_t n, const double *mean)
{
	if (n < 8) {
		double res = -0.0;
		for (size_t i = 0; i < n; i++)
			res += elem(v, i, mean);
		return res;
	}
	if (n <= PW_BLOCKSIZE) {
		double r[8];
		size_t i;
		for (int j = 0; j < 8; j++)
			r[j] = elem(v, (size_t)j, mean);
		for (i = 8; i < n - (n % 8); i += 8)
			for (int j = 0; j < 8; j++)
				r[j] += elem(v, i + (size_t)j, mean);
		double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += elem(v, i, mean);
		return res;
	}
	size_t n2 = n / 2;
	n2 -= n2 % 8;
	return pairwise(v, n2, mean) + pairwise(v + n2, n - n2, mean);
}

static double chunked_sum(const double *v, size_t n, const double *mean)
{
	double acc = 0.0;
	for (size_t off = 0; off < n; off += NP_BUFSIZE) {
		size_t len = n - off < NP_BUFSIZE ? n - off : NP_BUFSIZE;
		acc += pairwise(v + off, len, mean);
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

static void swap(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

static void insertion_sort(double *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1] > x; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* Puts the k-th smallest at a[k], smaller ones before it, larger after.
 * Quickselect with a median-of-three pivot; after too many rounds (an input
 * built to defeat the pivot) it sorts what is left, so it stays O(n log n). */
static void select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* [lo, hi) contains index k */
	unsigned budget = 64;
	while (hi - lo > 16) {
		if (budget-- == 0) {
			qsort(a + lo, hi - lo, sizeof *a, cmp_double);
			return;
		}
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < a[lo])
			swap(&a[mid], &a[lo]);
		if (a[hi - 1] < a[lo])
			swap(&a[hi - 1], &a[lo]);
		if (a[hi - 1] < a[mid])
			swap(&a[hi - 1], &a[mid]);
		double pivot = a[mid];
		/* Hoare partition over [lo, hi). */
		size_t i = lo, j = hi - 1;
		for (;;) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap(&a[i], &a[j]);
			i++;
			j--;
		}
		/* Now [lo, j] <= pivot <= [j+1, hi). */
		if (k <= j)
			hi = j + 1;
		else
			lo = j + 1;
	}
	insertion_sort(a + lo, hi - lo);
}

double ng_np_median(const double *v, size_t n, double *work)
{
	memcpy(work, v, n * sizeof *v);
	return ng_np_median_inplace(work, n);
}

double ng_np_median_inplace(double *work, size_t n)
{
	size_t k = n / 2;
	select_kth(work, n, k);
	if (n % 2)
		return work[k];
	/* The lower middle is the largest element left of k. */
	double lower = work[0];
	for (size_t i = 1; i < k; i++)
		if (work[i] > lower)
			lower = work[i];
	/* np.mean of the two middle values: a sum, then a division by the count. */
	return (-0.0 + lower + work[k]) / 2.0;
}
