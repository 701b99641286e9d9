/* A readable view of records: one block per record with what was measured,
 * how correctness stands, diagnostics, and why anything is missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/json.h"
#include "core/stats.h"

static void print_samples(FILE *out, const cJSON *samples)
{
	size_t n = 0;
	for (const cJSON *v = cJSON_IsArray(samples) ? samples->child : NULL; v; v = v->next)
		n++;
	if (n == 0) {
		fprintf(out, "no samples");
		return;
	}
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
		fprintf(out, "n=%zu median %.6g (min %.6g, max %.6g)", n, ng_np_median(v, n, work), lo, hi);
	} else {
		fprintf(out, "n=%zu, not all numbers", n);
	}
	free(v);
	free(work);
}

void ng_print_record_table(FILE *out, const cJSON *records)
{
	for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
		const cJSON *metric = ng_json_get(r, "metric"), *unit = ng_json_get(r, "unit");
		fprintf(out, "%s", cJSON_IsString(metric) ? metric->valuestring : "(no metric)");
		if (cJSON_IsString(unit) && unit->valuestring[0])
			fprintf(out, " [%s]", unit->valuestring);
		fprintf(out, "\n    samples  ");
		print_samples(out, ng_json_get(r, "samples"));
		const cJSON *w = ng_json_get(r, "wrong");
		fprintf(out, "\n    wrong    ");
		if (!w)
			fprintf(out, "absent (invalid)");
		else if (cJSON_IsNull(w))
			fprintf(out, "not checked");
		else if (cJSON_IsNumber(w))
			fprintf(out, "%.15g", w->valuedouble);
		else
			fprintf(out, "not a number (invalid)");
		const cJSON *diag = ng_json_get(r, "diag");
		if (cJSON_IsObject(diag)) {
			fprintf(out, "\n    diag    ");
			for (const cJSON *t = diag->child; t; t = t->next)
				fprintf(out, " %s=%s", t->string, cJSON_IsString(t) ? t->valuestring : "?");
		}
		const cJSON *outcome = ng_json_get(r, "outcome");
		if (cJSON_IsString(outcome))
			fprintf(out, "\n    outcome  %s", outcome->valuestring);
		const cJSON *reason = ng_json_get(r, "reason");
		if (cJSON_IsString(reason))
			fprintf(out, "\n    reason   %s", reason->valuestring);
		fputc('\n', out);
	}
}
