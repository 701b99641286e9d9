/* The fleet report's model: what `nodegate report` shows, apart from how it
 * is drawn (flow/report_doc.h: HTML, SVG, JSON).
 *
 * report_model.c reads the store into struct ng_report (one snapshot);
 * report_model_hours.c adds GPU-hours from job accounting; report_model_fr.c
 * the false rejects and later stragglers; report_model_map.c is the name ->
 * index table the model and its writers use. Nothing here prints: what
 * could not be read or shown is one of the report's notes. */
#ifndef NODEGATE_FLOW_REPORT_MODEL_H
#define NODEGATE_FLOW_REPORT_MODEL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "flow/ctx.h"
#include "judge/false_reject.h"
#include "judge/gpu_hours.h"
#include "store/store.h"

/* ---- report_model_map.c: strings to dense indexes ------------------------------------- */

typedef struct {
	char **keys;  /* index -> key (owned) */
	size_t n, cap;
	size_t *slots; /* open addressing: index + 1, 0 empty */
	size_t n_slots;
} ng_rmap;

/* The key's index, or -1. */
long ng_rmap_find(const ng_rmap *m, const char *key);
/* The key's index, added when new; -1 when out of memory. */
long ng_rmap_add(ng_rmap *m, const char *key);
void ng_rmap_free(ng_rmap *m);

/* ---- the report's content ----------------------------------------------------------- */

struct ng_rnode {
	char *name;          /* its scheduler name, else the host name its profile gives, else
	                      * the store's node id: people read host names */
	char id[128];        /* the store's stable id; "" when only a name is known */
	long cls;            /* index into classes, -1 when unknown */
	char outcome[24];    /* node_states: admitted, admitted-warn, held, suspect, quarantined; "" */
	int64_t state_at;
	int64_t case_id;     /* an open quarantine case, 0 none */
	bool flagged;        /* below the bar in some plotted metric */
	size_t epilog_faults, health_faults, quarantines;
	ng_gh_tally gh;
	bool lemon;          /* a repeat offender now (flow/lemon.h): never released automatically */
	size_t lemon_count;   /* its quarantines in the policy's window */
};

struct ng_rclass {
	size_t n_nodes;           /* nodes whose latest state is of this class */
	size_t recent_quarantines; /* cases opened within the breaker window */
	size_t open_cases;
	long open_event;          /* index into events of an open fleet event, -1 none */
	char software[80];        /* the newest software identity seen */
	ng_gh_tally gh;
};

struct ng_rpoint {
	size_t node;
	double value;   /* the node's recent median */
	size_t runs;    /* runs it is the median of */
};

struct ng_rseries {
	size_t cls;
	char metric[96], unit[24];
	double median;       /* the baseline median (NaN: none) */
	char software[80];   /* the baseline's software identity */
	int64_t baseline_id, baseline_nodes, baseline_built;
	char baseline_status[32];
	double prev_median;  /* another software identity's baseline, NaN none */
	char prev_software[80];
	double floor, bar;   /* floor NaN when the policy sets none */
	struct ng_rpoint *pts;
	size_t n_pts, cap;
	size_t n_flagged;
};

struct ng_rcase {
	ng_store_case c;
	char policy[32];
	char hw_before[65], hw_after[65];
	ng_case_class klass;
	size_t node; /* index into nodes */
	/* report_model_truth.c: what a "possible false reject" must not hide */
	bool in_fleet_event;       /* opened within a fleet-regression event of its class */
	const char *after_release; /* NULL, or what the node did after (a repeat, a fault) */
};

struct ng_revent {
	ng_store_fleet_event e;
	char prev_software[80]; /* the class's software before e's, "" none */
	int64_t software_first; /* when e's software was first seen in the class, 0 unknown */
	bool software_changed;  /* e's software appeared within 3 days before it opened */
};

/* One day of the timeline. */
enum { NG_RDAY_ADMITTED, NG_RDAY_WARN, NG_RDAY_HELD, NG_RDAY_SUSPECT, NG_RDAY_QUARANTINED,
       NG_RDAY_OUTCOMES };
struct ng_rday {
	size_t outcomes[NG_RDAY_OUTCOMES];
	size_t gpu_faults; /* epilog/health degraded or fatal */
};

struct ng_rfr {
	size_t cls;
	char policy[32];
	size_t admissions, straggled;
	size_t quarantines, released_same, released_changed, released_unknown, still_open;
	size_t possible_false_rejects; /* released_same with nothing found on the node since */
};

struct ng_rsw {
	size_t cls;
	char software[80];
	int64_t first, last;
};

/* An admission decision, for the timeline and the straggler count. */
struct ng_rdecision {
	size_t node;
	int64_t at;
	bool admits;   /* admitted or admitted-warn */
	bool accuses;  /* suspect or quarantined: a later finding */
	size_t fr;     /* its (class, policy) row in fr */
};

/* A GPU found degraded or fatal by an epilog, prolog or health check. */
struct ng_rfinding {
	size_t node;
	int64_t at;
	ng_finding_kind kind;
	char job[40];
};

struct ng_report_opts {
	int64_t now, days;
	const char *class_key; /* only this class, or NULL */
	long top;
	int64_t straggle_days;
	int64_t grace_hours;
	int64_t recent_days;   /* a node's plotted value: the median of its runs this recent */
	const char *sacct_file; /* saved `sacct` output, or NULL */
	bool no_sacct;
	const char *store_where;
};

struct ng_report {
	struct ng_report_opts o;
	int64_t since;
	char policy[24];       /* the digest of the policy this report draws its lines with */
	double flag_fraction;
	long breaker_count, breaker_window_hours;
	double breaker_share;
	ng_rmap node_map, class_map;
	long *key_node; /* node_map key -> node index: a node id and its host name meet */
	size_t key_node_cap;
	struct ng_rdecision *dec;
	size_t n_dec, dec_cap;
	struct ng_rfinding *find;
	size_t n_find, find_cap;
	struct ng_rnode *nodes;
	size_t n_nodes, nodes_cap;
	struct ng_rclass *classes;
	size_t classes_cap;
	struct ng_rseries *series;
	size_t n_series, series_cap;
	struct ng_rcase *cases;
	size_t n_cases;
	struct ng_revent *events;
	size_t n_events;
	struct ng_rsw *sw;
	size_t n_sw, sw_cap;
	struct ng_rday *days; /* o.days of them, day 0 the oldest */
	size_t n_days;
	struct ng_rfr *fr;
	size_t n_fr, fr_cap;
	size_t decisions, admissions, straggled;
	/* GPU-hours */
	bool have_jobs;
	char jobs_source[160]; /* "sacct", the file, or why there are none */
	ng_gh_tally gh_total;
	ng_gh_counts gh_counts;
	size_t sacct_bad, jobs_unmatched_nodes;
	/* GPU checks that checked nothing for a configuration error, per node,
	 * verb and kind, in the report's window (store/config_errors) */
	ng_store_config_error *config_errors;
	size_t n_config_errors, config_error_nodes;
	/* GPU checks: each node's last epilog, prolog and health outcome */
	ng_store_gpu_check_run *gpu_runs;
	size_t n_gpu_runs;
	cJSON *notes; /* array of strings: what could not be read or shown */
};

/* report_model.c: the GPU checks as the report shows them. Nodes whose
 * newest check (any mode) says unknown or n/a: a monitoring failure, never
 * healthy nodes. It is one fleet event when at least 2 nodes and a quarter
 * of those checked are in it at once. */
struct ng_gpu_check_summary {
	size_t nodes, failing;
	bool event;
};
void ng_report_gpu_checks(const struct ng_report *r, struct ng_gpu_check_summary *out);

/* report_model.c: nodes, classes, series, cases, events and the timeline.
 * -1 with err set on a store failure. */
int ng_report_load(ng_store *st, const ng_ctx *ctx, struct ng_report *r, ng_err *err);
/* The node's index for a store node id or a host name, adding it when new
 * (-1 out of memory). */
long ng_report_node(struct ng_report *r, const char *key);
void ng_report_free(struct ng_report *r);
/* Nodes the report is about: all of them, or with --class those of it. */
size_t ng_report_nodes_shown(const struct ng_report *r);
void ng_report_note(struct ng_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* report_model_hours.c: GPU-hours from job accounting and the store's findings. */
int ng_report_hours(ng_store *st, struct ng_report *r, ng_err *err);

/* report_model_fr.c: false rejects and later stragglers, per class and policy. */
int ng_report_false_rejects(ng_store *st, struct ng_report *r, ng_err *err);
/* The (class, policy) row of the false-reject table, added when new; -1 OOM. */
long ng_report_fr_row(struct ng_report *r, size_t cls, const char *policy);

/* report_model_truth.c: which cases a fleet-regression event explains, and
 * which released cases were followed by another quarantine or fault (never
 * a possible false reject). Called at the end of ng_report_load. */
void ng_report_truth(struct ng_report *r);

#endif
