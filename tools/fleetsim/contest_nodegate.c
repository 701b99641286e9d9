/* Contestant 5: nodegate's own admission, the shipped code path.
 *
 * Each node's daily screen is one run of the admission flow `nodegate admit`
 * runs (flow/admit.h: ng_admit_run_flow), against a SQLite store of the
 * simulation's own (a temporary file, on tmpfs where there is one): its
 * records are stored, judged by the gate against their class baseline
 * (built from the store's accepted runs, as `nodegate baseline` builds it)
 * and the cohort of the class's other nodes, the flagged domains confirmed
 * once (re-measured through the request's remeasure hook: the model's
 * second attempt), and the outcome landed with the class's circuit breaker,
 * cases and fleet-regression events as `nodegate admit` lands it. The
 * policy is src/core/policy.c's defaults as they ship (no floors), and
 * floors only where the scenario sets them for every contestant
 * (floor_fraction x the SKU reference), one policy per class (a partition's
 * prolog passes its own --policy).
 *
 * Node i's screen in run r is taken at r x 86400 + i x step seconds (the
 * context's clock); its confirmation at the same time (admission stamps both
 * stages with the run's time). No operator releases a case during the
 * simulation (nodegate withdraws the first node of a shared drop itself:
 * withdrawals(), below), and nobody clears a fleet-regression event unless
 * the simulation is told an operator does (fleet_clear_after). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/policy.h"
#include "core/policy_digest.h"
#include "core/record_build.h"
#include "flow/admit.h"
#include "sim.h"

struct state {
	ng_store *store;
	char dir[256];
	ng_policy *pol;                       /* per class */
	char (*digest)[NG_POLICY_DIGEST_LEN]; /* per class: the decisions name it */
	char (*names)[32];                    /* node ids */
	int64_t step;
	int64_t now; /* the screen's time: the context's clock */
};

static int64_t sim_clock(void *arg)
{
	return *(const int64_t *)arg;
}

/* ---- one run of one node, through the admission flow ---------------------------------- */

/* The record `nodegate admit` would have stored for this result. */
static cJSON *record_json(const ng_fleet_spec *s, const char *node, const char *class_name,
                          const char *software, size_t m, const ng_fleet_result *r,
                          const ng_policy *pol)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", NG_RECORD_SCHEMA);
	cJSON_AddStringToObject(o, "node", node);
	cJSON_AddStringToObject(o, "class", class_name);
	cJSON_AddStringToObject(o, "software", software);
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

/* The confirmation: the model's second attempt at the flagged domains. */
struct remeasure {
	const ng_sim_fleet *f;
	const ng_fleet_truth *t;
	const ng_policy *pol;
	const char *node;
	size_t run;
	ng_fleet_probe p2;
	ng_sim_decision *out;
};

static cJSON *remeasure(void *arg, const char *const *domains, size_t n_domains)
{
	struct remeasure *rm = arg;
	const ng_fleet_spec *s = rm->f->spec;
	ng_fleet_draw_truth(s, rm->t, rm->run, 1, &rm->p2);
	rm->out->attempts = 2;
	cJSON *recs = cJSON_CreateArray();
	for (size_t m = 0; recs && m < s->n_metrics; m++) {
		bool flagged = false;
		for (size_t c = 0; c < n_domains; c++)
			flagged = flagged || strcmp(domains[c], s->metrics[m].domain) == 0;
		if (!flagged)
			continue;
		rm->out->last[m] = 1;
		cJSON_AddItemToArray(recs, record_json(s, rm->node, rm->p2.class_name, rm->p2.software, m,
		                                       &rm->p2.m[m], rm->pol));
	}
	return recs;
}

/* A case the run withdrew (the first node of a shared drop) was a drain of
 * minutes: the node it named, drained earlier in this run, was held, not
 * drained. One drained in an earlier run stays drained: the simulation has
 * taken it out of service already. */
static void withdrawals(const ng_sim_fleet *f, const cJSON *withdrawn, size_t node, size_t run,
                        ng_sim_decision *all)
{
	const cJSON *w;
	cJSON_ArrayForEach(w, withdrawn) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(w, "node");
		size_t k;
		if (!cJSON_IsString(id) || sscanf(id->valuestring, "node%zu", &k) != 1 || k >= node ||
		    all[k].action != NG_SIM_DRAIN)
			continue;
		all[k].action = NG_SIM_HOLD;
		if (f->trace)
			fprintf(f->trace, "nodegate run %zu node %zu: case withdrawn by node %zu's recheck\n",
			        run, k, node);
	}
}

static int screen(struct state *st, const ng_sim_fleet *f, size_t node, size_t run,
                  ng_sim_decision *all)
{
	ng_sim_decision *out = &all[node];
	const ng_fleet_spec *s = f->spec;
	const ng_fleet_truth *t = &f->truth[node];
	const ng_policy *pol = &st->pol[t->cls];
	st->now = (int64_t)run * 86400 + (int64_t)node * st->step + 1;
	ng_fleet_probe p1;
	ng_fleet_draw_truth(s, t, run, 0, &p1);
	cJSON *first = cJSON_CreateArray();
	for (size_t m = 0; first && m < s->n_metrics; m++)
		cJSON_AddItemToArray(first, record_json(s, st->names[node], p1.class_name, p1.software, m,
		                                        &p1.m[m], pol));
	if (!first)
		return -1;
	*out = (ng_sim_decision){.attempts = 1};
	struct remeasure rm = {.f = f, .t = t, .pol = pol, .node = st->names[node], .run = run, .out = out};
	ng_ctx ctx = {.policy = *pol, .store = st->store, .actor = "fleetsim", .no_land = true,
	              .clock = sim_clock, .clock_arg = &st->now};
	struct ng_admit_request q = {.records = first, .remeasure = remeasure, .remeasure_arg = &rm};
	ng_store_set_policy(st->store, st->digest[t->cls]);
	struct ng_admit_run r;
	ng_err err;
	int rc = ng_admit_run_flow(&ctx, &q, &r, &err);
	cJSON_Delete(first);
	if (rc < 0) {
		fprintf(stderr, "fleetsim: nodegate: %s\n", err.msg);
		ng_admit_run_release(&r);
		return -1;
	}
	bool drained = strcmp(r.outcome, "quarantined") == 0;
	if (f->trace && (drained || r.d.outcome == NG_ADMIT_QUARANTINED)) {
		fprintf(f->trace, "nodegate run %zu node %zu (%s/%s, planted %s, %s): %s:", run, node,
		        p1.class_name, p1.software, ng_fleet_fault_name(t->fault),
		        ng_fleet_sick(s, t, run) ? "sick" : "not sick",
		        drained ? "quarantined" : r.outcome);
		for (size_t i = 0; i < r.n; i++)
			if (r.j[i].line.status >= NG_MS_FAILED)
				fprintf(f->trace, " %s %s %s/%s (%.4g, baseline %.4g)", r.j[i].stage, r.j[i].metric,
				        ng_verdict_name(r.j[i].raw),
				        ng_admit_metric_status_name(r.j[i].line.status), r.j[i].res.value,
				        r.j[i].res.baseline_median);
		/* why a quarantine was not made: the landing's last word */
		int n_notes = cJSON_GetArraySize(r.notes);
		const cJSON *last = n_notes ? cJSON_GetArrayItem(r.notes, n_notes - 1) : NULL;
		if (!drained && cJSON_IsString(last))
			fprintf(f->trace, " [%s]", last->valuestring);
		fprintf(f->trace, "\n");
	}
	out->action = drained ? NG_SIM_DRAIN : ng_admit_exit_status(&r) == 0 ? NG_SIM_ADMIT : NG_SIM_HOLD;
	withdrawals(f, r.withdrawn, node, run, all);
	ng_admit_run_release(&r);
	return 0;
}

/* ---- the contestant --------------------------------------------------------------------- */

/* Removes the store's directory and what the store made in it. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			remove_dir(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void destroy(void *state)
{
	struct state *st = state;
	if (!st)
		return;
	ng_store_close(st->store);
	if (st->dir[0])
		remove_dir(st->dir);
	free(st->pol), free(st->digest), free(st->names), free(st);
}

/* A store of the simulation's own: on tmpfs where there is one (a store's
 * every commit is synchronous), else in $TMPDIR. */
static int open_store(struct state *st)
{
	const char *tmp = getenv("TMPDIR");
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
	snprintf(st->dir, sizeof st->dir, "%s/nodegate-fleetsim-XXXXXX", base);
	if (!mkdtemp(st->dir)) {
		st->dir[0] = '\0';
		fprintf(stderr, "fleetsim: nodegate: cannot make a directory for its store in %s\n", base);
		return -1;
	}
	char path[300];
	snprintf(path, sizeof path, "%s/store.db", st->dir);
	ng_err err;
	if (ng_store_open_scratch(path, &st->store, &err) < 0) {
		fprintf(stderr, "fleetsim: nodegate: store: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void *create(const ng_sim_fleet *f)
{
	const ng_fleet_spec *s = f->spec;
	struct state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->step = 86400 / (int64_t)(s->n_nodes + 1);
	if (st->step < 1)
		st->step = 1;
	st->pol = calloc(s->n_classes, sizeof *st->pol);
	st->digest = calloc(s->n_classes, sizeof *st->digest);
	st->names = calloc(s->n_nodes, sizeof *st->names);
	if (!st->pol || !st->digest || !st->names || open_store(st) < 0) {
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
		if (f->floor_fraction > 0) {
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
		ng_policy_digest(&st->pol[c], st->digest[c]);
	}
	return st;
}

/* An operator clears the breaker's events fleet_clear_after runs after they
 * opened (`nodegate fleet clear`). */
static int clear_events(struct state *st, const ng_sim_fleet *f, size_t r)
{
	ng_store_fleet_event *ev = NULL;
	size_t n = 0;
	ng_err err;
	if (ng_store_list_fleet_events(st->store, false, &ev, &n, &err) < 0) {
		fprintf(stderr, "fleetsim: nodegate: store: %s\n", err.msg);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		if (r >= (size_t)(ev[i].opened_at / 86400) + f->fleet_clear_after &&
		    ng_store_clear_fleet_event(st->store, ev[i].id, (int64_t)r * 86400, "fleetsim",
		                               "the simulated operator", &err) < 0) {
			fprintf(stderr, "fleetsim: nodegate: store: %s\n", err.msg);
			rc = -1;
		}
	for (size_t i = 0; i < n; i++)
		ng_store_fleet_event_free(&ev[i]);
	free(ev);
	return rc;
}

static int run(void *state, const ng_sim_fleet *f, size_t r, const bool *in_service,
               ng_sim_decision *out)
{
	struct state *st = state;
	ng_err err;
	/* One transaction for the run's screens: each admission's own
	 * transactions are savepoints in it, and see what the earlier ones wrote
	 * as they would in an ordinary store. */
	if (ng_store_batch_begin(st->store, &err) < 0) {
		fprintf(stderr, "fleetsim: nodegate: store: %s\n", err.msg);
		return -1;
	}
	int rc = f->fleet_clear_after ? clear_events(st, f, r) : 0;
	for (size_t node = 0; rc == 0 && node < f->spec->n_nodes; node++)
		if (in_service[node])
			rc = screen(st, f, node, r, out);
	if (ng_store_batch_end(st->store, &err) < 0) {
		fprintf(stderr, "fleetsim: nodegate: store: %s\n", err.msg);
		return -1;
	}
	return rc;
}

size_t ng_sim_nodegate_escalations(const void *state)
{
	const struct state *st = state;
	ng_store_fleet_event *ev = NULL;
	size_t n = 0;
	ng_err err;
	if (!st || ng_store_list_fleet_events(st->store, true, &ev, &n, &err) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		ng_store_fleet_event_free(&ev[i]);
	free(ev);
	return n;
}

const ng_sim_contestant ng_sim_nodegate = {
	.name = "nodegate",
	.rule = "gate + flag-then-confirm + breaker scoped to a metric, the shipped policy",
	.create = create,
	.run = run,
	.destroy = destroy,
};
