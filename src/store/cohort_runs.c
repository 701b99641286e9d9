/* What the class's other nodes ran lately, kept as records are stored so an
 * admission reads one row per node instead of every record in the window:
 * class_nodes (each node of a class and its newest record, for the count of
 * a class's nodes) and cohort_runs (each node's newest run with samples per
 * class, software and metric, and that run's median, for the cohort). */
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "store/sql.h"
#include "store/store_internal.h"

int ng_cohort_note(ng_store *st, ng_sql_stmt **seen, ng_sql_stmt **run,
                   const ng_store_record *r, int64_t record_id, ng_err *err)
{
	if (!*seen && ng_sql_prepare(st->db,
	                             "INSERT INTO class_nodes (class, node, last_at) VALUES (?, ?, ?)"
	                             " ON CONFLICT (class, node) DO UPDATE SET last_at ="
	                             " CASE WHEN excluded.last_at > class_nodes.last_at"
	                             " THEN excluded.last_at ELSE class_nodes.last_at END",
	                             seen, err) < 0)
		return -1;
	ng_sql_reset(*seen);
	ng_sql_bind_text(*seen, 1, r->class_key);
	ng_sql_bind_text(*seen, 2, r->node);
	ng_sql_bind_int64(*seen, 3, r->taken_at);
	if (ng_sql_step(*seen, err) < 0)
		return -1;
	if (!r->n_samples) {
		ng_cohort_mirror_note(st, r, record_id, 0);
		return 0;
	}
	/* The newest run wins; of two at one time, the one stored last (as the
	 * records' own order, taken_at then id, says). */
	if (!*run && ng_sql_prepare(st->db,
	                            "INSERT INTO cohort_runs (class, software, metric, node, taken_at,"
	                            " record_id, median) VALUES (?, ?, ?, ?, ?, ?, ?)"
	                            " ON CONFLICT (class, software, metric, node) DO UPDATE SET"
	                            " taken_at = excluded.taken_at, record_id = excluded.record_id,"
	                            " median = excluded.median"
	                            " WHERE excluded.taken_at > cohort_runs.taken_at"
	                            " OR (excluded.taken_at = cohort_runs.taken_at"
	                            " AND excluded.record_id > cohort_runs.record_id)",
	                            run, err) < 0)
		return -1;
	double *work = malloc(r->n_samples * sizeof *work);
	if (!work)
		return ng_fail(err, "out of memory");
	memcpy(work, r->samples, r->n_samples * sizeof *work);
	double median = ng_np_median_inplace(work, r->n_samples);
	free(work);
	ng_sql_reset(*run);
	ng_sql_bind_text(*run, 1, r->class_key);
	ng_sql_bind_text(*run, 2, r->software ? r->software : "");
	ng_sql_bind_text(*run, 3, r->metric);
	ng_sql_bind_text(*run, 4, r->node);
	ng_sql_bind_int64(*run, 5, r->taken_at);
	ng_sql_bind_int64(*run, 6, record_id);
	ng_sql_bind_double(*run, 7, median);
	if (ng_sql_step(*run, err) < 0)
		return -1;
	ng_cohort_mirror_note(st, r, record_id, median);
	return 0;
}

int ng_cohort_fill(ng_store *st, ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT id, node, class, software, metric, taken_at, samples FROM records"
	                      " WHERE n_samples > 0 ORDER BY id",
	                      "");
	if (!q)
		return -1;
	ng_sql_stmt *seen = NULL, *run = NULL;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		size_t len;
		const void *blob = ng_sql_column_blob(q, 6, &len);
		ng_store_record rec = {
			.node = ng_sql_column_text(q, 1), .class_key = ng_sql_column_text(q, 2),
			.software = ng_sql_column_text(q, 3), .metric = ng_sql_column_text(q, 4),
			.taken_at = ng_sql_column_int64(q, 5), .samples = blob,
			.n_samples = len / sizeof(double),
		};
		/* A blob's bytes may sit anywhere: copied before they are read as doubles. */
		double *copy = rec.n_samples ? malloc(len) : NULL;
		if (rec.n_samples && !copy) {
			r = ng_fail(err, "out of memory");
			break;
		}
		if (copy)
			memcpy(copy, blob, rec.n_samples * sizeof(double));
		rec.samples = copy;
		int rc = ng_cohort_note(st, &seen, &run, &rec, ng_sql_column_int64(q, 0), err);
		free(copy);
		if (rc < 0) {
			r = -1;
			break;
		}
	}
	ng_sql_finalize(q);
	ng_sql_finalize(seen);
	ng_sql_finalize(run);
	return r < 0 ? -1 : 0;
}

int64_t ng_store_count_class_nodes(ng_store *st, const char *class_key, int64_t since,
                                   ng_err *err)
{
	int64_t n = 0;
	if (ng_cohort_mirror_count(st, class_key, since, &n) == 1)
		return n;
	return ng_q_int64(st, err, &n,
	                  "SELECT count(*) FROM class_nodes WHERE class = ? AND last_at >= ?", "ti",
	                  class_key, since) < 0
	               ? -1
	               : n;
}

int ng_store_cohort_drops(ng_store *st, const char *class_key, const char *software,
                          const char *metric, const char *exclude_node, int64_t since,
                          double median, double **drops, size_t *n, ng_err *err)
{
	int m = ng_cohort_mirror_drops(st, class_key, software, metric, exclude_node, since, median,
	                               drops, n);
	if (m != 0)
		return m == 1 ? 0 : ng_fail(err, "out of memory");
	*drops = NULL;
	*n = 0;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT median FROM cohort_runs"
	                      " WHERE class = ? AND software = ? AND metric = ? AND node <> ?"
	                      " AND taken_at >= ? ORDER BY node",
	                      "tttti", class_key, software ? software : "", metric, exclude_node, since);
	if (!q)
		return -1;
	size_t cap = 0;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		if (*n == cap) {
			size_t c2 = cap ? cap * 2 : 64;
			double *d = realloc(*drops, c2 * sizeof *d);
			if (!d) {
				r = ng_fail(err, "out of memory");
				break;
			}
			*drops = d;
			cap = c2;
		}
		(*drops)[(*n)++] = 1.0 - ng_sql_column_double(q, 0) / median;
	}
	ng_sql_finalize(q);
	if (r < 0) {
		free(*drops);
		*drops = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void ng_store_node_runs_free(ng_store_node_run *runs, size_t n)
{
	for (size_t i = 0; runs && i < n; i++)
		free(runs[i].profile);
	free(runs);
}

static int read_node_run(ng_sql_stmt *q, void *elem)
{
	ng_store_node_run *r = elem;
	memset(r, 0, sizeof *r);
	ng_q_text(q, 0, r->node, sizeof r->node);
	ng_q_text(q, 1, r->run_id, sizeof r->run_id);
	r->taken_at = ng_sql_column_int64(q, 2);
	r->median = ng_sql_column_double(q, 3);
	if (ng_sql_column_text(q, 4)) {
		r->profile = ng_q_strdup(q, 4);
		if (!r->profile)
			return -1;
	}
	return 0;
}

static void free_node_run(void *elem) { free(((ng_store_node_run *)elem)->profile); }

int ng_store_node_runs(ng_store *st, const char *class_key, const char *software,
                       const char *metric, int64_t since, ng_store_node_run **out, size_t *n,
                       ng_err *err)
{
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT c.node, r.run_id, c.taken_at, c.median, p.body FROM cohort_runs c"
	                      " JOIN records r ON r.id = c.record_id"
	                      " LEFT JOIN profiles p ON p.digest = r.profile_digest"
	                      " WHERE c.class = ? AND c.software = ? AND c.metric = ? AND c.taken_at >= ?"
	                      " ORDER BY c.node",
	                      "ttti", class_key, software ? software : "", metric, since);
	return ng_q_rows(q, sizeof **out, read_node_run, free_node_run, (void **)out, n, err);
}
