#include "core/error.h"

#include <stdio.h>
#include <string.h>

/* Control characters in a message (from a file name, a node name, a line
 * of a tool's output) are written as escapes: a message is one line, and
 * a newline or an escape sequence in what it quotes must not forge another
 * line or drive the terminal it is printed on. */
static void escape_controls(char *msg, size_t cap)
{
	size_t n = strlen(msg), i = 0;
	while (i < n && (unsigned char)msg[i] >= 0x20 && msg[i] != 0x7f)
		i++;
	if (i == n)
		return;
	char out[sizeof ((ng_err *)0)->msg];
	size_t o = 0;
	for (size_t k = 0; k < n && o + 5 < sizeof out; k++) {
		unsigned char c = (unsigned char)msg[k];
		if (c == '\n' || c == '\r' || c == '\t') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	snprintf(msg, cap, "%s", out);
}

static void fail_v(ng_err *err, const char *fmt, va_list ap)
{
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	escape_controls(err->msg, sizeof err->msg);
}

int ng_fail(ng_err *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		fail_v(err, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int ng_fail_as(ng_err *err, ng_err_class code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		fail_v(err, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return -1;
}

const char *ng_err_class_name(ng_err_class code)
{
	switch (code) {
	case NG_ERR_USAGE: return "usage";
	case NG_ERR_INPUT: return "input";
	case NG_ERR_STORE: return "store";
	case NG_ERR_LANDING: return "landing";
	case NG_ERR_INTERNAL: return "internal";
	case NG_ERR_UNCLASSIFIED: break;
	}
	return "unclassified";
}
