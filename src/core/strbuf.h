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
/* Appends s with every control character (and DEL) written as an escape
 * (\n, \r, \t, \xNN), so a name or message from outside cannot end a
 * line, move the cursor or fake another message on a terminal or in a log. */
void ng_strbuf_add_printable(ng_strbuf *b, const char *s);
/* Appends s as one POSIX shell word: as it is when it holds only characters
 * no shell treats specially, else in single quotes (a quote inside written
 * as '\''), so a command suggested in a message can be pasted safely. */
void ng_strbuf_add_shell_word(ng_strbuf *b, const char *s);

/* s as one shell word for a command suggested in a message (`nodegate
 * release 'x;touch y'`), control characters escaped, in out
 * (NG_SHELL_WORD_MAX holds any node or class name). */
#define NG_SHELL_WORD_MAX 1100
const char *ng_shell_word(const char *s, char out[NG_SHELL_WORD_MAX]);

#endif
