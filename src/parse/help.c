#include "parse/help.h"

#include <ctype.h>
#include <string.h>

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-'; }

bool ng_help_lists_option(const char *help, size_t len, const char *opt)
{
	size_t n = strlen(opt);
	if (n < 2)
		return false;
	const char *p = help, *end = help + len;
	while ((p = memmem(p, (size_t)(end - p), opt, n)) != NULL) {
		bool start_ok = p == help || !word_char(p[-1]);
		bool end_ok = p + n == end || !word_char(p[n]);
		/* "-b8" style listings do not occur in help texts; "-b," "-b <n>"
		 * "[-b" and "-b=" do. */
		if (start_ok && end_ok)
			return true;
		p += 1;
	}
	return false;
}

const char *ng_help_first_unknown_option(const char *help, size_t len, char *const *args,
                                         size_t n, char *buf, size_t buflen)
{
	for (size_t i = 0; i < n; i++) {
		const char *a = args[i];
		if (strcmp(a, "--") == 0)
			return NULL;
		if (a[0] != '-' || a[1] == '\0' || isdigit((unsigned char)a[1]) || a[1] == '.')
			continue;
		size_t keep;
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			keep = eq ? (size_t)(eq - a) : strlen(a);
		} else {
			keep = 2; /* "-I1" is "-I" with the value 1 */
		}
		if (keep >= buflen)
			keep = buflen - 1;
		memcpy(buf, a, keep);
		buf[keep] = '\0';
		if (!ng_help_lists_option(help, len, buf))
			return buf;
	}
	return NULL;
}
