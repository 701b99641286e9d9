/* The replay of the store's recorded decisions under a proposed policy and
 * under the policy that decided them (flow/replay.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy_digest.h"
#include "core/policy_json.h"
#include "core/verdict.h"
#include "flow/redecide.h"
#include "flow/replay.h"
#include "flow/replay_gate.h"
#include "flow/replay_gpu.h"
#include "flow/replay_model.h"
#include "store/policies.h"
#include "store/report_queries.h"

/* A policy the store keeps the text of, read once. */
struct own {
	char digest[32];
	char *body;
	ng_policy *pol;   /* NULL until read, or when it cannot be */
	bool tried;
	char why[320];    /* why it cannot decide again */
};

struct walk {
	const ng_replay_opts *o;
	char proposed_digest[NG_POLICY_DIGEST_LEN];
	struct own *own;
	size_t n_own, cap_own;
	/* scratch for one run's results: as the run's own policy and as the
	 * proposed one see them (the gate's verdicts may differ), and the
	 * verdict line of each */
	ng_admit_result *res, *res_prop, *work;
	size_t *line_of;
	ng_replay_gate *gate;
	ng_store *st;
	ng_admit_line *cur_line, *prop_line;
	size_t cap;
	ng_replay_model *m;
	bool oom;
	ng_err *err;
};

static int keep_text(const ng_store_policy_row *p, void *arg)
{
	struct walk *w = arg;
	if (w->n_own == w->cap_own) {
		size_t cap = w->cap_own ? w->cap_own * 2 : 8;
		struct own *o = realloc(w->own, cap * sizeof *o);
		if (!o)
			return ng_fail(w->err, "out of memory");
		w->own = o;
		w->cap_own = cap;
	}
	struct own *o = &w->own[w->n_own];
	*o = (struct own){0};
	ng_copy(o->digest, sizeof o->digest, p->digest);
	if (!(o->body = strdup(p->body)))
		return ng_fail(w->err, "out of memory");
	w->n_own++;
	return 0;
}

/* The policy that decided: read from its kept text, and only when that
 * text is the policy the digest names. NULL with own->why otherwise. */
static const struct own *own_policy(struct walk *w, const char *digest)
{
	static struct own none;
	struct own *o = NULL;
	for (size_t i = 0; i < w->n_own && !o; i++)
		if (strcmp(w->own[i].digest, digest) == 0)
			o = &w->own[i];
	if (!o) {
		none = (struct own){0};
		if (!*digest)
			snprintf(none.why, sizeof none.why, "the decision names no policy (written before "
			         "decisions kept one)");
		else
			snprintf(none.why, sizeof none.why, "the store keeps only the digest %.20s of the "
			         "policy that decided it, not its text (decided before the store kept "
			         "policy texts, schema 10)", digest);
		return &none;
	}
	if (o->tried)
		return o;
	o->tried = true;
	ng_policy p;
	ng_err perr;
	char digest_again[NG_POLICY_DIGEST_LEN];
	if (ng_policy_from_text(o->body, o->digest, &p, &perr) < 0) {
		snprintf(o->why, sizeof o->why, "its kept text does not load in this nodegate: %.250s",
		         perr.msg);
		return o;
	}
	ng_policy_digest(&p, digest_again);
	if (strcmp(digest_again, o->digest) != 0) {
		snprintf(o->why, sizeof o->why, "its kept text is policy %s in this nodegate, not %s",
		         digest_again, o->digest);
		return o;
	}
	if (!(o->pol = malloc(sizeof *o->pol))) {
		w->oom = true;
		return o;
	}
	*o->pol = p;
	return o;
}

/* The policy a GPU check names, for flow/replay_gpu.h. */
static const ng_policy *own_of_check(void *arg, const char *digest, const char **why)
{
	struct walk *w = arg;
	const struct own *o = own_policy(w, digest);
	*why = w->oom ? NULL : o->why;
	return o->pol;
}

static bool grow(struct walk *w, size_t n)
{
	if (n <= w->cap)
		return true;
	size_t cap = w->cap ? w->cap : 16;
	while (cap < n)
		cap *= 2;
	ng_admit_result *r = realloc(w->res, cap * sizeof *r);
	if (r)
		w->res = r;
	ng_admit_result *k = r ? realloc(w->work, cap * sizeof *k) : NULL;
	if (k)
		w->work = k;
	ng_admit_line *a = k ? realloc(w->cur_line, cap * sizeof *a) : NULL;
	if (a)
		w->cur_line = a;
	ng_admit_line *b = a ? realloc(w->prop_line, cap * sizeof *b) : NULL;
	if (b)
		w->prop_line = b;
	ng_admit_result *p = b ? realloc(w->res_prop, cap * sizeof *p) : NULL;
	if (p)
		w->res_prop = p;
	size_t *li = p ? realloc(w->line_of, cap * sizeof *li) : NULL;
	if (li)
		w->line_of = li;
	if (!li)
		return false;
	w->cap = cap;
	return true;
}

/* The run's results as it judged them, the gate's verdicts as given. First
 * stage in res[0..nf), confirmation in res[nf..). */
static void results_of(struct walk *w, const ng_store_replay_decision *d, size_t *nf)
{
	size_t k = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < d->n_lines; i++) {
			const ng_store_replay_line *l = &d->lines[i];
			bool confirm = strcmp(l->stage, "confirm") == 0;
			if (confirm != (pass == 1))
				continue;
			ng_verdict v;
			if (!ng_verdict_from_name(l->gate_verdict, &v))
				v = NG_V_NO_MEASUREMENT;
			w->res[k] = (ng_admit_result){
				.domain = l->domain, .metric = l->metric, .value = l->value,
				.baseline_median = l->baseline_median, .floor = NAN, .gate = v,
				.establishing = !isfinite(l->baseline_median), .low_mode = NAN,
				.baseline_cv = NAN,
			};
			w->line_of[k] = i;
			k++;
		}
		if (pass == 0)
			*nf = k;
	}
}

static int one_decision(const ng_store_replay_decision *d, void *arg)
{
	struct walk *w = arg;
	ng_replay_model *m = w->m;
	const struct own *own = own_policy(w, d->policy);
	if (w->oom)
		return ng_fail(w->err, "out of memory");
	if (!own->pol)
		return ng_replay_model_unreplayed(m, d, own->why) < 0 ? ng_fail(w->err, "out of memory") : 0;
	if (!grow(w, d->n_lines ? d->n_lines : 1))
		return ng_fail(w->err, "out of memory");
	size_t nf = 0;
	results_of(w, d, &nf);
	size_t nc = d->n_lines - nf;
	const ng_policy *cur = own->pol, *prop = w->o->proposed;
	memcpy(w->res_prop, w->res, d->n_lines * sizeof *w->res);
	/* Where the gate reads a value the two policies differ in, the gate
	 * judges each line again under each (flow/replay_gate.h). */
	if (ng_replay_gate_needed(w->gate, cur))
		for (size_t k = 0; k < d->n_lines; k++) {
			ng_verdict vc, vp;
			int r = ng_replay_gate_line(w->gate, w->st, d, &d->lines[w->line_of[k]], cur,
			                            w->res[k].gate, &vc, &vp, w->err);
			if (r < 0)
				return -1;
			if (r == 1) {
				w->res[k].gate = vc;
				w->res_prop[k].gate = vp;
			}
		}
	ng_redecision rc = ng_redecide(w->res, nf, w->res + nf, nc, cur, w->work);
	ng_redecision rp = ng_redecide(w->res_prop, nf, w->res_prop + nf, nc, prop, w->work);
	/* Each result under each policy, for the decisive metric. */
	for (size_t i = 0; i < d->n_lines; i++) {
		ng_admit_result r = w->res[i];
		r.floor = ng_policy_floor(cur, r.metric);
		w->cur_line[i] = ng_admit_judge_metric(&r, cur);
		r = w->res_prop[i];
		r.floor = ng_policy_floor(prop, r.metric);
		w->prop_line[i] = ng_admit_judge_metric(&r, prop);
	}
	ng_replay_decided dd = {
		.d = d, .cur = &rc, .prop = &rp, .results = w->res, .results_proposed = w->res_prop,
		.n_results = d->n_lines, .n_first = nf,
		.cur_line = w->cur_line, .prop_line = w->prop_line, .own = cur, .proposed = prop,
	};
	int rv = ng_replay_model_add(m, &dd);
	return rv < 0 ? ng_fail(w->err, "out of memory") : 0;
}

int ng_flow_replay(const ng_ctx *ctx, const ng_replay_opts *o, cJSON **out, ng_err *err)
{
	*out = NULL;
	if (!ctx->store)
		return ng_fail_as(err, NG_ERR_STORE, "a replay reads the store: name one");
	int64_t now = ng_ctx_now(ctx);
	int64_t since = now - (int64_t)o->days * 86400;
	struct walk w = {.o = o, .err = err, .st = ctx->store, .gate = ng_replay_gate_new(o->proposed)};
	ng_policy_digest(o->proposed, w.proposed_digest);
	ng_replay_model *m = w.gate ? ng_replay_model_new(o, w.proposed_digest, since, now,
	                                                  &ctx->policy)
	                            : NULL;
	if (!m) {
		ng_replay_gate_free(w.gate);
		return ng_fail(err, "out of memory");
	}
	w.m = m;
	/* One snapshot: the decisions, the policies and what came after them
	 * are read as of the same moment. */
	int rc = ng_store_read_begin(ctx->store, err);
	if (rc == 0)
		rc = ng_store_policies(ctx->store, keep_text, &w, err);
	if (rc == 0)
		rc = ng_store_replay_decisions(ctx->store, since, o->class_key, one_decision, &w, err);
	if (rc == 0)
		rc = ng_replay_model_finish(m, ctx->store, err);
	cJSON *doc = rc == 0 ? ng_replay_model_take(m) : NULL;
	if (rc == 0 && ng_replay_gate_report(w.gate, doc) < 0)
		rc = ng_fail(err, "out of memory");
	if (rc == 0)
		rc = ng_replay_gpu_checks(ctx->store, o, since, &ctx->policy, own_of_check, &w, doc, err);
	ng_store_read_end(ctx->store);
	for (size_t i = 0; i < w.n_own; i++) {
		free(w.own[i].body);
		free(w.own[i].pol);
	}
	free(w.own);
	free(w.res);
	free(w.work);
	free(w.cur_line);
	free(w.prop_line);
	free(w.res_prop);
	free(w.line_of);
	ng_replay_gate_free(w.gate);
	if (rc == 0)
		*out = doc;
	else
		cJSON_Delete(doc);
	ng_replay_model_free(m);
	return rc < 0 ? -1 : 0;
}
