/* What every `nodegate probe KIND` shares: option helpers, and the way a
 * probe's records are finished (flow/probe_records.h) and handed to
 * ng_emit_records. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "flow/probe_records.h"

int ng_probe_usage(const struct ng_probe_kind *kind, const char *msg, const char *arg)
{
	fprintf(stderr, "nodegate probe %s: %s%s%s\n", kind->name, msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "usage: nodegate probe %s %s\n", kind->name, kind->usage);
	return NG_EXIT_USAGE;
}

/* The kind as a command entry ("probe cpu"), for --help, usage errors and
 * ng_emit_records; name is its storage. */
static struct ng_cmd_entry entry_of(const struct ng_probe_kind *kind, char name[64])
{
	snprintf(name, 64, "probe %s", kind->name);
	return (struct ng_cmd_entry){.name = name, .usage = kind->usage, .summary = kind->summary,
	                             .help = kind->help, .opts = kind->opts,
	                             .help_tail = kind->help_tail};
}

int ng_probe_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0) || v > 3600)
		return -1;
	*out = v;
	return 0;
}

int ng_probe_threads(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (end == s || *end || errno || n < 1 || n > 4096)
		return -1;
	*out = (unsigned)n;
	return 0;
}

int ng_probe_bytes(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !(v > 0))
		return -1;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1048576.0; end++; break;
	case 'g': case 'G': mul = 1073741824.0; end++; break;
	case 't': case 'T': mul = 1099511627776.0; end++; break;
	default: break;
	}
	if (mul > 1 && *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	v *= mul;
	if (*end || v > 1e15 || v != floor(v))
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Takes c if it is one of NG_PROBE_EMIT_OPTS (but help). */
static bool emit_option(struct ng_emit_opts *e, int c, const char *arg)
{
	switch (c) {
	case 'b': e->baseline_path = arg; return true;
	case NG_PROBE_O_COHORT: e->cohort = arg; return true;
	case 'e': e->explain = true; return true;
	case 'j': e->json = true; return true;
	case 'o': e->out_path = arg; return true;
	default: return false;
	}
}

/* Takes --duration (c 'd') into *duration and --interval (c 'i') into
 * *interval, at least min_interval seconds, noting which was given. Returns
 * -2 when c is neither, -1 when taken, else the exit status of a usage
 * error. */
static int timing_option(const struct ng_probe_kind *kind, int c, const char *arg,
                           double min_interval, double *duration, double *interval,
                           bool *have_duration, bool *have_interval)
{
	if (c == 'd') {
		if (ng_probe_seconds(arg, duration) < 0)
			return ng_probe_usage(kind, "--duration takes seconds, more than 0, at most 3600", arg);
		*have_duration = true;
		return -1;
	}
	if (c != 'i')
		return -2;
	if (ng_probe_seconds(arg, interval) < 0 || *interval < min_interval) {
		char msg[64];
		if (min_interval > 0)
			snprintf(msg, sizeof msg, "--interval takes seconds, at least %g", min_interval);
		else
			snprintf(msg, sizeof msg, "--interval takes seconds, more than 0");
		return ng_probe_usage(kind, msg, arg);
	}
	*have_interval = true;
	return -1;
}

/* Settles a probe's duration and interval: --quick's short defaults for what
 * was not given, an interval shortened to a quarter of a --duration given
 * alone, and a usage error when the interval is still the longer. Returns -1
 * to go on, else the exit status. */
static int timing(const struct ng_probe_kind *kind, bool quick, bool have_duration,
                    bool have_interval, double quick_duration, double quick_interval,
                    double *duration, double *interval)
{
	if (quick && !have_duration)
		*duration = quick_duration;
	if (quick && !have_interval)
		*interval = quick_interval;
	if (have_duration && !have_interval && *interval > *duration)
		*interval = *duration / 4;
	if (*interval > *duration)
		return ng_probe_usage(kind, "--interval is longer than --duration", NULL);
	return -1;
}

/* The checks on the emit options that need no measurement. */
static int check_emit(const struct ng_probe_kind *kind, const struct ng_emit_opts *e)
{
	if ((e->cohort || e->explain) && !e->baseline_path)
		return ng_probe_usage(kind, "--cohort-drops and --explain need --baseline", NULL);
	return -1;
}

/* After measuring: says on stderr what was not measured, finishes the
 * records (flow/probe_records.h), and shows, keeps and judges them
 * (ng_emit_records). Frees records. Returns the exit status. */
static int finish(struct ng_cli *cli, const struct ng_probe_kind *kind, cJSON *records,
                    int argc, char **argv, const struct ng_emit_opts *e)
{
	const char *said = NULL;
	for (const cJSON *rec = records->child; rec; rec = rec->next) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "samples");
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(rec, "reason");
		/* One failure often empties every record of a run: say it once. */
		if (!(cJSON_IsArray(s) && s->child) && cJSON_IsString(reason) &&
		    !(said && strcmp(said, reason->valuestring) == 0)) {
			fprintf(stderr, "nodegate probe %s: no measurement: %s\n", kind->name, reason->valuestring);
			said = reason->valuestring;
		}
	}
	ng_err err;
	if (ng_probe_records_finish(records, kind->name, argc, argv, &cli->policy, &err) < 0)
		fprintf(stderr, "nodegate probe %s: node identity: %s\n", kind->name, err.msg);
	char name[64];
	const struct ng_cmd_entry entry = entry_of(kind, name);
	int rc = ng_emit_records(cli, &entry, records, e);
	cJSON_Delete(records);
	return rc;
}

/* The options, then the checks across them. Returns -1 to go on, else the
 * exit status. */
static int parse(const struct ng_probe_kind *kind, int argc, char **argv, void *args)
{
	struct ng_probe_args *a = args;
	char name[64];
	const struct ng_cmd_entry e = entry_of(kind, name);
	struct ng_opt_parser op;
	ng_opt_begin(&op, &e, argc, argv);
	int c, rc;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT)
			return op.status;
		if (emit_option(&a->emit, c, op.arg))
			continue;
		if (c == 'Q') {
			a->quick = true;
			continue;
		}
		rc = timing_option(kind, c, op.arg, kind->min_interval, a->duration, a->interval,
		                   &a->have_duration, &a->have_interval);
		if (rc == -2)
			rc = kind->option(kind, args, c, op.arg);
		if (rc >= 0)
			return rc;
	}
	if (op.next < argc)
		return ng_probe_usage(kind, "unexpected argument", argv[op.next]);
	if (kind->settle && (rc = kind->settle(kind, args)) >= 0)
		return rc;
	rc = timing(kind, a->quick, a->have_duration, a->have_interval, kind->quick_duration,
	            kind->quick_interval, a->duration, a->interval);
	if (rc >= 0)
		return rc;
	return check_emit(kind, &a->emit);
}

int ng_probe_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	void *args = calloc(1, kind->args_size);
	if (!args) {
		fprintf(stderr, "nodegate probe %s: out of memory\n", kind->name);
		return NG_EXIT_USAGE;
	}
	kind->defaults(cli, args);
	cJSON *records = NULL;
	int rc = parse(kind, argc, argv, args);
	if (rc < 0)
		rc = kind->measure(kind, args, &records);
	if (rc < 0)
		rc = finish(cli, kind, records, argc, argv, &((struct ng_probe_args *)args)->emit);
	free(args);
	return rc;
}
