/* The store's schema: created on first use, migrated forward, never touched
 * when the database belongs to some other program or to a newer nodegate.
 *
 * One DDL text serves both backends: {ID}, {INT}, {REAL} and {BLOB} become
 * each dialect's spelling. Every migration runs inside the store's write
 * lock, so two processes opening a new store at once create it once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/strbuf.h"
#include "store/store_internal.h"

#define NG_APPLICATION "nodegate"

/* Migration N takes a store at version N-1 to version N. */
static const char *const migrations[] = {
	/* 1: everything */
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	/* A node's profile is stored once per distinct content; records name it. */
	"CREATE TABLE profiles (digest TEXT PRIMARY KEY, body TEXT NOT NULL);"
	"CREATE TABLE records ("
	" id {ID}, node TEXT NOT NULL, class TEXT NOT NULL, software TEXT NOT NULL,"
	" domain TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL,"
	" run_id TEXT, raw_digest TEXT, profile_digest TEXT, taken_at {INT} NOT NULL,"
	" idle {INT} NOT NULL, accepted {INT} NOT NULL, n_samples {INT} NOT NULL,"
	" samples {BLOB}, body TEXT NOT NULL);"
	"CREATE INDEX records_by_baseline ON records (class, software, metric, taken_at);"
	"CREATE INDEX records_by_run ON records (run_id);"
	/* Samples of a class taken before `before` no longer make baselines. */
	"CREATE TABLE retirements (id {ID}, class TEXT NOT NULL, before {INT} NOT NULL,"
	" reason TEXT NOT NULL, by_whom TEXT NOT NULL);"
	"CREATE INDEX retirements_by_class ON retirements (class);"
	"CREATE TABLE baselines ("
	" id {ID}, class TEXT NOT NULL, software TEXT NOT NULL, metric TEXT NOT NULL,"
	" unit TEXT NOT NULL, status TEXT NOT NULL, median {REAL}, cv {REAL}, node_mad {REAL},"
	" n_nodes {INT} NOT NULL, n_runs {INT} NOT NULL, n_samples {INT} NOT NULL,"
	" min_nodes {INT} NOT NULL, built_at {INT} NOT NULL, window_start {INT} NOT NULL,"
	" window_end {INT} NOT NULL, pinned_name TEXT NOT NULL DEFAULT '',"
	" pinned_at {INT} NOT NULL DEFAULT 0, expired_at {INT} NOT NULL DEFAULT 0,"
	" expired_reason TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX baselines_by_key ON baselines (class, software, metric, built_at);"
	"CREATE TABLE verdicts ("
	" id {ID}, run_id TEXT NOT NULL, node TEXT NOT NULL, at {INT} NOT NULL,"
	" stage TEXT NOT NULL, domain TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL,"
	" value {REAL}, baseline_median {REAL}, floor {REAL}, bar {REAL}, percent {REAL},"
	" gate_verdict TEXT NOT NULL, status TEXT NOT NULL, record_id {INT});"
	"CREATE INDEX verdicts_by_node ON verdicts (node, at);"
	"CREATE TABLE node_states ("
	" node TEXT PRIMARY KEY, class TEXT NOT NULL, software TEXT NOT NULL,"
	" outcome TEXT NOT NULL, updated_at {INT} NOT NULL, recheck_at {INT} NOT NULL,"
	" run_id TEXT NOT NULL);"
	"CREATE TABLE hysteresis ("
	" node TEXT NOT NULL, metric TEXT NOT NULL, history TEXT NOT NULL,"
	" blocked {INT} NOT NULL, updated_at {INT} NOT NULL, PRIMARY KEY (node, metric));"
	"CREATE TABLE cases ("
	" id {ID}, node TEXT NOT NULL, class TEXT NOT NULL, software TEXT NOT NULL,"
	" domain TEXT NOT NULL, metric TEXT NOT NULL, opened_at {INT} NOT NULL,"
	" release_condition TEXT NOT NULL, passes {INT} NOT NULL DEFAULT 0,"
	" retries {INT} NOT NULL DEFAULT 0, closed_at {INT} NOT NULL DEFAULT 0,"
	" closed_by TEXT NOT NULL DEFAULT '', close_reason TEXT NOT NULL DEFAULT '',"
	" evidence TEXT NOT NULL);"
	"CREATE INDEX cases_by_node ON cases (node, closed_at);"
	"CREATE INDEX cases_by_class ON cases (class, opened_at);"
	"CREATE TABLE overrides ("
	" id {ID}, node TEXT NOT NULL, reason TEXT NOT NULL, by_whom TEXT NOT NULL,"
	" created_at {INT} NOT NULL, expires_at {INT} NOT NULL,"
	" revoked_at {INT} NOT NULL DEFAULT 0);"
	"CREATE INDEX overrides_by_node ON overrides (node, expires_at);"
	"CREATE TABLE fleet_events ("
	" id {ID}, class TEXT NOT NULL, software TEXT NOT NULL, opened_at {INT} NOT NULL,"
	" cleared_at {INT} NOT NULL DEFAULT 0, cleared_by TEXT NOT NULL DEFAULT '',"
	" clear_reason TEXT NOT NULL DEFAULT '', nodes TEXT NOT NULL, detail TEXT NOT NULL);"
	"CREATE INDEX fleet_events_by_class ON fleet_events (class, cleared_at);"
	/* seq is assigned by the writer, under the write lock, so the chain's
	 * order is the order of seq and nothing else. */
	"CREATE TABLE audit_log ("
	" seq {INT} PRIMARY KEY, at {INT} NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,"
	" subject TEXT NOT NULL, detail TEXT NOT NULL, prev_hash TEXT NOT NULL,"
	" hash TEXT NOT NULL);",
	/* 2: GPU counters between jobs, for rates (NULL: not read that time) */
	"CREATE TABLE gpu_counters ("
	" id {ID}, node TEXT NOT NULL, uuid TEXT NOT NULL, at {INT} NOT NULL,"
	" retired_pages {INT}, remapped_rows {INT}, pcie_replays {INT}, nvlink_errors {INT});"
	"CREATE INDEX gpu_counters_by_gpu ON gpu_counters (node, uuid, at);",
	/* 3: how long each node's last admission run took (NULL: not measured) */
	"ALTER TABLE node_states ADD COLUMN duration_ms {INT};",
	/* 4: every admission decision (node_states keeps only the latest) and the
	 * quarantine cases, each with the digest of the policy that made it, so
	 * false rejects and later stragglers can be counted per policy version
	 * (docs/report.md). IF NOT EXISTS: a store rolled back to an older
	 * version number by hand migrates forward again without tripping here. */
	"CREATE TABLE IF NOT EXISTS decisions ("
	" id {ID}, run_id TEXT NOT NULL, node TEXT NOT NULL, class TEXT NOT NULL,"
	" software TEXT NOT NULL, outcome TEXT NOT NULL, at {INT} NOT NULL,"
	" policy TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX IF NOT EXISTS decisions_by_node ON decisions (node, at);"
	"CREATE INDEX IF NOT EXISTS decisions_by_at ON decisions (at);"
	"CREATE TABLE IF NOT EXISTS case_policies (case_id {INT} PRIMARY KEY, policy TEXT NOT NULL);"
	/* A node's profile before and after a quarantine, read per case. */
	"CREATE INDEX IF NOT EXISTS records_by_node ON records (node, taken_at);",
	/* 5: configuration errors of the GPU checks (a broken policy, a misspelt
	 * option or verb in an Epilog line), which exit 0 rather than drain: kept
	 * so that `nodegate metrics` and `nodegate report` show a fleet-wide
	 * configuration failure instead of a fleet that quietly checks nothing. */
	"CREATE TABLE IF NOT EXISTS config_errors ("
	" id {ID}, node TEXT NOT NULL, verb TEXT NOT NULL, kind TEXT NOT NULL,"
	" message TEXT NOT NULL, at {INT} NOT NULL);"
	"CREATE INDEX IF NOT EXISTS config_errors_by_at ON config_errors (at);",
	/* 6: a node's scheduler name beside its stable id (docs/naming.md):
	 * node_names resolves either to the node; cases, decisions and node
	 * states keep the name they were made under. Rows from before read ''
	 * and are found by their id. */
	"CREATE TABLE IF NOT EXISTS node_names (node TEXT PRIMARY KEY, name TEXT NOT NULL,"
	" seen_at {INT} NOT NULL);"
	"CREATE INDEX IF NOT EXISTS node_names_by_name ON node_names (name);"
	"ALTER TABLE cases ADD COLUMN node_name TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE decisions ADD COLUMN node_name TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE node_states ADD COLUMN node_name TEXT NOT NULL DEFAULT '';",
	/* 7: the digests of the overrides, baselines, cases and node states an
	 * audit entry wrote, covered by its hash (audit_state.c). A store from
	 * before has its rows adopted as they are, in one entry (migrate()). */
	"ALTER TABLE audit_log ADD COLUMN state TEXT NOT NULL DEFAULT '';",
	/* 8: each node's GPUs as its checks saw them (so a GPU NVML stops
	 * listing is missed, and a new UUID at a known bus is a replacement),
	 * the newest kernel-log time judged per GPU bus (an operator's resume
	 * is not undone by the same old Xid), and every GPU check run, unknown
	 * and n/a included. */
	"CREATE TABLE IF NOT EXISTS gpu_inventory ("
	" node TEXT NOT NULL, uuid TEXT NOT NULL, bus TEXT NOT NULL, minor {INT} NOT NULL DEFAULT -1,"
	" first_seen {INT} NOT NULL, last_seen {INT} NOT NULL,"
	" unresponsive {INT} NOT NULL DEFAULT 0, hw_thermal {INT} NOT NULL DEFAULT 0,"
	" gpu_index {INT} NOT NULL DEFAULT -1, checked_at {INT} NOT NULL DEFAULT 0,"
	" mode TEXT NOT NULL DEFAULT '', severity TEXT NOT NULL DEFAULT '',"
	" signals TEXT NOT NULL DEFAULT '', PRIMARY KEY (node, uuid));"
	"CREATE TABLE IF NOT EXISTS kmsg_marks ("
	" node TEXT NOT NULL, bus TEXT NOT NULL, boot_id TEXT NOT NULL, at_usec {INT} NOT NULL,"
	" updated_at {INT} NOT NULL, PRIMARY KEY (node, bus));"
	"CREATE TABLE IF NOT EXISTS gpu_check_runs ("
	" id {ID}, node TEXT NOT NULL, mode TEXT NOT NULL, outcome TEXT NOT NULL, at {INT} NOT NULL,"
	" reason TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX IF NOT EXISTS gpu_check_runs_by_at ON gpu_check_runs (at);",
	/* 9: a fleet-regression event is about one metric of its class and
	 * software (what moved), and counts the runs since that measured it
	 * within noise again, to clear itself. Older events keep metric '':
	 * the whole class, as they were opened. */
	"ALTER TABLE fleet_events ADD COLUMN metric TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE fleet_events ADD COLUMN clean_runs {INT} NOT NULL DEFAULT 0;"
	"CREATE INDEX IF NOT EXISTS cases_by_metric ON cases (class, software, metric, opened_at);",
	/* 10: each policy's text beside its digest (store/policies.h), so a
	 * replay decides again with the policy that decided, who promoted it;
	 * the policy running in shadow beside the enforcing one, and what it
	 * would have done on each admission and GPU check. Decisions from
	 * before name a digest with no text: a replay says so. */
	"CREATE TABLE IF NOT EXISTS policies (digest TEXT PRIMARY KEY, body TEXT NOT NULL,"
	" first_seen {INT} NOT NULL, promoted_by TEXT NOT NULL DEFAULT '',"
	" promoted_at {INT} NOT NULL DEFAULT 0, promote_reason TEXT NOT NULL DEFAULT '');"
	"CREATE TABLE IF NOT EXISTS shadow_policy (id {ID}, digest TEXT NOT NULL,"
	" set_at {INT} NOT NULL, set_by TEXT NOT NULL, reason TEXT NOT NULL,"
	" cleared_at {INT} NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS shadow_outcomes (id {ID}, kind TEXT NOT NULL,"
	" run_id TEXT NOT NULL, node TEXT NOT NULL, class TEXT NOT NULL, policy TEXT NOT NULL,"
	" enforced TEXT NOT NULL, shadow TEXT NOT NULL, rule TEXT NOT NULL, at {INT} NOT NULL);"
	"CREATE INDEX IF NOT EXISTS shadow_outcomes_by_at ON shadow_outcomes (at);",
	/* 11: a released node's probation under a real job (store/probation.c):
	 * one row per release, open until a watched job ends it; the evidence
	 * of the failing domain captured before its confirmation, by run (the
	 * case's evidence names its run); and each job's
	 * runtime as the epilog saw it, the history a canary job is compared
	 * with. */
	"CREATE TABLE IF NOT EXISTS probations ("
	" id {ID}, case_id {INT} NOT NULL, node TEXT NOT NULL, started_at {INT} NOT NULL,"
	" ended_at {INT} NOT NULL DEFAULT 0, outcome TEXT NOT NULL DEFAULT '',"
	" job TEXT NOT NULL DEFAULT '', detail TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX IF NOT EXISTS probations_by_node ON probations (node, ended_at);"
	"CREATE TABLE IF NOT EXISTS case_evidence ("
	" id {ID}, node TEXT NOT NULL, run_id TEXT NOT NULL, domain TEXT NOT NULL,"
	" captured_at {INT} NOT NULL, body TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS case_evidence_by_run ON case_evidence (node, run_id);"
	"CREATE TABLE IF NOT EXISTS job_runs ("
	" node TEXT NOT NULL, job TEXT NOT NULL, job_name TEXT NOT NULL, runtime_s {INT} NOT NULL,"
	" clean {INT} NOT NULL, at {INT} NOT NULL, PRIMARY KEY (node, job));"
	"CREATE INDEX IF NOT EXISTS job_runs_by_name ON job_runs (job_name, at);",
	/* 12: each (class, node) and its newest record, and each node's newest
	 * run with samples per (class, software, metric) with its median, kept
	 * as records are stored (cohort_runs.c): how many nodes a class has
	 * lately and what the cohort ran are read from one row per node, not
	 * from every record in the window; and the current baseline by an index. Filled from the records there are
	 * (migrate()). */
	"CREATE TABLE IF NOT EXISTS class_nodes (class TEXT NOT NULL, node TEXT NOT NULL,"
	" last_at {INT} NOT NULL, PRIMARY KEY (class, node));"
	"CREATE INDEX IF NOT EXISTS class_nodes_by_at ON class_nodes (class, last_at);"
	"CREATE TABLE IF NOT EXISTS cohort_runs (class TEXT NOT NULL, software TEXT NOT NULL,"
	" metric TEXT NOT NULL, node TEXT NOT NULL, taken_at {INT} NOT NULL,"
	" record_id {INT} NOT NULL, median {REAL} NOT NULL,"
	" PRIMARY KEY (class, software, metric, node));"
	/* The key's current baseline, found without sorting its history. */
	"CREATE INDEX IF NOT EXISTS baselines_by_pin"
	" ON baselines (class, software, metric, pinned_at, built_at);",
	/* 13: what kind of fleet event: the breaker's (a class's metric moved:
	 * its quarantines declined), a partial regression's (part of the class
	 * moved, and what those nodes share is named: only theirs declined), or
	 * a baseline's drift under its pinned one (nothing declined; someone is
	 * told). Events from before are the breaker's. */
	"ALTER TABLE fleet_events ADD COLUMN kind TEXT NOT NULL DEFAULT 'breaker';",
	/* 14: what each GPU check judged from (flow/gpu_readings.h): the
	 * fields of each GPU its rules read, the Xid lines it counted and the
	 * earlier counters its rates were taken against, with the policy that
	 * judged them, so a replay judges the check again. Runs from before
	 * have none: a replay says so. */
	("CREATE TABLE IF NOT EXISTS gpu_check_readings (check_id {INT} PRIMARY KEY,"
	 " policy TEXT NOT NULL, body TEXT NOT NULL);"),
	/* 15: each class baseline's family (admission.family_parts: the same
	 * hardware, other software), so a small class pools its family's
	 * spread by an index walk. Baselines from before have none until
	 * rebuilt. */
	("ALTER TABLE baselines ADD COLUMN family TEXT NOT NULL DEFAULT '';"
	 "CREATE INDEX IF NOT EXISTS baselines_by_family ON baselines (family, metric, built_at);"),
	/* 16: one node's accepted runs of a metric, its own level
	 * (ng_store_node_baseline_runs), by an index walk over that node's rows
	 * alone: records_by_baseline would read every node of the class. */
	"CREATE INDEX IF NOT EXISTS records_by_node_metric ON records (node, metric, taken_at);",
};
/* The migration from which class_nodes and cohort_runs are kept. */
#define COHORT_KEPT_FROM 12
/* The migration after which the chain covers state. */
#define STATE_COVERED_FROM 7
#define N_MIGRATIONS (sizeof migrations / sizeof migrations[0])
_Static_assert(N_MIGRATIONS == NG_STORE_SCHEMA_VERSION, "one migration per schema version");

static void dialect(ng_sql_kind kind, const char *ddl, ng_strbuf *out)
{
	static const char *const tokens[][3] = {
		{"{ID}", "INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY"},
		{"{INT}", "INTEGER", "BIGINT"},
		{"{REAL}", "REAL", "DOUBLE PRECISION"},
		{"{BLOB}", "BLOB", "BYTEA"},
	};
	ng_strbuf_reset(out);
	for (const char *p = ddl; *p;) {
		bool hit = false;
		for (size_t t = 0; t < sizeof tokens / sizeof tokens[0] && !hit; t++) {
			size_t n = strlen(tokens[t][0]);
			if (strncmp(p, tokens[t][0], n) == 0) {
				ng_strbuf_adds(out, tokens[t][kind == NG_SQL_SQLITE ? 1 : 2]);
				p += n;
				hit = true;
			}
		}
		if (!hit)
			ng_strbuf_addc(out, *p++);
	}
}

/* The tables in the database's own namespace, comma-separated, for messages. */
static int list_tables(ng_store *st, ng_strbuf *names, int64_t *n, bool *has_meta, ng_err *err)
{
	const char *sql = ng_sql_kind_of(st->db) == NG_SQL_SQLITE
	                          ? "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
	                          : "SELECT table_name FROM information_schema.tables"
	                            " WHERE table_schema = current_schema() ORDER BY table_name";
	ng_sql_stmt *q = ng_q(st, err, sql, "");
	if (!q)
		return -1;
	*n = 0;
	*has_meta = false;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		const char *name = ng_sql_column_text(q, 0);
		*has_meta = *has_meta || (name && strcmp(name, "meta") == 0);
		if (*n < 6)
			ng_strbuf_printf(names, "%s%s", *n ? ", " : "", ng_sql_column_text(q, 0));
		(*n)++;
	}
	ng_sql_finalize(q);
	if (*n > 6)
		ng_strbuf_printf(names, " and %lld more", (long long)(*n - 6));
	return r;
}

static int meta_get(ng_store *st, const char *key, char *out, size_t cap, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err, "SELECT value FROM meta WHERE key = ?", "t", key);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		ng_q_text(q, 0, out, cap);
	ng_sql_finalize(q);
	return r;
}

static int migrate(ng_store *st, void *arg, ng_err *err)
{
	(void)arg;
	ng_strbuf names = {0};
	int64_t n_tables;
	bool has_meta;
	int rc = list_tables(st, &names, &n_tables, &has_meta, err);
	long version = 0;
	if (rc == 0 && n_tables > 0) {
		char app[64] = "", ver[32] = "";
		int got = has_meta ? meta_get(st, "application", app, sizeof app, err) : 0;
		if (got < 0) {
			rc = -1;
		} else if (got == 0 || strcmp(app, NG_APPLICATION) != 0) {
			rc = ng_fail(err,
			             "%s holds another program's database (tables: %s); nodegate will not "
			             "write to it: name a new store with --store",
			             st->where, names.s ? names.s : "");
		} else if (meta_get(st, "schema_version", ver, sizeof ver, err) != 1) {
			rc = ng_fail(err, "%s: the nodegate store has no schema version: it is damaged",
			             st->where);
		} else {
			char *end;
			version = strtol(ver, &end, 10);
			if (*end || version < 1)
				rc = ng_fail(err, "%s: schema version \"%s\" is not a number", st->where, ver);
			else if (version > (long)N_MIGRATIONS)
				rc = ng_fail(err,
				             "%s was written by a newer nodegate (schema %ld; this one knows "
				             "up to %zu): upgrade nodegate, never downgrade a store",
				             st->where, version, N_MIGRATIONS);
		}
	}
	ng_strbuf_free(&names);
	if (rc < 0)
		return -1;

	ng_strbuf ddl = {0};
	for (size_t m = (size_t)version; m < N_MIGRATIONS && rc == 0; m++) {
		dialect(ng_sql_kind_of(st->db), migrations[m], &ddl);
		rc = ng_sql_exec(st->db, ddl.s, err);
	}
	ng_strbuf_free(&ddl);
	if (rc < 0 || version == (long)N_MIGRATIONS)
		return rc;
	/* The class nodes and cohort runs of the records stored before schema 12. */
	if (version > 0 && version < COHORT_KEPT_FROM && ng_cohort_fill(st, err) < 0)
		return -1;
	/* The store's id, which its audit anchor names (audit_anchor.c). */
	if (version < STATE_COVERED_FROM) {
		unsigned char raw[16];
		char id[33];
		if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
			return ng_fail(err, "cannot make the store's id: no random bytes");
		for (size_t i = 0; i < sizeof raw; i++)
			snprintf(id + 2 * i, 3, "%02x", raw[i]);
		if (ng_q_exec(st, err, "INSERT INTO meta (key, value) VALUES ('store_id', ?)"
		              " ON CONFLICT (key) DO NOTHING", "t", id) < 0)
			return -1;
	}
	/* Rows written before the chain covered them are taken as they are now,
	 * and from here on any change to them shows. */
	if (version > 0 && version < STATE_COVERED_FROM &&
	    (ng_state_touch_all(st, err) < 0 ||
	     ng_store_audit(st, true, (int64_t)time(NULL), "nodegate", "store.upgrade", "store",
	                    "{\"covers\":\"overrides, baselines, cases, node states\"}", err) < 0))
		return -1;
	char v[16];
	snprintf(v, sizeof v, "%zu", N_MIGRATIONS);
	if (version == 0 &&
	    (ng_q_exec(st, err, "INSERT INTO meta (key, value) VALUES ('application', ?)", "t",
	               NG_APPLICATION) < 0 ||
	     ng_q_exec(st, err, "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", "t",
	               v) < 0 ||
	     ng_q_exec(st, err,
	               "INSERT INTO meta (key, value) VALUES ('audit_head_seq', '0'),"
	               " ('audit_head_hash', ?)",
	               "t", "0000000000000000000000000000000000000000000000000000000000000000") < 0))
		return -1;
	if (version > 0)
		return ng_q_exec(st, err, "UPDATE meta SET value = ? WHERE key = 'schema_version'", "t",
		                 v);
	return 0;
}

/* True when the store is already nodegate's at the current version: the
 * common case, checked in a read transaction so that opening a busy store
 * never waits behind its writers. Anything else (a new, foreign, older or
 * damaged store) is settled by migrate() under the write lock. */
static bool current(ng_store *st)
{
	ng_err ignored;
	if (ng_sql_begin_read(st->db, &ignored) < 0)
		return false;
	int64_t has_meta = 0;
	const char *sql = ng_sql_kind_of(st->db) == NG_SQL_SQLITE
	                          ? "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
	                            " AND name = 'meta'"
	                          : "SELECT count(*) FROM information_schema.tables"
	                            " WHERE table_schema = current_schema() AND table_name = 'meta'";
	char app[64] = "", ver[32] = "";
	bool ok = ng_q_int64(st, &ignored, &has_meta, sql, "") == 1 && has_meta == 1 &&
	          meta_get(st, "application", app, sizeof app, &ignored) == 1 &&
	          meta_get(st, "schema_version", ver, sizeof ver, &ignored) == 1 &&
	          strcmp(app, NG_APPLICATION) == 0 && strtol(ver, NULL, 10) == (long)N_MIGRATIONS;
	ng_sql_rollback(st->db);
	return ok;
}

int ng_store_schema_ensure(ng_store *st, ng_err *err)
{
	return current(st) ? 0 : ng_store_tx(st, migrate, NULL, err);
}
