/* Time and identity every layer shares. */
#ifndef NODEGATE_CORE_CLOCK_H
#define NODEGATE_CORE_CLOCK_H

#include <stdint.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * algorithm): timegm() would do, but it depends on the C library's TZ code.
 * Pure. */
int64_t ng_days_from_civil(int64_t y, int64_t m, int64_t d);

/* Now, unix seconds. $NODEGATE_NOW (unix seconds or a time as
 * ng_parse_time reads it) replaces the clock, for tests and replays. */
int64_t ng_now(void);
/* "2026-12-01", "2026-12-01T12:00", "2026-12-01T12:00:00Z", "@1764547200"
 * (unix seconds), or a duration from now: "+36h", "7d", "90m", "2w". UTC.
 * 0 on success, -1 unreadable. */
int ng_parse_time(const char *s, int64_t now, int64_t *out);
/* "2026-12-01T12:00:00Z"; "-" for 0. */
void ng_format_time(int64_t t, char out[32]);
/* Who is acting, for the audit log: $SUDO_USER when set (a person behind
 * sudo), else the user name of the effective uid, else "uid N". */
const char *ng_actor(void);
/* A fresh run id: host, time and random bits. */
void ng_run_id(char out[80], const char *node, int64_t now);

#endif
