/* GPU-hours lost, for the report: Slurm's job accounting (a saved `sacct`
 * output, or `sacct` itself when it is installed) against what the store
 * found on each node. Without accounting there are no hours: the report
 * says so and counts the findings alone, never an estimate. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/report_model.h"
#include "collect/spawn.h"
#include "core/read_file.h"
#include "parse/sacct.h"

#define SACCT_TIMEOUT_S 60.0
#define SACCT_MAX_OUTPUT (256u << 20)

static void utc(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* sacct's output for the window, or NULL with r->jobs_source saying why. */
static char *run_sacct(struct ng_report *r, size_t *len)
{
	char start[32], end[32], s_arg[48], e_arg[48];
	/* Jobs that ended in the window may have started well before it. */
	utc(r->since - 7 * 86400, start);
	utc(r->o.now, end);
	snprintf(s_arg, sizeof s_arg, "--starttime=%s", start);
	snprintf(e_arg, sizeof e_arg, "--endtime=%s", end);
	char *argv[] = {"sacct", "--allusers", "--allocations", "--parsable2", "--noheader",
	                s_arg, e_arg,
	                "--format=JobID,NodeList,AllocTRES,Start,End,State,ExitCode", NULL};
	/* sacct prints and reads times in the local zone: make it UTC, which is
	 * what the parser reads and what the store keeps. */
	setenv("TZ", "UTC", 1);
	tzset();
	ng_spawn_result res;
	char why[256];
	if (ng_spawn_capture(argv, SACCT_TIMEOUT_S, SACCT_MAX_OUTPUT, &res, why, sizeof why) < 0) {
		snprintf(r->jobs_source, sizeof r->jobs_source, "no job accounting: %.120s", why);
		return NULL;
	}
	char *out = NULL;
	if (!res.spawned) {
		snprintf(r->jobs_source, sizeof r->jobs_source,
		         "no job accounting: sacct %s",
		         res.spawn_errno == ENOENT ? "is not installed" : strerror(res.spawn_errno));
	} else if (res.timed_out || res.exit_status != 0 || res.truncated) {
		char how[200];
		ng_spawn_describe(&res, how, sizeof how);
		snprintf(r->jobs_source, sizeof r->jobs_source, "no job accounting: sacct %.130s", how);
		const char *nl = res.err ? strchr(res.err, '\n') : NULL;
		if (res.err && res.err[0])
			ng_report_note(r, "sacct said: %.*s", (int)(nl ? nl - res.err : 200), res.err);
	} else {
		snprintf(r->jobs_source, sizeof r->jobs_source, "sacct (%zu bytes)", res.out_len);
		out = res.out;
		*len = res.out_len;
		res.out = NULL;
	}
	ng_spawn_result_free(&res);
	return out;
}

int ng_report_hours(ng_store *st, struct ng_report *r, ng_err *err)
{
	(void)st;
	char *text = NULL;
	size_t len = 0;
	if (r->o.sacct_file) {
		ng_err ferr;
		text = ng_read_file(r->o.sacct_file, &len, &ferr);
		if (!text)
			return ng_fail(err, "job accounting: %s", ferr.msg);
		snprintf(r->jobs_source, sizeof r->jobs_source, "%.150s", r->o.sacct_file);
	} else if (r->o.no_sacct) {
		snprintf(r->jobs_source, sizeof r->jobs_source, "no job accounting: --no-sacct");
	} else {
		text = run_sacct(r, &len);
	}

	/* Quarantines are findings too: a node admission took away, unless a
	 * fleet-regression event explains it. */
	size_t nf = r->n_find + r->n_cases;
	ng_gh_finding *f = calloc(nf ? nf : 1, sizeof *f);
	if (!f) {
		free(text);
		return ng_fail(err, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < r->n_find; i++)
		f[k++] = (ng_gh_finding){r->find[i].node, r->find[i].at, r->find[i].kind, r->find[i].job};
	for (size_t i = 0; i < r->n_cases; i++)
		if (!r->cases[i].in_fleet_event) /* the class moved, not the node (report_model_truth.c) */
			f[k++] = (ng_gh_finding){r->cases[i].node, r->cases[i].c.opened_at,
			                         NG_FINDING_QUARANTINE, NULL};
	if (!text) {
		free(f);
		return 0;
	}

	ng_sacct acct;
	int rc = ng_sacct_parse(text, len, &acct, err);
	free(text);
	size_t total_nodes = 0;
	for (size_t i = 0; rc == 0 && i < acct.n; i++)
		total_nodes += acct.jobs[i].n_nodes;
	ng_gh_job *jobs = rc == 0 ? calloc(acct.n ? acct.n : 1, sizeof *jobs) : NULL;
	size_t *idx = rc == 0 ? calloc(total_nodes ? total_nodes : 1, sizeof *idx) : NULL;
	if (rc == 0 && (!jobs || !idx))
		rc = ng_fail(err, "out of memory");
	size_t used = 0;
	for (size_t i = 0; rc == 0 && i < acct.n; i++) {
		const ng_sacct_job *j = &acct.jobs[i];
		jobs[i] = (ng_gh_job){.id = j->id, .nodes = idx + used, .n_nodes = j->n_nodes,
		                      .gpus = (double)j->gpus, .start = j->start, .end = j->end,
		                      .how = ng_job_end_of(j->state)};
		for (size_t q = 0; q < j->n_nodes; q++) {
			size_t before = r->n_nodes;
			long n = ng_report_node(r, ng_sacct_node(&acct, j, q));
			if (n < 0) {
				rc = ng_fail(err, "out of memory");
				break;
			}
			r->jobs_unmatched_nodes += r->n_nodes > before;
			idx[used++] = (size_t)n;
		}
	}
	ng_gh_tally *per = rc == 0 ? calloc(r->n_nodes ? r->n_nodes : 1, sizeof *per) : NULL;
	if (rc == 0 && !per)
		rc = ng_fail(err, "out of memory");
	if (rc == 0) {
		ng_gh_sort_findings(f, k);
		ng_gh_params p = {.window_start = r->since, .window_end = r->o.now + 1,
		                  .grace = r->o.grace_hours * 3600};
		ng_gh_tally all;
		if (ng_gpu_hours(jobs, acct.n, f, k, r->n_nodes, &p, per, &all, &r->gh_counts) < 0)
			rc = ng_fail(err, "out of memory");
	}
	if (rc == 0) {
		r->have_jobs = true;
		r->sacct_bad = acct.bad;
		if (acct.bad)
			ng_report_note(r, "job accounting: %zu line(s) not read; the first, line %zu: %s",
			               acct.bad, acct.first_bad, acct.bad_why);
		for (size_t i = 0; i < r->n_nodes; i++) {
			struct ng_rnode *n = &r->nodes[i];
			n->gh = per[i];
			if (r->o.class_key &&
			    (n->cls < 0 || strcmp(r->class_map.keys[n->cls], r->o.class_key) != 0))
				continue;
			ng_gh_tally *c = n->cls >= 0 ? &r->classes[n->cls].gh : NULL;
			ng_gh_tally *t[2] = {c, &r->gh_total};
			for (int w = 0; w < 2; w++) {
				if (!t[w])
					continue;
				t[w]->node_fault_hours += per[i].node_fault_hours;
				t[w]->job_failure_hours += per[i].job_failure_hours;
				t[w]->suspect_hours += per[i].suspect_hours;
				t[w]->node_fault_jobs += per[i].node_fault_jobs;
				t[w]->job_failure_jobs += per[i].job_failure_jobs;
				t[w]->suspect_jobs += per[i].suspect_jobs;
			}
		}
		if (r->jobs_unmatched_nodes)
			ng_report_note(r,
			               "job accounting names %zu host(s) the store has no profile for: "
			               "their hours are shown under the host name, with no class",
			               r->jobs_unmatched_nodes);
	}
	free(per);
	free(jobs);
	free(idx);
	free(f);
	ng_sacct_free(&acct);
	return rc;
}
