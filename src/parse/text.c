#include "parse/text.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ng_lines_init(ng_lines *it, const char *text, size_t len)
{
	it->p = text;
	it->end = text + len;
}

bool ng_lines_next(ng_lines *it, ng_span *line)
{
	if (it->p >= it->end)
		return false;
	const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	const char *stop = nl ? nl : it->end;
	line->s = it->p;
	line->len = (size_t)(stop - it->p);
	if (line->len && line->s[line->len - 1] == '\r')
		line->len--;
	it->p = nl ? nl + 1 : it->end;
	return true;
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

ng_span ng_span_trim(ng_span s)
{
	while (s.len && blank(s.s[0])) {
		s.s++;
		s.len--;
	}
	while (s.len && blank(s.s[s.len - 1]))
		s.len--;
	return s;
}

bool ng_span_starts_with(ng_span s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.len >= n && memcmp(s.s, prefix, n) == 0;
}

bool ng_span_eq(ng_span s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0;
}

bool ng_span_contains(ng_span s, const char *lit)
{
	size_t n = strlen(lit);
	return n == 0 || (s.len >= n && memmem(s.s, s.len, lit, n) != NULL);
}

ng_span ng_span_skip(ng_span s, size_t n)
{
	if (n > s.len)
		n = s.len;
	return (ng_span){s.s + n, s.len - n};
}

ng_span ng_span_cstr(const char *s) { return (ng_span){s, strlen(s)}; }

bool ng_span_same(ng_span a, ng_span b) { return a.len == b.len && (a.len == 0 || memcmp(a.s, b.s, a.len) == 0); }

size_t ng_split_ws(ng_span s, ng_span *fields, size_t max)
{
	size_t n = 0, i = 0;
	while (i < s.len) {
		while (i < s.len && (s.s[i] == ' ' || s.s[i] == '\t'))
			i++;
		if (i == s.len)
			break;
		size_t start = i;
		while (i < s.len && s.s[i] != ' ' && s.s[i] != '\t')
			i++;
		if (n < max)
			fields[n] = (ng_span){s.s + start, i - start};
		n++;
	}
	return n;
}

/* Only the characters of a decimal number, so strtod never sees hex, "inf",
 * "nan" or a locale's decimal comma. */
static bool decimal_chars(ng_span s)
{
	if (s.len == 0 || s.len > 63)
		return false;
	bool digit = false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.s[i];
		if (c >= '0' && c <= '9')
			digit = true;
		else if (c == '\0' || !strchr("+-.eE", c)) /* strchr finds the terminator */
			return false;
	}
	return digit;
}

bool ng_span_number(ng_span s, double *out)
{
	if (!decimal_chars(s))
		return false;
	char buf[64];
	memcpy(buf, s.s, s.len);
	buf[s.len] = '\0';
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end != '\0' || !isfinite(v) || errno == ERANGE)
		return false;
	*out = v;
	return true;
}

bool ng_span_integer(ng_span s, long long *out)
{
	if (s.len == 0 || s.len > 19)
		return false;
	long long v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.s[i] < '0' || s.s[i] > '9')
			return false;
		int d = s.s[i] - '0';
		if (v > (LLONG_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}
