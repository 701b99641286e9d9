/* The policy: the runbook's constants as defaults, overrides from a policy
 * document applied all or nothing, and every refusal with its reason. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "core/json.h"
#include "core/policy.h"
#include "core/strbuf.h"

static cJSON *must_parse(const char *text)
{
	ng_err err = {0};
	cJSON *v = ng_json_parse(text, strlen(text), &err);
	if (!v)
		fail_msg("did not parse: %s: %.200s", err.msg, text);
	return v;
}

static int apply(ng_policy *p, const char *doc, const char *source, ng_err *err)
{
	cJSON *d = must_parse(doc);
	int rc = ng_policy_apply_json(p, d, source, err);
	cJSON_Delete(d);
	return rc;
}

static size_t param_index(const char *name)
{
	for (size_t i = 0; i < ng_policy_param_count(); i++)
		if (strcmp(ng_policy_param_name(i), name) == 0)
			return i;
	fail_msg("no policy value %s", name);
	return 0;
}

static char *value_text(const ng_policy *p, const char *name)
{
	ng_strbuf b = {0};
	ng_policy_param_value(p, param_index(name), &b);
	assert_false(b.oom);
	return b.s ? b.s : strdup("");
}

static void check_value(const ng_policy *p, const char *name, const char *want)
{
	char *v = value_text(p, name);
	if (strcmp(v, want) != 0)
		fail_msg("%s = %s, want %s", name, v, want);
	free(v);
}

/* Applying doc fails, its message mentions each of the parts, and the policy
 * is byte for byte what it was. */
static void expect_refused(const char *doc, const char *part1, const char *part2)
{
	ng_policy p, before;
	ng_policy_default(&p);
	/* start from a policy that already has overrides, so "unchanged" means
	 * more than "still the defaults" */
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.04},\"hysteresis\":{\"clear_after\":4}}",
	                       "first.json", &err),
	                 0);
	memcpy(&before, &p, sizeof p);
	err.msg[0] = '\0';
	if (apply(&p, doc, "second.json", &err) != -1)
		fail_msg("accepted: %s", doc);
	if (memcmp(&before, &p, sizeof p) != 0)
		fail_msg("refusing %s changed the policy", doc);
	if (part1 && !strstr(err.msg, part1))
		fail_msg("refusing %s: \"%s\" does not mention \"%s\"", doc, err.msg, part1);
	if (part2 && !strstr(err.msg, part2))
		fail_msg("refusing %s: \"%s\" does not mention \"%s\"", doc, err.msg, part2);
}

/* ---- defaults --------------------------------------------------------------------- */

static void test_defaults_are_the_runbooks(void **state)
{
	(void)state;
	ng_policy p;
	memset(&p, 0xA5, sizeof p);
	ng_policy_default(&p);
	/* WARN, BLOCK = 0.05, 0.10; FAST, SLOW = 1.5, 0.25 */
	assert_true(p.warn == 0.05);
	assert_true(p.block == 0.10);
	assert_true(p.fast == 1.5);
	assert_true(p.slow == 0.25);
	/* 2.0 * cv / np.sqrt(n); spread > 3.0 * cv; slow >= 0.25 */
	assert_true(p.noise_sigmas == 2.0);
	assert_true(p.unstable_cv_multiple == 3.0);
	assert_true(p.bimodal_fraction == 0.25);
	/* The node's own probes carry no DCGM results; fabric records do. */
	assert_true(ng_policy_diag_exempt(&p, "compute"));
	assert_true(ng_policy_diag_exempt(&p, "memory"));
	assert_true(ng_policy_diag_exempt(&p, "storage"));
	assert_false(ng_policy_diag_exempt(&p, "fabric"));
	assert_false(ng_policy_diag_exempt(&p, ""));
	assert_true(ng_policy_diag_exempt_metric(&p, "gpucopy.p2p.gbps"));
	assert_true(ng_policy_diag_exempt_metric(&p, "gpucopy.h2d.gbps"));
	assert_false(ng_policy_diag_exempt_metric(&p, "gpucopy."));
	assert_false(ng_policy_diag_exempt_metric(&p, "gpucopy"));
	assert_false(ng_policy_diag_exempt_metric(&p, "nccl.all_reduce.busbw"));
	assert_false(ng_policy_diag_exempt_metric(&p, ""));
	/* REQUIRED_DIAG = ("pcie", "memory", "nccl_tests") */
	assert_int_equal(p.n_required_diag, 3);
	assert_string_equal(p.required_diag[0], "pcie");
	assert_string_equal(p.required_diag[1], "memory");
	assert_string_equal(p.required_diag[2], "nccl_tests");
	/* len(cohort) >= 5 and np.mean(... > WARN) >= 0.6, within [-1.0, 1.0] */
	assert_int_equal(p.cohort_min, 5);
	assert_true(p.cohort_majority == 0.6);
	assert_true(p.cohort_drop_limit == 1.0);
	/* with_hysteresis(..., clear_after=2, escalate_after=3) */
	assert_int_equal(p.clear_after, 2);
	assert_int_equal(p.escalate_after, 3);
	/* the admission seed: flag below 90 percent of the class median */
	assert_true(p.flag_fraction == 0.90);
	assert_int_equal(p.min_baseline_nodes, 10);
	assert_int_equal(p.warn_recheck_hours, 24);
	/* GPU health: the epilog's budget and the fleet seed's signals */
	assert_int_equal(p.health_deadline_seconds, 10);
	assert_true(p.health_retired_pages_per_day == 1);
	assert_true(p.health_remapped_rows_per_day == 1);
	assert_true(p.health_pcie_replays_per_hour == 1000);
	assert_true(p.health_nvlink_errors_per_hour == 1000);
	assert_int_equal(p.health_replays_absolute, 1000000);
	assert_true(p.health_clock_ratio_under_load == 0.7);
	assert_true(p.health_rate_min_hours == 24);
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		assert_false(p.from_file[i]);
		assert_string_equal(ng_policy_param_source(&p, i), "default");
	}
	assert_true(ng_policy_requires_diag(&p, "pcie"));
	assert_true(ng_policy_requires_diag(&p, "nccl_tests"));
	assert_false(ng_policy_requires_diag(&p, "nvbandwidth"));
	assert_false(ng_policy_requires_diag(&p, "PCIE"));
	assert_false(ng_policy_requires_diag(&p, ""));
}

static void test_param_names_and_values(void **state)
{
	(void)state;
	const char *names[] = {
		"gate.warn",          "gate.block",           "gate.fast",
		"gate.slow",          "gate.noise_sigmas",    "gate.unstable_cv_multiple",
		"gate.bimodal_fraction", "gate.required_diag", "gate.diag_exempt_domains", "gate.diag_exempt_metrics",
		"gate.cohort_min",
		"gate.cohort_majority", "gate.cohort_drop_limit", "hysteresis.clear_after",
		"hysteresis.escalate_after", "identity.class_template",
		"admission.flag_fraction", "admission.min_baseline_nodes", "admission.warn_recheck_hours",
		"admission.baseline_window_days", "admission.baseline_max_age_hours", "admission.baseline_regrow",
		"admission.cohort_window_hours", "admission.cohort_local_minutes", "admission.release_passes", "admission.breaker_share",
		"admission.breaker_count", "admission.breaker_window_hours", "admission.breaker_tail",
		"admission.breaker_clear_runs",
		"admission.exclusive_max_runnable",
		"admission.bimodal_low_mode",
		"admission.unstable_repeat",
		"admission.unstable_window",
		"admission.small_class_min_nodes", "admission.small_class_tail", "admission.family_parts",
		"admission.shared_paths",
		"admission.drift_fraction", "admission.spread_sigmas",
		"admission.own_level_runs", "admission.own_level_sigmas", "admission.own_level_drop",
		"admission.own_level_recent",
		"health.deadline_seconds", "health.retired_pages_per_day", "health.remapped_rows_per_day",
		"health.pcie_replays_per_hour", "health.nvlink_errors_per_hour", "health.replays_absolute",
		"health.clock_ratio_under_load", "health.rate_min_hours", "health.unresponsive_checks",
		"health.ecc_corrected_volatile", "health.memory_used_share", "health.idle_clock_ratio",
		"probe.gpu_memory_share", "probe.gpu_sibling_fraction", "probe.gpu_series_drop",
		"admission.prolog_min_nodes", "admission.prolog_feature", "admission.prolog_comment",
		"quarantine.lemon_count", "quarantine.lemon_days", "quarantine.canary_job",
		"quarantine.straggler_ratio", "quarantine.history_min",
	};
	assert_int_equal(ng_policy_param_count(), sizeof names / sizeof *names);
	assert_int_equal(ng_policy_param_count(), NG_P_COUNT);
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		assert_string_equal(ng_policy_param_name(i), names[i]);
		assert_true(strlen(ng_policy_param_description(i)) > 10);
	}
	assert_string_equal(ng_policy_param_name(NG_P_COUNT), "");
	assert_string_equal(ng_policy_param_description(NG_P_COUNT), "");

	ng_policy p;
	ng_policy_default(&p);
	check_value(&p, "gate.warn", "0.05");
	check_value(&p, "gate.block", "0.1");
	check_value(&p, "gate.fast", "1.5");
	check_value(&p, "gate.slow", "0.25");
	check_value(&p, "gate.noise_sigmas", "2");
	check_value(&p, "gate.unstable_cv_multiple", "3");
	check_value(&p, "gate.bimodal_fraction", "0.25");
	check_value(&p, "gate.required_diag", "[\"pcie\", \"memory\", \"nccl_tests\"]");
	check_value(&p, "gate.cohort_min", "5");
	check_value(&p, "gate.cohort_majority", "0.6");
	check_value(&p, "gate.cohort_drop_limit", "1");
	check_value(&p, "hysteresis.clear_after", "2");
	check_value(&p, "hysteresis.escalate_after", "3");
	check_value(&p, "admission.flag_fraction", "0.9");
	check_value(&p, "admission.min_baseline_nodes", "10");
	check_value(&p, "admission.warn_recheck_hours", "24");
	check_value(&p, "health.deadline_seconds", "10");
	check_value(&p, "health.retired_pages_per_day", "1");
	check_value(&p, "health.remapped_rows_per_day", "1");
	check_value(&p, "health.pcie_replays_per_hour", "1000");
	check_value(&p, "health.nvlink_errors_per_hour", "1000");
	check_value(&p, "health.replays_absolute", "1000000");
	check_value(&p, "health.clock_ratio_under_load", "0.7");
	check_value(&p, "health.rate_min_hours", "24");
	/* a string value is shown as a JSON string literal */
	ng_strbuf tb = {0};
	ng_strbuf_add_json_string(&tb, NG_DEFAULT_CLASS_TEMPLATE);
	check_value(&p, "identity.class_template", tb.s);
	ng_strbuf_free(&tb);

	/* values that need all 17 digits round-trip */
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.1000000000000000055511151231257827,"
	                           "\"block\":0.30000000000000004,\"required_diag\":[]}}",
	                       "p.json", &err),
	                 0);
	check_value(&p, "gate.warn", "0.1");
	check_value(&p, "gate.block", "0.30000000000000004");
	check_value(&p, "gate.required_diag", "[]");
	assert_int_equal(apply(&p, "{\"gate\":{\"required_diag\":[\"a\\\"b\",\"c\"]}}", "p.json", &err), 0);
	check_value(&p, "gate.required_diag", "[\"a\\\"b\", \"c\"]");

	/* out of range index appends nothing */
	ng_strbuf b = {0};
	ng_policy_param_value(&p, NG_P_COUNT, &b);
	assert_int_equal(b.len, 0);
	ng_strbuf_free(&b);
}

/* ---- applying ----------------------------------------------------------------------- */

static void test_apply_overrides_and_sources(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p,
	                       "{\"schema\":\"nodegate/policy/1\","
	                       "\"gate\":{\"warn\":0.04,\"block\":0.2,\"fast\":2,\"slow\":0.1,"
	                       "\"noise_sigmas\":3,\"unstable_cv_multiple\":4.5,\"bimodal_fraction\":0.5,"
	                       "\"required_diag\":[\"pcie\",\"nvbandwidth\"],\"cohort_min\":7,"
	                       "\"diag_exempt_domains\":[\"storage\"],\"diag_exempt_metrics\":[\"nvbandwidth.*\"],"
	                       "\"cohort_majority\":0.75,\"cohort_drop_limit\":0.5},"
	                       "\"hysteresis\":{\"clear_after\":3,\"escalate_after\":5},"
	                       "\"identity\":{\"class_template\":\"{cpu.model}\\\\/x\"},"
	                       "\"admission\":{\"flag_fraction\":0.85,\"min_baseline_nodes\":20,"
	                       "\"warn_recheck_hours\":6,\"baseline_window_days\":7,"
	                       "\"baseline_max_age_hours\":12,\"baseline_regrow\":3,\"cohort_window_hours\":2,\"cohort_local_minutes\":15,"
	                       "\"release_passes\":3,\"breaker_share\":0.2,\"breaker_count\":9,"
	                       "\"breaker_window_hours\":48,\"breaker_tail\":0.01,\"breaker_clear_runs\":4,"
	                       "\"exclusive_max_runnable\":0,"
	                       "\"bimodal_low_mode\":0.7,\"unstable_repeat\":2,\"unstable_window\":4,"
	                       "\"small_class_min_nodes\":4,\"small_class_tail\":0.01,\"drift_fraction\":0.08,"
	                       "\"family_parts\":3,\"shared_paths\":[\"storage\",\"fabric\"],"
	                       "\"spread_sigmas\":2.5,\"own_level_runs\":9,\"own_level_sigmas\":3.5,"
	                       "\"own_level_drop\":0.05,\"own_level_recent\":4,"
	                       "\"prolog_min_nodes\":64,\"prolog_feature\":\"screen_me\","
	                       "\"prolog_comment\":\"ng:check\"},"
	                       "\"health\":{\"deadline_seconds\":20,\"retired_pages_per_day\":0.5,"
	                       "\"remapped_rows_per_day\":2,\"pcie_replays_per_hour\":100,"
	                       "\"nvlink_errors_per_hour\":0,\"replays_absolute\":5000,"
	                       "\"clock_ratio_under_load\":0.6,\"rate_min_hours\":1.5,\"unresponsive_checks\":2,"
	                       "\"ecc_corrected_volatile\":50,\"memory_used_share\":0.1,\"idle_clock_ratio\":0.2},"
	                       "\"probe\":{\"gpu_memory_share\":0.5,\"gpu_sibling_fraction\":0.8,"
	                       "\"gpu_series_drop\":0.2},"
	                       "\"quarantine\":{\"lemon_count\":4,\"lemon_days\":14,\"canary_job\":\"canary\","
	                       "\"straggler_ratio\":1.25,\"history_min\":5},"
	                       "\"floors\":{\"nccl.all_reduce.busbw\":270,\"storage.seqread.gbps\":2}}",
	                       "/etc/nodegate/policy.json", &err),
	                 0);
	assert_true(p.warn == 0.04);
	assert_true(p.block == 0.2);
	assert_true(p.fast == 2);
	assert_true(p.slow == 0.1);
	assert_true(p.noise_sigmas == 3);
	assert_true(p.unstable_cv_multiple == 4.5);
	assert_true(p.bimodal_fraction == 0.5);
	assert_int_equal(p.n_required_diag, 2);
	assert_string_equal(p.required_diag[0], "pcie");
	assert_string_equal(p.required_diag[1], "nvbandwidth");
	assert_int_equal(p.n_diag_exempt_domains, 1);
	assert_true(ng_policy_diag_exempt(&p, "storage"));
	assert_false(ng_policy_diag_exempt(&p, "compute"));
	assert_int_equal(p.n_diag_exempt_metrics, 1);
	assert_true(ng_policy_diag_exempt_metric(&p, "nvbandwidth.device_to_device_memcpy_read_ce"));
	assert_false(ng_policy_diag_exempt_metric(&p, "gpucopy.h2d.gbps"));
	assert_true(ng_policy_requires_diag(&p, "nvbandwidth"));
	assert_false(ng_policy_requires_diag(&p, "memory"));
	assert_int_equal(p.cohort_min, 7);
	assert_true(p.cohort_majority == 0.75);
	assert_true(p.cohort_drop_limit == 0.5);
	assert_int_equal(p.clear_after, 3);
	assert_int_equal(p.escalate_after, 5);
	assert_string_equal(p.class_template, "{cpu.model}\\/x");
	assert_true(p.flag_fraction == 0.85);
	assert_int_equal(p.min_baseline_nodes, 20);
	assert_int_equal(p.warn_recheck_hours, 6);
	assert_int_equal(p.baseline_window_days, 7);
	assert_int_equal(p.baseline_max_age_hours, 12);
	assert_int_equal(p.cohort_window_hours, 2);
	assert_int_equal(p.release_passes, 3);
	assert_true(p.breaker_share == 0.2);
	assert_int_equal(p.breaker_count, 9);
	assert_int_equal(p.breaker_window_hours, 48);
	assert_int_equal(p.exclusive_max_runnable, 0);
	assert_int_equal(p.health_deadline_seconds, 20);
	assert_true(p.health_retired_pages_per_day == 0.5);
	assert_true(p.health_remapped_rows_per_day == 2);
	assert_true(p.health_pcie_replays_per_hour == 100);
	assert_true(p.health_nvlink_errors_per_hour == 0);
	assert_int_equal(p.health_replays_absolute, 5000);
	assert_true(p.health_clock_ratio_under_load == 0.6);
	assert_true(p.health_rate_min_hours == 1.5);
	assert_int_equal(p.health_unresponsive_checks, 2);
	assert_int_equal(p.health_ecc_corrected_volatile, 50);
	assert_true(p.health_memory_used_share == 0.1);
	assert_true(p.health_idle_clock_ratio == 0.2);
	assert_true(p.bimodal_low_mode == 0.7);
	assert_true(p.baseline_regrow == 3);
	assert_int_equal(p.unstable_repeat, 2);
	assert_int_equal(p.unstable_window, 4);
	assert_true(p.breaker_tail == 0.01);
	assert_int_equal(p.cohort_local_minutes, 15);
	assert_int_equal(p.small_class_min_nodes, 4);
	assert_true(p.small_class_tail == 0.01);
	assert_int_equal(p.family_parts, 3);
	assert_int_equal(p.n_shared_paths, 2);
	assert_true(ng_policy_shared_path(&p, "fabric") && !ng_policy_shared_path(&p, "compute"));
	assert_true(p.drift_fraction == 0.08);
	assert_true(p.spread_sigmas == 2.5);
	assert_int_equal(p.own_level_runs, 9);
	assert_true(p.own_level_sigmas == 3.5);
	assert_true(p.own_level_drop == 0.05);
	assert_int_equal(p.own_level_recent, 4);
	assert_int_equal(p.breaker_clear_runs, 4);
	assert_true(p.gpu_memory_share == 0.5);
	assert_true(p.gpu_sibling_fraction == 0.8);
	assert_true(p.gpu_series_drop == 0.2);
	assert_int_equal(p.prolog_min_nodes, 64);
	assert_string_equal(p.prolog_feature, "screen_me");
	assert_string_equal(p.prolog_comment, "ng:check");
	assert_int_equal(p.lemon_count, 4);
	assert_int_equal(p.lemon_days, 14);
	assert_string_equal(p.canary_job, "canary");
	assert_true(p.straggler_ratio == 1.25);
	assert_int_equal(p.probation_history_min, 5);
	assert_true(ng_policy_floor(&p, "nccl.all_reduce.busbw") == 270);
	assert_true(ng_policy_floor(&p, "storage.seqread.gbps") == 2);
	assert_true(isnan(ng_policy_floor(&p, "cpu.fp64.gflops")));
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		assert_true(p.from_file[i]);
		assert_string_equal(ng_policy_param_source(&p, i), "/etc/nodegate/policy.json");
	}
}

static void test_floors_refused(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"floors\":{\"a\":0}}", "f", &err), -1);
	assert_non_null(strstr(err.msg, "floors.a"));
	assert_int_equal(apply(&p, "{\"floors\":{\"a\":\"270\"}}", "f", &err), -1);
	assert_int_equal(apply(&p, "{\"floors\":[270]}", "f", &err), -1);
	assert_int_equal(apply(&p, "{\"floors\":{\"a\":1},\"gate\":{\"nope\":1}}", "f", &err), -1);
	assert_true(isnan(ng_policy_floor(&p, "a"))); /* all or nothing */
	/* a repeated floor is refused, not the last one taken */
	assert_int_equal(apply(&p, "{\"floors\":{\"a\":1,\"a\":2}}", "f", &err), -1);
	assert_non_null(strstr(err.msg, "floors.a is given twice"));
	assert_true(isnan(ng_policy_floor(&p, "a")));
	assert_int_equal(p.n_floors, 0);
}

static void test_apply_partial_keeps_other_sources(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"gate\":{\"block\":0.2}}", "a.json", &err), 0);
	assert_true(p.block == 0.2);
	assert_true(p.warn == 0.05);
	assert_string_equal(ng_policy_param_source(&p, NG_P_BLOCK), "a.json");
	assert_string_equal(ng_policy_param_source(&p, NG_P_WARN), "default");
	assert_string_equal(ng_policy_param_source(&p, NG_P_CLEAR_AFTER), "default");

	/* an empty document, or empty sections, change nothing but are valid */
	ng_policy before = p;
	assert_int_equal(apply(&p, "{}", "b.json", &err), 0);
	assert_true(p.block == 0.2);
	assert_int_equal(apply(&p, "{\"gate\":{},\"hysteresis\":{}}", "b.json", &err), 0);
	assert_true(p.block == before.block && p.warn == before.warn);
	assert_true(p.from_file[NG_P_BLOCK]);
	assert_false(p.from_file[NG_P_WARN]);

	/* counts written as 3.0 are whole numbers */
	assert_int_equal(apply(&p, "{\"hysteresis\":{\"escalate_after\":3.0,\"clear_after\":1}}", "c.json",
	                       &err),
	                 0);
	assert_int_equal(p.escalate_after, 3);
	assert_int_equal(p.clear_after, 1);
	/* a repeated key is refused (it once took the last value), and so is a
	 * repeated section (a second "gate" once merged into the first) */
	double warn = p.warn, block = p.block;
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.3,\"warn\":0.06}}", "d.json", &err), -1);
	assert_non_null(strstr(err.msg, "gate.warn is given twice"));
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.06},\"gate\":{\"block\":0.9}}", "d.json",
	                       &err),
	                 -1);
	assert_non_null(strstr(err.msg, "policy section \"gate\" is given twice"));
	assert_true(p.warn == warn && p.block == block);
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.06}}", "d.json", &err), 0);
	assert_true(p.warn == 0.06);
	/* warn may equal block */
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.2}}", "e.json", &err), 0);
	assert_true(p.warn == p.block);
	/* raising warn past the old block is fine when block moves too */
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.5,\"block\":0.6}}", "f.json", &err), 0);
	assert_true(p.warn == 0.5 && p.block == 0.6);
}

static void test_range_edges_accepted(void **state)
{
	(void)state;
	const char *ok[] = {
		"{\"gate\":{\"noise_sigmas\":0}}",           /* closed at 0 */
		"{\"gate\":{\"bimodal_fraction\":1}}",       /* closed at 1 */
		"{\"gate\":{\"cohort_majority\":1}}",        /* closed at 1 */
		"{\"gate\":{\"cohort_min\":1}}",
		"{\"gate\":{\"cohort_min\":1000000000}}",
		"{\"hysteresis\":{\"clear_after\":1000000000,\"escalate_after\":1}}",
		"{\"gate\":{\"fast\":1.0000000000000002}}",
		"{\"gate\":{\"slow\":0.9999999999999999}}",
		"{\"gate\":{\"warn\":5e-324}}",
		"{\"gate\":{\"cohort_drop_limit\":1e300}}",
		"{\"admission\":{\"flag_fraction\":1,\"min_baseline_nodes\":1,\"warn_recheck_hours\":8760}}",
		"{\"health\":{\"deadline_seconds\":1,\"retired_pages_per_day\":0,\"remapped_rows_per_day\":0,"
		"\"pcie_replays_per_hour\":0,\"nvlink_errors_per_hour\":1e12,\"replays_absolute\":1,"
		"\"clock_ratio_under_load\":1,\"rate_min_hours\":8760}}",
		"{\"health\":{\"deadline_seconds\":3600,\"replays_absolute\":1e15,\"rate_min_hours\":1e-3}}",
		"{\"gate\":{\"required_diag\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\"]}}",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		ng_policy p;
		ng_policy_default(&p);
		ng_err err = {0};
		if (apply(&p, ok[i], "ok.json", &err) != 0)
			fail_msg("refused %s: %s", ok[i], err.msg);
	}
	/* the longest name that fits, 63 characters */
	char doc[256];
	char name[NG_DIAG_NAME_MAX];
	memset(name, 'n', NG_DIAG_NAME_MAX - 1);
	name[NG_DIAG_NAME_MAX - 1] = '\0';
	snprintf(doc, sizeof doc, "{\"gate\":{\"required_diag\":[\"%s\"]}}", name);
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p, doc, "ok.json", &err), 0);
	assert_string_equal(p.required_diag[0], name);
	assert_int_equal(p.n_required_diag, 1);
}

/* ---- refusals ----------------------------------------------------------------------- */

static void test_refuse_structure(void **state)
{
	(void)state;
	expect_refused("[]", "JSON object", NULL);
	expect_refused("\"gate\"", "JSON object", NULL);
	expect_refused("null", "JSON object", NULL);
	expect_refused("{\"gates\":{}}", "unknown policy section", "gates");
	expect_refused("{\"Gate\":{}}", "unknown policy section", "Gate");
	expect_refused("{\"gate\":{},\"extra\":1}", "unknown policy section", "extra");
	expect_refused("{\"gate\":[]}", "\"gate\" must be an object", NULL);
	expect_refused("{\"hysteresis\":3}", "\"hysteresis\" must be an object", NULL);
	expect_refused("{\"gate\":{\"warnn\":0.1}}", "unknown policy value", "gate.warnn");
	expect_refused("{\"gate\":{\"Warn\":0.1}}", "unknown policy value", "gate.Warn");
	/* a value in the wrong section */
	expect_refused("{\"gate\":{\"clear_after\":2}}", "unknown policy value", "gate.clear_after");
	expect_refused("{\"hysteresis\":{\"warn\":0.1}}", "unknown policy value", "hysteresis.warn");
	expect_refused("{\"identity\":{\"template\":\"x\"}}", "unknown policy value", "identity.template");
	expect_refused("{\"health\":{\"warn\":0.1}}", "unknown policy value", "health.warn");
	expect_refused("{\"health\":{\"deadline_seconds\":\"10\"}}", "health.deadline_seconds", "must be a number");
	expect_refused("{\"health\":{\"deadline_seconds\":2.5}}", "health.deadline_seconds", "whole number");
	expect_refused("{\"health\":[]}", "\"health\" must be an object", NULL);
	expect_refused("{\"identity\":{\"class_template\":3}}", "identity.class_template", "must be a string");
	expect_refused("{\"identity\":{\"class_template\":\"\"}}", "identity.class_template", "1 to 255");
	expect_refused("{\"identity\":{\"class_template\":null}}", "identity.class_template", NULL);
	expect_refused("{\"schema\":\"nodegate/policy/2\"}", "schema", NULL);
	expect_refused("{\"schema\":1}", "schema", NULL);
	expect_refused("{\"schema\":null}", "schema", NULL);
	expect_refused("{\"gate\":{\"warn\":0.01},\"schema\":\"nodegate/record/1\"}", "schema", NULL);
}

static void test_refuse_types(void **state)
{
	(void)state;
	const char *names[] = {"warn", "block", "fast", "slow", "noise_sigmas", "unstable_cv_multiple",
	                       "bimodal_fraction", "cohort_min", "cohort_majority", "cohort_drop_limit"};
	const char *bad[] = {"\"0.1\"", "true", "false", "null", "[0.1]", "{}"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
			char doc[128], key[64];
			snprintf(doc, sizeof doc, "{\"gate\":{\"%s\":%s}}", names[i], bad[k]);
			snprintf(key, sizeof key, "gate.%s", names[i]);
			expect_refused(doc, key, "must be a number");
		}
	}
	expect_refused("{\"hysteresis\":{\"clear_after\":\"2\"}}", "hysteresis.clear_after", "number");
	expect_refused("{\"hysteresis\":{\"escalate_after\":true}}", "hysteresis.escalate_after", "number");
	expect_refused("{\"gate\":{\"required_diag\":\"pcie\"}}", "gate.required_diag", "array");
	expect_refused("{\"gate\":{\"required_diag\":{\"pcie\":1}}}", "gate.required_diag", "array");
	expect_refused("{\"gate\":{\"required_diag\":null}}", "gate.required_diag", "array");
	expect_refused("{\"gate\":{\"required_diag\":[\"pcie\",1]}}", "gate.required_diag", "a name of 1 to");
	expect_refused("{\"gate\":{\"required_diag\":[null]}}", "gate.required_diag", "a name of 1 to");
	expect_refused("{\"gate\":{\"required_diag\":[[\"pcie\"]]}}", "gate.required_diag", "a name of 1 to");
}

static void test_refuse_ranges(void **state)
{
	(void)state;
	struct {
		const char *doc, *name;
	} bad[] = {
		{"{\"gate\":{\"warn\":0}}", "gate.warn"},
		{"{\"gate\":{\"warn\":-0.0}}", "gate.warn"},
		{"{\"gate\":{\"warn\":-0.01}}", "gate.warn"},
		{"{\"gate\":{\"warn\":1,\"block\":1}}", "gate.warn"},
		{"{\"gate\":{\"warn\":1e400}}", "gate.warn"},
		{"{\"gate\":{\"block\":1}}", "gate.block"},
		{"{\"gate\":{\"block\":0}}", "gate.block"},
		{"{\"gate\":{\"fast\":1}}", "gate.fast"},
		{"{\"gate\":{\"fast\":0.5}}", "gate.fast"},
		{"{\"gate\":{\"fast\":1e400}}", "gate.fast"},
		{"{\"gate\":{\"slow\":0}}", "gate.slow"},
		{"{\"gate\":{\"slow\":1}}", "gate.slow"},
		{"{\"gate\":{\"noise_sigmas\":-1}}", "gate.noise_sigmas"},
		{"{\"gate\":{\"noise_sigmas\":-1e400}}", "gate.noise_sigmas"},
		{"{\"gate\":{\"unstable_cv_multiple\":0}}", "gate.unstable_cv_multiple"},
		{"{\"gate\":{\"bimodal_fraction\":0}}", "gate.bimodal_fraction"},
		{"{\"gate\":{\"bimodal_fraction\":1.0000000000000002}}", "gate.bimodal_fraction"},
		{"{\"gate\":{\"cohort_min\":0}}", "gate.cohort_min"},
		{"{\"gate\":{\"cohort_min\":-5}}", "gate.cohort_min"},
		{"{\"gate\":{\"cohort_min\":1000000001}}", "gate.cohort_min"},
		{"{\"gate\":{\"cohort_majority\":0}}", "gate.cohort_majority"},
		{"{\"gate\":{\"cohort_majority\":1.5}}", "gate.cohort_majority"},
		{"{\"gate\":{\"cohort_drop_limit\":0}}", "gate.cohort_drop_limit"},
		{"{\"gate\":{\"cohort_drop_limit\":-1}}", "gate.cohort_drop_limit"},
		{"{\"hysteresis\":{\"clear_after\":0}}", "hysteresis.clear_after"},
		{"{\"hysteresis\":{\"clear_after\":-1}}", "hysteresis.clear_after"},
		{"{\"hysteresis\":{\"escalate_after\":1e10}}", "hysteresis.escalate_after"},
		{"{\"hysteresis\":{\"escalate_after\":1e400}}", "hysteresis.escalate_after"},
		{"{\"admission\":{\"flag_fraction\":0}}", "admission.flag_fraction"},
		{"{\"admission\":{\"flag_fraction\":1.01}}", "admission.flag_fraction"},
		{"{\"admission\":{\"min_baseline_nodes\":0}}", "admission.min_baseline_nodes"},
		{"{\"admission\":{\"warn_recheck_hours\":0}}", "admission.warn_recheck_hours"},
		{"{\"admission\":{\"warn_recheck_hours\":8761}}", "admission.warn_recheck_hours"},
		{"{\"health\":{\"deadline_seconds\":0}}", "health.deadline_seconds"},
		{"{\"health\":{\"deadline_seconds\":3601}}", "health.deadline_seconds"},
		{"{\"health\":{\"retired_pages_per_day\":-1}}", "health.retired_pages_per_day"},
		{"{\"health\":{\"remapped_rows_per_day\":-0.5}}", "health.remapped_rows_per_day"},
		{"{\"health\":{\"pcie_replays_per_hour\":1e400}}", "health.pcie_replays_per_hour"},
		{"{\"health\":{\"nvlink_errors_per_hour\":-1}}", "health.nvlink_errors_per_hour"},
		{"{\"health\":{\"replays_absolute\":0}}", "health.replays_absolute"},
		{"{\"health\":{\"replays_absolute\":1e16}}", "health.replays_absolute"},
		{"{\"health\":{\"clock_ratio_under_load\":0}}", "health.clock_ratio_under_load"},
		{"{\"health\":{\"clock_ratio_under_load\":1.01}}", "health.clock_ratio_under_load"},
		{"{\"health\":{\"rate_min_hours\":0}}", "health.rate_min_hours"},
		{"{\"health\":{\"rate_min_hours\":8761}}", "health.rate_min_hours"},
		{"{\"quarantine\":{\"lemon_count\":1}}", "quarantine.lemon_count"},
		{"{\"quarantine\":{\"lemon_count\":101}}", "quarantine.lemon_count"},
		{"{\"quarantine\":{\"lemon_days\":0}}", "quarantine.lemon_days"},
		{"{\"quarantine\":{\"lemon_days\":3651}}", "quarantine.lemon_days"},
		{"{\"quarantine\":{\"straggler_ratio\":1}}", "quarantine.straggler_ratio"},
		{"{\"quarantine\":{\"straggler_ratio\":10.5}}", "quarantine.straggler_ratio"},
		{"{\"quarantine\":{\"history_min\":0}}", "quarantine.history_min"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_refused(bad[i].doc, bad[i].name, "out of range");
}

static void test_refuse_warn_above_block(void **state)
{
	(void)state;
	expect_refused("{\"gate\":{\"warn\":0.2}}", "gate.warn", "gate.block");
	expect_refused("{\"gate\":{\"block\":0.03}}", "gate.warn", "gate.block");
	expect_refused("{\"gate\":{\"warn\":0.11,\"block\":0.1}}", "must not exceed", NULL);
	/* order in the document does not matter: the check is on the result */
	expect_refused("{\"gate\":{\"block\":0.3,\"warn\":0.4}}", "must not exceed", NULL);
}

static void test_refuse_non_integer_counts(void **state)
{
	(void)state;
	const char *names[] = {"gate.cohort_min", "hysteresis.clear_after", "hysteresis.escalate_after"};
	const char *docs[] = {"{\"gate\":{\"cohort_min\":%s}}", "{\"hysteresis\":{\"clear_after\":%s}}",
	                      "{\"hysteresis\":{\"escalate_after\":%s}}"};
	const char *values[] = {"2.5", "1.0000000000000002", "5.5e0", "3.000001"};
	for (size_t i = 0; i < 3; i++) {
		for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
			char doc[128];
			snprintf(doc, sizeof doc, docs[i], values[k]);
			expect_refused(doc, names[i], "whole number");
		}
	}
}

static void test_refuse_diag_names(void **state)
{
	(void)state;
	expect_refused("{\"gate\":{\"required_diag\":[\"\"]}}", "gate.required_diag", "1 to 63");
	expect_refused("{\"gate\":{\"required_diag\":[\"pcie\",\"\"]}}", "gate.required_diag", NULL);
	char doc[512], name[NG_DIAG_NAME_MAX + 1];
	memset(name, 'n', NG_DIAG_NAME_MAX);
	name[NG_DIAG_NAME_MAX] = '\0';
	snprintf(doc, sizeof doc, "{\"gate\":{\"required_diag\":[\"pcie\",\"%s\"]}}", name);
	expect_refused(doc, "gate.required_diag", "1 to 63");
	/* seventeen names is one too many */
	expect_refused("{\"gate\":{\"required_diag\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\","
	               "\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]}}",
	               "gate.required_diag", "more than 16");
	/* a failure after some names were copied leaves the old list whole */
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"gate\":{\"required_diag\":[\"x\",\"y\",1]}}", "p.json", &err), -1);
	assert_int_equal(p.n_required_diag, 3);
	assert_string_equal(p.required_diag[0], "pcie");
	assert_string_equal(p.required_diag[1], "memory");
}

static void test_all_or_nothing(void **state)
{
	(void)state;
	/* earlier valid values in the same document are not applied */
	expect_refused("{\"gate\":{\"warn\":0.01,\"block\":0.02,\"warnn\":1}}", "gate.warnn", NULL);
	expect_refused("{\"gate\":{\"warn\":0.01},\"hysteresis\":{\"clear_after\":0}}",
	               "hysteresis.clear_after", NULL);
	expect_refused("{\"hysteresis\":{\"clear_after\":9},\"gate\":{\"fast\":0.9}}", "gate.fast", NULL);
	expect_refused("{\"gate\":{\"required_diag\":[\"x\"],\"cohort_min\":2.5}}", "gate.cohort_min",
	               NULL);

	/* and the source of an earlier apply is kept */
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"gate\":{\"warn\":0.04}}", "first.json", &err), 0);
	assert_int_equal(apply(&p, "{\"gate\":{\"block\":0.2,\"bogus\":1}}", "second.json", &err), -1);
	assert_string_equal(ng_policy_param_source(&p, NG_P_WARN), "first.json");
	assert_string_equal(ng_policy_param_source(&p, NG_P_BLOCK), "default");
	assert_true(p.block == 0.10);
	/* a later successful apply names its own file for what it set */
	assert_int_equal(apply(&p, "{\"gate\":{\"block\":0.2}}", "third.json", &err), 0);
	assert_string_equal(ng_policy_param_source(&p, NG_P_BLOCK), "third.json");
	assert_true(p.warn == 0.04);
}

static void test_required_diag_empty_warns(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_null(ng_policy_warning(&p, 0)); /* the defaults need no word */
	assert_int_equal(apply(&p, "{\"gate\":{\"required_diag\":[\"pcie\"]}}", "a.json", &err), 0);
	assert_null(ng_policy_warning(&p, 0));
	assert_int_equal(apply(&p, "{\"gate\":{\"required_diag\":[]}}", "a.json", &err), 0);
	const char *w = ng_policy_warning(&p, 0);
	assert_non_null(w);
	assert_non_null(strstr(w, "gate.required_diag is []"));
	assert_null(ng_policy_warning(&p, 1));
}

static void test_schema_of_a_newer_nodegate(void **state)
{
	(void)state;
	ng_policy p;
	ng_policy_default(&p);
	ng_err err = {0};
	assert_int_equal(apply(&p, "{\"schema\":\"nodegate/policy/2\"}", "a.json", &err), -1);
	assert_non_null(strstr(err.msg, "newer nodegate"));
	assert_int_equal(apply(&p, "{\"schema\":\"nodegate/policy/1\"}", "a.json", &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_the_runbooks),
		cmocka_unit_test(test_param_names_and_values),
		cmocka_unit_test(test_apply_overrides_and_sources),
		cmocka_unit_test(test_floors_refused),
		cmocka_unit_test(test_apply_partial_keeps_other_sources),
		cmocka_unit_test(test_range_edges_accepted),
		cmocka_unit_test(test_refuse_structure),
		cmocka_unit_test(test_refuse_types),
		cmocka_unit_test(test_refuse_ranges),
		cmocka_unit_test(test_refuse_warn_above_block),
		cmocka_unit_test(test_refuse_non_integer_counts),
		cmocka_unit_test(test_refuse_diag_names),
		cmocka_unit_test(test_all_or_nothing),
		cmocka_unit_test(test_required_diag_empty_warns),
		cmocka_unit_test(test_schema_of_a_newer_nodegate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
