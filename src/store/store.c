/* Opening the store, where it lives, and the query helpers its files share. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_internal.h"

int ng_store_default_path(ng_strbuf *out, ng_err *err)
{
	ng_strbuf_reset(out);
	if (geteuid() == 0) {
		ng_strbuf_adds(out, "/var/lib/nodegate/nodegate.db");
		return 0;
	}
	const char *xdg = getenv("XDG_STATE_HOME");
	if (xdg && xdg[0] == '/') {
		ng_strbuf_printf(out, "%s/nodegate/nodegate.db", xdg);
		return 0;
	}
	const char *home = getenv("HOME");
	if (!home || home[0] != '/')
		return ng_fail_as(err, NG_ERR_STORE, "no store given and neither XDG_STATE_HOME nor HOME is an absolute "
		                    "path: name one with --store or NODEGATE_STORE");
	ng_strbuf_printf(out, "%s/.local/state/nodegate/nodegate.db", home);
	return 0;
}

static bool is_pg_uri(const char *spec)
{
	return strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0;
}

/* The URI with any password replaced, for messages and `where`. */
static void hide_password(const char *uri, char *out, size_t cap)
{
	ng_copy(out, cap, uri);
	char *scheme = strstr(out, "://");
	if (!scheme)
		return;
	char *auth = scheme + 3, *at = strchr(auth, '@'), *slash = strchr(auth, '/');
	if (at && (!slash || at < slash)) {
		char *colon = memchr(auth, ':', (size_t)(at - auth));
		if (colon) {
			size_t tail = strlen(at) + 1;
			if ((size_t)(colon + 4 - out) + tail <= cap) {
				memmove(colon + 4, at, tail);
				memcpy(colon + 1, "***", 3);
			}
		}
	}
	char *pw = strstr(out, "password=");
	if (pw) {
		char *end = strchr(pw, '&');
		size_t tail = end ? strlen(end) + 1 : 1;
		if ((size_t)(pw + 12 - out) + tail <= cap) {
			memmove(pw + 12, end ? end : pw + strlen(pw), tail);
			memcpy(pw + 9, "***", 3);
		}
	}
}

/* Creates the store's directory and any missing parents (as `mkdir -p`),
 * mode 0700 for the ones it makes: the store holds evidence. */
static int ensure_parent_dir(const char *path, ng_err *err)
{
	char dir[4096];
	ng_copy(dir, sizeof dir, path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		bool end = *p == '\0';
		if (*p == '/' || end) {
			char c = *p;
			*p = '\0';
			if (mkdir(dir, 0700) < 0 && errno != EEXIST)
				return ng_fail_as(err, NG_ERR_STORE, "cannot create the store's directory %s: %s", dir,
				               strerror(errno));
			*p = c;
		}
		if (end)
			return 0;
	}
}

int ng_store_open(const char *spec, ng_store **out, ng_err *err)
{
	*out = NULL;
	ng_strbuf def = {0};
	if (!spec || !*spec) {
		const char *env = getenv("NODEGATE_STORE");
		if (env && *env) {
			spec = env;
		} else {
			if (ng_store_default_path(&def, err) < 0)
				return -1;
			spec = def.s;
		}
	}
	ng_store *st = calloc(1, sizeof *st);
	if (!st) {
		ng_strbuf_free(&def);
		return ng_fail_as(err, NG_ERR_STORE, "out of memory");
	}
	int rc;
	if (is_pg_uri(spec)) {
		hide_password(spec, st->where, sizeof st->where);
		ng_anchor_init(st, spec, true);
		rc = ng_sql_pg_open(spec, &st->db, err);
	} else {
		ng_copy(st->where, sizeof st->where, spec);
		ng_anchor_init(st, spec, false);
		rc = ensure_parent_dir(spec, err);
		if (rc == 0)
			rc = ng_sql_sqlite_open(spec, &st->db, err);
	}
	ng_strbuf_free(&def);
	if (rc == 0)
		rc = ng_store_schema_ensure(st, err);
	if (rc < 0) {
		ng_store_close(st);
		return -1;
	}
	*out = st;
	return 0;
}

int ng_store_open_scratch(const char *path, ng_store **out, ng_err *err)
{
	if (!path || !*path || is_pg_uri(path))
		return ng_fail_as(err, NG_ERR_USAGE, "a scratch store is a SQLite file path");
	if (ng_store_open(path, out, err) < 0)
		return -1;
	(*out)->scratch = true;
	if (ng_sql_sqlite_scratch((*out)->db, err) < 0) {
		ng_store_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int ng_store_batch_begin(ng_store *st, ng_err *err)
{
	return ng_sql_sqlite_batch(st->db, true, err);
}

int ng_store_batch_end(ng_store *st, ng_err *err)
{
	return ng_sql_sqlite_batch(st->db, false, err);
}

void ng_store_close(ng_store *st)
{
	if (!st)
		return;
	ng_sql_close(st->db);
	ng_state_forget(st);
	ng_cohort_mirror_free(st);
	free(st->touched);
	free(st->policy_text);
	free(st);
}

const char *ng_store_where(const ng_store *st) { return st->where; }
ng_sql *ng_store_sql(ng_store *st) { return st->db; }
void ng_store_set_policy(ng_store *st, const char *digest)
{
	ng_copy(st->policy, sizeof st->policy, digest);
}

ng_sql_error ng_store_last_error(ng_store *st)
{
	return st && st->db ? ng_sql_last_error(st->db) : NG_SQL_E_OTHER;
}

int ng_store_check(ng_store *st, ng_strbuf *report, ng_err *err)
{
	ng_strbuf_reset(report);
	if (ng_sql_kind_of(st->db) == NG_SQL_SQLITE) {
		ng_sql_stmt *q = ng_q(st, err, "PRAGMA integrity_check", "");
		if (!q)
			return -1;
		int r;
		while ((r = ng_sql_step(q, err)) == 1) {
			if (report->len)
				ng_strbuf_addc(report, '\n');
			ng_strbuf_adds(report, ng_sql_column_text(q, 0));
		}
		ng_sql_finalize(q);
		if (r < 0)
			return -1;
		return strcmp(report->s ? report->s : "", "ok") == 0 ? 0 : 1;
	}
	int64_t v;
	if (ng_q_int64(st, err, &v, "SELECT count(*) FROM meta", "") < 0)
		return -1;
	ng_strbuf_adds(report, "ok");
	return 0;
}

/* ---- query helpers ---------------------------------------------------------------- */

void ng_copy(char *dst, size_t cap, const char *src)
{
	if (!cap)
		return;
	size_t n = src ? strlen(src) : 0;
	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

static ng_sql_stmt *vq(ng_store *st, ng_err *err, const char *sql, const char *types, va_list ap)
{
	ng_sql_stmt *q;
	if (ng_sql_prepare(st->db, sql, &q, err) < 0)
		return NULL;
	int rc = 0;
	for (int i = 1; *types && rc == 0; types++, i++) {
		switch (*types) {
		case 't': rc = ng_sql_bind_text(q, i, va_arg(ap, const char *)); break;
		case 'i': rc = ng_sql_bind_int64(q, i, va_arg(ap, int64_t)); break;
		case 'd': {
			double v = va_arg(ap, double);
			rc = isnan(v) ? ng_sql_bind_null(q, i) : ng_sql_bind_double(q, i, v);
			break;
		}
		case 'b': {
			const void *p = va_arg(ap, const void *);
			size_t len = va_arg(ap, size_t);
			rc = ng_sql_bind_blob(q, i, p, len);
			break;
		}
		default: rc = -1; break;
		}
	}
	if (rc < 0) {
		ng_sql_finalize(q);
		ng_fail_as(err, NG_ERR_STORE, "cannot bind the parameters of: %.60s", sql);
		return NULL;
	}
	return q;
}

ng_sql_stmt *ng_q(ng_store *st, ng_err *err, const char *sql, const char *types, ...)
{
	va_list ap;
	va_start(ap, types);
	ng_sql_stmt *q = vq(st, err, sql, types, ap);
	va_end(ap);
	return q;
}

int ng_q_exec(ng_store *st, ng_err *err, const char *sql, const char *types, ...)
{
	va_list ap;
	va_start(ap, types);
	ng_sql_stmt *q = vq(st, err, sql, types, ap);
	va_end(ap);
	if (!q)
		return -1;
	int r;
	while ((r = ng_sql_step(q, err)) == 1)
		;
	ng_sql_finalize(q);
	return r < 0 ? -1 : 0;
}

int ng_q_int64(ng_store *st, ng_err *err, int64_t *out, const char *sql, const char *types, ...)
{
	va_list ap;
	va_start(ap, types);
	ng_sql_stmt *q = vq(st, err, sql, types, ap);
	va_end(ap);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1)
		*out = ng_sql_column_int64(q, 0);
	ng_sql_finalize(q);
	return r;
}

int ng_q_rows(ng_sql_stmt *q, size_t size, int (*read)(ng_sql_stmt *q, void *elem),
              void (*release)(void *elem), void **out, size_t *n, ng_err *err)
{
	*out = NULL;
	*n = 0;
	if (!q)
		return -1;
	size_t cap = 0;
	char *arr = NULL;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		if (*n == cap) {
			size_t c = cap ? cap * 2 : 16;
			char *p = realloc(arr, c * size);
			if (!p) {
				r = ng_fail_as(err, NG_ERR_STORE, "out of memory");
				break;
			}
			arr = p;
			cap = c;
		}
		if (read(q, arr + *n * size) < 0) {
			r = ng_fail_as(err, NG_ERR_STORE, "out of memory");
			break;
		}
		(*n)++;
	}
	ng_sql_finalize(q);
	if (r < 0) {
		for (size_t i = 0; release && i < *n; i++)
			release(arr + i * size);
		free(arr);
		*n = 0;
		return -1;
	}
	*out = arr;
	return 0;
}

double ng_q_double(ng_sql_stmt *q, int col)
{
	return ng_sql_column_is_null(q, col) ? NAN : ng_sql_column_double(q, col);
}

void ng_q_text(ng_sql_stmt *q, int col, char *dst, size_t cap)
{
	ng_copy(dst, cap, ng_sql_column_text(q, col));
}

char *ng_q_strdup(ng_sql_stmt *q, int col)
{
	const char *s = ng_sql_column_text(q, col);
	return strdup(s ? s : "");
}

int ng_store_tx(ng_store *st, int (*fn)(ng_store *st, void *arg, ng_err *err), void *arg,
                ng_err *err)
{
	ng_state_forget(st);
	st->anchor_due = false;
	if (ng_sql_begin_write(st->db, err) < 0)
		return -1;
	/* Rows the chain covers, written with no audit entry after them, get
	 * one of their own: no covered write leaves the chain behind. */
	if (fn(st, arg, err) < 0 ||
	    (st->n_touched && ng_store_audit(st, true, (int64_t)time(NULL), "nodegate", "state.write",
	                                     "store", NULL, err) < 0)) {
		ng_sql_rollback(st->db);
		ng_state_forget(st);
		st->anchor_due = false;
		return -1;
	}
	if (ng_sql_commit(st->db, err) < 0) {
		st->anchor_due = false;
		return -1;
	}
	ng_anchor_write(st);
	return 0;
}
