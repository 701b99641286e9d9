/* nodegate policy replay | history | shadow | promote: trying a policy before
 * it drains anyone (docs/policy-changes.md). Arguments and printing only:
 * the work is src/flow/replay.c, shadow.c, promote.c, policy_history.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/policy_changes.h"
#include "cli/store_cli.h"
#include "core/clock.h"
#include "core/policy_file.h"
#include "core/policy_digest.h"
#include "flow/policy_history.h"
#include "flow/promote.h"
#include "flow/replay.h"
#include "flow/shadow.h"

#define DEFAULT_DAYS 30
#define DEFAULT_GUARD 0.05

struct popts {
	const char *policy, *cls, *store, *reason, *install;
	long days;
	double guard;
	bool json, force, no_install;
	const char *pos[2];
	size_t n_pos;
};

enum {
	O_POLICY = NG_OPT_LONG,
	O_CLASS,
	O_STORE,
	O_REASON,
	O_INSTALL,
	O_DAYS,
	O_GUARD,
	O_FORCE,
	O_NO_INSTALL,
};

/* The options of replay, history, shadow and promote; `nodegate policy
 * --help` says which takes which. */
static const struct ng_opt changes_opts[] = {
	{"policy", O_POLICY, "FILE", "the proposed policy"},
	{"class", O_CLASS, "C", "replay: one class"},
	{"store", O_STORE, "S", "the store"},
	{"reason", O_REASON, "TEXT", "why: the audit log keeps it"},
	{"install", O_INSTALL, "PATH", "promote: where the promoted policy is installed"},
	{"no-install", O_NO_INSTALL, NULL, "promote: install nothing"},
	{"days", O_DAYS, "N", "the window, 1 to 3650 days (30)"},
	{"guard-share", O_GUARD, "S", "promote: the share of a class it may take out (0.05)"},
	{"force", O_FORCE, NULL, "promote: over the guard"},
	NG_OPT_JSON("JSON instead of text"),
	NG_OPT_HELP,
	{0},
};

/* The options every subcommand shares; a subcommand refuses the ones it
 * does not take. Returns -1 to go on, or an exit status. */
static int parse(const struct ng_cmd_entry *e, int argc, char **argv, struct popts *o)
{
	*o = (struct popts){.days = DEFAULT_DAYS, .guard = DEFAULT_GUARD};
	struct ng_opt_parser op;
	ng_opt_begin_table(&op, e, changes_opts, argc, argv);
	int c;
	char *end;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case NG_OPT_EXIT: return op.status;
		case O_POLICY: o->policy = op.arg; break;
		case O_CLASS: o->cls = op.arg; break;
		case O_STORE: o->store = op.arg; break;
		case O_REASON: o->reason = op.arg; break;
		case O_INSTALL: o->install = op.arg; break;
		case O_NO_INSTALL: o->no_install = true; break;
		case O_FORCE: o->force = true; break;
		case 'j': o->json = true; break;
		case O_DAYS:
			errno = 0;
			o->days = strtol(op.arg, &end, 10);
			if (!*op.arg || *end || errno || o->days < 1 || o->days > 3650)
				return ng_cmd_usage_error(e, "%s: --days %s: a whole number of days "
				                          "from 1 to 3650", argv[0], op.arg);
			break;
		case O_GUARD:
			o->guard = strtod(op.arg, &end);
			if (!*op.arg || *end || !(o->guard > 0 && o->guard <= 1))
				return ng_cmd_usage_error(e, "%s: --guard-share %s: a share of a "
				                          "class, over 0 and at most 1", argv[0], op.arg);
			break;
		}
	}
	for (int i = op.next; i < argc; i++) {
		if (o->n_pos == 2)
			return ng_cmd_usage_error(e, "%s: unexpected argument %s", argv[0], argv[i]);
		o->pos[o->n_pos++] = argv[i];
	}
	return -1;
}

/* The proposed policy, read as --policy reads one: unknown names and
 * out-of-range values are refused, naming them. */
static int load_proposed(const struct ng_cmd_entry *e, const char *sub, const char *file,
                         ng_policy *pol)
{
	if (!file)
		return ng_cmd_usage_error(e, "%s: name the proposed policy (--policy FILE)", sub);
	ng_policy_default(pol);
	ng_err err;
	if (ng_policy_load_file(pol, file, &err) < 0) {
		fprintf(stderr, "nodegate policy %s: %s\n", sub, err.msg);
		return NG_EXIT_USAGE;
	}
	return 0;
}

static double num(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));
}

static const char *str(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
	return s ? s : "";
}

static void print_summary(const cJSON *summary)
{
	printf("%-16s %10s %10s %10s\n", "OUTCOME", "CURRENT", "PROPOSED", "RECORDED");
	const cJSON *e;
	cJSON_ArrayForEach(e, summary)
	{
		const cJSON *p = cJSON_GetObjectItem(e, "proposed");
		char prop[32];
		if (cJSON_IsNumber(p))
			snprintf(prop, sizeof prop, "%.0f", p->valuedouble);
		else
			snprintf(prop, sizeof prop, "not replayed");
		char rec[32] = "-";
		if (cJSON_IsNumber(cJSON_GetObjectItem(e, "recorded")))
			snprintf(rec, sizeof rec, "%.0f", num(e, "recorded"));
		printf("%-16s %10.0f %10s %10s\n", e->string, num(e, "current"), prop, rec);
	}
}

/* The GPU checks judged again from their readings, per verb. */
static void print_gpu_replay(const cJSON *g)
{
	printf("\nGPU checks: %.0f runs, %.0f judged again from their readings, %.0f change\n",
	       num(g, "runs"), num(g, "rejudged"), num(g, "changed_count"));
	const cJSON *m, *e;
	cJSON_ArrayForEach(m, cJSON_GetObjectItem(g, "by_mode"))
	{
		printf("  %-8s %.0f runs, %.0f judged again, %.0f change", m->string, num(m, "runs"),
		       num(m, "rejudged"), num(m, "changed"));
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(m, "transitions"))
			printf("; %s %.0f", e->string, e->valuedouble);
		printf("\n");
		if (num(m, "no_readings") > 0)
			printf("           %.0f with no readings kept (recorded before schema 13): not "
			       "judged again, not counted unchanged\n", num(m, "no_readings"));
		if (num(m, "not_replayed") > 0)
			printf("           %.0f whose policy or readings cannot be read back: not judged "
			       "again\n", num(m, "not_replayed"));
	}
	const cJSON *ch = cJSON_GetObjectItem(g, "changed");
	if (cJSON_GetArraySize(ch))
		printf("\n%-24s %-8s %-14s %-24s %s\n", "NODE", "VERB", "RUN AT", "CURRENT -> PROPOSED",
		       "GPU: SIGNAL");
	cJSON_ArrayForEach(e, ch)
	{
		char at[32], move[64];
		ng_format_time((int64_t)num(e, "at"), at);
		snprintf(move, sizeof move, "%s -> %s", str(e, "current"), str(e, "proposed"));
		const char *name = *str(e, "node_name") ? str(e, "node_name") : str(e, "node");
		printf("%-24.24s %-8s %-14.10s %-24s", name, str(e, "mode"), at, move);
		const cJSON *gpu;
		cJSON_ArrayForEach(gpu, cJSON_GetObjectItem(e, "gpus"))
			printf(" %.0f: %s", num(gpu, "index"), str(gpu, "signal"));
		printf("\n");
	}
	const cJSON *in = cJSON_GetObjectItem(g, "inputs_as_read");
	if (cJSON_GetArraySize(in)) {
		printf("\nthese health values differ, and what the checks read under them is taken "
		       "as read:");
		cJSON_ArrayForEach(e, in)
			printf(" %s", e->valuestring);
		printf("\n");
	}
}

static void print_replay(const cJSON *doc)
{
	const cJSON *w = cJSON_GetObjectItem(doc, "window");
	printf("replay of %s (%s) over %.0f days: %.0f decisions, %.0f replayed, %.0f changed\n\n",
	       str(cJSON_GetObjectItem(doc, "proposed"), "version"),
	       str(cJSON_GetObjectItem(doc, "proposed"), "source"), num(w, "days"),
	       num(doc, "decisions"), num(doc, "replayed"), num(doc, "changed_count"));
	print_summary(cJSON_GetObjectItem(doc, "summary"));
	printf("(current: the rule decided again under the policy that decided each run; "
	       "recorded: what was landed, after overrides, the breaker and open cases)\n");
	const cJSON *q = cJSON_GetObjectItem(doc, "quarantines");
	printf("\nquarantines added %.0f (later passed: %.0f possible false rejects; later failed: "
	       "%.0f stragglers kept out)\n",
	       num(q, "added"), num(q, "added_later_passed"), num(q, "added_later_failed"));
	printf("quarantines removed %.0f (later passed: %.0f; later failed: %.0f stragglers let in)\n",
	       num(q, "removed"), num(q, "removed_later_passed"), num(q, "removed_later_failed"));
	const cJSON *ch = cJSON_GetObjectItem(doc, "changed"), *e;
	if (cJSON_GetArraySize(ch))
		printf("\n%-24s %-14s %-26s %-16s %s\n", "NODE", "RUN AT", "CURRENT -> PROPOSED",
		       "METRIC", "VALUE (BAR CURRENT -> PROPOSED)");
	cJSON_ArrayForEach(e, ch)
	{
		const cJSON *x = cJSON_GetObjectItem(e, "decisive");
		char at[32], move[64];
		ng_format_time((int64_t)num(e, "at"), at);
		snprintf(move, sizeof move, "%s -> %s", str(e, "current"), str(e, "proposed"));
		const char *name = *str(e, "node_name") ? str(e, "node_name") : str(e, "node");
		printf("%-24.24s %-14.10s %-26s %-16.16s %g (%g -> %g)\n", name, at, move, str(x, "metric"),
		       num(x, "value"), num(x, "bar_current"), num(x, "bar_proposed"));
	}
	const cJSON *un = cJSON_GetObjectItem(doc, "not_replayed");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(un, "by_policy"))
		printf("\nnot replayed: %.0f runs of policy %s (first %s): %s\n", num(e, "runs"),
		       *str(e, "policy") ? str(e, "policy") : "(none)", str(e, "first_run"), str(e, "why"));
	const cJSON *gate = cJSON_GetObjectItem(doc, "gate");
	if (cJSON_IsTrue(cJSON_GetObjectItem(gate, "re_evaluated"))) {
		printf("\ngate judged again (");
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(gate, "values_differ"))
			printf("%s%s", e == cJSON_GetObjectItem(gate, "values_differ")->child ? "" : " ",
			       e->valuestring);
		printf("): %.0f of %.0f verdict lines, %.0f verdicts change\n", num(gate, "rerun"),
		       num(gate, "lines"), num(gate, "verdicts_changed"));
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(cJSON_GetObjectItem(gate, "not_rerun"),
		                                          "by_reason"))
			printf("  %.0f lines keep their recorded verdict (first run %s): %s\n",
			       num(e, "lines"), str(e, "first_run"), str(e, "why"));
	}
	const cJSON *nre = cJSON_GetObjectItem(doc, "not_re_evaluated");
	if (cJSON_GetArraySize(nre)) {
		printf("\nthese values differ and are not judged again (the recorded gate verdicts "
		       "stand):");
		cJSON_ArrayForEach(e, nre)
			printf(" %s", e->valuestring);
		printf("\n");
	}
	print_gpu_replay(cJSON_GetObjectItem(doc, "gpu_checks"));
}

static int replay(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_policy_entry;
	struct popts o;
	int rc = parse(e, argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.n_pos || o.reason || o.install || o.force)
		return ng_cmd_usage_error(e, "replay takes --policy, --days, --class, --store "
		                          "and --json");
	ng_policy pol;
	if ((rc = load_proposed(e, "replay", o.policy, &pol)) != 0)
		return rc;
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.store, &ctx))
		return NG_EXIT_STORE;
	ng_replay_opts ro = {.proposed = &pol, .source = o.policy, .days = o.days,
	                     .class_key = o.cls};
	cJSON *doc;
	ng_err err;
	rc = ng_flow_replay(&ctx, &ro, &doc, &err);
	if (rc < 0)
		return ng_cli_store_error(e, &err);
	if (o.json)
		ng_print_json(doc);
	else
		print_replay(doc);
	cJSON_Delete(doc);
	return NG_EXIT_OK;
}

static int history(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_policy_entry;
	struct popts o;
	int rc = parse(e, argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.n_pos || o.policy || o.cls || o.reason || o.install || o.force)
		return ng_cmd_usage_error(e, "history takes --store and --json");
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.store, &ctx))
		return NG_EXIT_STORE;
	cJSON *doc;
	ng_err err;
	rc = ng_flow_policy_history(&ctx, &doc, &err);
	if (rc < 0)
		return ng_cli_store_error(e, &err);
	if (o.json) {
		ng_print_json(doc);
	} else {
		printf("%-17s %-11s %-11s %-10s %-20s %s\n", "VERSION", "FIRST USED", "LAST USED",
		       "TEXT KEPT", "PROMOTED BY", "DECISIONS");
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(doc, "policies"))
		{
			char first[32] = "-", last[32] = "-", by[96] = "-";
			if (cJSON_IsNumber(cJSON_GetObjectItem(p, "first_used")))
				ng_format_time((int64_t)num(p, "first_used"), first);
			if (cJSON_IsNumber(cJSON_GetObjectItem(p, "last_used")))
				ng_format_time((int64_t)num(p, "last_used"), last);
			if (*str(p, "promoted_by"))
				snprintf(by, sizeof by, "%s", str(p, "promoted_by"));
			printf("%-17s %-11.10s %-11.10s %-10s %-20.20s", str(p, "version"), first, last,
			       cJSON_IsTrue(cJSON_GetObjectItem(p, "text_kept")) ? "yes" : "no", by);
			const cJSON *d;
			cJSON_ArrayForEach(d, cJSON_GetObjectItem(p, "decisions"))
				printf(" %s %.0f", d->string, d->valuedouble);
			printf("%s%s\n",
			       strcmp(str(p, "version"), str(doc, "enforcing")) == 0 ? "  (enforcing)" : "",
			       strcmp(str(p, "version"), str(doc, "shadow")) == 0 ? "  (shadow)" : "");
		}
	}
	cJSON_Delete(doc);
	return NG_EXIT_OK;
}

static void print_shadow(const cJSON *doc)
{
	const cJSON *pol = cJSON_GetObjectItem(doc, "policy");
	if (cJSON_IsString(pol)) {
		char at[32];
		ng_format_time((int64_t)num(doc, "set_at"), at);
		printf("shadow policy %s since %s, set by %s: %s\n", pol->valuestring, at,
		       str(doc, "set_by"), str(doc, "reason"));
	} else {
		printf("no policy runs in shadow\n");
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "evaluated"))
		printf("  evaluated on %.0f %s runs\n", e->valuedouble, e->string);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "would"))
		printf("  would %s %.0f (%s, class %s, rule %s; the enforcing policy did too: %.0f)\n",
		       strcmp(str(e, "outcome"), "drain") == 0 ? "drain" : "quarantine", num(e, "count"),
		       str(e, "kind"), *str(e, "class") ? str(e, "class") : "-", str(e, "rule"),
		       num(e, "enforcing_did"));
}

static int shadow(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_policy_entry;
	struct popts o;
	int rc = parse(e, argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = 0;
	const char *what = o.n_pos ? o.pos[0] : "show";
	bool set = strcmp(what, "set") == 0, clear = strcmp(what, "clear") == 0;
	if (!set && !clear && strcmp(what, "show") != 0)
		return ng_cmd_usage_error(e, "shadow: set FILE, clear or show, not %s", what);
	const char *file = set ? (o.n_pos > 1 ? o.pos[1] : o.policy) : NULL;
	if ((!set && o.n_pos > 1) || o.install || o.force || o.cls)
		return ng_cmd_usage_error(e, "shadow takes set FILE | clear | show, --reason, "
		                          "--days, --store and --json");
	ng_policy pol;
	if (set && (rc = load_proposed(e, "shadow set", file, &pol)) != 0)
		return rc;
	if ((set || clear) && (!o.reason || !*o.reason))
		return ng_cmd_usage_error(e, "shadow %s: say why (--reason TEXT): the audit log "
		                          "keeps it", what);
	if (set) /* the one that may begin a store */
		cli->needs = NG_CMD_NEEDS_STORE;
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.store, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	cJSON *doc = NULL;
	if (set)
		rc = ng_flow_shadow_set(&ctx, &pol, o.reason, &err);
	else if (clear && (rc = ng_flow_shadow_clear(&ctx, o.reason, &err)) == 0)
		fprintf(stderr, "nodegate policy shadow: note: no policy was running in shadow\n");
	if (rc >= 0 && !clear)
		rc = ng_flow_shadow_show(&ctx, o.days, &doc, &err);
	if (rc < 0)
		return ng_cli_store_error(e, &err);
	if (doc && o.json)
		ng_print_json(doc);
	else if (doc)
		print_shadow(doc);
	else if (o.json)
		printf("{\"cleared\": %s}\n", rc == 1 ? "true" : "false");
	cJSON_Delete(doc);
	return NG_EXIT_OK;
}

static int promote(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_policy_entry;
	struct popts o;
	int rc = parse(e, argc, argv, &o);
	if (rc >= 0)
		return rc;
	const char *file = o.n_pos ? o.pos[0] : o.policy;
	if (o.n_pos > 1 || o.cls || (o.n_pos && o.policy))
		return ng_cmd_usage_error(e, "promote takes one FILE");
	if (!o.reason || !*o.reason)
		return ng_cmd_usage_error(e, "promote: say why (--reason TEXT): the audit log "
		                          "keeps who promoted what, and why");
	if (o.install && o.no_install)
		return ng_cmd_usage_error(e, "promote: --install or --no-install, not both");
	ng_policy pol;
	if ((rc = load_proposed(e, "promote", file, &pol)) != 0)
		return rc;
	ng_err err;
	size_t len;
	char *text = ng_read_file(file, &len, &err);
	if (!text) {
		fprintf(stderr, "nodegate policy promote: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	const char *install = ng_promote_install_path(o.install, o.no_install);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.store, &ctx)) {
		free(text);
		return NG_EXIT_STORE;
	}
	ng_promote_opts po = {.proposed = &pol, .source = file, .text = text, .install = install,
	                      .reason = o.reason, .force = o.force, .guard_share = o.guard,
	                      .days = o.days};
	cJSON *doc;
	bool refused;
	rc = ng_flow_promote(&ctx, &po, &doc, &refused, &err);
	free(text);
	if (rc < 0)
		return err.code == NG_ERR_STORE ? ng_cli_store_error(e, &err)
		                               : (fprintf(stderr, "nodegate policy promote: %s\n", err.msg),
		                                  NG_EXIT_USAGE);
	if (o.json) {
		ng_print_json(doc);
	} else {
		const cJSON *x;
		cJSON_ArrayForEach(x, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "guard"), "over"))
			printf("guard: class %s: %s would take %.0f more of %.0f nodes out on %s (%.1f%%, over "
			       "%.1f%%)\n", str(x, "class"), str(x, "evidence"), num(x, "added"), num(x, "nodes"),
			       str(x, "day"), 100 * num(x, "share"), 100 * o.guard);
		if (refused)
			printf("REFUSED: policy %s is over the guard; --force with --reason to promote it "
			       "anyway (the refusal is in the audit log)\n", str(doc, "policy"));
		else
			printf("promoted %s (was %s)%s%s; the audit log keeps who, why and the figures\n",
			       str(doc, "policy"), str(doc, "previous"), install ? ": installed at " : "",
			       install ? install : "");
	}
	cJSON_Delete(doc);
	return refused ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

int ng_policy_changes(struct ng_cli *cli, int argc, char **argv)
{
	if (strcmp(argv[0], "replay") == 0)
		return replay(cli, argc, argv);
	if (strcmp(argv[0], "history") == 0)
		return history(cli, argc, argv);
	if (strcmp(argv[0], "shadow") == 0)
		return shadow(cli, argc, argv);
	if (strcmp(argv[0], "promote") == 0)
		return promote(cli, argc, argv);
	return -1;
}
