/* The SQL interface over a PostgreSQL server, through libpq.
 *
 * Statements carry the shared `?` dialect; they are renumbered $1..$n once,
 * at prepare. A statement's first run goes out with PQexecParams (one round
 * trip, nothing left on the server); a statement run again is prepared under
 * a name and run with PQexecPrepared from then on, so a loop of inserts is
 * parsed and planned once. Parameters travel as text, blobs as binary;
 * results come back as text and are parsed here. */
#include "store/sql.h"

#include <ctype.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

/* ---- libpq, loaded when a PostgreSQL store is opened -------------------------- */

/* libpq is loaded at run time, as NVML is: a SQLite store (the default)
 * never loads it, so every start of the binary (an epilog at the end of
 * each job) is spared libpq's own dozen libraries (krb5, ldap, gnutls...).
 * The header gives the types; this table the functions, by name. */
#define NG_PQ_FUNCTIONS(X) \
	X(PQclear) \
	X(PQcmdStatus) \
	X(PQconnectdbParams) \
	X(PQconninfoFree) \
	X(PQconninfoParse) \
	X(PQerrorMessage) \
	X(PQexec) \
	X(PQexecParams) \
	X(PQexecPrepared) \
	X(PQfinish) \
	X(PQfreemem) \
	X(PQgetisnull) \
	X(PQgetvalue) \
	X(PQnfields) \
	X(PQntuples) \
	X(PQprepare) \
	X(PQresultErrorField) \
	X(PQresultStatus) \
	X(PQsetNoticeProcessor) \
	X(PQstatus) \
	X(PQtransactionStatus) \
	X(PQunescapeBytea)

static struct {
	void *lib;
#define NG_PQ_POINTER(f) __typeof__(f) *fn_##f;
	NG_PQ_FUNCTIONS(NG_PQ_POINTER)
#undef NG_PQ_POINTER
} pq;

/* Past here every PQ call goes through the table. */
#define PQclear (pq.fn_PQclear)
#define PQcmdStatus (pq.fn_PQcmdStatus)
#define PQconnectdbParams (pq.fn_PQconnectdbParams)
#define PQconninfoFree (pq.fn_PQconninfoFree)
#define PQconninfoParse (pq.fn_PQconninfoParse)
#define PQerrorMessage (pq.fn_PQerrorMessage)
#define PQexec (pq.fn_PQexec)
#define PQexecParams (pq.fn_PQexecParams)
#define PQexecPrepared (pq.fn_PQexecPrepared)
#define PQfinish (pq.fn_PQfinish)
#define PQfreemem (pq.fn_PQfreemem)
#define PQgetisnull (pq.fn_PQgetisnull)
#define PQgetvalue (pq.fn_PQgetvalue)
#define PQnfields (pq.fn_PQnfields)
#define PQntuples (pq.fn_PQntuples)
#define PQprepare (pq.fn_PQprepare)
#define PQresultErrorField (pq.fn_PQresultErrorField)
#define PQresultStatus (pq.fn_PQresultStatus)
#define PQsetNoticeProcessor (pq.fn_PQsetNoticeProcessor)
#define PQstatus (pq.fn_PQstatus)
#define PQtransactionStatus (pq.fn_PQtransactionStatus)
#define PQunescapeBytea (pq.fn_PQunescapeBytea)

#define NG_LIBPQ_DEFAULT "libpq.so.5"

/* Loads libpq once: $NODEGATE_LIBPQ, else libpq.so.5 on the loader's path. */
static int load_libpq(const char *where, ng_err *err)
{
	if (pq.lib)
		return 0;
	const char *path = getenv("NODEGATE_LIBPQ");
	if (!path || !*path)
		path = NG_LIBPQ_DEFAULT;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		return ng_fail(err,
		               "%s is a PostgreSQL store, and the PostgreSQL client library cannot be "
		               "loaded (%s: %s): install it (Debian: libpq5) or use a SQLite store",
		               where, path, why ? why : "not found");
	}
#define NG_PQ_LOAD(f)                                                                         \
	pq.fn_##f = (__typeof__(pq.fn_##f))dlsym(lib, #f);                                      \
	if (!pq.fn_##f) {                                                                       \
		dlclose(lib);                                                                       \
		memset(&pq, 0, sizeof pq);                                                          \
		return ng_fail_as(err, NG_ERR_STORE, "%s: the PostgreSQL client library %s has no %s: it is not "     \
		                    "libpq, or too old",                                            \
		               where, path, #f);                                                    \
	}
	NG_PQ_FUNCTIONS(NG_PQ_LOAD)
#undef NG_PQ_LOAD
	pq.lib = lib;
	return 0;
}

/* The one advisory lock every writer takes: the store's single writer lock,
 * as SQLite's BEGIN IMMEDIATE is. */
#define WRITER_LOCK_KEY "7235101"
#define CONNECT_TIMEOUT_S "10"

struct pg_db {
	ng_sql base;
	PGconn *c;
	char where[512]; /* the URI with any password hidden */
	ng_sql_error last;
	unsigned next_name;
	/* Named statements finalized inside a failed transaction, where even
	 * DEALLOCATE is refused: they go once the transaction has ended. */
	ng_strbuf orphans;
};

/* One parameter's value: numbers in place, text and blobs on the heap. */
struct pg_param {
	char *heap;
	char num[32];
};

/* A bytea column decoded for the caller, valid until the next step. */
struct pg_blob {
	unsigned char *p;
	size_t len, cap;
	bool ready;
};

struct pg_stmt {
	ng_sql_stmt base;
	char *sql; /* with $n placeholders */
	int nparams;
	struct pg_param *params;
	/* What libpq takes, kept beside the values: NULL binds NULL. */
	const char **values;
	int *lengths, *formats;
	int bad_bind; /* the first parameter number out of range, 0 when none */
	unsigned runs;
	char name[24]; /* set once the statement is prepared on the server */
	PGresult *res;
	int row, nrows;
	struct pg_blob *blobs;
	int nblobs;
};

static struct pg_db *db_of(ng_sql *db) { return (struct pg_db *)db; }
static struct pg_stmt *stmt_of(ng_sql_stmt *st) { return (struct pg_stmt *)st; }

/* ---- messages ---------------------------------------------------------------- */


/* libpq's messages span lines ("...failed: X\n\tIs the server running...");
 * messages here are one line. */
static void one_line(const char *msg, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *p = msg ? msg : ""; *p && n + 3 < cap; p++) {
		if (*p == '\n') {
			while (p[1] == '\t' || p[1] == ' ' || p[1] == '\n')
				p++;
			if (p[1] && n) {
				out[n++] = ';';
				out[n++] = ' ';
			}
			continue;
		}
		out[n++] = *p == '\t' ? ' ' : *p;
	}
	out[n] = '\0';
}

/* Where a password sits in a connection string: user:PASSWORD@ in a URI,
 * ?password=/&password= in its query, password=... as a keyword. */
struct span {
	size_t at, len;
};

static size_t keyword_value_len(const char *v, bool uri)
{
	if (*v != '\'')
		return strcspn(v, uri ? "&#" : " \t");
	size_t len = 1;
	while (v[len] && v[len] != '\'')
		len += v[len] == '\\' && v[len + 1] ? 2 : 1;
	return len + (v[len] == '\'');
}

static int find_passwords(const char *s, struct span *sp, int max)
{
	int n = 0;
	const char *auth = strstr(s, "://");
	if (auth) {
		auth += 3;
		size_t alen = strcspn(auth, "/?");
		const char *at = memrchr(auth, '@', alen);
		const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
		if (colon && n < max)
			sp[n++] = (struct span){(size_t)(colon + 1 - s), (size_t)(at - colon - 1)};
	}
	for (const char *p = s; (p = strstr(p, "password")) && n < max; p += 8) {
		const char *v = p + 8;
		if (p > s && !strchr("?& \t", p[-1]))
			continue;
		while (*v == ' ')
			v++;
		if (*v++ != '=')
			continue;
		while (*v == ' ')
			v++;
		sp[n++] = (struct span){(size_t)(v - s), keyword_value_len(v, auth != NULL)};
	}
	return n;
}

/* s with every span replaced by ***. */
static void hide_spans(const char *s, const struct span *sp, int n, char *out, size_t cap)
{
	ng_strbuf b = {0};
	size_t from = 0;
	for (int i = 0; i < n; i++) {
		if (sp[i].at < from)
			continue;
		ng_strbuf_add(&b, s + from, sp[i].at - from);
		ng_strbuf_adds(&b, "***");
		from = sp[i].at + sp[i].len;
	}
	ng_strbuf_adds(&b, s + from);
	snprintf(out, cap, "%s", b.s && !b.oom ? b.s : "(a PostgreSQL URI)");
	ng_strbuf_free(&b);
}

static void hide_password(const char *uri, char *out, size_t cap)
{
	struct span sp[8];
	hide_spans(uri, sp, find_passwords(uri, sp, 8), out, cap);
}

/* msg with any text that is a password in uri replaced: libpq's parse
 * errors quote the token they choke on, which may be one. */
static void scrub(const char *msg, const char *uri, char *out, size_t cap)
{
	struct span sp[8], hits[32];
	int n = find_passwords(uri, sp, 8), h = 0;
	for (const char *p = msg; *p && h < 32; p++)
		for (int i = 0; i < n && h < 32; i++)
			if (sp[i].len && strncmp(p, uri + sp[i].at, sp[i].len) == 0) {
				hits[h++] = (struct span){(size_t)(p - msg), sp[i].len};
				p += sp[i].len - 1;
				break;
			}
	hide_spans(msg, hits, h, out, cap);
}

/* SQLSTATEs and the connection's state, to the classes callers act on. */
static ng_sql_error classify(PGconn *c, const char *state)
{
	if (PQstatus(c) == CONNECTION_BAD)
		return NG_SQL_E_UNREACHABLE;
	if (!state || strlen(state) != 5)
		return NG_SQL_E_OTHER;
	if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)
		return NG_SQL_E_UNREACHABLE;
	if (strcmp(state, "53100") == 0)
		return NG_SQL_E_FULL;
	if (strncmp(state, "23", 2) == 0)
		return NG_SQL_E_CONSTRAINT;
	if (!strcmp(state, "40001") || !strcmp(state, "40P01") || !strcmp(state, "55P03"))
		return NG_SQL_E_BUSY;
	if (!strcmp(state, "XX001") || !strcmp(state, "XX002"))
		return NG_SQL_E_CORRUPT;
	/* 25006: a read-only transaction, as on a hot standby. */
	if (!strcmp(state, "42501") || !strcmp(state, "25006"))
		return NG_SQL_E_READONLY;
	return NG_SQL_E_OTHER;
}

/* Records the class of a failure and fills err with what failed, while
 * doing what, and what the operator can do. r may be NULL (no result). */
static int pg_fail(struct pg_db *d, ng_err *err, const PGresult *r, const char *doing)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char line[256], why[300];
	one_line(primary ? primary : PQerrorMessage(d->c), line, sizeof line);
	/* libpq's own messages carry the severity ("FATAL:  ..."); the class
	 * says as much. */
	const char *say = line;
	if (!strncmp(say, "FATAL:  ", 8) || !strncmp(say, "ERROR:  ", 8))
		say += 8;
	if (state)
		snprintf(why, sizeof why, "SQLSTATE %s: %s", state, say);
	else
		snprintf(why, sizeof why, "%s", say);
	d->last = classify(d->c, state);
	switch (d->last) {
	case NG_SQL_E_UNREACHABLE:
		return ng_fail_as(err, NG_ERR_STORE, "lost the connection to PostgreSQL at %s while %s (%s): check "
		                    "that the server is up and reachable, then try again",
		               d->where, doing, why);
	case NG_SQL_E_FULL:
		return ng_fail_as(err, NG_ERR_STORE, "the PostgreSQL server at %s is out of disk space (%s, while "
		                    "%s): free space there, nothing was written",
		               d->where, why, doing);
	case NG_SQL_E_BUSY:
		return ng_fail_as(err, NG_ERR_STORE, "PostgreSQL at %s: another writer held a lock too long (%s, "
		                    "while %s): try again once it has finished",
		               d->where, why, doing);
	case NG_SQL_E_CONSTRAINT:
		return ng_fail_as(err, NG_ERR_STORE, "PostgreSQL at %s refused the row (%s, while %s)", d->where,
		               why, doing);
	case NG_SQL_E_CORRUPT:
		return ng_fail_as(err, NG_ERR_STORE, "PostgreSQL at %s reports damaged data (%s, while %s): have "
		                    "its administrator check the database",
		               d->where, why, doing);
	case NG_SQL_E_READONLY:
		return ng_fail_as(err, NG_ERR_STORE, "PostgreSQL at %s does not let this role write (%s, while "
		                    "%s): grant it write access, or connect to the primary",
		               d->where, why, doing);
	default:
		return ng_fail_as(err, NG_ERR_STORE, "PostgreSQL at %s failed (%s, while %s)", d->where, why, doing);
	}
}

static int pg_fail_sql(struct pg_db *d, ng_err *err, const PGresult *r, const char *sql)
{
	char what[96], doing[128];
	ng_sql_snippet(sql, what, sizeof what);
	snprintf(doing, sizeof doing, "running `%s`", what);
	return pg_fail(d, err, r, doing);
}

static bool ok(const PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);
	return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_EMPTY_QUERY;
}

/* Runs sql, reporting a failure as `doing`; the result is not kept. */
static int run(struct pg_db *d, const char *sql, const char *doing, ng_err *err)
{
	PGresult *r = PQexec(d->c, sql);
	int rc = ok(r) ? 0 : pg_fail(d, err, r, doing);
	PQclear(r);
	return rc;
}

/* ---- transactions -------------------------------------------------------------- */

static void drop_orphans(struct pg_db *d)
{
	if (d->orphans.len && PQtransactionStatus(d->c) == PQTRANS_IDLE)
		PQclear(PQexec(d->c, d->orphans.s));
	ng_strbuf_reset(&d->orphans);
}

static void pg_rollback(ng_sql *db)
{
	struct pg_db *d = db_of(db);
	PGTransactionStatusType t = PQtransactionStatus(d->c);
	if (t == PQTRANS_INTRANS || t == PQTRANS_INERROR)
		PQclear(PQexec(d->c, "ROLLBACK"));
	drop_orphans(d);
}

/* PostgreSQL only warns at a BEGIN inside a transaction, and a second
 * begin would silently join the first; SQLite refuses it, and so does this.
 * A begin that fails leaves an aborted transaction behind: that is ended,
 * so the connection is as it was. */
static int begin(struct pg_db *d, const char *sql, const char *doing, ng_err *err)
{
	if (PQtransactionStatus(d->c) != PQTRANS_IDLE) {
		d->last = PQstatus(d->c) == CONNECTION_BAD ? NG_SQL_E_UNREACHABLE : NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot start a transaction on PostgreSQL at %s: %s", d->where,
		               d->last == NG_SQL_E_UNREACHABLE ? "the connection was lost"
		                                               : "one is already open");
	}
	if (run(d, sql, doing, err) == 0)
		return 0;
	pg_rollback(&d->base);
	return -1;
}

static int pg_begin_write(ng_sql *db, ng_err *err)
{
	return begin(db_of(db), "BEGIN; SELECT pg_advisory_xact_lock(" WRITER_LOCK_KEY ")",
	             "starting a write transaction (taking the store's writer lock)", err);
}

static int pg_begin_read(ng_sql *db, ng_err *err)
{
	return begin(db_of(db), "BEGIN ISOLATION LEVEL REPEATABLE READ",
	             "starting a read transaction", err);
}

static int pg_commit(ng_sql *db, ng_err *err)
{
	struct pg_db *d = db_of(db);
	PGTransactionStatusType t = PQtransactionStatus(d->c);
	/* PostgreSQL answers COMMIT of a failed transaction with a rollback,
	 * and COMMIT outside one with a warning; neither wrote anything. */
	if (t == PQTRANS_INERROR || t == PQTRANS_IDLE) {
		pg_rollback(db);
		if (d->last == NG_SQL_E_NONE || t == PQTRANS_IDLE)
			d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot commit on PostgreSQL at %s: %s; nothing was written",
		               d->where,
		               t == PQTRANS_IDLE ? "no transaction is open"
		                                 : "a statement in the transaction had failed, "
		                                   "so it was rolled back");
	}
	PGresult *r = PQexec(d->c, "COMMIT");
	int rc = 0;
	if (!ok(r))
		rc = pg_fail(d, err, r, "committing");
	else if (strcmp(PQcmdStatus(r), "COMMIT") != 0)
		rc = ng_fail_as(err, NG_ERR_STORE, "PostgreSQL at %s rolled the transaction back instead of "
		                  "committing it (%s); nothing was written",
		             d->where, PQcmdStatus(r));
	PQclear(r);
	if (rc < 0) {
		if (d->last == NG_SQL_E_NONE)
			d->last = NG_SQL_E_OTHER;
		pg_rollback(db);
		return -1;
	}
	drop_orphans(d);
	return 0;
}

static int pg_exec(ng_sql *db, const char *sql, ng_err *err)
{
	struct pg_db *d = db_of(db);
	PGresult *r = PQexec(d->c, sql);
	int rc = ok(r) ? 0 : pg_fail_sql(d, err, r, sql);
	PQclear(r);
	return rc;
}

/* ---- statements -------------------------------------------------------------- */

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

/* The length of the quoted text or comment that starts at p (inside sql),
 * or 0 when none starts there. Unterminated ones run to the end. */
static size_t quoted_len(const char *sql, const char *p)
{
	char prev = p > sql ? p[-1] : ' ';
	if (*p == '\'' || *p == '"') {
		/* E'...' strings take backslash escapes; '' and "" double up. */
		bool esc = *p == '\'' && (prev == 'E' || prev == 'e') &&
		           (p - 1 == sql || !ident_char(p[-2]));
		size_t i = 1;
		while (p[i]) {
			if (esc && p[i] == '\\' && p[i + 1]) {
				i += 2;
			} else if (p[i] == *p) {
				if (p[i + 1] != *p)
					return i + 1;
				i += 2;
			} else {
				i++;
			}
		}
		return i;
	}
	if (p[0] == '-' && p[1] == '-')
		return strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		/* PostgreSQL's block comments nest. */
		size_t i = 2;
		int depth = 1;
		while (p[i] && depth) {
			if (p[i] == '/' && p[i + 1] == '*')
				depth++, i += 2;
			else if (p[i] == '*' && p[i + 1] == '/')
				depth--, i += 2;
			else
				i++;
		}
		return i;
	}
	if (*p == '$' && !ident_char(prev)) {
		/* $tag$...$tag$, the tag possibly empty; $1 is not one. */
		size_t t = 1;
		if (isdigit((unsigned char)p[1]))
			return 0;
		while (p[t] && p[t] != '$' && ident_char(p[t]))
			t++;
		if (p[t] != '$')
			return 0;
		t++;
		char tag[64];
		if (t >= sizeof tag)
			return 0;
		memcpy(tag, p, t);
		tag[t] = '\0';
		const char *end = strstr(p + t, tag);
		return end ? (size_t)(end - p) + t : strlen(p);
	}
	return 0;
}

/* sql with each `?` outside quoted text and comments numbered $1, $2, ... */
static char *number_placeholders(const char *sql, int *count)
{
	ng_strbuf b = {0};
	int n = 0;
	for (const char *p = sql; *p;) {
		size_t q = quoted_len(sql, p);
		if (q) {
			ng_strbuf_add(&b, p, q);
			p += q;
		} else if (*p == '?') {
			ng_strbuf_printf(&b, "$%d", ++n);
			p++;
		} else {
			ng_strbuf_addc(&b, *p++);
		}
	}
	if (!b.s)
		ng_strbuf_adds(&b, "");
	if (b.oom) {
		ng_strbuf_free(&b);
		return NULL;
	}
	*count = n;
	return b.s;
}

static int alloc_params(struct pg_stmt *s)
{
	size_t n = (size_t)s->nparams;
	s->params = calloc(n, sizeof *s->params);
	s->values = calloc(n, sizeof *s->values);
	s->lengths = calloc(n, sizeof *s->lengths);
	s->formats = calloc(n, sizeof *s->formats);
	return s->params && s->values && s->lengths && s->formats ? 0 : -1;
}

static void free_params(struct pg_stmt *s)
{
	for (int i = 0; s->params && i < s->nparams; i++)
		free(s->params[i].heap);
	free(s->params);
	free(s->values);
	free(s->lengths);
	free(s->formats);
}

static int pg_prepare(ng_sql *db, const char *sql, ng_sql_stmt **out, ng_err *err)
{
	struct pg_db *d = db_of(db);
	*out = NULL;
	struct pg_stmt *s = calloc(1, sizeof *s);
	if (s)
		s->sql = number_placeholders(sql, &s->nparams);
	if (s && s->sql && s->nparams && alloc_params(s) < 0) {
		free_params(s);
		free(s->sql);
		free(s);
		s = NULL;
	}
	if (!s || !s->sql) {
		free(s);
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "out of memory preparing a statement for PostgreSQL at %s",
		               d->where);
	}
	s->base.db = db;
	*out = &s->base;
	return 0;
}

/* Parameter i (from 1) emptied, bound to NULL, for the bind to fill; -1
 * (remembered for step) when the statement has no parameter i. */
static int param(struct pg_stmt *s, int i)
{
	if (i < 1 || i > s->nparams) {
		if (!s->bad_bind)
			s->bad_bind = i;
		db_of(s->base.db)->last = NG_SQL_E_OTHER;
		return -1;
	}
	struct pg_param *p = &s->params[--i];
	free(p->heap);
	p->heap = NULL;
	s->values[i] = NULL;
	s->lengths[i] = s->formats[i] = 0;
	return i;
}

static int pg_bind_null(ng_sql_stmt *st, int i) { return param(stmt_of(st), i) < 0 ? -1 : 0; }

static int set_num(struct pg_stmt *s, int k)
{
	s->values[k] = s->params[k].num;
	s->lengths[k] = (int)strlen(s->params[k].num);
	return 0;
}

static int pg_bind_int64(ng_sql_stmt *st, int i, int64_t v)
{
	struct pg_stmt *s = stmt_of(st);
	int k = param(s, i);
	if (k < 0)
		return -1;
	snprintf(s->params[k].num, sizeof s->params[k].num, "%" PRId64, v);
	return set_num(s, k);
}

/* 17 significant digits read back as exactly v; the special values are
 * spelled as PostgreSQL's float8 input takes them. */
static int pg_bind_double(ng_sql_stmt *st, int i, double v)
{
	struct pg_stmt *s = stmt_of(st);
	int k = param(s, i);
	if (k < 0)
		return -1;
	char *num = s->params[k].num;
	size_t cap = sizeof s->params[k].num;
	if (isnan(v))
		snprintf(num, cap, "NaN");
	else if (isinf(v))
		snprintf(num, cap, "%s", v > 0 ? "Infinity" : "-Infinity");
	else
		snprintf(num, cap, "%.17g", v);
	return set_num(s, k);
}

/* A copy of len bytes as parameter k; format 0 text, 1 binary. A failed
 * copy is remembered, so the statement cannot run with the value missing. */
static int set_heap(struct pg_stmt *s, int k, const void *v, size_t len, int format)
{
	char *h = len <= INT32_MAX ? malloc(len ? len : 1) : NULL;
	if (!h) {
		if (!s->bad_bind)
			s->bad_bind = k + 1;
		db_of(s->base.db)->last = NG_SQL_E_OTHER;
		return -1;
	}
	if (len)
		memcpy(h, v, len);
	s->params[k].heap = h;
	s->values[k] = h;
	s->lengths[k] = (int)len;
	s->formats[k] = format;
	return 0;
}

static int pg_bind_text(ng_sql_stmt *st, int i, const char *v)
{
	struct pg_stmt *s = stmt_of(st);
	int k = param(s, i);
	if (k < 0)
		return -1;
	/* Text is sent as the C string libpq reads it as, NUL included. */
	return v ? set_heap(s, k, v, strlen(v) + 1, 0) : 0;
}

static int pg_bind_blob(ng_sql_stmt *st, int i, const void *v, size_t len)
{
	struct pg_stmt *s = stmt_of(st);
	int k = param(s, i);
	if (k < 0)
		return -1;
	return set_heap(s, k, v, len, 1);
}

static void clear_result(struct pg_stmt *s)
{
	PQclear(s->res);
	s->res = NULL;
	s->row = s->nrows = 0;
	for (int i = 0; i < s->nblobs; i++)
		s->blobs[i].ready = false;
}

/* Runs the statement once: unnamed the first time, prepared under a name
 * from the second on. Results come back as text (the last 0). */
static int execute(struct pg_stmt *s, ng_err *err)
{
	struct pg_db *d = db_of(s->base.db);
	PGresult *r;
	if (s->runs++ == 0) {
		r = PQexecParams(d->c, s->sql, s->nparams, NULL, s->values, s->lengths, s->formats,
		                 0);
	} else {
		if (!s->name[0]) {
			char name[sizeof s->name];
			snprintf(name, sizeof name, "ng_s%u", d->next_name++);
			r = PQprepare(d->c, name, s->sql, s->nparams, NULL);
			if (!ok(r)) {
				pg_fail_sql(d, err, r, s->sql);
				PQclear(r);
				return -1;
			}
			PQclear(r);
			memcpy(s->name, name, sizeof name);
		}
		r = PQexecPrepared(d->c, s->name, s->nparams, s->values, s->lengths, s->formats, 0);
	}
	if (!ok(r)) {
		pg_fail_sql(d, err, r, s->sql);
		PQclear(r);
		return -1;
	}
	s->res = r;
	s->row = 0;
	s->nrows = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
	return 0;
}

static int pg_step(ng_sql_stmt *st, ng_err *err)
{
	struct pg_stmt *s = stmt_of(st);
	struct pg_db *d = db_of(st->db);
	if (s->res) {
		for (int i = 0; i < s->nblobs; i++)
			s->blobs[i].ready = false;
		if (s->row < s->nrows)
			s->row++;
		return s->row < s->nrows;
	}
	if (s->bad_bind) {
		char what[96];
		ng_sql_snippet(s->sql, what, sizeof what);
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "cannot bind parameter %d of `%s` (it has %d parameters, or "
		                    "memory ran out)",
		               s->bad_bind, what, s->nparams);
	}
	if (execute(s, err) < 0)
		return -1;
	return s->nrows > 0;
}

/* The current row's value at col, or NULL when there is none or it is NULL. */
static const char *value(struct pg_stmt *s, int col)
{
	if (!s->res || s->row >= s->nrows || col < 0 || col >= PQnfields(s->res) ||
	    PQgetisnull(s->res, s->row, col))
		return NULL;
	return PQgetvalue(s->res, s->row, col);
}

static bool pg_column_is_null(ng_sql_stmt *st, int col) { return !value(stmt_of(st), col); }

static int64_t pg_column_int64(ng_sql_stmt *st, int col)
{
	const char *v = value(stmt_of(st), col);
	if (!v)
		return 0;
	/* booleans come back as t and f */
	if ((v[0] == 't' || v[0] == 'f') && !v[1])
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

/* strtod reads "NaN", "Infinity" and "-Infinity" as PostgreSQL writes them. */
static double pg_column_double(ng_sql_stmt *st, int col)
{
	const char *v = value(stmt_of(st), col);
	return v ? strtod(v, NULL) : 0.0;
}

static const char *pg_column_text(ng_sql_stmt *st, int col) { return value(stmt_of(st), col); }

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* bytea's hex output, \x and two digits a byte, into b. */
static int decode_hex(const char *v, struct pg_blob *b)
{
	size_t n = strlen(v + 2) / 2;
	if (n + 1 > b->cap) {
		unsigned char *p = realloc(b->p, n + 1);
		if (!p)
			return -1;
		b->p = p;
		b->cap = n + 1;
	}
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(v[2 + 2 * i]), lo = hexval(v[3 + 2 * i]);
		if (hi < 0 || lo < 0)
			return -1;
		b->p[i] = (unsigned char)(hi << 4 | lo);
	}
	b->len = n;
	return 0;
}

/* The older escape format, should a server be set to it. */
static int decode_escaped(const char *v, struct pg_blob *b)
{
	size_t n;
	unsigned char *u = PQunescapeBytea((const unsigned char *)v, &n);
	if (!u)
		return -1;
	free(b->p);
	b->p = malloc(n + 1);
	if (b->p)
		memcpy(b->p, u, n);
	PQfreemem(u);
	b->cap = b->p ? n + 1 : 0;
	b->len = b->p ? n : 0;
	return b->p ? 0 : -1;
}

static const void *pg_column_blob(ng_sql_stmt *st, int col, size_t *len)
{
	struct pg_stmt *s = stmt_of(st);
	const char *v = value(s, col);
	*len = 0;
	if (!v)
		return "";
	if (col >= s->nblobs) {
		struct pg_blob *bs = realloc(s->blobs, (size_t)(col + 1) * sizeof *bs);
		if (!bs)
			return "";
		memset(bs + s->nblobs, 0, (size_t)(col + 1 - s->nblobs) * sizeof *bs);
		s->blobs = bs;
		s->nblobs = col + 1;
	}
	struct pg_blob *b = &s->blobs[col];
	if (!b->ready) {
		int rc = v[0] == '\\' && v[1] == 'x' ? decode_hex(v, b) : decode_escaped(v, b);
		if (rc < 0)
			return "";
		b->ready = true;
	}
	*len = b->len;
	return b->len ? (const void *)b->p : "";
}

static void pg_reset(ng_sql_stmt *st) { clear_result(stmt_of(st)); }

static void pg_finalize(ng_sql_stmt *st)
{
	struct pg_stmt *s = stmt_of(st);
	struct pg_db *d = db_of(st->db);
	clear_result(s);
	if (s->name[0] && PQstatus(d->c) == CONNECTION_OK) {
		char sql[64];
		snprintf(sql, sizeof sql, "DEALLOCATE %s;", s->name);
		if (PQtransactionStatus(d->c) == PQTRANS_INERROR)
			ng_strbuf_adds(&d->orphans, sql);
		else
			PQclear(PQexec(d->c, sql));
	}
	for (int i = 0; i < s->nblobs; i++)
		free(s->blobs[i].p);
	free(s->blobs);
	free_params(s);
	free(s->sql);
	free(s);
}

static ng_sql_error pg_last_error(ng_sql *db) { return db_of(db)->last; }

static void pg_close(ng_sql *db)
{
	struct pg_db *d = db_of(db);
	PQfinish(d->c);
	ng_strbuf_free(&d->orphans);
	free(d);
}

static const struct ng_sql_ops pg_ops = {
	.kind = NG_SQL_POSTGRES,
	.exec = pg_exec,
	.prepare = pg_prepare,
	.bind_null = pg_bind_null,
	.bind_int64 = pg_bind_int64,
	.bind_double = pg_bind_double,
	.bind_text = pg_bind_text,
	.bind_blob = pg_bind_blob,
	.step = pg_step,
	.column_is_null = pg_column_is_null,
	.column_int64 = pg_column_int64,
	.column_double = pg_column_double,
	.column_text = pg_column_text,
	.column_blob = pg_column_blob,
	.reset = pg_reset,
	.finalize = pg_finalize,
	.begin_write = pg_begin_write,
	.begin_read = pg_begin_read,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.last_error = pg_last_error,
	.close = pg_close,
};

/* ---- connecting ---------------------------------------------------------------- */

/* A driver never prints; libpq would print notices to stderr. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* What the results are parsed with: shortest exact float output (some
 * servers are set to round it), hex bytea, no notices; and a lock timeout
 * like SQLite's busy timeout, so a writer stuck elsewhere is reported
 * instead of waited on forever. */
static const char session_setup[] = "SET client_min_messages = warning;"
                                    "SET extra_float_digits = 3;"
                                    "SET bytea_output = hex;"
                                    "SET lock_timeout = '10s'";

/* Entries before dbname are defaults the URI itself can override: a URI
 * that names its own connect_timeout keeps it. */
static PGconn *connect_to(const char *uri)
{
	const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
	const char *vals[] = {getenv("PGCONNECT_TIMEOUT") ? NULL : CONNECT_TIMEOUT_S, "nodegate",
	                      uri, NULL};
	return PQconnectdbParams(keys, vals, 1);
}

static int bad_uri(struct pg_db *d, const char *uri, char *why, ng_err *err)
{
	char line[256], hidden[256];
	one_line(why ? why : "it cannot be parsed", line, sizeof line);
	PQfreemem(why);
	scrub(line, uri, hidden, sizeof hidden);
	d->last = NG_SQL_E_OTHER;
	return ng_fail_as(err, NG_ERR_STORE, "%s is not a PostgreSQL URI libpq accepts: %s", d->where, hidden);
}

static int open_connection(struct pg_db *d, const char *uri, ng_err *err)
{
	char *why = NULL;
	PQconninfoOption *opts = PQconninfoParse(uri, &why);
	if (!opts)
		return bad_uri(d, uri, why, err);
	PQconninfoFree(opts);
	d->c = connect_to(uri);
	if (!d->c) {
		d->last = NG_SQL_E_OTHER;
		return ng_fail_as(err, NG_ERR_STORE, "out of memory connecting to PostgreSQL at %s", d->where);
	}
	if (PQstatus(d->c) != CONNECTION_OK) {
		char line[320], hidden[320];
		one_line(PQerrorMessage(d->c), line, sizeof line);
		scrub(line, uri, hidden, sizeof hidden);
		d->last = NG_SQL_E_UNREACHABLE;
		return ng_fail_as(err, NG_ERR_STORE, "cannot reach PostgreSQL at %s: %s", d->where, hidden);
	}
	PQsetNoticeProcessor(d->c, quiet, NULL);
	return run(d, session_setup, "setting up the session", err);
}

int ng_sql_pg_open(const char *uri, ng_sql **out, ng_err *err)
{
	*out = NULL;
	ng_sql_note_open_error(NG_SQL_E_OTHER);
	struct pg_db *d = calloc(1, sizeof *d);
	if (!d)
		return ng_fail_as(err, NG_ERR_STORE, "out of memory connecting to PostgreSQL");
	d->base.ops = &pg_ops;
	hide_password(uri, d->where, sizeof d->where);
	if (load_libpq(d->where, err) < 0) {
		free(d);
		return -1;
	}
	if (open_connection(d, uri, err) < 0) {
		ng_sql_note_open_error(d->last);
		pg_close(&d->base);
		return -1;
	}
	ng_sql_note_open_error(NG_SQL_E_NONE);
	*out = &d->base;
	return 0;
}
