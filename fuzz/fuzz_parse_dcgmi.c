/* libFuzzer target for the dcgmi diag parser. For any bytes and any exit
 * status it must return exactly one well-formed dcgm.diag record, never a
 * diag a gate could read as a pass where the run cannot be trusted, and
 * print back as valid UTF-8 JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "parse/parse.h"

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static int is_str(const cJSON *v, const char *s) { return cJSON_IsString(v) && strcmp(v->valuestring, s) == 0; }

static void require(int ok)
{
	if (!ok)
		abort();
}

static int valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		if (k == 0 || i + k > n || (k == 2 && c < 0xC2))
			return 0;
		for (size_t j = 1; j < k; j++)
			if ((s[i + j] & 0xC0) != 0x80)
				return 0;
		i += k;
	}
	return 1;
}

static void check(const cJSON *arr, ng_run_status st)
{
	require(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 1);
	const cJSON *r = cJSON_GetArrayItem(arr, 0);
	require(is_str(get(r, "schema"), "nodegate/record/1"));
	require(is_str(get(r, "metric"), "dcgm.diag"));
	require(is_str(get(r, "domain"), "health"));
	const cJSON *samples = get(r, "samples");
	require(cJSON_IsArray(samples) && cJSON_GetArraySize(samples) == 0);
	require(cJSON_IsNull(get(r, "wrong")));
	const cJSON *reason = get(r, "reason");
	require(cJSON_IsString(reason) && reason->valuestring[0]);
	const cJSON *outcome = get(r, "outcome");
	require(is_str(outcome, "node") || is_str(outcome, "harness") || is_str(outcome, "clean"));
	const cJSON *detail = get(r, "detail");
	require(is_str(get(detail, "outcome"), outcome->valuestring));

	const cJSON *diag = get(r, "diag");
	int fails = 0;
	if (diag) {
		require(cJSON_IsObject(diag) && diag->child);
		for (const cJSON *d = diag->child; d; d = d->next) {
			require(is_str(d, "pass") || is_str(d, "skip") || is_str(d, "fail"));
			fails += is_str(d, "fail");
		}
	}
	/* unreadable output never gets a diag */
	if (is_str(get(detail, "format"), "none") || cJSON_IsFalse(get(detail, "complete")))
		require(!diag);
	/* clean means a diag was read and nothing in it failed */
	if (is_str(outcome, "clean"))
		require(diag && !fails && st.signal <= 0 && st.exit_status <= 0);
	/* exit statuses that void the results: harness, and no diag to pass on */
	if (st.signal > 0 || st.exit_status == 217 || st.exit_status == 204 || st.exit_status == 203)
		require(is_str(outcome, "harness") && !diag);
	if (st.exit_status == 205)
		require(is_str(outcome, "node") && (!diag || fails));
	/* 226 with a diag: a test failed on the node, or DCGM's own harness
	 * failed in a test, which then counts as not completed (skip), never
	 * as a pass */
	if (st.exit_status == 226 && diag) {
		int harness = 0;
		const cJSON *t;
		cJSON_ArrayForEach(t, get(detail, "tests")) {
			const cJSON *name = get(t, "name");
			harness += is_str(get(t, "cause"), "harness") && cJSON_IsString(name) &&
			           is_str(get(diag, name->valuestring), "skip");
		}
		require((fails > 0 && is_str(outcome, "node")) ||
		        (harness > 0 && is_str(outcome, "harness")));
	}

	char *out = cJSON_PrintUnformatted(arr);
	require(out != NULL);
	size_t n = strlen(out);
	require(valid_utf8((const unsigned char *)out, n));
	ng_err err;
	cJSON *back = ng_json_parse(out, n, &err);
	require(back != NULL);
	cJSON_Delete(back);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	static const ng_run_status statuses[] = {{-1, 0}, {0, 0}, {226, 0}, {205, 0}, {217, 0}, {-1, 9}};
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		ng_err err;
		cJSON *arr = ng_parse_dcgmi(buf, size, statuses[i], &err);
		require(arr != NULL);
		check(arr, statuses[i]);
		cJSON_Delete(arr);
	}
	free(buf);
	return 0;
}
