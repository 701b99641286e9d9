/* The audit chain's head, anchored outside the database it protects.
 *
 * `meta` keeps the head too, but whoever can cut entries from the end of the
 * log can edit `meta` to match. After every transaction that appended to the
 * log, the new head (seq and hash) is also written to a file: beside a
 * SQLite store (`<store>.audit-head`), and for PostgreSQL under the state
 * directory ($NODEGATE_STATE_DIR, default /var/lib/nodegate), one file per
 * database. `audit verify` then checks that the log still holds the anchored
 * entry with the anchored hash: a cut tail, or a chain rewritten from some
 * entry on, no longer does.
 *
 * Several processes (several hosts, on PostgreSQL) write to one log; each
 * writes the head it made once its transaction has committed, so the file
 * may lag a newer head, never lead one. Verify therefore asks for the
 * anchored entry, not for the anchored entry to be the last. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "store/store_internal.h"

#define ANCHOR_TAG "nodegate-audit-anchor 1"

void ng_anchor_init(ng_store *st, const char *spec, bool postgres)
{
	st->anchor_pg = postgres;
	if (!postgres)
		snprintf(st->anchor_path, sizeof st->anchor_path, "%s.audit-head", spec);
}

/* The store's own id (meta store_id, made with the schema): an anchor names
 * the store it anchors, so one left from a store since dropped and made anew
 * at the same place is told apart from a cut log. */
static int store_id(ng_store *st, char out[33])
{
	if (st->store_id[0]) {
		memcpy(out, st->store_id, 33);
		return 0;
	}
	ng_err err;
	ng_sql_stmt *q = ng_q(st, &err, "SELECT value FROM meta WHERE key = 'store_id'", "");
	int r = q ? ng_sql_step(q, &err) : -1;
	if (r == 1)
		ng_q_text(q, 0, st->store_id, sizeof st->store_id);
	ng_sql_finalize(q);
	memcpy(out, st->store_id, 33);
	return r == 1 && st->store_id[0] ? 0 : -1;
}

/* For PostgreSQL: one file per database and store under the state
 * directory, named by the URI without its password (so that changing a
 * password keeps the anchor) and the store's id. */
static int anchor_path(ng_store *st)
{
	if (st->anchor_path[0])
		return 0;
	char id[33];
	if (store_id(st, id) < 0)
		return -1;
	const char *dir = getenv("NODEGATE_STATE_DIR");
	if (!dir || dir[0] != '/')
		dir = "/var/lib/nodegate";
	char where[65];
	ng_sha256_hex(st->where, strlen(st->where), where);
	where[16] = '\0';
	snprintf(st->anchor_path, sizeof st->anchor_path, "%s/audit-head-%s-%.16s", dir, where, id);
	return 0;
}

const char *ng_store_anchor_path(ng_store *st)
{
	anchor_path(st);
	return st->anchor_path[0] ? st->anchor_path : "(no store id: the store predates anchors)";
}

void ng_anchor_due(ng_store *st, int64_t seq, const char *hash)
{
	st->anchor_due = true;
	st->anchor_seq = seq;
	ng_copy(st->anchor_hash, sizeof st->anchor_hash, hash);
}

void ng_anchor_write(ng_store *st)
{
	if (!st->anchor_due)
		return;
	st->anchor_due = false;
	if (st->scratch)
		return;
	char id[33];
	if (store_id(st, id) < 0 || anchor_path(st) < 0) {
		fprintf(stderr, "nodegate: warning: cannot anchor the audit log's head: the store has"
		                " no id in meta\n");
		return;
	}
	/* The directory of a PostgreSQL anchor may not exist yet. */
	char dir[sizeof st->anchor_path];
	ng_copy(dir, sizeof dir, st->anchor_path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			goto failed;
	}
	char text[128];
	int n = snprintf(text, sizeof text, ANCHOR_TAG "\n%s %" PRId64 " %s\n", id, st->anchor_seq,
	                 st->anchor_hash);
	ng_err err;
	if (ng_write_file_atomic_mode(st->anchor_path, text, (size_t)n, 0600, &err) == 0)
		return;
	fprintf(stderr, "nodegate: warning: cannot anchor the audit log's head in %s: %s\n",
	        st->anchor_path, err.msg);
	return;
failed:
	fprintf(stderr, "nodegate: warning: cannot anchor the audit log's head in %s: %s\n",
	        st->anchor_path, strerror(errno));
}

int ng_anchor_read(ng_store *st, int64_t *seq, char hash[65], char *why, size_t why_len)
{
	char id[33];
	if (store_id(st, id) < 0 || anchor_path(st) < 0) {
		snprintf(why, why_len, "the store has no id in meta (it was removed)");
		return -1;
	}
	FILE *f = fopen(st->anchor_path, "re");
	if (!f) {
		snprintf(why, why_len, "%s", strerror(errno));
		return errno == ENOENT ? 0 : -1;
	}
	char tag[64] = "", line[200] = "";
	bool ok = fgets(tag, sizeof tag, f) && fgets(line, sizeof line, f);
	fclose(f);
	char h[80] = "", other[80] = "";
	long long s = 0;
	if (!ok || strcmp(tag, ANCHOR_TAG "\n") != 0 ||
	    sscanf(line, "%79s %lld %79s", other, &s, h) != 3 || s < 1 || strlen(h) != 64) {
		snprintf(why, why_len, "%s is not an anchor nodegate wrote", st->anchor_path);
		return -1;
	}
	if (strcmp(other, id) != 0) {
		snprintf(why, why_len,
		         "%s anchors another store (id %.32s; this one is %s): a store made anew where"
		         " one was, or its id in meta edited; when the store was made anew, remove the"
		         " old anchor",
		         st->anchor_path, other, id);
		return -1;
	}
	*seq = s;
	ng_copy(hash, 65, h);
	return 1;
}
