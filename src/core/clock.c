/* Time and identity every layer shares: the clock ($NODEGATE_NOW replaces
 * it, for tests and replays), times as operators write them, who is acting,
 * and run ids. Nothing here prints. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

int64_t ng_days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int parse_duration(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !(v >= 0) || v > 1e7)
		return -1;
	double unit;
	if (strcmp(end, "s") == 0)
		unit = 1;
	else if (strcmp(end, "m") == 0)
		unit = 60;
	else if (strcmp(end, "h") == 0)
		unit = 3600;
	else if (strcmp(end, "d") == 0)
		unit = 86400;
	else if (strcmp(end, "w") == 0)
		unit = 7 * 86400;
	else
		return -1;
	*out = (int64_t)(v * unit);
	return 0;
}

int ng_parse_time(const char *s, int64_t now, int64_t *out)
{
	if (!s || !*s)
		return -1;
	if (s[0] == '@') {
		char *end;
		errno = 0;
		long long v = strtoll(s + 1, &end, 10);
		if (end == s + 1 || *end || errno || v < 0)
			return -1;
		*out = v;
		return 0;
	}
	int64_t d;
	if (parse_duration(s[0] == '+' ? s + 1 : s, &d) == 0) {
		*out = now + d;
		return 0;
	}
	int y, mo, day, h = 0, mi = 0, sec = 0, n = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &day, &n) != 3 || n != 10)
		return -1;
	const char *rest = s + n;
	if (*rest == 'T' || *rest == ' ') {
		int k = 0;
		if (sscanf(rest + 1, "%2d:%2d%n", &h, &mi, &k) != 2)
			return -1;
		rest += 1 + k;
		if (*rest == ':') {
			if (sscanf(rest + 1, "%2d%n", &sec, &k) != 1)
				return -1;
			rest += 1 + k;
		}
	}
	if (*rest == 'Z')
		rest++;
	if (*rest || mo < 1 || mo > 12 || day < 1 || day > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	*out = ng_days_from_civil(y, mo, day) * 86400 + h * 3600 + mi * 60 + sec;
	return 0;
}

int64_t ng_now(void)
{
	const char *env = getenv("NODEGATE_NOW");
	int64_t t;
	if (env && *env) {
		char *end;
		errno = 0;
		long long v = strtoll(env, &end, 10);
		if (end != env && !*end && !errno && v >= 0)
			return v;
		if (ng_parse_time(env, (int64_t)time(NULL), &t) == 0)
			return t;
	}
	return (int64_t)time(NULL);
}

void ng_format_time(int64_t t, char out[32])
{
	if (t == 0) {
		strcpy(out, "-");
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *ng_actor(void)
{
	static char name[64];
	const char *sudo = getenv("SUDO_USER");
	if (sudo && *sudo) {
		snprintf(name, sizeof name, "%s", sudo);
		return name;
	}
	struct passwd *pw = getpwuid(geteuid());
	if (pw && pw->pw_name)
		snprintf(name, sizeof name, "%s", pw->pw_name);
	else
		snprintf(name, sizeof name, "uid %u", (unsigned)geteuid());
	return name;
}

void ng_run_id(char out[80], const char *node, int64_t now)
{
	uint32_t r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
		r = (uint32_t)getpid() ^ (uint32_t)now;
	char stamp[20];
	time_t tt = (time_t)now;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, 80, "%.40s-%.16s-%08" PRIx32, node ? node : "node", stamp, r);
}
