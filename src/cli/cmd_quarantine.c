/* nodegate quarantine: the quarantine cases in the store, and their evidence. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/quarantine_cases.h"
#include "judge/evidence_summary.h"

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
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

#define SUMMARY_MAX 32

struct opts {
	const char *spec;
	bool all, json;
	int next; /* the first operand */
};

/* Options shared by both subcommands. Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, const char *allowed, struct opts *o)
{
	*o = (struct opts){0};
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_quarantine_entry, argc, argv);
	op.only = allowed;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'a': o->all = true; break;
		case 's': o->spec = op.arg; break;
		case 'j': o->json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	o->next = op.next;
	return -1;
}

static int cmd_list(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_quarantine_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "asj", &o);
	if (rc >= 0)
		return rc;
	if (o.next < argc)
		return ng_cmd_usage_error(e, "quarantine list takes no arguments: \"%s\" (show NODE "
		                             "shows one case)",
		                          argv[o.next]);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_case_list l;
	ng_err err;
	rc = ng_case_list_read(&ctx, o.all, &l, &err);
	if (rc < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	const ng_case_view *cs = l.cases;
	size_t n = l.n;
	long needed = cli->policy.release_passes;
	if (o.json) {
		cJSON *doc = ng_case_list_json(&l, needed);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (n == 0) {
		printf(o.all ? "no quarantine cases\n" : "no node is quarantined\n");
	} else {
		int wn = 4, wm = 6;
		for (size_t i = 0; i < n; i++) {
			wn = ng_cli_col_width(wn, cs[i].c.node_name[0] ? cs[i].c.node_name : cs[i].c.node);
			wm = ng_cli_col_width(wm, cs[i].c.metric);
		}
		printf("%4s  %-*s  %-9s  %-8s  %-*s  %-20s  %-6s  ", "ID", wn, "NODE", "STATE", "DOMAIN",
		       wm, "METRIC", "OPENED", "PASSES");
		if (o.all)
			printf("%-20s  ", "CLOSED");
		printf("RELEASE CONDITION\n");
		for (size_t i = 0; i < n; i++) {
			const ng_store_case *c = &cs[i].c;
			char opened[32], closed[32], passes[48];
			ng_format_time(c->opened_at, opened);
			ng_format_time(c->closed_at, closed);
			snprintf(passes, sizeof passes, "%" PRId64 "/%ld", c->passes, needed);
			/* People read host names; the id is in --json and `show`. */
			bool lemon = cs[i].lemon && cs[i].lemon->lemon;
			printf("%4" PRId64 "  %-*s  %-9s  %-8s  %-*s  %-20s  %-6s  ", c->id, wn,
			       c->node_name[0] ? c->node_name : c->node,
			       lemon && !c->closed_at ? "lemon" : ng_case_state(&cs[i]), c->domain, wm, c->metric, opened, passes);
			if (o.all)
				printf("%-20s  ", closed);
			printf("%s\n", c->release_condition[0] ? c->release_condition : "-");
		}
		for (size_t k = 0; k < l.n_lemons; k++)
			for (size_t i = 0; l.lemons[k].lemon && i < n; i++) {
				const ng_store_case *c = &cs[i].c;
				if (strcmp(c->node, l.lemon_nodes[k]) == 0) {
					printf("lemon %s: %s; %s\n", c->node_name[0] ? c->node_name : c->node,
					       l.lemons[k].why, l.lemons[k].replace);
					break;
				}
			}
	}
	ng_case_list_release(&l);
	return NG_EXIT_OK;
}

static int cmd_show(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_quarantine_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "sj", &o);
	if (rc >= 0)
		return rc;
	if (argc - o.next != 1)
		return ng_cmd_usage_error(e, "quarantine show takes one NODE or case ID");
	const char *arg = argv[o.next];
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_case_detail d;
	ng_err err;
	int r = ng_case_find(&ctx, arg, &d, &err);
	if (r < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	if (r == 0) {
		fprintf(stderr, "nodegate quarantine: no case of node \"%s\"%s: `nodegate quarantine "
		                "list --all` lists every case\n",
		        arg, strspn(arg, "0123456789") == strlen(arg) ? " and no case with that ID" : "");
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	const ng_store_case c = d.view.c;
	const ng_lemon_verdict lemon = d.lemon;
	const ng_store_probation *prob = d.view.has_probation ? &d.view.probation : NULL;
	const cJSON *captured = d.captured;
	long needed = cli->policy.release_passes;
	if (o.json) {
		cJSON *doc = ng_case_detail_json(&d, needed);
		ng_print_json(doc);
		cJSON_Delete(doc);
		ng_case_detail_release(&d);
		return NG_EXIT_OK;
	}
	char opened[32], closed[32];
	ng_format_time(c.opened_at, opened);
	ng_format_time(c.closed_at, closed);
	const char *state = ng_case_state(&d.view);
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
	const char *who = ng_cli_shell_word(c.node_name[0] ? c.node_name : c.node, word);
	int64_t more;
	switch (ng_case_next(&c, &lemon, needed, &more)) {
	case NG_CASE_NEXT_NONE:
		printf("  closed     %s by %s: %s\n", closed, c.closed_by[0] ? c.closed_by : "?",
		       c.close_reason[0] ? c.close_reason : "-");
		break;
	case NG_CASE_NEXT_FORCE:
		printf("  next       after the repair: `nodegate release %s --force --by NAME --reason "
		       "TEXT`\n", who);
		break;
	case NG_CASE_NEXT_RELEASE:
		printf("  next       the condition holds: `nodegate release %s` releases it\n", who);
		break;
	case NG_CASE_NEXT_MORE_PASSES:
		printf("  next       %" PRId64 " more passing run%s of %s, then `nodegate release %s`\n",
		       more, more == 1 ? "" : "s", c.metric, who);
		break;
	}
	if (prob && prob->ended_at) {
		char ended[32];
		ng_format_time(prob->ended_at, ended);
		printf("  probation  %s %s by job %s: %s\n", prob->outcome, ended,
		       prob->job[0] ? prob->job : "-", prob->detail);
	} else if (prob) {
		char started[32];
		ng_format_time(prob->started_at, started);
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
	ng_case_detail_release(&d);
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
