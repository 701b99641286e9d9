/* libFuzzer target: a record as `nodegate ingest` reads it (judge/record.h
 * ng_record_check_strict, core/json.h ng_json_find_duplicate). Either it is
 * refused with a message, or every sample is a finite number above 0, wrong
 * is a whole number of 0 or more (or null), and no object repeats a key. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "judge/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ng_err err;
	cJSON *doc = ng_json_parse(text, size, &err);
	for (int zero_ok = 0; doc && zero_ok < 2; zero_ok++) {
		err.msg[0] = '\0';
		if (ng_record_check_strict(doc, zero_ok, &err) != 0) {
			if (!err.msg[0])
				abort(); /* a refusal always says why */
			continue;
		}
		ng_strbuf path = {0};
		if (ng_json_find_duplicate(doc, &path))
			abort();
		ng_strbuf_free(&path);
		const cJSON *s = ng_json_get(doc, "samples");
		for (const cJSON *c = s ? s->child : NULL; c; c = c->next)
			if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) || c->valuedouble < 0 ||
			    (!zero_ok && c->valuedouble == 0))
				abort();
		const cJSON *w = ng_json_get(doc, "wrong");
		if (w && !cJSON_IsNull(w) &&
		    (!cJSON_IsNumber(w) || !(w->valuedouble >= 0) || w->valuedouble != floor(w->valuedouble)))
			abort();
	}
	cJSON_Delete(doc);
	free(text);
	return 0;
}
