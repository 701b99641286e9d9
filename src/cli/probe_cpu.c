/* nodegate probe cpu: a fixed FP64 kernel on every core, pinned, long enough
 * to show unstable clocks or thermals, every result checked. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_cpu.h"

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

static int parse_option(const struct ng_probe_kind *kind, void *args, int c)
{
	struct cpu_args *a = args;
	int t = ng_probe_timing_option(kind, c, optarg, 0.01, &a->o.duration_s, &a->o.interval_s,
	                               &a->have_duration, &a->have_interval);
	if (t != -2)
		return t;
	switch (c) {
	case 't':
		if (ng_probe_threads(optarg, &a->o.threads) < 0)
			return ng_probe_usage(kind, "--threads takes a whole number, 1 to 4096", optarg);
		break;
	case 'T': a->o.tier = optarg; break;
	case 'Q': a->quick = true; break;
	default: return ng_probe_usage(kind, "unknown option", NULL);
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
		NG_PROBE_EMIT_LONGOPTS,
		{0},
	};
	int rc = ng_probe_getopt(kind, argc, argv, "d:i:t:T:Q" NG_PROBE_EMIT_SHORTOPTS, longopts, parse_option, a,
	                         &a->emit);
	if (rc >= 0)
		return rc;
	rc = ng_probe_timing(kind, a->quick, a->have_duration, a->have_interval, 2, 0.25,
	                     &a->o.duration_s, &a->o.interval_s);
	if (rc >= 0)
		return rc;
	return ng_probe_check_emit(kind, &a->emit);
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
		return ng_probe_usage(kind, err.msg, NULL);
	return ng_probe_finish(cli, kind, records, argc, argv, &a.emit);
}
