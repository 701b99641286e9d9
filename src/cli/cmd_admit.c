/* nodegate admit: screen this node (or records measured elsewhere) against
 * its class baselines, confirm what was flagged once, and land the outcome.
 *
 * The flow is the admission seed's: measure every domain; judge each metric
 * against its class baseline and floor; when anything is flagged, check that
 * the node is still exclusive and its environment unchanged, and re-run only
 * the flagged domains once; then admit, admit with a warning and a recheck
 * date, hold (nothing measured: fix the harness), or quarantine with a case
 * that names its evidence and its release condition. Everything it measured
 * and decided is in the store before it says so. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/admit.h"
#include "flow/shadow.h"
#include "core/record.h"
#include "cli/admit_profile.h"
#include "cli/admit_queue.h"
#include "cli/store_cli.h"
#include "flow/evidence.h"
#include "collect/identity.h"
#include "core/json.h"

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
	 "over an operator's drain; audited as land.drain);\n"
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
	"policy's \"floors\" section.\n",
	.opts = admit_opts,
	.help_tail =
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
	bool queue, prolog;    /* --queue: land on Slurm features; --prolog: in Slurm's Prolog */
	const char *unscreen;  /* --unscreen LIST: only put these nodes back in the queue */
	const char *land_node; /* --node: its Slurm name, when not the records' node */
};

const char *ng_admit_str(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void ng_admit_note(struct ng_admit_run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(r->notes, cJSON_CreateString(buf));
}

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

/* ---- records in -------------------------------------------------------------------- */

/* Loads record files into one array: each file an array of records or one. */
static cJSON *load_records(const char **files, size_t n, ng_err *err)
{
	cJSON *all = cJSON_CreateArray();
	for (size_t i = 0; all && i < n; i++) {
		char *text;
		size_t len;
		cJSON *doc = ng_load_json_file(files[i], &text, &len, err);
		free(text);
		if (!doc) {
			cJSON_Delete(all);
			return NULL;
		}
		/* Records from a file are checked as ingest checks them (a sample
		 * of 0 may be a dead path measured, so it is kept); this node's own
		 * records are nodegate's. */
		ng_err serr;
		int bad = -1, k = 0;
		for (const cJSON *r = cJSON_IsArray(doc) ? doc->child : doc; r && bad < 0;
		     r = cJSON_IsArray(doc) ? r->next : NULL, k++)
			if (cJSON_IsObject(r) && ng_record_check_strict(r, true, &serr) < 0)
				bad = k;
		if (bad >= 0) {
			cJSON_Delete(doc);
			cJSON_Delete(all);
			ng_fail(err, "%s: record %d: %s", files[i], bad, serr.msg);
			return NULL;
		}
		if (cJSON_IsObject(doc)) {
			cJSON_AddItemToArray(all, doc);
			continue;
		}
		if (!cJSON_IsArray(doc)) {
			cJSON_Delete(doc);
			cJSON_Delete(all);
			ng_fail(err, "%s: records must be a JSON array of records or one record", files[i]);
			return NULL;
		}
		cJSON *r;
		while ((r = cJSON_DetachItemFromArray(doc, 0)))
			cJSON_AddItemToArray(all, r);
		cJSON_Delete(doc);
	}
	if (!all)
		ng_fail(err, "out of memory");
	return all;
}

/* Every record of a run must be of one node, one class and one software
 * identity: a run is one node's, judged against one class. */
static int identify(struct ng_admit_run *r, const cJSON *records, const char *what, ng_err *err)
{
	const cJSON *rec;
	int i = 0;
	cJSON_ArrayForEach(rec, records)
	{
		const char *node = ng_admit_str(rec, "node"), *cls = ng_admit_str(rec, "class");
		const char *sw = ng_admit_str(rec, "software");
		if (!cJSON_IsObject(rec))
			return ng_fail(err, "%s record %d is not a JSON object", what, i);
		const char *metric = ng_admit_str(rec, "metric");
		if (!metric || !metric[0])
			return ng_fail(err, "%s record %d has no metric", what, i);
		if (!node || !cls || !node[0] || !cls[0])
			return ng_fail(err,
			               "%s record %d has no %s: records from `nodegate probe` and `run` carry "
			               "node and class (or the class template cannot describe this node: see "
			               "`nodegate identity`)",
			               what, i, node ? "class" : "node");
		const char *name = ng_admit_str(rec, "node_name");
		if (name && !r->node_name[0])
			ng_copy(r->node_name, sizeof r->node_name, name);
		if (!r->node[0]) {
			ng_copy(r->node, sizeof r->node, node);
			ng_copy(r->class_key, sizeof r->class_key, cls);
			ng_copy(r->software, sizeof r->software, sw ? sw : "");
		} else if (strcmp(r->node, node) != 0 || strcmp(r->class_key, cls) != 0 ||
		           strcmp(r->software, sw ? sw : "") != 0) {
			return ng_fail(err,
			               "%s record %d is of %s (%s, %s), not %s (%s, %s): one run is one "
			               "node's, of one class and software identity",
			               what, i, node, cls, sw ? sw : "no software identity", r->node,
			               r->class_key, r->software[0] ? r->software : "no software identity");
		}
		i++;
	}
	if (i == 0)
		return ng_fail(err, "%s: no records", what);
	return 0;
}

/* ---- judging ------------------------------------------------------------------------ */

/* ---- the confirmation ---------------------------------------------------------------- */

/* Exclusivity and environment parity, checked before re-running anything:
 * a confirmation under different conditions confirms nothing. */
static bool ready_to_confirm(const struct ng_cli *cli, struct ng_admit_run *r)
{
	long others = ng_admit_other_runnable();
	if (others < 0) {
		ng_admit_note(r, "not confirmed: cannot read /proc/stat to check the node is exclusive");
		return false;
	}
	if (others > cli->policy.exclusive_max_runnable) {
		ng_admit_note(r,
		              "not confirmed: the node is not exclusive (%ld other runnable tasks, "
		              "admission.exclusive_max_runnable is %ld): drain it and screen again",
		              others, cli->policy.exclusive_max_runnable);
		return false;
	}
	/* The first run's records stamped again, as they were then (their
	 * tools' versions are part of the software identity), so the same node
	 * in the same state gives the same class and software identity. */
	ng_err err = {0};
	cJSON *probe = cJSON_CreateArray();
	static const char *const stamped[] = {"node", "class", "software", "profile"};
	for (size_t i = 0; probe && i < r->n; i++) {
		if (strcmp(r->j[i].stage, "first") != 0)
			continue;
		cJSON *copy = cJSON_Duplicate(r->j[i].rec, true);
		for (size_t k = 0; copy && k < sizeof stamped / sizeof stamped[0]; k++)
			cJSON_DeleteItemFromObjectCaseSensitive(copy, stamped[k]);
		cJSON_AddItemToArray(probe, copy);
	}
	bool same = false;
	if (ng_identity_stamp(probe, &cli->policy, NULL, &err) == 0) {
		const cJSON *first = cJSON_GetArrayItem(probe, 0);
		const char *cls = ng_admit_str(first, "class"), *sw = ng_admit_str(first, "software");
		same = cls && sw && strcmp(cls, r->class_key) == 0 && strcmp(sw, r->software) == 0;
		if (!same)
			ng_admit_note(r,
			              "not confirmed: the environment changed since the first run (class %s, "
			              "software %s; was %s, %s)",
			              cls ? cls : "?", sw ? sw : "?", r->class_key, r->software);
	} else {
		ng_admit_note(r, "not confirmed: cannot read the node's identity again: %s", err.msg);
	}
	cJSON_Delete(probe);
	return same;
}

/* Live: re-runs the flagged domains once. Returns the records, or NULL when
 * the confirmation could not be run (a note says why). */
static cJSON *confirm_live(const struct ng_cli *cli, const struct opts *o, struct ng_admit_run *r)
{
	if (!ready_to_confirm(cli, r))
		return NULL;
	cJSON *missing = NULL;
	cJSON *recs = ng_admit_collect(cli, &o->profile, r->d.confirm, r->d.n_confirm, &missing);
	const cJSON *m;
	cJSON_ArrayForEach(m, missing)
	{
		ng_admit_note(r,
		              "cannot re-run %s here: run its harness again under the same conditions "
		              "and judge both runs with --from and --confirm-from",
		              m->valuestring);
	}
	bool short_of = cJSON_GetArraySize(missing) > 0;
	cJSON_Delete(missing);
	if (short_of) {
		cJSON_Delete(recs);
		return NULL;
	}
	return recs;
}

/* ---- the verb -------------------------------------------------------------------------- */

static int exit_for(const struct ng_admit_run *r)
{
	return strcmp(r->outcome, "admitted") == 0 || strcmp(r->outcome, "admitted-warn") == 0
	               ? NG_EXIT_OK
	               : NG_EXIT_NOT_ADMISSIBLE;
}

static int run(struct ng_cli *cli, const struct opts *o, ng_store *st, struct ng_admit_run *r,
               cJSON **keep, int *exit_code)
{
	const struct ng_cmd_entry *e = &ng_cmd_admit_entry;
	ng_err err;
	cJSON *first;
	if (o->n_from) {
		first = load_records(o->from, o->n_from, &err);
	} else {
		cJSON *missing = NULL;
		first = ng_admit_collect(cli, &o->profile, NULL, 0, &missing);
		cJSON_Delete(missing);
		if (!first)
			ng_fail(&err, "out of memory");
	}
	keep[0] = first;
	if (!first || identify(r, first, o->n_from ? "--from" : "this node's", &err) < 0) {
		fprintf(stderr, "nodegate admit: %s\n", err.msg);
		*exit_code = NG_EXIT_USAGE;
		return -1;
	}
	/* Records from elsewhere may not say what the scheduler calls the node:
	 * the store may know it from an earlier run. */
	if (!r->node_name[0] && ng_store_node_name_of(st, r->node, r->node_name, sizeof r->node_name,
	                                              &err) < 0)
		goto store_failed;
	ng_run_id(r->run_id, r->node, r->now);
	if (ng_admit_judge_stage(st, cli, r, first, "first", &err) < 0 || ng_admit_decide_run(r, &cli->policy) < 0)
		goto store_failed;

	if (r->d.outcome == NG_ADMIT_SUSPECT) {
		/* The flagged domains' evidence, before the confirmation changes it. */
		if (ng_evidence_capture(st,
		                        &(ng_evidence_capture_in){.node = r->node, .run_id = r->run_id,
		                                                  .domains = r->d.confirm,
		                                                  .n_domains = r->d.n_confirm,
		                                                  .records = first, .now = r->now},
		                        &err) < 0)
			goto store_failed;
		cJSON *confirm = NULL;
		if (o->n_confirm_from) {
			confirm = load_records(o->confirm_from, o->n_confirm_from, &err);
			struct ng_admit_run probe = {.notes = NULL};
			ng_copy(probe.node, sizeof probe.node, r->node);
			ng_copy(probe.class_key, sizeof probe.class_key, r->class_key);
			ng_copy(probe.software, sizeof probe.software, r->software);
			if (!confirm || identify(&probe, confirm, "--confirm-from", &err) < 0) {
				fprintf(stderr, "nodegate admit: %s\n", err.msg);
				cJSON_Delete(confirm);
				*exit_code = NG_EXIT_USAGE;
				return -1;
			}
			ng_admit_note(r, "confirmation from --confirm-from: exclusivity was the harness's "
			                 "to ensure; node, class and software identity match");
		} else if (!o->n_from) {
			confirm = confirm_live(cli, o, r);
		}
		keep[1] = confirm;
		if (confirm && (ng_admit_judge_stage(st, cli, r, confirm, "confirm", &err) < 0 ||
		                ng_admit_decide_run(r, &cli->policy) < 0))
			goto store_failed;
		if (!confirm && !o->n_from) {
			/* It was flagged and could not be confirmed: not a pass, not proof. */
			r->d.outcome = NG_ADMIT_HELD;
		}
	}
	if (ng_admit_land(st, cli, r, &err) < 0 || ng_admit_store_decision(st, r, &err) < 0)
		goto store_failed;
	if (ng_shadow_admission(st, &(ng_shadow_admit){r->node, r->class_key, r->run_id, r->now,
	                        r->first, r->confirm, r->n_first, r->n_confirm, r->outcome}, &err) < 0)
		ng_admit_note(r, "shadow policy: %s (the enforcing outcome stands)", err.msg);
	if (o->land_slurm && ng_admit_land_slurm(st, cli, r, o->land_node, &err) < 0)
		goto store_failed;
	if (o->queue && ng_admit_land_queue(st, cli, r, o->land_node, &err) < 0)
		goto store_failed;
	*exit_code = exit_for(r);
	return 0;

store_failed:
	*exit_code = ng_cli_store_error(e, &err);
	return -1;
}

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
	ng_store *st = ng_cli_open_store(cli, &ng_cmd_admit_entry, o.store);
	if (!st) {
		free(o.from), free(o.confirm_from);
		return o.prolog ? ng_admit_prolog_exit(NULL, NG_EXIT_STORE) : NG_EXIT_STORE;
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
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	struct ng_admit_run r = {.now = ng_now(), .actor = ng_actor(),
	                         .started = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
	                         .notes = cJSON_CreateArray()};
	cJSON *keep[2] = {NULL, NULL};
	int exit_code = NG_EXIT_USAGE;
	if (run(cli, &o, st, &r, keep, &exit_code) == 0) {
		/* The decision is in the store: tell the --on-verdict program. */
		cJSON *verdict = ng_admit_json(&r);
		char *hook_note = ng_cli_on_verdict(cli, verdict);
		cJSON_Delete(verdict);
		if (hook_note)
			ng_admit_note(&r, "%s", hook_note);
		free(hook_note);
		if (o.json) {
			cJSON *j = ng_admit_json(&r);
			ng_print_json(j);
			cJSON_Delete(j);
		} else {
			ng_admit_print_table(stdout, &r);
		}
	}
	cJSON_Delete(keep[0]);
	cJSON_Delete(keep[1]);
	cJSON_Delete(r.notes);
	for (size_t i = 0; i < r.n; i++)
		free(r.j[i].cohort);
	free(r.j);
	free(r.first);
	free(r.confirm);
	free(r.first_idx);
	free(r.confirm_idx);
	free(o.from);
	free(o.confirm_from);
	ng_store_close(st);
	return o.prolog ? ng_admit_prolog_exit(&r, exit_code) : exit_code;
}
