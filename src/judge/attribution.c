#include "judge/attribution.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool ng_attr_shifted(double ratio, const ng_policy *pol)
{
	return isfinite(ratio) && ratio < pol->flag_fraction;
}

static int by_field_value_node(const void *a, const void *b)
{
	const ng_attr_pair *x = a, *y = b;
	int c = strcmp(x->field, y->field);
	if (c == 0)
		c = strcmp(x->value, y->value);
	if (c == 0)
		c = x->node < y->node ? -1 : x->node > y->node;
	return c;
}

/* The median of the shifted nodes' ratios, by rank (n is small: a class's
 * nodes), without a copy to sort. */
static double shifted_median(const bool *shifted, const double *ratio, size_t n_nodes, size_t k)
{
	double lo = NAN, hi = NAN;
	size_t want_lo = (k - 1) / 2, want_hi = k / 2;
	for (size_t i = 0; i < n_nodes; i++) {
		if (!shifted[i])
			continue;
		size_t below = 0, same = 0;
		for (size_t j = 0; j < n_nodes; j++) {
			if (!shifted[j])
				continue;
			below += ratio[j] < ratio[i];
			same += ratio[j] == ratio[i];
		}
		/* ratio[i] occupies ranks below .. below + same - 1 */
		if (want_lo >= below && want_lo < below + same)
			lo = ratio[i];
		if (want_hi >= below && want_hi < below + same)
			hi = ratio[i];
	}
	return (lo + hi) / 2;
}

/* Distinct shifted and other nodes among pairs[from, to) (one value of one
 * field, sorted by node). */
static void count_sides(const ng_attr_pair *p, size_t from, size_t to, const bool *shifted,
                        size_t *s, size_t *o)
{
	*s = *o = 0;
	for (size_t i = from; i < to; i++) {
		if (i > from && p[i].node == p[i - 1].node)
			continue;
		if (shifted[p[i].node])
			(*s)++;
		else
			(*o)++;
	}
}

static size_t value_end(const ng_attr_pair *p, size_t i, size_t end)
{
	size_t k = i + 1;
	while (k < end && strcmp(p[k].value, p[i].value) == 0)
		k++;
	return k;
}

ng_attribution ng_attribute(const bool *shifted, const double *ratio, size_t n_nodes,
                            ng_attr_pair *pairs, size_t n_pairs, ng_attr_field *out, size_t cap)
{
	ng_attribution a = {.shift = NAN};
	for (size_t i = 0; i < n_nodes; i++) {
		if (shifted[i])
			a.n_shifted++;
		else
			a.n_others++;
	}
	if (a.n_shifted)
		a.shift = shifted_median(shifted, ratio, n_nodes, a.n_shifted) - 1;
	if (a.n_shifted < NG_ATTR_MIN_SHIFTED) {
		a.status = NG_ATTR_TOO_FEW_SHIFTED;
		return a;
	}
	if (a.n_others < NG_ATTR_MIN_OTHERS) {
		a.status = NG_ATTR_TOO_FEW_OTHERS;
		return a;
	}
	size_t k = 0;
	for (size_t i = 0; i < n_pairs; i++)
		if (pairs[i].field && pairs[i].value && pairs[i].node < n_nodes)
			pairs[k++] = pairs[i];
	n_pairs = k;
	qsort(pairs, n_pairs, sizeof *pairs, by_field_value_node);
	double need_in = NG_ATTR_SHIFTED_SHARE * (double)a.n_shifted;
	double allow_out = NG_ATTR_OTHERS_SHARE * (double)a.n_others;
	for (size_t f = 0; f < n_pairs;) {
		size_t end = f + 1;
		while (end < n_pairs && strcmp(pairs[end].field, pairs[f].field) == 0)
			end++;
		/* The others' commonest value of this field, for the event to say
		 * what the rest of the class runs. */
		const char *others_value = NULL;
		size_t others_best = 0;
		for (size_t v = f; v < end;) {
			size_t ve = value_end(pairs, v, end), s, o;
			count_sides(pairs, v, ve, shifted, &s, &o);
			if (o > others_best) {
				others_best = o;
				others_value = pairs[v].value;
			}
			v = ve;
		}
		for (size_t v = f; v < end;) {
			size_t ve = value_end(pairs, v, end), s, o;
			count_sides(pairs, v, ve, shifted, &s, &o);
			if ((double)s >= need_in && (double)o <= allow_out) {
				if (a.n_fields < cap)
					out[a.n_fields++] = (ng_attr_field){pairs[v].field, pairs[v].value, s, o,
					                                    others_value};
				else
					a.more_fields++;
			}
			v = ve;
		}
		f = end;
	}
	a.status = a.n_fields + a.more_fields ? NG_ATTR_NAMED : NG_ATTR_NO_SHARED_FIELD;
	return a;
}

bool ng_attr_matches(const ng_attr_field *fields, size_t n_fields, const ng_attr_pair *node_pairs,
                     size_t n_pairs)
{
	if (n_fields == 0)
		return false;
	for (size_t i = 0; i < n_fields; i++) {
		bool held = false;
		for (size_t k = 0; k < n_pairs && !held; k++)
			held = node_pairs[k].field && node_pairs[k].value &&
			       strcmp(node_pairs[k].field, fields[i].field) == 0 &&
			       strcmp(node_pairs[k].value, fields[i].value) == 0;
		if (!held)
			return false;
	}
	return true;
}

bool ng_baseline_drifted(double pinned, double rebuilt, bool higher_is_better, const ng_policy *pol,
                         double *drop)
{
	*drop = NAN;
	if (!(isfinite(pinned) && pinned > 0 && isfinite(rebuilt) && rebuilt > 0))
		return false;
	/* For a lower-is-better metric (a latency) worse is higher. */
	*drop = higher_is_better ? 1 - rebuilt / pinned : rebuilt / pinned - 1;
	return *drop > pol->drift_fraction;
}
