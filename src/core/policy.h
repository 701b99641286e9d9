/* Every constant of the decision rule, as a named policy value.
 *
 * Defaults are the fabric-gate runbook's (and, for the class template, the
 * design's idea of a class). A policy file (JSON) overrides any
 * of them; each value remembers where it came from so `nodegate policy` can
 * say why the gate behaved as it did. */
#ifndef NODEGATE_CORE_POLICY_H
#define NODEGATE_CORE_POLICY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/strbuf.h"

#define NG_DIAG_MAX 16
#define NG_DIAG_NAME_MAX 64
#define NG_TEMPLATE_MAX 256
#define NG_FLOORS_MAX 64
/* GPUs, CPU, memory, fabric ports and software identity (docs/identity.md). */
#define NG_DEFAULT_CLASS_TEMPLATE                                                      \
	"[{gpu.count}x{gpu.model|gpu.device_id}/][{cpu.model}x{cpu.sockets}/]{memory.gib}GiB" \
	"[/{ib.ports}ib]/{kernel.release}[/nvidia-{gpu.driver}][/{container.digest}]"

enum ng_policy_param {
	NG_P_WARN,
	NG_P_BLOCK,
	NG_P_FAST,
	NG_P_SLOW,
	NG_P_NOISE_SIGMAS,
	NG_P_UNSTABLE_CV_MULTIPLE,
	NG_P_BIMODAL_FRACTION,
	NG_P_REQUIRED_DIAG,
	NG_P_DIAG_EXEMPT_DOMAINS,
	NG_P_DIAG_EXEMPT_METRICS,
	NG_P_COHORT_MIN,
	NG_P_COHORT_MAJORITY,
	NG_P_COHORT_DROP_LIMIT,
	NG_P_CLEAR_AFTER,
	NG_P_ESCALATE_AFTER,
	NG_P_CLASS_TEMPLATE,
	NG_P_FLAG_FRACTION,
	NG_P_MIN_BASELINE_NODES,
	NG_P_WARN_RECHECK_HOURS,
	NG_P_BASELINE_WINDOW_DAYS,
	NG_P_BASELINE_MAX_AGE_HOURS,
	NG_P_BASELINE_REGROW,
	NG_P_COHORT_WINDOW_HOURS,
	NG_P_COHORT_LOCAL_MINUTES,
	NG_P_RELEASE_PASSES,
	NG_P_BREAKER_SHARE,
	NG_P_BREAKER_COUNT,
	NG_P_BREAKER_WINDOW_HOURS,
	NG_P_BREAKER_TAIL,
	NG_P_BREAKER_CLEAR_RUNS,
	NG_P_EXCLUSIVE_MAX_RUNNABLE,
	NG_P_BIMODAL_LOW_MODE,
	NG_P_UNSTABLE_REPEAT,
	NG_P_UNSTABLE_WINDOW,
	NG_P_SMALL_CLASS_MIN_NODES,
	NG_P_SMALL_CLASS_TAIL,
	NG_P_FAMILY_PARTS,
	NG_P_SHARED_PATHS,
	NG_P_DRIFT_FRACTION,
	NG_P_SPREAD_SIGMAS,
	NG_P_OWN_LEVEL_RUNS,
	NG_P_OWN_LEVEL_SIGMAS,
	NG_P_OWN_LEVEL_DROP,
	NG_P_OWN_LEVEL_RECENT,
	NG_P_HEALTH_DEADLINE_SECONDS,
	NG_P_HEALTH_RETIRED_PAGES_PER_DAY,
	NG_P_HEALTH_REMAPPED_ROWS_PER_DAY,
	NG_P_HEALTH_PCIE_REPLAYS_PER_HOUR,
	NG_P_HEALTH_NVLINK_ERRORS_PER_HOUR,
	NG_P_HEALTH_REPLAYS_ABSOLUTE,
	NG_P_HEALTH_CLOCK_RATIO_UNDER_LOAD,
	NG_P_HEALTH_RATE_MIN_HOURS,
	NG_P_HEALTH_UNRESPONSIVE_CHECKS,
	NG_P_HEALTH_ECC_CORRECTED_VOLATILE,
	NG_P_HEALTH_MEMORY_USED_SHARE,
	NG_P_HEALTH_IDLE_CLOCK_RATIO,
	NG_P_GPU_MEMORY_SHARE,
	NG_P_GPU_SIBLING_FRACTION,
	NG_P_GPU_SERIES_DROP,
	NG_P_PROLOG_MIN_NODES,
	NG_P_PROLOG_FEATURE,
	NG_P_PROLOG_COMMENT,
	NG_P_LEMON_COUNT,
	NG_P_LEMON_DAYS,
	NG_P_PROBATION_CANARY_JOB,
	NG_P_PROBATION_STRAGGLER_RATIO,
	NG_P_PROBATION_HISTORY_MIN,
	NG_P_COUNT
};

typedef struct {
	double warn;                 /* shortfall that warns, if it clears the noise */
	double block;                /* shortfall that blocks, if it clears the noise */
	double fast;                 /* ratio at or above which a run is implausible */
	double slow;                 /* ratio at or below which a run is implausible */
	double noise_sigmas;         /* noise bar = noise_sigmas * cv / sqrt(n) */
	double unstable_cv_multiple; /* run spread above this many baseline cvs is unstable */
	double bimodal_fraction;     /* share of samples under (1-block)*median that is bimodal */
	size_t n_required_diag;
	char required_diag[NG_DIAG_MAX][NG_DIAG_NAME_MAX];
	/* Records of these domains (a node's own compute, memory or storage
	 * probes) do not carry DCGM diagnostics, so none is required of them.
	 * A record with no domain keeps the runbook's rule. */
	size_t n_diag_exempt_domains;
	char diag_exempt_domains[NG_DIAG_MAX][NG_DIAG_NAME_MAX];
	/* ... and metrics (exact, or a family ending in ".*") of other domains
	 * that nodegate measures and verifies itself: the GPU copy probe's
	 * paths are fabric, and carry no DCGM results either. */
	size_t n_diag_exempt_metrics;
	char diag_exempt_metrics[NG_DIAG_MAX][NG_DIAG_NAME_MAX];
	long cohort_min;             /* fewest cohort members that can excuse a node */
	double cohort_majority;      /* share of the cohort that must be past the warn bar */
	double cohort_drop_limit;    /* cohort drops outside [-limit, limit] invalidate it */
	long clear_after;            /* consecutive passes that clear a block */
	long escalate_after;         /* consecutive warns that become a block */
	char class_template[NG_TEMPLATE_MAX]; /* profile -> class key (docs/identity.md) */
	double flag_fraction;        /* admission flags a metric below this share of the peer median */
	long min_baseline_nodes;     /* fewest nodes a class baseline may be built from */
	long warn_recheck_hours;     /* admitted-warn: hours until the node is screened again */
	long baseline_window_days;   /* accepted runs this recent make a baseline */
	long baseline_max_age_hours; /* an unpinned baseline older than this is rebuilt */
	double baseline_regrow;      /* ... and one whose class has this many times the nodes it was built from */
	long cohort_window_hours;    /* other nodes' runs this recent are the gate's cohort */
	long cohort_local_minutes;   /* ... and a second, time-local cohort: runs this recent (0: none) */
	long release_passes;         /* passes of the failed test that release a quarantine */
	double breaker_share;        /* more than this share of a class quarantined trips the breaker */
	long breaker_count;          /* ... or more than this many nodes */
	long breaker_window_hours;   /* ... within this many hours */
	double breaker_tail;         /* ... and that many quarantines of one metric are this improbable
	                                for the class's size and its own recent rate (judge/breaker.h) */
	long breaker_clear_runs;     /* an event clears itself after this many runs of its metric back
	                                within noise of the baseline (0: only `fleet clear`) */
	long exclusive_max_runnable; /* other runnable tasks a node may have and still be exclusive */
	double bimodal_low_mode;     /* a bimodal run's slow samples must sit at or below this share of
	                                the median to fail admission (judge/admit.h) */
	long unstable_repeat;         /* unstable this often in the window: the node, not the harness */
	long unstable_window;         /* ... among the node's last this many verdicts of the metric */
	long small_class_min_nodes;   /* a class of this many nodes, under min_baseline_nodes, gets a
	                                 small-class baseline (judge/admit.h); 0: none */
	double small_class_tail;      /* ... whose bar a healthy node falls under this rarely */
	long family_parts;            /* a class key's first this many parts name its family, whose
	                                 classes pool their spread for a small class's bar; 0: none */
	size_t n_shared_paths;        /* domains whose path nodes share (a filesystem): a node's */
	char shared_paths[NG_DIAG_MAX][NG_DIAG_NAME_MAX]; /* first drop alone is held, not confirmed */
	double drift_fraction;        /* a rebuilt baseline this far under the pinned one of its class,
	                                 software and metric opens a drift event (judge/attribution.h) */
	double spread_sigmas;         /* the peer bar sits at least this many of the class's node
	                                 spreads (node_mad) under its median (judge/admit.h); 0: off */
	long own_level_runs;          /* a node with this many accepted runs of a metric in its class
	                                 is also judged against its own level (judge/admit.h,
	                                 ng_admit_own_bar); 0: never */
	double own_level_sigmas;      /* ... the bar: this many of its run-to-run spreads under it */
	double own_level_drop;        /* ... and at least this share under it */
	long own_level_recent;        /* ... and the mean of its newest this many runs (this one with
	                                 the accepted ones before it) against the same level; 0, 1: off */

	/* GPU health (judge/gpu_health.h, docs/gpu.md). */
	long health_deadline_seconds;        /* the whole epilog/prolog/health run */
	double health_retired_pages_per_day; /* a faster rise of retired pages is degraded */
	double health_remapped_rows_per_day; /* ... of remapped rows */
	double health_pcie_replays_per_hour; /* ... of PCIe replays */
	double health_nvlink_errors_per_hour; /* ... of NVLink replay, recovery and CRC errors */
	long health_replays_absolute;        /* PCIe replays since reset above this: degraded, no history needed */
	double health_clock_ratio_under_load; /* SM clock below this share of max, busy and limited: reported */
	double health_rate_min_hours;        /* a rate is taken over at least this many hours */
	long health_unresponsive_checks;     /* consecutive checks a GPU is unresponsive (its
	                                        siblings answering) before it is degraded */
	long health_ecc_corrected_volatile;  /* volatile correctable ECC above this: a spike, degraded */
	double health_memory_used_share;     /* GPU memory still allocated after a job above this share */
	double health_idle_clock_ratio;      /* an SM clock at or below this share of its max is at
	                                        its idle floor */

	/* The GPU probes (docs/gpu-probes.md). */
	double gpu_memory_share;     /* share of each GPU's free memory the memory probe takes */
	double gpu_sibling_fraction; /* a GPU or link below this share of its siblings' median stands out */

	/* `admit --prolog` (docs/slurm.md): which jobs have their nodes screened
	 * in the Prolog. Any one of the three asks. */
	long prolog_min_nodes;                   /* a job of this many nodes or more; 0: size never asks */
	char prolog_feature[NG_TEMPLATE_MAX];    /* a job whose --constraint names this feature */
	char prolog_comment[NG_TEMPLATE_MAX];    /* a job whose --comment holds this word */
	double gpu_series_drop;      /* a last third this much below the first third is a falling series */

	/* Repeat offenders and probation (docs/admission.md). */
	long lemon_count;            /* quarantines of a node or GPU within lemon_days that make a lemon */
	long lemon_days;
	char canary_job[NG_TEMPLATE_MAX]; /* the job name that ends a probation; "": the next job */
	double straggler_ratio;      /* a canary job slower than this many times its history's median */
	long probation_history_min;  /* fewest earlier runs of the job that make a history */

	/* Absolute floors (section "floors": {"metric": value}), in the metric's
	 * canonical unit, from what the workload needs. A metric without one is
	 * judged against its peers alone. */
	size_t n_floors;
	struct ng_policy_floor {
		char metric[NG_DIAG_NAME_MAX * 2];
		double value;
	} floors[NG_FLOORS_MAX];

	/* Where each value came from: the built-in default, or source_file. */
	bool from_file[NG_P_COUNT];
	char source_file[256];
} ng_policy;

void ng_policy_default(ng_policy *p);

/* Applies a policy document: {"gate": {...}, "hysteresis": {...},
 * "identity": {...}, "admission": {...}, "health": {...}}. All or
 * nothing: on any error p is unchanged and err names the key and the rule it
 * broke. source is recorded as where the values came from. */
int ng_policy_apply_json(ng_policy *p, const cJSON *doc, const char *source, ng_err *err);
/* The k-th thing a valid policy sets that is probably not what was meant
 * (gate.required_diag set to [] requires no DCGM diagnostic at all), or NULL
 * when there are no more. */
const char *ng_policy_warning(const ng_policy *p, size_t k);

size_t ng_policy_param_count(void);
const char *ng_policy_param_name(size_t i);        /* e.g. "gate.warn" */
const char *ng_policy_param_description(size_t i);
/* The value as JSON text (a number, a string, or an array of names). */
void ng_policy_param_value(const ng_policy *p, size_t i, ng_strbuf *out);
const char *ng_policy_param_source(const ng_policy *p, size_t i); /* "default" or a path */

bool ng_policy_requires_diag(const ng_policy *p, const char *test);
/* The metric's absolute floor, or NaN when the policy sets none. */
double ng_policy_floor(const ng_policy *p, const char *metric);
/* Whether records of this domain are exempt from the required diagnostics. */
bool ng_policy_diag_exempt(const ng_policy *p, const char *domain);
/* domain is in admission.shared_paths. */
bool ng_policy_shared_path(const ng_policy *p, const char *domain);
/* metric is in gate.diag_exempt_metrics, exactly or by a "family.*" entry. */
bool ng_policy_diag_exempt_metric(const ng_policy *p, const char *metric);

#endif
