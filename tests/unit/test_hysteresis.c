/* Hysteresis against the fabric-gate runbook's with_hysteresis().
 *
 * (17)..(17d) are the runbook's assertions, numbered like its comments; the
 * rest goes past it. Histories are written as the raw verdict names the
 * reference takes and turned into kinds with ng_hist_kind_of, as the command
 * line does. Every expected result was checked against the runbook's Python. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/policy.h"
#include "core/verdict.h"
#include "judge/hysteresis.h"

#define MAX_HIST 4096

/* with_hysteresis(verdict, raw_history, blocked, clear_after, escalate_after),
 * the history as a NULL-terminated list of names. Returns 0 or -1. */
static int hyst(const char *verdict, const char *const *history, bool blocked,
                unsigned long long clear_after, unsigned long long escalate_after,
                ng_hysteresis *out)
{
	static ng_hist_kind kinds[MAX_HIST];
	size_t n = 0;
	for (; history && history[n]; n++) {
		assert_true(n < MAX_HIST);
		kinds[n] = ng_hist_kind_of(history[n]);
	}
	ng_verdict v;
	if (!ng_verdict_from_name(verdict, &v))
		fail_msg("not a verdict: %s", verdict);
	return ng_with_hysteresis(v, kinds, n, blocked, clear_after, escalate_after, out);
}

/* Asserts with_hysteresis(...) == (want, want_blocked) with the runbook's
 * default thresholds, clear_after=2 and escalate_after=3. */
#define H(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

static void expect(const char *verdict, const char *const *history, bool blocked,
                   unsigned long long clear_after, unsigned long long escalate_after,
                   const char *want, bool want_blocked)
{
	ng_hysteresis out = {NG_V_COUNT, false};
	assert_int_equal(hyst(verdict, history, blocked, clear_after, escalate_after, &out), 0);
	if (strcmp(ng_verdict_name(out.effective), want) != 0 || out.blocked != want_blocked)
		fail_msg("with_hysteresis(%s, ..., blocked=%d, %llu, %llu) = (%s, %d), want (%s, %d)",
		         verdict, blocked, clear_after, escalate_after, ng_verdict_name(out.effective),
		         out.blocked, want, want_blocked);
}

static void expect2(const char *verdict, const char *const *history, bool blocked,
                    const char *want, bool want_blocked)
{
	expect(verdict, history, blocked, 2, 3, want, want_blocked);
}

/* ---- the runbook's assertions ------------------------------------------------- */

static void test_17_damps_both_edges(void **state)
{
	(void)state;
	expect2("pass", H("warn"), true, "block", true);
	expect2("pass", H("pass"), true, "pass", false);
	expect2("warn", H("warn", "warn"), false, "block", true);
}

static void test_17b_raw_history_plus_blocked_flag(void **state)
{
	(void)state;
	/* raw = ["warn", "warn", "warn"]: the third warn escalates to block */
	ng_hysteresis out;
	assert_int_equal(hyst("warn", H("warn", "warn"), false, 2, 3, &out), 0);
	assert_int_equal(out.effective, NG_V_BLOCK);
	assert_true(out.blocked);
	bool blocked = out.blocked;
	/* one good run must not clear that block */
	expect2("pass", H("warn", "warn", "warn"), blocked, "block", true);
	/* two consecutive good runs clear it */
	expect2("pass", H("warn", "warn", "warn", "pass"), blocked, "pass", false);
}

/* (17c) The thresholds are counts of runs, at least 1. The reference refuses
 * 0, -1, 2.5 and True. In C the count is an unsigned integer, so 0 is the one
 * bad value the function itself can be handed; the others are refused where
 * thresholds come from, the policy. */
static void test_17c_threshold_guard(void **state)
{
	(void)state;
	ng_hysteresis out = {NG_V_WARN, false};
	assert_int_equal(hyst("pass", NONE, true, 0, 3, &out), -1);
	assert_int_equal(hyst("pass", NONE, true, 2, 0, &out), -1);
	assert_int_equal(hyst("pass", NONE, true, 0, 0, &out), -1);
	/* out is left untouched */
	assert_int_equal(out.effective, NG_V_WARN);
	assert_false(out.blocked);
	/* and the guard is checked before anything else, hard verdicts included */
	assert_int_equal(hyst("corrupt", NONE, false, 0, 3, &out), -1);
	assert_int_equal(out.effective, NG_V_WARN);

	const char *bad[] = {"0", "-1", "2.5", "true", "\"2\"", "null", "1e400"};
	const char *keys[] = {"clear_after", "escalate_after"};
	for (size_t k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
			char doc[128];
			snprintf(doc, sizeof doc, "{\"hysteresis\":{\"%s\":%s}}", keys[k], bad[i]);
			ng_err err = {0};
			cJSON *d = ng_json_parse(doc, strlen(doc), &err);
			assert_non_null(d);
			ng_policy p;
			ng_policy_default(&p);
			if (ng_policy_apply_json(&p, d, "t", &err) != -1)
				fail_msg("the threshold guard did not fire for %s", doc);
			assert_int_equal(p.clear_after, 2);
			assert_int_equal(p.escalate_after, 3);
			cJSON_Delete(d);
		}
	}
}

static void test_17d_hard_verdicts_untouched(void **state)
{
	(void)state;
	expect2("corrupt", NONE, false, "corrupt", true);
	expect2("invalid-input", NONE, false, "invalid-input", true);
	expect2("corrupt", NONE, true, "corrupt", true);
	/* a hard verdict in the history does not count toward clearing a block */
	expect2("pass", H("corrupt"), true, "block", true);
}

/* ---- beyond the runbook ------------------------------------------------------- */

/* The reference's HARD tuple. */
static const char *const HARD[] = {
	"corrupt",     "correctness-unverified", "invalid-input", "no-measurement",
	"no-baseline", "diag-incomplete",        "diag-failed",   "incomparable",
	"unstable",    "implausible",            "insufficient-samples",
};
#define N_HARD (sizeof HARD / sizeof *HARD)

static bool in_hard(const char *name)
{
	for (size_t i = 0; i < N_HARD; i++)
		if (strcmp(HARD[i], name) == 0)
			return true;
	return false;
}

static void test_hard_set_is_the_runbooks(void **state)
{
	(void)state;
	size_t hard = 0;
	for (int v = 0; v < NG_V_COUNT; v++) {
		const char *name = ng_verdict_name((ng_verdict)v);
		if (ng_verdict_hard((ng_verdict)v) != in_hard(name))
			fail_msg("%s: hard=%d, the runbook says %d", name, ng_verdict_hard((ng_verdict)v),
			         in_hard(name));
		hard += ng_verdict_hard((ng_verdict)v);
	}
	assert_int_equal(hard, N_HARD);
}

static void test_every_hard_verdict_passes_through_blocked(void **state)
{
	(void)state;
	const char *const *histories[] = {
		NONE, H("pass", "pass", "pass"), H("warn", "warn", "warn"), H("corrupt"), H("block"),
	};
	for (size_t i = 0; i < N_HARD; i++) {
		for (size_t h = 0; h < sizeof histories / sizeof *histories; h++) {
			for (int blocked = 0; blocked < 2; blocked++) {
				expect(HARD[i], histories[h], blocked, 2, 3, HARD[i], true);
				expect(HARD[i], histories[h], blocked, 1, 1, HARD[i], true);
			}
		}
	}
}

static void test_history_of_only_hard_verdicts(void **state)
{
	(void)state;
	/* hard entries are dropped, so what is left is the current verdict alone */
	const char *const *hist = H("corrupt", "no-measurement", "insufficient-samples", "unstable");
	expect("pass", hist, true, 2, 3, "block", true);
	expect("pass", hist, true, 1, 3, "pass", false);
	expect("warn", hist, false, 2, 3, "warn", false);
	expect("warn", hist, false, 2, 1, "block", true);
	expect("pass", hist, false, 2, 3, "pass", false);
	/* hard entries between passes neither count nor break the run */
	expect2("pass", H("pass", "corrupt", "diag-failed"), true, "pass", false);
	expect2("warn", H("warn", "implausible", "warn", "no-baseline"), false, "block", true);
}

static void test_thresholds_one(void **state)
{
	(void)state;
	/* clear_after 1: the current pass alone clears */
	expect("pass", NONE, true, 1, 3, "pass", false);
	expect("pass", H("warn", "block"), true, 1, 3, "pass", false);
	expect("warn", NONE, true, 1, 3, "block", true);
	/* escalate_after 1: any warning is a block */
	expect("warn", NONE, false, 2, 1, "block", true);
	expect("pass", NONE, false, 2, 1, "pass", false);
	expect("bimodal", NONE, false, 2, 1, "bimodal", false);
}

static void test_thresholds_large(void **state)
{
	(void)state;
	static const char *hist[1001];
	for (int i = 0; i < 1000; i++)
		hist[i] = "pass";
	hist[1000] = NULL;
	/* 999 passes in the history plus the current one clear at 1000 ... */
	expect("pass", hist + 1, true, 1000, 3, "pass", false);
	/* ... 998 plus the current one do not */
	expect("pass", hist + 2, true, 1000, 3, "block", true);
	expect("pass", hist, true, 1001, 3, "pass", false);
	/* no count is so large that it wraps */
	expect("pass", hist, true, ULLONG_MAX, 3, "block", true);

	for (int i = 0; i < 1000; i++)
		hist[i] = "warn";
	expect("warn", hist + 1, false, 2, 1000, "block", true);
	expect("warn", hist + 2, false, 2, 1000, "warn", false);
	expect("warn", hist, false, 2, ULLONG_MAX, "warn", false);
	/* one pass far back does not matter; one at the start of the window does */
	hist[0] = "pass";
	expect("warn", hist, false, 2, 1000, "block", true);
	expect("warn", hist, false, 2, 1001, "warn", false);
}

static void test_escalation_needs_consecutive_warns(void **state)
{
	(void)state;
	expect2("warn", H("warn", "warn"), false, "block", true);
	expect2("warn", H("warn", "pass", "warn"), false, "warn", false);
	expect2("warn", H("pass", "warn", "warn"), false, "block", true);
	expect2("warn", H("warn", "warn", "pass"), false, "warn", false);
	/* a verdict that is neither pass, warn nor hard breaks the run too */
	expect2("warn", H("warn", "bimodal", "warn"), false, "warn", false);
	expect2("warn", H("warn", "fleet-regression", "warn"), false, "warn", false);
	expect2("warn", H("warn", "block", "warn"), false, "warn", false);
	/* and so does a name that is not a verdict: the reference keeps it */
	expect2("warn", H("warn", "garbage", "warn"), false, "warn", false);
	/* a hard verdict in between does not */
	expect2("warn", H("warn", "corrupt", "warn"), false, "block", true);
	/* too short a history */
	expect2("warn", H("warn"), false, "warn", false);
	expect2("warn", NONE, false, "warn", false);
}

static void test_blocked_edges(void **state)
{
	(void)state;
	/* blocked + warn stays block, whatever came before */
	expect2("warn", H("pass", "pass"), true, "block", true);
	expect2("warn", NONE, true, "block", true);
	expect2("block", H("pass", "pass"), true, "block", true);
	expect2("bimodal", H("pass", "pass"), true, "block", true);
	expect2("fleet-regression", H("pass"), true, "block", true);
	/* clearing needs consecutive passes, ignoring hard entries only */
	expect2("pass", H("pass", "warn"), true, "block", true);
	expect2("pass", H("pass", "bimodal"), true, "block", true);
	expect2("pass", H("pass", "garbage"), true, "block", true);
	expect2("pass", NONE, true, "block", true);
	/* not blocked: a block is a block; a pass is a pass; bimodal and
	 * fleet-regression are performance verdicts the reference leaves alone
	 * and does not mark blocked */
	expect2("block", NONE, false, "block", true);
	expect2("pass", H("warn", "warn"), false, "pass", false);
	expect2("bimodal", H("warn", "warn"), false, "bimodal", false);
	expect2("fleet-regression", NONE, false, "fleet-regression", false);
}

static void test_direct_kinds(void **state)
{
	(void)state;
	/* the C interface on kinds, without names */
	ng_hist_kind hist[] = {NG_HIST_WARN, NG_HIST_HARD, NG_HIST_WARN, NG_HIST_HARD};
	ng_hysteresis out;
	assert_int_equal(ng_with_hysteresis(NG_V_WARN, hist, 4, false, 2, 3, &out), 0);
	assert_int_equal(out.effective, NG_V_BLOCK);
	assert_true(out.blocked);
	assert_int_equal(ng_with_hysteresis(NG_V_WARN, hist, 0, false, 2, 3, &out), 0);
	assert_int_equal(out.effective, NG_V_WARN);
	assert_false(out.blocked);
	assert_int_equal(ng_with_hysteresis(NG_V_PASS, NULL, 0, true, 1, 3, &out), 0);
	assert_int_equal(out.effective, NG_V_PASS);
	assert_false(out.blocked);
	ng_hist_kind other[] = {NG_HIST_PASS, NG_HIST_OTHER};
	assert_int_equal(ng_with_hysteresis(NG_V_PASS, other, 2, true, 2, 3, &out), 0);
	assert_int_equal(out.effective, NG_V_BLOCK);
}

static void test_hist_kind_of(void **state)
{
	(void)state;
	assert_int_equal(ng_hist_kind_of("pass"), NG_HIST_PASS);
	assert_int_equal(ng_hist_kind_of("warn"), NG_HIST_WARN);
	for (size_t i = 0; i < N_HARD; i++)
		assert_int_equal(ng_hist_kind_of(HARD[i]), NG_HIST_HARD);
	/* performance verdicts other than pass and warn */
	assert_int_equal(ng_hist_kind_of("block"), NG_HIST_OTHER);
	assert_int_equal(ng_hist_kind_of("bimodal"), NG_HIST_OTHER);
	assert_int_equal(ng_hist_kind_of("fleet-regression"), NG_HIST_OTHER);
	/* not verdicts: exact, case-sensitive names only */
	const char *garbage[] = {"", "PASS", "Pass", "pass ", " pass", "warn\n", "passed", "pas",
	                         "corrupt!", "CORRUPT", "diag_failed", "none", "null", "0"};
	for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++)
		if (ng_hist_kind_of(garbage[i]) != NG_HIST_OTHER)
			fail_msg("\"%s\" read as a known verdict kind", garbage[i]);
	/* every verdict name maps to the kind its table entry says */
	for (int v = 0; v < NG_V_COUNT; v++) {
		const char *name = ng_verdict_name((ng_verdict)v);
		ng_hist_kind k = ng_hist_kind_of(name);
		if (ng_verdict_hard((ng_verdict)v))
			assert_int_equal(k, NG_HIST_HARD);
		else if (v == NG_V_PASS)
			assert_int_equal(k, NG_HIST_PASS);
		else if (v == NG_V_WARN)
			assert_int_equal(k, NG_HIST_WARN);
		else
			assert_int_equal(k, NG_HIST_OTHER);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_17_damps_both_edges),
		cmocka_unit_test(test_17b_raw_history_plus_blocked_flag),
		cmocka_unit_test(test_17c_threshold_guard),
		cmocka_unit_test(test_17d_hard_verdicts_untouched),
		cmocka_unit_test(test_hard_set_is_the_runbooks),
		cmocka_unit_test(test_every_hard_verdict_passes_through_blocked),
		cmocka_unit_test(test_history_of_only_hard_verdicts),
		cmocka_unit_test(test_thresholds_one),
		cmocka_unit_test(test_thresholds_large),
		cmocka_unit_test(test_escalation_needs_consecutive_warns),
		cmocka_unit_test(test_blocked_edges),
		cmocka_unit_test(test_direct_kinds),
		cmocka_unit_test(test_hist_kind_of),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
