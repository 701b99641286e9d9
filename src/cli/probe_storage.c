/* nodegate probe storage: the storage path the job will use, measured with a
 * fixed file, pattern, block, queue depth and cache state, as one record. */
#include <errno.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_storage.h"

static const struct ng_opt storage_opts[] = {
	{"path", 'p', "DIR", "the directory to test (the path the job will use)"},
	{"size", 's', "BYTES", "test file size, K/M/G/T suffixes are powers of 1024\n"
	 "(default 4G; 128M with --quick)"},
	{"block", 'B', "BYTES", "bytes per I/O, a multiple of 4K (default 1M; 4K for\n"
	 "randread and randwrite)"},
	{"pattern", 'P', "P", "read, randread, write or randwrite (default read)"},
	{"depth", 'q', "N", "I/Os kept in flight (default 16; 32 for random patterns)"},
	{"duration", 'd', "S", "seconds measured (default 10; 2 with --quick)"},
	{"interval", 'i', "S", "seconds per sample (default 1; 0.25 with --quick)"},
	{"cache", 'c', "STATE", "cold: fsync, posix_fadvise(DONTNEED), O_DIRECT where the\n"
	 "filesystem takes it; warm: the file read once through the\n"
	 "page cache, buffered I/O (default cold)"},
	{"keep", 'k', NULL, "leave the test file (its path is in detail.file)"},
	{"file", 'f', "KEPT", "reuse a test file a run with --keep left, instead of\n"
	 "writing one (checked first; never removed)"},
	{"quick", 'Q', NULL, "the short profile: small file, short duration"},
	NG_PROBE_EMIT_OPTS,
	{0},
};

struct storage_args {
	struct ng_probe_args common;
	ng_storage_opts o;
	bool have_size, have_block, have_depth;
};

static void defaults(struct ng_cli *cli, void *args)
{
	(void)cli;
	struct storage_args *a = args;
	ng_storage_opts_default(&a->o);
	a->o.dir = NULL;
	a->common.duration = &a->o.duration_s;
	a->common.interval = &a->o.interval_s;
}

static int option(const struct ng_probe_kind *kind, void *args, int c, const char *arg)
{
	struct storage_args *a = args;
	uint64_t b;
	switch (c) {
	case 'p': a->o.dir = arg; break;
	case 's':
		if (ng_probe_bytes(arg, &a->o.size) < 0)
			return ng_probe_usage(kind, "--size takes bytes (e.g. 4G, 512M)", arg);
		a->have_size = true;
		break;
	case 'B':
		if (ng_probe_bytes(arg, &b) < 0 || b > UINT32_MAX)
			return ng_probe_usage(kind, "--block takes bytes (e.g. 1M, 4K)", arg);
		a->o.block = (uint32_t)b;
		a->have_block = true;
		break;
	case 'P':
		if (ng_storage_pattern_parse(arg, &a->o.pattern) < 0)
			return ng_probe_usage(kind, "--pattern is read, randread, write or randwrite", arg);
		break;
	case 'q':
		if (ng_probe_bytes(arg, &b) < 0 || b > 1024)
			return ng_probe_usage(kind, "--depth takes a whole number, 1 to 1024", arg);
		a->o.depth = (unsigned)b;
		a->have_depth = true;
		break;
	case 'c':
		if (strcmp(arg, "cold") == 0)
			a->o.cache = NG_STORAGE_COLD;
		else if (strcmp(arg, "warm") == 0)
			a->o.cache = NG_STORAGE_WARM;
		else
			return ng_probe_usage(kind, "--cache is cold or warm", arg);
		break;
	case 'k': a->o.keep = true; break;
	case 'f': a->o.file = arg; break;
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
	if (a->common.quick && !a->have_size)
		a->o.size = 128ull << 20;
}

static int settle(const struct ng_probe_kind *kind, void *args)
{
	struct storage_args *a = args;
	if (!a->o.dir && !a->o.file)
		return ng_probe_usage(kind, "--path DIR is required (the directory the job will read from)", NULL);
	if (a->o.dir && a->o.file)
		return ng_probe_usage(kind, "--path and --file exclude each other (the file's directory is tested)", NULL);
	fill_defaults(a);
	return -1;
}

static int measure(const struct ng_probe_kind *kind, void *args, cJSON **records)
{
	struct storage_args *a = args;
	ng_err err;
	if (ng_storage_opts_check(&a->o, &err) < 0)
		return ng_probe_usage(kind, err.msg, NULL);
	cJSON *rec = ng_storage_probe(&a->o, &err);
	if (!rec) {
		fprintf(stderr, "nodegate probe storage: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	*records = cJSON_CreateArray();
	cJSON_AddItemToArray(*records, rec);
	return -1;
}

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
	"vanished gives a record with no samples and the reason.\n",
	.opts = storage_opts,
	.help_tail =
	"Exit status: with --baseline, 0 when the record is admissible and 1 when not;\n"
	"without, 0 when it holds a measurement and 1 when not; 2 on usage errors.\n",
	.args_size = sizeof(struct storage_args),
	.min_interval = 0,
	.quick_duration = 2,
	.quick_interval = 0.25,
	.defaults = defaults,
	.option = option,
	.settle = settle,
	.measure = measure,
};
