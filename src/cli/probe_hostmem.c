/* nodegate probe hostmem: allocation, integrity patterns and copy/triad
 * bandwidth of the host's memory, node by node. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_hostmem.h"

enum { O_SEED = NG_PROBE_O_OWN, O_NO_LOCK };

static const struct ng_opt hostmem_opts[] = {
	{"size", 's', "BYTES", "bytes in all, K/M/G suffixes are powers of 1024 (default:\n"
	 "a quarter of available memory, at most 1G unless the\n"
	 "caches need more; 256M with --quick)"},
	{"duration", 'd', "S", "seconds per bandwidth measurement (default 2; 0.5 with\n"
	 "--quick)"},
	{"interval", 'i', "S", "seconds per sample (default 0.4; 0.1 with --quick)"},
	{"threads", 't', "N", "threads (default: one per physical core)"},
	{"seed", O_SEED, "N", "seed of the random pattern (default 1)"},
	{"no-lock", O_NO_LOCK, NULL, "do not mlock the buffer (recorded as locked: false)"},
	NG_PROBE_QUICK_OPT,
	NG_PROBE_EMIT_OPTS,
	{0},
};

struct hostmem_args {
	struct ng_probe_args common;
	struct ng_hostmem_opts o;
	bool have_size;
};

static void defaults(struct ng_cli *cli, void *args)
{
	(void)cli;
	struct hostmem_args *a = args;
	ng_hostmem_opts_default(&a->o);
	a->common.duration = &a->o.phase_s;
	a->common.interval = &a->o.interval_s;
}

static int option(const struct ng_probe_kind *kind, void *args, int c, const char *arg)
{
	struct hostmem_args *a = args;
	char *end;
	uint64_t bytes;
	switch (c) {
	case 's':
		if (ng_probe_bytes(arg, &bytes) < 0 || bytes > SIZE_MAX)
			return ng_probe_usage(kind, "--size takes bytes (e.g. 1G, 256M)", arg);
		a->o.size = (size_t)bytes;
		a->have_size = true;
		break;
	case O_SEED: {
		errno = 0;
		unsigned long long v = strtoull(arg, &end, 10);
		if (end == arg || *end || errno)
			return ng_probe_usage(kind, "--seed takes a whole number", arg);
		a->o.seed = v;
		break;
	}
	case O_NO_LOCK: a->o.lock = false; break;
	case 't':
		if (ng_probe_threads(arg, &a->o.threads) < 0)
			return ng_probe_usage(kind, "--threads takes a whole number, 1 to 4096", arg);
		break;
	}
	return -1;
}

static int settle(const struct ng_probe_kind *kind, void *args)
{
	(void)kind;
	struct hostmem_args *a = args;
	if (a->common.quick && !a->have_size) {
		size_t d = ng_hostmem_default_size();
		a->o.size = d < ((size_t)256 << 20) ? d : (size_t)256 << 20;
	}
	return -1;
}

static int measure(const struct ng_probe_kind *kind, void *args, cJSON **records)
{
	struct hostmem_args *a = args;
	ng_err err;
	*records = ng_probe_hostmem_run(&a->o, &err);
	return *records ? -1 : ng_probe_usage(kind, err.msg, NULL);
}

const struct ng_probe_kind ng_probe_hostmem = {
	.name = "hostmem",
	.usage = "[--size BYTES] [--duration S] [--interval S] [--threads N] [--seed N]\n"
	         "       [--no-lock] [--quick]\n"
	         "       [--baseline B.json [--cohort-drops LIST] [--explain]] [--json] [--out FILE]",
	.summary = "Allocate, pattern-check and measure copy/triad bandwidth of host memory.",
	.help =
	"Allocates --size bytes, split across the NUMA nodes by the threads each runs\n"
	"(one per physical core, pinned) and first touched by each node's own threads,\n"
	"and locks it. Writes and reads back three patterns over all of it\n"
	"(address-in-address, walking ones and zeros, seeded random): \"wrong\" counts\n"
	"the words that read back differently, and detail lists the first addresses.\n"
	"Then measures, for --duration seconds each, memcpy on every thread\n"
	"(hostmem.copy.gbps), the STREAM triad on every thread (hostmem.triad.gbps)\n"
	"and memcpy on one thread (hostmem.copy1t.gbps): decimal GB/s of bytes read\n"
	"plus written, one sample per --interval. Memory that cannot be allocated or\n"
	"locked gives records with no samples and the reason.\n",
	.opts = hostmem_opts,
	.help_tail =
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.args_size = sizeof(struct hostmem_args),
	.min_interval = 0.01,
	.quick_duration = 0.5,
	.quick_interval = 0.1,
	.defaults = defaults,
	.option = option,
	.settle = settle,
	.measure = measure,
};
