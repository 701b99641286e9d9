/* nodegate probe hostmem: allocation, integrity patterns and copy/triad
 * bandwidth of the host's memory, node by node. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_hostmem.h"

static int hostmem_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);

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
	"locked gives records with no samples and the reason.\n"
	"\n"
	"Options:\n"
	"  -s, --size BYTES      bytes in all, K/M/G suffixes are powers of 1024 (default:\n"
	"                        a quarter of available memory, at most 1G unless the\n"
	"                        caches need more; 256M with --quick)\n"
	"  -d, --duration S      seconds per bandwidth measurement (default 2; 0.5 with\n"
	"                        --quick)\n"
	"  -i, --interval S      seconds per sample (default 0.4; 0.1 with --quick)\n"
	"  -t, --threads N       threads (default: one per physical core)\n"
	"      --seed N          seed of the random pattern (default 1)\n"
	"      --no-lock         do not mlock the buffer (recorded as locked: false)\n"
	"  -Q, --quick           the short profile\n"
	"  -b, --baseline FILE   judge the records with the gate against this baseline\n"
	"      --cohort-drops L  the cohort's drops, as for `nodegate gate`\n"
	"  -e, --explain         show the gate's arithmetic\n"
	"  -j, --json            print {\"records\": [...], \"verdicts\": [...]} as JSON\n"
	"  -o, --out FILE        also write the records there (atomically)\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.main = hostmem_main,
};

struct hostmem_args {
	struct ng_hostmem_opts o;
	struct ng_emit_opts emit;
	bool quick, have_size, have_duration, have_interval;
};

static int parse_option(const struct ng_probe_kind *kind, void *args, int c)
{
	struct hostmem_args *a = args;
	char *end;
	uint64_t bytes;
	int t = ng_probe_timing_option(kind, c, optarg, 0.01, &a->o.phase_s, &a->o.interval_s,
	                               &a->have_duration, &a->have_interval);
	if (t != -2)
		return t;
	switch (c) {
	case 's':
		if (ng_probe_bytes(optarg, &bytes) < 0 || bytes > SIZE_MAX)
			return ng_probe_usage(kind, "--size takes bytes (e.g. 1G, 256M)", optarg);
		a->o.size = (size_t)bytes;
		a->have_size = true;
		break;
	case 'S': {
		errno = 0;
		unsigned long long v = strtoull(optarg, &end, 10);
		if (end == optarg || *end || errno)
			return ng_probe_usage(kind, "--seed takes a whole number", optarg);
		a->o.seed = v;
		break;
	}
	case 'L': a->o.lock = false; break;
	case 't':
		if (ng_probe_threads(optarg, &a->o.threads) < 0)
			return ng_probe_usage(kind, "--threads takes a whole number, 1 to 4096", optarg);
		break;
	case 'Q': a->quick = true; break;
	default: return ng_probe_usage(kind, "unknown option", NULL);
	}
	return -1;
}

static int parse_args(const struct ng_probe_kind *kind, int argc, char **argv, struct hostmem_args *a)
{
	static const struct option longopts[] = {
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"threads", required_argument, NULL, 't'},
		{"size", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"no-lock", no_argument, NULL, 'L'},
		{"quick", no_argument, NULL, 'Q'},
		NG_PROBE_EMIT_LONGOPTS,
		{0},
	};
	int rc = ng_probe_getopt(kind, argc, argv, "s:d:i:t:Q" NG_PROBE_EMIT_SHORTOPTS, longopts, parse_option, a,
	                         &a->emit);
	if (rc >= 0)
		return rc;
	if (a->quick && !a->have_size) {
		size_t d = ng_hostmem_default_size();
		a->o.size = d < ((size_t)256 << 20) ? d : (size_t)256 << 20;
	}
	rc = ng_probe_timing(kind, a->quick, a->have_duration, a->have_interval, 0.5, 0.1,
	                     &a->o.phase_s, &a->o.interval_s);
	if (rc >= 0)
		return rc;
	return ng_probe_check_emit(kind, &a->emit);
}

static int hostmem_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	struct hostmem_args a = {0};
	ng_hostmem_opts_default(&a.o);
	int rc = parse_args(kind, argc, argv, &a);
	if (rc >= 0)
		return rc;
	ng_err err;
	cJSON *records = ng_probe_hostmem_run(&a.o, &err);
	if (!records)
		return ng_probe_usage(kind, err.msg, NULL);
	return ng_probe_finish(cli, kind, records, argc, argv, &a.emit);
}
