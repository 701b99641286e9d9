/* Judging an admission run: each record against its class baseline, floor
 * and cohort through the gate, then the two-stage decision over the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/admit.h"
#include "flow/admit_shared.h"
#include "flow/class_baseline.h"
#include "core/json.h"
#include "core/metric.h"
#include "judge/record.h"
#include "core/stats.h"
#include "judge/hysteresis.h"

/* The run's samples, when every one is a finite positive number (else the
 * gate calls the run invalid-input): a buffer of *n doubles and n more of
 * scratch, or NULL. */
static double *run_samples(const cJSON *rec, size_t *n)
{
	const cJSON *s = ng_json_get(rec, "samples"), *v;
	size_t cap = cJSON_IsArray(s) ? (size_t)cJSON_GetArraySize(s) : 0;
	*n = 0;
	double *buf = cap ? malloc(2 * cap * sizeof *buf) : NULL;
	if (!buf)
		return NULL;
	cJSON_ArrayForEach(v, s)
	{
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0)) {
			free(buf);
			return NULL;
		}
		buf[(*n)++] = v->valuedouble;
	}
	return buf;
}

static double run_median(const cJSON *rec)
{
	size_t n;
	double *buf = run_samples(rec, &n);
	if (!buf)
		return NAN;
	double m = ng_np_median_inplace(buf, n);
	free(buf);
	return m;
}

/* Where a bimodal run's slow samples sit (ng_admit_low_mode); NaN when not
 * known, and the verdict stands. */
static double run_low_mode(const cJSON *rec, double median, double block)
{
	size_t n;
	double *buf = run_samples(rec, &n);
	if (!buf)
		return NAN;
	double m = ng_admit_low_mode(buf, n, median, block, buf + n);
	free(buf);
	return m;
}

static cJSON *baseline_json(const ng_store_baseline *b)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", NG_BASELINE_SCHEMA);
	cJSON_AddStringToObject(o, "class", b->class_key);
	cJSON_AddStringToObject(o, "metric", b->metric);
	cJSON_AddNumberToObject(o, "median", b->median);
	cJSON_AddNumberToObject(o, "cv", b->cv);
	if (b->unit[0])
		cJSON_AddStringToObject(o, "unit", b->unit);
	return o;
}

/* What a record measured within the node, when one run holds several
 * records of its metric (the GPU probes: one per GPU, one per GPU pair):
 * "GPU-<uuid>" or "GPU-<src uuid>>GPU-<dst uuid>"; "" for the node as a
 * whole. */
static void subject_of(const cJSON *rec, char *out, size_t len)
{
	const cJSON *d = ng_json_get(rec, "detail");
	const cJSON *gpu = ng_json_get(d, "gpu"), *src = ng_json_get(d, "src"), *dst = ng_json_get(d, "dst");
	const char *u = ng_admit_str(gpu, "uuid"), *us = ng_admit_str(src, "uuid"),
	           *ud = ng_admit_str(dst, "uuid");
	out[0] = '\0';
	if (u)
		snprintf(out, len, "%s", u);
	else if (us && ud)
		snprintf(out, len, "%s>%s", us, ud);
}

/* The runbook's hysteresis over this node's raw verdicts for the metric,
 * kept in the store and reported; a run with no baseline yet says nothing
 * about performance and leaves it alone. A metric measured once per GPU
 * keeps one history per GPU (metric@subject): eight records of one run are
 * eight GPUs once each, not one GPU eight times. */
static int track_hysteresis(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                            struct ng_admit_judged *j, ng_err *err)
{
	j->effective = j->raw;
	if (j->raw == NG_V_NO_BASELINE)
		return 0;
	char subject[200], key[320];
	subject_of(j->rec, subject, sizeof subject);
	snprintf(key, sizeof key, "%s%s%s", j->metric, subject[0] ? "@" : "", subject);
	ng_strbuf hist = {0};
	bool blocked;
	if (ng_store_get_hysteresis(st, r->node, key, &hist, &blocked, err) < 0) {
		ng_strbuf_free(&hist);
		return -1;
	}
	cJSON *arr = cJSON_Parse(hist.s);
	if (!cJSON_IsArray(arr)) {
		cJSON_Delete(arr);
		arr = cJSON_CreateArray();
	}
	size_t n = (size_t)cJSON_GetArraySize(arr), k = 0;
	ng_hist_kind *kinds = malloc((n ? n : 1) * sizeof *kinds);
	if (!kinds) {
		cJSON_Delete(arr);
		ng_strbuf_free(&hist);
		return ng_fail(err, "out of memory");
	}
	const cJSON *v;
	size_t window = (size_t)ctx->policy.unstable_window;
	j->unstable_recent = j->raw == NG_V_UNSTABLE;
	cJSON_ArrayForEach(v, arr)
	{
		const char *name = cJSON_IsString(v) ? v->valuestring : "";
		/* the window counts this run, so window - 1 earlier ones */
		if (k + window > n && window > 0 && strcmp(name, "unstable") == 0)
			j->unstable_recent++;
		kinds[k++] = ng_hist_kind_of(name);
	}
	ng_hysteresis h;
	int rc = ng_with_hysteresis(j->raw, kinds, k, blocked,
	                            (unsigned long long)ctx->policy.clear_after,
	                            (unsigned long long)ctx->policy.escalate_after, &h);
	free(kinds);
	if (rc == 0) {
		j->effective = h.effective;
		j->blocked = h.blocked;
		cJSON_AddItemToArray(arr, cJSON_CreateString(ng_verdict_name(j->raw)));
		/* Only the recent past decides; keep a bounded history. */
		while (cJSON_GetArraySize(arr) > 32)
			cJSON_DeleteItemFromArray(arr, 0);
		char *text = cJSON_PrintUnformatted(arr);
		rc = text ? ng_store_put_hysteresis(st, r->node, key, text, h.blocked, r->now, err)
		          : ng_fail(err, "out of memory");
		cJSON_free(text);
	}
	cJSON_Delete(arr);
	ng_strbuf_free(&hist);
	return rc;
}

/* Whether the probe found this GPU or link below its siblings in this node
 * (detail.siblings, collect/probe_gpu.h). */
static bool sibling_outlier(const struct ng_admit_judged *j)
{
	const cJSON *sib = ng_json_get(ng_json_get(j->rec, "detail"), "siblings");
	return cJSON_IsTrue(ng_json_get(sib, "outlier"));
}

/* Tells the operator about a sibling outlier. While the class has no
 * baseline it is the only comparison there is, and it fails the metric
 * (judge/admit.h); with a baseline, the class's bar judges. */
static void note_sibling_outlier(struct ng_admit_run *r, const struct ng_admit_judged *j)
{
	const cJSON *sib = ng_json_get(ng_json_get(j->rec, "detail"), "siblings");
	const cJSON *pct = ng_json_get(sib, "percent"), *med = ng_json_get(sib, "median");
	if (!sibling_outlier(j) || !cJSON_IsNumber(pct) || !cJSON_IsNumber(med))
		return;
	char subject[200];
	subject_of(j->rec, subject, sizeof subject);
	ng_admit_note(r, "%s run: %s of %s is %.0f%% of its siblings' median (%g %s) in this node: "
	              "an outlier%s", j->stage, j->metric, subject[0] ? subject : "this node",
	              pct->valuedouble,
	              med->valuedouble, j->unit ? j->unit : "",
	              j->have_base ? "" : " (the class has no baseline yet)");
}

/* The gate answers no-baseline before it reads the diagnostics (the
 * reference's order), and admission admits a class that is establishing with
 * a warning. A run whose DCGM diagnostics failed, were skipped or are absent
 * is not evidence of a healthy node in any class: it takes the verdict the
 * gate will give it once the class has a baseline (diag-failed flags the
 * run; diag-incomplete and a malformed status hold it). */
static void diagnostics_without_baseline(struct ng_admit_run *r, struct ng_admit_judged *j,
                                         const ng_gate_input *in, const ng_policy *pol)
{
	ng_gate_trace t = {0};
	ng_verdict v = ng_gate_diagnostics(&in->rec, pol, &t);
	if (v == NG_V_PASS)
		return;
	j->raw = v;
	ng_admit_note(r, "%s run: %s: %s (%s); the class has no baseline yet, and the "
	              "diagnostics decide without one", j->stage, j->metric,
	              ng_gate_step_text(t.step), t.diag_test ? t.diag_test : "the diag field");
}

/* The gate's verdict on j's record against its baseline and the cohort of
 * the class's other nodes' newest runs since `since` (kept in j as evidence). */
static int gate_against(ng_store *st, struct ng_admit_run *r, struct ng_admit_judged *j,
                        const ng_policy *pol, int64_t since, ng_err *err)
{
	double *drops = NULL;
	j->n_cohort = 0;
	if (j->have_base &&
	    ng_store_cohort_drops(st, r->class_key, r->software, j->metric, r->node, since,
	                          j->base.median, &drops, &j->n_cohort, err) < 0)
		return -1;
	ng_gate_input in = {0};
	cJSON *bj = j->have_base ? baseline_json(&j->base) : NULL;
	int rc = ng_gate_input_record(&in, j->rec, NULL, err);
	/* A record that names no domain has its registered metric's: the gate
	 * exempts a node's own probes from DCGM by domain, baseline or none. */
	if (rc == 0 && !in.rec.domain)
		in.rec.domain = j->domain;
	if (rc == 0)
		rc = ng_gate_input_baseline(&in, bj, err);
	if (rc == 0 && j->n_cohort)
		rc = ng_gate_input_cohort(&in, drops, j->n_cohort, err);
	ng_gate_trace trace = {0};
	j->drop = NAN;
	if (rc == 0)
		j->raw = ng_gate_input_judge(&in, pol, &trace);
	if (rc == 0)
		j->drop = trace.drop;
	if (rc == 0 && (trace.step == NG_STEP_METRIC_MISMATCH || trace.step == NG_STEP_UNIT_MISMATCH))
		ng_admit_note(r, "%s run: %s: %s (the record says %s, the class baseline %s): "
		              "incomparable, held", j->stage, j->metric, ng_gate_step_text(trace.step),
		              trace.record_says, trace.baseline_says);
	if (rc == 0 && j->raw == NG_V_NO_BASELINE)
		diagnostics_without_baseline(r, j, &in, pol);
	ng_gate_input_free(&in);
	cJSON_Delete(bj);
	j->cohort = drops; /* kept as evidence; freed with the run */
	return rc;
}

/* What a held run did not measure, and why, in the decision itself (not only
 * on stderr): once per reason, as eight GPUs unmeasured for one missing
 * backend are one thing to fix. */
static void note_unmeasured(struct ng_admit_run *r, const struct ng_admit_judged *j)
{
	const char *why = ng_admit_str(j->rec, "reason");
	if (!why || !*why)
		return;
	char text[512];
	snprintf(text, sizeof text, "%s run: unmeasured: %s", j->stage, why);
	const cJSON *n;
	cJSON_ArrayForEach(n, r->notes)
		if (cJSON_IsString(n) && strcmp(n->valuestring, text) == 0)
			return;
	ng_admit_note(r, "%s", text);
}

/* The samples a run of the baseline has, on average (NaN: no baseline). */
static double baseline_run_samples(const struct ng_admit_judged *j)
{
	return j->have_base && j->base.n_runs > 0 ? (double)j->base.n_samples / (double)j->base.n_runs
	                                          : NAN;
}

/* The class baseline median of one software identity, looked up once:
 * what the node's runs under it are measured against. NaN: none; -1: the
 * store failed. */
struct identity_median {
	const char *software;
	double median;
};

static double identity_median(ng_store *st, const struct ng_admit_run *r,
                              const struct ng_admit_judged *j, const char *software,
                              struct identity_median *seen, size_t *n_seen, size_t cap, ng_err *err)
{
	if (strcmp(software, r->software) == 0)
		return j->base.median;
	for (size_t i = 0; i < *n_seen; i++)
		if (strcmp(seen[i].software, software) == 0)
			return seen[i].median;
	ng_store_baseline b;
	int got = ng_store_current_baseline(st, r->class_key, software, j->metric, &b, err);
	if (got < 0)
		return -1;
	double m = got == 1 && isfinite(b.median) && b.median > 0 ? b.median : NAN;
	if (*n_seen < cap)
		seen[(*n_seen)++] = (struct identity_median){software, m};
	return m;
}

/* What the node's own history says of a metric (ng_admit_result's own_*). */
struct own_history {
	double level, spread;
	size_t runs;
	double recent;       /* the mean of the newest recent_runs runs, this one last */
	size_t recent_runs;
};

/* The node's own level of j's metric: where its accepted runs in the
 * baseline window sat against their class baseline, under whichever
 * software identity each ran (the median of run median / that identity's
 * baseline median), times today's baseline; their spread (1.4826 x MAD,
 * alike) and count in *out, and this run's drop from it in j->own_drop;
 * with admission.own_level_recent, the mean of this run and the accepted
 * runs just before it, on the same scale (not in a small class).
 * Relative to the class, a software change that moved every node does not
 * move the node's level, and its history before the change still counts. A
 * record of one GPU or link among several has none: the node's runs of the
 * metric are all its GPUs', and siblings judge one against the others. */
static int own_level(ng_store *st, const ng_policy *pol, const struct ng_admit_run *r,
                     struct ng_admit_judged *j, struct own_history *out, ng_err *err)
{
	char subject[200];
	subject_of(j->rec, subject, sizeof subject);
	if (pol->own_level_runs <= 0 || subject[0] || !(j->base.median > 0))
		return 0;
	ng_store_runs hist;
	int64_t since = r->now - (int64_t)pol->baseline_window_days * 86400;
	if (ng_store_node_baseline_runs(st, r->node, r->class_key, j->metric, since, &hist, err) < 0)
		return -1;
	double *ratios = malloc((hist.n ? hist.n : 1) * sizeof *ratios);
	double *scratch = malloc((hist.n_samples > hist.n ? hist.n_samples : hist.n + 1) *
	                         sizeof *scratch);
	struct identity_median seen[8];
	size_t n_seen = 0, k = 0;
	int rc = ratios && scratch ? 0 : ng_fail(err, "out of memory");
	for (size_t i = 0; rc == 0 && i < hist.n; i++) {
		const ng_baseline_run *run = &hist.runs[i];
		double m = run->n_samples ? ng_np_median(run->samples, run->n_samples, scratch) : NAN;
		double base = identity_median(st, r, j, run->node, seen, &n_seen, 8, err);
		if (base < 0)
			rc = -1;
		else if (isfinite(m) && m > 0 && isfinite(base))
			ratios[k++] = m / base;
	}
	if (rc == 0 && k > 0) {
		double v = run_median(j->rec);
		size_t want = pol->own_level_recent > 1 ? (size_t)pol->own_level_recent : 0;
		/* Not in a small class: its few nodes' baseline median moves by a
		 * few percent when it is rebuilt or a software identity begins, and
		 * the newest runs share that move, which their mean cannot average
		 * away. */
		bool small = j->base.n_nodes < pol->min_baseline_nodes;
		if (isfinite(v) && want > 1 && k + 1 >= want && !small) {
			/* the runs come oldest first: the newest are the last */
			double sum = v / j->base.median;
			for (size_t i = k + 1 - want; i < k; i++)
				sum += ratios[i];
			out->recent = sum / (double)want * j->base.median;
			out->recent_runs = want;
		}
		double level = ng_np_median(ratios, k, scratch);
		for (size_t i = 0; i < k; i++)
			ratios[i] = fabs(ratios[i] - level);
		out->level = level * j->base.median;
		out->spread = 1.4826 * ng_np_median_inplace(ratios, k) * j->base.median;
		out->runs = k;
		if (isfinite(v))
			j->own_drop = 1 - v / out->level;
	}
	free(ratios), free(scratch);
	ng_store_runs_free(&hist);
	return rc;
}

static int judge_one(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                     struct ng_admit_judged *j, ng_err *err)
{
	const ng_policy *pol = &ctx->policy;
	j->metric = ng_admit_str(j->rec, "metric");
	j->domain = ng_admit_str(j->rec, "domain");
	j->unit = ng_admit_str(j->rec, "unit");
	const struct ng_metric *m = j->metric ? ng_metric_lookup(j->metric) : NULL;
	if (!j->domain && m)
		j->domain = m->domain;
	if (!j->unit)
		j->unit = m ? m->unit : "";
	if (!j->metric)
		return ng_fail(err, "a record of %s has no metric", r->node);
	/* The flag rule is for rates and bandwidths; a latency needs its mirror
	 * rule. Such records are kept and shown, and only wrong answers count. */
	j->judged = !m || m->higher_is_better;
	int got = ng_class_baseline_for(st, pol, r->class_key, r->software, j->metric, j->unit,
	                                r->now, r->actor, &j->base, err);
	if (got < 0)
		return -1;
	j->have_base = got == 1;

	j->cohort = NULL;
	if (gate_against(st, r, j, pol, r->now - (int64_t)pol->cohort_window_hours * 3600, err) < 0)
		return -1;
	struct own_history own = {NAN, NAN, 0, NAN, 0};
	j->own_drop = NAN;
	if (j->have_base && j->judged && own_level(st, pol, r, j, &own, err) < 0)
		return -1;
	/* What the day's cohort does not explain, the class's runs of the last
	 * minutes may: an hour of slow shared storage is the fleet's, not the
	 * node's, though most of the day's runs were before it. */
	if (j->have_base && pol->cohort_local_minutes > 0 &&
	    (j->raw == NG_V_BLOCK || j->raw == NG_V_WARN || j->own_drop > pol->own_level_drop)) {
		struct ng_admit_judged local = *j;
		local.cohort = NULL;
		if (gate_against(st, r, &local, pol, r->now - pol->cohort_local_minutes * 60, err) < 0) {
			free(local.cohort);
			return -1;
		}
		ng_admit_sharing sh;
		ng_admit_share_query q = {.since = r->now - pol->cohort_local_minutes * 60};
		if (ng_admit_sharing_peers(st, pol, r, j, &q, &sh, err) < 0) {
			free(local.cohort);
			return -1;
		}
		j->local_peers = sh.peers;
		j->local_sharing = sh.sharing;
		if (local.raw == NG_V_FLEET_REGRESSION) {
			free(j->cohort);
			*j = local;
			ng_admit_note(r, "%s run: %s: the class's %zu nodes screened in the last %ld minutes "
			              "moved with it: a fleet event for that time, not this node's",
			              j->stage, j->metric, j->n_cohort, pol->cohort_local_minutes);
		} else {
			free(local.cohort);
		}
	}
	if (track_hysteresis(st, ctx, r, j, err) < 0)
		return -1;
	/* A small class's few nodes know their spread poorly; its family's
	 * classes, pooled, know it well (judge/admit.h, ng_admit_small_bar). */
	if (j->have_base && j->base.n_nodes < pol->min_baseline_nodes &&
	    ng_class_family_pool(st, pol, r->class_key, j->metric, r->now, &j->pool, j->family,
	                         err) < 0)
		return -1;

	j->res = (ng_admit_result){
		.domain = j->domain ? j->domain : "",
		.metric = j->metric,
		.value = run_median(j->rec),
		.baseline_median = j->have_base ? j->base.median : NAN,
		.floor = ng_policy_floor(pol, j->metric),
		.gate = j->raw,
		.establishing = !j->have_base,
		.low_mode = j->raw == NG_V_BIMODAL ? run_low_mode(j->rec, j->base.median, pol->block) : NAN,
		.sibling_outlier = sibling_outlier(j),
		.unstable_recent = j->unstable_recent,
		.small_bar = j->have_base ? ng_admit_small_bar(j->base.median, j->base.node_mad, j->base.cv,
		                                               baseline_run_samples(j), (size_t)j->base.n_nodes,
		                                               &j->pool, pol)
		                          : 0,
		.baseline_cv = j->have_base ? j->base.cv : NAN,
		.node_spread = j->have_base ? j->base.node_mad : NAN,
		.run_samples = baseline_run_samples(j),
		.own_level = own.level,
		.own_spread = own.spread,
		.own_runs = own.runs,
		.own_recent = own.recent,
		.own_recent_runs = own.recent_runs,
	};
	note_sibling_outlier(r, j);
	if (!j->judged) {
		/* Kept out of the outcome unless its answers were wrong. */
		j->line = (ng_admit_line){.flag = {.bar = NAN, .percent = NAN},
		                          .status = j->raw == NG_V_CORRUPT ? NG_MS_INTEGRITY : NG_MS_OK};
		return 0;
	}
	j->line = ng_admit_judge_metric(&j->res, pol);
	if (j->line.status == NG_MS_UNMEASURED)
		note_unmeasured(r, j);
	if (j->line.own_recent_decides)
		ng_admit_note(r, "%s run: %s: its newest %zu runs average %.1f%% under this node's own "
		              "level (%g %s; bar for %zu runs %g): flagged, though this run alone and "
		              "its class's bar pass it", j->stage, j->metric, j->res.own_recent_runs,
		              100 * (1 - j->res.own_recent / j->res.own_level), j->res.own_level,
		              j->unit ? j->unit : "", j->res.own_recent_runs, j->line.own_recent_bar);
	else if (j->line.own_decides)
		ng_admit_note(r, "%s run: %s is %.1f%% under this node's own level (%g %s, where its "
		              "%zu accepted runs sat against their class; bar %g): flagged, though its "
		              "class's bar passes it", j->stage, j->metric, 100 * j->own_drop,
		              j->res.own_level, j->unit ? j->unit : "", j->res.own_runs, j->line.own_bar);
	return 0;
}

/* Stores a stage's records and judges each. */
int ng_admit_judge_stage(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                       const cJSON *records, const char *stage, ng_err *err)
{
	size_t n = (size_t)cJSON_GetArraySize(records);
	int64_t *ids = calloc(n ? n : 1, sizeof *ids);
	if (!ids)
		return ng_fail(err, "out of memory");
	ng_store_ingest how = {.run_id = r->run_id, .taken_at = r->now, .idle = true};
	if (ng_store_put_json_records(st, records, &how, ids, err) < 0) {
		free(ids);
		return -1;
	}
	if (r->n + n > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		while (cap < r->n + n)
			cap *= 2;
		struct ng_admit_judged *p = realloc(r->j, cap * sizeof *p);
		if (!p) {
			free(ids);
			return ng_fail(err, "out of memory");
		}
		r->j = p;
		r->cap = cap;
	}
	size_t i = 0;
	const cJSON *rec;
	int rc = 0;
	cJSON_ArrayForEach(rec, records)
	{
		struct ng_admit_judged *j = &r->j[r->n++];
		*j = (struct ng_admit_judged){.rec = rec, .record_id = ids[i++], .stage = stage};
		if ((rc = judge_one(st, ctx, r, j, err)) < 0)
			break;
	}
	free(ids);
	return rc;
}

/* The stage's results as the decision reads them, and where each came from.
 * Judged-out (latency) records take part only when their answers were
 * wrong: they still quarantine on that. */
static ng_admit_result *stage_results(struct ng_admit_run *r, const char *stage, size_t **idx,
                                      size_t *n)
{
	ng_admit_result *out = malloc((r->n ? r->n : 1) * sizeof *out);
	*idx = malloc((r->n ? r->n : 1) * sizeof **idx);
	*n = 0;
	for (size_t i = 0; out && *idx && i < r->n; i++) {
		const struct ng_admit_judged *j = &r->j[i];
		if (strcmp(j->stage, stage) != 0 || (!j->judged && j->line.status != NG_MS_INTEGRITY))
			continue;
		(*idx)[*n] = i;
		out[(*n)++] = j->res;
	}
	return out;
}

const struct ng_admit_judged *ng_admit_judged_of(const struct ng_admit_run *r,
                                                 const ng_admit_result *res)
{
	if (res >= r->first && res < r->first + r->n_first)
		return &r->j[r->first_idx[res - r->first]];
	if (res >= r->confirm && res < r->confirm + r->n_confirm)
		return &r->j[r->confirm_idx[res - r->confirm]];
	return NULL;
}

const struct ng_admit_judged *ng_admit_latest_of(const struct ng_admit_run *r, const char *metric)
{
	const struct ng_admit_judged *found = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->j[i].metric, metric) == 0)
			found = &r->j[i];
	return found;
}

int ng_admit_decide_run(struct ng_admit_run *r, const ng_policy *pol)
{
	free(r->first), free(r->confirm), free(r->first_idx), free(r->confirm_idx);
	r->first = stage_results(r, "first", &r->first_idx, &r->n_first);
	r->confirm = stage_results(r, "confirm", &r->confirm_idx, &r->n_confirm);
	if (!r->first || !r->confirm || !r->first_idx || !r->confirm_idx)
		return -1;
	r->d = ng_admit_decide(r->first, r->n_first, r->confirm, r->n_confirm, pol);
	return 0;
}

