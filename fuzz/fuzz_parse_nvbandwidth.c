/* libFuzzer target: nvbandwidth output, text or JSON, under a few run
 * statuses. Whatever the bytes, the parser returns records (or NULL only
 * when out of memory), and every record holds what the gate relies on: a
 * schema, a registered metric with its unit, finite positive samples, a
 * wrong that is null or a count (0 only beside samples), and a reason when
 * it measured nothing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/metric.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const cJSON *arr)
{
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
		abort();
	const cJSON *r;
	cJSON_ArrayForEach(r, arr)
	{
		const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
		const cJSON *metric = cJSON_GetObjectItemCaseSensitive(r, "metric");
		const cJSON *unit = cJSON_GetObjectItemCaseSensitive(r, "unit");
		const cJSON *samples = cJSON_GetObjectItemCaseSensitive(r, "samples");
		const cJSON *wrong = cJSON_GetObjectItemCaseSensitive(r, "wrong");
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(r, "reason");
		if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "nodegate/record/1") != 0)
			abort();
		if (!cJSON_IsString(metric) || strncmp(metric->valuestring, "nvbandwidth.", 12) != 0)
			abort();
		const struct ng_metric *m = ng_metric_lookup(metric->valuestring);
		if (!m || !cJSON_IsString(unit) || strcmp(unit->valuestring, m->unit) != 0)
			abort();
		if (!cJSON_IsArray(samples))
			abort();
		const cJSON *s;
		cJSON_ArrayForEach(s, samples)
		{
			if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble) || !(s->valuedouble > 0))
				abort();
		}
		if (!wrong || !(cJSON_IsNull(wrong) || (cJSON_IsNumber(wrong) && wrong->valuedouble >= 0)))
			abort();
		/* 0 wrong claims a verified measurement: never without one */
		if (cJSON_IsNumber(wrong) && wrong->valuedouble == 0 && cJSON_GetArraySize(samples) == 0)
			abort();
		if (cJSON_GetArraySize(samples) == 0 && (!cJSON_IsString(reason) || !reason->valuestring[0]))
			abort();
		/* the record must print as JSON that parses back */
		char *txt = cJSON_PrintUnformatted(r);
		if (!txt)
			abort();
		cJSON *back = cJSON_Parse(txt);
		if (!back)
			abort();
		cJSON_Delete(back);
		free(txt);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	static const ng_run_status statuses[] = {{-1, 0}, {0, 0}, {1, 0}, {-1, 9}};
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		ng_err err;
		cJSON *out = ng_parse_nvbandwidth(text, size, statuses[i], &err);
		if (out) {
			check(out);
			cJSON_Delete(out);
		}
	}
	free(text);
	return 0;
}
