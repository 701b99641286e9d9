/* The audit log: append-only, each entry hash-chained to the one before.
 *
 * An entry's hash is SHA-256 over a version tag, the previous entry's hash,
 * and its own seq, time, actor, action, subject and detail, and (version 2)
 * the digests of the covered rows it wrote (audit_state.c), separated by NUL
 * bytes (none of them can contain one: the JSON layer refuses \u0000 and the
 * command line cannot pass it). So editing any field of any entry, removing
 * one, or swapping two breaks the chain at that point; removing entries from
 * the end is caught by the head kept in `meta`, updated in the same
 * transaction, and, when `meta` was edited to match, by the head anchored
 * outside the database (audit_anchor.c). Someone who can rewrite the whole
 * database and the anchor can rewrite the whole chain too: `audit verify`
 * prints the head hash so it can be kept elsewhere (a ticket, a log shipper)
 * and compared later. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "store/store_internal.h"

#define GENESIS "0000000000000000000000000000000000000000000000000000000000000000"

static void entry_hash(const char *prev, int64_t seq, int64_t at, const char *actor,
                       const char *action, const char *subject, const char *detail,
                       const char *state, char out[65])
{
	ng_strbuf b = {0};
	/* Entries that carry no state hash as they always did. */
	bool v2 = state && state[0];
	ng_strbuf_adds(&b, v2 ? "nodegate-audit-2" : "nodegate-audit-1");
	ng_strbuf_addc(&b, '\0');
	ng_strbuf_adds(&b, prev);
	ng_strbuf_addc(&b, '\0');
	ng_strbuf_printf(&b, "%" PRId64, seq);
	ng_strbuf_addc(&b, '\0');
	ng_strbuf_printf(&b, "%" PRId64, at);
	const char *fields[] = {actor, action, subject, detail};
	for (size_t i = 0; i < 4; i++) {
		ng_strbuf_addc(&b, '\0');
		ng_strbuf_adds(&b, fields[i] ? fields[i] : "");
	}
	if (v2) {
		ng_strbuf_addc(&b, '\0');
		ng_strbuf_adds(&b, state);
	}
	ng_sha256_hex(b.s, b.len, out);
	ng_strbuf_free(&b);
}

struct append {
	int64_t at;
	const char *actor, *action, *subject, *detail;
};

static int append(ng_store *st, void *arg, ng_err *err)
{
	const struct append *a = arg;
	char prev[65] = GENESIS;
	int64_t seq = 0;
	/* From the head kept in meta, not from the last row left: an entry
	 * removed from the end stays a gap the next entry makes visible. */
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT CAST(s.value AS BIGINT), h.value FROM meta s, meta h"
	                      " WHERE s.key = 'audit_head_seq' AND h.key = 'audit_head_hash'",
	                      "");
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		seq = ng_sql_column_int64(q, 0);
		ng_q_text(q, 1, prev, sizeof prev);
	}
	ng_sql_finalize(q);
	if (r < 0)
		return -1;
	seq++;
	ng_strbuf state = {0};
	if (ng_state_seal(st, &state, err) < 0) {
		ng_strbuf_free(&state);
		return -1;
	}
	char hash[65];
	const char *detail = a->detail ? a->detail : "{}";
	const char *st_text = state.s ? state.s : "";
	entry_hash(prev, seq, a->at, a->actor, a->action, a->subject, detail, st_text, hash);
	char seqtext[24];
	snprintf(seqtext, sizeof seqtext, "%" PRId64, seq);
	int rc = ng_q_exec(st, err,
	                   "INSERT INTO audit_log (seq, at, actor, action, subject, detail, prev_hash,"
	                   " hash, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	                   "iittttttt", seq, a->at, a->actor ? a->actor : "", a->action,
	                   a->subject ? a->subject : "", detail, prev, hash, st_text);
	ng_strbuf_free(&state);
	if (rc < 0)
		return -1;
	if (ng_q_exec(st, err, "UPDATE meta SET value = ? WHERE key = 'audit_head_seq'", "t", seqtext) < 0)
		return -1;
	if (ng_q_exec(st, err, "UPDATE meta SET value = ? WHERE key = 'audit_head_hash'", "t", hash) < 0)
		return -1;
	ng_anchor_due(st, seq, hash);
	return 0;
}

int ng_audit_cursor_open(ng_store *st, ng_audit_cursor *c, ng_err *err)
{
	memset(c, 0, sizeof *c);
	ng_copy(c->hash, sizeof c->hash, GENESIS);
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT CAST(s.value AS BIGINT), h.value FROM meta s, meta h"
	                      " WHERE s.key = 'audit_head_seq' AND h.key = 'audit_head_hash'",
	                      "");
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		c->seq = ng_sql_column_int64(q, 0);
		ng_q_text(q, 1, c->hash, sizeof c->hash);
	}
	ng_sql_finalize(q);
	if (r < 0)
		return -1;
	return ng_sql_prepare(st->db,
	                      "INSERT INTO audit_log (seq, at, actor, action, subject, detail, prev_hash,"
	                      " hash, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	                      &c->ins, err);
}

int ng_audit_cursor_append(ng_store *st, ng_audit_cursor *c, int64_t at, const char *actor,
                           const char *action, const char *subject, const char *detail,
                           ng_err *err)
{
	ng_strbuf state = {0};
	if (ng_state_seal(st, &state, err) < 0) {
		ng_strbuf_free(&state);
		return -1;
	}
	const char *st_text = state.s ? state.s : "";
	char hash[65];
	detail = detail ? detail : "{}";
	entry_hash(c->hash, c->seq + 1, at, actor, action, subject, detail, st_text, hash);
	ng_sql_reset(c->ins);
	ng_sql_bind_int64(c->ins, 1, c->seq + 1);
	ng_sql_bind_int64(c->ins, 2, at);
	ng_sql_bind_text(c->ins, 3, actor ? actor : "");
	ng_sql_bind_text(c->ins, 4, action);
	ng_sql_bind_text(c->ins, 5, subject ? subject : "");
	ng_sql_bind_text(c->ins, 6, detail);
	ng_sql_bind_text(c->ins, 7, c->hash);
	ng_sql_bind_text(c->ins, 8, hash);
	ng_sql_bind_text(c->ins, 9, st_text);
	int r = ng_sql_step(c->ins, err);
	ng_strbuf_free(&state);
	if (r < 0)
		return -1;
	c->seq++;
	memcpy(c->hash, hash, sizeof hash);
	return 0;
}

int ng_audit_cursor_close(ng_store *st, ng_audit_cursor *c, bool ok, ng_err *err)
{
	ng_sql_finalize(c->ins);
	c->ins = NULL;
	if (!ok)
		return -1;
	char seqtext[24];
	snprintf(seqtext, sizeof seqtext, "%" PRId64, c->seq);
	if (ng_q_exec(st, err, "UPDATE meta SET value = ? WHERE key = 'audit_head_seq'", "t", seqtext) < 0)
		return -1;
	if (ng_q_exec(st, err, "UPDATE meta SET value = ? WHERE key = 'audit_head_hash'", "t",
	              c->hash) < 0)
		return -1;
	if (c->seq > 0)
		ng_anchor_due(st, c->seq, c->hash);
	return 0;
}

int ng_store_audit(ng_store *st, bool in_tx, int64_t at, const char *actor, const char *action,
                   const char *subject, const char *detail, ng_err *err)
{
	struct append a = {at, actor, action, subject, detail};
	return in_tx ? append(st, &a, err) : ng_store_tx(st, append, &a, err);
}

/* The anchored head against the chain: the anchored entry must still be
 * there, with the anchored hash. anchored_hash: the hash the chain holds at
 * the anchored seq ("" when the chain is shorter). */
static void check_anchor(ng_store_audit_report *rep, int64_t last,
                         const char *hash_at_anchor, int64_t anchor_seq, const char *anchor_hash)
{
	if (rep->first_bad)
		return;
	if (anchor_seq > last) {
		rep->first_bad = last + 1;
		snprintf(rep->problem, sizeof rep->problem,
		         "the log ends at entry %" PRId64 " but its head was anchored at entry %" PRId64
		         ": entries were removed from its end, and the head in the database edited"
		         " to match",
		         last, anchor_seq);
	} else if (strcmp(hash_at_anchor, anchor_hash) != 0) {
		rep->first_bad = anchor_seq;
		snprintf(rep->problem, sizeof rep->problem,
		         "entry %" PRId64 " is not the entry anchored outside the database: the log"
		         " was rewritten from there on",
		         anchor_seq);
	}
}

int ng_store_audit_verify(ng_store *st, ng_store_audit_report *rep, ng_err *err)
{
	memset(rep, 0, sizeof *rep);
	ng_copy(rep->head, sizeof rep->head, GENESIS);
	char anchor_hash[65] = "", why[160] = "";
	int anchored = ng_anchor_read(st, &rep->anchor_seq, anchor_hash, why, sizeof why);
	if (anchored < 0)
		return ng_fail_as(err, NG_ERR_STORE, "cannot read the audit anchor %s: %s", st->anchor_path, why);
	if (ng_sql_begin_read(st->db, err) < 0)
		return -1;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT seq, at, actor, action, subject, detail, prev_hash, hash, state"
	                      " FROM audit_log ORDER BY seq",
	                      "");
	if (!q) {
		ng_sql_rollback(st->db);
		return -1;
	}
	ng_state_record state = {0};
	char prev[65] = GENESIS, hash_at_anchor[65] = "";
	int64_t expect = 1;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		int64_t seq = ng_sql_column_int64(q, 0);
		char stored_prev[65], stored[65], computed[65];
		ng_q_text(q, 6, stored_prev, sizeof stored_prev);
		ng_q_text(q, 7, stored, sizeof stored);
		const char *st_text = ng_sql_column_text(q, 8);
		entry_hash(prev, seq, ng_sql_column_int64(q, 1), ng_sql_column_text(q, 2),
		           ng_sql_column_text(q, 3), ng_sql_column_text(q, 4), ng_sql_column_text(q, 5),
		           st_text, computed);
		rep->entries++;
		if (seq != expect) {
			rep->first_bad = seq;
			snprintf(rep->problem, sizeof rep->problem,
			         "entry %" PRId64 " follows entry %" PRId64
			         ": entries between were removed",
			         seq, expect - 1);
		} else if (strcmp(stored_prev, prev) != 0) {
			rep->first_bad = seq;
			snprintf(rep->problem, sizeof rep->problem,
			         "entry %" PRId64 " does not link to the entry before it:"
			         " entries were removed or reordered",
			         seq);
		} else if (strcmp(stored, computed) != 0) {
			rep->first_bad = seq;
			snprintf(rep->problem, sizeof rep->problem,
			         "entry %" PRId64 " was changed after it was written (its hash does not"
			         " match its contents)",
			         seq);
		} else if (st_text && st_text[0]) {
			int a = ng_state_record_add(&state, seq, st_text, err);
			if (a < 0) {
				r = -1;
				break;
			}
			if (a > 0) {
				rep->first_bad = seq;
				snprintf(rep->problem, sizeof rep->problem,
				         "entry %" PRId64 " holds state nodegate did not write", seq);
			}
		}
		if (rep->first_bad)
			break;
		ng_copy(prev, sizeof prev, stored);
		if (seq == rep->anchor_seq)
			ng_copy(hash_at_anchor, sizeof hash_at_anchor, stored);
		expect = seq + 1;
	}
	ng_sql_finalize(q);
	if (r < 0) {
		ng_state_record_free(&state);
		ng_sql_rollback(st->db);
		return -1;
	}
	if (!rep->first_bad) {
		char head_seq[24] = "", head_hash[65] = "";
		q = ng_q(st, err, "SELECT key, value FROM meta WHERE key LIKE 'audit_head_%'", "");
		if (!q) {
			ng_state_record_free(&state);
			ng_sql_rollback(st->db);
			return -1;
		}
		while ((r = ng_sql_step(q, err)) == 1) {
			const char *k = ng_sql_column_text(q, 0);
			if (strcmp(k, "audit_head_seq") == 0)
				ng_q_text(q, 1, head_seq, sizeof head_seq);
			else if (strcmp(k, "audit_head_hash") == 0)
				ng_q_text(q, 1, head_hash, sizeof head_hash);
		}
		ng_sql_finalize(q);
		if (r < 0) {
			ng_state_record_free(&state);
			ng_sql_rollback(st->db);
			return -1;
		}
		if (strtoll(head_seq, NULL, 10) != expect - 1 || strcmp(head_hash, prev) != 0) {
			rep->first_bad = expect;
			snprintf(rep->problem, sizeof rep->problem,
			         "the log ends at entry %" PRId64 " but was last written at entry %s:"
			         " entries were removed from its end",
			         expect - 1, head_seq[0] ? head_seq : "?");
		}
	}
	if (!rep->first_bad && anchored == 0 && expect > 1) {
		/* Every write anchors the head; none there means it was removed, or
		 * the log is being read from a host that never wrote to it. */
		rep->first_bad = expect - 1;
		snprintf(rep->problem, sizeof rep->problem,
		         "the log's head is not anchored (the anchor file is missing), so a cut tail"
		         " cannot be told from a short log");
	}
	if (anchored == 1)
		check_anchor(rep, expect - 1, hash_at_anchor, rep->anchor_seq, anchor_hash);
	if (!rep->first_bad && ng_state_verify(st, &state, rep, err) < 0) {
		ng_state_record_free(&state);
		ng_sql_rollback(st->db);
		return -1;
	}
	ng_state_record_free(&state);
	ng_copy(rep->head, sizeof rep->head, prev);
	ng_sql_rollback(st->db); /* read-only: nothing to keep */
	return rep->first_bad || rep->rows_bad ? 1 : 0;
}

cJSON *ng_store_audit_list(ng_store *st, int64_t limit, const char *subject, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT seq, at, actor, action, subject, detail, hash FROM audit_log"
	                      " WHERE (CAST(? AS TEXT) IS NULL OR subject = ?) ORDER BY seq DESC LIMIT ?",
	                      "tti", subject, subject, limit > 0 ? limit : INT64_MAX);
	if (!q)
		return NULL;
	cJSON *arr = cJSON_CreateArray();
	int r = arr ? 0 : ng_fail_as(err, NG_ERR_STORE, "out of memory");
	while (arr && (r = ng_sql_step(q, err)) == 1) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "seq", (double)ng_sql_column_int64(q, 0));
		cJSON_AddNumberToObject(e, "at", (double)ng_sql_column_int64(q, 1));
		cJSON_AddStringToObject(e, "actor", ng_sql_column_text(q, 2));
		cJSON_AddStringToObject(e, "action", ng_sql_column_text(q, 3));
		cJSON_AddStringToObject(e, "subject", ng_sql_column_text(q, 4));
		cJSON *detail = cJSON_Parse(ng_sql_column_text(q, 5));
		cJSON_AddItemToObject(e, "detail", detail ? detail : cJSON_CreateNull());
		cJSON_AddStringToObject(e, "hash", ng_sql_column_text(q, 6));
		cJSON_AddItemToArray(arr, e);
	}
	ng_sql_finalize(q);
	if (r < 0) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}
