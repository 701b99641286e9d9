/* fleetgen: a month of a synthetic GPU fleet, written into a store, for the
 * fleet report's tests and benchmark (docs/report.md, bench/README.md).
 *
 *   fleetgen --store PATH|postgresql://... [--nodes 10000] [--classes 4]
 *            [--days 30] [--seed 1] [--samples 8] [--now UNIXSECONDS]
 *            [--sacct-out FILE] [--truth-out FILE] [--hostile]
 *
 * The fleet, its noise and its planted truth come from the shared fleet
 * model (tools/fleet/fleet_model.h): sick nodes (slow, intermittent, slow
 * only under load, wrong results, a broken harness), a fleet-wide
 * regression of the fabric metric after a software change half-way through,
 * and one class whose storage degrades together near the end. fleetgen
 * plays the operator's month on it: every node is screened once a day
 * (admission as docs/admission.md describes it, in a simplified form: the
 * class baseline is the model's class median, the confirmation is attempt 1
 * of the same run), quarantines open and release, the circuit breaker opens
 * fleet-regression events, jobs run in gangs between screens, a fault that
 * shows under a job fails it and its epilog records the GPU, and some
 * quarantined nodes get a GPU replaced. A reviewed policy change
 * (flag fraction 0.90 -> 0.88) lands two thirds through, so decisions carry
 * two policy versions.
 *
 * Everything goes through the store API (records, decisions in batches,
 * baselines, cases, fleet events, the audit log), never through SQL, so the
 * report reads what nodegate itself would have written. Durable commits are
 * turned off for the generator's connection: it is a fixture, not evidence.
 *
 * --sacct-out writes Slurm job accounting for the same jobs, as
 * `sacct --parsable2 --noheader --format=JobID,NodeList,AllocTRES,Start,
 * End,State,ExitCode` prints it (times UTC). --truth-out writes what was
 * planted, as JSON, for tests to check the report against. --policy-out
 * writes the policy in force at the end (`nodegate --policy FILE report`
 * then draws its lines and names its version as fleetgen decided with):
 * the defaults, but for the circuit breaker's count, which scales with the
 * class (1% of its nodes, at least the default 5) so that a 2,500-node
 * class trips on a shared cause rather than on the storage probe's noise.
 * --hostile gives node 1 a host name full of HTML, to check the report
 * escapes it. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomic_file.h"
#include "core/policy.h"
#include "core/policy_digest.h"
#include "core/policy_json.h"
#include "core/sha256.h"
#include "core/stats.h"
#include "core/strbuf.h"
#include "fleet_model.h"
#include "store/policies.h"
#include "store/store.h"

#define DAY 86400
#define CONFIRM_ATTEMPT 1
#define HOSTILE_NAME "gpu-00001<script>alert(1)</script>\"'&amp;"

struct opts {
	const char *store, *sacct_out, *truth_out, *policy_out;
	size_t nodes, classes, days, samples;
	uint64_t seed;
	int64_t now;
	bool hostile;
};

/* What fleetgen keeps per node between days. */
struct node {
	ng_fleet_truth truth;   /* healed (fault HEALTHY) once its GPU was replaced */
	char host[64], id[40];
	int64_t case_id;        /* open quarantine case, 0 none */
	size_t case_metric;
	int64_t case_opened;
	int passes;
	int hw_gen;             /* parts replaced so far: changes the GPU UUIDs */
	bool repaired;
	bool admitted_today;    /* may take jobs today */
	bool ever_quarantined;
	size_t quarantines;
};

struct gen {
	struct opts o;
	ng_fleet_spec spec;
	struct node *nodes;
	ng_store *st;
	int64_t day0;
	/* Today's writes, flushed once per day. */
	ng_store_record *recs;
	char **bodies;
	double *samples;
	size_t n_recs, cap_recs;
	ng_store_node_state *states;
	ng_store_verdict *lines;
	size_t *line_of, *n_lines_of;
	ng_store_decision *dec;
	size_t n_dec, n_lines, cap_dec, cap_lines;
	char (*run_ids)[80];
	/* Circuit breaker: when each class's recent quarantines opened. */
	int64_t *class_q_times;  /* classes x 64 ring */
	size_t *class_q_n;
	int64_t *class_event;    /* open fleet event per class, 0 none */
	int64_t *class_event_day;
	bool *class_event_regression;
	/* Policies */
	char policy_a[NG_POLICY_DIGEST_LEN], policy_b[NG_POLICY_DIGEST_LEN];
	size_t policy_change_day;
	long breaker_count;
	double breaker_share;
	char policy_text[256]; /* policy B as a policy file */
	char *policy_full[2];  /* A and B as the store keeps them (core/policy_json.h) */
	/* Jobs */
	FILE *sacct;
	ng_atomic_file sacct_file;
	uint64_t next_job;
	/* Counts, for the summary and the truth file. */
	size_t n_records, n_decisions, n_cases, n_released_same, n_released_changed, n_events,
		n_jobs, n_epilog_faults;
	ng_strbuf truth_events;
};

static void die(const char *what, const ng_err *err)
{
	fprintf(stderr, "fleetgen: %s: %s\n", what, err ? err->msg : "out of memory");
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		die("allocating", NULL);
	return p;
}

static double uni(const struct gen *g, uint64_t a, uint64_t b, uint64_t c)
{
	/* Keys above the model's own stream numbers, so fleetgen's draws never
	 * repeat the model's. */
	return ng_fleet_uniform(g->spec.seed, a, b, 1000 + c, 0);
}

/* ---- the fleet ------------------------------------------------------------------------ */

static void set_classes(ng_fleet_spec *s, size_t k, size_t nodes)
{
	ng_fleet_class base[4];
	memcpy(base, s->classes, sizeof base);
	s->n_classes = k;
	size_t given = 0;
	for (size_t c = 0; c < k; c++) {
		ng_fleet_class *cl = &s->classes[c];
		*cl = base[c % 4];
		if (c >= 4) {
			/* A further generation of the same hardware: 5% faster per round. */
			char name[NG_FLEET_NAME_MAX];
			snprintf(name, sizeof name, "%.40s-gen%zu", base[c % 4].name, c / 4 + 1);
			memcpy(cl->name, name, sizeof cl->name);
			for (size_t m = 0; m < NG_FLEET_METRICS_MAX; m++)
				cl->median[m] *= 1.0 + 0.05 * (double)(c / 4);
		}
		cl->n_nodes = c + 1 == k ? nodes - given : nodes / k;
		given += cl->n_nodes;
	}
}

static void node_names(struct gen *g, size_t i)
{
	struct node *n = &g->nodes[i];
	if (g->o.hostile && i == 1)
		snprintf(n->host, sizeof n->host, "%s", HOSTILE_NAME);
	else
		snprintf(n->host, sizeof n->host, "gpu-%05zu", i);
	char key[64], hex[65];
	snprintf(key, sizeof key, "machine-id/%" PRIu64 "/%zu", g->spec.seed, i);
	ng_sha256_hex(key, strlen(key), hex);
	snprintf(n->id, sizeof n->id, "%.32s", hex);
}

/* The node's profile: what identity.c would read, less what the report
 * does not look at. Its GPU UUIDs change when a GPU is replaced. */
static void profile_of(const struct gen *g, size_t i, const char *software, ng_strbuf *out)
{
	const struct node *n = &g->nodes[i];
	const ng_fleet_class *c = &g->spec.classes[n->truth.cls];
	ng_strbuf_reset(out);
	ng_strbuf_adds(out, "{\"schema\":\"nodegate/profile/1\",\"node_id\":");
	ng_strbuf_add_json_string(out, n->id);
	ng_strbuf_adds(out, ",\"node_id_source\":\"/etc/machine-id\",\"hostname\":");
	ng_strbuf_add_json_string(out, n->host);
	ng_strbuf_adds(out, ",\"gpu\":{\"count\":8,\"model\":");
	char model[NG_FLEET_NAME_MAX];
	snprintf(model, sizeof model, "%s", c->name);
	char *slash = strchr(model, '/');
	if (slash)
		*slash = '\0';
	ng_strbuf_add_json_string(out, model);
	ng_strbuf_adds(out, ",\"driver\":\"550.54.15\",\"uuids\":[");
	for (int k = 0; k < 8; k++) {
		/* GPU 3 is the one replaced in a repair. */
		char key[96], hex[65];
		snprintf(key, sizeof key, "gpu/%" PRIu64 "/%zu/%d/%d", g->spec.seed, i, k,
		         k == 3 ? n->hw_gen : 0);
		ng_sha256_hex(key, strlen(key), hex);
		ng_strbuf_printf(out, "%s\"GPU-%.8s-%.4s-%.4s-%.4s-%.12s\"", k ? "," : "", hex, hex + 8,
		                 hex + 12, hex + 16, hex + 20);
	}
	ng_strbuf_printf(out, "]},\"ib\":{\"devices\":[{\"name\":\"mlx5_0\",\"node_guid\":"
	                      "\"b8ce:f603:00%02zx:%04zx\",\"fw_ver\":\"28.39.1002\"}]},"
	                      "\"cpu\":{\"model\":\"Intel Xeon Platinum 8480+\",\"sockets\":2},"
	                      "\"kernel\":{\"release\":\"6.1.0-26-amd64\"},\"tools\":{\"nodegate\":"
	                      "\"0.1.0\",\"stack\":",
	                 i >> 16 & 0xff, i & 0xffff);
	ng_strbuf_add_json_string(out, software);
	ng_strbuf_adds(out, "}}");
}

/* ---- today's writes ------------------------------------------------------------------ */

static int64_t screen_time(const struct gen *g, size_t day, size_t i)
{
	/* Screens spread over the first two hours of the day. */
	return g->day0 + (int64_t)day * DAY + (int64_t)(i % 120) * 60 + (int64_t)(i % 7);
}

static void add_record(struct gen *g, size_t i, size_t day, unsigned attempt, size_t m,
                       const ng_fleet_probe *p, bool accepted, const char *profile)
{
	if (g->n_recs == g->cap_recs) {
		size_t cap = g->cap_recs ? g->cap_recs * 2 : 4096;
		g->recs = realloc(g->recs, cap * sizeof *g->recs);
		g->bodies = realloc(g->bodies, cap * sizeof *g->bodies);
		g->samples = realloc(g->samples, cap * NG_FLEET_SAMPLES_MAX * sizeof *g->samples);
		g->run_ids = realloc(g->run_ids, cap * sizeof *g->run_ids);
		if (!g->recs || !g->bodies || !g->samples || !g->run_ids)
			die("allocating records", NULL);
		g->cap_recs = cap;
	}
	const ng_fleet_result *r = &p->m[m];
	const ng_fleet_metric *met = &g->spec.metrics[m];
	size_t k = g->n_recs++;
	double *s = g->samples + k * NG_FLEET_SAMPLES_MAX;
	memcpy(s, r->samples, r->n_samples * sizeof *s);
	snprintf(g->run_ids[k], sizeof g->run_ids[k], "fleetgen-%zu-%zu-%u", i, day, attempt);
	ng_strbuf b = {0};
	ng_strbuf_printf(&b, "{\"schema\":\"nodegate/record/1\",\"id\":\"%s-%zu\",\"node\":",
	                 g->run_ids[k], m);
	ng_strbuf_add_json_string(&b, g->nodes[i].id);
	ng_strbuf_adds(&b, ",\"class\":");
	ng_strbuf_add_json_string(&b, p->class_name);
	ng_strbuf_printf(&b, ",\"software\":\"%s\",\"domain\":\"%s\",\"metric\":\"%s\",\"unit\":\"%s\","
	                     "\"samples\":[",
	                 p->software, met->domain, met->name, met->unit);
	for (size_t q = 0; q < r->n_samples; q++) {
		if (q)
			ng_strbuf_addc(&b, ',');
		ng_strbuf_printf(&b, "%.6g", r->samples[q]);
	}
	if (isnan(r->wrong))
		ng_strbuf_adds(&b, "],\"wrong\":null");
	else
		ng_strbuf_printf(&b, "],\"wrong\":%.0f", r->wrong);
	ng_strbuf_printf(&b, ",\"conditions\":{\"attempt\":%u,\"loaded\":%s}}", attempt,
	                 p->loaded ? "true" : "false");
	if (b.oom)
		die("building a record", NULL);
	g->bodies[k] = b.s;
	/* Only finite positive samples go to the store's copy, as ingest does. */
	size_t good = 0;
	for (size_t q = 0; q < r->n_samples; q++)
		if (isfinite(s[q]) && s[q] > 0)
			s[good++] = s[q];
	g->recs[k] = (ng_store_record){
		.node = g->nodes[i].id, .class_key = p->class_name, .software = p->software,
		.domain = met->domain, .metric = met->name, .unit = met->unit,
		.taken_at = screen_time(g, p->run, i) + attempt * 900, .n_samples = good,
		.idle = true, .accepted = accepted, .body = g->bodies[k], .profile = profile,
	};
	/* run_id and samples are pointed at in flush: their arrays may move. */
}

static char *profile_copy(const struct gen *g, size_t i, const char *software)
{
	ng_strbuf b = {0};
	profile_of(g, i, software, &b);
	return b.s;
}

static void add_decision(struct gen *g, size_t i, size_t day, const char *cls, const char *sw,
                         const char *outcome, const ng_store_verdict *lines, size_t n_lines)
{
	if (g->n_dec == g->cap_dec) {
		size_t cap = g->cap_dec ? g->cap_dec * 2 : 4096;
		g->states = realloc(g->states, cap * sizeof *g->states);
		g->dec = realloc(g->dec, cap * sizeof *g->dec);
		g->line_of = realloc(g->line_of, cap * sizeof *g->line_of);
		g->n_lines_of = realloc(g->n_lines_of, cap * sizeof *g->n_lines_of);
		if (!g->states || !g->dec || !g->line_of || !g->n_lines_of)
			die("allocating decisions", NULL);
		g->cap_dec = cap;
	}
	if (g->n_lines + n_lines > g->cap_lines) {
		size_t cap = g->cap_lines ? g->cap_lines * 2 : 1024;
		while (cap < g->n_lines + n_lines)
			cap *= 2;
		g->lines = realloc(g->lines, cap * sizeof *g->lines);
		if (!g->lines)
			die("allocating verdict lines", NULL);
		g->cap_lines = cap;
	}
	size_t k = g->n_dec++;
	ng_store_node_state *s = &g->states[k];
	memset(s, 0, sizeof *s);
	ng_copy(s->node, sizeof s->node, g->nodes[i].id);
	ng_copy(s->class_key, sizeof s->class_key, cls);
	ng_copy(s->software, sizeof s->software, sw);
	ng_copy(s->outcome, sizeof s->outcome, outcome);
	s->updated_at = screen_time(g, day, i) + 1800;
	if (strcmp(outcome, "admitted-warn") == 0)
		s->recheck_at = s->updated_at + DAY;
	snprintf(s->run_id, sizeof s->run_id, "fleetgen-%zu-%zu", i, day);
	if (n_lines)
		memcpy(g->lines + g->n_lines, lines, n_lines * sizeof *lines);
	g->line_of[k] = g->n_lines;
	g->n_lines_of[k] = n_lines;
	g->n_lines += n_lines;
}

static void flush(struct gen *g, const char *policy)
{
	ng_err err;
	for (size_t k = 0; k < g->n_recs; k++) {
		g->recs[k].run_id = g->run_ids[k];
		g->recs[k].samples = g->samples + k * NG_FLEET_SAMPLES_MAX;
	}
	if (g->n_recs && ng_store_put_records(g->st, g->recs, g->n_recs, NULL, &err) < 0)
		die("storing records", &err);
	g->n_records += g->n_recs;
	for (size_t k = 0; k < g->n_recs; k++) {
		free(g->bodies[k]);
		free((char *)g->recs[k].profile);
	}
	g->n_recs = 0;
	for (size_t k = 0; k < g->n_dec; k++)
		g->dec[k] = (ng_store_decision){&g->states[k], g->lines + g->line_of[k], g->n_lines_of[k],
		                                NULL};
	ng_store_set_policy_text(g->st, policy,
	                         g->policy_full[strcmp(policy, g->policy_a) == 0 ? 0 : 1]);
	if (g->n_dec && ng_store_put_decisions(g->st, g->dec, g->n_dec, "fleetgen", &err) < 0)
		die("storing decisions", &err);
	g->n_decisions += g->n_dec;
	g->n_dec = 0;
	g->n_lines = 0;
}

/* ---- admission, simplified ---------------------------------------------------------- */

enum st { ST_OK, ST_FLAGGED, ST_UNMEASURED, ST_INTEGRITY };

static double baseline_of(const struct gen *g, size_t cls, size_t m, size_t day)
{
	double b = g->spec.classes[cls].median[m];
	/* The new software's baseline, built the day after the change, has the
	 * regression in it. */
	if (day > g->spec.regression_run && m == g->spec.regression_metric)
		b *= 1.0 - g->spec.regression_drop;
	return b;
}

static enum st judge(const struct gen *g, const ng_fleet_probe *p, size_t m, size_t day,
                     double fraction, double *median)
{
	const ng_fleet_result *r = &p->m[m];
	*median = NAN;
	if (!r->measured || r->n_samples == 0 || isnan(r->wrong))
		return ST_UNMEASURED;
	double work[NG_FLEET_SAMPLES_MAX];
	for (size_t k = 0; k < r->n_samples; k++)
		if (!(r->samples[k] > 0))
			return ST_UNMEASURED;
	*median = ng_np_median(r->samples, r->n_samples, work);
	if (r->wrong > 0)
		return ST_INTEGRITY;
	return *median < fraction * baseline_of(g, p->cls, m, day) ? ST_FLAGGED : ST_OK;
}

static ng_store_verdict line_of(const struct gen *g, const ng_fleet_probe *p, size_t m, size_t day,
                                double fraction, double median, enum st s, const char *stage)
{
	double b = baseline_of(g, p->cls, m, day);
	static const char *const status[] = {"ok", "flagged", "unmeasured", "integrity"};
	static const char *const gate[] = {"pass", "block", "no-measurement", "corrupt"};
	return (ng_store_verdict){
		.stage = stage, .domain = g->spec.metrics[m].domain, .metric = g->spec.metrics[m].name,
		.unit = g->spec.metrics[m].unit, .value = median, .baseline_median = b, .floor = NAN,
		.bar = fraction * b, .percent = isfinite(median) ? median / b * 100 : NAN,
		.gate_verdict = gate[s], .status = status[s],
	};
}

static cJSON *evidence_of(size_t i, size_t day, const ng_store_verdict *v, size_t n)
{
	cJSON *ev = cJSON_CreateObject();
	char run[80];
	snprintf(run, sizeof run, "fleetgen-%zu-%zu", i, day);
	cJSON_AddStringToObject(ev, "run", run);
	cJSON *failed = cJSON_AddArrayToObject(ev, "failed");
	bool confirmed = false;
	for (size_t k = 0; k < n; k++) {
		confirmed |= strcmp(v[k].stage, "confirm") == 0;
		if (strcmp(v[k].status, "ok") == 0)
			continue; /* the run's passing metrics are in its verdict lines */
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "stage", v[k].stage);
		cJSON_AddStringToObject(f, "domain", v[k].domain);
		cJSON_AddStringToObject(f, "metric", v[k].metric);
		cJSON_AddStringToObject(f, "unit", v[k].unit);
		if (isfinite(v[k].value))
			cJSON_AddNumberToObject(f, "value", v[k].value);
		cJSON_AddNumberToObject(f, "bar", v[k].bar);
		cJSON_AddNumberToObject(f, "baseline_median", v[k].baseline_median);
		if (isfinite(v[k].percent))
			cJSON_AddNumberToObject(f, "percent_of_median", v[k].percent);
		cJSON_AddStringToObject(f, "gate", v[k].gate_verdict);
		cJSON_AddStringToObject(f, "status", v[k].status);
		cJSON_AddItemToArray(failed, f);
	}
	cJSON_AddNumberToObject(ev, "runs", confirmed ? 2 : 1);
	return ev;
}

#define RING 64

/* Quarantines of the class within the breaker window, this one included. */
static size_t recent_quarantines(const struct gen *g, size_t c, int64_t at)
{
	size_t n = 0, have = g->class_q_n[c] < RING ? g->class_q_n[c] : RING;
	for (size_t k = 0; k < have; k++)
		n += g->class_q_times[c * RING + k] > at - 24 * 3600;
	return n;
}

/* Opens a case, or the class's fleet event when the breaker trips first.
 * Returns true when the node was quarantined. */
static bool quarantine(struct gen *g, size_t i, size_t day, const ng_fleet_probe *p,
                       const ng_store_verdict *v, size_t n, size_t metric)
{
	struct node *nd = &g->nodes[i];
	size_t c = p->cls;
	int64_t at = screen_time(g, day, i) + 1800;
	ng_err err;
	size_t would = recent_quarantines(g, c, at) + 1;
	size_t size = g->spec.classes[c].n_nodes;
	if (would >= 2 &&
	    ((long)would > g->breaker_count || (double)would / (double)size > g->breaker_share)) {
		ng_store_fleet_event e = {.opened_at = at};
		ng_copy(e.class_key, sizeof e.class_key, p->class_name);
		ng_copy(e.software, sizeof e.software, p->software);
		ng_strbuf nodes = {0};
		ng_strbuf_addc(&nodes, '[');
		for (size_t k = 0; k < g->o.nodes; k++) {
			const struct node *o = &g->nodes[k];
			if (o->truth.cls == c && o->case_id && o->case_opened > at - 24 * 3600) {
				ng_strbuf_add_json_string(&nodes, o->id);
				ng_strbuf_addc(&nodes, ',');
			}
		}
		ng_strbuf_add_json_string(&nodes, nd->id);
		ng_strbuf_addc(&nodes, ']');
		char detail[256];
		snprintf(detail, sizeof detail,
		         "{\"quarantines_in_window\":%zu,\"class_nodes\":%zu,\"window_hours\":24,"
		         "\"tripped_by\":\"%s\"}",
		         would, size, nd->id);
		e.nodes = nodes.s;
		e.detail = detail;
		if (ng_store_open_fleet_event(g->st, &e, "fleetgen", &err) < 0)
			die("opening a fleet event", &err);
		ng_strbuf_free(&nodes);
		g->class_event[c] = e.id;
		g->class_event_day[c] = (int64_t)day;
		g->class_event_regression[c] = day == g->spec.regression_run;
		g->n_events++;
		ng_strbuf_printf(&g->truth_events, "%s{\"id\":%" PRId64 ",\"class\":\"%s\",\"day\":%zu,"
		                                    "\"regression\":%s}",
		                 g->truth_events.len ? "," : "", e.id, p->class_name, day,
		                 g->class_event_regression[c] ? "true" : "false");
		return false;
	}
	ng_store_case cs = {.opened_at = at};
	ng_copy(cs.node, sizeof cs.node, nd->id);
	ng_copy(cs.class_key, sizeof cs.class_key, p->class_name);
	ng_copy(cs.software, sizeof cs.software, p->software);
	ng_copy(cs.domain, sizeof cs.domain, g->spec.metrics[metric].domain);
	ng_copy(cs.metric, sizeof cs.metric, g->spec.metrics[metric].name);
	snprintf(cs.release_condition, sizeof cs.release_condition,
	         "2 passing runs of %s %s after the quarantine began (a reboot alone never releases),"
	         " or an administrator-led diagnostic (`nodegate release --manual`)",
	         cs.domain, cs.metric);
	cJSON *ev = evidence_of(i, day, v, n);
	cs.evidence = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	if (ng_store_open_case(g->st, &cs, "fleetgen", &err) < 0)
		die("opening a case", &err);
	nd->case_id = cs.id;
	nd->case_metric = metric;
	nd->case_opened = at;
	nd->passes = 0;
	nd->ever_quarantined = true;
	nd->quarantines++;
	ng_store_case_free(&cs);
	g->class_q_times[c * RING + g->class_q_n[c]++ % RING] = at;
	g->n_cases++;
	return true;
}

/* A quarantined node's daily screen: a retry of the failed test. */
static void retry(struct gen *g, size_t i, size_t day, double fraction)
{
	struct node *nd = &g->nodes[i];
	ng_err err;
	/* A really sick node may get its GPU replaced after three days. */
	bool hw = nd->truth.fault == NG_FLEET_SLOW || nd->truth.fault == NG_FLEET_CORRUPT ||
	          nd->truth.fault == NG_FLEET_BIMODAL;
	int64_t at = screen_time(g, day, i);
	if (hw && !nd->repaired && at - nd->case_opened >= 3 * DAY && uni(g, i, day, 1) < 0.5) {
		nd->repaired = true;
		nd->hw_gen++;
		nd->truth.fault = NG_FLEET_HEALTHY;
	}
	ng_fleet_probe p;
	ng_fleet_draw_truth(&g->spec, &nd->truth, day, 0, &p);
	char *prof = profile_copy(g, i, p.software);
	double med;
	size_t m = nd->case_metric;
	enum st s = judge(g, &p, m, day, fraction, &med);
	for (size_t k = 0; k < p.n_metrics; k++)
		add_record(g, i, day, 0, k, &p, false, k == 0 ? prof : NULL);
	bool pass = s == ST_OK;
	char run[80];
	snprintf(run, sizeof run, "fleetgen-%zu-%zu", i, day);
	if (ng_store_case_retry(g->st, nd->case_id, pass, run, at + 1800, &err) < 0)
		die("counting a retry", &err);
	nd->passes += pass;
	const char *outcome = "quarantined";
	if (nd->passes >= 2) {
		char reason[200];
		if (nd->repaired)
			snprintf(reason, sizeof reason, "GPU 3 replaced (RMA-%05zu); 2 passing runs of %s since",
			         i, g->spec.metrics[m].name);
		else
			snprintf(reason, sizeof reason, "2 passing runs of %s since the quarantine began",
			         g->spec.metrics[m].name);
		if (ng_store_close_case(g->st, nd->case_id, at + 1900, nd->repaired ? "dc-tech" : "oncall",
		                        reason, &err) < 0)
			die("releasing a case", &err);
		if (nd->repaired)
			g->n_released_changed++;
		else
			g->n_released_same++;
		nd->case_id = 0;
		outcome = "admitted";
	}
	ng_store_verdict v = line_of(g, &p, m, day, fraction, med, s, "first");
	add_decision(g, i, day, p.class_name, p.software, outcome, &v, 1);
	nd->admitted_today = nd->case_id == 0;
}

static void screen(struct gen *g, size_t i, size_t day, double fraction)
{
	struct node *nd = &g->nodes[i];
	nd->admitted_today = false;
	if (nd->case_id) {
		retry(g, i, day, fraction);
		return;
	}
	ng_fleet_probe p;
	ng_fleet_draw_truth(&g->spec, &nd->truth, day, 0, &p);
	char *prof = profile_copy(g, i, p.software);
	enum st s[NG_FLEET_METRICS_MAX];
	double med[NG_FLEET_METRICS_MAX];
	ng_store_verdict v[2 * NG_FLEET_METRICS_MAX];
	size_t nv = 0;
	bool flagged = false, unmeasured = false, integrity = false;
	size_t integrity_metric = 0;
	for (size_t m = 0; m < p.n_metrics; m++) {
		s[m] = judge(g, &p, m, day, fraction, &med[m]);
		flagged |= s[m] == ST_FLAGGED;
		unmeasured |= s[m] == ST_UNMEASURED;
		if (s[m] == ST_INTEGRITY && !integrity)
			integrity_metric = m;
		integrity |= s[m] == ST_INTEGRITY;
		/* Every metric's line, as admission keeps them: a replay under a
		 * stricter policy reads the values that passed. */
		v[nv++] = line_of(g, &p, m, day, fraction, med[m], s[m], "first");
	}
	/* Confirm what was flagged, once: attempt 1 runs the long profile. */
	bool confirmed = false;
	size_t confirmed_metric = 0;
	ng_fleet_probe q;
	if (flagged && !integrity) {
		ng_fleet_draw_truth(&g->spec, &nd->truth, day, CONFIRM_ATTEMPT, &q);
		for (size_t m = 0; m < q.n_metrics; m++) {
			if (s[m] != ST_FLAGGED)
				continue;
			double m2;
			enum st s2 = judge(g, &q, m, day, fraction, &m2);
			add_record(g, i, day, CONFIRM_ATTEMPT, m, &q, false, NULL);
			v[nv++] = line_of(g, &q, m, day, fraction, m2, s2, "confirm");
			if (s2 == ST_FLAGGED && !confirmed) {
				confirmed = true;
				confirmed_metric = m;
			}
		}
	}
	const char *outcome = "admitted";
	if (integrity || confirmed) {
		size_t metric = integrity ? integrity_metric : confirmed_metric;
		if (g->class_event[p.cls])
			outcome = "admitted-warn"; /* the breaker holds quarantine back */
		else
			outcome = quarantine(g, i, day, &p, v, nv, metric) ? "quarantined" : "admitted-warn";
	} else if (unmeasured) {
		outcome = "held";
	} else if (flagged) {
		outcome = "admitted-warn"; /* recovered in its confirmation */
	}
	bool admitted = strcmp(outcome, "admitted") == 0;
	for (size_t m = 0; m < p.n_metrics; m++)
		add_record(g, i, day, 0, m, &p, admitted && s[m] == ST_OK, m == 0 ? prof : NULL);
	add_decision(g, i, day, p.class_name, p.software, outcome, v, nv);
	nd->admitted_today = admitted || strcmp(outcome, "admitted-warn") == 0;
}

/* ---- baselines and events ------------------------------------------------------------ */

static void put_baselines(struct gen *g, size_t day, const char *software)
{
	ng_err err;
	for (size_t c = 0; c < g->spec.n_classes; c++) {
		for (size_t m = 0; m < g->spec.n_metrics; m++) {
			ng_store_baseline b = {0};
			ng_copy(b.class_key, sizeof b.class_key, g->spec.classes[c].name);
			ng_copy(b.software, sizeof b.software, software);
			ng_copy(b.metric, sizeof b.metric, g->spec.metrics[m].name);
			ng_copy(b.unit, sizeof b.unit, g->spec.metrics[m].unit);
			ng_copy(b.status, sizeof b.status, "ok");
			b.median = baseline_of(g, c, m, day);
			b.cv = g->spec.classes[c].cv[m];
			b.node_mad = g->spec.classes[c].node_cv[m] * b.median;
			b.n_nodes = (int64_t)g->spec.classes[c].n_nodes;
			b.n_runs = b.n_nodes;
			b.n_samples = b.n_nodes * (int64_t)g->spec.samples;
			b.min_nodes = 10;
			b.built_at = g->day0 + (int64_t)day * DAY + 3 * 3600;
			b.window_start = b.built_at - 30 * DAY;
			b.window_end = b.built_at;
			if (ng_store_put_baseline(g->st, &b, "fleetgen", &err) < 0)
				die("storing a baseline", &err);
		}
	}
}

static void clear_events(struct gen *g, size_t day)
{
	ng_err err;
	for (size_t c = 0; c < g->spec.n_classes; c++) {
		/* The regression's events are cleared by the change owner two days
		 * on, any other by the on-call after a look; the class that
		 * degraded on its own stays tripped. */
		bool degraded = c == g->spec.degraded_class &&
		                (size_t)g->class_event_day[c] >= g->spec.degraded_run;
		if (!g->class_event[c] || degraded || (int64_t)day < g->class_event_day[c] + 2)
			continue;
		char reason[200];
		if (g->class_event_regression[c])
			snprintf(reason, sizeof reason,
			         "%s rolled out on purpose (CHG-4821); fabric baselines rebuilt for it",
			         g->spec.software_after);
		else
			snprintf(reason, sizeof reason,
			         "reviewed: unrelated nodes failing different metrics, no shared cause");
		if (ng_store_clear_fleet_event(g->st, g->class_event[c], g->day0 + (int64_t)day * DAY + 600,
		                               g->class_event_regression[c] ? "change-owner" : "oncall",
		                               reason, &err) < 0)
			die("clearing a fleet event", &err);
		g->class_event[c] = 0;
	}
}

/* ---- jobs ----------------------------------------------------------------------------- */

/* "gpu-[00010-00012,00015]" for consecutive zero-padded names; plain names
 * (the hostile one) are listed as they are. */
static void hostlist(const struct gen *g, const size_t *idx, size_t n, ng_strbuf *out)
{
	ng_strbuf_reset(out);
	bool plain = true;
	for (size_t k = 0; k < n; k++)
		plain &= strncmp(g->nodes[idx[k]].host, "gpu-", 4) == 0 &&
		         strlen(g->nodes[idx[k]].host) == 9;
	if (!plain || n == 1) {
		for (size_t k = 0; k < n; k++)
			ng_strbuf_printf(out, "%s%s", k ? "," : "", g->nodes[idx[k]].host);
		return;
	}
	ng_strbuf_adds(out, "gpu-[");
	for (size_t k = 0; k < n;) {
		size_t e = k;
		while (e + 1 < n && idx[e + 1] == idx[e] + 1)
			e++;
		if (e == k)
			ng_strbuf_printf(out, "%s%05zu", k ? "," : "", idx[k]);
		else
			ng_strbuf_printf(out, "%s%05zu-%05zu", k ? "," : "", idx[k], idx[e]);
		k = e + 1;
	}
	ng_strbuf_addc(out, ']');
}

static void utc(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void epilog_record(struct gen *g, size_t i, int64_t at, const char *job, const char *sev,
                          const char *signal, const char *text)
{
	ng_strbuf b = {0};
	ng_strbuf_adds(&b, "{\"index\":3,\"uuid\":\"GPU-3\",\"bus\":\"0000:5d:00\",\"name\":\"NVIDIA GPU\","
	                   "\"severity\":");
	ng_strbuf_add_json_string(&b, sev);
	ng_strbuf_adds(&b, ",\"reasons\":[{\"severity\":");
	ng_strbuf_add_json_string(&b, sev);
	ng_strbuf_adds(&b, ",\"signal\":");
	ng_strbuf_add_json_string(&b, signal);
	ng_strbuf_adds(&b, ",\"text\":");
	ng_strbuf_add_json_string(&b, text);
	ng_strbuf_adds(&b, "}],\"schema\":\"nodegate/record/1\",\"node\":");
	ng_strbuf_add_json_string(&b, g->nodes[i].host);
	ng_strbuf_adds(&b, ",\"domain\":\"health\",\"metric\":\"gpu.health\",\"mode\":\"epilog\",\"job\":");
	ng_strbuf_add_json_string(&b, job);
	ng_strbuf_addc(&b, '}');
	char run[128];
	snprintf(run, sizeof run, "epilog-%.64s-%.31s", g->nodes[i].host, job);
	ng_store_record r = {.node = g->nodes[i].host, .class_key = "", .domain = "health",
	                     .metric = "gpu.health", .unit = "", .run_id = run, .taken_at = at,
	                     .body = b.s};
	ng_err err;
	if (b.oom || ng_store_put_records(g->st, &r, 1, NULL, &err) < 0)
		die("storing an epilog record", &err);
	ng_strbuf_free(&b);
	g->n_epilog_faults++;
	g->n_records++;
}

/* Whether a node's fault shows under a long job today, and how. */
static bool shows_in_job(const struct gen *g, size_t i, size_t day)
{
	const struct node *nd = &g->nodes[i];
	const ng_fleet_truth *t = &nd->truth;
	bool hw = t->fault == NG_FLEET_SLOW || t->fault == NG_FLEET_BIMODAL ||
	          t->fault == NG_FLEET_LOAD || t->fault == NG_FLEET_CORRUPT;
	if (!hw || day < t->onset)
		return false;
	double p = t->fault == NG_FLEET_LOAD ? 0.7 : t->fault == NG_FLEET_CORRUPT ? 0.6
	           : t->fault == NG_FLEET_BIMODAL ? 0.5 : 0.3;
	return uni(g, i, day, 2) < p;
}

static void run_jobs(struct gen *g, size_t day)
{
	static const size_t gang[] = {1, 2, 4, 8};
	size_t *members = xcalloc(8, sizeof *members);
	ng_strbuf list = {0};
	size_t first = 0;
	for (size_t c = 0; c < g->spec.n_classes; c++) {
		size_t end = first + g->spec.classes[c].n_nodes;
		size_t i = first;
		while (i < end) {
			size_t want = gang[(size_t)(uni(g, i, day, 3) * 4) % 4], n = 0;
			while (i < end && n < want) {
				if (g->nodes[i].admitted_today)
					members[n++] = i;
				i++;
			}
			if (!n)
				continue;
			int64_t start = g->day0 + (int64_t)day * DAY + 3 * 3600 +
			                (int64_t)(uni(g, members[0], day, 4) * 7200);
			int64_t dur = 2 * 3600 + (int64_t)(uni(g, members[0], day, 5) * 18 * 3600);
			int64_t stop = start + dur;
			const char *state = "COMPLETED";
			int code = 0;
			char job[32];
			snprintf(job, sizeof job, "%" PRIu64, g->next_job++);
			size_t faulty = n;
			for (size_t k = 0; k < n && faulty == n; k++)
				if (shows_in_job(g, members[k], day))
					faulty = k;
			const char *sev = NULL, *signal = NULL, *text = NULL;
			bool early = false;
			if (faulty < n) {
				ng_fleet_fault f = g->nodes[members[faulty]].truth.fault;
				double u = uni(g, members[faulty], day, 6);
				early = true;
				if (f == NG_FLEET_CORRUPT) {
					sev = "fatal", signal = "ecc.volatile_uncorrected";
					text = "2 uncorrectable ECC errors since the last reset";
					/* Silent corruption finishes the job: its results are suspect. */
					early = u < 0.5;
					state = early ? "FAILED" : "COMPLETED";
					code = early ? 1 : 0;
				} else if (f == NG_FLEET_LOAD) {
					sev = "degraded", signal = "clocks.hw_slowdown";
					text = "hardware slowdown under load: clocks held below target";
					state = "FAILED", code = 1;
				} else if (f == NG_FLEET_BIMODAL && u < 0.35) {
					sev = "fatal", signal = "xid.79", text = "Xid 79: GPU has fallen off the bus";
					state = "NODE_FAIL", code = 0;
				} else if (f == NG_FLEET_BIMODAL) {
					sev = "degraded", signal = "nvlink.down", text = "NVLink link 5 down";
					state = "FAILED", code = 1;
				} else {
					sev = "degraded", signal = "pcie.width", text = "PCIe link x8 of x16";
					state = "TIMEOUT", code = 0;
				}
				if (early)
					stop = start + (int64_t)((0.1 + 0.8 * u) * (double)dur);
			} else {
				double u = uni(g, members[0], day, 7);
				if (u < 0.04) {
					state = "FAILED", code = 1; /* the job's own bug */
					stop = start + (int64_t)(u / 0.04 * (double)dur);
				} else if (u < 0.06) {
					state = "CANCELLED", code = 0;
					stop = start + dur / 3;
				}
			}
			if (stop > g->o.now) {
				state = "RUNNING";
				code = 0;
			}
			g->n_jobs++;
			if (g->sacct) {
				char s1[32], s2[32];
				utc(start, s1);
				if (strcmp(state, "RUNNING") == 0)
					snprintf(s2, sizeof s2, "Unknown");
				else
					utc(stop, s2);
				hostlist(g, members, n, &list);
				fprintf(g->sacct, "%s|%s|billing=%zu,cpu=%zu,gres/gpu=%zu,mem=%zuG,node=%zu|%s|%s|%s%s|%d:0\n",
				        job, list.s, 112 * n, 112 * n, 8 * n, 1800 * n, n, s1, s2, state,
				        strcmp(state, "CANCELLED") == 0 ? " by 1000" : "", code);
			}
			if (faulty < n && strcmp(state, "RUNNING") != 0) {
				epilog_record(g, members[faulty], stop + 5, job, sev, signal, text);
				/* Slurm drained the node: no more jobs on it today. */
				g->nodes[members[faulty]].admitted_today = false;
			}
		}
		first = end;
	}
	free(members);
	ng_strbuf_free(&list);
}

/* ---- the truth file ------------------------------------------------------------------ */

static void write_truth(struct gen *g)
{
	ng_strbuf t = {0};
	ng_strbuf_printf(&t, "{\"schema\":\"nodegate/fleetgen-truth/1\",\"now\":%" PRId64
	                     ",\"days\":%zu,\"nodes\":%zu,\"seed\":%" PRIu64 ",\"sick\":[",
	                 g->o.now, g->o.days, g->o.nodes, g->o.seed);
	bool any = false;
	for (size_t i = 0; i < g->o.nodes; i++) {
		ng_fleet_truth t0;
		ng_fleet_truth_of(&g->spec, i, &t0);
		if (t0.fault == NG_FLEET_HEALTHY || t0.onset >= g->o.days)
			continue;
		const struct node *n = &g->nodes[i];
		ng_strbuf_adds(&t, any ? "," : "");
		any = true;
		ng_strbuf_adds(&t, "{\"node\":");
		ng_strbuf_add_json_string(&t, n->host);
		ng_strbuf_printf(&t, ",\"node_id\":\"%s\",\"class\":", n->id);
		ng_strbuf_add_json_string(&t, g->spec.classes[t0.cls].name);
		ng_strbuf_printf(&t, ",\"fault\":\"%s\",\"metric\":\"%s\",\"severity\":%.3f,\"onset_day\":%zu,"
		                     "\"quarantined_now\":%s,\"quarantines\":%zu,\"repaired\":%s}",
		                 ng_fleet_fault_name(t0.fault), g->spec.metrics[t0.metric].name, t0.severity,
		                 t0.onset, n->case_id ? "true" : "false", n->quarantines,
		                 n->repaired ? "true" : "false");
	}
	ng_strbuf_printf(&t, "],\"regression\":{\"day\":%zu,\"at\":%" PRId64 ",\"metric\":\"%s\","
	                     "\"drop\":%.3f,\"software_before\":\"%s\",\"software_after\":\"%s\"},",
	                 g->spec.regression_run, g->day0 + (int64_t)g->spec.regression_run * DAY,
	                 g->spec.metrics[g->spec.regression_metric].name, g->spec.regression_drop,
	                 g->spec.software_before, g->spec.software_after);
	if (g->spec.degraded_class < g->spec.n_classes)
		ng_strbuf_printf(&t, "\"degraded\":{\"class\":\"%s\",\"metric\":\"%s\",\"day\":%zu},",
		                 g->spec.classes[g->spec.degraded_class].name,
		                 g->spec.metrics[g->spec.degraded_metric].name, g->spec.degraded_run);
	else
		ng_strbuf_adds(&t, "\"degraded\":null,");
	ng_strbuf_printf(&t, "\"fleet_events\":[%s],\"policies\":[\"%s\",\"%s\"],\"policy_change_day\":%zu,"
	                     "\"classes\":[",
	                 g->truth_events.s ? g->truth_events.s : "", g->policy_a, g->policy_b,
	                 g->policy_change_day);
	for (size_t c = 0; c < g->spec.n_classes; c++) {
		ng_strbuf_adds(&t, c ? "," : "");
		ng_strbuf_add_json_string(&t, g->spec.classes[c].name);
	}
	ng_strbuf_printf(&t, "],\"counts\":{\"records\":%zu,\"decisions\":%zu,\"cases\":%zu,"
	                     "\"released_same_hardware\":%zu,\"released_hardware_changed\":%zu,"
	                     "\"fleet_events\":%zu,\"jobs\":%zu,\"epilog_faults\":%zu}}\n",
	                 g->n_records, g->n_decisions, g->n_cases, g->n_released_same,
	                 g->n_released_changed, g->n_events, g->n_jobs, g->n_epilog_faults);
	ng_err err;
	if (t.oom || ng_write_file_atomic(g->o.truth_out, t.s, t.len, &err) < 0)
		die("writing the truth file", t.oom ? NULL : &err);
	ng_strbuf_free(&t);
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: fleetgen --store PATH|postgresql://... [--nodes N] [--classes K] [--days D]\n"
	           "                [--seed S] [--samples N] [--now UNIXSECONDS] [--sacct-out FILE]\n"
	           "                [--truth-out FILE] [--policy-out FILE] [--hostile]\n");
}

static long number(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (!*v || *end || n < lo || n > hi) {
		fprintf(stderr, "fleetgen: %s takes a number from %ld to %ld, not \"%s\"\n", opt, lo, hi, v);
		exit(2);
	}
	return n;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"store", required_argument, NULL, 's'},   {"nodes", required_argument, NULL, 'n'},
		{"classes", required_argument, NULL, 'k'}, {"days", required_argument, NULL, 'd'},
		{"seed", required_argument, NULL, 'S'},    {"samples", required_argument, NULL, 'm'},
		{"now", required_argument, NULL, 'N'},     {"sacct-out", required_argument, NULL, 'a'},
		{"truth-out", required_argument, NULL, 't'}, {"hostile", no_argument, NULL, 'H'},
		{"policy-out", required_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},          {0},
	};
	struct gen g;
	memset(&g, 0, sizeof g);
	g.o = (struct opts){.nodes = 10000, .classes = 4, .days = 30, .samples = 8, .seed = 1,
	                    .now = (int64_t)time(NULL)};
	int c;
	while ((c = getopt_long(argc, argv, "s:n:k:d:S:m:N:a:t:P:Hh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': g.o.store = optarg; break;
		case 'n': g.o.nodes = (size_t)number("--nodes", optarg, 8, 1000000); break;
		case 'k': g.o.classes = (size_t)number("--classes", optarg, 1, NG_FLEET_CLASSES_MAX); break;
		case 'd': g.o.days = (size_t)number("--days", optarg, 4, 366); break;
		case 'S': g.o.seed = (uint64_t)number("--seed", optarg, 0, 1L << 40); break;
		case 'm': g.o.samples = (size_t)number("--samples", optarg, 3, NG_FLEET_SAMPLES_MAX); break;
		case 'N': g.o.now = number("--now", optarg, 86400L * 400, 1L << 40); break;
		case 'a': g.o.sacct_out = optarg; break;
		case 't': g.o.truth_out = optarg; break;
		case 'P': g.o.policy_out = optarg; break;
		case 'H': g.o.hostile = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!g.o.store || optind < argc || g.o.nodes < g.o.classes * 2) {
		usage(stderr);
		return 2;
	}
	double t0 = seconds();

	ng_fleet_spec *s = &g.spec;
	ng_fleet_spec_default(s, g.o.nodes, g.o.days, g.o.seed);
	s->samples = g.o.samples;
	s->n_metrics = 4; /* the seed's four domains: compute, GPU memory, storage, fabric */
	set_classes(s, g.o.classes, g.o.nodes);
	s->degraded_class = g.o.classes >= 2 ? g.o.classes - 1 : g.o.classes;
	char why[200];
	if (ng_fleet_init(s, why, sizeof why) < 0) {
		fprintf(stderr, "fleetgen: the fleet model refused the spec: %s\n", why);
		return 2;
	}

	ng_err err;
	if (ng_store_open(g.o.store, &g.st, &err) < 0)
		die("opening the store", &err);
	const char *fast = strncmp(g.o.store, "postgres", 8) == 0 ? "SET synchronous_commit TO off"
	                                                          : "PRAGMA synchronous = OFF";
	if (ng_sql_exec(ng_store_sql(g.st), fast, &err) < 0)
		die("turning off durable commits", &err);
	/* The policies, as files would give them, so their digests are the
	 * ones nodegate computes from the same file. */
	size_t largest = 0;
	for (size_t k = 0; k < s->n_classes; k++)
		largest = s->classes[k].n_nodes > largest ? s->classes[k].n_nodes : largest;
	g.breaker_count = (long)(largest / 100) > 5 ? (long)(largest / 100) : 5;
	ng_policy pol;
	const char *fractions[] = {"0.9", "0.88"};
	char *digests[] = {g.policy_a, g.policy_b};
	for (int k = 0; k < 2; k++) {
		snprintf(g.policy_text, sizeof g.policy_text,
		         "{\"admission\": {\"flag_fraction\": %s, \"breaker_count\": %ld}}\n", fractions[k],
		         g.breaker_count);
		cJSON *doc = cJSON_Parse(g.policy_text);
		ng_policy_default(&pol);
		if (!doc)
			die("making the policy", NULL);
		if (ng_policy_apply_json(&pol, doc, "fleetgen", &err) < 0)
			die("making the policy", &err);
		cJSON_Delete(doc);
		ng_policy_digest(&pol, digests[k]);
		if (!(g.policy_full[k] = ng_policy_to_text(&pol)))
			die("making the policy", NULL);
	}
	g.breaker_share = pol.breaker_share;
	g.policy_change_day = g.o.days * 2 / 3;
	if (g.o.policy_out && ng_write_file_atomic(g.o.policy_out, g.policy_text,
	                                           strlen(g.policy_text), &err) < 0)
		die("writing the policy", &err);

	/* The last day ends now; screens start each day at midnight UTC. */
	g.day0 = (g.o.now / DAY) * DAY - (int64_t)(g.o.days - 1) * DAY;
	g.nodes = xcalloc(g.o.nodes, sizeof *g.nodes);
	for (size_t i = 0; i < g.o.nodes; i++) {
		ng_fleet_truth_of(s, i, &g.nodes[i].truth);
		node_names(&g, i);
	}
	size_t nc = s->n_classes;
	g.class_q_times = xcalloc(nc * RING, sizeof *g.class_q_times);
	g.class_q_n = xcalloc(nc, sizeof *g.class_q_n);
	g.class_event = xcalloc(nc, sizeof *g.class_event);
	g.class_event_day = xcalloc(nc, sizeof *g.class_event_day);
	g.class_event_regression = xcalloc(nc, sizeof *g.class_event_regression);
	g.next_job = 100000;
	if (g.o.sacct_out && !(g.sacct = ng_atomic_fopen(&g.sacct_file, g.o.sacct_out, 0644, &err))) {
		fprintf(stderr, "fleetgen: %s\n", err.msg);
		return 1;
	}

	for (size_t day = 0; day < g.o.days; day++) {
		if (day == 0)
			put_baselines(&g, 0, s->software_before);
		if (day == s->regression_run + 1)
			put_baselines(&g, day, s->software_after);
		clear_events(&g, day);
		bool later = day >= g.policy_change_day;
		double fraction = later ? 0.88 : 0.90;
		for (size_t i = 0; i < g.o.nodes; i++) {
			if (screen_time(&g, day, i) > g.o.now)
				continue;
			screen(&g, i, day, fraction);
		}
		flush(&g, later ? g.policy_b : g.policy_a);
		run_jobs(&g, day);
	}
	if (g.sacct && ng_atomic_fclose(&g.sacct_file, g.sacct, true, &err) < 0) {
		fprintf(stderr, "fleetgen: %s\n", err.msg);
		return 1;
	}
	if (g.o.truth_out)
		write_truth(&g);
	double took = seconds() - t0;
	printf("fleetgen: %zu nodes, %zu classes, %zu days into %s in %.1f s: %zu records, %zu "
	       "decisions, %zu quarantines (%zu released with the same hardware, %zu after a repair), "
	       "%zu fleet events, %zu jobs, %zu epilog faults\n",
	       g.o.nodes, nc, g.o.days, ng_store_where(g.st), took, g.n_records, g.n_decisions,
	       g.n_cases, g.n_released_same, g.n_released_changed, g.n_events, g.n_jobs,
	       g.n_epilog_faults);
	ng_store_close(g.st);
	free(g.nodes);
	free(g.recs);
	free(g.bodies);
	free(g.samples);
	free(g.run_ids);
	free(g.states);
	free(g.lines);
	free(g.line_of);
	free(g.n_lines_of);
	free(g.dec);
	free(g.class_q_times);
	free(g.class_q_n);
	free(g.class_event);
	free(g.class_event_day);
	free(g.class_event_regression);
	free(g.policy_full[0]);
	free(g.policy_full[1]);
	ng_strbuf_free(&g.truth_events);
	return 0;
}
