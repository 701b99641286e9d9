/* The policy's text as the store keeps it (core/policy_json.h): read back
 * over the defaults it is the same policy, with the same version, and a text
 * this nodegate does not know is refused as --policy refuses it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy_digest.h"
#include "core/policy_json.h"

static void round_trip(const ng_policy *p)
{
	char *text = ng_policy_to_text(p);
	assert_non_null(text);
	ng_policy back;
	ng_err err;
	assert_int_equal(ng_policy_from_text(text, "kept", &back, &err), 0);
	char a[NG_POLICY_DIGEST_LEN], b[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(p, a);
	ng_policy_digest(&back, b);
	assert_string_equal(a, b);
	free(text);
}

static void defaults_round_trip(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	round_trip(&p);
}

static void every_kind_of_value_round_trips(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_err err;
	const char *doc = "{\"gate\": {\"warn\": 0.0333333333333333, \"required_diag\": []},"
	                  " \"admission\": {\"flag_fraction\": 0.87, \"breaker_count\": 17},"
	                  " \"identity\": {\"class_template\": \"{cpu.model}x{cpu.sockets}\"},"
	                  " \"health\": {\"pcie_replays_per_hour\": 12.5},"
	                  " \"floors\": {\"nccl.all_reduce.busbw\": 270, \"cpu.fp64.gflops\": 0.1}}";
	cJSON *j = cJSON_Parse(doc);
	assert_int_equal(ng_policy_apply_json(&p, j, "t", &err), 0);
	cJSON_Delete(j);
	round_trip(&p);
	/* and the values themselves, not only the version */
	char *text = ng_policy_to_text(&p);
	ng_policy back;
	assert_int_equal(ng_policy_from_text(text, "kept", &back, &err), 0);
	assert_true(back.flag_fraction == 0.87 && back.breaker_count == 17);
	assert_true(back.warn == p.warn && back.n_required_diag == 0);
	assert_string_equal(back.class_template, "{cpu.model}x{cpu.sockets}");
	assert_int_equal(back.n_floors, 2);
	free(text);
}

static void unknown_and_out_of_range_are_refused(void **state)
{
	(void)state;
	ng_policy p;
	ng_err err;
	assert_int_equal(ng_policy_from_text("{\"admission\": {\"flag_fraktion\": 0.9}}", "x", &p, &err),
	                 -1);
	assert_non_null(strstr(err.msg, "flag_fraktion"));
	assert_int_equal(ng_policy_from_text("{\"admission\": {\"flag_fraction\": 7}}", "x", &p, &err),
	                 -1);
	assert_non_null(strstr(err.msg, "out of range"));
	assert_int_equal(ng_policy_from_text("{\"admission\": ", "x", &p, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_round_trip),
		cmocka_unit_test(every_kind_of_value_round_trips),
		cmocka_unit_test(unknown_and_out_of_range_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
