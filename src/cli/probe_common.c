/* What every `nodegate probe KIND` shares: option helpers, and the way a
 * probe's records are named, stamped with the node's identity, settled and
 * handed to ng_emit_records. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/identity.h"
#include "core/record_build.h"

int ng_probe_usage(const struct ng_probe_kind *kind, const char *msg, const char *arg)
{
	fprintf(stderr, "nodegate probe %s: %s%s%s\n", kind->name, msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "usage: nodegate probe %s %s\n", kind->name, kind->usage);
	return NG_EXIT_USAGE;
}

void ng_probe_help(const struct ng_probe_kind *kind)
{
	printf("usage: nodegate probe %s %s\n\n%s\n%s", kind->name, kind->usage, kind->summary,
	       kind->help);
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

bool ng_probe_emit_option(struct ng_emit_opts *e, int c, char *arg)
{
	switch (c) {
	case 'b': e->baseline_path = arg; return true;
	case 'C': e->cohort = arg; return true;
	case 'e': e->explain = true; return true;
	case 'j': e->json = true; return true;
	case 'o': e->out_path = arg; return true;
	default: return false;
	}
}

int ng_probe_getopt(const struct ng_probe_kind *kind, int argc, char **argv, const char *shortopts,
                    const struct option *longopts,
                    int (*one)(const struct ng_probe_kind *kind, void *args, int c), void *args,
                    struct ng_emit_opts *emit)
{
	int c;
	optind = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			ng_probe_help(kind);
			return NG_EXIT_OK;
		}
		if (c == '?')
			return ng_probe_usage(kind, "see --help", NULL);
		if (ng_probe_emit_option(emit, c, optarg))
			continue;
		int rc = one(kind, args, c);
		if (rc >= 0)
			return rc;
	}
	if (optind < argc)
		return ng_probe_usage(kind, "unexpected argument", argv[optind]);
	return -1;
}

int ng_probe_timing_option(const struct ng_probe_kind *kind, int c, const char *arg,
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

int ng_probe_timing(const struct ng_probe_kind *kind, bool quick, bool have_duration,
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

int ng_probe_check_emit(const struct ng_probe_kind *kind, const struct ng_emit_opts *e)
{
	if ((e->cohort || e->explain) && !e->baseline_path)
		return ng_probe_usage(kind, "--cohort-drops and --explain need --baseline", NULL);
	return -1;
}

static void add_tool(cJSON *rec, const char *kind, int argc, char **argv)
{
	cJSON *tool = ng_record_tool(rec);
	ng_json_set(tool, "name", cJSON_CreateString("nodegate"));
	ng_json_set(tool, "probe", cJSON_CreateString(kind));
	ng_json_set(tool, "version", cJSON_CreateString(NODEGATE_VERSION));
	cJSON *av = cJSON_CreateArray();
	cJSON_AddItemToArray(av, cJSON_CreateString("nodegate"));
	cJSON_AddItemToArray(av, cJSON_CreateString("probe"));
	for (int i = 0; i < argc; i++)
		cJSON_AddItemToArray(av, cJSON_CreateString(argv[i]));
	ng_json_set(tool, "argv", av);
}

int ng_probe_finish(struct ng_cli *cli, const struct ng_probe_kind *kind, cJSON *records,
                    int argc, char **argv, const struct ng_emit_opts *e)
{
	const char *said = NULL;
	for (cJSON *rec = records->child; rec; rec = rec->next) {
		add_tool(rec, kind->name, argc, argv);
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
	if (ng_identity_stamp(records, &cli->policy, NULL, &err) < 0)
		fprintf(stderr, "nodegate probe %s: node identity: %s\n", kind->name, err.msg);
	ng_records_settle_unmeasured(records);
	char name[64];
	snprintf(name, sizeof name, "probe %s", kind->name);
	const struct ng_cmd_entry entry = {.name = name, .usage = kind->usage,
	                                   .summary = kind->summary, .help = kind->help};
	int rc = ng_emit_records(cli, &entry, records, e);
	cJSON_Delete(records);
	return rc;
}
