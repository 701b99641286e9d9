/* nodegate probe cpu: a fixed FP64 kernel on every core, pinned, long enough
 * to show unstable clocks or thermals, every result checked. */
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_cpu.h"


struct cpu_args {
	struct ng_probe_args common;
	struct ng_cpu_opts o;
};

static const struct ng_opt cpu_opts[] = {
	{"duration", 'd', "S", "seconds measured, after a warm-up of one interval of at\n"
	                       "most 0.25 s (default 10; 2 with --quick)"},
	{"interval", 'i', "S", "seconds per sample (default 1; 0.25 with --quick)"},
	{"threads", 't', "N", "threads (default: one per physical core; more use the\n"
	                      "SMT siblings)"},
	{"tier", 'T', "T", "avx512, avx2, sse2 or portable instead of the widest\n"
	                   "(a baseline from one tier says nothing of another)"},
	NG_PROBE_QUICK_OPT,
	NG_PROBE_EMIT_OPTS,
	{0},
};

static void defaults(struct ng_cli *cli, void *args)
{
	(void)cli;
	struct cpu_args *a = args;
	ng_cpu_opts_default(&a->o);
	a->common.duration = &a->o.duration_s;
	a->common.interval = &a->o.interval_s;
}

static int option(const struct ng_probe_kind *kind, void *args, int c, const char *arg)
{
	struct cpu_args *a = args;
	switch (c) {
	case 't':
		if (ng_probe_threads(arg, &a->o.threads) < 0)
			return ng_probe_usage(kind, "--threads takes a whole number, 1 to 4096", arg);
		break;
	case 'T': a->o.tier = arg; break;
	}
	return -1;
}

static int measure(const struct ng_probe_kind *kind, void *args, cJSON **records)
{
	struct cpu_args *a = args;
	ng_err err;
	*records = ng_probe_cpu_run(&a->o, &err);
	return *records ? -1 : ng_probe_usage(kind, err.msg, NULL);
}

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
	"produced a different one.\n",
	.opts = cpu_opts,
	.help_tail =
	"Exit status: with --baseline, 0 when the record is admissible and 1 when not;\n"
	"without, 0 when it holds a measurement and 1 when not; 2 on usage errors.\n",
	.args_size = sizeof(struct cpu_args),
	.min_interval = 0.01,
	.quick_duration = 2,
	.quick_interval = 0.25,
	.defaults = defaults,
	.option = option,
	.measure = measure,
};

