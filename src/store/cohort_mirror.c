/* A scratch store's copy of class_nodes and cohort_runs in memory.
 *
 * Every admission reads one cohort_runs row per node of its class for each
 * of its metrics, and counts its class's nodes: on a simulated fleet of
 * thousands of nodes that read is most of the simulation's time. A scratch
 * store (ng_store_open_scratch) has one writer, this connection, so a copy
 * kept beside the tables as ng_cohort_note writes them answers the same
 * reads without SQL. The copy follows the tables' own upserts exactly, and
 * is read again from the tables after any rollback (a savepoint undone
 * takes rows the copy has kept), so it never answers what the tables would
 * not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store_internal.h"

struct entry {
	char *node;
	int64_t taken_at, record_id; /* class_nodes: last_at, unused */
	double median;
};

struct group {
	char *key; /* class; or class \x1f software \x1f metric */
	struct entry *e;
	size_t n, cap;
};

struct ng_cohort_mirror {
	struct group *g; /* open addressing */
	size_t cap, used;
	uint64_t rollbacks; /* the connection's count when the copy was made */
	bool valid;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static void clear(struct ng_cohort_mirror *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		for (size_t k = 0; k < m->g[i].n; k++)
			free(m->g[i].e[k].node);
		free(m->g[i].e), free(m->g[i].key);
	}
	free(m->g);
	m->g = NULL;
	m->cap = m->used = 0;
	m->valid = false;
}

void ng_cohort_mirror_free(ng_store *st)
{
	if (!st->mirror)
		return;
	clear(st->mirror);
	free(st->mirror);
	st->mirror = NULL;
}

static struct group *find(struct ng_cohort_mirror *m, const char *key, bool make)
{
	if (make && (m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct group *g = calloc(cap, sizeof *g);
		if (!g)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->g[i].key)
				continue;
			size_t j = hash(m->g[i].key) & (cap - 1);
			while (g[j].key)
				j = (j + 1) & (cap - 1);
			g[j] = m->g[i];
		}
		free(m->g);
		m->g = g;
		m->cap = cap;
	}
	if (!m->cap)
		return NULL;
	size_t j = hash(key) & (m->cap - 1);
	while (m->g[j].key) {
		if (strcmp(m->g[j].key, key) == 0)
			return &m->g[j];
		j = (j + 1) & (m->cap - 1);
	}
	if (!make || !(m->g[j].key = strdup(key)))
		return NULL;
	m->used++;
	return &m->g[j];
}

/* The entry of node in g (made when absent and make); nodes sorted as
 * SQLite's BINARY collation sorts them (byte order, as strcmp). */
static struct entry *entry_of(struct group *g, const char *node, bool *made)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(g->e[mid].node, node);
		if (c == 0) {
			*made = false;
			return &g->e[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct entry *e = realloc(g->e, cap * sizeof *e);
		if (!e)
			return NULL;
		g->e = e;
		g->cap = cap;
	}
	char *copy = strdup(node);
	if (!copy)
		return NULL;
	memmove(&g->e[lo + 1], &g->e[lo], (g->n - lo) * sizeof *g->e);
	g->n++;
	g->e[lo] = (struct entry){.node = copy};
	*made = true;
	return &g->e[lo];
}

/* false: the key does not fit (then the tables answer, not the copy). */
static bool run_key(char *out, size_t cap, const char *class_key, const char *software,
                    const char *metric)
{
	int n = snprintf(out, cap, "%s\x1f%s\x1f%s", class_key, software ? software : "", metric);
	return n >= 0 && (size_t)n < cap;
}

/* The two upserts of ng_cohort_note, in memory. */
static int note_node(struct ng_cohort_mirror *m, const char *class_key, const char *node,
                     int64_t at)
{
	struct group *g = find(m, class_key, true);
	bool made;
	struct entry *e = g ? entry_of(g, node, &made) : NULL;
	if (!e)
		return -1;
	if (made || at > e->taken_at)
		e->taken_at = at;
	return 0;
}

static int note_run(struct ng_cohort_mirror *m, const char *key, const char *node, int64_t at,
                    int64_t record_id, double median)
{
	struct group *g = find(m, key, true);
	bool made;
	struct entry *e = g ? entry_of(g, node, &made) : NULL;
	if (!e)
		return -1;
	if (made || at > e->taken_at || (at == e->taken_at && record_id > e->record_id)) {
		e->taken_at = at;
		e->record_id = record_id;
		e->median = median;
	}
	return 0;
}

/* The copy, read from the tables when it has none or a rollback has been
 * since; NULL (the caller asks SQL) when it cannot be had. */
static struct ng_cohort_mirror *mirror_of(ng_store *st)
{
	if (!st->scratch)
		return NULL;
	if (!st->mirror && !(st->mirror = calloc(1, sizeof *st->mirror)))
		return NULL;
	struct ng_cohort_mirror *m = st->mirror;
	uint64_t rollbacks = ng_sql_sqlite_rollbacks(st->db);
	if (m->valid && m->rollbacks == rollbacks)
		return m;
	clear(m);
	ng_err err;
	ng_sql_stmt *q = ng_q(st, &err, "SELECT class, node, last_at FROM class_nodes", "");
	int r = q ? 1 : -1;
	while (r == 1 && (r = ng_sql_step(q, &err)) == 1)
		if (note_node(m, ng_sql_column_text(q, 0), ng_sql_column_text(q, 1),
		              ng_sql_column_int64(q, 2)) < 0)
			r = -1;
	ng_sql_finalize(q);
	q = r == 0 ? ng_q(st, &err, "SELECT class, software, metric, node, taken_at, record_id, median"
	                            " FROM cohort_runs", "")
	           : NULL;
	r = q ? 1 : -1;
	char key[1024];
	while (r == 1 && (r = ng_sql_step(q, &err)) == 1) {
		if (!run_key(key, sizeof key, ng_sql_column_text(q, 0), ng_sql_column_text(q, 1),
		             ng_sql_column_text(q, 2)) ||
		    note_run(m, key, ng_sql_column_text(q, 3), ng_sql_column_int64(q, 4),
		             ng_sql_column_int64(q, 5), ng_sql_column_double(q, 6)) < 0)
			r = -1;
	}
	ng_sql_finalize(q);
	if (r < 0) {
		clear(m);
		return NULL;
	}
	m->valid = true;
	m->rollbacks = rollbacks;
	return m;
}

void ng_cohort_mirror_note(ng_store *st, const ng_store_record *r, int64_t record_id,
                           double median)
{
	struct ng_cohort_mirror *m = st->scratch ? st->mirror : NULL;
	/* No copy yet, or one a rollback has made stale: the next read makes
	 * it from the tables, this row included. */
	if (!m || !m->valid || m->rollbacks != ng_sql_sqlite_rollbacks(st->db))
		return;
	char key[1024];
	if (!run_key(key, sizeof key, r->class_key, r->software, r->metric) ||
	    note_node(m, r->class_key, r->node, r->taken_at) < 0 ||
	    (r->n_samples && note_run(m, key, r->node, r->taken_at, record_id, median) < 0))
		clear(m); /* out of memory: read from the tables next time */
}

int ng_cohort_mirror_count(ng_store *st, const char *class_key, int64_t since, int64_t *out)
{
	struct ng_cohort_mirror *m = mirror_of(st);
	if (!m)
		return 0;
	struct group *g = find(m, class_key, false);
	int64_t n = 0;
	for (size_t i = 0; g && i < g->n; i++)
		n += g->e[i].taken_at >= since;
	*out = n;
	return 1;
}

int ng_cohort_mirror_drops(ng_store *st, const char *class_key, const char *software,
                           const char *metric, const char *exclude_node, int64_t since,
                           double median, double **drops, size_t *n)
{
	char key[1024];
	struct ng_cohort_mirror *m = exclude_node ? mirror_of(st) : NULL;
	if (!m || !run_key(key, sizeof key, class_key, software, metric))
		return 0;
	struct group *g = find(m, key, false);
	*drops = NULL;
	*n = 0;
	if (!g || !g->n)
		return 1;
	if (!(*drops = malloc(g->n * sizeof **drops)))
		return -1;
	for (size_t i = 0; i < g->n; i++)
		if (g->e[i].taken_at >= since && strcmp(g->e[i].node, exclude_node) != 0)
			(*drops)[(*n)++] = 1.0 - g->e[i].median / median;
	if (!*n) {
		free(*drops);
		*drops = NULL;
	}
	return 1;
}
