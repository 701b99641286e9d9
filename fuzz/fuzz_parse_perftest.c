/* libFuzzer target: perftest output. Whatever the bytes, the parser returns
 * at least one record; every record names an rdma metric, carries only
 * finite positive samples, says why when it has none, and never claims a
 * wrong count other than 0 or null (perftest compares no payloads). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool valid_utf8(const unsigned char *s)
{
	while (*s) {
		size_t n = *s < 0x80 ? 1 : (*s & 0xE0) == 0xC0 ? 2 : (*s & 0xF0) == 0xE0 ? 3 : (*s & 0xF8) == 0xF0 ? 4 : 0;
		if (n == 0 || (n == 2 && *s < 0xC2) || (n == 4 && *s > 0xF4))
			return false;
		for (size_t k = 1; k < n; k++)
			if ((s[k] & 0xC0) != 0x80)
				return false;
		s += n;
	}
	return true;
}

static void check(const cJSON *arr)
{
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
		abort();
	for (const cJSON *r = arr->child; r; r = r->next) {
		const cJSON *schema = cJSON_GetObjectItem(r, "schema");
		const cJSON *metric = cJSON_GetObjectItem(r, "metric");
		const cJSON *unit = cJSON_GetObjectItem(r, "unit");
		const cJSON *samples = cJSON_GetObjectItem(r, "samples");
		const cJSON *wrong = cJSON_GetObjectItem(r, "wrong");
		if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "nodegate/record/1") != 0)
			abort();
		if (!cJSON_IsString(metric) || strncmp(metric->valuestring, "rdma.", 5) != 0)
			abort();
		if (!cJSON_IsString(unit) || !cJSON_IsArray(samples) || !cJSON_IsObject(cJSON_GetObjectItem(r, "detail")))
			abort();
		for (const cJSON *s = samples->child; s; s = s->next)
			if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble) || s->valuedouble <= 0)
				abort();
		if (!samples->child && !cJSON_IsString(cJSON_GetObjectItem(r, "reason")))
			abort();
		if (!(cJSON_IsNull(wrong) || (cJSON_IsNumber(wrong) && wrong->valuedouble == 0)))
			abort();
		if (cJSON_IsNull(wrong) && samples->child && !cJSON_IsString(cJSON_GetObjectItem(r, "reason")))
			abort();
		/* Evidence copied from the input must still be valid UTF-8 text. */
		char *text = cJSON_PrintUnformatted(r);
		if (!text || !valid_utf8((const unsigned char *)text))
			abort();
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	static const ng_run_status statuses[] = {{-1, 0}, {1, 0}, {-1, 9}};
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		ng_err err;
		cJSON *arr = ng_parse_perftest(text, size, statuses[i], &err);
		if (!arr)
			abort(); /* only out of memory may fail */
		check(arr);
		cJSON_Delete(arr);
	}
	free(text);
	return 0;
}
