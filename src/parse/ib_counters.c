/* sysfs port files of InfiniBand and RoCE HCAs (ib_counters.h). */
#include "parse/ib_counters.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parse/text.h"

const char *const ng_ib_error_counters[] = {
	"symbol_error",
	"link_downed",
	"link_error_recovery",
	"port_rcv_errors",
	"port_rcv_remote_physical_errors",
	"port_xmit_discards",
	"port_xmit_constraint_errors",
	"port_rcv_constraint_errors",
	"local_link_integrity_errors",
	"excessive_buffer_overrun_errors",
};
const size_t ng_ib_n_error_counters = sizeof ng_ib_error_counters / sizeof ng_ib_error_counters[0];

/* The file's one line: a trailing newline is allowed, nothing after it. */
static bool one_line(const char *text, size_t len, ng_span *out)
{
	if (!text)
		return false;
	if (len && text[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n' || text[i] == '\0')
			return false;
	*out = ng_span_trim((ng_span){text, len});
	return out->len > 0;
}

static void copy_printable(ng_span s, char *dst, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < s.len && k + 1 < cap; i++) {
		unsigned char ch = (unsigned char)s.s[i];
		dst[k++] = ch >= ' ' && ch <= 0x7e ? (char)ch : '?';
	}
	if (cap)
		dst[k] = '\0';
}

bool ng_ib_parse_state(const char *text, size_t len, int *code, char *name, size_t cap)
{
	ng_span s;
	if (!one_line(text, len, &s))
		return false;
	size_t colon = 0;
	while (colon < s.len && s.s[colon] != ':')
		colon++;
	long long c;
	if (colon == s.len || !ng_span_integer((ng_span){s.s, colon}, &c) || c > 255)
		return false;
	ng_span rest = ng_span_trim(ng_span_skip(s, colon + 1));
	if (!rest.len)
		return false;
	for (size_t i = 0; i < rest.len; i++) {
		unsigned char ch = (unsigned char)rest.s[i];
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '_'))
			return false;
	}
	*code = (int)c;
	copy_printable(rest, name, cap);
	return true;
}

bool ng_ib_parse_rate(const char *text, size_t len, double *gbps, char *what, size_t cap)
{
	ng_span s;
	if (!one_line(text, len, &s))
		return false;
	ng_span f[4];
	size_t n = ng_split_ws(s, f, 4);
	if (n < 2 || !ng_span_eq(f[1], "Gb/sec"))
		return false;
	double v;
	if (!ng_span_number(f[0], &v) || !(v > 0) || !isfinite(v))
		return false;
	if (cap)
		what[0] = '\0';
	if (n > 2) {
		/* "(4X HDR)": what follows the unit, without its parentheses. */
		ng_span rest = ng_span_trim((ng_span){f[2].s, (size_t)(s.s + s.len - f[2].s)});
		if (rest.len < 2 || rest.s[0] != '(' || rest.s[rest.len - 1] != ')')
			return false;
		copy_printable((ng_span){rest.s + 1, rest.len - 2}, what, cap);
	}
	*gbps = v;
	return true;
}

bool ng_ib_parse_counter(const char *text, size_t len, uint64_t *value)
{
	ng_span s;
	if (!one_line(text, len, &s) || s.len > 20)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.s[i] < '0' || s.s[i] > '9')
			return false;
		unsigned d = (unsigned)(s.s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*value = v;
	return true;
}
