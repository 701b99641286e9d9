/* nodegate probe gpu-compute: a fixed GEMM sustained on every GPU at once,
 * its result checked, NVML read alongside. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_gpu.h"

static int compute_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv);

const struct ng_probe_kind ng_probe_gpu_compute = {
	.name = "gpu-compute",
	.usage = "[--duration S] [--interval S] [--size N] [--gpus LIST] [--no-nvml]\n"
	         "       [--plant-throttle SHARE] [--quick]\n"
	         "       [--baseline B.json [--cohort-drops LIST] [--explain]] [--json] [--out FILE]",
	.summary = "Sustain a bf16 GEMM on every GPU at once: TFLOP/s, checked result, clocks.",
	.help =
	"Runs an n x n x n GEMM (bf16 inputs, fp32 accumulate; cuBLAS where present, a\n"
	"kernel of nodegate's otherwise) back to back on every GPU at once for\n"
	"--duration seconds, and records gpu.gemm.tflops, one record per GPU: one\n"
	"sample per --interval of 2n^3 operations per GEMM over device time. The\n"
	"inputs are known, so the last result is checked on the device: \"wrong\"\n"
	"counts the elements that differ. NVML is read each interval meanwhile\n"
	"(detail.nvml: SM clock, power, temperature, clock event reasons); a series\n"
	"whose last third falls below its first third by more than\n"
	"probe.gpu_series_drop is marked falling, with its cause (detail.series), and\n"
	"each GPU is compared with the median of its siblings in the node\n"
	"(detail.siblings; an outlier is below probe.gpu_sibling_fraction of it).\n"
	"No GPU backend, no driver or no GPU gives a record with no samples and the\n"
	"reason (docs/gpu-probes.md).\n"
	"\n"
	"Options:\n"
	"  -d, --duration S      seconds of sustained GEMMs (default 15; 3 with --quick)\n"
	"  -i, --interval S      seconds per sample and NVML reading (default 0.5; 0.25\n"
	"                        with --quick)\n"
	"  -s, --size N          the GEMM's n, 16 to 65536 (default 8192)\n"
	"  -g, --gpus LIST       only these GPUs, by backend index: \"0,2,4-7\" (default:\n"
	"                        every GPU)\n"
	"      --no-nvml         do not read NVML during the run (detail.nvml says so)\n"
	"      --plant-throttle SHARE\n"
	"                        a planted fault, to check the probe itself: after a\n"
	"                        third of the duration the first GPU of the run\n"
	"                        delivers only SHARE (0 to 1) of its rate\n"
	"  -Q, --quick           the short profile\n"
	"  -b, --baseline FILE   judge the records with the gate against this baseline\n"
	"      --cohort-drops L  the cohort's drops, as for `nodegate gate`\n"
	"  -e, --explain         show the gate's arithmetic\n"
	"  -j, --json            print {\"records\": [...], \"verdicts\": [...]} as JSON\n"
	"  -o, --out FILE        also write the records there (atomically)\n"
	"  -h, --help            this text\n"
	"\n"
	"Environment: NODEGATE_GPU_BACKEND names the backend library (default:\n"
	"libnodegate-gpu-cuda.so beside nodegate, then on the library path);\n"
	"NODEGATE_NVML_LIBRARY the NVML library.\n"
	"\n"
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.main = compute_main,
};

struct compute_args {
	struct ng_gpu_compute_opts o;
	struct ng_emit_opts emit;
	int gpus[NG_GPU_DEVICES_MAX];
	bool quick, have_duration, have_interval;
};

static int parse_option(const struct ng_probe_kind *kind, void *args, int c)
{
	struct compute_args *a = args;
	char *end;
	int t = ng_probe_timing_option(kind, c, optarg, 0.01, &a->o.duration_s, &a->o.interval_s,
	                               &a->have_duration, &a->have_interval);
	if (t != -2)
		return t;
	switch (c) {
	case 's': {
		errno = 0;
		unsigned long v = strtoul(optarg, &end, 10);
		if (end == optarg || *end || errno || v < 16 || v > 65536)
			return ng_probe_usage(kind, "--size takes the GEMM's n, 16 to 65536", optarg);
		a->o.n = (unsigned)v;
		break;
	}
	case 'g': return ng_probe_gpus_option(kind, optarg, a->gpus, &a->o.gpus);
	case 'N': a->o.nvml = false; break;
	case 'T':
		errno = 0;
		a->o.plant_throttle = strtod(optarg, &end);
		if (end == optarg || *end || errno || !(a->o.plant_throttle > 0) || !(a->o.plant_throttle < 1))
			return ng_probe_usage(kind, "--plant-throttle takes a share above 0 and below 1", optarg);
		break;
	case 'Q': a->quick = true; break;
	default: return ng_probe_usage(kind, "unknown option", NULL);
	}
	return -1;
}

static int parse_args(const struct ng_probe_kind *kind, int argc, char **argv, struct compute_args *a)
{
	static const struct option longopts[] = {
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"size", required_argument, NULL, 's'},
		{"gpus", required_argument, NULL, 'g'},
		{"no-nvml", no_argument, NULL, 'N'},
		{"plant-throttle", required_argument, NULL, 'T'},
		{"quick", no_argument, NULL, 'Q'},
		NG_PROBE_EMIT_LONGOPTS,
		{0},
	};
	int rc = ng_probe_getopt(kind, argc, argv, "d:i:s:g:Q" NG_PROBE_EMIT_SHORTOPTS, longopts,
	                         parse_option, a, &a->emit);
	if (rc >= 0)
		return rc;
	rc = ng_probe_timing(kind, a->quick, a->have_duration, a->have_interval, 3, 0.25,
	                     &a->o.duration_s, &a->o.interval_s);
	if (rc >= 0)
		return rc;
	return ng_probe_check_emit(kind, &a->emit);
}

static int compute_main(struct ng_cli *cli, const struct ng_probe_kind *kind, int argc, char **argv)
{
	struct compute_args a = {0};
	ng_gpu_compute_opts_default(&a.o);
	a.o.sibling_fraction = cli->policy.gpu_sibling_fraction;
	a.o.series_drop = cli->policy.gpu_series_drop;
	int rc = parse_args(kind, argc, argv, &a);
	if (rc >= 0)
		return rc;
	char why[NG_GPU_WHY + 512];
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, NULL);
	ng_err err;
	cJSON *records = ng_probe_gpu_compute_run(g, why, &a.o, &err);
	ng_probe_gpu_close(g);
	if (!records)
		return ng_probe_usage(kind, err.msg, NULL);
	return ng_probe_finish(cli, kind, records, argc, argv, &a.emit);
}
