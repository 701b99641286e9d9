/* The quarantine cases as an operator reads them (flow/quarantine_cases.h). */
#include "flow/quarantine_cases.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/lemon.h"

static int store_failed(ng_err *err)
{
	if (err)
		err->code = NG_ERR_STORE;
	return -1;
}

const char *ng_case_state(const ng_case_view *v)
{
	if (!v->c.closed_at)
		return "open";
	return v->has_probation && !v->probation.ended_at ? "probation" : "closed";
}

ng_case_next_step ng_case_next(const ng_store_case *c, const ng_lemon_verdict *lemon,
                               long passes_needed, int64_t *more)
{
	*more = 0;
	if (c->closed_at)
		return NG_CASE_NEXT_NONE;
	/* A lemon is never released by its passes: only by force, after a repair. */
	if (lemon->lemon)
		return NG_CASE_NEXT_FORCE;
	if (c->passes >= passes_needed)
		return NG_CASE_NEXT_RELEASE;
	*more = passes_needed - c->passes;
	return NG_CASE_NEXT_MORE_PASSES;
}

void ng_case_list_release(ng_case_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		ng_store_case_free(&l->cases[i].c);
	free(l->cases);
	free(l->lemon_nodes);
	free(l->lemons);
	memset(l, 0, sizeof *l);
}

int ng_case_list_read(const ng_ctx *ctx, bool all, ng_case_list *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_store *st = ctx->store;
	ng_store_case *cs;
	size_t n;
	if (ng_store_list_cases(st, all, &cs, &n, err) < 0)
		return store_failed(err);
	out->cases = calloc(n ? n : 1, sizeof *out->cases);
	if (!out->cases) {
		for (size_t i = 0; i < n; i++)
			ng_store_case_free(&cs[i]);
		free(cs);
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		out->cases[i].c = cs[i]; /* the evidence is now out's */
	out->n = n;
	free(cs);
	if (ng_lemon_all(st, &ctx->policy, ng_ctx_now(ctx), &out->lemon_nodes, &out->lemons,
	                 &out->n_lemons, err) < 0) {
		ng_case_list_release(out);
		return store_failed(err);
	}
	for (size_t i = 0; i < n; i++) {
		ng_case_view *v = &out->cases[i];
		int r = ng_store_probation_of_case(st, v->c.id, &v->probation, err);
		if (r < 0) {
			ng_case_list_release(out);
			return store_failed(err);
		}
		v->has_probation = r == 1;
		for (size_t k = 0; k < out->n_lemons; k++)
			if (strcmp(out->lemon_nodes[k], v->c.node) == 0)
				v->lemon = &out->lemons[k];
	}
	return 0;
}

/* The node's open case, else its newest case, else (a number) the case
 * with that id. 1 found, 0 none, -1 error. */
static int find_case(ng_store *st, const char *arg, ng_store_case *out, ng_err *err)
{
	int r = ng_store_open_case_of(st, arg, out, err);
	if (r != 0)
		return r;
	ng_store_case *cs;
	size_t n;
	if (ng_store_list_cases(st, true, &cs, &n, err) < 0)
		return -1;
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		if (strcmp(cs[i].node, arg) == 0) {
			*out = cs[i];
			cs[i].evidence = NULL; /* now out's */
			r = 1;
		}
	}
	for (size_t i = 0; i < n; i++)
		ng_store_case_free(&cs[i]);
	free(cs);
	if (r)
		return 1;
	char *end;
	errno = 0;
	long long id = strtoll(arg, &end, 10);
	if (!*arg || *end || errno || id < 1)
		return 0;
	return ng_store_get_case(st, id, out, err);
}

/* The run the case's evidence names, or "". */
static const char *run_of(const ng_store_case *c, char *buf, size_t cap)
{
	cJSON *ev = c->evidence ? cJSON_Parse(c->evidence) : NULL;
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(ev, "run");
	snprintf(buf, cap, "%s", cJSON_IsString(run) ? run->valuestring : "");
	cJSON_Delete(ev);
	return buf;
}

int ng_case_find(const ng_ctx *ctx, const char *arg, ng_case_detail *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	ng_store *st = ctx->store;
	/* A bare number that names no node stays a case id. */
	ng_store_node_ref ref;
	int r = ng_store_resolve_node(st, arg, &ref, err);
	if (r < 0)
		return store_failed(err);
	if (r == 2) /* never guess between two nodes */
		return ng_fail_as(err, NG_ERR_USAGE, "\"%s\" names more than one node: %s; name one "
		                  "by its id", arg, ref.candidates);
	r = find_case(st, ref.id, &out->view.c, err);
	if (r <= 0)
		return r < 0 ? store_failed(err) : 0;
	ng_case_view *v = &out->view;
	char run[96];
	int p = ng_store_probation_of_case(st, v->c.id, &v->probation, err);
	if (p < 0 || ng_lemon_of(st, &ctx->policy, v->c.node, ng_ctx_now(ctx), &out->lemon, err) < 0 ||
	    ng_store_evidence_of_run(st, v->c.node, run_of(&v->c, run, sizeof run), &out->captured,
	                             err) < 0) {
		ng_case_detail_release(out);
		return store_failed(err);
	}
	v->has_probation = p == 1;
	v->lemon = &out->lemon;
	return 1;
}

void ng_case_detail_release(ng_case_detail *d)
{
	if (!d)
		return;
	ng_store_case_free(&d->view.c);
	cJSON_Delete(d->captured);
	d->captured = NULL;
}
