/* What a record's samples come to, for a readable view of it. */
#include "judge/record.h"

#include <stdlib.h>

#include "core/stats.h"

void ng_samples_summarize(const cJSON *samples, ng_sample_summary *out)
{
	*out = (ng_sample_summary){0};
	size_t n = 0;
	for (const cJSON *v = cJSON_IsArray(samples) ? samples->child : NULL; v; v = v->next)
		n++;
	out->n = n;
	if (n == 0)
		return;
	double *v = malloc(n * sizeof *v), *work = malloc(n * sizeof *work);
	size_t k = 0;
	bool numeric = v && work;
	for (const cJSON *c = samples->child; c && numeric; c = c->next) {
		numeric = cJSON_IsNumber(c);
		if (numeric)
			v[k++] = c->valuedouble;
	}
	if (numeric) {
		double lo = v[0], hi = v[0];
		for (size_t i = 1; i < n; i++) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		out->numeric = true;
		out->median = ng_np_median(v, n, work);
		out->min = lo;
		out->max = hi;
	}
	free(v);
	free(work);
}
