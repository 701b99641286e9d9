/* nodegate probe gpu-compute: a fixed GEMM sustained on every GPU at once,
 * its result checked, NVML read alongside. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/probe.h"
#include "collect/probe_gpu.h"

enum { O_NO_NVML = NG_PROBE_O_OWN, O_PLANT_THROTTLE };

static const struct ng_opt compute_opts[] = {
	{"duration", 'd', "S", "seconds of sustained GEMMs (default 15; 3 with --quick)"},
	{"interval", 'i', "S", "seconds per sample and NVML reading (default 0.5; 0.25\n"
	 "with --quick)"},
	{"size", 's', "N", "the GEMM's n, 16 to 65536 (default 8192)"},
	{"gpus", 'g', "LIST", "only these GPUs, by backend index: \"0,2,4-7\" (default:\n"
	 "every GPU)"},
	{"no-nvml", O_NO_NVML, NULL, "do not read NVML during the run (detail.nvml says so)"},
	{"plant-throttle", O_PLANT_THROTTLE, "SHARE", "a planted fault, to check the probe itself: after a\n"
	 "third of the duration the first GPU of the run\n"
	 "delivers only SHARE (0 to 1) of its rate"},
	NG_PROBE_QUICK_OPT,
	NG_PROBE_EMIT_OPTS,
	{0},
};

struct compute_args {
	struct ng_probe_args common;
	struct ng_gpu_compute_opts o;
	int gpus[NG_GPU_DEVICES_MAX];
};

static void defaults(struct ng_cli *cli, void *args)
{
	struct compute_args *a = args;
	ng_gpu_compute_opts_default(&a->o);
	a->o.sibling_fraction = cli->policy.gpu_sibling_fraction;
	a->o.series_drop = cli->policy.gpu_series_drop;
	a->common.duration = &a->o.duration_s;
	a->common.interval = &a->o.interval_s;
}

static int option(const struct ng_probe_kind *kind, void *args, int c, const char *arg)
{
	struct compute_args *a = args;
	char *end;
	switch (c) {
	case 's': {
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (end == arg || *end || errno || v < 16 || v > 65536)
			return ng_probe_usage(kind, "--size takes the GEMM's n, 16 to 65536", arg);
		a->o.n = (unsigned)v;
		break;
	}
	case 'g': return ng_probe_gpus_option(kind, arg, a->gpus, &a->o.gpus);
	case O_NO_NVML: a->o.nvml = false; break;
	case O_PLANT_THROTTLE:
		errno = 0;
		a->o.plant_throttle = strtod(arg, &end);
		if (end == arg || *end || errno || !(a->o.plant_throttle > 0) || !(a->o.plant_throttle < 1))
			return ng_probe_usage(kind, "--plant-throttle takes a share above 0 and below 1", arg);
		break;
	}
	return -1;
}

static int measure(const struct ng_probe_kind *kind, void *args, cJSON **records)
{
	struct compute_args *a = args;
	char why[NG_GPU_WHY + 512];
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, NULL);
	ng_err err;
	*records = ng_probe_gpu_compute_run(g, why, &a->o, &err);
	ng_probe_gpu_close(g);
	return *records ? -1 : ng_probe_usage(kind, err.msg, NULL);
}

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
	"reason (docs/gpu-probes.md).\n",
	.opts = compute_opts,
	.help_tail =
	"Environment: NODEGATE_GPU_BACKEND names the backend library (default:\n"
	"libnodegate-gpu-cuda.so beside nodegate, then on the library path);\n"
	"NODEGATE_NVML_LIBRARY the NVML library.\n"
	"\n"
	"Exit status: with --baseline, 0 when the records the baseline is for are\n"
	"admissible and 1 when not; without, 0 when every record holds a measurement\n"
	"and 1 when any does not; 2 on usage errors.\n",
	.args_size = sizeof(struct compute_args),
	.min_interval = 0.01,
	.quick_duration = 3,
	.quick_interval = 0.25,
	.defaults = defaults,
	.option = option,
	.measure = measure,
};
