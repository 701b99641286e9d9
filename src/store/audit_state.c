/* The state the audit chain covers: overrides, baselines, cases and node
 * states.
 *
 * Every write to one of those rows names it (ng_state_touch); the next audit
 * entry in the same transaction carries each named row's digest in its
 * `state` field, which its hash covers. So the chain records, for every row,
 * what it held when nodegate last wrote it, and `audit verify` recomputes the
 * digest of every row and compares: an override whose expiry was edited past
 * the 90-day cap, a case closed by hand, a node state set to admitted, a row
 * added or removed behind nodegate's back, all differ from what the chain
 * says. The digest is a plain SHA-256 (it need not be secret): forging one
 * means rewriting the chain from that entry, which the anchor beside the
 * store shows (audit_anchor.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/sha256.h"
#include "store/store_internal.h"

/* The columns each table's digest covers, named so that a column added by a
 * later migration does not change the digest of the rows written before. */
static const struct covered {
	const char *table, *key, *columns;
	bool int_key;
} covered[] = {
	{"overrides", "id", "id, node, reason, by_whom, created_at, expires_at, revoked_at", true},
	{"baselines", "id",
	 "id, class, software, metric, unit, status, median, cv, node_mad, n_nodes, n_runs,"
	 " n_samples, min_nodes, built_at, window_start, window_end, pinned_name, pinned_at,"
	 " expired_at, expired_reason",
	 true},
	{"cases", "id",
	 "id, node, class, software, domain, metric, opened_at, release_condition, passes, retries,"
	 " closed_at, closed_by, close_reason, evidence",
	 true},
	{"node_states", "node",
	 "node, class, software, outcome, updated_at, recheck_at, run_id, duration_ms", false},
};
#define N_COVERED (sizeof covered / sizeof covered[0])

/* What the chain records for a row that is gone. */
#define ABSENT "-"

static const struct covered *covered_table(const char *name)
{
	for (size_t i = 0; i < N_COVERED; i++)
		if (strcmp(covered[i].table, name) == 0)
			return &covered[i];
	return NULL;
}

static int n_columns(const struct covered *c)
{
	int n = 1;
	for (const char *p = c->columns; *p; p++)
		n += *p == ',';
	return n;
}

/* SHA-256 over the table's name and the row's columns as the database
 * writes them as text, a NULL told apart from any text. */
static void digest_row(const struct covered *c, ng_sql_stmt *q, int first, char out[65])
{
	ng_strbuf b = {0};
	ng_strbuf_adds(&b, "nodegate-state-1");
	ng_strbuf_addc(&b, '\0');
	ng_strbuf_adds(&b, c->table);
	int n = n_columns(c);
	for (int i = 0; i < n; i++) {
		ng_strbuf_addc(&b, '\0');
		if (ng_sql_column_is_null(q, first + i)) {
			ng_strbuf_addc(&b, '\1');
		} else {
			const char *v = ng_sql_column_text(q, first + i);
			ng_strbuf_addc(&b, '=');
			ng_strbuf_adds(&b, v ? v : "");
		}
	}
	ng_sha256_hex(b.s ? b.s : "", b.len, out);
	ng_strbuf_free(&b);
}

/* The row's digest now, or ABSENT. 0, or -1 with err set. */
static int digest_of(ng_store *st, const struct covered *c, const char *key, char out[65],
                     ng_err *err)
{
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE %s = ?", c->columns, c->table, c->key);
	ng_sql_stmt *q = c->int_key ? ng_q(st, err, sql, "i", (int64_t)strtoll(key, NULL, 10))
	                            : ng_q(st, err, sql, "t", key);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		digest_row(c, q, 0, out);
	else
		ng_copy(out, 65, ABSENT);
	ng_sql_finalize(q);
	return r < 0 ? -1 : 0;
}

void ng_state_touch(ng_store *st, const char *table, const char *key)
{
	for (size_t i = 0; i < st->n_touched; i++)
		if (strcmp(st->touched[i].table, table) == 0 && strcmp(st->touched[i].key, key) == 0)
			return;
	if (st->n_touched == st->cap_touched) {
		size_t cap = st->cap_touched ? st->cap_touched * 2 : 8;
		struct ng_touched *p = realloc(st->touched, cap * sizeof *p);
		if (!p) {
			st->touch_oom = true;
			return;
		}
		st->touched = p;
		st->cap_touched = cap;
	}
	char *k = strdup(key);
	if (!k) {
		st->touch_oom = true;
		return;
	}
	st->touched[st->n_touched++] = (struct ng_touched){table, k};
}

void ng_state_touch_id(ng_store *st, const char *table, int64_t id)
{
	char key[24];
	snprintf(key, sizeof key, "%" PRId64, id);
	ng_state_touch(st, table, key);
}

void ng_state_forget(ng_store *st)
{
	for (size_t i = 0; i < st->n_touched; i++)
		free(st->touched[i].key);
	st->n_touched = 0;
	st->touch_oom = false;
}

int ng_state_seal(ng_store *st, ng_strbuf *out, ng_err *err)
{
	ng_strbuf_reset(out);
	if (st->touch_oom) {
		ng_state_forget(st);
		return ng_fail_as(err, NG_ERR_STORE, "out of memory naming the rows an audit entry covers");
	}
	if (!st->n_touched)
		return 0;
	ng_strbuf_addc(out, '[');
	int rc = 0;
	for (size_t i = 0; i < st->n_touched && rc == 0; i++) {
		const struct covered *c = covered_table(st->touched[i].table);
		char digest[65];
		if (!c) {
			rc = ng_fail_as(err, NG_ERR_STORE, "%s is not a table the audit log covers", st->touched[i].table);
			break;
		}
		rc = digest_of(st, c, st->touched[i].key, digest, err);
		ng_strbuf_adds(out, i ? ",[" : "[");
		ng_strbuf_add_json_string(out, c->table);
		ng_strbuf_addc(out, ',');
		ng_strbuf_add_json_string(out, st->touched[i].key);
		ng_strbuf_addc(out, ',');
		ng_strbuf_add_json_string(out, digest);
		ng_strbuf_addc(out, ']');
	}
	ng_strbuf_addc(out, ']');
	ng_state_forget(st);
	return rc;
}

int ng_state_touch_all(ng_store *st, ng_err *err)
{
	for (size_t i = 0; i < N_COVERED; i++) {
		char sql[160];
		snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY %s", covered[i].key,
		         covered[i].table, covered[i].key);
		ng_sql_stmt *q = ng_q(st, err, sql, "");
		if (!q)
			return -1;
		int r;
		while ((r = ng_sql_step(q, err)) == 1) {
			const char *k = ng_sql_column_text(q, 0);
			ng_state_touch(st, covered[i].table, k ? k : "");
		}
		ng_sql_finalize(q);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* ---- verifying -------------------------------------------------------------------- */

void ng_state_record_free(ng_state_record *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->rows[i].key);
	free(r->rows);
	*r = (ng_state_record){0};
}

int ng_state_record_add(ng_state_record *r, int64_t seq, const char *state, ng_err *err)
{
	cJSON *arr = cJSON_Parse(state);
	if (!cJSON_IsArray(arr)) {
		cJSON_Delete(arr);
		return 1;
	}
	const cJSON *e;
	int rc = 0;
	cJSON_ArrayForEach(e, arr)
	{
		const char *t = cJSON_GetStringValue(cJSON_GetArrayItem(e, 0));
		const char *k = cJSON_GetStringValue(cJSON_GetArrayItem(e, 1));
		const char *d = cJSON_GetStringValue(cJSON_GetArrayItem(e, 2));
		const struct covered *c = t ? covered_table(t) : NULL;
		if (!c || !k || !d || strlen(d) > 64) {
			rc = 1;
			break;
		}
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 64;
			struct ng_state_row *p = realloc(r->rows, cap * sizeof *p);
			if (!p) {
				rc = ng_fail_as(err, NG_ERR_STORE, "out of memory");
				break;
			}
			r->rows = p;
			r->cap = cap;
		}
		struct ng_state_row *row = &r->rows[r->n];
		*row = (struct ng_state_row){.table = c->table, .key = strdup(k), .seq = seq};
		if (!row->key) {
			rc = ng_fail_as(err, NG_ERR_STORE, "out of memory");
			break;
		}
		ng_copy(row->digest, sizeof row->digest, d);
		r->n++;
	}
	cJSON_Delete(arr);
	return rc;
}

static int cmp_row(const void *a, const void *b)
{
	const struct ng_state_row *x = a, *y = b;
	int c = strcmp(x->table, y->table);
	if (!c)
		c = strcmp(x->key, y->key);
	if (!c)
		c = (x->seq > y->seq) - (x->seq < y->seq);
	return c;
}

static int cmp_key(const void *k, const void *b)
{
	const struct ng_state_row *x = k, *y = b;
	int c = strcmp(x->table, y->table);
	return c ? c : strcmp(x->key, y->key);
}

/* Sorted by row, and only each row's latest entry kept. */
static void latest_only(ng_state_record *r)
{
	if (r->n)
		qsort(r->rows, r->n, sizeof *r->rows, cmp_row);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (k && cmp_key(&r->rows[i], &r->rows[k - 1]) == 0) {
			free(r->rows[k - 1].key);
			r->rows[k - 1] = r->rows[i];
		} else {
			r->rows[k++] = r->rows[i];
		}
	}
	r->n = k;
}

enum change { ADDED, CHANGED, REMOVED };

/* Counts a row that differs from the chain; the first is described. */
static void problem(ng_store_audit_report *rep, enum change how, const char *table,
                    const char *key, int64_t seq)
{
	rep->rows_bad++;
	if (rep->state_problem[0])
		return;
	if (how == ADDED)
		snprintf(rep->state_problem, sizeof rep->state_problem,
		         "%s row %.80s is in no audit entry: it was added outside nodegate", table, key);
	else if (how == CHANGED)
		snprintf(rep->state_problem, sizeof rep->state_problem,
		         "%s row %.80s was changed outside nodegate: it is not what audit entry %" PRId64
		         " recorded",
		         table, key, seq);
	else
		snprintf(rep->state_problem, sizeof rep->state_problem,
		         "%s row %.80s was removed outside nodegate: audit entry %" PRId64 " recorded it",
		         table, key, seq);
}

int ng_state_verify(ng_store *st, ng_state_record *r, ng_store_audit_report *rep, ng_err *err)
{
	latest_only(r);
	bool *seen = calloc(r->n ? r->n : 1, sizeof *seen);
	if (!seen)
		return ng_fail_as(err, NG_ERR_STORE, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < N_COVERED && rc == 0; i++) {
		const struct covered *c = &covered[i];
		char sql[512];
		snprintf(sql, sizeof sql, "SELECT %s, %s FROM %s", c->key, c->columns, c->table);
		ng_sql_stmt *q = ng_q(st, err, sql, "");
		if (!q) {
			rc = -1;
			break;
		}
		int s;
		while ((s = ng_sql_step(q, err)) == 1) {
			const char *k = ng_sql_column_text(q, 0);
			struct ng_state_row want = {.table = c->table, .key = (char *)(k ? k : "")};
			char digest[65];
			digest_row(c, q, 1, digest);
			rep->rows++;
			struct ng_state_row *got = r->n ? bsearch(&want, r->rows, r->n, sizeof *r->rows,
			                                          cmp_key)
			                                : NULL;
			if (!got) {
				problem(rep, ADDED, c->table, want.key, 0);
				continue;
			}
			seen[got - r->rows] = true;
			if (strcmp(got->digest, digest) != 0)
				problem(rep, CHANGED, c->table, want.key, got->seq);
		}
		ng_sql_finalize(q);
		if (s < 0)
			rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < r->n; i++)
		if (!seen[i] && strcmp(r->rows[i].digest, ABSENT) != 0)
			problem(rep, REMOVED, r->rows[i].table, r->rows[i].key, r->rows[i].seq);
	free(seen);
	return rc;
}
