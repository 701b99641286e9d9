/* False rejects and later stragglers (src/judge/false_reject.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "judge/false_reject.h"

#define DAY 86400

static const char *profile_a =
	"{\"node_id\":\"n1\",\"hostname\":\"gpu-1\",\"kernel\":{\"release\":\"6.1\"},"
	"\"gpu\":{\"count\":2,\"driver\":\"550\",\"uuids\":[\"GPU-a\",\"GPU-b\"]},"
	"\"ib\":{\"devices\":[{\"name\":\"mlx5_0\",\"node_guid\":\"g1\",\"fw_ver\":\"28.1\","
	"\"ports\":[{\"state\":\"ACTIVE\"}]}]},\"cpu\":{\"model\":\"X\",\"sockets\":2,\"microcode\":\"0x1\"}}";

static void hw_digest(const char *text, char out[65], bool expect)
{
	cJSON *p = cJSON_Parse(text);
	assert_non_null(p);
	assert_int_equal(ng_profile_hw_digest(p, out), expect);
	cJSON_Delete(p);
}

static void hardware_ignores_software_and_state(void **state)
{
	(void)state;
	char a[65], b[65], c[65], d[65];
	hw_digest(profile_a, a, true);
	/* A new driver, kernel, firmware, microcode and a link gone down: the
	 * same parts. */
	hw_digest("{\"node_id\":\"n1\",\"hostname\":\"gpu-1\",\"kernel\":{\"release\":\"6.9\"},"
	          "\"gpu\":{\"count\":2,\"driver\":\"560\",\"uuids\":[\"GPU-a\",\"GPU-b\"]},"
	          "\"ib\":{\"devices\":[{\"name\":\"mlx5_0\",\"node_guid\":\"g1\",\"fw_ver\":\"28.9\","
	          "\"ports\":[{\"state\":\"DOWN\"}]}]},\"cpu\":{\"model\":\"X\",\"sockets\":2,"
	          "\"microcode\":\"0x2\"}}",
	          b, true);
	assert_string_equal(a, b);
	/* A GPU replaced: another UUID. */
	hw_digest("{\"gpu\":{\"uuids\":[\"GPU-a\",\"GPU-c\"]},\"ib\":{\"devices\":[{\"node_guid\":"
	          "\"g1\"}]},\"cpu\":{\"model\":\"X\",\"sockets\":2}}",
	          c, true);
	assert_string_not_equal(a, c);
	/* A HCA replaced. */
	hw_digest("{\"gpu\":{\"uuids\":[\"GPU-a\",\"GPU-b\"]},\"ib\":{\"devices\":[{\"node_guid\":"
	          "\"g2\"}]},\"cpu\":{\"model\":\"X\",\"sockets\":2}}",
	          d, true);
	assert_string_not_equal(a, d);
	/* Nothing that names a part: no digest, never a match. */
	hw_digest("{\"node_id\":\"n1\",\"kernel\":{\"release\":\"6.1\"}}", d, false);
	assert_string_equal(d, "");
	assert_false(ng_profile_hw_digest(NULL, d));
}

static void cases_classify(void **state)
{
	(void)state;
	assert_int_equal(ng_case_classify(false, "x", "x"), NG_CASE_OPEN);
	assert_int_equal(ng_case_classify(true, "x", "x"), NG_CASE_RELEASED_SAME_HW);
	assert_int_equal(ng_case_classify(true, "x", "y"), NG_CASE_RELEASED_HW_CHANGED);
	assert_int_equal(ng_case_classify(true, "", ""), NG_CASE_RELEASED_UNKNOWN);
	assert_int_equal(ng_case_classify(true, "x", NULL), NG_CASE_RELEASED_UNKNOWN);
	assert_string_equal(ng_case_class_name(NG_CASE_RELEASED_SAME_HW), "released-same-hardware");
}

static void stragglers(void **state)
{
	(void)state;
	ng_fr_decision d[] = {
		{0, 1 * DAY, true},  /* a finding 3 days later: straggled */
		{0, 10 * DAY, true}, /* the next finding is 9 days later: outside 7 */
		{1, 1 * DAY, true},  /* re-admitted on day 2 before the finding: not this one's */
		{1, 2 * DAY, true},  /* ... but this one's */
		{2, 1 * DAY, false}, /* not an admission: never counted */
		{3, 5 * DAY, true},  /* the finding came before it */
	};
	ng_fr_finding f[] = {{0, 4 * DAY}, {0, 19 * DAY}, {1, 3 * DAY}, {2, 2 * DAY}, {3, 4 * DAY}};
	bool s[6];
	ng_fr_sort_decisions(d, 6);
	ng_fr_sort_findings(f, 5);
	assert_int_equal(ng_fr_stragglers(d, 6, f, 5, 7 * DAY, s), 2);
	assert_true(s[0]);
	assert_false(s[1]);
	assert_false(s[2]);
	assert_true(s[3]);
	assert_false(s[4]);
	assert_false(s[5]);
	/* The window's edge is inside it. */
	ng_fr_decision e[] = {{0, 0, true}};
	ng_fr_finding g[] = {{0, 7 * DAY}};
	assert_int_equal(ng_fr_stragglers(e, 1, g, 1, 7 * DAY, s), 1);
	g[0].at = 7 * DAY + 1;
	assert_int_equal(ng_fr_stragglers(e, 1, g, 1, 7 * DAY, s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hardware_ignores_software_and_state),
		cmocka_unit_test(cases_classify),
		cmocka_unit_test(stragglers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
