/* nodegate admit: its options and its output. The admission itself (screen,
 * judge, confirm, land, store) is the flow's: flow/admit.h. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/admit_report.h"
#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/admit.h"

static int admit_main(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_admit_entry = {
	.name = "admit",
	.usage = "[--store S] [--quick] [--storage-path DIR] [--skip DOMAIN]... [--json]\n"
	         "       [--fabric TOOL [--fabric-diag FILE] [--raw-dir DIR] -- COMMAND [ARGS...]]\n"
	         "       [--from FILE... [--confirm-from FILE...]] [--land slurm|none [--node NAME]]",
	.summary = "Screen this node before it joins an allocation; admit, warn, hold or quarantine.",
	.help =
	"Runs the admission profile on this node (compute: `probe cpu`, memory:\n"
	"`probe hostmem`, storage: `probe storage`), judges every metric against its\n"
	"class baseline and floor, and lands one outcome in the store:\n"
	"\n"
	"  admitted       every metric at or above its bar, and the gate passed it\n"
	"  admitted-warn  a marginal result, a flagged domain that recovered on its\n"
	"                 confirmation, or a class still establishing its baseline;\n"
	"                 the node is rechecked after admission.warn_recheck_hours\n"
	"  held           something was not measured: fix the harness, screen again\n"
	"  quarantined    the same domain failed twice, or wrong results: a case is\n"
	"                 opened with its evidence and release condition\n"
	"\n"
	"A metric is flagged below max(floor, admission.flag_fraction x class median).\n"
	"When one is, nodegate checks the node is still exclusive (no more than\n"
	"admission.exclusive_max_runnable other runnable tasks) and its class and\n"
	"software identity unchanged, and re-runs only the flagged domains, once.\n"
	"Baselines are per (class, software identity, metric), from accepted runs of\n"
	"idle nodes; a class with fewer than admission.min_baseline_nodes nodes is\n"
	"establishing one, and only the floor can fail it. Floors come from the\n"
	"policy's \"floors\" section.\n"
	"\n"
	"Options:\n"
	"      --store S          the store (also the global --store, NODEGATE_STORE)\n"
	"  -Q, --quick            the short profile (seconds per probe)\n"
	"      --storage-path DIR where the storage probe makes its test file: the path\n"
	"                         the training job will use (default /var/tmp)\n"
	"      --skip DOMAIN      leave out compute, memory or storage\n"
	"      --fabric TOOL      measure fabric too: run COMMAND (after --) through the\n"
	"                         harness and read it as TOOL (nccl-tests, perftest,\n"
	"                         nvbandwidth), as `nodegate run` does; a flagged fabric\n"
	"                         result re-runs it for the confirmation\n"
	"      --fabric-diag FILE the DCGM diagnostics the gate requires of fabric records\n"
	"                         (gate.required_diag): the --out of `nodegate run dcgmi`\n"
	"      --fabric-timeout S seconds before the fabric command is killed (default 600)\n"
	"      --raw-dir DIR      keep the fabric tool's raw output there (default: raw/\n"
	"                         beside a SQLite store); its sha256 is in every record\n"
	"      --from FILE        judge these records (from `probe`, `run`, `parse`)\n"
	"                         instead of measuring; all must be of one node\n"
	"      --confirm-from F   with --from: the confirmation's records; without it a\n"
	"                         flagged run ends `suspect` and names what to re-run\n"
	"      --land slurm|none  slurm: drain a quarantined node through scontrol\n"
	"                         (State=DRAIN, \"ng:quarantine DOMAIN METRIC case N: ...\"; never\n"
	"                         over an operator's drain; audited as land.drain);\n"
	"                         default none. NODEGATE_SCONTROL names scontrol\n"
	"      --node NAME        the Slurm node name (default: the scheduler name the\n"
	"                         records or the store give for the node, never its id)\n"
	"  -j, --json             print the decision as JSON\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 admitted or admitted-warn; 1 held, suspect or quarantined;\n"
	"2 usage or input error; 3 the store could not be read or written.\n",
	.exec = admit_main,
};

struct opts {
	const char *store;
	struct ng_admit_profile profile;
	const char **from, **confirm_from;
	size_t n_from, n_confirm_from;
	bool json;
	bool land_slurm;       /* --land slurm: drain a quarantined node through scontrol */
	const char *land_node; /* --node: its Slurm name, when not the records' node */
};

/* ---- options ------------------------------------------------------------------------ */

static int add_file(const char ***list, size_t *n, const char *path)
{
	const char **l = realloc(*list, (*n + 1) * sizeof *l);
	if (!l)
		return -1;
	l[(*n)++] = path;
	*list = l;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_STORE = 256, O_STORAGE, O_SKIP, O_FROM, O_CONFIRM, O_FABRIC, O_FDIAG, O_FTIME, O_RAW,
	       O_LAND, O_NODE };
	static const struct option longopts[] = {
		{"store", required_argument, NULL, O_STORE},
		{"quick", no_argument, NULL, 'Q'},
		{"storage-path", required_argument, NULL, O_STORAGE},
		{"skip", required_argument, NULL, O_SKIP},
		{"from", required_argument, NULL, O_FROM},
		{"confirm-from", required_argument, NULL, O_CONFIRM},
		{"fabric", required_argument, NULL, O_FABRIC},
		{"fabric-diag", required_argument, NULL, O_FDIAG},
		{"fabric-timeout", required_argument, NULL, O_FTIME},
		{"raw-dir", required_argument, NULL, O_RAW},
		{"land", required_argument, NULL, O_LAND},
		{"node", required_argument, NULL, O_NODE},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const struct ng_cmd_entry *e = &ng_cmd_admit_entry;
	o->profile.storage_dir = "/var/tmp";
	int c;
	while ((c = getopt_long(argc, argv, "Qjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': ng_cmd_print_help(e, stdout); return NG_EXIT_OK;
		case 'Q': o->profile.quick = true; break;
		case 'j': o->json = true; break;
		case O_STORE: o->store = optarg; break;
		case O_STORAGE: o->profile.storage_dir = optarg; break;
		case O_SKIP:
			if (strcmp(optarg, "compute") == 0)
				o->profile.skip_compute = true;
			else if (strcmp(optarg, "memory") == 0)
				o->profile.skip_memory = true;
			else if (strcmp(optarg, "storage") == 0)
				o->profile.skip_storage = true;
			else
				return ng_cmd_usage_error(e, "--skip takes compute, memory or storage, not \"%s\"",
				                          optarg);
			break;
		case O_FABRIC:
			o->profile.fabric_parser = ng_parser_find(optarg);
			if (!o->profile.fabric_parser || strcmp(optarg, "dcgmi") == 0)
				return ng_cmd_usage_error(e, "--fabric takes nccl-tests, perftest or nvbandwidth, "
				                             "not \"%s\" (DCGM results go in --fabric-diag)",
				                          optarg);
			break;
		case O_FDIAG: o->profile.fabric_diag = optarg; break;
		case O_RAW: o->profile.raw_dir = optarg; break;
		case O_LAND:
			if (strcmp(optarg, "slurm") != 0 && strcmp(optarg, "none") != 0)
				return ng_cmd_usage_error(e, "--land takes slurm or none");
			o->land_slurm = strcmp(optarg, "slurm") == 0;
			break;
		case O_NODE: o->land_node = optarg; break;
		case O_FTIME: {
			char *end;
			double t = strtod(optarg, &end);
			if (end == optarg || *end || !(t > 0) || t > 86400)
				return ng_cmd_usage_error(e, "--fabric-timeout takes seconds, more than 0");
			o->profile.fabric_timeout_s = t;
			break;
		}
		case O_FROM:
		case O_CONFIRM:
			if (c == O_FROM ? add_file(&o->from, &o->n_from, optarg)
			                : add_file(&o->confirm_from, &o->n_confirm_from, optarg)) {
				fprintf(stderr, "nodegate admit: out of memory\n");
				return NG_EXIT_USAGE;
			}
			break;
		default: return ng_cmd_usage_error(e, "unknown option (see --help)");
		}
	}
	/* getopt stops at "--": what follows is the fabric command. */
	bool dashdash = optind > 0 && optind <= argc && strcmp(argv[optind - 1], "--") == 0;
	if (optind < argc && !(dashdash && o->profile.fabric_parser))
		return ng_cmd_usage_error(e, "unexpected argument \"%s\"%s", argv[optind],
		                          dashdash ? " (a command after -- needs --fabric TOOL)" : "");
	if (o->profile.fabric_parser) {
		if (optind >= argc)
			return ng_cmd_usage_error(e, "--fabric needs the command to run after --");
		if (o->n_from)
			return ng_cmd_usage_error(e, "--fabric measures; --from judges records measured "
			                             "elsewhere: use one or the other");
		o->profile.fabric_argv = argv + optind;
		o->profile.fabric_argc = (size_t)(argc - optind);
	} else if (o->profile.fabric_diag || o->profile.raw_dir) {
		return ng_cmd_usage_error(e, "--fabric-diag and --raw-dir go with --fabric");
	}
	if (o->n_confirm_from && !o->n_from)
		return ng_cmd_usage_error(e, "--confirm-from goes with --from");
	if (o->profile.skip_compute && o->profile.skip_memory && o->profile.skip_storage && !o->n_from &&
	    !o->profile.fabric_parser)
		return ng_cmd_usage_error(e, "every domain is skipped: there is nothing to measure");
	return -1;
}

/* ---- the verb -------------------------------------------------------------------------- */

static int admit_main(struct ng_cli *cli, int argc, char **argv)
{
	struct opts o = {0};
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0) {
		free(o.from), free(o.confirm_from);
		return rc;
	}
	ng_store *st = ng_cli_open_store(cli, &ng_cmd_admit_entry, o.store);
	if (!st) {
		free(o.from), free(o.confirm_from);
		return NG_EXIT_STORE;
	}
	/* Raw fabric output is evidence: keep it beside a SQLite store unless
	 * told where. */
	char raw[4096];
	if (o.profile.fabric_parser && !o.profile.raw_dir && !strstr(ng_store_where(st), "://")) {
		const char *slash = strrchr(ng_store_where(st), '/');
		int len = slash ? (int)(slash - ng_store_where(st)) : 1;
		snprintf(raw, sizeof raw, "%.*s/raw", len, slash ? ng_store_where(st) : ".");
		o.profile.raw_dir = raw;
	}
	ng_ctx ctx;
	ng_cli_ctx(cli, st, &ctx);
	struct ng_admit_request q = {.profile = o.profile, .from = o.from, .n_from = o.n_from,
	                             .confirm_from = o.confirm_from, .n_confirm_from = o.n_confirm_from,
	                             .land_slurm = o.land_slurm, .land_node = o.land_node};
	struct ng_admit_run r;
	ng_err err;
	int exit_code;
	if (ng_admit_run_flow(&ctx, &q, &r, &err) == 0) {
		exit_code = ng_admit_exit_status(&r) == 0 ? NG_EXIT_OK : NG_EXIT_NOT_ADMISSIBLE;
		if (o.json) {
			cJSON *j = ng_admit_json(&r);
			ng_print_json(j);
			cJSON_Delete(j);
		} else {
			ng_admit_print_table(stdout, &r);
		}
	} else if (err.code == NG_ERR_STORE) {
		exit_code = ng_cli_store_error(&ng_cmd_admit_entry, &err);
	} else {
		fprintf(stderr, "nodegate admit: %s\n", err.msg);
		exit_code = err.code == NG_ERR_INTERNAL ? NG_EXIT_STORE : NG_EXIT_USAGE;
	}
	ng_admit_run_release(&r);
	free(o.from);
	free(o.confirm_from);
	ng_store_close(st);
	return exit_code;
}
