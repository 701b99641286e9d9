/* A stand-in for the measurement tools, for the harness tests. Its behaviour
 * is chosen by FAKE_MODE, so one binary reproduces each way a real tool can
 * fail a harness that trusts exit statuses:
 *   samples  prints "SAMPLE <v>" lines (FAKE_VALUE, default 240) and "WRONG 0"
 *   old      an nccl-tests build without -I: lists -b -e -g -c -n in -h, and
 *            answers an unknown option with usage text and exit status 0
 *   usage0   prints its usage text for anything, exit 0
 *   hang     prints a line, then sleeps forever, ignoring SIGTERM
 *   crash    prints a sample, then dies of SIGSEGV
 *   dcgmi226 prints a DCGM-like JSON result with a failing test, exits 226
 *   flood    prints FAKE_BYTES bytes of output
 *   nccl     an nccl-tests 2.17-style all_reduce_perf: the per-size table with
 *            the largest size's bus bandwidth FAKE_VALUE (default 240); "-c 0"
 *            makes #wrong N/A; FAKE_WRONG puts wrong elements in the last row;
 *            an option it does not know gets usage text and exit status 0
 *   dcgmi    `dcgmi diag -r N -j`: DCGM 3.x-style JSON, every test passing,
 *            or FAKE_DIAG_FAIL=<test> failing that one with exit status 226
 * "-h" prints the usage text in every mode (the harness asks for it first). */
#include <getopt.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(void)
{
	printf("USAGE: fake_tool\n"
	       "\t[-b,--minbytes <min size in bytes>]\n"
	       "\t[-e,--maxbytes <max size in bytes>]\n"
	       "\t[-g,--ngpus <gpus per thread>]\n"
	       "\t[-c,--check <check iteration count>]\n"
	       "\t[-n,--iters <iteration count>]\n"
	       "\t[-h,--help]\n");
}

static void nccl_usage(void)
{
	printf("USAGE: all_reduce_perf \n"
	       "\t[-t,--nthreads <num threads>] \n"
	       "\t[-g,--ngpus <gpus per thread>] \n"
	       "\t[-b,--minbytes <min size in bytes>] \n"
	       "\t[-e,--maxbytes <max size in bytes>] \n"
	       "\t[-f,--stepfactor <increment factor>] \n"
	       "\t[-n,--iters <iteration count>] \n"
	       "\t[-w,--warmup_iters <warmup iteration count>] \n"
	       "\t[-c,--check <check iteration count>] \n"
	       "\t[-h,--help]\n");
}

static int nccl(int argc, char **argv)
{
	int c, check = 1;
	while ((c = getopt(argc, argv, "t:g:b:e:f:n:w:c:")) != -1) {
		if (c == '?') {
			printf("invalid option '%c'\n", c);
			nccl_usage();
			return 0;
		}
		if (c == 'c')
			check = atoi(optarg);
	}
	const char *v = getenv("FAKE_VALUE"), *w = getenv("FAKE_WRONG");
	/* Runs of a real fabric differ a little: +-1%, varying with the pid. */
	double busbw = (v ? atof(v) : 240.0) * (1.0 + 0.01 * (double)((int)(getpid() % 7) - 3) / 3.0);
	char last_wrong[32];
	snprintf(last_wrong, sizeof last_wrong, "%s", check ? (w ? w : "0") : "N/A");
	printf("# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807\n"
	       "# Collective test starting: all_reduce_perf\n"
	       "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 "
	       "iters: 20 agg iters: 1 validation: %d graph: 0\n"
	       "#\n# Using devices\n", check ? 1 : 0);
	for (int r = 0; r < 8; r++)
		printf("#  Rank %2d Group  0 Pid  40001 on  testnode device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n",
		       r, r, 0x18 + r);
	printf("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n");
	printf("#\n"
	       "#                                                              out-of-place                       in-place          \n"
	       "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
	       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n");
	const char *wr = check ? "0" : "N/A";
	for (long size = 1048576, i = 0; size <= 1073741824L; size *= 4, i++) {
		bool last = size == 1073741824L;
		double bw = last ? busbw : busbw * (0.3 + 0.1 * (double)i);
		double alg = bw / 1.75, t = (double)size / (alg * 1e3);
		printf("%12ld  %12ld     float     sum      -1  %7.1f  %6.2f  %6.2f  %6s  %7.1f  %6.2f  %6.2f  %6s\n",
		       size, size / 4, t, alg, bw, last ? last_wrong : wr, t, alg, bw, last ? last_wrong : wr);
	}
	printf("# Out of bounds values : %s OK\n", check ? (w ? w : "0") : "0");
	printf("# Avg bus bandwidth    : %.4g \n#\n# Collective test concluded: all_reduce_perf\n#\n", busbw * 0.7);
	return 0;
}

static void dcgmi_usage(void)
{
	printf("dcgmi diag -- Used to run diagnostics on the system.\n\n"
	       "Usage: dcgmi diag\n"
	       "   dcgmi diag [--host <IP/FQDN>] [-g <groupId>] [-h] [-j] -r <diag> [--fail-early]\n"
	       "Flags:\n"
	       "  -r  --run  diag   Run a diagnostic.\n"
	       "  -j  --json        Print the output in a json format\n"
	       "      --fail-early  Enable early failure checks\n");
}

static int dcgmi(void)
{
	static const char *const tests[][2] = {
		{"Integration", "PCIe"}, {"Hardware", "GPU Memory"}, {"Integration", "NCCL Tests"},
	};
	const char *bad = getenv("FAKE_DIAG_FAIL");
	bool failed = false;
	printf("{\n  \"DCGM GPU Diagnostic\" : {\n    \"test_categories\" : [\n");
	for (int t = 0; t < 3; t++) {
		bool fail = bad && strcmp(bad, tests[t][1]) == 0;
		failed = failed || fail;
		printf("      {\"category\" : \"%s\", \"tests\" : [{\"name\" : \"%s\", \"results\" : [",
		       tests[t][0], tests[t][1]);
		for (int g = 0; g < 2; g++)
			printf("%s{\"gpu_id\" : \"%d\", \"status\" : \"%s\"%s}", g ? ", " : "", g,
			       fail && g == 1 ? "Fail" : "Pass",
			       fail && g == 1 ? ", \"warnings\" : [{\"warning\" : \"stand-in failure\"}]" : "");
		printf("]}]}%s\n", t < 2 ? "," : "");
	}
	printf("    ]\n  },\n  \"version\" : \"3.3.5\"\n}\n");
	return failed ? 226 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = getenv("FAKE_MODE");
	if (!mode)
		mode = "samples";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0) {
			if (strcmp(mode, "nccl") == 0)
				nccl_usage();
			else if (strcmp(mode, "dcgmi") == 0)
				dcgmi_usage();
			else
				usage();
			return 0;
		}
	}
	if (strcmp(mode, "nccl") == 0)
		return nccl(argc, argv);
	if (strcmp(mode, "dcgmi") == 0)
		return dcgmi();
	if (strcmp(mode, "old") == 0) {
		int c;
		opterr = 1;
		while ((c = getopt(argc, argv, "b:e:g:c:n:")) != -1) {
			if (c == '?') {
				/* What nccl-tests <= 2.19.1 does: usage, then return 0. */
				printf("invalid option '%c'\n", c);
				usage();
				return 0;
			}
		}
		printf("SAMPLE 240\nWRONG 0\n");
		return 0;
	}
	if (strcmp(mode, "usage0") == 0) {
		usage();
		return 0;
	}
	if (strcmp(mode, "hang") == 0) {
		signal(SIGTERM, SIG_IGN);
		printf("SAMPLE 240\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (strcmp(mode, "crash") == 0) {
		printf("SAMPLE 240\n");
		fflush(stdout);
		/* A sanitizer build would catch the fault and exit; die of it instead. */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		return 0;
	}
	if (strcmp(mode, "dcgmi226") == 0) {
		printf("{\"category\": \"Integration\", \"tests\": [{\"name\": \"pcie\", \"status\": \"Fail\"}]}\n");
		return 226;
	}
	if (strcmp(mode, "flood") == 0) {
		long n = getenv("FAKE_BYTES") ? atol(getenv("FAKE_BYTES")) : 1000000;
		for (long i = 0; i < n; i++)
			putchar(i % 64 == 63 ? '\n' : 'x');
		return 0;
	}
	const char *v = getenv("FAKE_VALUE");
	printf("SAMPLE %s\nWRONG 0\n", v ? v : "240");
	return 0;
}
