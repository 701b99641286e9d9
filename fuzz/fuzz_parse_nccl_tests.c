/* libFuzzer target: nccl-tests output. Whatever the bytes, the parser
 * returns at least one record; every record has a schema, a registered
 * nccl.* metric, finite positive samples (or a reason when it has none), a
 * wrong that is null or a count, and prints as JSON that reads back. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/metric.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_record(const cJSON *rec)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(rec, "schema");
	const cJSON *metric = cJSON_GetObjectItemCaseSensitive(rec, "metric");
	const cJSON *unit = cJSON_GetObjectItemCaseSensitive(rec, "unit");
	const cJSON *samples = cJSON_GetObjectItemCaseSensitive(rec, "samples");
	const cJSON *wrong = cJSON_GetObjectItemCaseSensitive(rec, "wrong");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(rec, "reason");
	const cJSON *tool = cJSON_GetObjectItemCaseSensitive(rec, "tool");
	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "nodegate/record/1") != 0)
		abort();
	if (!cJSON_IsString(metric) || strncmp(metric->valuestring, "nccl.", 5) != 0 ||
	    !ng_metric_lookup(metric->valuestring))
		abort();
	if (!cJSON_IsString(unit) || strcmp(unit->valuestring, "GB/s") != 0)
		abort();
	if (!cJSON_IsArray(samples))
		abort();
	const cJSON *s;
	cJSON_ArrayForEach(s, samples) if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble) || s->valuedouble <= 0) abort();
	if (cJSON_GetArraySize(samples) == 0 && (!cJSON_IsString(reason) || !reason->valuestring[0]))
		abort(); /* nothing measured must say why */
	if (!wrong || !(cJSON_IsNull(wrong) || (cJSON_IsNumber(wrong) && isfinite(wrong->valuedouble) &&
	                                        wrong->valuedouble >= 0)))
		abort();
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(tool, "name");
	if (!cJSON_IsString(name) || strcmp(name->valuestring, "nccl-tests") != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	static const ng_run_status statuses[] = {{-1, 0}, {0, 0}, {1, 0}, {-1, 9}};
	for (size_t k = 0; k < sizeof statuses / sizeof statuses[0]; k++) {
		ng_err err = {0};
		cJSON *out = ng_parse_nccl_tests(text, size, statuses[k], &err);
		if (!out) {
			if (!err.msg[0])
				abort(); /* NULL only for out of memory, and then it says so */
			continue;
		}
		if (!cJSON_IsArray(out) || cJSON_GetArraySize(out) < 1)
			abort();
		const cJSON *rec;
		cJSON_ArrayForEach(rec, out) check_record(rec);
		/* Whatever bytes came in, what goes out is JSON that reads back. */
		char *printed = cJSON_PrintUnformatted(out);
		if (!printed)
			abort();
		cJSON *back = cJSON_Parse(printed);
		if (!back || cJSON_GetArraySize(back) != cJSON_GetArraySize(out))
			abort();
		cJSON_Delete(back);
		free(printed);
		cJSON_Delete(out);
	}
	free(text);
	return 0;
}
