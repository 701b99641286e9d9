/* Records in the store: written in batches, one transaction each, and read
 * back as the runs a baseline or a cohort is made of.
 *
 * Samples are kept twice: in the record's JSON body as measured, and as an
 * array of doubles (host byte order: a store is read by the hosts of the
 * fleet that wrote it, all little-endian) so a baseline over ten thousand
 * nodes does not parse ninety thousand numbers out of JSON. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/metric.h"
#include "core/sha256.h"
#include "core/stats.h"
#include "store/store_internal.h"

struct put {
	const ng_store_record *recs;
	size_t n;
	int64_t *ids;
	const ng_store_ingest *audit; /* audit the batch, when set */
};

static int audit_batch(ng_store *st, const struct put *p, int64_t first, int64_t last,
                       ng_err *err)
{
	const ng_store_ingest *how = p->audit;
	ng_strbuf d = {0};
	ng_strbuf_printf(&d, "{\"records\":%zu,\"first_id\":%" PRId64 ",\"last_id\":%" PRId64
	                     ",\"accepted\":%s,\"idle\":%s}",
	                 p->n, first, last, how->accepted ? "true" : "false",
	                 how->idle ? "true" : "false");
	char subject[128];
	snprintf(subject, sizeof subject, "run:%.100s", how->run_id ? how->run_id : "");
	int rc = ng_store_audit(st, true, how->taken_at, how->actor, "records.ingest", subject, d.s,
	                        err);
	ng_strbuf_free(&d);
	return rc;
}

static int put_profile(ng_store *st, ng_sql_stmt **q, const char *profile, char digest[65],
                       char last[65], ng_err *err)
{
	ng_sha256_hex(profile, strlen(profile), digest);
	if (strcmp(digest, last) == 0)
		return 0; /* the batch's records share one profile: write it once */
	if (!*q && ng_sql_prepare(st->db,
	                          "INSERT INTO profiles (digest, body) VALUES (?, ?)"
	                          " ON CONFLICT (digest) DO NOTHING",
	                          q, err) < 0)
		return -1;
	ng_sql_reset(*q);
	ng_sql_bind_text(*q, 1, digest);
	ng_sql_bind_text(*q, 2, profile);
	if (ng_sql_step(*q, err) < 0)
		return -1;
	memcpy(last, digest, 65);
	return 0;
}

static int put_all(ng_store *st, void *arg, ng_err *err)
{
	const struct put *p = arg;
	ng_sql_stmt *ins = NULL, *prof = NULL, *seen = NULL, *run = NULL;
	char last[65] = "", digest[65];
	int64_t first_id = 0, last_id = 0;
	int rc = ng_sql_prepare(st->db,
	                        "INSERT INTO records (node, class, software, domain, metric, unit,"
	                        " run_id, raw_digest, profile_digest, taken_at, idle, accepted,"
	                        " n_samples, samples, body)"
	                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
	                        &ins, err);
	for (size_t i = 0; i < p->n && rc == 0; i++) {
		const ng_store_record *r = &p->recs[i];
		if (!r->node || !*r->node || !r->class_key || !r->metric || !*r->metric || !r->body) {
			rc = ng_fail_as(err, NG_ERR_STORE, "record %zu has no node, class, metric or body: not stored", i);
			break;
		}
		if (r->profile && put_profile(st, &prof, r->profile, digest, last, err) < 0) {
			rc = -1;
			break;
		}
		ng_sql_reset(ins);
		ng_sql_bind_text(ins, 1, r->node);
		ng_sql_bind_text(ins, 2, r->class_key);
		ng_sql_bind_text(ins, 3, r->software ? r->software : "");
		ng_sql_bind_text(ins, 4, r->domain ? r->domain : "");
		ng_sql_bind_text(ins, 5, r->metric);
		ng_sql_bind_text(ins, 6, r->unit ? r->unit : "");
		ng_sql_bind_text(ins, 7, r->run_id);
		ng_sql_bind_text(ins, 8, r->raw_digest);
		ng_sql_bind_text(ins, 9, r->profile ? digest : NULL);
		ng_sql_bind_int64(ins, 10, r->taken_at);
		ng_sql_bind_int64(ins, 11, r->idle);
		ng_sql_bind_int64(ins, 12, r->accepted);
		ng_sql_bind_int64(ins, 13, (int64_t)r->n_samples);
		if (r->n_samples)
			ng_sql_bind_blob(ins, 14, r->samples, r->n_samples * sizeof(double));
		else
			ng_sql_bind_null(ins, 14);
		ng_sql_bind_text(ins, 15, r->body);
		int s = ng_sql_step(ins, err);
		if (s != 1) {
			rc = s < 0 ? -1 : ng_fail_as(err, NG_ERR_STORE, "record %zu: the insert returned no id", i);
			break;
		}
		last_id = ng_sql_column_int64(ins, 0);
		if (i == 0)
			first_id = last_id;
		if (p->ids)
			p->ids[i] = last_id;
		while ((s = ng_sql_step(ins, err)) == 1)
			;
		if (s < 0)
			rc = -1;
		if (rc == 0)
			rc = ng_cohort_note(st, &seen, &run, r, last_id, err);
		/* A record that knows its node's scheduler name keeps the pair (a
		 * batch is one node's, so this is one upsert in practice). */
		const ng_store_record *prev = i ? &p->recs[i - 1] : NULL;
		if (rc == 0 && r->node_name && *r->node_name &&
		    (!prev || !prev->node_name || strcmp(prev->node_name, r->node_name) != 0 ||
		     strcmp(prev->node, r->node) != 0))
			rc = ng_store_put_node_name(st, r->node, r->node_name, r->taken_at, err);
	}
	ng_sql_finalize(ins);
	ng_sql_finalize(prof);
	ng_sql_finalize(seen);
	ng_sql_finalize(run);
	if (rc == 0 && p->audit)
		rc = audit_batch(st, p, first_id, last_id, err);
	return rc;
}

int ng_store_put_records(ng_store *st, const ng_store_record *recs, size_t n, int64_t *ids,
                         ng_err *err)
{
	struct put p = {recs, n, ids, NULL};
	return ng_store_tx(st, put_all, &p, err);
}

static const char *str_field(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The finite positive samples of a record, in order. */
static size_t good_samples(const cJSON *rec, double *out)
{
	size_t n = 0;
	const cJSON *s = ng_json_get(rec, "samples"), *v;
	if (!cJSON_IsArray(s))
		return 0;
	cJSON_ArrayForEach(v, s)
	{
		if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0)
			out[n++] = v->valuedouble;
	}
	return n;
}

const char *ng_store_raw_digest(const cJSON *rec, ng_strbuf *out)
{
	ng_strbuf_reset(out);
	const cJSON *tool = ng_json_get(rec, "tool"), *run;
	const char *one = str_field(tool, "raw_sha256");
	if (one)
		ng_strbuf_adds(out, one);
	const cJSON *runs = ng_json_get(tool, "runs");
	if (cJSON_IsArray(runs)) {
		cJSON_ArrayForEach(run, runs)
		{
			const char *d = str_field(run, "stdout_sha256");
			if (!d)
				continue;
			if (out->len)
				ng_strbuf_addc(out, ',');
			ng_strbuf_adds(out, d);
		}
	}
	return out->len ? out->s : NULL;
}

int ng_store_put_json_records(ng_store *st, const cJSON *records, const ng_store_ingest *how,
                              int64_t *ids, ng_err *err)
{
	if (!cJSON_IsArray(records))
		return ng_fail_as(err, NG_ERR_STORE, "records to store must be a JSON array");
	size_t n = (size_t)cJSON_GetArraySize(records), total = 0;
	const cJSON *rec;
	cJSON_ArrayForEach(rec, records)
	{
		const cJSON *s = ng_json_get(rec, "samples");
		total += cJSON_IsArray(s) ? (size_t)cJSON_GetArraySize(s) : 0;
	}
	ng_store_record *recs = calloc(n ? n : 1, sizeof *recs);
	double *samples = malloc((total ? total : 1) * sizeof *samples);
	char **texts = calloc(n ? n * 2 : 1, sizeof *texts);
	ng_strbuf *digests = calloc(n ? n : 1, sizeof *digests);
	if (!recs || !samples || !texts || !digests) {
		free(recs), free(samples), free(texts), free(digests);
		return ng_fail_as(err, NG_ERR_STORE, "out of memory");
	}
	int rc = 0;
	size_t i = 0, used = 0;
	cJSON_ArrayForEach(rec, records)
	{
		ng_store_record *r = &recs[i];
		if (!cJSON_IsObject(rec)) {
			rc = ng_fail_as(err, NG_ERR_STORE, "record %zu is not a JSON object: nothing was stored", i);
			break;
		}
		r->node = str_field(rec, "node");
		r->node_name = str_field(rec, "node_name");
		r->class_key = str_field(rec, "class");
		r->metric = str_field(rec, "metric");
		r->domain = str_field(rec, "domain");
		r->unit = str_field(rec, "unit");
		const struct ng_metric *m = r->metric ? ng_metric_lookup(r->metric) : NULL;
		if (!r->domain && m)
			r->domain = m->domain;
		if (!r->unit && m)
			r->unit = m->unit;
		if (!r->node || !r->class_key || !r->metric || !r->domain) {
			rc = ng_fail_as(err, NG_ERR_STORE, "record %zu has no %s: nothing was stored (records from `nodegate "
			                  "probe` and `nodegate run` carry them all)",
			             i, !r->node ? "node" : !r->class_key ? "class" : !r->metric ? "metric" : "domain");
			break;
		}
		r->software = str_field(rec, "software");
		r->raw_digest = ng_store_raw_digest(rec, &digests[i]);
		r->run_id = how->run_id;
		r->taken_at = how->taken_at;
		r->idle = how->idle;
		r->accepted = how->accepted;
		r->samples = samples + used;
		r->n_samples = good_samples(rec, samples + used);
		used += r->n_samples;
		/* The profile is kept once per distinct content, not once per record. */
		cJSON *profile = cJSON_DetachItemFromObjectCaseSensitive((cJSON *)rec, "profile");
		texts[2 * i] = cJSON_PrintUnformatted(rec);
		if (profile) {
			texts[2 * i + 1] = cJSON_PrintUnformatted(profile);
			cJSON_AddItemToObject((cJSON *)rec, "profile", profile);
		}
		r->body = texts[2 * i];
		r->profile = texts[2 * i + 1];
		if (!r->body || (profile && !r->profile)) {
			rc = ng_fail_as(err, NG_ERR_STORE, "out of memory");
			break;
		}
		i++;
	}
	if (rc == 0) {
		struct put p = {recs, n, ids, how->actor ? how : NULL};
		rc = ng_store_tx(st, put_all, &p, err);
	}
	for (size_t k = 0; k < 2 * n; k++)
		cJSON_free(texts[k]);
	for (size_t k = 0; k < n; k++)
		ng_strbuf_free(&digests[k]);
	free(digests);
	free(texts);
	free(samples);
	free(recs);
	return rc;
}

struct accept {
	const int64_t *ids;
	size_t n;
};

static int accept_all(ng_store *st, void *arg, ng_err *err)
{
	const struct accept *a = arg;
	ng_sql_stmt *q = ng_q(st, err, "UPDATE records SET accepted = 1 WHERE id = ?", "i", (int64_t)0);
	if (!q)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < a->n && rc == 0; i++) {
		ng_sql_reset(q);
		ng_sql_bind_int64(q, 1, a->ids[i]);
		if (ng_sql_step(q, err) < 0)
			rc = -1;
	}
	ng_sql_finalize(q);
	return rc;
}

int ng_store_accept_records(ng_store *st, const int64_t *ids, size_t n, ng_err *err)
{
	struct accept a = {ids, n};
	return n ? ng_store_tx(st, accept_all, &a, err) : 0;
}

int64_t ng_store_count_records(ng_store *st, ng_err *err)
{
	int64_t n = 0;
	return ng_q_int64(st, err, &n, "SELECT count(*) FROM records", "") < 0 ? -1 : n;
}

/* ---- reading runs back ------------------------------------------------------------ */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

void ng_store_runs_free(ng_store_runs *r)
{
	free(r->runs);
	free(r->samples);
	free(r->names);
	memset(r, 0, sizeof *r);
}

/* Appends one run; node names and samples are copied into the pools, and
 * the views are fixed up at the end (the pools move as they grow). */
static int add_run(ng_store_runs *r, const char *node, const void *blob, size_t len,
                   int64_t taken_at)
{
	size_t k = len / sizeof(double), nl = strlen(node) + 1;
	if (grow((void **)&r->runs, &r->cap, r->n + 1, sizeof *r->runs) < 0 ||
	    grow((void **)&r->samples, &r->samples_cap, r->n_samples + k, sizeof(double)) < 0 ||
	    grow((void **)&r->names, &r->names_cap, r->names_len + nl, 1) < 0)
		return -1;
	memcpy(r->samples + r->n_samples, blob, k * sizeof(double));
	memcpy(r->names + r->names_len, node, nl);
	/* Offsets for now, pointers once the pools stop moving. */
	r->runs[r->n].node = (const char *)(uintptr_t)r->names_len;
	r->runs[r->n].samples = (const double *)(uintptr_t)r->n_samples;
	r->runs[r->n].n_samples = k;
	r->n++;
	r->n_samples += k;
	r->names_len += nl;
	if (taken_at > r->newest)
		r->newest = taken_at;
	return 0;
}

static void fix_views(ng_store_runs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		r->runs[i].node = r->names + (uintptr_t)r->runs[i].node;
		r->runs[i].samples = r->samples + (uintptr_t)r->runs[i].samples;
	}
}

/* Reads the rows of q (a name, samples, taken_at) into out and finalizes q. */
static int read_runs(ng_sql_stmt *q, const char *metric, ng_store_runs *out, ng_err *err)
{
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		size_t len;
		const void *blob = ng_sql_column_blob(q, 1, &len);
		if (add_run(out, ng_sql_column_text(q, 0), blob, len, ng_sql_column_int64(q, 2)) < 0) {
			r = ng_fail_as(err, NG_ERR_STORE, "out of memory reading the runs of %s", metric);
			break;
		}
	}
	ng_sql_finalize(q);
	fix_views(out);
	if (r < 0) {
		ng_store_runs_free(out);
		return -1;
	}
	return 0;
}

int ng_store_baseline_runs(ng_store *st, const char *class_key, const char *software,
                           const char *metric, int64_t since, ng_store_runs *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_sql_stmt *q = ng_q(
		st, err,
		"SELECT node, samples, taken_at FROM records"
		" WHERE class = ? AND software = ? AND metric = ? AND accepted = 1 AND idle = 1"
		" AND n_samples > 0 AND taken_at >= ?"
		" AND taken_at >= (SELECT COALESCE(MAX(before), 0) FROM retirements WHERE class = ?)",
		"tttit", class_key, software ? software : "", metric, since, class_key);
	return q ? read_runs(q, metric, out, err) : -1;
}

int ng_store_node_baseline_runs(ng_store *st, const char *node, const char *class_key,
                                const char *metric, int64_t since, ng_store_runs *out,
                                ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_sql_stmt *q = ng_q(
		st, err,
		"SELECT software, samples, taken_at FROM records"
		" WHERE node = ? AND metric = ? AND taken_at >= ?"
		/* Not by records_by_baseline, which every node of the class shares
		 * (the planner takes it, having no statistics): the || keeps it off. */
		" AND class || '' = ? AND accepted = 1 AND idle = 1 AND n_samples > 0"
		" AND taken_at >= (SELECT COALESCE(MAX(before), 0) FROM retirements WHERE class = ?)"
		/* A case ends in a repair, a replacement or someone's word: what the
		 * node read before it is not its level now, nor what its release
		 * passes are judged against. */
		" AND taken_at >= (SELECT COALESCE(MAX(opened_at), 0) FROM cases WHERE node = ?)"
		/* oldest first: the newest runs are the last (admission.own_level_recent) */
		" ORDER BY taken_at, id",
		"ttittt", node, metric, since, class_key, class_key, node);
	return q ? read_runs(q, metric, out, err) : -1;
}

int ng_store_baseline_keys(ng_store *st, const char *class_key, int64_t since, char **keys,
                           size_t *n, ng_err *err)
{
	*keys = NULL;
	*n = 0;
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT DISTINCT class, software, metric, unit FROM records"
	                      " WHERE accepted = 1 AND idle = 1 AND n_samples > 0 AND taken_at >= ?"
	                      " AND (CAST(? AS TEXT) IS NULL OR class = ?)"
	                      " AND taken_at >= (SELECT COALESCE(MAX(r.before), 0) FROM retirements r"
	                      " WHERE r.class = records.class)"
	                      " ORDER BY class, software, metric, unit",
	                      "itt", since, class_key, class_key);
	if (!q)
		return -1;
	size_t len = 0, cap = 0;
	int r;
	while ((r = ng_sql_step(q, err)) == 1) {
		for (int c = 0; c < 4; c++) {
			const char *v = ng_sql_column_text(q, c);
			size_t l = strlen(v ? v : "") + 1;
			if (grow((void **)keys, &cap, len + l, 1) < 0) {
				r = ng_fail_as(err, NG_ERR_STORE, "out of memory");
				break;
			}
			memcpy(*keys + len, v ? v : "", l);
			len += l;
		}
		if (r < 0)
			break;
		(*n)++;
	}
	ng_sql_finalize(q);
	if (r < 0) {
		free(*keys);
		*keys = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int ng_store_last_gpu_check(ng_store *st, const char *node, ng_store_gpu_check *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_sql_stmt *q = ng_q(st, err,
	                      "SELECT body, taken_at FROM records WHERE node = ? AND metric = 'gpu.health'"
	                      " ORDER BY taken_at DESC, id DESC LIMIT 1",
	                      "t", node);
	if (!q)
		return -1;
	int r = ng_sql_step(q, err);
	if (r == 1) {
		cJSON *b = cJSON_Parse(ng_sql_column_text(q, 0) ? ng_sql_column_text(q, 0) : "");
		const cJSON *mode = cJSON_GetObjectItemCaseSensitive(b, "mode"),
		            *drain = cJSON_GetObjectItemCaseSensitive(b, "drain");
		if (cJSON_IsString(mode) && cJSON_IsBool(drain)) {
			ng_copy(out->mode, sizeof out->mode, mode->valuestring);
			out->drain = cJSON_IsTrue(drain);
			out->at = ng_sql_column_int64(q, 1);
		} else {
			r = 0;
		}
		cJSON_Delete(b);
	}
	ng_sql_finalize(q);
	return r;
}
