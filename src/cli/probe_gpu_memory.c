/* nodegate probe gpu-memory: a policy share of each GPU's free memory,
 * integrity patterns checked on the device, and the bandwidth of a device
 * copy within it. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_gpu.h"

static int memory_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);

const struct ng_probe_kind ng_probe_gpu_memory = {
	.name = "gpu-memory",
	.usage = "[--share F] [--duration S] [--interval S] [--seed N] [--gpus LIST]\n"
	         "       [--plant-corrupt-word N] [--quick]\n"
	         "       [--baseline B.json [--cohort-drops LIST] [--explain]] [--json] [--out FILE]",
	.summary = "Allocate, pattern-check and measure copy bandwidth of every GPU's memory.",
	.help =
	"On every GPU at once: allocates --share of the GPU's free memory, writes and\n"
	"checks on the device three patterns over all of it (each word's own byte\n"
	"offset, walking ones and their complement, seeded random): \"wrong\" counts\n"
	"the 64-bit words that read back differently, and detail.first_mismatches\n"
	"gives their byte offsets. Then copies one half of the buffer to the other\n"
	"for --duration seconds and records gpumem.copy.gbps, one record per GPU:\n"
	"decimal GB/s of bytes read plus written, one sample per --interval, from\n"
	"device time. Each GPU is compared with the median of its siblings in the\n"
	"node (detail.siblings). No GPU backend, no driver or no GPU gives a record\n"
	"with no samples and the reason (docs/gpu-probes.md).\n"
	"\n"
	"Options:\n"
	"      --share F         share of each GPU's free memory, above 0, at most 0.95\n"
	"                        (default: the policy's probe.gpu_memory_share, 0.8)\n"
	"  -d, --duration S      seconds of copy bandwidth (default 3; 1 with --quick)\n"
	"  -i, --interval S      seconds per sample (default 0.25; 0.1 with --quick)\n"
	"      --seed N          seed of the random pattern (default 1)\n"
	"  -g, --gpus LIST       only these GPUs, by backend index: \"0,2,4-7\" (default:\n"
	"                        every GPU)\n"
	"      --plant-corrupt-word N\n"
	"                        a planted fault, to check the probe itself: one bit of\n"
	"                        word N of the first GPU of the run is flipped between\n"
	"                        writing and checking the random pattern\n"
	"  -Q, --quick           the short profile\n"
	"  -b, --baseline FILE   judge the records with the gate against this baseline\n"
	"      --cohort-drops L  the cohort's drops, as for `nodegate gate`\n"
	"  -e, --explain         show the gate's arithmetic\n"
	"  -j, --json            print {\"records\": [...], \"verdicts\": [...]} as JSON\n"
	"  -o, --out FILE        also write the records there (atomically)\n"
	"  -h, --help            this text\n"
	"\n"
	"Environment: NODEGATE_GPU_BACKEND names the backend library (default:\n"
	"libnodegate-gpu-cuda.so beside nodegate, then on the library path).\n"
	"\n"
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.main = memory_main,
};

struct memory_args {
	struct ng_gpu_memory_opts o;
	struct ng_emit_opts emit;
	int gpus[NG_GPU_DEVICES_MAX];
	bool quick, have_duration, have_interval;
};

static int parse_option(const struct ng_probe_kind *kind, void *args, int c)
{
	struct memory_args *a = args;
	char *end;
	int t = ng_probe_timing_option(kind, c, optarg, 0.01, &a->o.duration_s, &a->o.interval_s,
	                               &a->have_duration, &a->have_interval);
	if (t != -2)
		return t;
	switch (c) {
	case 'F':
		errno = 0;
		a->o.share = strtod(optarg, &end);
		if (end == optarg || *end || errno || !(a->o.share > 0) || a->o.share > 0.95)
			return ng_probe_usage(kind, "--share takes a share above 0, at most 0.95", optarg);
		break;
	case 'S': {
		errno = 0;
		unsigned long long v = strtoull(optarg, &end, 10);
		if (end == optarg || *end || errno || optarg[0] == '-')
			return ng_probe_usage(kind, "--seed takes a whole number", optarg);
		a->o.seed = v;
		break;
	}
	case 'W': {
		errno = 0;
		long long v = strtoll(optarg, &end, 10);
		if (end == optarg || *end || errno || v < 0)
			return ng_probe_usage(kind, "--plant-corrupt-word takes a word index from 0", optarg);
		a->o.plant_corrupt_word = v;
		break;
	}
	case 'g': return ng_probe_gpus_option(kind, optarg, a->gpus, &a->o.gpus);
	case 'Q': a->quick = true; break;
	default: return ng_probe_usage(kind, "unknown option", NULL);
	}
	return -1;
}

static int parse_args(const struct ng_probe_kind *kind, int argc, char **argv, struct memory_args *a)
{
	static const struct option longopts[] = {
		{"share", required_argument, NULL, 'F'},
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"seed", required_argument, NULL, 'S'},
		{"gpus", required_argument, NULL, 'g'},
		{"plant-corrupt-word", required_argument, NULL, 'W'},
		{"quick", no_argument, NULL, 'Q'},
		NG_PROBE_EMIT_LONGOPTS,
		{0},
	};
	int rc = ng_probe_getopt(kind, argc, argv, "d:i:g:Q" NG_PROBE_EMIT_SHORTOPTS, longopts,
	                         parse_option, a, &a->emit);
	if (rc >= 0)
		return rc;
	rc = ng_probe_timing(kind, a->quick, a->have_duration, a->have_interval, 1, 0.1,
	                     &a->o.duration_s, &a->o.interval_s);
	if (rc >= 0)
		return rc;
	return ng_probe_check_emit(kind, &a->emit);
}

static int memory_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	struct memory_args a = {0};
	ng_gpu_memory_opts_default(&a.o);
	a.o.share = cli->policy.gpu_memory_share;
	a.o.sibling_fraction = cli->policy.gpu_sibling_fraction;
	int rc = parse_args(kind, argc, argv, &a);
	if (rc >= 0)
		return rc;
	char why[NG_GPU_WHY + 512];
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, NULL);
	ng_err err;
	cJSON *records = ng_probe_gpu_memory_run(g, why, &a.o, &err);
	ng_probe_gpu_close(g);
	if (!records)
		return ng_probe_usage(kind, err.msg, NULL);
	return ng_probe_finish(cli, kind, records, argc, argv, &a.emit);
}
