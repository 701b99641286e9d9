#include "core/policy.h"
#include "core/json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum kind { K_DOUBLE, K_COUNT, K_NAMES, K_STRING };

struct param {
	const char *section, *key;
	enum kind kind;
	size_t offset;
	size_t count_offset; /* K_NAMES: where the number of names is kept */
	double lo, hi;       /* allowed range */
	bool lo_open, hi_open;
	const char *description;
};

#define OFF(f) offsetof(ng_policy, f)
#define INF HUGE_VAL

static const struct param params[NG_P_COUNT] = {
	[NG_P_WARN] = {"gate", "warn", K_DOUBLE, OFF(warn), 0, 0, 1, true, true,
		"Shortfall of the run median below baseline that warns, when it also clears the noise bar."},
	[NG_P_BLOCK] = {"gate", "block", K_DOUBLE, OFF(block), 0, 0, 1, true, true,
		"Shortfall that blocks, when it also clears the noise bar; samples under (1 - block) x median count as slow."},
	[NG_P_FAST] = {"gate", "fast", K_DOUBLE, OFF(fast), 0, 1, INF, true, true,
		"Ratio to baseline at or above which a run is implausible (measured something else)."},
	[NG_P_SLOW] = {"gate", "slow", K_DOUBLE, OFF(slow), 0, 0, 1, true, true,
		"Ratio to baseline at or below which a run is implausible (a parser or unit fault)."},
	[NG_P_NOISE_SIGMAS] = {"gate", "noise_sigmas", K_DOUBLE, OFF(noise_sigmas), 0, 0, INF, false, true,
		"Standard errors in the noise bar: noise_sigmas x cv / sqrt(samples)."},
	[NG_P_UNSTABLE_CV_MULTIPLE] = {"gate", "unstable_cv_multiple", K_DOUBLE, OFF(unstable_cv_multiple), 0, 0, INF, true, true,
		"A run whose own spread (std/mean) exceeds this many baseline cvs is unstable."},
	[NG_P_BIMODAL_FRACTION] = {"gate", "bimodal_fraction", K_DOUBLE, OFF(bimodal_fraction), 0, 0, 1, true, false,
		"Share of slow samples that makes an otherwise passing run bimodal."},
	[NG_P_REQUIRED_DIAG] = {"gate", "required_diag", K_NAMES, OFF(required_diag), OFF(n_required_diag), 0, 0, false, false,
		"DCGM tests that must be present with status pass; absent or skipped is diag-incomplete."},
	[NG_P_DIAG_EXEMPT_DOMAINS] = {"gate", "diag_exempt_domains", K_NAMES, OFF(diag_exempt_domains),
		OFF(n_diag_exempt_domains), 0, 0, false, false,
		"Record domains that carry no DCGM diagnostics, so none is required (a record without a domain is never exempt)."},
	[NG_P_DIAG_EXEMPT_METRICS] = {"gate", "diag_exempt_metrics", K_NAMES, OFF(diag_exempt_metrics),
		OFF(n_diag_exempt_metrics), 0, 0, false, false,
		"Record metrics (exact, or a family ending in .*) that nodegate measures and verifies itself, in a domain that is not exempt: none of the DCGM tests is required of them."},
	[NG_P_COHORT_MIN] = {"gate", "cohort_min", K_COUNT, OFF(cohort_min), 0, 1, 1e9, false, false,
		"Fewest cohort members that can attribute a drop to the fleet."},
	[NG_P_COHORT_MAJORITY] = {"gate", "cohort_majority", K_DOUBLE, OFF(cohort_majority), 0, 0, 1, true, false,
		"Share of the cohort that must be past the warn bar for a fleet regression."},
	[NG_P_COHORT_DROP_LIMIT] = {"gate", "cohort_drop_limit", K_DOUBLE, OFF(cohort_drop_limit), 0, 0, INF, true, true,
		"Cohort drops must lie within [-limit, limit]; one outside invalidates the cohort."},
	[NG_P_CLEAR_AFTER] = {"hysteresis", "clear_after", K_COUNT, OFF(clear_after), 0, 1, 1e9, false, false,
		"Consecutive passes that clear a block."},
	[NG_P_ESCALATE_AFTER] = {"hysteresis", "escalate_after", K_COUNT, OFF(escalate_after), 0, 1, 1e9, false, false,
		"Consecutive warnings that escalate to a block."},
	[NG_P_CLASS_TEMPLATE] = {"identity", "class_template", K_STRING, OFF(class_template), 0, 0, 0, false, false,
		"Template that derives the class key from the node profile (docs/identity.md)."},
	[NG_P_FLAG_FRACTION] = {"admission", "flag_fraction", K_DOUBLE, OFF(flag_fraction), 0, 0, 1, true, false,
		"Admission flags a metric below the larger of its floor and this share of the class median."},
	[NG_P_MIN_BASELINE_NODES] = {"admission", "min_baseline_nodes", K_COUNT, OFF(min_baseline_nodes), 0, 1, 1e9, false, false,
		"Fewest distinct nodes a class baseline is built from; fewer means no baseline yet."},
	[NG_P_WARN_RECHECK_HOURS] = {"admission", "warn_recheck_hours", K_COUNT, OFF(warn_recheck_hours), 0, 1, 8760, false, false,
		"Hours until a node admitted with a warning is screened again."},
	[NG_P_BASELINE_WINDOW_DAYS] = {"admission", "baseline_window_days", K_COUNT, OFF(baseline_window_days), 0, 1, 3650, false, false,
		"Accepted runs of idle nodes from this many days back make a class baseline."},
	[NG_P_BASELINE_MAX_AGE_HOURS] = {"admission", "baseline_max_age_hours", K_COUNT, OFF(baseline_max_age_hours), 0, 1, 87600, false, false,
		"An unpinned baseline older than this is rebuilt from the store before it is used."},
	[NG_P_BASELINE_REGROW] = {"admission", "baseline_regrow", K_DOUBLE, OFF(baseline_regrow), 0, 0, 1e6, false, false,
		"An unpinned baseline is also rebuilt, whatever its age, once the class has this many times the nodes it was built from (0: only by age)."},
	[NG_P_COHORT_WINDOW_HOURS] = {"admission", "cohort_window_hours", K_COUNT, OFF(cohort_window_hours), 0, 1, 8760, false, false,
		"Other nodes' runs of the class from this many hours back are the gate's cohort."},
	[NG_P_COHORT_LOCAL_MINUTES] = {"admission", "cohort_local_minutes", K_COUNT, OFF(cohort_local_minutes), 0, 0, 1440, false, false,
		"A run the day's cohort does not explain is judged again against the class's runs of this many minutes back: what the nodes screened meanwhile share (an hour of slow shared storage) is the fleet's, not the node's, and a case opened this recently for a drop a later node shares is withdrawn (0: no second cohort)."},
	[NG_P_RELEASE_PASSES] = {"admission", "release_passes", K_COUNT, OFF(release_passes), 0, 1, 100, false, false,
		"Passing runs of the failed test, after a quarantine began, that `nodegate release` needs."},
	[NG_P_BREAKER_SHARE] = {"admission", "breaker_share", K_DOUBLE, OFF(breaker_share), 0, 0, 1, true, false,
		"Quarantining more than this share of a class within the window trips the circuit breaker."},
	[NG_P_BREAKER_COUNT] = {"admission", "breaker_count", K_COUNT, OFF(breaker_count), 0, 1, 1e9, false, false,
		"Quarantining more than this many nodes of a class within the window trips the circuit breaker."},
	[NG_P_BREAKER_WINDOW_HOURS] = {"admission", "breaker_window_hours", K_COUNT, OFF(breaker_window_hours), 0, 1, 8760, false, false,
		"The circuit breaker's window."},
	[NG_P_BREAKER_TAIL] = {"admission", "breaker_tail", K_DOUBLE, OFF(breaker_tail), 0, 0, 1, true, false,
		"The breaker trips only when that many quarantines of one metric in the window would happen by chance less often than this, given the class's size and its own rate of them over the baseline window (a Poisson tail)."},
	[NG_P_BREAKER_CLEAR_RUNS] = {"admission", "breaker_clear_runs", K_COUNT, OFF(breaker_clear_runs), 0, 0, 1e6, false, false,
		"A fleet-regression event clears itself after this many runs in a row of its class, software and metric measure within noise of the baseline (0: only `nodegate fleet clear`)."},
	[NG_P_EXCLUSIVE_MAX_RUNNABLE] = {"admission", "exclusive_max_runnable", K_COUNT, OFF(exclusive_max_runnable), 0, 0, 1e6, false, false,
		"Runnable tasks besides nodegate's own a node may have and still count as exclusive for a confirmation."},
	[NG_P_BIMODAL_LOW_MODE] = {"admission", "bimodal_low_mode", K_DOUBLE, OFF(bimodal_low_mode), 0, 0, 1, true, false,
		"A run the gate calls bimodal fails admission only when the median of its slow samples is at or below this share of the class median; a shallower slow tail is the run's own noise and only warns."},
	[NG_P_UNSTABLE_REPEAT] = {"admission", "unstable_repeat", K_COUNT, OFF(unstable_repeat), 0, 0, 1000, false, false,
		"An unstable run fails admission (instead of holding the node) when the node's runs of the metric were unstable this many times among its last unstable_window verdicts, this one included; 0: never."},
	[NG_P_UNSTABLE_WINDOW] = {"admission", "unstable_window", K_COUNT, OFF(unstable_window), 0, 1, 32, false, false,
		"How many of the node's latest verdicts of a metric unstable_repeat counts over (the store keeps 32)."},
	[NG_P_SMALL_CLASS_MIN_NODES] = {"admission", "small_class_min_nodes", K_COUNT, OFF(small_class_min_nodes), 0, 0, 1e9, false, false,
		"A class with at least this many nodes but fewer than min_baseline_nodes is judged against a small-class baseline, whose bar carries the uncertainty few nodes give (0: such a class establishes until min_baseline_nodes)."},
	[NG_P_SMALL_CLASS_TAIL] = {"admission", "small_class_tail", K_DOUBLE, OFF(small_class_tail), 0, 0, 0.5, true, false,
		"How rarely a healthy node of a small class falls under its bar: the bar is a one-sided Student t prediction bound at this tail over the class's node medians."},
	[NG_P_FAMILY_PARTS] = {"admission", "family_parts", K_COUNT, OFF(family_parts), 0, 0, 64, false, false,
		"A class key's first this many /-separated parts name its family (the default template's GPUs, CPUs, memory and InfiniBand ports): a small class's bar takes its spread from the family's classes large enough for an ordinary baseline, pooled, instead of from its own few nodes alone (0: never pooled)."},
	[NG_P_SHARED_PATHS] = {"admission", "shared_paths", K_NAMES, OFF(shared_paths), OFF(n_shared_paths), 0, 0, false, false,
		"Record domains whose path other nodes share (a network filesystem; none by default): a drop there that no peer screened in the last cohort_local_minutes shares, and that the node has not had confirmed in the baseline window, is held for a recheck instead of quarantined, since a shared path's incident reaches one node first."},
	[NG_P_DRIFT_FRACTION] = {"admission", "drift_fraction", K_DOUBLE, OFF(drift_fraction), 0, 0, 0.5, true, false,
		"A class baseline rebuilt more than this share below the newest pinned baseline of its class, software identity and metric opens a drift event: peers alone follow a class that degrades together, and someone is told (a fleet event, its audit entry and nodegate_fleet_regression_open)."},
	[NG_P_SPREAD_SIGMAS] = {"admission", "spread_sigmas", K_DOUBLE, OFF(spread_sigmas), 0, 0, 100, false, false,
		"The peer bar (flag_fraction x the class median) is never less than this many node spreads (the baseline's node_mad) under the median: a bar inside the class's own spread flags healthy nodes (0: no such bound)."},
	[NG_P_OWN_LEVEL_RUNS] = {"admission", "own_level_runs", K_COUNT, OFF(own_level_runs), 0, 0, 1000, false, false,
		"A node with at least this many accepted runs of a metric in its class in the baseline window (since its last quarantine case) is also judged against its own level, where those runs sat against their software identity's class baseline: a drop from where this node has always been is evidence even while it stays inside its class's spread (0: peers and floor only)."},
	[NG_P_OWN_LEVEL_SIGMAS] = {"admission", "own_level_sigmas", K_DOUBLE, OFF(own_level_sigmas), 0, 0, 100, true, false,
		"The own-level bar sits this many of the node's run-to-run spreads (its runs' scaled MAD, never less than a run median's sampling noise) under its own level, widened for how few runs set the level."},
	[NG_P_OWN_LEVEL_DROP] = {"admission", "own_level_drop", K_DOUBLE, OFF(own_level_drop), 0, 0, 0.5, false, false,
		"... and at least this share under it: a node that reads the same run after run is not flagged for a drop too small to slow a job."},
	[NG_P_OWN_LEVEL_RECENT] = {"admission", "own_level_recent", K_COUNT, OFF(own_level_recent), 0, 0, 100, false, false,
		"The mean of the node's newest this many runs of a metric (this run with the accepted runs just before it) is held against its own level too, with a bar the same number of spreads under it but narrowed for the runs averaged: a drop under one run's noise that stays, run after run, is evidence one run cannot give (0 or 1: each run alone)."},
	[NG_P_HEALTH_DEADLINE_SECONDS] = {"health", "deadline_seconds", K_COUNT, OFF(health_deadline_seconds), 0, 1, 3600, false, false,
		"Seconds the whole GPU health run (epilog, prolog or by hand) may take; what has not answered by then is unknown."},
	[NG_P_HEALTH_RETIRED_PAGES_PER_DAY] = {"health", "retired_pages_per_day", K_DOUBLE, OFF(health_retired_pages_per_day), 0, 0, INF, false, true,
		"Retired GPU memory pages per day, against the GPU's history, above which the GPU is degraded."},
	[NG_P_HEALTH_REMAPPED_ROWS_PER_DAY] = {"health", "remapped_rows_per_day", K_DOUBLE, OFF(health_remapped_rows_per_day), 0, 0, INF, false, true,
		"Remapped GPU memory rows per day, against the GPU's history, above which the GPU is degraded."},
	[NG_P_HEALTH_PCIE_REPLAYS_PER_HOUR] = {"health", "pcie_replays_per_hour", K_DOUBLE, OFF(health_pcie_replays_per_hour), 0, 0, INF, false, true,
		"PCIe replays per hour, against the GPU's history, above which the GPU is degraded."},
	[NG_P_HEALTH_NVLINK_ERRORS_PER_HOUR] = {"health", "nvlink_errors_per_hour", K_DOUBLE, OFF(health_nvlink_errors_per_hour), 0, 0, INF, false, true,
		"NVLink replay, recovery and CRC errors per hour (all links), against the GPU's history, above which the GPU is degraded."},
	[NG_P_HEALTH_REPLAYS_ABSOLUTE] = {"health", "replays_absolute", K_COUNT, OFF(health_replays_absolute), 0, 1, 1e15, false, false,
		"PCIe replays since the last reset above which the GPU is degraded even without history."},
	[NG_P_HEALTH_CLOCK_RATIO_UNDER_LOAD] = {"health", "clock_ratio_under_load", K_DOUBLE, OFF(health_clock_ratio_under_load), 0, 0, 1, true, false,
		"A busy GPU held below this share of its max SM clock by a power or thermal limit is reported (it changes no severity)."},
	[NG_P_HEALTH_RATE_MIN_HOURS] = {"health", "rate_min_hours", K_DOUBLE, OFF(health_rate_min_hours), 0, 0, 8760, true, false,
		"A rate is taken over at least this many hours: a shorter history counts as this long, so one event soon after is not a rate."},
	[NG_P_HEALTH_UNRESPONSIVE_CHECKS] = {"health", "unresponsive_checks", K_COUNT, OFF(health_unresponsive_checks), 0, 1, 1000, false, false,
		"Consecutive checks a GPU must be unresponsive, while its siblings answer, before it is degraded (a node-wide hang never is)."},
	[NG_P_HEALTH_ECC_CORRECTED_VOLATILE] = {"health", "ecc_corrected_volatile", K_COUNT, OFF(health_ecc_corrected_volatile), 0, 1, 1e15, false, false,
		"Correctable ECC errors since the last reset above which the GPU is degraded: a spike, the leading indicator of an uncorrectable one."},
	[NG_P_HEALTH_MEMORY_USED_SHARE] = {"health", "memory_used_share", K_DOUBLE, OFF(health_memory_used_share), 0, 0, 1, false, true,
		"Share of a GPU's memory still allocated after a job (epilog) above which a process survived teardown: degraded."},
	[NG_P_HEALTH_IDLE_CLOCK_RATIO] = {"health", "idle_clock_ratio", K_DOUBLE, OFF(health_idle_clock_ratio), 0, 0, 1, true, true,
		"An SM clock at or below this share of its maximum is at its idle floor (one of the signs of an idle GPU)."},
	[NG_P_GPU_MEMORY_SHARE] = {"probe", "gpu_memory_share", K_DOUBLE, OFF(gpu_memory_share), 0, 0, 0.95, true, false,
		"Share of each GPU's free memory the GPU memory probe allocates, pattern-checks and copies within."},
	[NG_P_GPU_SIBLING_FRACTION] = {"probe", "gpu_sibling_fraction", K_DOUBLE, OFF(gpu_sibling_fraction), 0, 0, 1, true, false,
		"A GPU (or GPU-to-GPU link) whose median is below this share of the median of its siblings in the node stands out."},
	[NG_P_GPU_SERIES_DROP] = {"probe", "gpu_series_drop", K_DOUBLE, OFF(gpu_series_drop), 0, 0, 1, true, true,
		"A GPU compute series whose last third's median is below its first third's by more than this share is falling."},
	[NG_P_PROLOG_MIN_NODES] = {"admission", "prolog_min_nodes", K_COUNT, OFF(prolog_min_nodes), 0, 0, 1e6, false, false,
		"`admit --prolog` screens the nodes of a job of at least this many nodes (0: a job's size never asks)."},
	[NG_P_PROLOG_FEATURE] = {"admission", "prolog_feature", K_STRING, OFF(prolog_feature), 0, 0, 0, false, false,
		"`admit --prolog` screens the nodes of a job whose constraint (--constraint) names this feature."},
	[NG_P_PROLOG_COMMENT] = {"admission", "prolog_comment", K_STRING, OFF(prolog_comment), 0, 0, 0, false, false,
		"`admit --prolog` screens the nodes of a job whose comment (--comment) holds this word."},
	[NG_P_LEMON_COUNT] = {"quarantine", "lemon_count", K_COUNT, OFF(lemon_count), 0, 2, 100, false, false,
		"Quarantines of one node, or of one GPU by its UUID, within lemon_days that make it a lemon: never released automatically, `nodegate release --force` only."},
	[NG_P_LEMON_DAYS] = {"quarantine", "lemon_days", K_COUNT, OFF(lemon_days), 0, 1, 3650, false, false,
		"The window, in days, over which lemon_count quarantines are counted."},
	[NG_P_PROBATION_CANARY_JOB] = {"quarantine", "canary_job", K_STRING, OFF(canary_job), 0, 0, 0, false, false,
		"The Slurm job name (SLURM_JOB_NAME) whose clean epilog ends a released node's probation; unset, the next job that runs on it does."},
	[NG_P_PROBATION_STRAGGLER_RATIO] = {"quarantine", "straggler_ratio", K_DOUBLE, OFF(straggler_ratio), 0, 1, 10, true, false,
		"A probation job whose runtime is more than this many times the median of the same job's earlier clean runs on other nodes is a straggler: the probation fails."},
	[NG_P_PROBATION_HISTORY_MIN] = {"quarantine", "history_min", K_COUNT, OFF(probation_history_min), 0, 1, 1000, false, false,
		"Fewest earlier clean runs of the same job name that make a history to judge a probation job's runtime against; fewer, and the runtime is not judged."},
};

void ng_policy_default(ng_policy *p)
{
	*p = (ng_policy){
		.warn = 0.05,
		.block = 0.10,
		.fast = 1.5,
		.slow = 0.25,
		.noise_sigmas = 2.0,
		.unstable_cv_multiple = 3.0,
		.bimodal_fraction = 0.25,
		.n_required_diag = 3,
		.required_diag = {"pcie", "memory", "nccl_tests"},
		.n_diag_exempt_domains = 3,
		.diag_exempt_domains = {"compute", "memory", "storage"},
		.n_diag_exempt_metrics = 1,
		.diag_exempt_metrics = {"gpucopy.*"},
		.cohort_min = 5,
		.cohort_majority = 0.6,
		.cohort_drop_limit = 1.0,
		.clear_after = 2,
		.escalate_after = 3,
		.class_template = NG_DEFAULT_CLASS_TEMPLATE,
		/* The admission seed's worked example flags below 90 percent of the
		 * class median. Ten nodes keep one sick node from moving a median. */
		.flag_fraction = 0.90,
		.min_baseline_nodes = 10,
		.warn_recheck_hours = 24,
		.baseline_window_days = 30,
		.baseline_max_age_hours = 24,
		/* A new class's first baseline comes from its first ten nodes and
		 * would stand a day; a median of ten is a few percent off where a
		 * median of hundreds is not, and every node screened meanwhile is
		 * judged against it. Rebuilt each time the class doubles. */
		.baseline_regrow = 2,
		.cohort_window_hours = 24,
		/* An incident on a shared service lasts minutes to hours; half an
		 * hour of a class's screens is enough nodes to see it in a large
		 * class and too few to hide one node's own fault. */
		.cohort_local_minutes = 30,
		.release_passes = 2,
		.breaker_share = 0.10,
		.breaker_count = 5,
		.breaker_window_hours = 24,
		/* One in a thousand windows: a class that quarantines two nodes of
		 * a metric on a normal day needs nine to trip, one that quarantines
		 * none needs the count and share above. */
		.breaker_tail = 0.001,
		/* Ten runs of the class back within noise: the cause is gone. */
		.breaker_clear_runs = 10,
		.exclusive_max_runnable = 1,
		/* A second mode is a rail, rank or DIMM channel gone: it sits far
		 * under the median (a third to a half down). Gaussian noise of up
		 * to about 15% per sample puts the median of the samples under the
		 * gate's slow line (0.9 x median) above 0.8 x median. */
		.bimodal_low_mode = 0.80,
		/* The runbook holds an unstable run for the harness to be fixed.
		 * The same harness gives the node's peers stable runs: a node that
		 * keeps disagreeing with itself is intermittent, not unmeasured. */
		.unstable_repeat = 3,
		.unstable_window = 8,
		/* Three nodes are the fewest whose median and spread say anything;
		 * the bar widens by Student's t for however few there are. */
		.small_class_min_nodes = 3,
		.small_class_tail = 0.005,
		.family_parts = 4,
		.drift_fraction = 0.05,
		/* Healthy nodes' medians spread around the class's: a bar within
		 * that spread accuses the class's lower half (the fleet simulator:
		 * flag_fraction 0.99 drained 1,877 healthy nodes of 2,000). A
		 * node's level is its own for good, and a fleet is thousands of
		 * node-metrics: three spreads under the median leave about one in
		 * 750 of them under the bar on every screen (four healthy drains a
		 * month at 500 nodes), four spreads one in 30,000. A node that left
		 * its own level by less is caught against that level (below). */
		.spread_sigmas = 4.0,
		/* A node's own history knows its level far better than its class's
		 * spread does: on a metric whose nodes scatter by 3%, a node 6% under
		 * where it has read for weeks is still inside the class's bar. Six
		 * runs set a level to within half a run's noise; four spreads, widened
		 * for those six, flag a healthy run about once in 30,000, and the
		 * confirmation must fall as far. Under 3% a node's drop is within
		 * what a warm room or a busy neighbour moves it by. */
		.own_level_runs = 6,
		.own_level_sigmas = 4.0,
		.own_level_drop = 0.03,
		.own_level_recent = 3,
		/* docs/gpu.md says why each of these. */
		.health_deadline_seconds = 10,
		.health_retired_pages_per_day = 1,
		.health_remapped_rows_per_day = 1,
		.health_pcie_replays_per_hour = 1000,
		.health_nvlink_errors_per_hour = 1000,
		.health_replays_absolute = 1000000,
		.health_clock_ratio_under_load = 0.7,
		.health_rate_min_hours = 24,
		.health_unresponsive_checks = 3,
		/* the seed validator's own bar */
		.health_ecc_corrected_volatile = 1000,
		.health_memory_used_share = 0.05,
		.health_idle_clock_ratio = 0.3,
		/* docs/gpu-probes.md says why each of these. */
		.gpu_memory_share = 0.8,
		.gpu_sibling_fraction = 0.9,
		.gpu_series_drop = 0.1,
		.prolog_min_nodes = 0,
		.prolog_feature = "ng_screen",
		.prolog_comment = "ng:screen",
		/* Seed 002's repeat offender: three quarantines in a month is a
		 * part to replace, not a node to release again. */
		.lemon_count = 3,
		.lemon_days = 30,
		.canary_job = "",
		/* A job half again as long as its usual runs on healthy nodes is
		 * not noise: the node held it back. */
		.straggler_ratio = 1.5,
		.probation_history_min = 3,
	};
}

size_t ng_policy_param_count(void) { return NG_P_COUNT; }

const char *ng_policy_param_description(size_t i)
{
	return i < NG_P_COUNT ? params[i].description : "";
}

const char *ng_policy_param_name(size_t i)
{
	static char names[NG_P_COUNT][64];
	if (i >= NG_P_COUNT)
		return "";
	if (!names[i][0])
		snprintf(names[i], sizeof names[i], "%s.%s", params[i].section, params[i].key);
	return names[i];
}

const char *ng_policy_param_source(const ng_policy *p, size_t i)
{
	return i < NG_P_COUNT && p->from_file[i] ? p->source_file : "default";
}

void ng_policy_param_value(const ng_policy *p, size_t i, ng_strbuf *out)
{
	if (i >= NG_P_COUNT)
		return;
	const char *field = (const char *)p + params[i].offset;
	switch (params[i].kind) {
	case K_DOUBLE: ng_strbuf_add_double(out, *(const double *)field); break;
	case K_COUNT: ng_strbuf_printf(out, "%ld", *(const long *)field); break;
	case K_NAMES: {
		const char(*names)[NG_DIAG_NAME_MAX] = (const void *)field;
		size_t n = *(const size_t *)((const char *)p + params[i].count_offset);
		ng_strbuf_addc(out, '[');
		for (size_t k = 0; k < n; k++) {
			if (k)
				ng_strbuf_adds(out, ", ");
			ng_strbuf_add_json_string(out, names[k]);
		}
		ng_strbuf_addc(out, ']');
		break;
	}
	case K_STRING: ng_strbuf_add_json_string(out, field); break;
	}
}

bool ng_policy_diag_exempt(const ng_policy *p, const char *domain)
{
	for (size_t k = 0; k < p->n_diag_exempt_domains; k++)
		if (strcmp(p->diag_exempt_domains[k], domain) == 0)
			return true;
	return false;
}

bool ng_policy_shared_path(const ng_policy *p, const char *domain)
{
	for (size_t k = 0; domain && k < p->n_shared_paths; k++)
		if (strcmp(p->shared_paths[k], domain) == 0)
			return true;
	return false;
}

bool ng_policy_diag_exempt_metric(const ng_policy *p, const char *metric)
{
	for (size_t k = 0; k < p->n_diag_exempt_metrics; k++) {
		const char *e = p->diag_exempt_metrics[k];
		size_t len = strlen(e);
		if (strcmp(e, metric) == 0)
			return true;
		if (len >= 2 && strcmp(e + len - 2, ".*") == 0 && strncmp(e, metric, len - 1) == 0 &&
		    metric[len - 1] != '\0')
			return true;
	}
	return false;
}

bool ng_policy_requires_diag(const ng_policy *p, const char *test)
{
	for (size_t k = 0; k < p->n_required_diag; k++)
		if (strcmp(p->required_diag[k], test) == 0)
			return true;
	return false;
}

static bool in_range(const struct param *pr, double v)
{
	if (!isfinite(v))
		return false;
	if (pr->lo_open ? !(v > pr->lo) : !(v >= pr->lo))
		return false;
	if (isfinite(pr->hi) && (pr->hi_open ? !(v < pr->hi) : !(v <= pr->hi)))
		return false;
	return true;
}

static int set_param(ng_policy *p, size_t i, const cJSON *v, ng_err *err)
{
	const struct param *pr = &params[i];
	char *field = (char *)p + pr->offset;
	const char *name = ng_policy_param_name(i);
	switch (pr->kind) {
	case K_DOUBLE:
	case K_COUNT:
		if (!cJSON_IsNumber(v))
			return ng_fail(err, "%s must be a number", name);
		if (!in_range(pr, v->valuedouble))
			return ng_fail(err, "%s = %g is out of range %s%g, %g%s", name, v->valuedouble,
			               pr->lo_open ? "(" : "[", pr->lo, pr->hi, pr->hi_open ? ")" : "]");
		if (pr->kind == K_DOUBLE) {
			*(double *)field = v->valuedouble;
		} else {
			if (v->valuedouble != floor(v->valuedouble))
				return ng_fail(err, "%s must be a whole number", name);
			*(long *)field = (long)v->valuedouble;
		}
		return 0;
	case K_NAMES: {
		if (!cJSON_IsArray(v))
			return ng_fail(err, "%s must be an array of names", name);
		char(*names)[NG_DIAG_NAME_MAX] = (void *)field;
		size_t n = 0;
		for (const cJSON *c = v->child; c; c = c->next, n++) {
			if (n >= NG_DIAG_MAX)
				return ng_fail(err, "%s lists more than %d names", name, NG_DIAG_MAX);
			if (!cJSON_IsString(c) || !c->valuestring[0] ||
			    strlen(c->valuestring) >= NG_DIAG_NAME_MAX)
				return ng_fail(err, "%s: each entry must be a name of 1 to %d characters",
				               name, NG_DIAG_NAME_MAX - 1);
			memcpy(names[n], c->valuestring, strlen(c->valuestring) + 1);
		}
		*(size_t *)((char *)p + pr->count_offset) = n;
		return 0;
	}
	case K_STRING:
		/* Fixed storage: a longer template is refused, never cut short. */
		if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= NG_TEMPLATE_MAX)
			return ng_fail(err, "%s must be a string of 1 to %d characters", name,
			               NG_TEMPLATE_MAX - 1);
		memcpy(field, v->valuestring, strlen(v->valuestring) + 1);
		return 0;
	}
	return 0;
}

/* "floors": {"metric": a finite number > 0, ...}; replaces any earlier floors. */
static int apply_floors(ng_policy *p, const cJSON *sec, ng_err *err)
{
	if (!cJSON_IsObject(sec))
		return ng_fail(err, "policy section \"floors\" must be an object of metric: number");
	p->n_floors = 0;
	for (const cJSON *kv = sec->child; kv; kv = kv->next) {
		if (!cJSON_IsNumber(kv) || !isfinite(kv->valuedouble) || !(kv->valuedouble > 0))
			return ng_fail(err, "floors.%s must be a number greater than 0, in the metric's unit",
			               kv->string);
		if (strlen(kv->string) >= sizeof p->floors[0].metric)
			return ng_fail(err, "floors: metric name \"%.40s...\" is too long", kv->string);
		if (p->n_floors == NG_FLOORS_MAX)
			return ng_fail(err, "floors: at most %d metrics", NG_FLOORS_MAX);
		size_t i = 0;
		while (i < p->n_floors && strcmp(p->floors[i].metric, kv->string) != 0)
			i++;
		snprintf(p->floors[i].metric, sizeof p->floors[i].metric, "%s", kv->string);
		p->floors[i].value = kv->valuedouble;
		if (i == p->n_floors)
			p->n_floors++;
	}
	return 0;
}

double ng_policy_floor(const ng_policy *p, const char *metric)
{
	for (size_t i = 0; i < p->n_floors; i++)
		if (strcmp(p->floors[i].metric, metric) == 0)
			return p->floors[i].value;
	return NAN;
}

static bool known_section(const char *s)
{
	for (size_t i = 0; i < NG_P_COUNT; i++)
		if (strcmp(params[i].section, s) == 0)
			return true;
	return false;
}

int ng_policy_apply_json(ng_policy *p, const cJSON *doc, const char *source, ng_err *err)
{
	if (!cJSON_IsObject(doc))
		return ng_fail(err, "a policy must be a JSON object with sections \"gate\", \"hysteresis\", \"identity\", \"admission\" and \"health\"");
	/* A section or value given twice would be merged or overwritten
	 * silently (a second "gate" once set gate.block to 0.9): whichever was
	 * meant, the file is wrong. */
	ng_strbuf dup = {0};
	if (ng_json_find_duplicate(doc, &dup)) {
		bool section = dup.s && !strchr(dup.s, '.') && !strchr(dup.s, '[');
		int rc = section ? ng_fail(err, "policy section \"%.60s\" is given twice: write it once, "
		                           "with every value in it", dup.s)
		                 : ng_fail(err, "%.100s is given twice: remove one", dup.s ? dup.s : "a key");
		ng_strbuf_free(&dup);
		return rc;
	}
	ng_strbuf_free(&dup);
	ng_policy next = *p;
	snprintf(next.source_file, sizeof next.source_file, "%s", source);

	for (const cJSON *sec = doc->child; sec; sec = sec->next) {
		if (strcmp(sec->string, "schema") == 0) {
			if (cJSON_IsString(sec) && strncmp(sec->valuestring, "nodegate/policy/", 16) == 0 &&
			    strcmp(sec->valuestring, "nodegate/policy/1") != 0)
				return ng_fail(err, "schema \"%.40s\" is written for a newer nodegate: this one "
				               "reads \"nodegate/policy/1\"", sec->valuestring);
			if (!cJSON_IsString(sec) || strcmp(sec->valuestring, "nodegate/policy/1") != 0)
				return ng_fail(err, "schema must be \"nodegate/policy/1\"");
			continue;
		}
		if (strcmp(sec->string, "floors") == 0) {
			if (apply_floors(&next, sec, err) < 0)
				return -1;
			continue;
		}
		if (!known_section(sec->string))
			return ng_fail(err, "unknown policy section \"%s\" (known: gate, hysteresis, identity, admission, health, probe, floors)",
			               sec->string);
		if (!cJSON_IsObject(sec))
			return ng_fail(err, "policy section \"%s\" must be an object", sec->string);
		for (const cJSON *kv = sec->child; kv; kv = kv->next) {
			size_t i = 0;
			while (i < NG_P_COUNT && !(strcmp(params[i].section, sec->string) == 0 &&
			                           strcmp(params[i].key, kv->string) == 0))
				i++;
			if (i == NG_P_COUNT)
				return ng_fail(err, "unknown policy value \"%s.%s\": not known to this "
				               "nodegate (a value of a newer version, or a misspelling; "
				               "`nodegate policy` lists the values it knows)",
				               sec->string, kv->string);
			if (set_param(&next, i, kv, err) < 0)
				return -1;
			next.from_file[i] = true;
		}
	}
	if (!(next.warn <= next.block))
		return ng_fail(err, "gate.warn (%g) must not exceed gate.block (%g)", next.warn, next.block);

	*p = next;
	return 0;
}

const char *ng_policy_warning(const ng_policy *p, size_t k)
{
	size_t seen = 0;
	if (p->from_file[NG_P_REQUIRED_DIAG] && p->n_required_diag == 0 && seen++ == k)
		return "gate.required_diag is []: no DCGM diagnostic is required, so a run whose "
		       "diagnostics failed or never ran is judged on its numbers alone";
	return NULL;
}
