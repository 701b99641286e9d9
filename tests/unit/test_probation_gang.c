/* Probation under a job that ran on several nodes (flow/probation.c): the
 * node's step time against its gang peers' in the same job, read through a
 * stand-in sacct ($NODEGATE_SACCT) answering as sacct does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/policy.h"
#include "flow/probation.h"
#include "store/probation.h"
#include "store/store.h"

static char dir[PATH_MAX - 64];

/* A job of four nodes, each running the step "shard" alone, gpu-04 at
 * twice its peers' time. */
static const char STEPS[] = "81|train|gpu-[01-04]|700|COMPLETED\n"
                            "81.batch|batch|gpu-01|700|COMPLETED\n"
                            "81.0|shard|gpu-01|300|COMPLETED\n"
                            "81.1|shard|gpu-02|310|COMPLETED\n"
                            "81.2|shard|gpu-03|290|COMPLETED\n"
                            "81.3|shard|gpu-04|600|COMPLETED\n";

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* A store where node n1 is on probation after a released case. */
static ng_store *on_probation(const char *name)
{
	char db[PATH_MAX];
	snprintf(db, sizeof db, "%s/%s.db", dir, name);
	ng_store *st;
	ng_err err = {0};
	assert_int_equal(ng_store_open(db, &st, &err), 0);
	ng_store_node_state s = {.updated_at = 100};
	snprintf(s.node, sizeof s.node, "n1");
	snprintf(s.class_key, sizeof s.class_key, "8xH100/4node");
	snprintf(s.outcome, sizeof s.outcome, "quarantined");
	snprintf(s.run_id, sizeof s.run_id, "r1");
	assert_int_equal(ng_store_put_decision(st, &s, NULL, 0, NULL, "nodegate", &err), 0);
	ng_store_case c = {.opened_at = 100};
	snprintf(c.node, sizeof c.node, "n1");
	snprintf(c.class_key, sizeof c.class_key, "8xH100/4node");
	snprintf(c.domain, sizeof c.domain, "compute");
	snprintf(c.metric, sizeof c.metric, "gpu.gemm.tflops");
	snprintf(c.release_condition, sizeof c.release_condition, "two passes");
	c.evidence = (char *)"{\"run\":\"r1\"}";
	assert_int_equal(ng_store_open_case(st, &c, "nodegate", &err), 0);
	assert_int_equal(ng_store_release_to_probation(st, c.id, 200, "bob", "reseated", NULL, &err),
	                 0);
	return st;
}

static const char *judge(ng_store *st, const char *slurm_node, char *why, size_t cap)
{
	ng_policy pol;
	ng_policy_default(&pol);
	const char *decided = NULL;
	ng_err err = {0};
	assert_int_equal(ng_probation_after_check(st, &pol,
	                                          &(ng_probation_check){.node = "n1", .mode = "epilog",
	                                                                .outcome = "ok", .job = "81",
	                                                                .job_name = "train",
	                                                                .job_start = 1000,
	                                                                .slurm_node = slurm_node,
	                                                                .now = 1700},
	                                          &decided, why, cap, &err),
	                 0);
	return decided;
}

static void test_slow_among_its_gang_fails(void **state)
{
	(void)state;
	ng_store *st = on_probation("slow");
	char why[600];
	assert_string_equal(judge(st, "gpu-04", why, sizeof why), "fail");
	assert_non_null(strstr(why, "a straggler in its gang: step shard took 600 s here, 2.00 "
	                            "times the median 300 s of its 3 peers in the same job"));
	/* the stand-in was asked what sacct is asked */
	char log[PATH_MAX], text[512] = "";
	snprintf(log, sizeof log, "%s/sacct.args", dir);
	FILE *f = fopen(log, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_string_equal(text, "--jobs 81 --parsable2 --noheader "
	                          "--format=JobID,JobName,NodeList,ElapsedRaw,State\n");
	ng_store_close(st);
}

static void test_even_with_its_gang_passes(void **state)
{
	(void)state;
	ng_store *st = on_probation("even");
	char why[600];
	assert_string_equal(judge(st, "gpu-02", why, sizeof why), "pass");
	assert_non_null(strstr(why, "step shard 1.03 times its 3 gang peers' median"));
	ng_store_close(st);
}

static void test_no_sacct_is_no_gang(void **state)
{
	(void)state;
	char missing[PATH_MAX];
	snprintf(missing, sizeof missing, "%s/no-sacct", dir);
	setenv("NODEGATE_SACCT", missing, 1);
	ng_store *st = on_probation("nosacct");
	char why[600];
	assert_string_equal(judge(st, "gpu-04", why, sizeof why), "pass");
	assert_non_null(strstr(why, "gang not compared: "));
	ng_store_close(st);
}

static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/ng-gang-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	char steps[PATH_MAX], sacct[PATH_MAX], script[3 * PATH_MAX];
	snprintf(steps, sizeof steps, "%s/steps.txt", dir);
	snprintf(sacct, sizeof sacct, "%s/sacct", dir);
	write_file(steps, STEPS, 0644);
	snprintf(script, sizeof script, "#!/bin/sh\necho \"$*\" >> '%s/sacct.args'\ncat '%s'\n", dir,
	         steps);
	write_file(sacct, script, 0755);
	setenv("NODEGATE_SACCT", sacct, 1);
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static int teardown(void **state)
{
	(void)state;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_slow_among_its_gang_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_even_with_its_gang_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_sacct_is_no_gang, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
