/* The shadow policy's hooks and its summary (flow/shadow.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/policy_digest.h"
#include "core/policy_json.h"
#include "flow/redecide.h"
#include "flow/shadow.h"
#include "store/policies.h"

#define DAY 86400

/* The policy in shadow: 1 (pol, digest set), 0 none, -1 error. */
static int shadow_policy(ng_store *st, ng_policy *pol, char digest[32], ng_err *err)
{
	ng_store_shadow s;
	int r = ng_store_get_shadow(st, &s, err);
	if (r != 1)
		return r;
	ng_copy(digest, 32, s.digest);
	r = ng_policy_from_text(s.body.s ? s.body.s : "", s.digest, pol, err) < 0 ? -1 : 1;
	ng_strbuf_free(&s.body);
	return r;
}

int ng_shadow_admission(ng_store *st, const ng_shadow_admit *a, ng_err *err)
{
	ng_policy *pol = malloc(sizeof *pol);
	ng_admit_result *work = malloc((a->n_first + a->n_confirm + 1) * sizeof *work);
	char digest[32];
	int r = pol && work ? shadow_policy(st, pol, digest, err) : ng_fail(err, "out of memory");
	if (r == 1) {
		ng_redecision d = ng_redecide(a->first, a->n_first, a->confirm, a->n_confirm, pol, work);
		ng_store_shadow_outcome o = {
			.kind = "admit", .run_id = a->run_id, .node = a->node, .class_key = a->class_key,
			.policy = digest, .enforced = a->enforced ? a->enforced : "",
			.shadow = ng_admit_outcome_name(d.outcome), .rule = d.metric ? d.metric : "",
			.at = a->at,
		};
		r = ng_store_put_shadow_outcome(st, &o, err);
	}
	free(pol);
	free(work);
	return r < 0 ? -1 : 0;
}

/* The node's class, as its admission last kept it; "" when not known. */
static void class_of_node(ng_store *st, const char *node, char *out, size_t cap)
{
	ng_store_node_ref ref;
	ng_store_node_state s;
	ng_err e;
	out[0] = '\0';
	if (ng_store_resolve_node(st, node, &ref, &e) >= 0 &&
	    ng_store_get_node_state(st, ref.id, &s, &e) == 1)
		ng_copy(out, cap, s.class_key);
}

int ng_shadow_gpu_check(ng_store *st, const ng_shadow_gpu *g, ng_err *err)
{
	ng_policy *pol = malloc(sizeof *pol);
	ng_node_health *h = malloc(sizeof *h);
	char digest[32];
	int r = pol && h ? shadow_policy(st, pol, digest, err) : ng_fail(err, "out of memory");
	if (r == 1) {
		ng_health_judge(g->snap, g->history, g->n_history, pol, h);
		/* Every signal that would drain, once each: the rules it would
		 * have drained for. */
		ng_strbuf rules = {0};
		for (size_t i = 0; i < h->n_gpus; i++)
			for (size_t k = 0; k < h->gpu[i].n_reasons; k++) {
				const ng_health_reason *rs = &h->gpu[i].reason[k];
				if (rs->severity != NG_HEALTH_DEGRADED && rs->severity != NG_HEALTH_FATAL)
					continue;
				char word[96];
				snprintf(word, sizeof word, " %s ", rs->signal);
				char have[1024];
				snprintf(have, sizeof have, " %s ", rules.s ? rules.s : "");
				if (strstr(have, word))
					continue;
				if (rules.len)
					ng_strbuf_addc(&rules, ' ');
				ng_strbuf_adds(&rules, rs->signal);
			}
		char cls[256];
		class_of_node(st, g->node, cls, sizeof cls);
		ng_store_shadow_outcome o = {
			.kind = g->mode, .node = g->node, .class_key = cls, .policy = digest,
			.enforced = g->enforced_drain ? "drain" : "ok", .shadow = h->drain ? "drain" : "ok",
			.rule = rules.s ? rules.s : "", .at = g->at,
		};
		r = rules.oom ? ng_fail(err, "out of memory") : ng_store_put_shadow_outcome(st, &o, err);
		ng_strbuf_free(&rules);
	}
	free(pol);
	free(h);
	return r < 0 ? -1 : 0;
}

int ng_flow_shadow_set(const ng_ctx *ctx, const ng_policy *pol, const char *reason, ng_err *err)
{
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(pol, digest);
	char *text = ng_policy_to_text(pol);
	if (!text)
		return ng_fail(err, "out of memory");
	int rc = ng_store_set_shadow(ctx->store, digest, text, ng_ctx_now(ctx), ctx->actor, reason, err);
	free(text);
	if (rc == 0)
		ng_ctx_note(ctx, "policy", "note: policy %s runs in shadow: every admission and GPU check "
		            "judges it beside the enforcing one, and lands nothing of it", digest);
	return rc;
}

int ng_flow_shadow_show(const ng_ctx *ctx, long days, cJSON **out, ng_err *err)
{
	return ng_flow_shadow_summary(ctx->store, ng_ctx_now(ctx) - days * 86400, NULL, out, err);
}

int ng_flow_shadow_clear(const ng_ctx *ctx, const char *reason, ng_err *err)
{
	return ng_store_clear_shadow(ctx->store, ng_ctx_now(ctx), ctx->actor, reason, err);
}

/* ---- the summary ---------------------------------------------------------------------- */

struct tally {
	const char *policy; /* only this shadow policy's outcomes, or NULL */
	cJSON *evaluated, *would;
	/* distinct (class, day, node) out under the shadow, and (class, node) seen */
	struct key {
		char cls[128];
		int64_t day;
		char node[128];
	} *out, *seen;
	size_t n_out, n_seen, cap_out, cap_seen;
	bool oom;
};

static bool push(struct key **v, size_t *n, size_t *cap, const char *cls, int64_t day,
                 const char *node)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct key *k = realloc(*v, c * sizeof *k);
		if (!k)
			return false;
		*v = k;
		*cap = c;
	}
	struct key *k = &(*v)[(*n)++];
	ng_copy(k->cls, sizeof k->cls, cls);
	k->day = day;
	ng_copy(k->node, sizeof k->node, node);
	return true;
}

static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = strcmp(x->cls, y->cls);
	if (c)
		return c;
	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	return strcmp(x->node, y->node);
}

static void count_would(struct tally *t, const ng_store_shadow_outcome *o, const char *rule)
{
	cJSON *e;
	cJSON_ArrayForEach(e, t->would)
	{
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind")), o->kind) == 0 &&
		    strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "class")), o->class_key) == 0 &&
		    strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "rule")), rule) == 0 &&
		    strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "policy")), o->policy) == 0)
			break;
	}
	if (!e) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "policy", o->policy);
		cJSON_AddStringToObject(e, "kind", o->kind);
		cJSON_AddStringToObject(e, "class", o->class_key);
		cJSON_AddStringToObject(e, "rule", rule);
		cJSON_AddStringToObject(e, "outcome", o->shadow);
		cJSON_AddNumberToObject(e, "count", 0);
		cJSON_AddNumberToObject(e, "enforcing_did", 0);
		cJSON_AddItemToArray(t->would, e);
	}
	cJSON *c = cJSON_GetObjectItem(e, "count"), *d = cJSON_GetObjectItem(e, "enforcing_did");
	cJSON_SetNumberValue(c, c->valuedouble + 1);
	if (strcmp(o->enforced, o->shadow) == 0)
		cJSON_SetNumberValue(d, d->valuedouble + 1);
}

static int tally_row(const ng_store_shadow_outcome *o, void *arg)
{
	struct tally *t = arg;
	if (t->policy && strcmp(t->policy, o->policy) != 0)
		return 0;
	cJSON *n = cJSON_GetObjectItem(t->evaluated, o->kind);
	if (!n)
		n = cJSON_AddNumberToObject(t->evaluated, o->kind, 0);
	cJSON_SetNumberValue(n, n->valuedouble + 1);
	if (!push(&t->seen, &t->n_seen, &t->cap_seen, o->class_key, 0, o->node))
		return t->oom = true, -1;
	bool out = strcmp(o->shadow, "quarantined") == 0 || strcmp(o->shadow, "drain") == 0;
	if (!out)
		return 0;
	/* The peak day counts what the shadow takes out that enforcing did not. */
	if (strcmp(o->enforced, o->shadow) != 0 &&
	    !push(&t->out, &t->n_out, &t->cap_out, o->class_key, o->at / DAY, o->node))
		return t->oom = true, -1;
	/* one count per rule a GPU check would have drained for */
	char rules[512];
	ng_copy(rules, sizeof rules, *o->rule ? o->rule : "(none)");
	char *save = NULL;
	for (char *r = strtok_r(rules, " ", &save); r; r = strtok_r(NULL, " ", &save))
		count_would(t, o, r);
	return 0;
}

static void peak(struct tally *t, cJSON *peak_day)
{
	if (t->n_seen)
		qsort(t->seen, t->n_seen, sizeof *t->seen, by_key);
	if (t->n_out)
		qsort(t->out, t->n_out, sizeof *t->out, by_key);
	for (size_t i = 0; i < t->n_seen;) {
		const char *cls = t->seen[i].cls;
		int64_t nodes = 0;
		size_t j = i;
		for (; j < t->n_seen && strcmp(t->seen[j].cls, cls) == 0; j++)
			nodes += j == i || strcmp(t->seen[j].node, t->seen[j - 1].node) != 0;
		int64_t best = 0, best_day = 0, run = 0;
		for (size_t k = 0; k < t->n_out; k++) {
			const struct key *q = &t->out[k];
			if (strcmp(q->cls, cls) != 0)
				continue;
			bool new_day = k == 0 || strcmp(t->out[k - 1].cls, cls) != 0 ||
			               t->out[k - 1].day != q->day;
			if (new_day)
				run = 0;
			if (new_day || strcmp(q->node, t->out[k - 1].node) != 0)
				run++;
			if (run > best)
				best = run, best_day = q->day;
		}
		cJSON *c = cJSON_AddObjectToObject(peak_day, cls);
		cJSON_AddNumberToObject(c, "nodes", (double)nodes);
		cJSON_AddNumberToObject(c, "added", (double)best);
		cJSON_AddNumberToObject(c, "share", nodes ? (double)best / (double)nodes : 0);
		char day[16] = "";
		if (best) {
			time_t tt = (time_t)(best_day * DAY);
			struct tm tm;
			gmtime_r(&tt, &tm);
			strftime(day, sizeof day, "%Y-%m-%d", &tm);
		}
		cJSON_AddStringToObject(c, "day", day);
		i = j;
	}
}

int ng_flow_shadow_summary(ng_store *st, int64_t since, const char *policy, cJSON **out,
                           ng_err *err)
{
	*out = NULL;
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return ng_fail(err, "out of memory");
	ng_store_shadow s;
	int r = ng_store_get_shadow(st, &s, err);
	if (r < 0) {
		cJSON_Delete(doc);
		return -1;
	}
	if (r == 1) {
		cJSON_AddStringToObject(doc, "policy", s.digest);
		cJSON_AddNumberToObject(doc, "set_at", (double)s.set_at);
		cJSON_AddStringToObject(doc, "set_by", s.set_by);
		cJSON_AddStringToObject(doc, "reason", s.reason);
		ng_strbuf_free(&s.body);
	} else {
		cJSON_AddNullToObject(doc, "policy");
	}
	cJSON_AddNumberToObject(doc, "since", (double)since);
	struct tally t = {.policy = policy,
	                  .evaluated = cJSON_AddObjectToObject(doc, "evaluated"),
	                  .would = cJSON_AddArrayToObject(doc, "would")};
	r = ng_store_shadow_outcomes(st, since, tally_row, &t, err);
	if (t.oom)
		r = ng_fail(err, "out of memory");
	if (r == 0)
		peak(&t, cJSON_AddObjectToObject(doc, "peak_day"));
	free(t.out);
	free(t.seen);
	if (r < 0) {
		cJSON_Delete(doc);
		return -1;
	}
	*out = doc;
	return 0;
}
