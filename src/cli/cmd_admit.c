/* nodegate admit: its options and its output. The admission itself (screen,
 * judge, confirm, land, store) is the flow's: flow/admit.h. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/admit_queue.h"
#include "cli/admit_report.h"
#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/admit.h"

static int admit_main(struct ng_cli *cli, int argc, char **argv);

enum { O_STORAGE = 256, O_SKIP, O_FROM, O_CONFIRM, O_FABRIC, O_FDIAG, O_FTIME, O_RAW,
       O_LAND, O_NODE, O_QUEUE, O_PROLOG, O_UNSCREEN };

static const struct ng_opt admit_opts[] = {
	NG_OPT_STORE,
	{"quick", 'Q', NULL, "the short profile (seconds per probe)"},
	{"storage-path", O_STORAGE, "DIR", "where the storage probe makes its test file: the path\n"
	 "the training job will use (default /var/tmp)"},
	{"skip", O_SKIP, "DOMAIN", "leave out compute, memory or storage"},
	{"fabric", O_FABRIC, "TOOL", "measure fabric too: run COMMAND (after --) through the\n"
	 "harness and read it as TOOL (nccl-tests, perftest,\n"
	 "nvbandwidth), as `nodegate run` does; a flagged fabric\n"
	 "result re-runs it for the confirmation"},
	{"fabric-diag", O_FDIAG, "FILE", "the DCGM diagnostics the gate requires of fabric records\n"
	 "(gate.required_diag): the --out of `nodegate run dcgmi`"},
	{"fabric-timeout", O_FTIME, "S", "seconds before the fabric command is killed (default 600)"},
	{"raw-dir", O_RAW, "DIR", "keep the fabric tool's raw output there (default: raw/\n"
	 "beside a SQLite store); its sha256 is in every record"},
	{"from", O_FROM, "FILE", "judge these records (from `probe`, `run`, `parse`)\n"
	 "instead of measuring; all must be of one node"},
	{"confirm-from", O_CONFIRM, "F", "with --from: the confirmation's records; without it a\n"
	 "flagged run ends `suspect` and names what to re-run"},
	{"land", O_LAND, "slurm|none", "slurm: drain a quarantined node through scontrol\n"
	 "(State=DRAIN, \"ng:quarantine DOMAIN METRIC case N: ...\"; never\n"
	 "over an operator's drain; audited as land.drain), and resume\n"
	 "the node of a case this run withdrew, from that drain alone;\n"
	 "default none. NODEGATE_SCONTROL names scontrol"},
	{"node", O_NODE, "NAME", "the Slurm node name (default: the scheduler name the\n"
	 "records or the store give for the node, never its id)"},
	{"queue", O_QUEUE, NULL, "the admission queue's job (docs/slurm.md): admitted and\n"
	 "admitted-warn give the node the Slurm feature\n"
	 "ng_admitted (production jobs require it) and take\n"
	 "unscreened off; any other outcome takes ng_admitted off,\n"
	 "puts unscreened on, and the reason in the node's comment\n"
	 "(never over an operator's); audited as land.features"},
	{"prolog", O_PROLOG, NULL, "in Slurm's Prolog: screen this node (the quick profile)\n"
	 "only for a job that asks (admission.prolog_min_nodes,\n"
	 "prolog_feature in its --constraint, prolog_comment in\n"
	 "its --comment); exit 1, which holds the job off the node,\n"
	 "only when it is quarantined; a job that cannot be read,\n"
	 "a held run, a store or option error exit 0"},
	{"unscreen", O_UNSCREEN, "LIST", "measure nothing: take ng_admitted off each node of the\n"
	 "Slurm host list and put unscreened on, so only the\n"
	 "admission queue's job lands there (a strigger program\n"
	 "for nodes that went down or drained: docs/slurm.md)"},
	NG_OPT_JSON("print the decision as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_admit_entry = {
	.name = "admit",
	.usage = "[--store S] [--quick] [--storage-path DIR] [--skip DOMAIN]... [--json]\n"
	         "       [--fabric TOOL [--fabric-diag FILE] [--raw-dir DIR] -- COMMAND [ARGS...]]\n"
	         "       [--from FILE... [--confirm-from FILE...]] [--land slurm|none [--node NAME]]\n"
	         "       [--queue] [--prolog] | --unscreen NODELIST",
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
	"  held           something was not measured (fix the harness, screen again),\n"
	"                 or peers screened in the last minutes share the drop: the\n"
	"                 node is rechecked, and a case opened minutes before for the\n"
	"                 same drop of a peer is withdrawn (the incident's first node)\n"
	"  quarantined    the same domain failed twice, or wrong results: a case is\n"
	"                 opened with its evidence and release condition\n"
	"\n"
	"A metric is flagged below max(floor, admission.flag_fraction x class median).\n"
	"When one is, nodegate checks the node is still exclusive (no more than\n"
	"admission.exclusive_max_runnable other runnable tasks) and its class and\n"
	"software identity unchanged, and re-runs only the flagged domains, once.\n"
	"Baselines are per (class, software identity, metric), from accepted runs of\n"
	"idle nodes; a class of admission.small_class_min_nodes to\n"
	"admission.min_baseline_nodes nodes gets a bar widened for its few nodes; a\n"
	"smaller one is establishing one, and only the floor can fail it. Floors come\n"
	"from the policy's \"floors\" section. docs/admission.md has every rule.\n",
	.opts = admit_opts,
	.help_tail =
	"Exit status: 0 admitted or admitted-warn; 1 held, suspect or quarantined;\n"
	"2 usage or input error; 3 the store could not be read or written.\n",
	.exec = admit_main,
	.needs = NG_CMD_NEEDS_STORE,
};

struct opts {
	const char *store;
	struct ng_admit_profile profile;
	const char **from, **confirm_from;
	size_t n_from, n_confirm_from;
	bool json;
	bool land_slurm;       /* --land slurm: drain a quarantined node through scontrol */
	bool queue, prolog;    /* --queue: land on Slurm features; --prolog: in Slurm's Prolog */
	const char *unscreen;  /* --unscreen LIST: only put these nodes back in the queue */
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
	const struct ng_cmd_entry *e = &ng_cmd_admit_entry;
	o->profile.storage_dir = "/var/tmp";
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_admit_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'Q': o->profile.quick = true; break;
		case 'j': o->json = true; break;
		case 's': o->store = op.arg; break;
		case O_STORAGE: o->profile.storage_dir = op.arg; break;
		case O_SKIP:
			if (strcmp(op.arg, "compute") == 0)
				o->profile.skip_compute = true;
			else if (strcmp(op.arg, "memory") == 0)
				o->profile.skip_memory = true;
			else if (strcmp(op.arg, "storage") == 0)
				o->profile.skip_storage = true;
			else
				return ng_cmd_usage_error(e, "--skip takes compute, memory or storage, not \"%s\"",
				                          op.arg);
			break;
		case O_FABRIC:
			o->profile.fabric_parser = ng_parser_find(op.arg);
			if (!o->profile.fabric_parser || strcmp(op.arg, "dcgmi") == 0)
				return ng_cmd_usage_error(e, "--fabric takes nccl-tests, perftest or nvbandwidth, "
				                             "not \"%s\" (DCGM results go in --fabric-diag)",
				                          op.arg);
			break;
		case O_FDIAG: o->profile.fabric_diag = op.arg; break;
		case O_RAW: o->profile.raw_dir = op.arg; break;
		case O_LAND:
			if (strcmp(op.arg, "slurm") != 0 && strcmp(op.arg, "none") != 0)
				return ng_cmd_usage_error(e, "--land takes slurm or none");
			o->land_slurm = strcmp(op.arg, "slurm") == 0;
			break;
		case O_NODE: o->land_node = op.arg; break;
		case O_QUEUE: o->queue = true; break;
		case O_PROLOG: o->prolog = o->profile.quick = true; break;
		case O_UNSCREEN: o->unscreen = op.arg; break;
		case O_FTIME: {
			char *end;
			double t = strtod(op.arg, &end);
			if (end == op.arg || *end || !(t > 0) || t > 86400)
				return ng_cmd_usage_error(e, "--fabric-timeout takes seconds, more than 0");
			o->profile.fabric_timeout_s = t;
			break;
		}
		case O_FROM:
		case O_CONFIRM:
			if (c == O_FROM ? add_file(&o->from, &o->n_from, op.arg)
			                : add_file(&o->confirm_from, &o->n_confirm_from, op.arg)) {
				fprintf(stderr, "nodegate admit: out of memory\n");
				return NG_EXIT_USAGE;
			}
			break;
		case NG_OPT_EXIT: return op.status;
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
	if (rc < 0 && o.unscreen)
		rc = ng_admit_unscreen(cli, o.unscreen);
	if (rc < 0 && o.prolog)
		rc = ng_admit_prolog_start(cli, o.land_node);
	if (rc >= 0) {
		free(o.from), free(o.confirm_from);
		return ng_admit_prolog_usage(argc, argv, rc);
	}
	ng_store *st = ng_cli_store(cli, o.store);
	if (!st) {
		free(o.from), free(o.confirm_from);
		return o.prolog ? ng_admit_prolog_exit(NULL, NG_EXIT_STORE) : NG_EXIT_STORE;
	}
	ng_ctx ctx;
	ng_cli_ctx(cli, st, &ctx);
	struct ng_admit_request q = {.profile = o.profile, .from = o.from, .n_from = o.n_from,
	                             .confirm_from = o.confirm_from, .n_confirm_from = o.n_confirm_from,
	                             .land_slurm = o.land_slurm, .land_node = o.land_node,
	                             .queue = o.queue};
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
	/* The Prolog's answer reads the outcome: before the run is released. */
	if (o.prolog)
		exit_code = ng_admit_prolog_exit(&r, exit_code);
	ng_admit_run_release(&r);
	free(o.from);
	free(o.confirm_from);
	return exit_code;
}
