/* GPU-hours attribution (src/judge/gpu_hours.h): each rule of
 * docs/report.md on a job built for it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "judge/gpu_hours.h"

#define H 3600
#define N_NODES 6
#define T0 (100 * H) /* a start of 0 means "unknown" */

static const size_t one[] = {0}, four[] = {0, 1, 2, 3}, two[] = {4, 5};

static ng_gh_job job(const char *id, const size_t *nodes, size_t n, double gpus, int64_t start,
                     int64_t hours, const char *state)
{
	return (ng_gh_job){.id = id, .nodes = nodes, .n_nodes = n, .gpus = gpus, .start = start,
	                   .end = start + hours * H, .how = ng_job_end_of(state)};
}

struct run {
	ng_gh_tally node[N_NODES], total;
	ng_gh_counts counts;
};

static void tally(const ng_gh_job *j, size_t nj, ng_gh_finding *f, size_t nf, struct run *r)
{
	ng_gh_params p = {.window_start = 0, .window_end = 1000 * H, .grace = 24 * H};
	ng_gh_sort_findings(f, nf);
	assert_int_equal(ng_gpu_hours(j, nj, f, nf, N_NODES, &p, r->node, &r->total, &r->counts), 0);
	/* Whatever the rules, the nodes' shares add up to the totals. */
	double nf_h = 0, jf_h = 0, su_h = 0;
	for (size_t k = 0; k < N_NODES; k++) {
		nf_h += r->node[k].node_fault_hours;
		jf_h += r->node[k].job_failure_hours;
		su_h += r->node[k].suspect_hours;
	}
	assert_true(fabs(nf_h - r->total.node_fault_hours) < 1e-9);
	assert_true(fabs(jf_h - r->total.job_failure_hours) < 1e-9);
	assert_true(fabs(su_h - r->total.suspect_hours) < 1e-9);
}

static void states_map(void **state)
{
	(void)state;
	assert_int_equal(ng_job_end_of("COMPLETED"), NG_JOB_COMPLETED);
	assert_int_equal(ng_job_end_of("TIMEOUT"), NG_JOB_FAILED);
	assert_int_equal(ng_job_end_of("OUT_OF_MEMORY"), NG_JOB_FAILED);
	assert_int_equal(ng_job_end_of("REQUEUED"), NG_JOB_FAILED);
	assert_int_equal(ng_job_end_of("NODE_FAIL"), NG_JOB_NODE_FAIL);
	assert_int_equal(ng_job_end_of("BOOT_FAIL"), NG_JOB_NODE_FAIL);
	assert_int_equal(ng_job_end_of("CANCELLED"), NG_JOB_CANCELLED);
	assert_int_equal(ng_job_end_of("RUNNING"), NG_JOB_OTHER);
	assert_int_equal(ng_job_end_of("PREEMPTED"), NG_JOB_OTHER);
	assert_int_equal(ng_job_end_of(NULL), NG_JOB_OTHER);
}

static void failure_without_finding_is_the_jobs(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("1", four, 4, 32, 10 * H, 5, "FAILED"),
	                 job("2", one, 1, 8, 10 * H, 5, "COMPLETED")};
	tally(j, 2, NULL, 0, &r);
	assert_true(fabs(r.total.job_failure_hours - 160) < 1e-9); /* 32 GPUs x 5 h */
	assert_true(fabs(r.node[2].job_failure_hours - 40) < 1e-9); /* its quarter */
	assert_true(r.total.node_fault_hours == 0);
	assert_int_equal(r.counts.jobs_job_failure, 1);
	assert_int_equal(r.counts.jobs_in_window, 2);
}

static void own_epilog_blames_its_node_for_the_whole_gang(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("7", four, 4, 32, 10 * H, 5, "FAILED")};
	/* Node 2's epilog found its GPU fatal at the end of job 7; node 1 had a
	 * quarantine in the window, weaker evidence the own epilog outranks. */
	ng_gh_finding f[] = {{2, 15 * H, NG_FINDING_EPILOG, "7"}, {1, 12 * H, NG_FINDING_QUARANTINE, NULL}};
	tally(j, 1, f, 2, &r);
	assert_true(fabs(r.node[2].node_fault_hours - 160) < 1e-9);
	assert_true(r.node[1].node_fault_hours == 0);
	assert_true(r.total.job_failure_hours == 0);
	assert_int_equal(r.counts.jobs_node_fault, 1);
}

static void window_findings_share_the_blame(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("8", four, 4, 32, 10 * H, 5, "TIMEOUT")};
	/* Two nodes found faulty within grace after the job: half each. One
	 * finding before the job started and one past the grace explain nothing. */
	ng_gh_finding f[] = {{0, 16 * H, NG_FINDING_HEALTH, NULL},
	                     {3, 15 * H + 24 * H, NG_FINDING_QUARANTINE, NULL},
	                     {1, 9 * H, NG_FINDING_EPILOG, "other"},
	                     {2, 15 * H + 24 * H + 1, NG_FINDING_QUARANTINE, NULL}};
	tally(j, 1, f, 4, &r);
	assert_true(fabs(r.node[0].node_fault_hours - 80) < 1e-9);
	assert_true(fabs(r.node[3].node_fault_hours - 80) < 1e-9);
	assert_true(r.node[1].node_fault_hours == 0 && r.node[2].node_fault_hours == 0);
}

static void node_fail_without_finding_spreads(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("9", two, 2, 16, T0, 10, "NODE_FAIL")};
	tally(j, 1, NULL, 0, &r);
	assert_true(fabs(r.node[4].node_fault_hours - 80) < 1e-9);
	assert_true(fabs(r.node[5].node_fault_hours - 80) < 1e-9);
	assert_int_equal(r.counts.jobs_node_fault_unlocated, 1);
}

static void cancelled_counts_only_with_a_finding(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("10", one, 1, 8, T0, 2, "CANCELLED"), job("11", two, 2, 16, T0, 2, "CANCELLED")};
	ng_gh_finding f[] = {{5, T0 + 1 * H, NG_FINDING_QUARANTINE, NULL}};
	tally(j, 2, f, 1, &r);
	assert_true(r.node[0].node_fault_hours == 0 && r.node[0].job_failure_hours == 0);
	assert_true(fabs(r.node[5].node_fault_hours - 32) < 1e-9);
	assert_true(r.total.job_failure_hours == 0);
}

static void completed_on_a_faulty_gpu_is_suspect(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("12", four, 4, 32, T0, 3, "COMPLETED")};
	/* Its own epilog found node 1 fatal; a quarantine of node 2 in the window
	 * says nothing about a job that finished. */
	ng_gh_finding f[] = {{1, T0 + 3 * H, NG_FINDING_EPILOG, "12"}, {2, T0 + 2 * H, NG_FINDING_QUARANTINE, NULL}};
	tally(j, 1, f, 2, &r);
	assert_true(fabs(r.node[1].suspect_hours - 96) < 1e-9);
	assert_true(r.total.node_fault_hours == 0 && r.total.job_failure_hours == 0);
	assert_int_equal(r.counts.jobs_suspect, 1);
}

static void no_hours_without_gpus_or_times(void **state)
{
	(void)state;
	struct run r;
	ng_gh_job j[] = {job("13", one, 1, 0, T0, 3, "FAILED"), job("14", one, 1, 8, T0, 3, "FAILED"),
	                 job("15", one, 1, 8, T0, 3, "RUNNING"), job("16", one, 1, 8, T0, 3, "FAILED")};
	j[1].start = 0; /* unknown start */
	j[3].end = 2000 * H; /* ended after the window */
	tally(j, 4, NULL, 0, &r);
	assert_true(r.total.job_failure_hours == 0 && r.total.node_fault_hours == 0);
	assert_int_equal(r.counts.jobs_no_hours, 2);
	assert_int_equal(r.counts.jobs_in_window, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(states_map),
		cmocka_unit_test(failure_without_finding_is_the_jobs),
		cmocka_unit_test(own_epilog_blames_its_node_for_the_whole_gang),
		cmocka_unit_test(window_findings_share_the_blame),
		cmocka_unit_test(node_fail_without_finding_spreads),
		cmocka_unit_test(cancelled_counts_only_with_a_finding),
		cmocka_unit_test(completed_on_a_faulty_gpu_is_suspect),
		cmocka_unit_test(no_hours_without_gpus_or_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
