/* The JSON helpers: parsing that refuses what cannot be represented, and
 * lookups, truthiness and equality the way Python's json module and dict
 * read the same text (the reference rule's semantics). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/strbuf.h"

static cJSON *parse(const char *text, ng_err *err)
{
	return ng_json_parse(text, strlen(text), err);
}

static cJSON *must_parse(const char *text)
{
	ng_err err = {0};
	cJSON *v = parse(text, &err);
	if (!v)
		fail_msg("did not parse: %s: %.200s", err.msg, text);
	return v;
}

static void must_refuse(const char *text, size_t len, const char *msg_part)
{
	ng_err err = {0};
	cJSON *v = ng_json_parse(text, len, &err);
	if (v) {
		cJSON_Delete(v);
		fail_msg("accepted: %.200s", text);
	}
	if (msg_part && !strstr(err.msg, msg_part))
		fail_msg("error \"%s\" does not say \"%s\"", err.msg, msg_part);
}

/* ---- ng_json_parse ---------------------------------------------------------------- */

static void test_parse_valid(void **state)
{
	(void)state;
	const char *ok[] = {
		"{\"a\":1}", "[1,2,3]", "1", "-0", "2.5e-3", "\"s\"", "null", "true", "false", "{}", "[]",
		" \t\r\n{\"a\" : [ 1 , {\"b\":null} ] }\n ", "\"\\u00e9\\n\\\"\"", "1e400",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		cJSON_Delete(must_parse(ok[i]));
	cJSON *v = must_parse("  {\"a\": [1, 2.5, \"x\"]}  ");
	assert_true(cJSON_IsObject(v));
	assert_int_equal(cJSON_GetArraySize(ng_json_get(v, "a")), 3);
	cJSON_Delete(v);
}

static void test_parse_trailing_garbage(void **state)
{
	(void)state;
	const char *bad[] = {"{\"a\":1} x", "1 2", "{}}", "[1]]", "null,", "\"a\"\"b\"", "{} //"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		must_refuse(bad[i], strlen(bad[i]), "not valid JSON");
	/* the offset points at the garbage */
	ng_err err = {0};
	assert_null(parse("{\"a\":1}   x", &err));
	assert_non_null(strstr(err.msg, "x"));
}

static void test_parse_invalid(void **state)
{
	(void)state;
	const char *bad[] = {"{", "[1,", "{\"a\"}", "{\"a\":}", "[1,]", "{\"a\":1,}", "tru", "nul",
	                     "'a'", "{a:1}", "NaN", "Infinity", "-Infinity", "\"\\x\"", "[1 2]", "\"abc"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		must_refuse(bad[i], strlen(bad[i]), "not valid JSON");
}

/* What cJSON alone would let through and Python's json module refuses (the
 * reference could not read such a record at all). Each was checked with
 * json.loads in /usr/bin/python3. */
static void test_parse_python_strictness(void **state)
{
	(void)state;
	const char *numbers[] = {"01", "-01", "1.", "1.e5", "-.5", "1e", "1e+", "-", "[01]",
	                         "{\"a\":00}", "1_000", "-0.e1", "[1.]", "{\"w\":0.}"};
	for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
		must_refuse(numbers[i], strlen(numbers[i]), "not valid JSON");
	const char *other[] = {".5", "+1", "0x1"};
	for (size_t i = 0; i < sizeof other / sizeof *other; i++)
		must_refuse(other[i], strlen(other[i]), "not valid JSON");
	/* raw control characters inside strings */
	must_refuse("\"a\tb\"", 5, "control character");
	must_refuse("\"a\nb\"", 5, "control character");
	must_refuse("{\"k\x01\":1}", 8, "control character");
	/* white space other than space, tab, CR and LF, and a byte order mark */
	must_refuse("\x0b{}", 3, "white space");
	must_refuse("{}\x0c", 3, "white space");
	must_refuse("[1,\x1f" "2]", 5, "white space");
	must_refuse("\xEF\xBB\xBF{}", 5, "byte order mark");
	/* ... while what Python reads is read */
	const char *ok[] = {"1E5", "1e-5", "-0", "0.0e0", "-0.5E+10", "[1,2 ,3 ]\r\n", "\"\x7f\"",
	                    "\"\\ud83d\\ude00\"", "\"tab\\tescaped\"", "[0,10,100]"};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		cJSON_Delete(must_parse(ok[i]));
	/* refused although Python reads them: not representable faithfully */
	const char *unrepresentable[] = {"NaN", "-Infinity", "Infinity", "\"\\ud800\"", "\"\\udc00\""};
	for (size_t i = 0; i < sizeof unrepresentable / sizeof *unrepresentable; i++)
		must_refuse(unrepresentable[i], strlen(unrepresentable[i]), NULL);
}

static void test_parse_empty_and_whitespace(void **state)
{
	(void)state;
	must_refuse("", 0, "empty input");
	must_refuse("   ", 3, "empty input");
	must_refuse(" \t\r\n ", 5, "empty input");
	/* whitespace then garbage is not "empty" */
	must_refuse("  x", 3, "not valid JSON");
}

static void test_parse_nul_escape_refused(void **state)
{
	(void)state;
	/* "a\u0000b" would be "a" to C: refused */
	must_refuse("\"a\\u0000b\"", strlen("\"a\\u0000b\""), "\\u0000");
	must_refuse("{\"\\u0000\":1}", strlen("{\"\\u0000\":1}"), "\\u0000");
	must_refuse("[\"x\",{\"k\":[\"\\u0000\"]}]", strlen("[\"x\",{\"k\":[\"\\u0000\"]}]"), "\\u0000");
	/* three backslashes: an escaped backslash, then the escape \u0000 */
	must_refuse("\"\\\\\\u0000\"", strlen("\"\\\\\\u0000\""), "\\u0000");
}

static void test_parse_escaped_backslash_then_u0000_accepted(void **state)
{
	(void)state;
	/* JSON "\\u0000" is a backslash followed by the letters u0000 */
	cJSON *v = must_parse("\"\\\\u0000\"");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "\\u0000");
	cJSON_Delete(v);
	v = must_parse("{\"k\\\\u0000\":\"\\\\\\\\u0000\"}"); /* key k\u0000, value \\u0000 */
	assert_non_null(ng_json_get(v, "k\\u0000"));
	assert_string_equal(ng_json_get(v, "k\\u0000")->valuestring, "\\\\u0000");
	cJSON_Delete(v);
	/* other escapes of small code points are fine */
	v = must_parse("\"a\\u0001b\\u0010\"");
	assert_int_equal(strlen(v->valuestring), 4);
	cJSON_Delete(v);
}

static void test_parse_raw_nul_refused(void **state)
{
	(void)state;
	const char text[] = "{\"a\":\"x\0y\"}";
	ng_err err = {0};
	assert_null(ng_json_parse(text, sizeof text - 1, &err));
	assert_non_null(strstr(err.msg, "NUL byte at offset 7"));
	const char lead[] = "\0{}";
	assert_null(ng_json_parse(lead, sizeof lead - 1, &err));
	assert_non_null(strstr(err.msg, "offset 0"));
	/* a NUL after the value, inside len, is refused too */
	const char trail[] = "{}\0";
	assert_null(ng_json_parse(trail, sizeof trail - 1, &err));
}

static void test_parse_deep_nesting_refused(void **state)
{
	(void)state;
	size_t depth = 10000;
	char *text = malloc(2 * depth + 1);
	assert_non_null(text);
	memset(text, '[', depth);
	memset(text + depth, ']', depth);
	text[2 * depth] = '\0';
	must_refuse(text, 2 * depth, NULL);
	/* unbalanced: only opening brackets */
	text[depth] = '\0';
	must_refuse(text, depth, NULL);
	/* objects nest the same way */
	size_t n = 0;
	for (size_t i = 0; i < 3000; i++)
		n += (size_t)sprintf(text + n, "{\"a\":");
	must_refuse(text, n, NULL);
	free(text);

	/* a modest depth is fine */
	char ok[401];
	memset(ok, '[', 200);
	memset(ok + 200, ']', 200);
	ok[400] = '\0';
	cJSON_Delete(must_parse(ok));
}

static void test_parse_ten_megabyte_line(void **state)
{
	(void)state;
	size_t body = 10 * 1024 * 1024;
	char *text = malloc(body + 32);
	assert_non_null(text);
	size_t n = (size_t)sprintf(text, "{\"note\":\"");
	memset(text + n, 'x', body);
	n += body;
	n += (size_t)sprintf(text + n, "\",\"wrong\":0}");
	cJSON *v = ng_json_parse(text, n, NULL);
	assert_non_null(v);
	assert_int_equal(strlen(ng_json_get(v, "note")->valuestring), body);
	assert_true(cJSON_IsNumber(ng_json_get(v, "wrong")));
	cJSON_Delete(v);

	/* and a megabyte of numbers */
	n = (size_t)sprintf(text, "[");
	while (n < body / 10)
		n += (size_t)sprintf(text + n, "240.125,");
	n += (size_t)sprintf(text + n, "1]");
	v = ng_json_parse(text, n, NULL);
	assert_non_null(v);
	assert_int_equal(cJSON_GetArraySize(v), (int)((n - 3) / 8 + 1));
	cJSON_Delete(v);
	free(text);
}

/* ---- ng_json_get ------------------------------------------------------------------ */

static void test_get_last_wins_case_sensitive(void **state)
{
	(void)state;
	cJSON *v = must_parse("{\"a\":1,\"A\":2,\"a\":3,\"b\":{\"a\":4}}");
	assert_true(ng_json_get(v, "a")->valuedouble == 3);
	assert_true(ng_json_get(v, "A")->valuedouble == 2);
	assert_null(ng_json_get(v, "c"));
	assert_null(ng_json_get(v, "B"));
	assert_null(ng_json_get(v, "a "));
	assert_null(ng_json_get(v, ""));
	/* one level only */
	assert_true(ng_json_get(ng_json_get(v, "b"), "a")->valuedouble == 4);
	cJSON_Delete(v);

	v = must_parse("{\"\":5,\"x\":null,\"x\":[]}");
	assert_true(ng_json_get(v, "")->valuedouble == 5);
	assert_true(cJSON_IsArray(ng_json_get(v, "x")));
	cJSON_Delete(v);

	/* not an object: nothing */
	v = must_parse("[{\"a\":1}]");
	assert_null(ng_json_get(v, "a"));
	cJSON_Delete(v);
	assert_null(ng_json_get(NULL, "a"));
	v = must_parse("\"a\"");
	assert_null(ng_json_get(v, "a"));
	cJSON_Delete(v);
}

/* ---- ng_json_truthy ----------------------------------------------------------------- */

static void test_truthy_every_type(void **state)
{
	(void)state;
	struct {
		const char *text;
		bool truthy;
	} cases[] = {
		{"null", false},  {"false", false}, {"true", true},     {"0", false},
		{"-0", false},    {"0.0", false},   {"-0.0", false},    {"0e10", false},
		{"1", true},      {"-1", true},     {"1e-300", true},   {"1e-400", false},
		{"1e400", true},  {"\"\"", false},  {"\"0\"", true},    {"\" \"", true},
		{"\"false\"", true}, {"[]", false}, {"[0]", true},      {"[[]]", true},
		{"{}", false},    {"{\"a\":null}", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *v = must_parse(cases[i].text);
		if (ng_json_truthy(v) != cases[i].truthy)
			fail_msg("bool(%s) should be %d", cases[i].text, cases[i].truthy);
		cJSON_Delete(v);
	}
	assert_false(ng_json_truthy(NULL));
	/* bool(float('nan')) is True in Python */
	cJSON *nan = cJSON_CreateNumber(NAN);
	assert_true(ng_json_truthy(nan));
	cJSON_Delete(nan);
}

/* ---- ng_json_equal and ng_json_canonical ------------------------------------------------ */

static char *canon(const cJSON *v)
{
	ng_strbuf b = {0};
	ng_json_canonical(v, &b);
	assert_false(b.oom);
	return b.s ? b.s : strdup("");
}

/* Whether a and b are equal by ng_json_equal, and their canonical texts agree
 * with that, both ways round. */
static void expect_equal(const char *a, const char *b, bool want)
{
	cJSON *x = must_parse(a), *y = must_parse(b);
	bool eq = ng_json_equal(x, y), eq2 = ng_json_equal(y, x);
	char *cx = canon(x), *cy = canon(y);
	bool ceq = strcmp(cx, cy) == 0;
	if (eq != want || eq2 != want || ceq != want)
		fail_msg("%s == %s: equal %d/%d, canonical %s vs %s, want %d", a, b, eq, eq2, cx, cy, want);
	free(cx);
	free(cy);
	cJSON_Delete(x);
	cJSON_Delete(y);
}

static void test_equal_numbers(void **state)
{
	(void)state;
	expect_equal("1", "1.0", true);
	expect_equal("1", "true", true);
	expect_equal("1.0", "true", true);
	expect_equal("1", "1e0", true);
	expect_equal("0", "false", true);
	expect_equal("0", "-0", true);
	expect_equal("-0", "-0.0", true);
	expect_equal("0.0", "false", true);
	expect_equal("0.1", "0.1000000000000000055511151231257827", true);
	expect_equal("1e400", "1e401", true); /* both inf, and inf == inf */
	expect_equal("-1e400", "1e400", false);
	expect_equal("1", "2", false);
	expect_equal("true", "false", false);
	expect_equal("2", "true", false);
	expect_equal("1", "\"1\"", false);
	expect_equal("0", "null", false);
	expect_equal("false", "null", false);
	expect_equal("0", "\"\"", false);
	expect_equal("0", "[]", false);
	expect_equal("null", "null", true);
}

/* Python keeps integer literals exactly and compares int with float by
 * exact value. */
static void test_equal_big_integers(void **state)
{
	(void)state;
	expect_equal("10000000000000000000000", "1e22", true);
	expect_equal("-10000000000000000000000", "-1e22", true);
	expect_equal("10000000000000000000000", "10000000000000000000000.0", true);
	expect_equal("9007199254740992", "9007199254740992.0", true);
	expect_equal("9007199254740993", "9007199254740992", false);
	expect_equal("9007199254740993", "9007199254740992.0", false);
	expect_equal("9007199254740993", "9007199254740993.0", false); /* the float is 2**53 */
	expect_equal("9007199254740993", "9007199254740993", true);
	expect_equal("12345678901234567890", "12345678901234567891", false);
	expect_equal("[12345678901234567890]", "[12345678901234567890]", true);
	expect_equal("{\"a\":9007199254740993}", "{\"a\":9007199254740992}", false);
	expect_equal("1234567890123456", "1234567890123456.0", true);
	expect_equal("9007199254740993", "true", false);
	char big[512];
	snprintf(big, sizeof big, "1%0400d", 0);
	expect_equal(big, "1e400", false);
	expect_equal(big, big, true);

	/* ng_json_big_integer: the literal of a 16-digit or longer integer */
	cJSON *v = must_parse("[9007199254740993,-12345678901234567,123456789012345,"
	                      "1234567890123456.0,1e22,\"12345678901234567\",true]");
	assert_string_equal(ng_json_big_integer(cJSON_GetArrayItem(v, 0)), "9007199254740993");
	assert_string_equal(ng_json_big_integer(cJSON_GetArrayItem(v, 1)), "-12345678901234567");
	for (int i = 2; i < 7; i++)
		assert_null(ng_json_big_integer(cJSON_GetArrayItem(v, i)));
	assert_null(ng_json_big_integer(NULL));
	cJSON_Delete(v);
}

static void test_equal_strings(void **state)
{
	(void)state;
	expect_equal("\"a\"", "\"a\"", true);
	expect_equal("\"a\"", "\"A\"", false);
	expect_equal("\"a\"", "\"a \"", false);
	expect_equal("\"\"", "\"\"", true);
	expect_equal("\"\\u0041\"", "\"A\"", true);
	expect_equal("\"\\u00e9\"", "\"\xc3\xa9\"", true);
	expect_equal("\"a\\\"b\"", "\"a\\u0022b\"", true);
	expect_equal("\"a\\\\b\"", "\"a/b\"", false);
	expect_equal("\"\\/\"", "\"/\"", true);
	expect_equal("\"null\"", "null", false);
	expect_equal("\"true\"", "true", false);
	/* a string cannot imitate a canonical number or container */
	expect_equal("\"[1]\"", "[1]", false);
	expect_equal("\"{}\"", "{}", false);
}

static void test_equal_arrays(void **state)
{
	(void)state;
	expect_equal("[]", "[]", true);
	expect_equal("[1,[2,3]]", "[1.0,[2,3.0]]", true);
	expect_equal("[true,[false]]", "[1,[0]]", true);
	expect_equal("[1,2]", "[2,1]", false);
	expect_equal("[1,2]", "[1,2,3]", false);
	expect_equal("[1,2,3]", "[1,2]", false);
	expect_equal("[]", "{}", false);
	expect_equal("[null]", "[]", false);
	expect_equal("[[]]", "[]", false);
	expect_equal("[\"a,b\"]", "[\"a\",\"b\"]", false);
}

static void test_equal_objects(void **state)
{
	(void)state;
	expect_equal("{}", "{}", true);
	expect_equal("{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", true);
	expect_equal("{\"a\":1,\"b\":2}", "{\"b\":2.0,\"a\":true}", true);
	expect_equal("{\"a\":1,\"a\":2}", "{\"a\":2}", true);
	expect_equal("{\"a\":1,\"a\":2}", "{\"a\":1}", false);
	expect_equal("{\"a\":1,\"b\":2,\"a\":3}", "{\"b\":2,\"a\":3}", true);
	expect_equal("{\"a\":1}", "{\"a\":1,\"b\":2}", false);
	expect_equal("{\"a\":1,\"b\":2}", "{\"a\":1,\"c\":2}", false);
	expect_equal("{\"a\":null}", "{}", false);
	expect_equal("{\"a\":null}", "{\"b\":null}", false);
	expect_equal("{\"a\":{\"x\":[1,{\"y\":true}]}}", "{\"a\":{\"x\":[1.0,{\"y\":1}]}}", true);
	expect_equal("{\"a\":{\"x\":[1,{\"y\":true}]}}", "{\"a\":{\"x\":[1.0,{\"y\":2}]}}", false);
	expect_equal("{\"A\":1}", "{\"a\":1}", false);
	/* keys that need escaping */
	expect_equal("{\"a\\\"b\":1,\"c\\\\\":2}", "{\"c\\\\\":2,\"a\\u0022b\":1}", true);
	/* same number of members (with duplicates) but different keys */
	expect_equal("{\"a\":1,\"a\":1,\"b\":1}", "{\"a\":1,\"b\":1,\"c\":1}", false);
}

/* Objects past 32 members take the sorted path; build pairs of them. */
static char *big_object(int n_keys, int first, int step, int dup_every, int value_base)
{
	ng_strbuf b = {0};
	ng_strbuf_addc(&b, '{');
	int written = 0;
	for (int i = 0; i < n_keys; i++) {
		int k = (first + i * step) % n_keys;
		if (written++)
			ng_strbuf_addc(&b, ',');
		/* a stale value first, then the real one later: last wins */
		if (dup_every && k % dup_every == 0)
			ng_strbuf_printf(&b, "\"key%03d\":\"stale\",", k);
		ng_strbuf_printf(&b, "\"key%03d\":%d", k, value_base + k);
	}
	ng_strbuf_addc(&b, '}');
	assert_false(b.oom);
	return b.s;
}

static void test_equal_large_objects(void **state)
{
	(void)state;
	/* 40 keys in order vs 40 keys shuffled (step 7 is coprime to 40), with
	 * duplicates in one of them */
	char *a = big_object(40, 0, 1, 0, 0);
	char *b = big_object(40, 3, 7, 5, 0);
	expect_equal(a, b, true);
	char *c = big_object(40, 3, 7, 3, 1); /* every value different */
	expect_equal(a, c, false);
	char *d = big_object(39, 0, 1, 0, 0); /* one key fewer */
	expect_equal(a, d, false);
	free(a);
	free(b);
	free(c);
	free(d);

	/* 100 members, all the same key: equal to that key's last value */
	ng_strbuf s = {0};
	ng_strbuf_addc(&s, '{');
	for (int i = 0; i < 100; i++)
		ng_strbuf_printf(&s, "%s\"k\":%d", i ? "," : "", i);
	ng_strbuf_addc(&s, '}');
	expect_equal(s.s, "{\"k\":99}", true);
	expect_equal(s.s, "{\"k\":0}", false);
	ng_strbuf_free(&s);

	/* 33 distinct keys against the same 33 plus a duplicate of one whose
	 * last value differs */
	ng_strbuf x = {0}, y = {0};
	ng_strbuf_addc(&x, '{');
	ng_strbuf_addc(&y, '{');
	for (int i = 0; i < 33; i++) {
		ng_strbuf_printf(&x, "%s\"k%02d\":%d", i ? "," : "", i, i);
		ng_strbuf_printf(&y, "%s\"k%02d\":%d", i ? "," : "", i, i);
	}
	ng_strbuf_adds(&x, "}");
	ng_strbuf_adds(&y, ",\"k05\":6}");
	expect_equal(x.s, y.s, false);
	ng_strbuf_free(&x);
	ng_strbuf_free(&y);
}

static void test_equal_absent_is_null(void **state)
{
	(void)state;
	cJSON *null = must_parse("null"), *zero = must_parse("0");
	assert_true(ng_json_equal(NULL, NULL));
	assert_true(ng_json_equal(NULL, null));
	assert_true(ng_json_equal(null, NULL));
	assert_false(ng_json_equal(NULL, zero));
	assert_false(ng_json_equal(zero, NULL));
	char *c = canon(NULL);
	assert_string_equal(c, "null");
	free(c);
	cJSON_Delete(null);
	cJSON_Delete(zero);
}

static void test_canonical_text(void **state)
{
	(void)state;
	struct {
		const char *in, *out;
	} cases[] = {
		{"1", "1"},
		{"1.0", "1"},
		{"true", "1"},
		{"false", "0"},
		{"-0", "0"},
		{"-0.0", "0"},
		{"null", "null"},
		{"\"a\\\"b\\\\c\\n\"", "\"a\\\"b\\\\c\\n\""},
		{"[1, true, [ ] ,{ }]", "[1,1,[],{}]"},
		{"{\"b\":1,\"a\":[2.0],\"b\":3}", "{\"a\":[2],\"b\":3}"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cJSON *v = must_parse(cases[i].in);
		char *c = canon(v);
		if (strcmp(c, cases[i].out) != 0)
			fail_msg("canonical(%s) = %s, want %s", cases[i].in, c, cases[i].out);
		free(c);
		cJSON_Delete(v);
	}
	/* canonical appends */
	ng_strbuf b = {0};
	ng_strbuf_adds(&b, "x=");
	cJSON *v = must_parse("[1]");
	ng_json_canonical(v, &b);
	assert_string_equal(b.s, "x=[1]");
	ng_strbuf_free(&b);
	cJSON_Delete(v);
}

/* ---- ng_json_each_member ----------------------------------------------------------- */

struct collected {
	char keys[64][16];
	double values[64];
	size_t n;
};

static void collect(const cJSON *m, void *ctx)
{
	struct collected *c = ctx;
	assert_true(c->n < 64);
	snprintf(c->keys[c->n], sizeof c->keys[c->n], "%s", m->string);
	c->values[c->n++] = m->valuedouble;
}

static void test_each_member_dict_semantics(void **state)
{
	(void)state;
	/* small object: the members a dict would hold, each with its last value */
	cJSON *v = must_parse("{\"a\":1,\"b\":2,\"a\":3,\"c\":4,\"b\":5}");
	struct collected c = {0};
	ng_json_each_member(v, collect, &c);
	assert_int_equal(c.n, 3);
	double sum = 0;
	for (size_t i = 0; i < c.n; i++) {
		if (strcmp(c.keys[i], "a") == 0)
			assert_true(c.values[i] == 3);
		else if (strcmp(c.keys[i], "b") == 0)
			assert_true(c.values[i] == 5);
		else
			assert_string_equal(c.keys[i], "c");
		sum += c.values[i];
	}
	assert_true(sum == 12);
	cJSON_Delete(v);

	/* large object (sorted path): 40 keys, each written twice */
	ng_strbuf s = {0};
	ng_strbuf_addc(&s, '{');
	for (int i = 0; i < 40; i++)
		ng_strbuf_printf(&s, "%s\"k%02d\":%d", i ? "," : "", i, -1);
	for (int i = 0; i < 40; i++)
		ng_strbuf_printf(&s, ",\"k%02d\":%d", i, i);
	ng_strbuf_addc(&s, '}');
	v = must_parse(s.s);
	ng_strbuf_free(&s);
	struct collected big = {0};
	ng_json_each_member(v, collect, &big);
	assert_int_equal(big.n, 40);
	for (size_t i = 0; i < big.n; i++) {
		int k = atoi(big.keys[i] + 1);
		assert_true(big.values[i] == k);
	}
	cJSON_Delete(v);

	/* not an object: nothing */
	v = must_parse("[1,2]");
	struct collected none = {0};
	ng_json_each_member(v, collect, &none);
	assert_int_equal(none.n, 0);
	cJSON_Delete(v);
}

/* ---- ng_json_is_integer_literal ------------------------------------------------------- */

/* Whether the number at path (object key, or "[i]" for an array index) in
 * text was written as an integer literal. */
static bool int_lit(const char *text, const char *key)
{
	cJSON *root = must_parse(text);
	const cJSON *item = ng_json_get(root, key);
	assert_non_null(item);
	bool r = ng_json_is_integer_literal(text, strlen(text), root, item);
	cJSON_Delete(root);
	return r;
}

static void test_integer_literal(void **state)
{
	(void)state;
	assert_true(int_lit("{\"n\":2}", "n"));
	assert_false(int_lit("{\"n\":2.0}", "n"));
	assert_false(int_lit("{\"n\":2e0}", "n"));
	assert_false(int_lit("{\"n\":2E0}", "n"));
	assert_false(int_lit("{\"n\":2e+0}", "n"));
	assert_true(int_lit("{\"n\":-0}", "n"));
	assert_false(int_lit("{\"n\":-0.0}", "n"));
	assert_true(int_lit("{\"n\":-12}", "n"));
	assert_true(int_lit("{\"n\" : \t 7 }", "n"));

	/* huge literals: an integer stays one, an exponent does not */
	char text[512];
	snprintf(text, sizeof text, "{\"n\":1%0400d}", 0);
	assert_true(int_lit(text, "n"));
	assert_false(int_lit("{\"n\":1e400}", "n"));

	/* numbers inside strings and keys are not literals */
	assert_true(int_lit("{\"s\":\"1.5 and 2e3\",\"n\":4}", "n"));
	assert_false(int_lit("{\"s\":\"4\",\"n\":4.5}", "n"));
	assert_true(int_lit("{\"s\":\"x\\\"1.5\\\" 3\",\"n\":4}", "n"));
	assert_false(int_lit("{\"s\":\"x\\\"1\\\" 3\",\"n\":4.5}", "n"));
	assert_true(int_lit("{\"s\":\"\\\\\",\"n\":4}", "n"));
	assert_false(int_lit("{\"s\":\"\\\\\",\"n\":4.5}", "n"));
	assert_true(int_lit("{\"s\":\"\\\\\\\"2.5\",\"n\":4}", "n"));
	assert_true(int_lit("{\"1.5\":7,\"n\":8}", "1.5"));
	assert_true(int_lit("{\"1.5\":7,\"n\":8}", "n"));
	assert_true(int_lit("{\"s\":\"\\u0031.5\",\"n\":4}", "n"));

	/* the right number among several, in nested containers */
	const char *doc = "{\"a\":[1,2.5,{\"b\":3}],\"c\":-4e1,\"d\":5,\"e\":[[6.0]],\"f\":7}";
	cJSON *root = must_parse(doc);
	const cJSON *a = ng_json_get(root, "a");
	size_t len = strlen(doc);
	assert_true(ng_json_is_integer_literal(doc, len, root, cJSON_GetArrayItem(a, 0)));
	assert_false(ng_json_is_integer_literal(doc, len, root, cJSON_GetArrayItem(a, 1)));
	assert_true(ng_json_is_integer_literal(doc, len, root,
	                                       ng_json_get(cJSON_GetArrayItem(a, 2), "b")));
	assert_false(ng_json_is_integer_literal(doc, len, root, ng_json_get(root, "c")));
	assert_true(ng_json_is_integer_literal(doc, len, root, ng_json_get(root, "d")));
	const cJSON *e = ng_json_get(root, "e");
	assert_false(ng_json_is_integer_literal(doc, len, root, cJSON_GetArrayItem(e->child, 0)));
	assert_true(ng_json_is_integer_literal(doc, len, root, ng_json_get(root, "f")));
	/* not a number, or not in this document */
	assert_false(ng_json_is_integer_literal(doc, len, root, a));
	cJSON *other = must_parse("{\"d\":5}");
	assert_false(ng_json_is_integer_literal(doc, len, root, ng_json_get(other, "d")));
	cJSON_Delete(other);
	cJSON_Delete(root);

	/* duplicate keys: each occurrence is its own literal */
	root = must_parse("{\"w\":1.5,\"w\":2}");
	const char *dup = "{\"w\":1.5,\"w\":2}";
	assert_true(ng_json_is_integer_literal(dup, strlen(dup), root, ng_json_get(root, "w")));
	assert_false(ng_json_is_integer_literal(dup, strlen(dup), root, root->child));
	cJSON_Delete(root);

	/* a bare number document */
	root = must_parse("42");
	assert_true(ng_json_is_integer_literal("42", 2, root, root));
	cJSON_Delete(root);
	root = must_parse("4.2");
	assert_false(ng_json_is_integer_literal("4.2", 3, root, root));
	cJSON_Delete(root);
}

static void expect_duplicate(const char *text, const char *path)
{
	cJSON *v = must_parse(text);
	ng_strbuf b = {0};
	bool found = ng_json_find_duplicate(v, &b);
	if (path) {
		assert_true(found);
		assert_string_equal(b.s, path);
	} else {
		assert_false(found);
	}
	ng_strbuf_free(&b);
	cJSON_Delete(v);
}

static void test_find_duplicate(void **state)
{
	(void)state;
	expect_duplicate("{\"a\":1,\"b\":2}", NULL);
	expect_duplicate("[1,{\"a\":1},{\"a\":2}]", NULL); /* one per object */
	expect_duplicate("{\"a\":1,\"a\":2}", "a");
	expect_duplicate("{\"gate\":{\"warn\":1},\"gate\":{\"block\":2}}", "gate");
	expect_duplicate("{\"x\":{\"y\":[0,{\"k\":1,\"k\":1}]}}", "x.y[1].k");
	expect_duplicate("{\"a\":1,\"A\":2}", NULL); /* keys are case sensitive */
	/* more than 32 members: the sorted path */
	ng_strbuf t = {0};
	ng_strbuf_adds(&t, "{");
	for (int i = 0; i < 100; i++)
		ng_strbuf_printf(&t, "\"k%d\":%d,", i, i);
	ng_strbuf_adds(&t, "\"k57\":0}");
	expect_duplicate(t.s, "k57");
	ng_strbuf_free(&t);
}

static void expect_word(const char *s, const char *want)
{
	ng_strbuf b = {0};
	ng_strbuf_add_shell_word(&b, s);
	assert_string_equal(b.s, want);
	ng_strbuf_free(&b);
}

static void expect_printable(const char *s, const char *want)
{
	ng_strbuf b = {0};
	ng_strbuf_add_printable(&b, s);
	assert_string_equal(b.s ? b.s : "", want);
	ng_strbuf_free(&b);
}

/* core/strbuf.h: what messages use for names from outside. */
static void test_shell_word_and_printable(void **state)
{
	(void)state;
	expect_word("gpu-node-013", "gpu-node-013");
	expect_word("n1.example.com", "n1.example.com");
	expect_word("x;touch pwned", "'x;touch pwned'");
	expect_word("$(id)", "'$(id)'");
	expect_word("it's", "'it'\\''s'");
	expect_word("", "''");
	expect_word("a b", "'a b'");
	expect_word("=cmd", "'=cmd'"); /* zsh expands a leading = */
	expect_word("~root", "'~root'");
	expect_printable("plain", "plain");
	expect_printable("a\nb\rc\td", "a\\nb\\rc\\td");
	expect_printable("\x1b]0;x\x07\x7f", "\\x1b]0;x\\x07\\x7f");
	expect_printable("\xc3\xa9", "\xc3\xa9"); /* UTF-8 is kept */
}

/* core/error.h: a message is one line whatever it quotes. */
static void test_error_message_is_one_line(void **state)
{
	(void)state;
	ng_err err;
	assert_int_equal(ng_fail(&err, "node \"%s\" is bad", "n1\nhealth: ok\x1b[2J"), -1);
	assert_string_equal(err.msg, "node \"n1\\nhealth: ok\\x1b[2J\" is bad");
	ng_fail(&err, "plain %d", 7);
	assert_string_equal(err.msg, "plain 7");
	char long_name[600];
	memset(long_name, '\n', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	ng_fail(&err, "%s", long_name); /* grows past the buffer: cut, never overrun */
	assert_true(strlen(err.msg) < sizeof err.msg);
	assert_null(strchr(err.msg, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_trailing_garbage),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_parse_python_strictness),
		cmocka_unit_test(test_parse_empty_and_whitespace),
		cmocka_unit_test(test_parse_nul_escape_refused),
		cmocka_unit_test(test_parse_escaped_backslash_then_u0000_accepted),
		cmocka_unit_test(test_parse_raw_nul_refused),
		cmocka_unit_test(test_parse_deep_nesting_refused),
		cmocka_unit_test(test_parse_ten_megabyte_line),
		cmocka_unit_test(test_get_last_wins_case_sensitive),
		cmocka_unit_test(test_truthy_every_type),
		cmocka_unit_test(test_equal_numbers),
		cmocka_unit_test(test_equal_big_integers),
		cmocka_unit_test(test_equal_strings),
		cmocka_unit_test(test_equal_arrays),
		cmocka_unit_test(test_equal_objects),
		cmocka_unit_test(test_equal_large_objects),
		cmocka_unit_test(test_equal_absent_is_null),
		cmocka_unit_test(test_canonical_text),
		cmocka_unit_test(test_each_member_dict_semantics),
		cmocka_unit_test(test_integer_literal),
		cmocka_unit_test(test_find_duplicate),
		cmocka_unit_test(test_shell_word_and_printable),
		cmocka_unit_test(test_error_message_is_one_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
