/* nodegate probe gpu-memory: a policy share of each GPU's free memory,
 * integrity patterns checked on the device, and the bandwidth of a device
 * copy within it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_gpu.h"

enum { O_SHARE = NG_PROBE_O_OWN, O_SEED, O_PLANT_CORRUPT_WORD };

static const struct ng_opt memory_opts[] = {
	{"share", O_SHARE, "F", "share of each GPU's free memory, above 0, at most 0.95\n"
	 "(default: the policy's probe.gpu_memory_share, 0.8)"},
	{"duration", 'd', "S", "seconds of copy bandwidth (default 3; 1 with --quick)"},
	{"interval", 'i', "S", "seconds per sample (default 0.25; 0.1 with --quick)"},
	{"seed", O_SEED, "N", "seed of the random pattern (default 1)"},
	{"gpus", 'g', "LIST", "only these GPUs, by backend index: \"0,2,4-7\" (default:\n"
	 "every GPU)"},
	{"plant-corrupt-word", O_PLANT_CORRUPT_WORD, "N", "a planted fault, to check the probe itself: one bit of\n"
	 "word N of the first GPU of the run is flipped between\n"
	 "writing and checking the random pattern"},
	NG_PROBE_QUICK_OPT,
	NG_PROBE_EMIT_OPTS,
	{0},
};

struct memory_args {
	struct ng_probe_args common;
	struct ng_gpu_memory_opts o;
	int gpus[NG_GPU_DEVICES_MAX];
};

static void defaults(struct ng_cli *cli, void *args)
{
	struct memory_args *a = args;
	ng_gpu_memory_opts_default(&a->o);
	a->o.share = cli->policy.gpu_memory_share;
	a->o.sibling_fraction = cli->policy.gpu_sibling_fraction;
	a->common.duration = &a->o.duration_s;
	a->common.interval = &a->o.interval_s;
}

static int option(const struct ng_probe_kind *kind, void *args, int c, const char *arg)
{
	struct memory_args *a = args;
	char *end;
	switch (c) {
	case O_SHARE:
		errno = 0;
		a->o.share = strtod(arg, &end);
		if (end == arg || *end || errno || !(a->o.share > 0) || a->o.share > 0.95)
			return ng_probe_usage(kind, "--share takes a share above 0, at most 0.95", arg);
		break;
	case O_SEED: {
		errno = 0;
		unsigned long long v = strtoull(arg, &end, 10);
		if (end == arg || *end || errno || arg[0] == '-')
			return ng_probe_usage(kind, "--seed takes a whole number", arg);
		a->o.seed = v;
		break;
	}
	case O_PLANT_CORRUPT_WORD: {
		errno = 0;
		long long v = strtoll(arg, &end, 10);
		if (end == arg || *end || errno || v < 0)
			return ng_probe_usage(kind, "--plant-corrupt-word takes a word index from 0", arg);
		a->o.plant_corrupt_word = v;
		break;
	}
	case 'g': return ng_probe_gpus_option(kind, arg, a->gpus, &a->o.gpus);
	}
	return -1;
}

static int measure(const struct ng_probe_kind *kind, void *args, cJSON **records)
{
	struct memory_args *a = args;
	char why[NG_GPU_WHY + 512];
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, NULL);
	ng_err err;
	*records = ng_probe_gpu_memory_run(g, why, &a->o, &err);
	ng_probe_gpu_close(g);
	return *records ? -1 : ng_probe_usage(kind, err.msg, NULL);
}

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
	"with no samples and the reason (docs/gpu-probes.md).\n",
	.opts = memory_opts,
	.help_tail =
	"Environment: NODEGATE_GPU_BACKEND names the backend library (default:\n"
	"libnodegate-gpu-cuda.so beside nodegate, then on the library path).\n"
	"\n"
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.args_size = sizeof(struct memory_args),
	.min_interval = 0.01,
	.quick_duration = 1,
	.quick_interval = 0.1,
	.defaults = defaults,
	.option = option,
	.measure = measure,
};
