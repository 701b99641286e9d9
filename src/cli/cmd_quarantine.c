/* nodegate quarantine: the quarantine cases in the store, and their evidence. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/lemon.h"
#include "judge/evidence_summary.h"
#include "store/probation.h"

static int exec_quarantine(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt quarantine_opts[] = {
	{"all", 'a', NULL, "list closed cases too"},
	NG_OPT_STORE,
	NG_OPT_JSON("JSON instead of a table"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_quarantine_entry = {
	.name = "quarantine",
	.usage = "list [--all] [--store S] [--json]\n"
	         "       nodegate quarantine show NODE|ID [--store S] [--json]",
	.summary = "List quarantined nodes, and show a case with its evidence.",
	.help =
	"A node is quarantined when the same domain failed in a run and again in its\n"
	"confirmation, or on a data-integrity failure (`nodegate admit`). Its case\n"
	"keeps the failed metric, the evidence (values, baselines, raw output digests,\n"
	"cohort), how many runs of the failed test followed and how many passed, and\n"
	"the named condition that releases it: the failed test passing again\n"
	"admission.release_passes times (default 2). A reboot alone never releases a\n"
	"node; `nodegate release` does, once the condition holds.\n"
	"\n"
	"A released node is on probation until a watched job ends it (`nodegate release`):\n"
	"STATE says probation for its case, and `show` says how it ended. A node\n"
	"quarantined quarantine.lemon_count times in lemon_days (3 in 30) is a lemon,\n"
	"marked in both, with what the evidence supports replacing.\n"
	"\n"
	"  list   open cases (--all: closed ones too), newest first\n"
	"  show   one case, whole: by NODE its open case, else its newest one; a\n"
	"         number that names no node is a case ID\n",
	.opts = quarantine_opts,
	.help_tail =
	"Exit status: 0 done; 1 show: no such case; 2 usage error; 3 the store could not\n"
	"be opened or read.\n",
	.exec = exec_quarantine,
};

/* What a case's probation and lemon verdict add to it (either may be NULL). */
struct case_extra {
	const ng_store_probation *probation;
	const ng_lemon_verdict *lemon;
	cJSON *domain_evidence; /* show: what the collectors captured for the case's run */
};

#define SUMMARY_MAX 32

/* The case's run, as its evidence names it, or "". */
static const char *run_of(const ng_store_case *c, char *buf, size_t cap)
{
	cJSON *ev = c->evidence ? cJSON_Parse(c->evidence) : NULL;
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(ev, "run");
	snprintf(buf, cap, "%s", cJSON_IsString(run) ? run->valuestring : "");
	cJSON_Delete(ev);
	return buf;
}

static const char *state_of(const ng_store_case *c, const struct case_extra *x)
{
	if (!c->closed_at)
		return "open";
	return x && x->probation && !x->probation->ended_at ? "probation" : "closed";
}

static void add_extra(cJSON *o, const struct case_extra *x)
{
	if (x && x->probation) {
		const ng_store_probation *p = x->probation;
		cJSON *j = cJSON_AddObjectToObject(o, "probation");
		ng_json_add_time(j, "started_at", p->started_at);
		ng_json_add_time(j, "ended_at", p->ended_at);
		cJSON_AddStringToObject(j, "outcome", p->ended_at ? p->outcome : "in force");
		cJSON_AddStringToObject(j, "job", p->job);
		cJSON_AddStringToObject(j, "why", p->detail);
	}
	if (x && x->domain_evidence) {
		cJSON_AddItemToObject(o, "domain_evidence", cJSON_Duplicate(x->domain_evidence, true));
		char lines[SUMMARY_MAX][NG_SUMMARY_LINE];
		size_t n = ng_evidence_summary(x->domain_evidence, lines, SUMMARY_MAX);
		cJSON *sum = cJSON_AddArrayToObject(o, "evidence_summary");
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(sum, cJSON_CreateString(lines[i]));
	}
	if (x && x->lemon) {
		const ng_lemon_verdict *l = x->lemon;
		cJSON_AddBoolToObject(o, "lemon", l->lemon);
		cJSON *j = cJSON_AddObjectToObject(o, "repeat");
		cJSON_AddNumberToObject(j, "quarantines_in_window", (double)l->node_count);
		if (l->gpu[0]) {
			cJSON_AddStringToObject(j, "gpu", l->gpu);
			cJSON_AddNumberToObject(j, "gpu_quarantines_in_window", (double)l->gpu_count);
		}
		if (l->mtbi_s >= 0)
			cJSON_AddNumberToObject(j, "mean_seconds_between_incidents", l->mtbi_s);
		else
			cJSON_AddNullToObject(j, "mean_seconds_between_incidents");
		if (l->lemon) {
			cJSON_AddStringToObject(j, "why", l->why);
			cJSON_AddStringToObject(j, "replacement_evidence", l->replace);
		}
	}
}

static cJSON *case_json(const ng_store_case *c, long needed, const struct case_extra *x)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)c->id);
	cJSON_AddStringToObject(o, "node", c->node);
	cJSON_AddStringToObject(o, "node_name", c->node_name);
	cJSON_AddStringToObject(o, "state", state_of(c, x));
	cJSON_AddStringToObject(o, "class", c->class_key);
	cJSON_AddStringToObject(o, "software", c->software);
	cJSON_AddStringToObject(o, "domain", c->domain);
	cJSON_AddStringToObject(o, "metric", c->metric);
	ng_json_add_time(o, "opened_at", c->opened_at);
	cJSON_AddStringToObject(o, "release_condition", c->release_condition);
	cJSON_AddNumberToObject(o, "passes", (double)c->passes);
	cJSON_AddNumberToObject(o, "passes_needed", (double)needed);
	cJSON_AddNumberToObject(o, "retries", (double)c->retries);
	ng_json_add_time(o, "closed_at", c->closed_at);
	if (c->closed_at) {
		cJSON_AddStringToObject(o, "closed_by", c->closed_by);
		cJSON_AddStringToObject(o, "close_reason", c->close_reason);
	} else {
		cJSON_AddNullToObject(o, "closed_by");
		cJSON_AddNullToObject(o, "close_reason");
	}
	cJSON *ev = c->evidence ? cJSON_Parse(c->evidence) : NULL;
	if (!ev && c->evidence && c->evidence[0])
		ev = cJSON_CreateString(c->evidence); /* kept as it was, whatever it is */
	cJSON_AddItemToObject(o, "evidence", ev ? ev : cJSON_CreateNull());
	add_extra(o, x);
	return o;
}

static int width(int w, const char *s)
{
	int n = (int)strlen(s);
	return n > w ? n : w;
}

static void free_cases(ng_store_case *cs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ng_store_case_free(&cs[i]);
	free(cs);
}

/* Options shared by both subcommands. Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, bool allow_all, const char **spec, bool *all,
                      bool *json)
{
	*spec = NULL;
	*all = *json = false;
	optind = 0;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_quarantine_entry, argc, argv);
	op.only = allow_all ? "asj" : "sj";
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'a': *all = true; break;
		case 's': *spec = op.arg; break;
		case 'j': *json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	return -1;
}

static int cmd_list(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_quarantine_entry;
	const char *spec;
	bool all, json;
	int rc = parse_opts(argc, argv, true, &spec, &all, &json);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return ng_cmd_usage_error(e, "quarantine list takes no arguments: \"%s\" (show NODE "
		                             "shows one case)",
		                          argv[optind]);
	ng_store *st = ng_cli_open_existing_store(cli, e, spec);
	if (!st)
		return NG_EXIT_STORE;
	ng_err err;
	ng_store_case *cs;
	size_t n;
	char(*lemon_nodes)[256] = NULL;
	ng_lemon_verdict *lemons = NULL;
	size_t n_lemons = 0;
	if (ng_store_list_cases(st, all, &cs, &n, &err) < 0 ||
	    ng_lemon_all(st, &cli->policy, ng_now(), &lemon_nodes, &lemons, &n_lemons, &err) < 0) {
		ng_store_close(st);
		return ng_cli_store_error(e, &err);
	}
	ng_store_probation *probs = calloc(n ? n : 1, sizeof *probs);
	bool *has_prob = calloc(n ? n : 1, sizeof *has_prob);
	const ng_lemon_verdict **lemon_of = calloc(n ? n : 1, sizeof *lemon_of);
	if (!probs || !has_prob || !lemon_of) {
		ng_store_close(st);
		free(probs), free(has_prob), free(lemon_of), free(lemon_nodes), free(lemons);
		free_cases(cs, n);
		fprintf(stderr, "nodegate quarantine: out of memory\n");
		return NG_EXIT_STORE;
	}
	for (size_t i = 0; i < n; i++) {
		int r = ng_store_probation_of_case(st, cs[i].id, &probs[i], &err);
		if (r < 0) {
			ng_store_close(st);
			free(probs), free(has_prob), free(lemon_of), free(lemon_nodes), free(lemons);
			free_cases(cs, n);
			return ng_cli_store_error(e, &err);
		}
		has_prob[i] = r == 1;
		for (size_t k = 0; k < n_lemons; k++)
			if (strcmp(lemon_nodes[k], cs[i].node) == 0)
				lemon_of[i] = &lemons[k];
	}
	ng_store_close(st);
	long needed = cli->policy.release_passes;
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		for (size_t i = 0; i < n; i++) {
			struct case_extra x = {has_prob[i] ? &probs[i] : NULL, lemon_of[i], NULL};
			cJSON *o = case_json(&cs[i], needed, &x);
			cJSON_DeleteItemFromObjectCaseSensitive(o, "evidence");
			cJSON_AddItemToArray(arr, o);
		}
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddItemToObject(doc, "cases", arr);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (n == 0) {
		printf(all ? "no quarantine cases\n" : "no node is quarantined\n");
	} else {
		int wn = 4, wm = 6;
		for (size_t i = 0; i < n; i++) {
			wn = width(wn, cs[i].node_name[0] ? cs[i].node_name : cs[i].node);
			wm = width(wm, cs[i].metric);
		}
		printf("%4s  %-*s  %-9s  %-8s  %-*s  %-20s  %-6s  ", "ID", wn, "NODE", "STATE", "DOMAIN",
		       wm, "METRIC", "OPENED", "PASSES");
		if (all)
			printf("%-20s  ", "CLOSED");
		printf("RELEASE CONDITION\n");
		for (size_t i = 0; i < n; i++) {
			const ng_store_case *c = &cs[i];
			char opened[32], closed[32], passes[48];
			ng_format_time(c->opened_at, opened);
			ng_format_time(c->closed_at, closed);
			snprintf(passes, sizeof passes, "%" PRId64 "/%ld", c->passes, needed);
			/* People read host names; the id is in --json and `show`. */
			struct case_extra x = {has_prob[i] ? &probs[i] : NULL, NULL, NULL};
			bool lemon = lemon_of[i] && lemon_of[i]->lemon;
			printf("%4" PRId64 "  %-*s  %-9s  %-8s  %-*s  %-20s  %-6s  ", c->id, wn,
			       c->node_name[0] ? c->node_name : c->node,
			       lemon && !c->closed_at ? "lemon" : state_of(c, &x), c->domain, wm, c->metric, opened, passes);
			if (all)
				printf("%-20s  ", closed);
			printf("%s\n", c->release_condition[0] ? c->release_condition : "-");
		}
		for (size_t k = 0; k < n_lemons; k++)
			for (size_t i = 0; lemons[k].lemon && i < n; i++)
				if (strcmp(cs[i].node, lemon_nodes[k]) == 0) {
					printf("lemon %s: %s; %s\n", cs[i].node_name[0] ? cs[i].node_name : cs[i].node,
					       lemons[k].why, lemons[k].replace);
					break;
				}
	}
	free(probs), free(has_prob), free(lemon_of), free(lemon_nodes), free(lemons);
	free_cases(cs, n);
	return NG_EXIT_OK;
}

/* The case `show` means by arg: the node's open case, else the node's newest
 * case, else (a number) the case with that id. 1 found, 0 none, -1 error. */
static int find_case(ng_store *st, const char *arg, ng_store_case *out, ng_err *err)
{
	int r = ng_store_open_case_of(st, arg, out, err);
	if (r != 0)
		return r;
	ng_store_case *cs;
	size_t n;
	if (ng_store_list_cases(st, true, &cs, &n, err) < 0)
		return -1;
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		if (strcmp(cs[i].node, arg) == 0) {
			*out = cs[i];
			cs[i].evidence = NULL; /* now out's */
			r = 1;
		}
	}
	free_cases(cs, n);
	if (r)
		return 1;
	char *end;
	errno = 0;
	long long id = strtoll(arg, &end, 10);
	if (!*arg || *end || errno || id < 1)
		return 0;
	return ng_store_get_case(st, id, out, err);
}

static int cmd_show(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_quarantine_entry;
	const char *spec;
	bool all, json;
	int rc = parse_opts(argc, argv, false, &spec, &all, &json);
	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return ng_cmd_usage_error(e, "quarantine show takes one NODE or case ID");
	const char *arg = argv[optind];
	ng_store *st = ng_cli_open_existing_store(cli, e, spec);
	if (!st)
		return NG_EXIT_STORE;
	ng_err err;
	ng_store_case c;
	/* NODE is the stable id or the scheduler name; a bare number that names
	 * no node stays a case id. */
	ng_store_node_ref ref;
	int bad = ng_cli_resolve_node(st, e, arg, &ref);
	if (bad) {
		ng_store_close(st);
		return bad;
	}
	int r = find_case(st, ref.id, &c, &err);
	ng_store_probation prob;
	ng_lemon_verdict lemon;
	int has_prob = 0;
	cJSON *captured = NULL;
	char run[96];
	if (r == 1 && ((has_prob = ng_store_probation_of_case(st, c.id, &prob, &err)) < 0 ||
	               ng_lemon_of(st, &cli->policy, c.node, ng_now(), &lemon, &err) < 0 ||
	               ng_store_evidence_of_run(st, c.node, run_of(&c, run, sizeof run), &captured,
	                                        &err) < 0)) {
		ng_store_case_free(&c);
		r = -1;
	}
	ng_store_close(st);
	if (r < 0)
		return ng_cli_store_error(e, &err);
	struct case_extra x = {has_prob == 1 ? &prob : NULL, &lemon, captured};
	if (r == 0) {
		fprintf(stderr, "nodegate quarantine: no case of node \"%s\"%s: `nodegate quarantine "
		                "list --all` lists every case\n",
		        arg, strspn(arg, "0123456789") == strlen(arg) ? " and no case with that ID" : "");
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	long needed = cli->policy.release_passes;
	if (json) {
		cJSON *o = case_json(&c, needed, &x);
		ng_print_json(o);
		cJSON_Delete(o);
		cJSON_Delete(captured);
		ng_store_case_free(&c);
		return NG_EXIT_OK;
	}
	char opened[32], closed[32];
	ng_format_time(c.opened_at, opened);
	ng_format_time(c.closed_at, closed);
	const char *state = state_of(&c, &x);
	printf("case %" PRId64 "  %s%s\n", c.id,
	       !strcmp(state, "open")        ? "open: the node is quarantined"
	       : !strcmp(state, "probation") ? "closed: the node is on probation"
	                                     : "closed",
	       lemon.lemon ? " (a lemon)" : "");
	if (c.node_name[0])
		printf("  node       %s (id %s)\n", c.node_name, c.node);
	else
		printf("  node       %s\n", c.node);
	printf("  class      %s\n", c.class_key);
	printf("  software   %s\n", c.software[0] ? c.software : "-");
	printf("  failed     %s %s\n", c.domain, c.metric);
	printf("  opened     %s\n", opened);
	printf("  release    %s\n", c.release_condition[0] ? c.release_condition : "-");
	printf("  passes     %" PRId64 " of %ld needed, in %" PRId64 " run%s of the failed test "
	       "since it opened\n",
	       c.passes, needed, c.retries, c.retries == 1 ? "" : "s");
	char word[NG_SHELL_WORD_MAX];
	if (c.closed_at)
		printf("  closed     %s by %s: %s\n", closed, c.closed_by[0] ? c.closed_by : "?",
		       c.close_reason[0] ? c.close_reason : "-");
	else if (lemon.lemon)
		printf("  next       after the repair: `nodegate release %s --force --by NAME --reason "
		       "TEXT`\n",
		       ng_cli_shell_word(c.node_name[0] ? c.node_name : c.node, word));
	else if (c.passes >= needed)
		printf("  next       the condition holds: `nodegate release %s` releases it\n",
		       ng_cli_shell_word(c.node_name[0] ? c.node_name : c.node, word));
	else
		printf("  next       %" PRId64 " more passing run%s of %s, then `nodegate release %s`\n",
		       needed - c.passes, needed - c.passes == 1 ? "" : "s", c.metric,
		       ng_cli_shell_word(c.node_name[0] ? c.node_name : c.node, word));
	if (x.probation && x.probation->ended_at) {
		char ended[32];
		ng_format_time(x.probation->ended_at, ended);
		printf("  probation  %s %s by job %s: %s\n", x.probation->outcome, ended,
		       x.probation->job[0] ? x.probation->job : "-", x.probation->detail);
	} else if (x.probation) {
		char started[32];
		ng_format_time(x.probation->started_at, started);
		printf("  probation  since %s: its next %sjob decides\n", started,
		       cli->policy.canary_job[0] ? "canary " : "");
	}
	if (lemon.mtbi_s >= 0)
		printf("  repeats    %zu quarantine%s in %ld days; %.1f days between incidents on "
		       "average\n",
		       lemon.node_count, lemon.node_count == 1 ? "" : "s", cli->policy.lemon_days,
		       lemon.mtbi_s / 86400);
	if (lemon.lemon)
		printf("  lemon      %s: never released automatically\n  replace    %s\n", lemon.why,
		       lemon.replace);
	printf("evidence:\n");
	cJSON *ev = c.evidence ? cJSON_Parse(c.evidence) : NULL;
	if (ev && (cJSON_IsObject(ev) || cJSON_IsArray(ev)) && !ev->child) {
		printf("(none recorded)\n");
		cJSON_Delete(ev);
	} else if (ev) {
		char *s = cJSON_Print(ev);
		printf("%s\n", s ? s : c.evidence);
		free(s);
		cJSON_Delete(ev);
	} else {
		printf("%s\n", c.evidence && c.evidence[0] ? c.evidence : "(none)");
	}
	if (cJSON_GetArraySize(captured) > 0) {
		char *t = cJSON_Print(captured);
		printf("evidence of the failing domain, captured before its confirmation:\n%s\n",
		       t ? t : "");
		free(t);
		char lines[SUMMARY_MAX][NG_SUMMARY_LINE];
		size_t n = ng_evidence_summary(captured, lines, SUMMARY_MAX);
		if (n)
			printf("what the evidence says:\n");
		for (size_t i = 0; i < n; i++)
			printf("  - %s\n", lines[i]);
	}
	cJSON_Delete(captured);
	ng_store_case_free(&c);
	return NG_EXIT_OK;
}

static const struct ng_subcmd subcommands[] = {
	{"list", cmd_list},
	{"show", cmd_show},
};

static int exec_quarantine(struct ng_cli *cli, int argc, char **argv)
{
	return ng_cmd_dispatch(&ng_cmd_quarantine_entry, subcommands,
	                       sizeof subcommands / sizeof subcommands[0], cli, argc, argv);
}
