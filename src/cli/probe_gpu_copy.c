/* nodegate probe gpu-copy: host to device and device to host per GPU, and
 * every ordered GPU pair peer to peer, each copy verified. */
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_gpu.h"

static const struct ng_opt copy_opts[] = {
	{"size", 's', "BYTES", "bytes per copy, K/M/G suffixes are powers of 1024\n"
	 "(default 256M; 64M with --quick)"},
	{"duration", 'd', "S", "seconds per path (default 0.5; 0.2 with --quick)"},
	{"interval", 'i', "S", "seconds per sample (default 0.1; 0.05 with --quick)"},
	{"gpus", 'g', "LIST", "only these GPUs, by backend index: \"0,2,4-7\" (default:\n"
	 "every GPU)"},
	NG_PROBE_QUICK_OPT,
	NG_PROBE_EMIT_OPTS,
	{0},
};

struct copy_args {
	struct ng_probe_args common;
	struct ng_gpu_copy_opts o;
	int gpus[NG_GPU_DEVICES_MAX];
	bool have_size;
};

static void defaults(struct ng_cli *cli, void *args)
{
	struct copy_args *a = args;
	ng_gpu_copy_opts_default(&a->o);
	a->o.sibling_fraction = cli->policy.gpu_sibling_fraction;
	a->common.duration = &a->o.duration_s;
	a->common.interval = &a->o.interval_s;
}

static int option(const struct ng_probe_kind *kind, void *args, int c, const char *arg)
{
	struct copy_args *a = args;
	switch (c) {
	case 's':
		if (ng_probe_bytes(arg, &a->o.bytes) < 0 || a->o.bytes < 4096 || a->o.bytes % 8 ||
		    a->o.bytes > ((uint64_t)64 << 30))
			return ng_probe_usage(kind, "--size takes bytes, 4K to 64G, a multiple of 8 (e.g. 256M)",
			                      arg);
		a->have_size = true;
		break;
	case 'g': return ng_probe_gpus_option(kind, arg, a->gpus, &a->o.gpus);
	}
	return -1;
}

static int settle(const struct ng_probe_kind *kind, void *args)
{
	(void)kind;
	struct copy_args *a = args;
	if (a->common.quick && !a->have_size)
		a->o.bytes = (uint64_t)64 << 20;
	return -1;
}

static int measure(const struct ng_probe_kind *kind, void *args, cJSON **records)
{
	struct copy_args *a = args;
	char why[NG_GPU_WHY + 512];
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, NULL);
	ng_err err;
	*records = ng_probe_gpu_copy_run(g, why, &a->o, &err);
	ng_probe_gpu_close(g);
	return *records ? -1 : ng_probe_usage(kind, err.msg, NULL);
}

const struct ng_probe_kind ng_probe_gpu_copy = {
	.name = "gpu-copy",
	.usage = "[--size BYTES] [--duration S] [--interval S] [--gpus LIST] [--quick]\n"
	         "       [--baseline B.json [--cohort-drops LIST] [--explain]] [--json] [--out FILE]",
	.summary = "Measure and verify host-GPU and GPU-GPU copy paths, each against its siblings.",
	.help =
	"Copies --size bytes over every path of the node and records decimal GB/s per\n"
	"--interval from device time: gpucopy.h2d.gbps (pinned host memory to the\n"
	"GPU) and gpucopy.d2h.gbps (back) for each GPU, one GPU at a time so that each\n"
	"GPU's own link is measured, and gpucopy.p2p.gbps for every ordered GPU pair\n"
	"with peer access, in rounds where every GPU sends to one peer at once. Each\n"
	"path's data is first verified (\"wrong\": 64-bit words that differ). A pair\n"
	"without peer access gives no record and is listed in\n"
	"conditions.no_peer_access. Each GPU and each link is compared with the\n"
	"median of its siblings in the node (detail.siblings): one GPU in an x8 slot\n"
	"or one slow link stands out before a class baseline exists. No GPU backend,\n"
	"no driver or no GPU gives records with no samples and the reason\n"
	"(docs/gpu-probes.md).\n",
	.opts = copy_opts,
	.help_tail =
	"Environment: NODEGATE_GPU_BACKEND names the backend library (default:\n"
	"libnodegate-gpu-cuda.so beside nodegate, then on the library path).\n"
	"\n"
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.args_size = sizeof(struct copy_args),
	.min_interval = 0.01,
	.quick_duration = 0.2,
	.quick_interval = 0.05,
	.defaults = defaults,
	.option = option,
	.settle = settle,
	.measure = measure,
};
