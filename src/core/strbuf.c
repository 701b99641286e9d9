#include "core/strbuf.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(ng_strbuf *b, size_t extra)
{
	if (b->oom)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void ng_strbuf_reset(ng_strbuf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->s)
		b->s[0] = '\0';
}

void ng_strbuf_free(ng_strbuf *b)
{
	free(b->s);
	*b = (ng_strbuf){0};
}

void ng_strbuf_add(ng_strbuf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void ng_strbuf_adds(ng_strbuf *b, const char *s) { ng_strbuf_add(b, s, strlen(s)); }

void ng_strbuf_addc(ng_strbuf *b, char c) { ng_strbuf_add(b, &c, 1); }

void ng_strbuf_printf(ng_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void ng_strbuf_add_json_string(ng_strbuf *b, const char *s)
{
	ng_strbuf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': ng_strbuf_add(b, "\\\"", 2); break;
		case '\\': ng_strbuf_add(b, "\\\\", 2); break;
		case '\n': ng_strbuf_add(b, "\\n", 2); break;
		case '\r': ng_strbuf_add(b, "\\r", 2); break;
		case '\t': ng_strbuf_add(b, "\\t", 2); break;
		default:
			if (*p < 0x20)
				ng_strbuf_printf(b, "\\u%04x", *p);
			else
				ng_strbuf_addc(b, (char)*p);
		}
	}
	ng_strbuf_addc(b, '"');
}

void ng_strbuf_add_printable(ng_strbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '\n': ng_strbuf_add(b, "\\n", 2); break;
		case '\r': ng_strbuf_add(b, "\\r", 2); break;
		case '\t': ng_strbuf_add(b, "\\t", 2); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				ng_strbuf_printf(b, "\\x%02x", *p);
			else
				ng_strbuf_addc(b, (char)*p);
		}
	}
}

void ng_strbuf_add_shell_word(ng_strbuf *b, const char *s)
{
	if (!s)
		s = "";
	/* Characters that mean nothing to sh, bash or zsh in a word. */
	bool plain = s[0] != '\0' &&
	             strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	                       "@+:,./_-") == strlen(s);
	if (plain) {
		ng_strbuf_adds(b, s);
		return;
	}
	ng_strbuf_addc(b, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			ng_strbuf_adds(b, "'\\''");
		else
			ng_strbuf_addc(b, *p);
	}
	ng_strbuf_addc(b, '\'');
}

void ng_strbuf_add_double(ng_strbuf *b, double v)
{
	char tmp[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	ng_strbuf_adds(b, tmp);
}

const char *ng_shell_word(const char *s, char out[NG_SHELL_WORD_MAX])
{
	ng_strbuf q = {0}, p = {0};
	ng_strbuf_add_shell_word(&q, s);
	ng_strbuf_add_printable(&p, q.s ? q.s : "");
	/* A word that does not fit is not cut (a cut quote would change what
	 * the rest of the line means): it is named instead. */
	if (!p.s || p.oom || q.oom || p.len >= NG_SHELL_WORD_MAX)
		snprintf(out, NG_SHELL_WORD_MAX, "NAME");
	else
		memcpy(out, p.s, p.len + 1);
	ng_strbuf_free(&q);
	ng_strbuf_free(&p);
	return out;
}
