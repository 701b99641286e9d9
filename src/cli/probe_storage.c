/* nodegate probe storage: the storage path the job will use, measured with a
 * fixed file, pattern, block, queue depth and cache state, as one record. */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_storage.h"

static int storage_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);

const struct ng_probe_kind ng_probe_storage = {
	.name = "storage",
	.usage = "(--path DIR | --file KEPT) [--size BYTES] [--block BYTES] [--pattern P] [--depth N]\n"
	         "       [--duration S] [--interval S] [--cache cold|warm] [--keep] [--quick]\n"
	         "       [--baseline B.json [--cohort-drops LIST] [--explain]] [--json] [--out FILE]",
	.summary = "Read or write a fixed test file in DIR through io_uring; every block checked.",
	.help =
	"Writes a test file of --size bytes in DIR whose every 4 KiB carries its own\n"
	"offset and a seeded pattern, then reads (or writes) it for --duration seconds\n"
	"with --depth I/Os in flight, one sample per --interval: decimal GB/s for\n"
	"read and write, IOPS for randread and randwrite. Every block read is checked;\n"
	"\"wrong\" counts the blocks that did not hold what was written. The record\n"
	"states the cache state, O_DIRECT or not, the filesystem type, the mount\n"
	"source and the block device, so local scratch and a shared service are never\n"
	"compared. The test file is removed at the end, on errors and on SIGINT,\n"
	"SIGTERM or SIGHUP, unless --keep. A full disk, a read-only path or a file that\n"
	"vanished gives a record with no samples and the reason.\n"
	"\n"
	"Options:\n"
	"  -p, --path DIR        the directory to test (the path the job will use)\n"
	"  -s, --size BYTES      test file size, K/M/G/T suffixes are powers of 1024\n"
	"                        (default 4G; 128M with --quick)\n"
	"  -B, --block BYTES     bytes per I/O, a multiple of 4K (default 1M; 4K for\n"
	"                        randread and randwrite)\n"
	"  -P, --pattern P       read, randread, write or randwrite (default read)\n"
	"  -q, --depth N         I/Os kept in flight (default 16; 32 for random patterns)\n"
	"  -d, --duration S      seconds measured (default 10; 2 with --quick)\n"
	"  -i, --interval S      seconds per sample (default 1; 0.25 with --quick)\n"
	"  -c, --cache STATE     cold: fsync, posix_fadvise(DONTNEED), O_DIRECT where the\n"
	"                        filesystem takes it; warm: the file read once through the\n"
	"                        page cache, buffered I/O (default cold)\n"
	"  -k, --keep            leave the test file (its path is in detail.file)\n"
	"  -f, --file KEPT       reuse a test file a run with --keep left, instead of\n"
	"                        writing one (checked first; never removed)\n"
	"  -Q, --quick           the short profile: small file, short duration\n"
	"  -b, --baseline FILE   judge the record with the gate against this baseline\n"
	"      --cohort-drops L  the cohort's drops, as for `nodegate gate`\n"
	"  -e, --explain         show the gate's arithmetic\n"
	"  -j, --json            print {\"records\": [...], \"verdicts\": [...]} as JSON\n"
	"  -o, --out FILE        also write the records there (atomically)\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: with --baseline, 0 when the record is admissible and 1 when not;\n"
	"without, 0 when it holds a measurement and 1 when not; 2 on usage errors.\n",
	.main = storage_main,
};

struct storage_args {
	ng_storage_opts o;
	struct ng_emit_opts emit;
	bool quick, have_size, have_block, have_depth, have_duration, have_interval;
};

static int parse_option(const struct ng_probe_kind *kind, void *args, int c)
{
	struct storage_args *a = args;
	uint64_t b;
	int t = ng_probe_timing_option(kind, c, optarg, 0, &a->o.duration_s, &a->o.interval_s,
	                               &a->have_duration, &a->have_interval);
	if (t != -2)
		return t;
	switch (c) {
	case 'p': a->o.dir = optarg; break;
	case 's':
		if (ng_probe_bytes(optarg, &a->o.size) < 0)
			return ng_probe_usage(kind, "--size takes bytes (e.g. 4G, 512M)", optarg);
		a->have_size = true;
		break;
	case 'B':
		if (ng_probe_bytes(optarg, &b) < 0 || b > UINT32_MAX)
			return ng_probe_usage(kind, "--block takes bytes (e.g. 1M, 4K)", optarg);
		a->o.block = (uint32_t)b;
		a->have_block = true;
		break;
	case 'P':
		if (ng_storage_pattern_parse(optarg, &a->o.pattern) < 0)
			return ng_probe_usage(kind, "--pattern is read, randread, write or randwrite", optarg);
		break;
	case 'q':
		if (ng_probe_bytes(optarg, &b) < 0 || b > 1024)
			return ng_probe_usage(kind, "--depth takes a whole number, 1 to 1024", optarg);
		a->o.depth = (unsigned)b;
		a->have_depth = true;
		break;
	case 'c':
		if (strcmp(optarg, "cold") == 0)
			a->o.cache = NG_STORAGE_COLD;
		else if (strcmp(optarg, "warm") == 0)
			a->o.cache = NG_STORAGE_WARM;
		else
			return ng_probe_usage(kind, "--cache is cold or warm", optarg);
		break;
	case 'k': a->o.keep = true; break;
	case 'f': a->o.file = optarg; break;
	case 'Q': a->quick = true; break;
	default: return ng_probe_usage(kind, "unknown option", NULL);
	}
	return -1;
}

/* Defaults that depend on the pattern and on --quick, for what was not given
 * (duration and interval are settled by ng_probe_timing, as for every probe). */
static void fill_defaults(struct storage_args *a)
{
	bool rnd = ng_storage_pattern_random(a->o.pattern);
	if (!a->have_block)
		a->o.block = rnd ? 4096 : 1u << 20;
	if (!a->have_depth)
		a->o.depth = rnd ? 32 : 16;
	if (a->quick && !a->have_size)
		a->o.size = 128ull << 20;
}

static int parse_args(const struct ng_probe_kind *kind, int argc, char **argv, struct storage_args *a)
{
	static const struct option longopts[] = {
		{"path", required_argument, NULL, 'p'},
		{"size", required_argument, NULL, 's'},
		{"block", required_argument, NULL, 'B'},
		{"pattern", required_argument, NULL, 'P'},
		{"depth", required_argument, NULL, 'q'},
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"cache", required_argument, NULL, 'c'},
		{"keep", no_argument, NULL, 'k'},
		{"file", required_argument, NULL, 'f'},
		{"quick", no_argument, NULL, 'Q'},
		NG_PROBE_EMIT_LONGOPTS,
		{0},
	};
	int rc = ng_probe_getopt(kind, argc, argv, "p:s:B:P:q:d:i:c:kf:Q" NG_PROBE_EMIT_SHORTOPTS, longopts, parse_option, a,
	                         &a->emit);
	if (rc >= 0)
		return rc;
	if (!a->o.dir && !a->o.file)
		return ng_probe_usage(kind, "--path DIR is required (the directory the job will read from)", NULL);
	if (a->o.dir && a->o.file)
		return ng_probe_usage(kind, "--path and --file exclude each other (the file's directory is tested)", NULL);
	fill_defaults(a);
	rc = ng_probe_timing(kind, a->quick, a->have_duration, a->have_interval, 2, 0.25,
	                     &a->o.duration_s, &a->o.interval_s);
	if (rc >= 0)
		return rc;
	ng_err err;
	if (ng_storage_opts_check(&a->o, &err) < 0)
		return ng_probe_usage(kind, err.msg, NULL);
	return ng_probe_check_emit(kind, &a->emit);
}

static int storage_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	struct storage_args a = {0};
	ng_storage_opts_default(&a.o);
	a.o.dir = NULL;
	int rc = parse_args(kind, argc, argv, &a);
	if (rc >= 0)
		return rc;
	ng_err err;
	cJSON *rec = ng_storage_probe(&a.o, &err);
	if (!rec) {
		fprintf(stderr, "nodegate probe storage: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	cJSON *records = cJSON_CreateArray();
	cJSON_AddItemToArray(records, rec);
	return ng_probe_finish(cli, kind, records, argc, argv, &a.emit);
}
