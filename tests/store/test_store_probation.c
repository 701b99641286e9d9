/* Probation, job runtimes and the failing domain's evidence in the store
 * (store/probation.h), on SQLite and PostgreSQL: a release puts the node on
 * probation, a pass admits it, a failure opens the same case again as a
 * retry, a new case supersedes it; every step is audited and the chain still
 * verifies the rows it covers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "store/probation.h"
#include "store/store.h"
#include "store_test_env.h"

static ng_store *fresh(const char *name, char *spec, size_t cap)
{
	if (ng_test_store_spec(name, spec, cap) != 0)
		fail_msg("cannot make a store for %s", name);
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(spec, &st, &err) != 0)
		fail_msg("cannot open %s: %s", spec, err.msg);
	return st;
}

static int64_t open_case(ng_store *st, const char *node, int64_t at)
{
	ng_store_case c = {.opened_at = at};
	ng_copy(c.node, sizeof c.node, node);
	ng_copy(c.class_key, sizeof c.class_key, "8xH100/1node");
	ng_copy(c.domain, sizeof c.domain, "compute");
	ng_copy(c.metric, sizeof c.metric, "gpu.gemm.tflops");
	ng_copy(c.release_condition, sizeof c.release_condition, "two passes");
	c.evidence = (char *)"{\"run\":\"r1\"}";
	ng_err err = {0};
	if (ng_store_open_case(st, &c, "nodegate", &err) != 0)
		fail_msg("open case: %s", err.msg);
	return c.id;
}

static void put_state(ng_store *st, const char *node, const char *outcome, int64_t at)
{
	ng_store_node_state s = {.updated_at = at};
	ng_copy(s.node, sizeof s.node, node);
	ng_copy(s.class_key, sizeof s.class_key, "8xH100/1node");
	ng_copy(s.outcome, sizeof s.outcome, outcome);
	ng_copy(s.run_id, sizeof s.run_id, "r1");
	ng_err err = {0};
	if (ng_store_put_decision(st, &s, NULL, 0, NULL, "nodegate", &err) != 0)
		fail_msg("decision: %s", err.msg);
}

static void expect_outcome(ng_store *st, const char *node, const char *outcome)
{
	ng_store_node_state s;
	ng_err err = {0};
	assert_int_equal(ng_store_get_node_state(st, node, &s, &err), 1);
	assert_string_equal(s.outcome, outcome);
}

static void verified(ng_store *st)
{
	ng_store_audit_report rep;
	ng_err err = {0};
	assert_int_equal(ng_store_audit_verify(st, &rep, &err), 0);
	assert_int_equal(rep.rows_bad, 0);
}

static void release_pass_and_fail(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh("probation", spec, sizeof spec);
	ng_err err = {0};
	put_state(st, "n1", "quarantined", 100);
	int64_t id = open_case(st, "n1", 100);
	ng_store_probation p;
	assert_int_equal(ng_store_probation_of(st, "n1", &p, &err), 0);

	assert_int_equal(ng_store_release_to_probation(st, id, 200, "bob", "reseated", NULL, &err), 0);
	expect_outcome(st, "n1", "probation");
	assert_int_equal(ng_store_probation_of(st, "n1", &p, &err), 1);
	assert_int_equal(p.case_id, id);
	assert_int_equal(p.started_at, 200);
	ng_store_case c;
	assert_int_equal(ng_store_open_case_of(st, "n1", &c, &err), 0);
	/* a second release of the closed case is refused */
	assert_int_equal(ng_store_release_to_probation(st, id, 210, "bob", "again", NULL, &err), -1);

	/* a failing job: the same case opens again, a retry, passes reset */
	assert_int_equal(ng_store_end_probation(st, p.id, NG_PROBATION_FAILED, 300, "77",
	                                        "the epilog drained", &err),
	                 0);
	expect_outcome(st, "n1", "quarantined");
	assert_int_equal(ng_store_open_case_of(st, "n1", &c, &err), 1);
	assert_int_equal(c.id, id);
	assert_int_equal(c.retries, 1);
	assert_int_equal(c.closed_at, 0);
	assert_string_equal(c.closed_by, "");
	ng_store_case_free(&c);
	assert_int_equal(ng_store_probation_of(st, "n1", &p, &err), 0);
	assert_int_equal(ng_store_probation_of_case(st, id, &p, &err), 1);
	assert_string_equal(p.outcome, "failed");
	assert_string_equal(p.job, "77");
	assert_int_equal(p.ended_at, 300);
	/* an ended probation cannot end twice */
	assert_int_equal(ng_store_end_probation(st, p.id, NG_PROBATION_PASSED, 310, "78", "", &err), -1);

	/* released again, and a clean job admits it */
	assert_int_equal(ng_store_release_to_probation(st, id, 400, "bob", "replaced GPU",
	                                               "{\"forced\":true}", &err),
	                 0);
	assert_int_equal(ng_store_probation_of(st, "n1", &p, &err), 1);
	assert_int_equal(ng_store_end_probation(st, p.id, NG_PROBATION_PASSED, 500, "79", "clean",
	                                        &err),
	                 0);
	expect_outcome(st, "n1", "admitted");
	ng_store_probation *all = NULL;
	size_t n = 0;
	assert_int_equal(ng_store_list_probations(st, true, &all, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(all[0].outcome, "passed");
	free(all);
	assert_int_equal(ng_store_list_probations(st, false, &all, &n, &err), 0);
	assert_int_equal(n, 0);
	free(all);
	cJSON *log = ng_store_audit_list(st, 10, "node:n1", &err);
	char *text = cJSON_PrintUnformatted(log);
	assert_non_null(strstr(text, "probation.fail"));
	assert_non_null(strstr(text, "probation.pass"));
	assert_non_null(strstr(text, "\"forced\":true"));
	cJSON_free(text);
	cJSON_Delete(log);
	verified(st);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

static void superseded_by_a_new_case(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh("probation_superseded", spec, sizeof spec);
	ng_err err = {0};
	put_state(st, "n2", "quarantined", 100);
	int64_t id = open_case(st, "n2", 100);
	assert_int_equal(ng_store_release_to_probation(st, id, 200, "bob", "r", NULL, &err), 0);
	ng_store_probation p;
	assert_int_equal(ng_store_probation_of(st, "n2", &p, &err), 1);
	int64_t id2 = open_case(st, "n2", 250);
	assert_int_equal(ng_store_end_probation(st, p.id, NG_PROBATION_SUPERSEDED, 260, "80",
	                                        "case opened", &err),
	                 0);
	ng_store_case c;
	/* the new case stands, the old stays closed */
	assert_int_equal(ng_store_open_case_of(st, "n2", &c, &err), 1);
	assert_int_equal(c.id, id2);
	ng_store_case_free(&c);
	assert_int_equal(ng_store_get_case(st, id, &c, &err), 1);
	assert_true(c.closed_at == 200);
	ng_store_case_free(&c);
	verified(st);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

static void job_runtimes_and_evidence(void **state)
{
	(void)state;
	char spec[1024];
	ng_store *st = fresh("probation_jobs", spec, sizeof spec);
	ng_err err = {0};
	assert_int_equal(ng_store_put_job_run(st, "a", "1", "train", 1000, true, 10, &err), 0);
	assert_int_equal(ng_store_put_job_run(st, "b", "2", "train", 1100, true, 20, &err), 0);
	assert_int_equal(ng_store_put_job_run(st, "c", "3", "train", 5000, false, 30, &err), 0);
	assert_int_equal(ng_store_put_job_run(st, "d", "4", "train", -1, true, 40, &err), 0);
	assert_int_equal(ng_store_put_job_run(st, "e", "5", "other", 900, true, 50, &err), 0);
	/* the same job again (a second epilog): replaced, not added */
	assert_int_equal(ng_store_put_job_run(st, "b", "2", "train", 1200, true, 60, &err), 0);
	double rt[8];
	size_t n;
	assert_int_equal(ng_store_job_runtimes(st, "train", "a", rt, 8, &n, &err), 0);
	/* b only: a is the node itself, c was not clean, d has no runtime */
	assert_int_equal(n, 1);
	assert_true(rt[0] == 1200);
	assert_int_equal(ng_store_job_runtimes(st, "train", "z", rt, 8, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(rt[0] == 1200 && rt[1] == 1000);

	assert_int_equal(ng_store_put_evidence(st, "a", "r1", "compute", 70,
	                                       "{\"gpus\":[{\"index\":0}]}", &err),
	                 0);
	assert_int_equal(ng_store_put_evidence(st, "a", "r1", "memory", 71, "{}", &err), 0);
	assert_int_equal(ng_store_put_evidence(st, "a", "r2", "compute", 72, "{}", &err), 0);
	cJSON *ev = NULL;
	assert_int_equal(ng_store_evidence_of_run(st, "a", "r1", &ev, &err), 0);
	assert_int_equal(cJSON_GetArraySize(ev), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 0), "domain")->valuestring,
	                    "compute");
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 0), "evidence"), "gpus")));
	cJSON_Delete(ev);
	assert_int_equal(ng_store_evidence_of_run(st, "b", "r1", &ev, &err), 0);
	assert_int_equal(cJSON_GetArraySize(ev), 0);
	cJSON_Delete(ev);
	ng_store_close(st);
	ng_test_store_cleanup(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(release_pass_and_fail),
		cmocka_unit_test(superseded_by_a_new_case),
		cmocka_unit_test(job_runtimes_and_evidence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
