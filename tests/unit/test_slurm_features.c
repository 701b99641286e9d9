/* The admission queue's feature words (land/slurm_features.c) and which
 * jobs the Prolog screens (judge/prolog_ask.c): what scontrol prints in,
 * what nodegate would send out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "judge/prolog_ask.h"
#include "land/slurm_features.h"

static void test_edit_keeps_other_features(void **state)
{
	(void)state;
	char out[128];
	assert_int_equal(ng_slurm_feature_edit("a100,unscreened,ib", "ng_admitted", "unscreened", out,
	                                       sizeof out), 0);
	assert_string_equal(out, "a100,ib,ng_admitted");
	assert_int_equal(ng_slurm_feature_edit("a100,ng_admitted,ib", "unscreened", "ng_admitted", out,
	                                       sizeof out), 0);
	assert_string_equal(out, "a100,ib,unscreened");
	/* Already there: not twice; a word that only starts the same stays. */
	assert_int_equal(ng_slurm_feature_edit("ng_admitted_old,ng_admitted", "ng_admitted", "unscreened",
	                                       out, sizeof out), 0);
	assert_string_equal(out, "ng_admitted_old,ng_admitted");
	assert_int_equal(ng_slurm_feature_edit("(null)", "unscreened", "ng_admitted", out, sizeof out), 0);
	assert_string_equal(out, "unscreened");
	assert_int_equal(ng_slurm_feature_edit("", "ng_admitted", NULL, out, sizeof out), 0);
	assert_string_equal(out, "ng_admitted");
	/* Too long: refused, never cut. */
	assert_int_equal(ng_slurm_feature_edit("abcdefgh", "ng_admitted", NULL, out, 12), -1);
	assert_true(ng_slurm_feature_has("x,ng_admitted,y", "ng_admitted"));
	assert_false(ng_slurm_feature_has("x,ng_admitted2", "ng_admitted"));
	assert_false(ng_slurm_feature_has("(null)", "ng_admitted"));
}

static void test_parse_node_features(void **state)
{
	(void)state;
	ng_slurm_features f;
	const char *node = "NodeName=gpu-7 Arch=x86_64 CoresPerSocket=2 CPUAlloc=0 "
	                   "AvailableFeatures=h100,unscreened ActiveFeatures=unscreened Gres=gpu:4 "
	                   "State=IDLE Comment=ops: fan swap tomorrow Extra=(null)\n";
	assert_int_equal(ng_slurm_parse_features(node, &f), 0);
	assert_string_equal(f.available, "h100,unscreened");
	assert_string_equal(f.active, "unscreened");
	assert_false(f.comment_ours);
	assert_int_equal(ng_slurm_parse_features("NodeName=n AvailableFeatures=(null) "
	                                         "ActiveFeatures=(null) State=IDLE",
	                                         &f), 0);
	assert_string_equal(f.available, "");
	assert_true(f.comment_ours); /* no comment at all */
	assert_int_equal(ng_slurm_parse_features("NodeName=n AvailableFeatures=a ActiveFeatures=a "
	                                         "Comment=ng:held: nothing measured",
	                                         &f), 0);
	assert_true(f.comment_ours);
	assert_int_equal(ng_slurm_parse_features("Node n not found", &f), -1);
}

static void test_prolog_job(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	ng_prolog_job j;
	char why[256];
	const char *big = "JobId=88 JobName=train UserId=a(1) NumNodes=16 NumCPUs=32 "
	                  "Features=(h100&ib) Comment=run 7 of the sweep Extra=(null)\n";
	assert_int_equal(ng_prolog_job_parse(big, &j), 0);
	assert_int_equal(j.num_nodes, 16);
	assert_string_equal(j.features, "(h100&ib)");
	assert_string_equal(j.comment, "run 7 of the sweep");
	/* Defaults: size never asks, neither feature nor comment here. */
	assert_false(ng_prolog_job_asks(&pol, &j, why, sizeof why));
	pol.prolog_min_nodes = 16;
	assert_true(ng_prolog_job_asks(&pol, &j, why, sizeof why));
	assert_non_null(strstr(why, "prolog_min_nodes"));
	pol.prolog_min_nodes = 17;
	assert_false(ng_prolog_job_asks(&pol, &j, why, sizeof why));

	const char *feat = "JobId=89 NumNodes=1-2 Features=[rack1|rack2]&ng_screen Comment=(null)";
	assert_int_equal(ng_prolog_job_parse(feat, &j), 0);
	assert_int_equal(j.num_nodes, 1);
	assert_string_equal(j.comment, "");
	assert_true(ng_prolog_job_asks(&pol, &j, why, sizeof why));
	const char *near = "JobId=90 NumNodes=1 Features=ng_screened Comment=ng:screen2 please";
	assert_int_equal(ng_prolog_job_parse(near, &j), 0);
	assert_false(ng_prolog_job_asks(&pol, &j, why, sizeof why));
	const char *comment = "JobId=91 NumNodes=1 Features=(null) Comment=big run, ng:screen";
	assert_int_equal(ng_prolog_job_parse(comment, &j), 0);
	assert_true(ng_prolog_job_asks(&pol, &j, why, sizeof why));
	assert_non_null(strstr(why, "prolog_comment"));
	assert_int_equal(ng_prolog_job_parse("slurm_load_jobs error: Invalid job id", &j), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edit_keeps_other_features),
		cmocka_unit_test(test_parse_node_features),
		cmocka_unit_test(test_prolog_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
