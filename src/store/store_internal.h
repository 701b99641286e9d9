/* What the store's files share: the handle, and a small query helper so each
 * operation reads as its SQL and its arguments. Not for use outside src/store. */
#ifndef NODEGATE_STORE_INTERNAL_H
#define NODEGATE_STORE_INTERNAL_H

#include <stdint.h>

#include "store/store.h"

/* A row of a table the audit chain covers, written in the open transaction. */
struct ng_touched {
	const char *table; /* a string constant */
	char *key;
};

struct ng_store {
	ng_sql *db;
	char where[512];
	char policy[32]; /* ng_store_set_policy: kept with decisions and cases */
	char *policy_text; /* ng_store_set_policy_text: kept under the digest (policies.c) */
	/* audit_state.c: rows written since the last audit entry */
	struct ng_touched *touched;
	size_t n_touched, cap_touched;
	bool touch_oom;
	/* audit_anchor.c: where the head is anchored, and the head to write
	 * there once the transaction that made it has committed */
	char anchor_path[4096]; /* "" until known (PostgreSQL: named by the store id) */
	char store_id[33];
	bool anchor_pg, anchor_due;
	int64_t anchor_seq;
	char anchor_hash[65];
	/* ng_store_open_scratch: a store nobody keeps, so no anchor file, and
	 * one writer, so the cohort's tables copied in memory (cohort_mirror.c) */
	bool scratch;
	struct ng_cohort_mirror *mirror;
};

/* Prepares sql and binds its `?` parameters from the arguments, one type
 * letter each:
 *   t  const char *     (NULL binds NULL)
 *   i  int64_t
 *   d  double           (NaN binds NULL: SQLite cannot keep a NaN)
 *   b  const void *, size_t
 * Returns NULL with err set on failure. */
ng_sql_stmt *ng_q(ng_store *st, ng_err *err, const char *sql, const char *types, ...);
/* ng_q, run to the end, finalized. Returns 0 or -1. */
int ng_q_exec(ng_store *st, ng_err *err, const char *sql, const char *types, ...);
/* ng_q for a statement that yields one integer (count(*), RETURNING id):
 * 1 and *out set, 0 when it yielded no row, -1 on error. */
int ng_q_int64(ng_store *st, ng_err *err, int64_t *out, const char *sql, const char *types, ...);

/* Runs q to the end (and finalizes it), reading each row into a new element
 * of `size` bytes of a growing array with read(), which returns -1 when out
 * of memory. On failure every element read so far is released with
 * release (when not NULL) and *out is NULL. */
int ng_q_rows(ng_sql_stmt *q, size_t size, int (*read)(ng_sql_stmt *q, void *elem),
              void (*release)(void *elem), void **out, size_t *n, ng_err *err);
/* A column as a double, NULL reading as NaN (the inverse of binding NaN). */
double ng_q_double(ng_sql_stmt *q, int col);
/* Copies a text column into a fixed field, truncating; NULL copies "". */
void ng_q_text(ng_sql_stmt *q, int col, char *dst, size_t cap);
/* A text column as a new malloc'd string ("" for NULL); NULL only on OOM. */
char *ng_q_strdup(ng_sql_stmt *q, int col);

/* Runs fn inside a write transaction: commit when it returns 0, roll back
 * otherwise. */
int ng_store_tx(ng_store *st, int (*fn)(ng_store *st, void *arg, ng_err *err), void *arg,
                ng_err *err);

/* audit.c: many entries in one write transaction the caller holds, without
 * reading and writing the head in meta for each: open reads the head,
 * append chains each entry to the one before, close writes the new head.
 * The chain is the one ng_store_audit makes, entry for entry. */
typedef struct {
	int64_t seq;
	char hash[65];
	ng_sql_stmt *ins;
} ng_audit_cursor;
int ng_audit_cursor_open(ng_store *st, ng_audit_cursor *c, ng_err *err);
int ng_audit_cursor_append(ng_store *st, ng_audit_cursor *c, int64_t at, const char *actor,
                           const char *action, const char *subject, const char *detail,
                           ng_err *err);
/* Writes the head (when ok) and releases the cursor. */
int ng_audit_cursor_close(ng_store *st, ng_audit_cursor *c, bool ok, ng_err *err);

/* audit_state.c: the rows of overrides, baselines, cases and node_states the
 * chain covers. A write to such a row names it (touch) in the transaction
 * that writes it, before that transaction's audit entry; the entry then
 * carries the digest of every row named since the entry before (seal), and
 * its hash covers them. A transaction that names rows and writes no entry
 * gets one (state.write) before it commits. */
void ng_state_touch(ng_store *st, const char *table, const char *key);
void ng_state_touch_id(ng_store *st, const char *table, int64_t id);
/* Names every row of every covered table (a store from before the chain
 * covered state: its rows are adopted as they are). */
int ng_state_touch_all(ng_store *st, ng_err *err);
/* The JSON the next entry keeps in `state` ("" when no row was named), and
 * forgets the names. */
int ng_state_seal(ng_store *st, ng_strbuf *out, ng_err *err);
void ng_state_forget(ng_store *st);

struct ng_state_row {
	const char *table;
	char *key;
	char digest[65];
	int64_t seq; /* the entry that recorded it */
};
typedef struct {
	struct ng_state_row *rows;
	size_t n, cap;
} ng_state_record;
/* Adds an entry's state; 1 when it is not state nodegate wrote. */
int ng_state_record_add(ng_state_record *r, int64_t seq, const char *state, ng_err *err);
/* Every covered row against the latest digest the chain holds for it. */
int ng_state_verify(ng_store *st, ng_state_record *r, ng_store_audit_report *rep, ng_err *err);
void ng_state_record_free(ng_state_record *r);

/* cohort_mirror.c: a scratch store's class_nodes and cohort_runs in memory.
 * _note follows ng_cohort_note's upserts (median: the run's); _count and
 * _drops answer ng_store_count_class_nodes and ng_store_cohort_drops: 1
 * answered, 0 not (no copy: ask SQL), -1 out of memory. */
void ng_cohort_mirror_note(ng_store *st, const ng_store_record *r, int64_t record_id,
                           double median);
int ng_cohort_mirror_count(ng_store *st, const char *class_key, int64_t since, int64_t *out);
int ng_cohort_mirror_drops(ng_store *st, const char *class_key, const char *software,
                           const char *metric, const char *exclude_node, int64_t since,
                           double median, double **drops, size_t *n);
void ng_cohort_mirror_free(ng_store *st);

/* audit_anchor.c */
void ng_anchor_init(ng_store *st, const char *spec, bool postgres);
void ng_anchor_due(ng_store *st, int64_t seq, const char *hash);
/* After commit: writes the head, warning on stderr when it cannot. */
void ng_anchor_write(ng_store *st);
/* 1 read, 0 no anchor file, -1 unreadable or not an anchor (why says). */
int ng_anchor_read(ng_store *st, int64_t *seq, char hash[65], char *why, size_t why_len);

/* schema.c: creates or migrates the schema, refusing foreign and newer ones. */
int ng_store_schema_ensure(ng_store *st, ng_err *err);
/* policies.c: inside a write transaction, keeps the text of the policy
 * decisions are written under, once per digest. */
int ng_store_keep_policy(ng_store *st, int64_t at, ng_err *err);

/* cohort_runs.c: the class's nodes and each node's newest run, noted as
 * record r (stored as record_id) is (statements kept in *seen and *run for a
 * batch; the caller finalizes them); and filled from the records there are,
 * for a store from before they were kept (schema 10). */
int ng_cohort_note(ng_store *st, ng_sql_stmt **seen, ng_sql_stmt **run,
                   const ng_store_record *r, int64_t record_id, ng_err *err);
int ng_cohort_fill(ng_store *st, ng_err *err);

#endif
