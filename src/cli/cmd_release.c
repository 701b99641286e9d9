/* nodegate release: closes a node's quarantine case once its release
 * condition holds, or by an administrator's named decision. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/release.h"

static int exec_release(struct ng_cli *cli, int argc, char **argv);

enum { OPT_MANUAL = 256, OPT_LAND, OPT_NODE, OPT_FORCE };

static const struct ng_opt release_opts[] = {
	{"manual", OPT_MANUAL, NULL, "release without the passing runs (needs --by and --reason)"},
	{"force", OPT_FORCE, NULL, "release a lemon (needs --by and --reason)"},
	{"by", 'b', "NAME", "who releases (default: the invoking user, $SUDO_USER first)"},
	{"reason", 'r', "TEXT", "why, kept with the case"},
	{"land", OPT_LAND, "slurm|kube|none", "kube: taint the node nodegate.io/probation=case-N\n"
	 "(canary workloads tolerate it), lift the quarantine's taint\n"
	 "and uncordon nodegate's own cordon (`nodegate kube probation`).\n"
	 "slurm: once the case is closed, resume the node through\n"
	 "scontrol, only if nodegate drained it for this case (its\n"
	 "reason \"ng:quarantine ... case N: ... [nodegate]\"); an\n"
	 "operator's drain or another check's is left alone. Audited\n"
	 "as land.resume. Default none"},
	{"node", OPT_NODE, "NAME", "the Slurm node name, when not the case's scheduler name"},
	NG_OPT_STORE,
	NG_OPT_JSON("the closed case as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_release_entry = {
	.name = "release",
	.usage = "NODE [--by NAME] [--reason TEXT] [--land slurm|kube|none] [--store S] [--json]\n"
	         "       nodegate release NODE --manual --by NAME --reason TEXT [--store S] [--json]\n"
	         "       nodegate release NODE --force --by NAME --reason TEXT [--manual] ...",
	.summary = "Release a quarantined node to probation once the failed test has passed again.",
	.help =
	"A quarantined node is released when the test that failed has passed again\n"
	"admission.release_passes times (default 2) since its case opened: each later\n"
	"`nodegate admit` run of the node counts a run, and a pass when the failed\n"
	"metric passed. Until then release refuses and says what is missing. A reboot\n"
	"alone never releases a node.\n"
	"\n"
	"A released node is on probation, not in service: the next job that runs on it\n"
	"(or the canary job, policy quarantine.canary_job) is watched by the epilog.\n"
	"A clean epilog, no new Xid and a runtime that is not a straggler, neither\n"
	"against its gang peers in the same job (a step it ran alone, from sacct) nor\n"
	"against the job's earlier runs elsewhere, return it to admitted; a failure\n"
	"opens the case again, as a retry (docs/admission.md, \"Probation\").\n"
	"\n"
	"A lemon (quarantined quarantine.lemon_count times within lemon_days, default 3\n"
	"in 30, as a node or as one GPU by its UUID) is never released this way:\n"
	"release refuses and says what the evidence supports replacing. After the\n"
	"repair, --force with --by and --reason releases it, audited as such.\n"
	"\n"
	"NODE is the node's stable id or its scheduler name (SLURMD_NODENAME, the short\n"
	"host name); a name that two nodes have had is refused, listing both ids.\n"
	"\n"
	"--manual is the administrator-led release, e.g. after a longer diagnostic or a\n"
	"repair (a replaced GPU, a reseated cable): it needs --by and --reason, and the\n"
	"case and the audit log keep both. Prefer re-running the failed test: a manual\n"
	"release admits a node nothing has measured since it failed.\n",
	.opts = release_opts,
	.help_tail =
	"Exit status: 0 released to probation; 1 not released (no open case, the condition\n"
	"does not hold yet, or a lemon without --force); 2 usage error; 3 the store could\n"
	"not be opened, read or written.\n",
	.exec = exec_release,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

static void print_text(const struct ng_cli *cli, const ng_release_result *r, bool manual)
{
	const ng_store_case *c1 = &r->closed;
	printf("released node %s to probation: case %" PRId64 " closed by %s (%s)\n",
	       c1->node_name[0] ? c1->node_name : c1->node, c1->id, c1->closed_by,
	       c1->close_reason);
	if (cli->policy.canary_job[0])
		printf("The canary job \"%s\" decides: a clean run returns the node to admitted, a "
		       "failing one quarantines it again.\n",
		       cli->policy.canary_job);
	else
		printf("Its next job decides: a clean run returns the node to admitted, a failing one "
		       "quarantines it again.\n");
	if (r->lemon.lemon)
		printf("A lemon released by force: %s.\n", r->lemon.why);
	const cJSON *m = r->landing ? cJSON_GetObjectItem(r->landing, "message") : NULL;
	if (cJSON_IsString(m))
		printf("slurm: %s\n", m->valuestring);
	if (manual)
		printf("Nothing has measured %s since it failed %s: the job that ends its probation "
		       "is its first evidence.\n",
		       r->node, c1->metric);
}

/* Why the release was refused, and what to do; the exit status. */
static int refused(const char *arg, const ng_release_result *r)
{
	const ng_store_case *c = &r->opened;
	char word[NG_SHELL_WORD_MAX];
	if (r->state == NG_RELEASE_NO_CASE) {
		fprintf(stderr, "nodegate release: node %s is not quarantined (it has no open case): "
		                "nothing to release\n",
		        arg);
	} else if (r->state == NG_RELEASE_NOT_YET) {
		char opened[32];
		ng_format_time(c->opened_at, opened);
		long needed = r->passes_needed;
		fprintf(stderr,
		        "nodegate release: case %" PRId64 " needs %ld passing run%s of %s %s since %s; "
		        "it has %" PRId64 " (%" PRId64 " run%s). A reboot alone never releases a node.\n"
		        "Run the failed test again with `nodegate admit`, or, after a repair or a longer "
		        "diagnostic,\nrelease it by hand: nodegate release %s --manual --by NAME "
		        "--reason TEXT\n",
		        c->id, needed, needed == 1 ? "" : "s", c->domain, c->metric, opened, c->passes,
		        c->retries, c->retries == 1 ? "" : "s", ng_cli_shell_word(r->node, word));
	} else {
		fprintf(stderr,
		        "nodegate release: node %s is a lemon: %s. It is never released automatically.\n"
		        "Evidence: %s.\nAfter the repair: nodegate release %s --force --by NAME "
		        "--reason TEXT\n",
		        arg, r->lemon.why, r->lemon.replace, ng_cli_shell_word(r->node, word));
	}
	return NG_EXIT_NOT_ADMISSIBLE;
}

static int exec_release(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_release_entry;
	const char *spec = NULL;
	bool json = false;
	ng_release_request req = {.land = NG_RELEASE_LAND_NONE};
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_release_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case OPT_MANUAL: req.manual = true; break;
		case OPT_FORCE: req.force = true; break;
		case OPT_LAND:
			if (strcmp(op.arg, "slurm") == 0)
				req.land = NG_RELEASE_LAND_SLURM;
			else if (strcmp(op.arg, "kube") == 0)
				req.land = NG_RELEASE_LAND_KUBE;
			else if (strcmp(op.arg, "none") == 0)
				req.land = NG_RELEASE_LAND_NONE;
			else
				return ng_cmd_usage_error(e, "--land takes slurm, kube or none");
			break;
		case OPT_NODE: req.land_node = op.arg; break;
		case 'b': req.by = op.arg; break;
		case 'r': req.reason = op.arg; break;
		case 's': spec = op.arg; break;
		case 'j': json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (argc - optind != 1)
		return ng_cmd_usage_error(e, "name one NODE to release");
	req.node = argv[optind];
	const char *by = req.by, *reason = req.reason;
	ng_store_case c0;
	if (req.manual && (!by || !*by || !reason || !*reason))
		return ng_cmd_usage_error(e, "--manual needs --by NAME and --reason TEXT: a release "
		                             "without passing runs must say who decided it and why");
	if (req.force && (!by || !*by || !reason || !*reason))
		return ng_cmd_usage_error(e, "--force needs --by NAME and --reason TEXT: releasing a "
		                             "lemon must say who decided it and why");
	if (by && (!*by || strlen(by) >= sizeof c0.closed_by))
		return ng_cmd_usage_error(e, "--by must be 1 to %zu characters", sizeof c0.closed_by - 1);
	/* The reason is kept with a prefix saying how the case was released. */
	if (reason && (!*reason || strlen(reason) > 200))
		return ng_cmd_usage_error(e, "--reason must be 1 to 200 characters");
	/* kubectl's step lines go with the text; under --json, apart from it. */
	req.land_log = json ? stderr : stdout;

	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, spec, &ctx))
		return NG_EXIT_STORE;
	ng_release_result r;
	ng_err err;
	int rc = NG_EXIT_OK;
	if (ng_release(&ctx, &req, &r, &err) < 0)
		rc = ng_cli_fail(e, &err, NG_ERR_STORE);
	else if (r.state != NG_RELEASED)
		rc = refused(req.node, &r);
	else if (r.landing_unaudited) /* said already, as a note */
		rc = ng_exit_for_class(NG_ERR_STORE, NG_ERR_STORE);
	else if (json) {
		cJSON *o = ng_release_result_json(&ctx, &r, req.manual);
		ng_print_json(o);
		cJSON_Delete(o);
	} else
		print_text(cli, &r, req.manual);
	ng_release_result_release(&r);
	return rc;
}
