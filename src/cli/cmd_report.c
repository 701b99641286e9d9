/* nodegate report: the fleet as a page an operator can look at: where each
 * node sits among its peers, what was quarantined and why, when the fleet
 * moved together, GPU-hours lost and to what, and the gate's own mistakes. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "core/atomic_file.h"
#include "flow/report_doc.h"
#include "flow/report_policy.h"

static int exec_report(struct ng_cli *cli, int argc, char **argv);

enum { O_SACCT = 256, O_NO_SACCT, O_RECENT, O_STRAGGLE, O_GRACE, O_REPLAY };

static const struct ng_opt report_opts[] = {
	{"html", 'o', "FILE", "write the HTML page to FILE"},
	NG_OPT_JSON("print the report as JSON"),
	{"days", 'd', "N", "the window, 1 to 366 days (default 30)"},
	{"class", 'c', "C", "only class C"},
	{"top", 't', "N", "nodes in the GPU-hours table (default 20)"},
	NG_OPT_STORE,
	{"sacct", O_SACCT, "FILE", "job accounting saved from `sacct --allusers --allocations\n"
	 "--parsable2 --noheader --format=JobID,NodeList,AllocTRES,\n"
	 "Start,End,State,ExitCode` run with TZ=UTC ('-': stdin)"},
	{"no-sacct", O_NO_SACCT, NULL, "no job accounting: no GPU-hours, findings only\n"
	 "(default: run sacct when it is installed, 60 s at most)"},
	{"recent-days", O_RECENT, "N", "a node's plotted value is its median over this many\n"
	 "days (default 7)"},
	{"straggle-days", O_STRAGGLE, "N", "a finding this soon after an admission makes it a later\n"
	 "straggler (default 7)"},
	{"replay", O_REPLAY, "FILE", "add a section with a replay's result (`nodegate policy\n"
	                                 "replay --json` saved to FILE, docs/policy-changes.md)"},
	{"grace-hours", O_GRACE, "N", "a finding this long after a failed job still blames its\n"
	 "node (default 24)"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_report_entry = {
	.name = "report",
	.usage = "[--html FILE] [--json] [--days N] [--class C] [--top N] [--store S]\n"
	         "       [--sacct FILE | --no-sacct] [--recent-days N] [--straggle-days N]"
	         " [--grace-hours N]\n"
	         "       [--replay FILE]",
	.summary = "The fleet report: nodes against peers, quarantines, GPU-hours lost, false rejects.",
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
	.help =
	"Reads the store (never writes it) and shows, for the last N days:\n"
	"\n"
	"  - per class and metric, every node's recent median against the baseline\n"
	"    median, the flag bar (admission.flag_fraction of it) and the floor, with\n"
	"    flagged, suspect, held and quarantined nodes marked;\n"
	"  - a timeline of admission outcomes, GPU faults found between jobs, software\n"
	"    identities first seen, and fleet-regression events with the software\n"
	"    change they coincided with;\n"
	"  - the quarantine list (age, evidence, release condition) and the circuit\n"
	"    breaker of each class;\n"
	"  - GPU-hours lost to node faults apart from job failures, per node and class,\n"
	"    from Slurm's job accounting (sacct) against what was found on each node;\n"
	"  - false rejects (quarantines released with the same hardware) and later\n"
	"    stragglers (admissions followed by a finding), per class and policy.\n"
	"  - configuration errors first, when there are any: GPU checks that checked\n"
	"    nothing (and drained nothing) for a broken policy or command line, per\n"
	"    node, so a rollout gone wrong across the fleet is seen at once;\n"
	"docs/report.md gives the exact rules.\n"
	"\n"
	"With --html the page is one self-contained file (inline SVG and CSS, no\n"
	"script, nothing fetched), written atomically. With --json the same content\n"
	"goes to standard output as JSON. With neither, a short summary is printed.\n",
	.opts = report_opts,
	.help_tail =
	"$NODEGATE_NOW replaces the clock. Exit status: 0 done; 1 the HTML file could\n"
	"not be written; 2 usage error or an unreadable --sacct file; 3 the store\n"
	"could not be opened or read.\n",
	.exec = exec_report,
};


static int number(const struct ng_cmd_entry *e, const char *opt, const char *v, long lo, long hi,
                  int64_t *out)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (!*v || *end || n < lo || n > hi)
		return ng_cmd_usage_error(e, "%s takes a whole number from %ld to %ld, not \"%s\"", opt, lo,
		                          hi, v);
	*out = n;
	return -1;
}

static void summary(const struct ng_report *r)
{
	size_t open = 0, flagged = 0, events = 0;
	for (size_t i = 0; i < r->n_cases; i++)
		open += r->cases[i].c.closed_at == 0;
	for (size_t i = 0; i < r->n_nodes; i++)
		flagged += r->nodes[i].flagged;
	for (size_t i = 0; i < r->n_events; i++)
		events += r->events[i].e.cleared_at == 0;
	printf("%zu nodes in %zu classes over %lld days: %zu below the bar, %zu quarantined, %zu open "
	       "fleet-regression event%s.\n",
	       ng_report_nodes_shown(r), r->o.class_key ? (size_t)1 : r->class_map.n,
	       (long long)r->o.days, flagged, open, events,
	       events == 1 ? "" : "s");
	if (r->have_jobs)
		printf("GPU-hours lost: %.1f to node faults, %.1f to job failures (%s).\n",
		       r->gh_total.node_fault_hours, r->gh_total.job_failure_hours, r->jobs_source);
	else
		printf("GPU-hours: %s.\n", r->jobs_source);
	printf("%zu admissions, %zu later straggled within %lld days.\n", r->admissions, r->straggled,
	       (long long)r->o.straggle_days);
	const cJSON *n;
	cJSON_ArrayForEach(n, r->notes)
		printf("note: %s\n", n->valuestring);
	printf("Use --html FILE for the page, --json for everything.\n");
}

static int exec_report(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_report_entry;
	struct ng_report r;
	memset(&r, 0, sizeof r);
	r.o = (struct ng_report_opts){.days = 30, .top = 20, .straggle_days = 7, .grace_hours = 24,
	                              .recent_days = 7};
	const char *html = NULL, *spec = NULL, *replay_file = NULL;
	bool json = false;
	int64_t top = 20;
	int c, rc = -1;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_report_entry, argc, argv);
	while (rc < 0 && (c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'o': html = op.arg; break;
		case 'j': json = true; break;
		case 'd': rc = number(e, "--days", op.arg, 1, 366, &r.o.days); break;
		case 'c': r.o.class_key = op.arg; break;
		case 't': rc = number(e, "--top", op.arg, 1, 100000, &top); break;
		case 's': spec = op.arg; break;
		case O_SACCT: r.o.sacct_file = op.arg; break;
		case O_NO_SACCT: r.o.no_sacct = true; break;
		case O_RECENT: rc = number(e, "--recent-days", op.arg, 1, 366, &r.o.recent_days); break;
		case O_STRAGGLE: rc = number(e, "--straggle-days", op.arg, 1, 366, &r.o.straggle_days); break;
		case O_GRACE: rc = number(e, "--grace-hours", op.arg, 0, 24 * 366, &r.o.grace_hours); break;
		case O_REPLAY: replay_file = op.arg; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return ng_cmd_usage_error(e, "report takes no arguments: \"%s\"", argv[optind]);
	if (r.o.sacct_file && r.o.no_sacct)
		return ng_cmd_usage_error(e, "--sacct and --no-sacct contradict each other");
	if (html && !*html)
		return ng_cmd_usage_error(e, "--html needs a file name");
	r.o.top = (long)top;
	r.o.now = ng_now();

	ng_store *st = ng_cli_store(cli, spec);
	if (!st)
		return NG_EXIT_STORE;
	r.o.store_where = ng_store_where(st);
	ng_err err;
	ng_ctx ctx = {.policy = cli->policy, .store = st, .store_spec = spec};
	if (ng_report_load(st, &ctx, &r, &err) < 0) {
		rc = ng_cli_store_error(e, &err);
		ng_report_free(&r);
		return rc;
	}
	if (ng_report_hours(st, &r, &err) < 0) {
		fprintf(stderr, "nodegate report: %s\n", err.msg);
		ng_report_free(&r);
		return NG_EXIT_USAGE;
	}
	/* The policy sections (report_policy.c): a replay's file, the shadow run. */
	cJSON *replay, *shadow;
	if (ng_report_policy_load(st, r.o.now - r.o.days * 86400, replay_file, &replay, &shadow,
	                          &err) < 0) {
		fprintf(stderr, "nodegate report: %s\n", err.msg);
		ng_report_free(&r);
		return err.code == NG_ERR_STORE ? NG_EXIT_STORE : NG_EXIT_USAGE;
	}
	rc = NG_EXIT_OK;
	if (html) {
		ng_strbuf page = {0};
		if (ng_report_page(&r, replay, shadow, &page) < 0) {
			fprintf(stderr, "nodegate report: out of memory writing the page\n");
			rc = NG_EXIT_NOT_ADMISSIBLE;
		} else if (ng_write_file_atomic(html, page.s, page.len, &err) < 0) {
			fprintf(stderr, "nodegate report: %s\n", err.msg);
			rc = NG_EXIT_NOT_ADMISSIBLE;
		} else if (!json) {
			printf("wrote %s (%zu bytes): %zu nodes, %lld days\n", html, page.len,
			       ng_report_nodes_shown(&r), (long long)r.o.days);
		}
		ng_strbuf_free(&page);
	}
	if (json) {
		cJSON *doc = ng_report_document(&r, replay, shadow);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (!html) {
		summary(&r);
	}
	cJSON_Delete(replay);
	cJSON_Delete(shadow);
	ng_report_free(&r);
	return rc;
}
