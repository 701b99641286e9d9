/* nodegate selftest: its options, and the rows printed as they come; the
 * runner is flow/testing/selftest.c. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/install_tree.h"
#include "flow/testing/selftest.h"

#define SYNTH_LIBRARY "libnodegate-nvml-synth.so"
#define SYNTH_SCONTROL "nodegate-scontrol-synth"

static int selftest_main(struct ng_cli *cli, int argc, char **argv);

enum { O_LIBRARY = 256, O_KEEP, O_BREAK };

static const struct ng_opt selftest_opts[] = {
	{"library", O_LIBRARY, "PATH", "the synthetic NVML library (default: " SYNTH_LIBRARY "\n"
	 "beside the nodegate binary, else in ../lib/nodegate/)"},
	{"break", O_BREAK, "LINK", "break one link on purpose, to see the selftest catch it:\n"
	 "nvml (the GPU cases get a library that does not exist:\n"
	 "the faults no longer drain) or store (the admission\n"
	 "cases get a store that cannot be written)"},
	{"keep", O_KEEP, NULL, "keep the temporary directory (its path is printed)"},
	NG_OPT_JSON("the rows as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_selftest_entry = {
	.name = "selftest",
	.usage = "[--library PATH] [--break nvml|store] [--keep] [--json]",
	.summary = "Inject known faults through the whole path and check where each lands.",
	.help =
	"Injects known faults through the whole path (synthetic GPU or planted probe\n"
	"failure -> record -> store -> verdict -> landing) and checks that each lands\n"
	"where the table says:\n"
	"\n"
	"  CASE            EXPECTED                  GOT                       RESULT\n"
	"  gpu-healthy     ok, no drain, exit 0      ok, no drain, exit 0      pass\n"
	"  ...\n"
	"\n"
	"GPU cases run `nodegate epilog` on the synthetic NVML library with SLURM_JOB_GPUS\n"
	"0,1: healthy, volatile uncorrectable ECC on GPU 0, PCIe x8 of x16 on GPU 1, a\n"
	"fault on GPU 3 (not the job's), GPU 0 vanished from NVML (the store knows it),\n"
	"no NVML library, an NVML call that hangs\n"
	"(--deadline 1, done within 2 s). Admission cases ingest 12 healthy peers and\n"
	"run `nodegate admit --from` on planted runs: healthy (admitted), slow twice\n"
	"(quarantined, with a case), wrong results (quarantined), no samples (held);\n"
	"then `nodegate audit verify`. Fabric cases run `nodegate fabric` on the stand-in\n"
	"fleet (nodegate-fabric-synth beside the binary, as srun, all_reduce_perf and\n"
	"ib_write_bw): a slow node planted in a 16-node gang found by bisection, a\n"
	"socket fallback caught (incomparable), a bad peer not blamed on the candidate.\n"
	"Probation cases quarantine this machine's own node id in a store of their own,\n"
	"release it, and run `nodegate epilog` as the end of a job: a healthy job\n"
	"returns the node to admitted, one ending with an ECC fault opens its case\n"
	"again, and a third quarantine in 30 days is a lemon that release refuses.\n"
	"Queue cases run `nodegate admit --queue` against a stand-in scontrol\n"
	"(nodegate-scontrol-synth beside the binary) holding one node in a file: a\n"
	"healthy unscreened node gains ng_admitted, a slow one loses it.\n"
	"\n"
	"Landing is checked in dry-run: every run has --land none, and a row compares\n"
	"what the landing would do (verdict, drain flag, drain reason) with the table;\n"
	"no real scontrol is run.\n"
	"Everything happens in a fresh temporary directory with its own store and\n"
	"policy; this machine's store, policy, kernel log, GPUs and Slurm are not used.\n",
	.opts = selftest_opts,
	.help_tail =
	"Exit status: 0 every row as expected; 1 some row is not (each says why);\n"
	"2 a usage error, or the temporary directory or library could not be used.\n",
	.exec = selftest_main,
};

struct out {
	bool json;
	cJSON *rows; /* --json: the rows, printed at the end */
};

static void print_row(void *arg, const char *name, const char *expected, const char *got,
                      const char *problem)
{
	struct out *o = arg;
	bool ok = !problem[0];
	if (o->json) {
		cJSON_AddItemToArray(o->rows, ng_selftest_row_json(name, expected, got, problem));
		return;
	}
	printf("%-16s %-28s %-32s %s\n", name, expected, got, ok ? "pass" : "FAIL");
	if (!ok)
		printf("  %s: %s\n", name, problem);
	fflush(stdout);
}

static void remove_dir(ng_selftest *t)
{
	char dir[sizeof t->dir];
	snprintf(dir, sizeof dir, "%s", t->dir);
	if (ng_selftest_remove(t) < 0)
		fprintf(stderr, "nodegate selftest: could not remove %s: %s\n", dir, strerror(errno));
}

static int selftest_main(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	const struct ng_cmd_entry *e = &ng_cmd_selftest_entry;
	const char *library = NULL, *brk = NULL;
	bool keep = false;
	static ng_selftest t; /* large; one per process */
	static char self[PATH_MAX], real_lib[PATH_MAX], scontrol[PATH_MAX];
	struct out out = {0};
	ng_selftest_request req = {.self = self, .lib = real_lib, .scontrol = scontrol, .row = print_row,
	                           .row_arg = &out};
	int opt;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_selftest_entry, argc, argv);
	while ((opt = ng_opt_next(&op)) != NG_OPT_END) {
		switch (opt) {
		case 'j': out.json = true; break;
		case O_LIBRARY: library = op.arg; break;
		case O_KEEP: keep = true; break;
		case O_BREAK:
			if (strcmp(op.arg, "nvml") != 0 && strcmp(op.arg, "store") != 0)
				return ng_cmd_usage_error(e, "--break is nvml or store, not \"%s\"", op.arg);
			brk = op.arg;
			break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"", argv[optind]);
	req.brk = brk;

	char self_dir[PATH_MAX - 64], lib[PATH_MAX];
	if (ng_self_path(self, sizeof self, self_dir, sizeof self_dir) < 0) {
		fprintf(stderr, "nodegate selftest: cannot find the nodegate binary (/proc/self/exe)\n");
		return NG_EXIT_USAGE;
	}
	/* beside the binary (a build), else lib/nodegate/ of the install */
	ng_shipped_path(SYNTH_SCONTROL, "lib/nodegate/" SYNTH_SCONTROL, scontrol, sizeof scontrol);
	if (!library) {
		ng_shipped_path(SYNTH_LIBRARY, "lib/nodegate/" SYNTH_LIBRARY, lib, sizeof lib);
		library = lib;
	}
	if (!realpath(library, real_lib)) {
		fprintf(stderr, "nodegate selftest: no synthetic NVML library at %s (%s): build the "
		                "nodegate-nvml-synth target, or give --library\n",
		        library, strerror(errno));
		return NG_EXIT_USAGE;
	}
	ng_err err;
	if (ng_selftest_begin(&t, &req, &err) < 0) {
		fprintf(stderr, "nodegate selftest: %s\n", err.msg);
		if (!keep)
			remove_dir(&t);
		return NG_EXIT_USAGE;
	}

	if (out.json)
		out.rows = cJSON_CreateArray();
	else {
		if (brk)
			printf("broken on purpose: %s\n", brk);
		printf("%-16s %-28s %-32s %s\n", "CASE", "EXPECTED", "GOT", "RESULT");
		fflush(stdout);
	}
	ng_selftest_run(&t);

	if (out.json) {
		cJSON *doc = ng_selftest_json(&t, out.rows, keep);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		if (t.failed)
			printf("%zu of %zu cases not as expected\n", t.failed, t.rows);
		else
			printf("all %zu cases as expected\n", t.rows);
		if (keep)
			printf("kept: %s\n", t.dir);
	}
	if (!keep)
		remove_dir(&t);
	return t.failed ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}
