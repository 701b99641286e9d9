/* nodegate baseline: build, show, pin and expire class baselines in the store. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/baselines.h"
#include "flow/class_baseline.h"

static int exec_baseline(struct ng_cli *cli, int argc, char **argv);

enum { OPT_SOFTWARE = 'S' };

static const struct ng_opt baseline_opts[] = {
	{"class", 'c', "C", "one class (the class key the records carry)"},
	{"software", OPT_SOFTWARE, "S", "one software identity (build)"},
	{"metric", 'm', "M", "one metric"},
	{"all", 'a', NULL, "show expired and superseded baselines too"},
	{"name", 'n', "NAME", "the pin's name (pin), up to 63 characters"},
	{"reason", 'r', "TEXT", "why the class's baselines no longer hold (expire)"},
	NG_OPT_STORE,
	NG_OPT_JSON("JSON instead of a table"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_baseline_entry = {
	.name = "baseline",
	.usage = "build [--class C] [--software S] [--metric M] [--store S] [--json]\n"
	         "       nodegate baseline show [--class C] [--all] [--store S] [--json]\n"
	         "       nodegate baseline pin ID --name NAME [--store S] [--json]\n"
	         "       nodegate baseline expire CLASS [--metric M] --reason TEXT [--store S]\n"
	         "                                [--json]",
	.summary = "Build, show, pin and expire the class baselines admission judges against.",
	.help =
	"A class baseline is the median of per-node medians of the accepted runs of idle\n"
	"nodes of one class, for one metric and software identity, and the within-run\n"
	"noise (cv) the gate's noise bar uses (docs/admission.md). It counts nodes, not\n"
	"runs: a class needs admission.min_baseline_nodes distinct nodes (default 10);\n"
	"until then it is \"establishing\": admission judges its nodes against the\n"
	"metric floors alone and admits the rest with a warning.\n"
	"\n"
	"  build    builds every baseline the store has accepted runs for within the\n"
	"           last admission.baseline_window_days (default 30), or the ones named\n"
	"           by --class, --software and --metric. Refusals are kept too, so\n"
	"           `show` says which classes are still establishing.\n"
	"  show     the baseline in force for each (class, software, metric): the\n"
	"           newest pinned one, else the newest built one (or the refusal, when\n"
	"           there is none). --all lists every baseline ever built, expired ones too.\n"
	"  pin      keeps baseline ID in force under NAME (e.g. the qualified state of a\n"
	"           platform): a pinned baseline never ages out and newer builds do not\n"
	"           replace it, until its class is expired.\n"
	"  expire   after a planned software or firmware change: expires the class's\n"
	"           baselines (of one metric with --metric) and, for the whole class,\n"
	"           retires every sample taken before now, so the next baselines are\n"
	"           built only from runs of the new configuration. --reason is required.\n",
	.opts = baseline_opts,
	.help_tail =
	"Exit status: 0 done (build: at least one baseline built, or nothing to build);\n"
	"1 build: every key was refused (establishing), or pin/expire was refused;\n"
	"2 usage error; 3 the store could not be opened, read or written.\n",
	.exec = exec_baseline,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

struct opts {
	const char *spec, *class_key, *software, *metric, *name, *reason;
	bool all, json;
	int argc; /* positional arguments left, at argv */
	char **argv;
};

/* Parses the options a subcommand allows (letters of `allowed`, 'S' for
 * --software). Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, const char *allowed, struct opts *o)
{
	memset(o, 0, sizeof *o);
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_baseline_entry, argc, argv);
	op.only = allowed;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT)
			return op.status;
		switch (c) {
		case 'c': o->class_key = op.arg; break;
		case OPT_SOFTWARE: o->software = op.arg; break;
		case 'm': o->metric = op.arg; break;
		case 'a': o->all = true; break;
		case 'n': o->name = op.arg; break;
		case 'r': o->reason = op.arg; break;
		case 's': o->spec = op.arg; break;
		case 'j': o->json = true; break;
		}
	}
	o->argc = argc - op.next;
	o->argv = argv + op.next;
	return -1;
}

#define is_ok ng_baseline_is_ok

/* What a baseline row's status says, for a table. */
static void status_line(const ng_store_baseline *b, char *out, size_t cap)
{
	if (is_ok(b))
		snprintf(out, cap, "ok");
	else if (strcmp(b->status, "too-few-nodes") == 0)
		snprintf(out, cap, "establishing: %" PRId64 " of %" PRId64 " nodes", b->n_nodes,
		         b->min_nodes);
	else
		snprintf(out, cap, "%s", ng_baseline_row_status_text(b));
}

static void fmt_median(const ng_store_baseline *b, char *out, size_t cap)
{
	if (isfinite(b->median))
		snprintf(out, cap, "%.6g%s%s", b->median, b->unit[0] ? " " : "", b->unit);
	else
		snprintf(out, cap, "-");
}

static void fmt_cv(const ng_store_baseline *b, char *out, size_t cap)
{
	if (isfinite(b->cv))
		snprintf(out, cap, "%.2f%%", 100.0 * b->cv);
	else
		snprintf(out, cap, "-");
}

/* A software identity is "sw-" and 16 hex digits; a longer one (written by
 * hand or by another tool) shows its start. */
#define SW_WIDTH 19
static void fmt_software(const char *sw, char *out, size_t cap)
{
	if (!sw[0])
		snprintf(out, cap, "-");
	else if (strlen(sw) > SW_WIDTH)
		snprintf(out, cap, "%.*s...", SW_WIDTH - 3, sw);
	else
		snprintf(out, cap, "%s", sw);
}

/* ---- build ---------------------------------------------------------------------- */

static int cmd_build(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_baseline_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "cSmsj", &o);
	if (rc >= 0)
		return rc;
	if (o.argc)
		return ng_cmd_usage_error(e, "baseline build takes no arguments, only --class, "
		                             "--software and --metric: \"%s\"",
		                          o.argv[0]);
	cli->needs = NG_CMD_NEEDS_STORE; /* the first build begins a store */
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_baseline_build_result res;
	ng_err err;
	rc = NG_EXIT_OK;
	/* A failure is said first; what was built before it is shown after. */
	if (ng_baselines_build(&ctx, &(ng_baseline_filter){o.class_key, o.software, o.metric}, &res,
	                       &err) < 0)
		rc = ng_cli_fail(e, &err, NG_ERR_STORE);
	ng_store_baseline *rows = res.rows;
	size_t n = res.n, built = res.built;
	int64_t since = res.since;
	char since_text[32];
	ng_format_time(since, since_text);
	if (o.json) {
		cJSON *doc = ng_baseline_build_json(&res);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (n == 0 && rc == NG_EXIT_OK) {
		printf("nothing to build: the store has no accepted runs of idle nodes%s%s%s%s%s%s "
		       "since %s (admission.baseline_window_days = %ld).\n"
		       "Store some with `nodegate ingest --accepted FILE`, or let `nodegate admit` "
		       "admit nodes.\n",
		       o.class_key ? " of class " : "", o.class_key ? o.class_key : "",
		       o.software ? " with software " : "", o.software ? o.software : "",
		       o.metric ? " for " : "", o.metric ? o.metric : "", since_text,
		       cli->policy.baseline_window_days);
	} else if (n > 0) {
		int wc = 5, wm = 6;
		bool any_sw = false;
		for (size_t i = 0; i < n; i++) {
			wc = ng_cli_col_width(wc, rows[i].class_key);
			wm = ng_cli_col_width(wm, rows[i].metric);
			any_sw = any_sw || rows[i].software[0];
		}
		char sw[32], med[64], cv[32], status[256];
		if (any_sw)
			printf("%-*s  %-*s  %-*s  %5s  %-16s  %7s  %s\n", wc, "CLASS", SW_WIDTH, "SOFTWARE",
			       wm, "METRIC", "NODES", "MEDIAN", "CV", "STATUS");
		else
			printf("%-*s  %-*s  %5s  %-16s  %7s  %s\n", wc, "CLASS", wm, "METRIC", "NODES",
			       "MEDIAN", "CV", "STATUS");
		for (size_t i = 0; i < n; i++) {
			const ng_store_baseline *b = &rows[i];
			fmt_software(b->software, sw, sizeof sw);
			fmt_median(b, med, sizeof med);
			fmt_cv(b, cv, sizeof cv);
			status_line(b, status, sizeof status);
			if (is_ok(b)) {
				size_t l = strlen(status);
				snprintf(status + l, sizeof status - l, " (baseline %" PRId64 ")", b->id);
			}
			if (any_sw)
				printf("%-*s  %-*s  %-*s  %5" PRId64 "  %-16s  %7s  %s\n", wc, b->class_key,
				       SW_WIDTH, sw, wm, b->metric, b->n_nodes, med, cv, status);
			else
				printf("%-*s  %-*s  %5" PRId64 "  %-16s  %7s  %s\n", wc, b->class_key, wm,
				       b->metric, b->n_nodes, med, cv, status);
		}
		printf("%zu of %zu built from accepted idle runs since %s.\n", built, n, since_text);
	}
	free(rows);
	if (rc != NG_EXIT_OK)
		return rc;
	return n > 0 && built == 0 ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

/* ---- show ----------------------------------------------------------------------- */

static int cmd_show(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_baseline_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "casj", &o);
	if (rc >= 0)
		return rc;
	if (o.argc)
		return ng_cmd_usage_error(e, "baseline show takes no arguments (--class C for one "
		                             "class): \"%s\"",
		                          o.argv[0]);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	ng_store_baseline *all;
	size_t n;
	rc = ng_baselines_in_force(&ctx, o.class_key, o.all, &all, &n, &err);
	if (rc < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);

	if (o.json) {
		cJSON *doc = ng_baselines_json(all, n);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (n == 0) {
		char word[NG_SHELL_WORD_MAX];
		if (o.class_key)
			printf("no baselines of class %s: build them with `nodegate baseline build "
			       "--class %s`\n",
			       o.class_key, ng_cli_shell_word(o.class_key, word));
		else
			printf("no baselines: build them with `nodegate baseline build` once the store "
			       "holds accepted runs (`nodegate ingest --accepted`)\n");
	} else {
		int wc = 5, wm = 6;
		for (size_t i = 0; i < n; i++) {
			wc = ng_cli_col_width(wc, all[i].class_key);
			wm = ng_cli_col_width(wm, all[i].metric);
		}
		printf("%4s  %-*s  %-*s  %-*s  %-16s  %7s  %5s  %-20s  %-12s  %-20s  %s\n", "ID", wc,
		       "CLASS", SW_WIDTH, "SOFTWARE", wm, "METRIC", "MEDIAN", "CV", "NODES", "BUILT",
		       "PINNED", "EXPIRED", "STATUS");
		for (size_t i = 0; i < n; i++) {
			const ng_store_baseline *b = &all[i];
			char sw[32], med[64], cv[32], built[32], expired[32], status[256];
			fmt_software(b->software, sw, sizeof sw);
			fmt_median(b, med, sizeof med);
			fmt_cv(b, cv, sizeof cv);
			ng_format_time(b->built_at, built);
			ng_format_time(b->expired_at, expired);
			status_line(b, status, sizeof status);
			printf("%4" PRId64 "  %-*s  %-*s  %-*s  %-16s  %7s  %5" PRId64
			       "  %-20s  %-12s  %-20s  %s\n",
			       b->id, wc, b->class_key, SW_WIDTH, sw, wm, b->metric, med, cv, b->n_nodes, built,
			       b->pinned_name[0] ? b->pinned_name : "-", expired, status);
			if (b->expired_at && b->expired_reason[0])
				printf("      expired: %s\n", b->expired_reason);
		}
	}
	free(all);
	return NG_EXIT_OK;
}

/* ---- pin ------------------------------------------------------------------------ */

static int cmd_pin(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_baseline_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "nsj", &o);
	if (rc >= 0)
		return rc;
	rc = NG_EXIT_OK;
	int64_t id;
	if (o.argc != 1)
		return ng_cmd_usage_error(e, "baseline pin takes one baseline ID (`nodegate baseline "
		                             "show` lists them)");
	if (!ng_cli_parse_id(o.argv[0], &id))
		return ng_cmd_usage_error(e, "\"%s\" is not a baseline ID (a positive number)",
		                          o.argv[0]);
	ng_store_baseline b;
	if (!o.name || !*o.name)
		return ng_cmd_usage_error(e, "baseline pin needs --name NAME: say what the pinned "
		                             "state is (e.g. qualified-2026-11)");
	if (strlen(o.name) >= sizeof b.pinned_name)
		return ng_cmd_usage_error(e, "--name is %zu characters; at most %zu", strlen(o.name),
		                          sizeof b.pinned_name - 1);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	ng_baseline_pin_state state;
	int r = ng_baseline_pin(&ctx, id, o.name, &state, &b, &err);
	if (r < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	if (state == NG_BASELINE_NO_SUCH) {
		fprintf(stderr, "nodegate baseline: there is no baseline %" PRId64
		                ": `nodegate baseline show --all` lists them\n",
		        id);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	if (state == NG_BASELINE_REFUSAL) {
		fprintf(stderr, "nodegate baseline: baseline %" PRId64 " is a refusal (%s), not a "
		                "baseline: there is nothing to pin\n",
		        id, b.status);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	if (state == NG_BASELINE_EXPIRED) {
		char t[32];
		ng_format_time(b.expired_at, t);
		fprintf(stderr, "nodegate baseline: baseline %" PRId64 " expired at %s (%s): build "
		                "a new one and pin that\n",
		        id, t, b.expired_reason);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	if (o.json) {
		cJSON *doc = ng_baseline_pin_json(&b);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		char med[64];
		fmt_median(&b, med, sizeof med);
		printf("pinned baseline %" PRId64 " as \"%s\": %s of class %s, median %s from %" PRId64
		       " nodes.\n"
		       "Admission judges this class's %s against it until the class is expired "
		       "(`nodegate baseline expire`).\n",
		       id, b.pinned_name, b.metric, b.class_key, med, b.n_nodes, b.metric);
	}
	return NG_EXIT_OK;
}

/* ---- expire --------------------------------------------------------------------- */

static int cmd_expire(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_baseline_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "mrsj", &o);
	if (rc >= 0)
		return rc;
	if (o.argc != 1)
		return ng_cmd_usage_error(e, "baseline expire takes one CLASS");
	const char *cls = o.argv[0];
	ng_store_baseline b;
	if (!o.reason || !*o.reason)
		return ng_cmd_usage_error(e, "baseline expire needs --reason TEXT: say what changed "
		                             "(e.g. \"driver 550 to 560, CHG-1234\")");
	if (strlen(o.reason) >= sizeof b.expired_reason)
		return ng_cmd_usage_error(e, "--reason is %zu characters; at most %zu",
		                          strlen(o.reason), sizeof b.expired_reason - 1);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	ng_baseline_expiry x;
	rc = ng_baselines_expire(&ctx, cls, o.metric, o.reason, &x, &err);
	if (rc < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	if (!x.known) {
		fprintf(stderr, "nodegate baseline: the store knows no class \"%s\" (no records, no "
		                "baselines): nothing expired. `nodegate baseline show --all` lists the "
		                "classes\n",
		        cls);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	int64_t now = x.at, n = x.expired;
	char t[32];
	ng_format_time(now, t);
	if (o.json) {
		cJSON *doc = ng_baseline_expiry_json(cls, o.metric, o.reason, &x);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else {
		printf("expired %" PRId64 " baseline%s of class %s%s%s (%s).\n", n, n == 1 ? "" : "s",
		       cls, o.metric ? " for " : "", o.metric ? o.metric : "", o.reason);
		if (!o.metric)
			printf("Samples of class %s taken before %s are retired: new baselines are built "
			       "only from runs after it,\nand the class is establishing again until "
			       "admission.min_baseline_nodes nodes (%ld) have been accepted.\n",
			       cls, t, cli->policy.min_baseline_nodes);
		else
			printf("Its samples are kept: the next `nodegate baseline build` builds %s again "
			       "from the runs in the window.\n",
			       o.metric);
	}
	return NG_EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------------------- */

static const struct ng_subcmd subcommands[] = {
	{"build", cmd_build},
	{"show", cmd_show},
	{"pin", cmd_pin},
	{"expire", cmd_expire},
};

static int exec_baseline(struct ng_cli *cli, int argc, char **argv)
{
	return ng_cmd_dispatch(&ng_cmd_baseline_entry, subcommands,
	                       sizeof subcommands / sizeof subcommands[0], cli, argc, argv);
}
