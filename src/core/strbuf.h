/* A growable, always NUL-terminated byte buffer. */
#ifndef NODEGATE_CORE_STRBUF_H
#define NODEGATE_CORE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	char *s;
	size_t len, cap;
	bool oom; /* an allocation failed; s holds what fitted */
} ng_strbuf;

void ng_strbuf_reset(ng_strbuf *b);
void ng_strbuf_free(ng_strbuf *b);
void ng_strbuf_add(ng_strbuf *b, const char *s, size_t n);
void ng_strbuf_adds(ng_strbuf *b, const char *s);
void ng_strbuf_addc(ng_strbuf *b, char c);
void ng_strbuf_printf(ng_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the shortest decimal that reads back as exactly v. */
void ng_strbuf_add_double(ng_strbuf *b, double v);
/* Appends s as a JSON string literal, quotes included. */
void ng_strbuf_add_json_string(ng_strbuf *b, const char *s);

#endif
