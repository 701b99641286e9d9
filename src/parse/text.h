/* Small, pure text helpers every parser shares: walking lines, splitting a line
 * into whitespace-separated fields, and reading numbers strictly. */
#ifndef NODEGATE_PARSE_TEXT_H
#define NODEGATE_PARSE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A view into the input; not NUL-terminated. */
typedef struct {
	const char *s;
	size_t len;
} ng_span;

typedef struct {
	const char *p, *end;
} ng_lines;

void ng_lines_init(ng_lines *it, const char *text, size_t len);
/* The next line without its "\n" or "\r\n"; false at the end. */
bool ng_lines_next(ng_lines *it, ng_span *line);

ng_span ng_span_trim(ng_span s);
bool ng_span_starts_with(ng_span s, const char *prefix);
bool ng_span_eq(ng_span s, const char *lit);
/* Whether lit occurs anywhere in s. */
bool ng_span_contains(ng_span s, const char *lit);
ng_span ng_span_skip(ng_span s, size_t n);
/* A NUL-terminated string as a span. */
ng_span ng_span_cstr(const char *s);
/* Whether two spans hold the same bytes. */
bool ng_span_same(ng_span a, ng_span b);

/* Splits s on spaces and tabs into at most max fields; returns how many
 * fields there were (which may exceed max: only max are stored). */
size_t ng_split_ws(ng_span s, ng_span *fields, size_t max);

/* The whole span as a finite number ("1.5", "-2", "1e-3", "0x10" is refused).
 * Locale independent. False for anything else, including "N/A", "", "nan". */
bool ng_span_number(ng_span s, double *out);
/* The whole span as a non-negative integer that fits in long long. */
bool ng_span_integer(ng_span s, long long *out);

#endif
