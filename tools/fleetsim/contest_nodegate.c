/* Contestant 5: nodegate's own admission path, through the library.
 *
 * The rule (DESIGN.md, docs/admission.md, the seeds 000 and 001): every run
 * of a metric goes through the gate (judge/gate.h, via judge/record.h's
 * record and baseline inputs exactly as `nodegate admit` builds them from
 * JSON) against its class baseline (judge/baseline.h: median of per-node
 * medians of accepted runs, within baseline_window_days, rebuilt when older
 * than baseline_max_age_hours) and its cohort (each other node's newest run
 * of the class within cohort_window_hours, as drops); the admission flag rule
 * and decision (judge/admit.h: flag below max(floor, flag_fraction x median),
 * confirm the flagged domains once, quarantine on the same domain failing
 * twice or on wrong results, hold what measured nothing); the landing rules
 * and the class's circuit breaker (judge/breaker.h); and the runbook's
 * hysteresis, which admission keeps beside the gate's verdict and does not
 * let decide (cli/admit.h). The policy is src/core/policy.c's defaults as
 * they ship (no floors), and floors only where the scenario sets them for
 * every contestant (floor_fraction x the SKU reference), one policy per
 * class (a partition's prolog passes its own --policy).
 *
 * What `nodegate admit` keeps in its store (records, accepted runs,
 * baselines, cases, fleet events, hysteresis) is kept here in memory, with
 * the store's queries (cli/admit_judge.c, cli/admit_land.c,
 * cli/class_baseline.c, src/store) mirrored one for one. Node i's screen in
 * run r is taken at r x 86400 + i x step seconds; its confirmation at the
 * same time (admission stamps both stages with the run's time). Nobody
 * releases a case during the simulation, and nobody clears a fleet-regression
 * event unless the simulation is told an operator does (fleet_clear_after). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metric.h"
#include "core/policy.h"
#include "judge/record.h"
#include "core/stats.h"
#include "judge/admit.h"
#include "judge/baseline.h"
#include "judge/breaker.h"
#include "judge/gate.h"
#include "judge/hysteresis.h"
#include "sim.h"

#define HIST_MAX 32

struct accepted {
	size_t node;
	int64_t taken_at;
	size_t off, n; /* into the key's sample pool */
};

/* One (class, software, metric): the store's accepted runs and current baseline. */
struct keymetric {
	struct accepted *runs;
	size_t n_runs, cap_runs;
	double *pool;
	size_t n_pool, cap_pool;
	bool have;  /* a stored "ok" baseline */
	int64_t built_at;
	size_t built_nodes; /* the nodes it was built from */
	double median, cv, node_mad;
};

struct latest {
	int64_t taken_at; /* 0: none */
	size_t key;
	double median;
};

struct hist {
	ng_hist_kind k[HIST_MAX];
	ng_verdict raw[HIST_MAX]; /* the raw verdicts, as the store keeps their names */
	size_t n;
	bool blocked;
};

struct state {
	size_t n_nodes, n_metrics, n_keys;
	ng_policy *pol;            /* per class */
	struct keymetric *km;      /* [key * n_metrics + m] */
	struct latest *latest;     /* [node * n_metrics + m] */
	int64_t *seen;             /* [key * n_nodes + node]: newest record time, 0 none */
	size_t *n_seen;            /* [key]: nodes with a record (ng_store_count_class_nodes) */
	bool *case_open;           /* [node] */
	int64_t *case_at;          /* [node] */
	size_t *case_key;          /* [node] */
	size_t *case_metric;       /* [node] */
	bool *event_open;          /* [key * n_metrics + m]: an event is about one metric */
	size_t *event_run;         /* [key * n_metrics + m]: the run it opened in */
	int64_t *event_clean;      /* [key * n_metrics + m]: runs in a row back within noise */
	bool *event_node;          /* [(key * n_metrics + m) * n_nodes + node]: the event names it */
	struct hist *hist;         /* [node * n_metrics + m] */
	char (*names)[32];         /* node ids */
	double *drops;             /* cohort scratch [n_nodes] */
	int64_t step;
	size_t escalations;
	size_t class_start[NG_FLEET_CLASSES_MAX + 1]; /* class c's nodes: [start[c], start[c + 1]) */
};

/* ---- the store, in memory --------------------------------------------------------------- */

/* (class, software identity): the software the probe reported. */
#define KEYS_PER_CLASS 3
static size_t key_of(const ng_fleet_spec *s, size_t cls, const char *software)
{
	return cls * KEYS_PER_CLASS + (strcmp(software, s->software_rollout) == 0  ? 2
	                               : strcmp(software, s->software_after) == 0 ? 1
	                                                                          : 0);
}

static int accept_run(struct keymetric *k, size_t node, int64_t at, const double *v, size_t n)
{
	if (k->n_runs == k->cap_runs) {
		size_t cap = k->cap_runs ? k->cap_runs * 2 : 256;
		struct accepted *p = realloc(k->runs, cap * sizeof *p);
		if (!p)
			return -1;
		k->runs = p, k->cap_runs = cap;
	}
	if (k->n_pool + n > k->cap_pool) {
		size_t cap = k->cap_pool ? k->cap_pool * 2 : 4096;
		while (cap < k->n_pool + n)
			cap *= 2;
		double *p = realloc(k->pool, cap * sizeof *p);
		if (!p)
			return -1;
		k->pool = p, k->cap_pool = cap;
	}
	memcpy(k->pool + k->n_pool, v, n * sizeof *v);
	k->runs[k->n_runs++] = (struct accepted){node, at, k->n_pool, n};
	k->n_pool += n;
	return 0;
}

/* cli/class_baseline.c's ng_class_baseline_for: the stored baseline while
 * younger than the policy's maximum age, else a fresh build from the accepted
 * runs of the window (a refusal is not stored). */
/* class_nodes: the class's nodes with a record (the simulation is shorter
 * than the baseline window, so every node seen counts). */
static int baseline_for(struct state *st, const ng_policy *pol, struct keymetric *k, int64_t now,
                        size_t class_nodes, bool *have)
{
	if (k->have && now - k->built_at < pol->baseline_max_age_hours * 3600 &&
	    !(pol->baseline_regrow > 0 &&
	      (double)class_nodes >= pol->baseline_regrow * (double)k->built_nodes)) {
		*have = true;
		return 0;
	}
	int64_t since = now - (int64_t)pol->baseline_window_days * 86400;
	size_t n = 0;
	ng_baseline_run *runs = malloc((k->n_runs ? k->n_runs : 1) * sizeof *runs);
	if (!runs)
		return -1;
	for (size_t i = 0; i < k->n_runs; i++)
		if (k->runs[i].taken_at >= since)
			runs[n++] = (ng_baseline_run){st->names[k->runs[i].node], k->pool + k->runs[i].off,
			                              k->runs[i].n};
	size_t nd, ni;
	ng_baseline_work_need(runs, n, &nd, &ni);
	ng_baseline_work w = {malloc((nd ? nd : 1) * sizeof(double)), nd,
	                      malloc((ni ? ni : 1) * sizeof(size_t)), ni};
	if (!w.buf || !w.idx) {
		free(w.buf), free(w.idx), free(runs);
		return -1;
	}
	ng_baseline b;
	ng_baseline_build(runs, n, pol, w, &b);
	/* class_baseline.c: a small class's baseline, to its own size */
	if (b.status == NG_BASELINE_TOO_FEW_NODES && pol->small_class_min_nodes > 0 &&
	    b.n_nodes >= (size_t)pol->small_class_min_nodes) {
		ng_policy small = *pol;
		small.min_baseline_nodes = pol->small_class_min_nodes;
		ng_baseline_build(runs, n, &small, w, &b);
	}
	free(w.buf), free(w.idx), free(runs);
	if (b.status == NG_BASELINE_OK) {
		k->have = true;
		k->built_at = now;
		k->median = b.median;
		k->cv = b.cv;
		k->node_mad = b.node_mad;
		k->built_nodes = b.n_nodes;
	}
	*have = b.status == NG_BASELINE_OK;
	return 0;
}

/* ng_store_cohort_drops: each other node's newest record of the key with
 * samples, taken within the window, as 1 - its median / the baseline median. */
static size_t cohort(struct state *st, size_t key, size_t m, size_t self, int64_t since,
                     double median)
{
	size_t n = 0, cls = key / KEYS_PER_CLASS;
	for (size_t node = st->class_start[cls]; node < st->class_start[cls + 1]; node++) {
		const struct latest *l = &st->latest[node * st->n_metrics + m];
		if (node == self || !l->taken_at || l->key != key || l->taken_at < since)
			continue;
		st->drops[n++] = 1.0 - l->median / median;
	}
	return n;
}

/* ---- one run of one node, as cli/admit_judge.c judges it -------------------------------- */

struct judged {
	size_t m;
	const char *stage;
	ng_verdict raw;
	ng_admit_result res;
	ng_admit_line line;
	const ng_fleet_result *r;
};

static double run_median(const ng_fleet_result *r)
{
	if (!r->n_samples)
		return NAN;
	for (size_t k = 0; k < r->n_samples; k++)
		if (!isfinite(r->samples[k]) || !(r->samples[k] > 0))
			return NAN;
	return ng_sim_median(r->samples, r->n_samples);
}

/* The record `nodegate admit` would have stored for this result. */
static cJSON *record_json(const ng_fleet_spec *s, const char *node, const char *class_key,
                          size_t m, const ng_fleet_result *r, const ng_policy *pol)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", NG_RECORD_SCHEMA);
	cJSON_AddStringToObject(o, "node", node);
	cJSON_AddStringToObject(o, "class", class_key);
	cJSON_AddStringToObject(o, "domain", s->metrics[m].domain);
	cJSON_AddStringToObject(o, "metric", s->metrics[m].name);
	cJSON_AddStringToObject(o, "unit", s->metrics[m].unit);
	cJSON_AddItemToObject(o, "samples", cJSON_CreateDoubleArray(r->samples, (int)r->n_samples));
	if (isnan(r->wrong))
		cJSON_AddNullToObject(o, "wrong");
	else
		cJSON_AddNumberToObject(o, "wrong", r->wrong);
	/* A fabric run carries the DCGM diagnostics the gate requires of it
	 * (gate.required_diag), all passing: the model plants no diag faults. */
	if (!ng_policy_diag_exempt(pol, s->metrics[m].domain)) {
		cJSON *d = cJSON_AddObjectToObject(o, "diag");
		for (size_t i = 0; i < pol->n_required_diag; i++)
			cJSON_AddStringToObject(d, pol->required_diag[i], "pass");
	}
	return o;
}

/* The gate's verdict on one result against the key's baseline and the
 * cohort of the class's other nodes' newest runs since `since`. */
static int gate_of(struct state *st, const ng_fleet_spec *s, size_t node, size_t key,
                   const char *class_key, size_t m, const ng_fleet_result *r, const ng_policy *pol,
                   const struct keymetric *k, bool have, int64_t since, ng_verdict *raw)
{
	size_t n_cohort = have ? cohort(st, key, m, node, since, k->median) : 0;
	cJSON *rec = record_json(s, st->names[node], class_key, m, r, pol), *bj = NULL;
	if (have) {
		bj = cJSON_CreateObject();
		cJSON_AddStringToObject(bj, "schema", NG_BASELINE_SCHEMA);
		cJSON_AddStringToObject(bj, "class", class_key);
		cJSON_AddStringToObject(bj, "metric", s->metrics[m].name);
		cJSON_AddNumberToObject(bj, "median", k->median);
		cJSON_AddNumberToObject(bj, "cv", k->cv);
	}
	ng_gate_input in = {0};
	ng_err err = {0};
	int rc = ng_gate_input_record(&in, rec, NULL, &err);
	if (rc == 0)
		rc = ng_gate_input_baseline(&in, bj, &err);
	if (rc == 0 && n_cohort)
		rc = ng_gate_input_cohort(&in, st->drops, n_cohort, &err);
	if (rc == 0)
		*raw = ng_gate_input_judge(&in, pol, NULL);
	ng_gate_input_free(&in);
	cJSON_Delete(rec);
	cJSON_Delete(bj);
	return rc < 0 ? -1 : 0;
}

static int judge(struct state *st, const ng_sim_fleet *f, size_t node, size_t key,
                 const char *class_key, int64_t now, size_t m, const ng_fleet_result *r,
                 const char *stage, struct judged *j)
{
	const ng_fleet_spec *s = f->spec;
	const ng_policy *pol = &st->pol[f->truth[node].cls];
	struct keymetric *k = &st->km[key * st->n_metrics + m];
	bool have;
	if (baseline_for(st, pol, k, now, st->n_seen[key], &have) < 0)
		return -1;
	int rc = gate_of(st, s, node, key, class_key, m, r, pol, k, have,
	                 now - pol->cohort_window_hours * 3600, &j->raw);
	/* admit_judge.c: what the day's cohort does not explain, the class's runs
	 * of the last cohort_local_minutes may. */
	if (rc == 0 && have && pol->cohort_local_minutes > 0 &&
	    (j->raw == NG_V_BLOCK || j->raw == NG_V_WARN)) {
		ng_verdict local;
		rc = gate_of(st, s, node, key, class_key, m, r, pol, k, have,
		             now - pol->cohort_local_minutes * 60, &local);
		if (rc == 0 && local == NG_V_FLEET_REGRESSION)
			j->raw = local;
	}
	if (rc < 0)
		return -1;

	/* The record is stored (and so in others' cohorts) whatever the verdict. */
	if (r->n_samples) {
		double w[NG_FLEET_SAMPLES_MAX];
		memcpy(w, r->samples, r->n_samples * sizeof *w);
		st->latest[node * st->n_metrics + m] =
			(struct latest){now, key, ng_np_median_inplace(w, r->n_samples)};
	}
	st->n_seen[key] += st->seen[key * st->n_nodes + node] == 0;
	st->seen[key * st->n_nodes + node] = now;

	/* The runbook's hysteresis, kept beside the verdict (it does not decide),
	 * and how often the node's runs of the metric were unstable lately. */
	unsigned unstable_recent = 0;
	if (j->raw != NG_V_NO_BASELINE) {
		struct hist *h = &st->hist[node * st->n_metrics + m];
		size_t window = (size_t)pol->unstable_window;
		unstable_recent = j->raw == NG_V_UNSTABLE;
		for (size_t i = 0; i < h->n; i++)
			unstable_recent += i + window > h->n && window > 0 && h->raw[i] == NG_V_UNSTABLE;
		ng_hysteresis out;
		if (ng_with_hysteresis(j->raw, h->k, h->n, h->blocked, (unsigned long long)pol->clear_after,
		                       (unsigned long long)pol->escalate_after, &out) == 0) {
			h->blocked = out.blocked;
			if (h->n == HIST_MAX) {
				memmove(h->k, h->k + 1, (HIST_MAX - 1) * sizeof h->k[0]);
				memmove(h->raw, h->raw + 1, (HIST_MAX - 1) * sizeof h->raw[0]);
				h->n--;
			}
			h->raw[h->n] = j->raw;
			h->k[h->n++] = ng_hist_kind_of(ng_verdict_name(j->raw));
		}
	}

	j->m = m;
	j->stage = stage;
	j->r = r;
	j->res = (ng_admit_result){
		.domain = s->metrics[m].domain,
		.metric = s->metrics[m].name,
		.value = run_median(r),
		.baseline_median = have ? k->median : NAN,
		.floor = ng_policy_floor(pol, s->metrics[m].name),
		.gate = j->raw,
		.establishing = !have,
		.low_mode = NAN,
		.unstable_recent = unstable_recent,
		.small_bar = have ? ng_admit_small_bar(k->median, k->node_mad, k->cv, k->built_nodes, pol) : 0,
		.baseline_cv = have ? k->cv : NAN,
	};
	if (j->raw == NG_V_BIMODAL) {
		double w[2 * NG_FLEET_SAMPLES_MAX];
		j->res.low_mode = ng_admit_low_mode(r->samples, r->n_samples, k->median, pol->block, w);
	}
	j->line = ng_admit_judge_metric(&j->res, pol);
	return 0;
}

static bool passed(ng_admit_metric_status s) { return s == NG_MS_OK || s == NG_MS_MARGINAL; }

/* A quarantine not made lands as ng_land_declined says. */
static ng_admit_outcome declined(const struct judged *j, size_t n)
{
	bool unmeasured = false, integrity = false;
	for (size_t i = 0; i < n; i++) {
		unmeasured = unmeasured || j[i].line.status == NG_MS_UNMEASURED;
		integrity = integrity || j[i].line.status == NG_MS_INTEGRITY;
	}
	return ng_land_declined(unmeasured, integrity);
}

static int screen(struct state *st, const ng_sim_fleet *f, size_t node, size_t run,
                  ng_sim_decision *out)
{
	const ng_fleet_spec *s = f->spec;
	const ng_fleet_truth *t = &f->truth[node];
	const ng_policy *pol = &st->pol[t->cls];
	int64_t now = (int64_t)run * 86400 + (int64_t)node * st->step + 1;
	char class_key[2 * NG_FLEET_NAME_MAX + 2];
	ng_fleet_probe p1, p2;
	ng_fleet_draw_truth(s, t, run, 0, &p1);
	size_t key = key_of(s, t->cls, p1.software);
	snprintf(class_key, sizeof class_key, "%s/%s", p1.class_name, p1.software);

	struct judged j[2 * NG_FLEET_METRICS_MAX];
	ng_admit_result first[NG_FLEET_METRICS_MAX], confirm[NG_FLEET_METRICS_MAX];
	size_t nj = 0, n1 = 0, n2 = 0;
	for (size_t m = 0; m < s->n_metrics; m++) {
		if (judge(st, f, node, key, class_key, now, m, &p1.m[m], "first", &j[nj]) < 0)
			return -1;
		first[n1++] = j[nj++].res;
	}
	ng_admit_decision d = ng_admit_decide(first, n1, NULL, 0, pol);
	*out = (ng_sim_decision){.attempts = 1};
	if (d.outcome == NG_ADMIT_SUSPECT) {
		/* The confirmation: the flagged domains once more (attempt 1). */
		ng_fleet_draw_truth(s, t, run, 1, &p2);
		out->attempts = 2;
		for (size_t m = 0; m < s->n_metrics; m++) {
			bool flagged = false;
			for (size_t c = 0; c < d.n_confirm; c++)
				flagged = flagged || strcmp(d.confirm[c], s->metrics[m].domain) == 0;
			if (!flagged)
				continue;
			out->last[m] = 1;
			if (judge(st, f, node, key, class_key, now, m, &p2.m[m], "confirm", &j[nj]) < 0)
				return -1;
			confirm[n2++] = j[nj++].res;
		}
		d = ng_admit_decide(first, n1, confirm, n2, pol);
	}

	/* Landing (cli/admit_land.c). No overrides in the simulation. First,
	 * each open event of the key whose metric this run measured takes its
	 * step toward clearing itself (ng_event_clean_step). */
	bool *ev = &st->event_open[key * st->n_metrics];
	for (size_t i = 0; i < nj; i++) {
		size_t e = key * st->n_metrics + j[i].m;
		bool clears;
		if (!st->event_open[e] || !st->event_node[e * st->n_nodes + node])
			continue;
		st->event_clean[e] = ng_event_clean_step(st->event_clean[e], j[i].line.status, pol, &clears);
		if (clears)
			st->event_open[e] = false;
	}
	ng_quarantine_cause causes[NG_ADMIT_NAMED_MAX];
	size_t n_causes = 0, first_m = s->n_metrics;
	bool below_floor = false;
	for (size_t i = 0; i < d.n_named && n_causes < NG_ADMIT_NAMED_MAX; i++) {
		for (size_t k = 0; k < nj; k++) {
			if (strcmp(j[k].res.metric, d.named[i]->metric) != 0 ||
			    (j[k].line.status != NG_MS_FAILED && j[k].line.status != NG_MS_INTEGRITY))
				continue;
			bool under = isfinite(j[k].res.floor) && isfinite(j[k].res.value) &&
			             j[k].res.value < j[k].res.floor;
			below_floor = below_floor || under;
			causes[n_causes++] = (ng_quarantine_cause){j[k].res.metric, under};
			if (first_m == s->n_metrics)
				first_m = j[k].m;
			break;
		}
	}
	bool declines = false;
	size_t declining = 0;
	for (size_t m = 0; m < s->n_metrics && !declines; m++)
		if ((declines = ev[m] && ng_event_declines(s->metrics[m].name, causes, n_causes)))
			declining = key * st->n_metrics + m;
	bool fleet_event = false;
	ng_land_path path = ng_land_path_of(d.outcome, false, st->case_open[node], declines);
	ng_admit_outcome landed = d.outcome;
	if (path == NG_LAND_OPEN_CASE) {
		landed = NG_ADMIT_QUARANTINED;
	} else if (path == NG_LAND_EVENT_OPEN) {
		landed = declined(j, nj);
		fleet_event = true;
		if (!st->event_node[declining * st->n_nodes + node])
			st->event_clean[declining] = 0;
		st->event_node[declining * st->n_nodes + node] = true;
	} else if (path == NG_LAND_QUARANTINE) {
		size_t qm = first_m < s->n_metrics ? first_m : 0;
		int64_t window = pol->breaker_window_hours * 3600;
		int64_t lookback = (int64_t)pol->baseline_window_days * 86400;
		int64_t since = now - window;
		ng_breaker_facts bf = {.past_windows = lookback > window
		                                               ? (double)(lookback - window) / (double)window
		                                               : 1};
		for (size_t n = 0; n < st->n_nodes; n++) {
			bool same = st->case_open[n] && st->case_key[n] == key && st->case_metric[n] == qm;
			bf.recent += same && st->case_at[n] >= since;
			bf.past += same && st->case_at[n] < since && st->case_at[n] >= now - lookback;
			bf.class_nodes += st->seen[key * st->n_nodes + n] >= now - lookback &&
			                  st->seen[key * st->n_nodes + n] > 0;
		}
		ng_breaker b = ng_breaker_check(&bf, pol);
		if (b.trips) {
			size_t e = key * st->n_metrics + qm;
			if (!st->event_open[e]) {
				/* a new event names the quarantines of its window and this node */
				st->escalations++;
				st->event_run[e] = run;
				st->event_clean[e] = 0;
				memset(&st->event_node[e * st->n_nodes], 0, st->n_nodes * sizeof(bool));
				for (size_t n = 0; n < st->n_nodes; n++)
					st->event_node[e * st->n_nodes + n] =
						st->case_open[n] && st->case_key[n] == key && st->case_metric[n] == qm &&
						st->case_at[n] >= since;
			}
			st->event_open[e] = true;
			st->event_node[e * st->n_nodes + node] = true;
		}
		if (b.trips && !below_floor) {
			fleet_event = true;
			landed = declined(j, nj);
		} else {
			st->case_open[node] = true;
			st->case_at[node] = now;
			st->case_key[node] = key;
			st->case_metric[node] = qm;
		}
	}
	if (ng_land_feeds_baseline(landed, false, fleet_event)) {
		for (size_t i = 0; i < nj; i++) {
			ng_admit_metric_status ms = j[i].line.status;
			if ((passed(ms) || ms == NG_MS_ESTABLISHING) && !ev[j[i].m]) {
				struct keymetric *k = &st->km[key * st->n_metrics + j[i].m];
				if (accept_run(k, node, now, j[i].r->samples, j[i].r->n_samples) < 0)
					return -1;
			}
		}
	}
	if (f->trace && (landed == NG_ADMIT_QUARANTINED || path == NG_LAND_QUARANTINE)) {
		fprintf(f->trace, "nodegate run %zu node %zu (%s, planted %s, %s): %s:", run, node,
		        class_key, ng_fleet_fault_name(t->fault), ng_fleet_sick(s, t, run) ? "sick" : "not sick",
		        landed == NG_ADMIT_QUARANTINED ? "quarantined" : "breaker tripped");
		for (size_t i = 0; i < nj; i++)
			if (j[i].line.status >= NG_MS_FAILED)
				fprintf(f->trace, " %s %s %s/%s (%.4g, baseline %.4g)", j[i].stage,
				        s->metrics[j[i].m].name, ng_verdict_name(j[i].raw),
				        ng_admit_metric_status_name(j[i].line.status), j[i].res.value,
				        j[i].res.baseline_median);
		fprintf(f->trace, "\n");
	}
	out->action = landed == NG_ADMIT_QUARANTINED                          ? NG_SIM_DRAIN
	              : landed == NG_ADMIT_ADMITTED || landed == NG_ADMIT_WARN ? NG_SIM_ADMIT
	                                                                       : NG_SIM_HOLD;
	return 0;
}

/* ---- the contestant --------------------------------------------------------------------- */

static void destroy(void *state)
{
	struct state *st = state;
	if (!st)
		return;
	if (st->km)
		for (size_t i = 0; i < st->n_keys * st->n_metrics; i++)
			free(st->km[i].runs), free(st->km[i].pool);
	free(st->pol), free(st->km), free(st->latest), free(st->seen), free(st->n_seen), free(st->case_open);
	free(st->case_at), free(st->case_key), free(st->case_metric), free(st->event_open), free(st->event_run);
	free(st->event_clean), free(st->event_node), free(st->hist);
	free(st->names), free(st->drops), free(st);
}

static void *create(const ng_sim_fleet *f)
{
	const ng_fleet_spec *s = f->spec;
	struct state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->n_nodes = s->n_nodes;
	st->n_metrics = s->n_metrics;
	st->n_keys = s->n_classes * KEYS_PER_CLASS;
	for (size_t c = 0; c < s->n_classes; c++)
		st->class_start[c + 1] = st->class_start[c] + s->classes[c].n_nodes;
	st->step = 86400 / (int64_t)(s->n_nodes + 1);
	if (st->step < 1)
		st->step = 1;
	st->pol = calloc(s->n_classes, sizeof *st->pol);
	st->km = calloc(st->n_keys * s->n_metrics, sizeof *st->km);
	st->latest = calloc(s->n_nodes * s->n_metrics, sizeof *st->latest);
	st->seen = calloc(st->n_keys * s->n_nodes, sizeof *st->seen);
	st->n_seen = calloc(st->n_keys, sizeof *st->n_seen);
	st->case_open = calloc(s->n_nodes, sizeof *st->case_open);
	st->case_at = calloc(s->n_nodes, sizeof *st->case_at);
	st->case_key = calloc(s->n_nodes, sizeof *st->case_key);
	st->case_metric = calloc(s->n_nodes, sizeof *st->case_metric);
	st->event_open = calloc(st->n_keys * s->n_metrics, sizeof *st->event_open);
	st->event_run = calloc(st->n_keys * s->n_metrics, sizeof *st->event_run);
	st->event_clean = calloc(st->n_keys * s->n_metrics, sizeof *st->event_clean);
	st->event_node = calloc(st->n_keys * s->n_metrics * s->n_nodes, sizeof *st->event_node);
	st->hist = calloc(s->n_nodes * s->n_metrics, sizeof *st->hist);
	st->names = calloc(s->n_nodes, sizeof *st->names);
	st->drops = calloc(s->n_nodes + 1, sizeof *st->drops);
	if (!st->pol || !st->km || !st->latest || !st->seen || !st->n_seen || !st->case_open || !st->case_at ||
	    !st->case_key || !st->case_metric || !st->event_open || !st->event_run || !st->event_clean || !st->event_node || !st->hist || !st->names || !st->drops) {
		destroy(st);
		return NULL;
	}
	for (size_t n = 0; n < s->n_nodes; n++)
		snprintf(st->names[n], sizeof st->names[n], "node%06zu", n);
	for (size_t c = 0; c < s->n_classes; c++) {
		ng_policy_default(&st->pol[c]);
		ng_err perr = {0};
		if (f->nodegate_policy &&
		    ng_policy_apply_json(&st->pol[c], f->nodegate_policy, "--policy", &perr) < 0) {
			fprintf(stderr, "fleetsim: nodegate policy: %s\n", perr.msg);
			destroy(st);
			return NULL;
		}
		if (!(f->floor_fraction > 0))
			continue; /* the policy as it ships: no floors */
		cJSON *doc = cJSON_CreateObject(), *floors = cJSON_AddObjectToObject(doc, "floors");
		for (size_t m = 0; m < s->n_metrics; m++)
			cJSON_AddNumberToObject(floors, s->metrics[m].name, ng_sim_floor(f, c, m));
		ng_err err = {0};
		int rc = ng_policy_apply_json(&st->pol[c], doc, "fleetsim floors", &err);
		cJSON_Delete(doc);
		if (rc < 0) {
			fprintf(stderr, "fleetsim: nodegate policy: %s\n", err.msg);
			destroy(st);
			return NULL;
		}
	}
	return st;
}

static int run(void *state, const ng_sim_fleet *f, size_t r, const bool *in_service,
               ng_sim_decision *out)
{
	struct state *st = state;
	/* An operator clears the breaker's events after fleet_clear_after runs. */
	for (size_t k = 0; f->fleet_clear_after && k < st->n_keys * st->n_metrics; k++)
		if (st->event_open[k] && r >= st->event_run[k] + f->fleet_clear_after)
			st->event_open[k] = false;
	for (size_t node = 0; node < f->spec->n_nodes; node++)
		if (in_service[node] && screen(st, f, node, r, &out[node]) < 0)
			return -1;
	return 0;
}

size_t ng_sim_nodegate_escalations(const void *state)
{
	return state ? ((const struct state *)state)->escalations : 0;
}

const ng_sim_contestant ng_sim_nodegate = {
	.name = "nodegate",
	.rule = "gate + flag-then-confirm + breaker scoped to a metric, the shipped policy",
	.create = create,
	.run = run,
	.destroy = destroy,
};
