/* nodegate probe gpu-copy: host to device and device to host per GPU, and
 * every ordered GPU pair peer to peer, each copy verified. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_gpu.h"

static int copy_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);

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
	"(docs/gpu-probes.md).\n"
	"\n"
	"Options:\n"
	"  -s, --size BYTES      bytes per copy, K/M/G suffixes are powers of 1024\n"
	"                        (default 256M; 64M with --quick)\n"
	"  -d, --duration S      seconds per path (default 0.5; 0.2 with --quick)\n"
	"  -i, --interval S      seconds per sample (default 0.1; 0.05 with --quick)\n"
	"  -g, --gpus LIST       only these GPUs, by backend index: \"0,2,4-7\" (default:\n"
	"                        every GPU)\n"
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
	.main = copy_main,
};

struct copy_args {
	struct ng_gpu_copy_opts o;
	struct ng_emit_opts emit;
	int gpus[NG_GPU_DEVICES_MAX];
	bool quick, have_size, have_duration, have_interval;
};

static int parse_option(const struct ng_probe_kind *kind, void *args, int c)
{
	struct copy_args *a = args;
	int t = ng_probe_timing_option(kind, c, optarg, 0.01, &a->o.duration_s, &a->o.interval_s,
	                               &a->have_duration, &a->have_interval);
	if (t != -2)
		return t;
	switch (c) {
	case 's':
		if (ng_probe_bytes(optarg, &a->o.bytes) < 0 || a->o.bytes < 4096 || a->o.bytes % 8 ||
		    a->o.bytes > ((uint64_t)64 << 30))
			return ng_probe_usage(kind, "--size takes bytes, 4K to 64G, a multiple of 8 (e.g. 256M)",
			                      optarg);
		a->have_size = true;
		break;
	case 'g': return ng_probe_gpus_option(kind, optarg, a->gpus, &a->o.gpus);
	case 'Q': a->quick = true; break;
	default: return ng_probe_usage(kind, "unknown option", NULL);
	}
	return -1;
}

static int parse_args(const struct ng_probe_kind *kind, int argc, char **argv, struct copy_args *a)
{
	static const struct option longopts[] = {
		{"size", required_argument, NULL, 's'},
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"gpus", required_argument, NULL, 'g'},
		{"quick", no_argument, NULL, 'Q'},
		NG_PROBE_EMIT_LONGOPTS,
		{0},
	};
	int rc = ng_probe_getopt(kind, argc, argv, "s:d:i:g:Q" NG_PROBE_EMIT_SHORTOPTS, longopts,
	                         parse_option, a, &a->emit);
	if (rc >= 0)
		return rc;
	if (a->quick && !a->have_size)
		a->o.bytes = (uint64_t)64 << 20;
	rc = ng_probe_timing(kind, a->quick, a->have_duration, a->have_interval, 0.2, 0.05,
	                     &a->o.duration_s, &a->o.interval_s);
	if (rc >= 0)
		return rc;
	return ng_probe_check_emit(kind, &a->emit);
}

static int copy_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	struct copy_args a = {0};
	ng_gpu_copy_opts_default(&a.o);
	a.o.sibling_fraction = cli->policy.gpu_sibling_fraction;
	int rc = parse_args(kind, argc, argv, &a);
	if (rc >= 0)
		return rc;
	char why[NG_GPU_WHY + 512];
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, NULL);
	ng_err err;
	cJSON *records = ng_probe_gpu_copy_run(g, why, &a.o, &err);
	ng_probe_gpu_close(g);
	if (!records)
		return ng_probe_usage(kind, err.msg, NULL);
	return ng_probe_finish(cli, kind, records, argc, argv, &a.emit);
}
