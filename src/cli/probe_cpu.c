/* nodegate probe cpu: a fixed FP64 kernel on every core, pinned, long enough
 * to show unstable clocks or thermals, every result checked. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/identity.h"
#include "collect/probe_cpu.h"
#include "core/record_build.h"

static int cpu_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);

const struct ng_probe_kind ng_probe_cpu = {
	.name = "cpu",
	.usage = "[--duration S] [--interval S] [--threads N] [--tier T] [--quick]\n"
	         "       [--baseline B.json [--cohort-drops LIST] [--explain]] [--json] [--out FILE]",
	.summary = "FP64 multiply-adds on every core, pinned; GFLOP/s, clocks, every result checked.",
	.help =
	"Runs one thread per physical core, each pinned to its core, on a dgemm\n"
	"micro-kernel over panels that stay in its L1 cache, with the widest vector\n"
	"instructions the CPU has (AVX-512F, AVX2+FMA, SSE2; portable C elsewhere).\n"
	"Samples are the GFLOP/s of all threads together, one per --interval; detail\n"
	"has each thread's series and the clock frequency (MHz) seen each interval,\n"
	"so throttling shows as a falling series. Every result is compared bit for\n"
	"bit with one computed up front; \"wrong\" counts the threads that ever\n"
	"produced a different one.\n"
	"\n"
	"Options:\n"
	"  -d, --duration S      seconds measured, after a warm-up of one interval of at\n"
	"                        most 0.25 s (default 10; 2 with --quick)\n"
	"  -i, --interval S      seconds per sample (default 1; 0.25 with --quick)\n"
	"  -t, --threads N       threads (default: one per physical core; more use the\n"
	"                        SMT siblings)\n"
	"  -T, --tier T          avx512, avx2, sse2 or portable instead of the widest\n"
	"                        (a baseline from one tier says nothing of another)\n"
	"  -Q, --quick           the short profile\n"
	"  -b, --baseline FILE   judge the record with the gate against this baseline\n"
	"      --cohort-drops L  the cohort's drops, as for `nodegate gate`\n"
	"  -e, --explain         show the gate's arithmetic\n"
	"  -j, --json            print {\"records\": [...], \"verdicts\": [...]} as JSON\n"
	"  -o, --out FILE        also write the records there (atomically)\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: with --baseline, 0 when the record is admissible and 1 when not;\n"
	"without, 0 when it holds a measurement and 1 when not; 2 on usage errors.\n",
	.main = cpu_main,
};

struct cpu_args {
	struct ng_cpu_opts o;
	struct ng_emit_opts emit;
	bool quick, have_duration, have_interval;
};

static int parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0) || v > 3600)
		return -1;
	*out = v;
	return 0;
}

static int usage(const struct ng_probe_kind *kind, const char *msg, const char *arg)
{
	fprintf(stderr, "nodegate probe %s: %s%s%s\n", kind->name, msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "usage: nodegate probe %s %s\n", kind->name, kind->usage);
	return NG_EXIT_USAGE;
}

static int parse_option(const struct ng_probe_kind *kind, struct cpu_args *a, int c)
{
	char *end;
	switch (c) {
	case 'd':
		if (parse_seconds(optarg, &a->o.duration_s) < 0)
			return usage(kind, "--duration takes seconds, more than 0, at most 3600", optarg);
		a->have_duration = true;
		break;
	case 'i':
		if (parse_seconds(optarg, &a->o.interval_s) < 0 || a->o.interval_s < 0.01)
			return usage(kind, "--interval takes seconds, at least 0.01", optarg);
		a->have_interval = true;
		break;
	case 't': {
		errno = 0;
		long n = strtol(optarg, &end, 10);
		if (end == optarg || *end || errno || n < 1 || n > 4096)
			return usage(kind, "--threads takes a whole number, 1 to 4096", optarg);
		a->o.threads = (unsigned)n;
		break;
	}
	case 'T': a->o.tier = optarg; break;
	case 'Q': a->quick = true; break;
	case 'b': a->emit.baseline_path = optarg; break;
	case 'C': a->emit.cohort = optarg; break;
	case 'e': a->emit.explain = true; break;
	case 'j': a->emit.json = true; break;
	case 'o': a->emit.out_path = optarg; break;
	default: return usage(kind, "unknown option", NULL);
	}
	return -1;
}

static int parse_args(const struct ng_probe_kind *kind, int argc, char **argv, struct cpu_args *a)
{
	static const struct option longopts[] = {
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"threads", required_argument, NULL, 't'},
		{"tier", required_argument, NULL, 'T'},
		{"quick", no_argument, NULL, 'Q'},
		{"baseline", required_argument, NULL, 'b'},
		{"cohort-drops", required_argument, NULL, 'C'},
		{"explain", no_argument, NULL, 'e'},
		{"json", no_argument, NULL, 'j'},
		{"out", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;
	optind = 0;
	while ((c = getopt_long(argc, argv, "d:i:t:T:Qb:ejo:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: nodegate probe %s %s\n\n%s\n%s", kind->name, kind->usage, kind->summary,
			       kind->help);
			return NG_EXIT_OK;
		}
		if (c == '?')
			return usage(kind, "see --help", NULL);
		int rc = parse_option(kind, a, c);
		if (rc >= 0)
			return rc;
	}
	if (optind < argc)
		return usage(kind, "unexpected argument", argv[optind]);
	if (a->quick) {
		if (!a->have_duration)
			a->o.duration_s = 2;
		if (!a->have_interval)
			a->o.interval_s = 0.25;
	}
	if (a->have_duration && !a->have_interval && a->o.interval_s > a->o.duration_s)
		a->o.interval_s = a->o.duration_s / 4;
	if (a->o.interval_s > a->o.duration_s)
		return usage(kind, "--interval is longer than --duration", NULL);
	if ((a->emit.cohort || a->emit.explain) && !a->emit.baseline_path)
		return usage(kind, "--cohort-drops and --explain need --baseline", NULL);
	return -1;
}

static void add_tool(cJSON *rec, int argc, char **argv)
{
	cJSON *tool = ng_record_tool(rec);
	ng_json_set(tool, "name", cJSON_CreateString("nodegate"));
	ng_json_set(tool, "probe", cJSON_CreateString("cpu"));
	ng_json_set(tool, "version", cJSON_CreateString(NODEGATE_VERSION));
	cJSON *av = cJSON_CreateArray();
	cJSON_AddItemToArray(av, cJSON_CreateString("nodegate"));
	cJSON_AddItemToArray(av, cJSON_CreateString("probe"));
	for (int i = 0; i < argc; i++)
		cJSON_AddItemToArray(av, cJSON_CreateString(argv[i]));
	ng_json_set(tool, "argv", av);
}

static int cpu_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	struct cpu_args a = {0};
	ng_cpu_opts_default(&a.o);
	int rc = parse_args(kind, argc, argv, &a);
	if (rc >= 0)
		return rc;
	ng_err err;
	cJSON *records = ng_probe_cpu_run(&a.o, &err);
	if (!records)
		return usage(kind, err.msg, NULL);
	for (cJSON *rec = records->child; rec; rec = rec->next) {
		add_tool(rec, argc, argv);
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(rec, "reason");
		if (cJSON_IsString(reason))
			fprintf(stderr, "nodegate probe cpu: no measurement: %s\n", reason->valuestring);
	}
	if (ng_identity_stamp(records, &cli->policy, NULL, &err) < 0)
		fprintf(stderr, "nodegate probe cpu: node identity: %s\n", err.msg);
	const struct ng_cmd_entry entry = {.name = "probe cpu", .usage = kind->usage,
	                                   .summary = kind->summary, .help = kind->help};
	ng_records_settle_unmeasured(records);
	rc = ng_emit_records(cli, &entry, records, &a.emit);
	cJSON_Delete(records);
	return rc;
}
