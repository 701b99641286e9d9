/* A readable view of records: one block per record with what was measured,
 * how correctness stands, diagnostics, and why anything is missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/json.h"

static void print_samples(FILE *out, const cJSON *samples)
{
	ng_sample_summary s;
	ng_samples_summarize(samples, &s);
	if (s.n == 0)
		fprintf(out, "no samples");
	else if (s.numeric)
		fprintf(out, "n=%zu median %.6g (min %.6g, max %.6g)", s.n, s.median, s.min, s.max);
	else
		fprintf(out, "n=%zu, not all numbers", s.n);
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
