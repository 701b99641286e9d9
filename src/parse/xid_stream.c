/* A kernel log scanned for Xids as it is read (parse/xid_stream.h). */
#include "parse/xid_stream.h"

#include <string.h>

void ng_xid_stream_init(ng_xid_stream *s, char *buf, size_t cap, int64_t since_usec,
                        void (*fn)(const ng_xid_event *e, void *arg), void *arg, bool want_newest)
{
	*s = (ng_xid_stream){.buf = buf, .cap = cap, .since_usec = since_usec, .fn = fn, .arg = arg,
	                     .want_newest = want_newest, .newest_usec = -1};
}

/* The kernel time a line starts with, -1 when none: "[ 5678.901234]"
 * (six digits after the point, exactly) or a record's
 * "priority,sequence,time," */
static int64_t line_usec(const char *q, const char *eol)
{
	if (q < eol && *q == '[') {
		q++;
		while (q < eol && *q == ' ')
			q++;
		int64_t s = 0, us = 0;
		int nd = 0, nf = 0;
		while (q < eol && *q >= '0' && *q <= '9' && nd < 12)
			s = s * 10 + (*q++ - '0'), nd++;
		if (nd && q < eol && *q == '.') {
			q++;
			while (q < eol && *q >= '0' && *q <= '9' && nf < 6)
				us = us * 10 + (*q++ - '0'), nf++;
			if (nf == 6 && q < eol && *q == ']')
				return s * 1000000 + us;
		}
		return -1;
	}
	int field = 0;
	int64_t v = 0;
	int nd = 0;
	while (q < eol && field < 3) {
		if (*q >= '0' && *q <= '9' && nd < 18) {
			v = v * 10 + (*q - '0');
			nd++;
		} else if (*q == ',' && nd) {
			if (field == 2)
				break;
			field++;
			v = 0;
			nd = 0;
		} else {
			break;
		}
		q++;
	}
	return field == 2 && nd && q < eol && *q == ',' ? v : -1;
}

int64_t ng_xid_log_newest_usec(const char *text, size_t len)
{
	int64_t newest = -1;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		int64_t t = line_usec(p, eol);
		if (t > newest)
			newest = t;
		p = eol + 1;
	}
	return newest;
}

/* Scans text[0..upto) (whole lines, or the end of the log) and keeps the
 * rest at the front. At the end every line is scanned; before it, the
 * last two complete lines wait for the next feed, where a report on the
 * line before them can still read them. */
static void scan(ng_xid_stream *s, bool at_end)
{
	size_t upto = s->used, stop = s->used;
	if (!at_end) {
		const char *last = memrchr(s->buf, '\n', s->used);
		const char *second = last ? memrchr(s->buf, '\n', (size_t)(last - s->buf)) : NULL;
		const char *third = second ? memrchr(s->buf, '\n', (size_t)(second - s->buf)) : NULL;
		if (!third)
			return; /* fewer than three complete lines: more to come first */
		upto = (size_t)(last - s->buf) + 1;
		stop = (size_t)(third - s->buf) + 1;
	}
	size_t next = ng_xid_scan_part(s->buf, upto, stop, s->since_usec, s->fn, s->arg, &s->count);
	if (s->want_newest) {
		int64_t t = ng_xid_log_newest_usec(s->buf, next);
		if (t > s->newest_usec)
			s->newest_usec = t;
	}
	memmove(s->buf, s->buf + next, s->used - next);
	s->used -= next;
}

void ng_xid_stream_feed(ng_xid_stream *s, size_t n)
{
	s->used += n;
	s->fed += n;
	scan(s, false);
}

void ng_xid_stream_feed_record(ng_xid_stream *s, size_t n)
{
	if (n && s->buf[s->used + n - 1] != '\n' && s->used + n < s->cap)
		s->buf[s->used + n++] = '\n';
	ng_xid_stream_feed(s, n);
}

void ng_xid_stream_end(ng_xid_stream *s)
{
	scan(s, true);
}
