/* The store: nodegate's memory, one interface over SQLite or PostgreSQL.
 *
 * It keeps measurement records (with the digest of the raw output each was
 * read from), class baselines, admission verdicts, node states, quarantine
 * cases, overrides, hysteresis state, fleet-regression events and an
 * append-only audit log whose entries are hash-chained. Every change that an
 * operator may later ask "why?" about is written in the same transaction as
 * its audit entry, so the log and the state never disagree.
 *
 * Time is always passed in (unix seconds, UTC): the store has no clock, so
 * tests and replays decide what "now" is. Strings handed out live in the
 * caller's structs; nothing returned points into the store. */
#ifndef NODEGATE_STORE_STORE_H
#define NODEGATE_STORE_STORE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "judge/baseline.h"
#include "store/sql.h"

#define NG_STORE_SCHEMA_VERSION 16

typedef struct ng_store ng_store;

/* Copies src into a fixed field of cap bytes, truncating; NULL copies "". */
void ng_copy(char *dst, size_t cap, const char *src);

/* ---- opening -------------------------------------------------------------------- */

/* Where the store lives when nothing says: /var/lib/nodegate/nodegate.db as
 * root, else $XDG_STATE_HOME/nodegate/nodegate.db (~/.local/state/...). */
int ng_store_default_path(ng_strbuf *out, ng_err *err);

/* spec: "postgresql://..." or "postgres://..." for PostgreSQL, anything else
 * a SQLite file path; NULL means $NODEGATE_STORE, else the default path.
 * Creates the SQLite file and its last directory when missing, creates or
 * migrates the schema, and refuses (clearly) a file that is not a database,
 * a database some other program owns, and one a newer nodegate wrote. */
int ng_store_open(const char *spec, ng_store **out, ng_err *err);
void ng_store_close(ng_store *st);
/* A new SQLite store at path for one process that throws it away (the fleet
 * simulator's): what it holds and answers is what ng_store_open's would, but
 * it is not kept safe from a crash (ng_sql_sqlite_scratch) and its audit
 * head is anchored nowhere. */
int ng_store_open_scratch(const char *path, ng_store **out, ng_err *err);
/* Every transaction between these two is one (SQLite: a savepoint each in
 * one transaction): for a scratch store that takes many small writes. */
int ng_store_batch_begin(ng_store *st, ng_err *err);
int ng_store_batch_end(ng_store *st, ng_err *err);
/* The path or URI (password hidden) the store was opened from. */
const char *ng_store_where(const ng_store *st);
ng_sql *ng_store_sql(ng_store *st);
/* The digest of the policy this process decides with (core/policy_digest.h):
 * kept with every decision and quarantine case written through this handle,
 * so their outcomes can be counted per policy version. "" records none. */
void ng_store_set_policy(ng_store *st, const char *digest);
/* The class of the last failure (full disk, unreachable, corrupt...). */
ng_sql_error ng_store_last_error(ng_store *st);
/* SQLite: PRAGMA integrity_check; PostgreSQL: the schema is in place. */
int ng_store_check(ng_store *st, ng_strbuf *report, ng_err *err);

/* ---- records -------------------------------------------------------------------- */

typedef struct {
	const char *node, *class_key, *software, *domain, *metric, *unit;
	const char *node_name;  /* the node's scheduler name, or NULL: kept in node_names */
	const char *run_id;     /* the admission run or import batch it came from */
	const char *raw_digest; /* sha256 of the raw tool output, when kept */
	int64_t taken_at;
	const double *samples; /* finite numbers only; NULL/0 when none */
	size_t n_samples;
	bool idle;     /* measured on a reserved, idle node */
	bool accepted; /* the run it belongs to admitted the node */
	const char *body;    /* the record as JSON text, without its profile */
	const char *profile; /* the node's profile as JSON text, or NULL: kept once per content */
} ng_store_record;

/* Writes n records in one transaction; ids (optional) receives their ids.
 * Either all are stored and acknowledged, or none. */
int ng_store_put_records(ng_store *st, const ng_store_record *recs, size_t n, int64_t *ids,
                         ng_err *err);

typedef struct {
	const char *run_id;
	int64_t taken_at;
	bool idle, accepted;
	/* When set, the batch is audited (records.ingest) in its transaction:
	 * records stored as accepted decide what later baselines are. */
	const char *actor;
} ng_store_ingest;

/* Stores an array of record objects (docs/record.md) in one transaction.
 * Each must name its node, class, metric and domain (or have a registered
 * metric); `software` is read from the record, "" when absent; samples that
 * are not finite positive numbers are left out of the baseline copy (the
 * record's body keeps them as they were). ids (optional) gets n ids. */
int ng_store_put_json_records(ng_store *st, const cJSON *records, const ng_store_ingest *how,
                              int64_t *ids, ng_err *err);
/* The digests of the raw tool output a record was read from: the
 * harness's tool.runs[].stdout_sha256 (comma-separated for repeats), or
 * tool.raw_sha256. NULL (out empty) when it kept none. */
const char *ng_store_raw_digest(const cJSON *rec, ng_strbuf *out);

/* Marks records accepted: the run admitted the node and these measured it
 * soundly, so they may join the class's baselines. */
int ng_store_accept_records(ng_store *st, const int64_t *ids, size_t n, ng_err *err);
int64_t ng_store_count_records(ng_store *st, ng_err *err);

/* Accepted runs of idle nodes for one (class, software, metric) taken at or
 * after `since` and after the class's last retirement, as baseline runs. */
typedef struct {
	ng_baseline_run *runs;
	size_t n, cap;
	double *samples;
	size_t n_samples, samples_cap;
	char *names; /* node ids, NUL-separated */
	size_t names_len, names_cap;
	int64_t newest; /* newest taken_at among them */
} ng_store_runs;

int ng_store_baseline_runs(ng_store *st, const char *class_key, const char *software,
                           const char *metric, int64_t since, ng_store_runs *out, ng_err *err);
/* The same of one node alone, under every software identity of its class
 * and since its last quarantine case opened: its own history, what its own
 * level is judged from (judge/admit.h, ng_admit_own_bar). Here each run's
 * `node` names the software identity it ran under (the node is the one
 * asked for). */
int ng_store_node_baseline_runs(ng_store *st, const char *node, const char *class_key,
                                const char *metric, int64_t since, ng_store_runs *out,
                                ng_err *err);
void ng_store_runs_free(ng_store_runs *r);

/* The distinct (class, software, metric, unit) of accepted idle runs taken
 * at or after since, optionally of one class: what baselines can be built
 * for. Each key is four NUL-terminated strings in a row; *keys is one
 * malloc'd block the caller frees. */
int ng_store_baseline_keys(ng_store *st, const char *class_key, int64_t since, char **keys,
                           size_t *n, ng_err *err);
/* Distinct nodes of a class with a record taken at or after since. */
int64_t ng_store_count_class_nodes(ng_store *st, const char *class_key, int64_t since,
                                   ng_err *err);

/* The latest run median of each other node of the class for a metric since
 * `since`, as drops against median (1 - value/median): the cohort the gate
 * uses to tell a node's fault from a shared one. Caller frees *drops. */
int ng_store_cohort_drops(ng_store *st, const char *class_key, const char *software,
                          const char *metric, const char *exclude_node, int64_t since,
                          double median, double **drops, size_t *n, ng_err *err);

/* Each node's newest run of a (class, software, metric) taken at or after
 * since, by node: its run id, when, its median and the profile its record
 * carried (NULL when none): what a partial regression is attributed from
 * (flow/attribution.c). Free with ng_store_node_runs_free. */
typedef struct {
	char node[128], run_id[80];
	int64_t taken_at;
	double median;
	char *profile; /* JSON object text, or NULL */
} ng_store_node_run;
int ng_store_node_runs(ng_store *st, const char *class_key, const char *software,
                       const char *metric, int64_t since, ng_store_node_run **out, size_t *n,
                       ng_err *err);
void ng_store_node_runs_free(ng_store_node_run *runs, size_t n);

/* ---- baselines ------------------------------------------------------------------ */

typedef struct {
	int64_t id;
	char class_key[256], software[80], metric[96], unit[24];
	char status[32]; /* "ok", or why there is none ("too-few-nodes", ...) */
	double median, cv, node_mad;
	int64_t n_nodes, n_runs, n_samples, min_nodes;
	int64_t built_at, window_start, window_end;
	char pinned_name[64]; /* empty unless pinned */
	int64_t pinned_at;
	int64_t expired_at; /* 0 while current */
	char expired_reason[160];
	char family[256]; /* the class's family (admission.family_parts); "" none */
} ng_store_baseline;

/* Stores a baseline (b->id is set) with its audit entry. */
int ng_store_put_baseline(ng_store *st, ng_store_baseline *b, const char *actor, ng_err *err);
/* The baseline to judge against: the newest pinned one that has not
 * expired, else the newest unexpired "ok" one. 1 found, 0 none, -1 error. */
int ng_store_current_baseline(ng_store *st, const char *class_key, const char *software,
                              const char *metric, ng_store_baseline *out, ng_err *err);
int ng_store_get_baseline(ng_store *st, int64_t id, ng_store_baseline *out, ng_err *err);
/* The newest pinned "ok" baseline of (class, software, metric, unit),
 * expired or not: what a rebuild's drift is measured from. 1, 0 none, -1. */
int ng_store_pinned_baseline(ng_store *st, const char *class_key, const char *software,
                             const char *metric, const char *unit, ng_store_baseline *out,
                             ng_err *err);
/* Every baseline, newest first, optionally of one class and only current ones. */
int ng_store_list_baselines(ng_store *st, const char *class_key, bool current_only,
                            ng_store_baseline **out, size_t *n, ng_err *err);
/* The "ok" baselines of a family for one metric, not expired, built at or
 * after since or pinned: what a small class's family pools (judge/admit.h,
 * ng_admit_pool_add). Ordered by class, software, newest first. */
int ng_store_family_baselines(ng_store *st, const char *family, const char *metric,
                              int64_t since, ng_store_baseline **out, size_t *n, ng_err *err);
int ng_store_pin_baseline(ng_store *st, int64_t id, const char *name, int64_t at,
                          const char *actor, ng_err *err);
/* Expires the class's current baselines (of one metric, or all when NULL)
 * and retires every sample of the class taken before `at` from new ones: a
 * planned software or firmware change makes them describe a configuration
 * that no longer exists. Returns the number of baselines expired. */
int64_t ng_store_expire_baselines(ng_store *st, const char *class_key, const char *metric,
                                  const char *reason, int64_t at, const char *actor,
                                  ng_err *err);

/* ---- verdicts and node states --------------------------------------------------- */

typedef struct {
	const char *stage; /* "first" or "confirm" */
	const char *domain, *metric, *unit;
	double value, baseline_median, floor, bar, percent;
	const char *gate_verdict; /* the gate's effective verdict */
	const char *status;       /* the admission status of the metric */
	int64_t record_id;
} ng_store_verdict;

typedef struct {
	char node[128], class_key[256], software[80];
	char node_name[128]; /* the scheduler name; "" when not known */
	char outcome[24]; /* admitted, admitted-warn, held, suspect, quarantined */
	int64_t updated_at, recheck_at; /* recheck_at 0: none scheduled */
	int64_t duration_ms;            /* the run's wall time; 0: not measured */
	char run_id[80];
} ng_store_node_state;

/* Stores a run's verdict lines and the node's new state, with an audit
 * entry carrying detail (a JSON object's text, may be NULL). */
int ng_store_put_decision(ng_store *st, const ng_store_node_state *state,
                          const ng_store_verdict *lines, size_t n, const char *detail,
                          const char *actor, ng_err *err);
/* Many decisions in one transaction, each written as ng_store_put_decision
 * writes it (verdict lines, node state, decision row, audit entry): for
 * replays and imports, where a transaction per decision would be the cost. */
typedef struct {
	const ng_store_node_state *state;
	const ng_store_verdict *lines;
	size_t n_lines;
	const char *detail;
} ng_store_decision;
int ng_store_put_decisions(ng_store *st, const ng_store_decision *d, size_t n, const char *actor,
                           ng_err *err);
/* 1 found, 0 never seen. */
int ng_store_get_node_state(ng_store *st, const char *node, ng_store_node_state *out, ng_err *err);

/* The hysteresis state of one (node, metric): raw verdict names oldest
 * first, and the blocked flag. history is a JSON array's text. */
int ng_store_get_hysteresis(ng_store *st, const char *node, const char *metric,
                            ng_strbuf *history, bool *blocked, ng_err *err);
int ng_store_put_hysteresis(ng_store *st, const char *node, const char *metric,
                            const char *history, bool blocked, int64_t at, ng_err *err);

/* ---- quarantine cases and overrides --------------------------------------------- */

typedef struct {
	int64_t id;
	char node[128], class_key[256], software[80];
	char node_name[128]; /* the scheduler name it was opened under; "" when not known */
	char domain[32], metric[96];
	int64_t opened_at;
	char release_condition[512];
	int64_t passes;     /* passing runs of the failed test since opened_at */
	int64_t retries;    /* runs of it since opened_at, passing or not */
	int64_t closed_at;  /* 0 while open */
	char closed_by[64], close_reason[256];
	char *evidence;     /* JSON object text: failed metrics, raw digests, cohort, runs */
} ng_store_case;

void ng_store_case_free(ng_store_case *c);
int ng_store_open_case(ng_store *st, ng_store_case *c, const char *actor, ng_err *err);
/* The node's open case: 1 found, 0 none. */
int ng_store_open_case_of(ng_store *st, const char *node, ng_store_case *out, ng_err *err);
int ng_store_get_case(ng_store *st, int64_t id, ng_store_case *out, ng_err *err);
/* Cases newest first; only open ones unless all. Free each, then the array. */
int ng_store_list_cases(ng_store *st, bool all, ng_store_case **out, size_t *n, ng_err *err);
/* A later run of the failed test: counts a retry, and a pass when passed. */
int ng_store_case_retry(ng_store *st, int64_t id, bool passed, const char *run_id, int64_t at,
                        ng_err *err);
int ng_store_close_case(ng_store *st, int64_t id, int64_t at, const char *by, const char *reason,
                        ng_err *err);
/* How many of a node's verdicts of one metric, at one stage ("first",
 * "confirm") with one status ("flagged"), were made in [from, until). */
int64_t ng_store_count_node_verdicts(ng_store *st, const char *node, const char *metric,
                                     const char *stage, const char *status, int64_t from,
                                     int64_t until, ng_err *err);
/* How many of a node's verdicts of one metric, at either stage, the gate
 * called gate_verdict ("unstable"), made in [from, until). */
int64_t ng_store_count_gate_verdicts(ng_store *st, const char *node, const char *metric,
                                     const char *gate_verdict, int64_t from, int64_t until,
                                     ng_err *err);
/* The status of a node's newest verdict of one metric at one stage made
 * before a time, of a record under one software identity, in status (cap
 * bytes): 1 found, 0 none (status ""), -1. */
int ng_store_last_node_status(ng_store *st, const char *node, const char *software,
                              const char *metric, const char *stage, int64_t before, char *status,
                              size_t cap, ng_err *err);
/* Open cases of a class opened at or after since (distinct nodes). */
/* Distinct nodes with a case of (class, software, metric) opened in [from, until). */
int64_t ng_store_count_metric_cases(ng_store *st, const char *class_key, const char *software,
                                    const char *metric, int64_t from, int64_t until, ng_err *err);
int64_t ng_store_count_recent_cases(ng_store *st, const char *class_key, int64_t since,
                                    ng_err *err);

typedef struct {
	int64_t id;
	char node[128], reason[256], by[64];
	int64_t created_at, expires_at, revoked_at;
} ng_store_override;

int ng_store_put_override(ng_store *st, ng_store_override *o, ng_err *err);
/* The node's newest override in force at `at`: 1 found, 0 none. */
int ng_store_active_override(ng_store *st, const char *node, int64_t at, ng_store_override *out,
                             ng_err *err);

/* ---- fleet-regression events (the circuit breaker) ------------------------------ */

/* An event is about one (class, software identity, metric): what moved.
 * metric "" is an event opened before events had one (schema 4 and older),
 * and stands for the whole class. clean_runs: runs of the class, software
 * and metric in a row, of the nodes it names, that measured within noise
 * since it opened (it clears itself at admission.breaker_clear_runs); nodes:
 * the nodes it was opened on and those whose quarantine it declined since. */
typedef struct {
	int64_t id;
	char class_key[256], software[80], metric[128];
	/* "breaker" (the class's metric moved: its quarantines are declined),
	 * "partial" (part of the class moved; detail.attribution names what
	 * those nodes share, and only their quarantines are declined), "drift"
	 * (a rebuilt baseline under its pinned one: nothing is declined). ""
	 * when opening: "breaker". */
	char kind[16];
	int64_t opened_at, cleared_at, clean_runs;
	char cleared_by[64], clear_reason[256];
	char *nodes; /* JSON array text */
	char *detail; /* JSON object text */
} ng_store_fleet_event;

void ng_store_fleet_event_free(ng_store_fleet_event *e);
int ng_store_open_fleet_event(ng_store *st, ng_store_fleet_event *e, const char *actor,
                              ng_err *err);
/* The class's newest open event: 1 found, 0 none. */
int ng_store_fleet_event_of(ng_store *st, const char *class_key, ng_store_fleet_event *out,
                            ng_err *err);
/* Every open event of the class, newest first. */
int ng_store_fleet_events_of_class(ng_store *st, const char *class_key,
                                   ng_store_fleet_event **out, size_t *n, ng_err *err);
/* Sets an open event's count of clean runs in a row and, when nodes is not
 * NULL, its nodes (a JSON array text). */
int ng_store_fleet_event_update(ng_store *st, int64_t id, int64_t clean_runs, const char *nodes,
                                ng_err *err);
/* Replaces an open event's detail (a JSON object's text): a partial
 * regression's attribution as the rollout grows. */
int ng_store_fleet_event_set_detail(ng_store *st, int64_t id, const char *detail, ng_err *err);
int ng_store_list_fleet_events(ng_store *st, bool all, ng_store_fleet_event **out, size_t *n,
                               ng_err *err);
int ng_store_clear_fleet_event(ng_store *st, int64_t id, int64_t at, const char *by,
                               const char *reason, ng_err *err);

/* ---- configuration errors of the GPU checks (cli/config_error.h) ----------------- */

typedef struct {
	char node[256], verb[32], kind[16], message[512];
	int64_t at;
	int64_t count; /* ng_store_config_errors_since: errors of this node, verb and kind */
} ng_store_config_error;

int ng_store_put_config_error(ng_store *st, const ng_store_config_error *e, ng_err *err);
/* Per node, verb and kind, the errors at or after `since`: how many, and the
 * newest one's time and message; newest first. */
int ng_store_config_errors_since(ng_store *st, int64_t since, ng_store_config_error **out,
                                 size_t *n, ng_err *err);

/* ---- GPU counters ------------------------------------------------------------------ */

/* One GPU's wear counters at one time; -1 for a counter not read then. */
typedef struct {
	char uuid[96];
	int64_t at;
	int64_t retired_pages, remapped_rows, pcie_replays, nvlink_errors;
} ng_store_gpu_counters;

int ng_store_put_gpu_counters(ng_store *st, const char *node, const ng_store_gpu_counters *c,
                              size_t n, ng_err *err);
/* The sample to take a rate against: the newest at or before `before`, or
 * when there is none, the oldest earlier than `now`. 1 found, 0 none. */
int ng_store_gpu_counters_past(ng_store *st, const char *node, const char *uuid, int64_t before,
                               int64_t now, ng_store_gpu_counters *out, ng_err *err);

/* ---- node names ------------------------------------------------------------------ */

/* A node has a stable id (records' "node": machine id, DMI) and a scheduler
 * name (SLURMD_NODENAME, the short host name, the Kubernetes node name).
 * Every write that knows both keeps the pair; a NODE an operator types is
 * either. */
int ng_store_put_node_name(ng_store *st, const char *node, const char *name, int64_t at,
                           ng_err *err);

typedef struct {
	char id[128];   /* the stable id: what the store keys the node by */
	char name[128]; /* its scheduler name; "" when the store knows none */
	char candidates[512]; /* ambiguous: "id (name), id (name)" */
} ng_store_node_ref;

/* What arg names: 1 one node (out->id, out->name), 0 none the store knows
 * by name (out->id is arg itself, so an id from before names were kept
 * still works), 2 more than one (out->candidates lists them: the caller
 * refuses and shows them), -1 error. */
int ng_store_resolve_node(ng_store *st, const char *arg, ng_store_node_ref *out, ng_err *err);
/* The node's scheduler name: 1 found (name set), 0 none known (name ""). */
int ng_store_node_name_of(ng_store *st, const char *node, char *name, size_t cap, ng_err *err);

/* ---- GPU checks ------------------------------------------------------------------ */

/* The node's newest GPU check as its gpu.health records keep it: the mode
 * (epilog, prolog, health), whether it drained (exit 1), and when. 1 found,
 * 0 none (or none from a nodegate that recorded the drain). */
typedef struct {
	char mode[16];
	bool drain;
	int64_t at;
} ng_store_gpu_check;
int ng_store_last_gpu_check(ng_store *st, const char *node, ng_store_gpu_check *out, ng_err *err);

/* ---- each node's GPUs between checks (schema 8) ------------------------------------- */

/* One GPU as the node's checks last saw it. */
typedef struct {
	char uuid[96], bus[16];
	int64_t minor;      /* -1 unknown */
	int64_t first_seen, last_seen;
	int64_t unresponsive; /* consecutive checks it did not answer while its siblings did */
	int64_t hw_thermal;   /* consecutive checks it was in HW thermal slowdown */
	/* the last check that judged it (for metrics): when, which verb, what it
	 * found, its reasons as "signal=severity" joined by spaces */
	int64_t index, checked_at;
	char mode[16], severity[16], signals[512];
	bool listed; /* NVML listed it in that check (false: missing, its row only judged) */
} ng_store_gpu;

/* The node's known GPUs (*out malloc'd, free() it). */
int ng_store_gpus_of(ng_store *st, const char *node, ng_store_gpu **out, size_t *n, ng_err *err);
/* Every node's (node NULL) or one node's GPUs with their node names, for
 * metrics: nodes[i] is a malloc'd array of NUL-terminated names, 256 each. */
int ng_store_all_gpus(ng_store *st, const char *node, ng_store_gpu **out, char (**nodes)[256],
                      size_t *n, ng_err *err);

/* A node's last GPU check run of each mode, for metrics. */
typedef struct {
	char node[256], mode[16], outcome[16];
	int64_t at;
} ng_store_gpu_check_run;
int ng_store_last_gpu_check_runs(ng_store *st, const char *node, ng_store_gpu_check_run **out,
                                 size_t *n, ng_err *err);
/* Records each GPU (first_seen is kept from its first record) and forgets
 * the UUIDs in gone (GPUs replaced at their bus: their history ends). */
int ng_store_put_gpus(ng_store *st, const char *node, const ng_store_gpu *g, size_t n,
                      const char *const *gone, size_t n_gone, ng_err *err);
/* Removes a GPU taken out of the node on purpose from its inventory (so the
 * checks no longer call it missing), with an audit entry "gpu.forget"
 * (subject "gpu:NODE/UUID", detail a JSON object: the row and the reason)
 * in the same transaction. -1 with err (class NG_ERR_USAGE) when the node's
 * inventory has no such GPU. */
int ng_store_forget_gpu(ng_store *st, const char *node, const char *uuid, int64_t at,
                        const char *actor, const char *detail, ng_err *err);

/* The newest kernel-log time judged for each of a node's GPU buses, within
 * one boot: Xids at or before it were judged by an earlier check. */
typedef struct {
	char bus[16];
	char boot_id[40];
	int64_t at_usec;
} ng_store_kmsg_mark;

int ng_store_kmsg_marks(ng_store *st, const char *node, ng_store_kmsg_mark **out, size_t *n,
                        ng_err *err);
int ng_store_put_kmsg_marks(ng_store *st, const char *node, const ng_store_kmsg_mark *m, size_t n,
                            int64_t now, ng_err *err);

/* One epilog, prolog or health run, whatever its outcome (unknown and n/a
 * included): a fleet-wide monitoring failure shows as many nodes unknown at
 * once, never as healthy nodes. */
int ng_store_put_gpu_check_run(ng_store *st, const char *node, const char *mode,
                               const char *outcome, int64_t at, const char *reason, ng_err *err);
/* The same, with what the check judged from (schema 13): readings is the
 * text flow/gpu_readings.h writes, policy the digest of the policy that
 * judged them, and policy_text its text, kept under the digest when the
 * store has none yet. readings NULL keeps none. One transaction. */
int ng_store_put_gpu_check_run_readings(ng_store *st, const char *node, const char *mode,
                                        const char *outcome, int64_t at, const char *reason,
                                        const char *policy, const char *policy_text,
                                        const char *readings, ng_err *err);

/* ---- the audit log -------------------------------------------------------------- */

/* Appends one entry. Used inside a write transaction the caller holds
 * (in_tx true), or in a transaction of its own. */
int ng_store_audit(ng_store *st, bool in_tx, int64_t at, const char *actor, const char *action,
                   const char *subject, const char *detail, ng_err *err);

typedef struct {
	int64_t entries;
	int64_t first_bad; /* seq of the first entry that fails, 0 when none */
	char problem[256];
	char head[65]; /* the hash of the last entry: keep it elsewhere to anchor the log */
	/* The anchor beside the store (or under the state directory): the entry
	 * it names, 0 when there is none. */
	int64_t anchor_seq;
	/* Rows of overrides, baselines, cases and node states checked against
	 * the digests the chain recorded, and how many differ. */
	int64_t rows, rows_bad;
	char state_problem[320]; /* the first row that differs, "" when none */
} ng_store_audit_report;

/* Where this store's audit head is anchored (a file path). */
const char *ng_store_anchor_path(ng_store *st);

/* Walks the whole chain: finds any entry edited, removed or reordered, a
 * tail cut below the anchored head, and any covered row that is not what
 * the chain last recorded of it. Returns 0 when it verified, 1 when it found
 * a break (report says where), -1 on error. */
int ng_store_audit_verify(ng_store *st, ng_store_audit_report *rep, ng_err *err);
/* Entries newest first, at most limit, as a JSON array. */
cJSON *ng_store_audit_list(ng_store *st, int64_t limit, const char *subject, ng_err *err);

#endif
