/* The store's command-line edge: where it is, what time it is, who acts. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli/store_cli.h"
#include "core/policy_digest.h"

ng_store *ng_cli_open_store(const struct ng_cli *cli, const struct ng_cmd_entry *e,
                            const char *spec)
{
	ng_store *st;
	ng_err err;
	if (ng_store_open(spec ? spec : cli->store_spec, &st, &err) < 0) {
		ng_cli_store_error(e, &err);
		return NULL;
	}
	/* Decisions and cases written through it name the policy that made them. */
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(&cli->policy, digest);
	ng_store_set_policy(st, digest);
	return st;
}

/* Opening a store creates it when it is missing, so a read with a mistyped
 * path would report a freshly made, empty store (an audit log verified, no
 * quarantines). A SQLite store must exist already. The spec is resolved as
 * ng_store_open resolves it. */
ng_store *ng_cli_open_existing_store(const struct ng_cli *cli, const struct ng_cmd_entry *e,
                                     const char *spec)
{
	const char *s = spec ? spec : cli->store_spec;
	const char *env = getenv("NODEGATE_STORE");
	if ((!s || !*s) && env && *env)
		s = env;
	ng_strbuf def = {0};
	ng_err err;
	if (!s || !*s) {
		if (ng_store_default_path(&def, &err) < 0) {
			ng_cli_store_error(e, &err);
			return NULL;
		}
		s = def.s;
	}
	bool pg = strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0;
	if (!pg && access(s, F_OK) != 0) {
		fprintf(stderr, "nodegate %s: store: there is no store at %s: nothing to read. Name "
		                "the store with --store or $NODEGATE_STORE\n",
		        e->name, s);
		ng_strbuf_free(&def);
		return NULL;
	}
	ng_store *st = ng_cli_open_store(cli, e, s);
	ng_strbuf_free(&def);
	return st;
}

int ng_cli_store_error(const struct ng_cmd_entry *e, const ng_err *err)
{
	fprintf(stderr, "nodegate %s: store: %s\n", e->name, err->msg);
	return NG_EXIT_STORE;
}

int ng_cli_resolve_node(ng_store *st, const struct ng_cmd_entry *e, const char *arg,
                        ng_store_node_ref *out)
{
	ng_err err;
	int r = ng_store_resolve_node(st, arg, out, &err);
	if (r < 0)
		return ng_cli_store_error(e, &err);
	if (r == 2) {
		/* Never guess between two nodes: the wrong one would be released. */
		fprintf(stderr,
		        "nodegate %s: \"%s\" names more than one node: %s; name one by its id\n",
		        e->name, arg, out->candidates);
		return NG_EXIT_USAGE;
	}
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * algorithm): timegm() would do, but it depends on the C library's TZ code. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
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

int ng_cli_parse_time(const char *s, int64_t now, int64_t *out)
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
	*out = days_from_civil(y, mo, day) * 86400 + h * 3600 + mi * 60 + sec;
	return 0;
}

int64_t ng_cli_now(void)
{
	const char *env = getenv("NODEGATE_NOW");
	int64_t t;
	if (env && *env) {
		char *end;
		errno = 0;
		long long v = strtoll(env, &end, 10);
		if (end != env && !*end && !errno && v >= 0)
			return v;
		if (ng_cli_parse_time(env, (int64_t)time(NULL), &t) == 0)
			return t;
	}
	return (int64_t)time(NULL);
}

void ng_cli_format_time(int64_t t, char out[32])
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

void ng_json_add_time(cJSON *obj, const char *key, int64_t t)
{
	if (t)
		cJSON_AddNumberToObject(obj, key, (double)t);
	else
		cJSON_AddNullToObject(obj, key);
}

void ng_print_json(const cJSON *doc)
{
	char *s = cJSON_Print(doc);
	printf("%s\n", s ? s : "null");
	free(s);
}

const char *ng_cli_actor(void)
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

void ng_cli_run_id(char out[80], const char *node, int64_t now)
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
