/* The class template: a class key from a profile (docs/identity.md).
 *
 *   {a.b.c}       the profile value at that path; missing is an error
 *   {a.b?}        the value, or nothing when missing
 *   {a|b}         the first of several paths the profile has
 *   [ ... ]       a section, kept only when every field in it is present
 *   \x            x itself ({ } [ ] \ as literals)
 *
 * Values are tidied so a key is one word: "(R)" and "(TM)" go, any character
 * other than letters, digits and . _ : + - becomes '-', and runs of '-'
 * collapse. Numbers are written whole when they are whole. */
#include "collect/identity.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_MAX 256

/* Looks up a dotted path; numeric components index arrays. */
static const cJSON *lookup(const cJSON *node, const char *path, size_t len)
{
	const char *p = path, *end = path + len;
	while (node && p < end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		size_t n = dot ? (size_t)(dot - p) : (size_t)(end - p);
		char key[FIELD_MAX];
		if (n == 0 || n >= sizeof key)
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		if (cJSON_IsArray(node)) {
			char *e;
			errno = 0;
			long i = strtol(key, &e, 10);
			node = (*e || errno || i < 0) ? NULL : cJSON_GetArrayItem(node, (int)i);
		} else if (cJSON_IsObject(node)) {
			node = cJSON_GetObjectItemCaseSensitive(node, key);
		} else {
			return NULL;
		}
		p = dot ? dot + 1 : end;
	}
	/* null is "not known", the same as absent. */
	return cJSON_IsNull(node) ? NULL : node;
}

static bool skip_marker(const char *s, size_t n, const char **p)
{
	static const char *const marks[] = {"(R)", "(r)", "(TM)", "(tm)", "(C)"};
	for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
		size_t ml = strlen(marks[i]);
		if ((size_t)(s + n - *p) >= ml && memcmp(*p, marks[i], ml) == 0) {
			*p += ml;
			return true;
		}
	}
	return false;
}

static void add_tidy(ng_strbuf *out, const char *s)
{
	size_t n = strlen(s);
	bool dash = true; /* drops leading dashes */
	size_t start = out->len;
	for (const char *p = s; p < s + n;) {
		if (skip_marker(s, n, &p))
			continue;
		unsigned char c = (unsigned char)*p++;
		if (isalnum(c) || c == '.' || c == '_' || c == ':' || c == '+') {
			ng_strbuf_addc(out, (char)c);
			dash = false;
		} else if (!dash) {
			ng_strbuf_addc(out, '-');
			dash = true;
		}
	}
	while (out->len > start && out->s[out->len - 1] == '-')
		out->s[--out->len] = '\0';
}

static int add_value(ng_strbuf *out, const cJSON *v, const char *path, ng_err *err)
{
	if (cJSON_IsString(v)) {
		add_tidy(out, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d == floor(d) && fabs(d) < 1e15)
			ng_strbuf_printf(out, "%.0f", d);
		else
			ng_strbuf_printf(out, "%g", d);
	} else if (cJSON_IsBool(v)) {
		ng_strbuf_adds(out, cJSON_IsTrue(v) ? "true" : "false");
	} else {
		return ng_fail(err, "class template field {%s} is not a single value in the profile "
		               "(an object or a list; name one of its members)", path);
	}
	return 0;
}

/* One {...} field starting after '{'. *missing is set when it resolves to
 * nothing and may (optional, or inside a section). */
static int field(const char **pp, const cJSON *profile, ng_strbuf *out, bool *missing, bool in_section,
                 ng_err *err)
{
	const char *p = *pp, *close = strchr(p, '}');
	if (!close)
		return ng_fail(err, "class template: '{' without a closing '}'");
	size_t len = (size_t)(close - p);
	bool optional = len > 0 && p[len - 1] == '?';
	if (optional)
		len--;
	if (len == 0 || len >= FIELD_MAX)
		return ng_fail(err, "class template: empty or overlong field {%.*s}", (int)len, p);
	char spec[FIELD_MAX];
	memcpy(spec, p, len);
	spec[len] = '\0';
	*pp = close + 1;
	for (const char *alt = spec; alt;) {
		const char *bar = strchr(alt, '|');
		size_t al = bar ? (size_t)(bar - alt) : strlen(alt);
		for (size_t i = 0; i < al; i++)
			if (isspace((unsigned char)alt[i]) || strchr("{[]", alt[i]))
				return ng_fail(err, "class template: bad field name {%s}", spec);
		const cJSON *v = al ? lookup(profile, alt, al) : NULL;
		if (v)
			return add_value(out, v, spec, err);
		alt = bar ? bar + 1 : NULL;
	}
	if (optional || in_section) {
		*missing = true;
		return 0;
	}
	return ng_fail(err, "class template field {%s} is not in this node's profile "
	               "(write {%s?} or put it in a [section] if it may be missing)", spec, spec);
}

int ng_identity_class(const cJSON *profile, const char *tmpl, ng_strbuf *out, ng_err *err)
{
	if (!tmpl || !tmpl[0])
		return ng_fail(err, "class template is empty");
	ng_strbuf_reset(out);
	size_t section_start = 0;
	bool in_section = false, section_missing = false;
	for (const char *p = tmpl; *p;) {
		char c = *p++;
		if (c == '\\') {
			if (!*p)
				return ng_fail(err, "class template ends in a lone '\\'");
			ng_strbuf_addc(out, *p++);
		} else if (c == '{') {
			bool missing = false;
			if (field(&p, profile, out, &missing, in_section, err) < 0)
				return -1;
			if (missing && in_section)
				section_missing = true;
		} else if (c == '}') {
			return ng_fail(err, "class template: '}' without an opening '{' (write \\} for one)");
		} else if (c == '[') {
			if (in_section)
				return ng_fail(err, "class template: sections do not nest");
			in_section = true;
			section_missing = false;
			section_start = out->len;
		} else if (c == ']') {
			if (!in_section)
				return ng_fail(err, "class template: ']' without an opening '[' (write \\] for one)");
			if (section_missing && out->s) {
				out->len = section_start;
				out->s[out->len] = '\0';
			}
			in_section = false;
		} else {
			ng_strbuf_addc(out, c);
		}
	}
	if (in_section)
		return ng_fail(err, "class template: '[' without a closing ']'");
	if (out->oom)
		return ng_fail(err, "out of memory building the class key");
	if (out->len == 0)
		return ng_fail(err, "class template gives an empty class key for this node");
	return 0;
}
