/* The admission queue's landing and the Prolog's question (flow/admit_queue.h). */
#include "flow/admit_queue.h"
#include <stdarg.h>
#include "flow/admit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/prolog_ask.h"
#include "parse/sacct.h"
#include "land/slurm_features.h"

int ng_flow_admit_queue(const ng_ctx *ctx, const char *node_id, const char *slurm_node,
                        const char *outcome, const char *why, ng_err *err)
{
	bool admitted = strcmp(outcome, "admitted") == 0 || strcmp(outcome, "admitted-warn") == 0;
	if (ctx->no_land) {
		ng_ctx_note(ctx, "admit", "queue: features left as they are (no landing)");
		return 0;
	}
	ng_slurm_opts o = {.node = slurm_node && *slurm_node ? slurm_node : NULL};
	ng_slurm_queue_result res;
	ng_err lerr = {0};
	int rc = ng_slurm_land_queue(&o, admitted, outcome, why, &res, &lerr);
	if (rc == 0)
		ng_ctx_note(ctx, "admit", "queue: %s", res.r.message);
	else
		ng_ctx_note(ctx, "admit", "queue: features not landed: %s", lerr.msg);
	if (!ctx->store)
		return rc < 0 ? 1 : 0;
	char *detail = ng_slurm_queue_json(&res);
	cJSON *d = detail ? cJSON_Parse(detail) : NULL;
	free(detail);
	if (d) {
		cJSON_AddStringToObject(d, "outcome", outcome);
		cJSON_AddStringToObject(d, "result", rc == 0 ? "done" : "failed");
		if (rc < 0)
			cJSON_AddStringToObject(d, "error", lerr.msg);
	}
	char *text = d ? cJSON_PrintUnformatted(d) : NULL;
	cJSON_Delete(d);
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", node_id);
	int arc = text ? ng_store_audit(ctx->store, false, ng_ctx_now(ctx), ctx->actor, "land.features",
	                                subject, text, err)
	               : ng_fail(err, "out of memory");
	cJSON_free(text);
	return arc < 0 ? -1 : rc < 0 ? 1 : 0;
}

struct unscreen {
	const ng_ctx *ctx;
	size_t failed;
};

static int unscreen_one(const char *name, size_t len, void *arg)
{
	(void)len;
	struct unscreen *u = arg;
	ng_err err = {0};
	u->failed += ng_flow_admit_queue(u->ctx, name, name, "unscreened",
	                                 "left service (down or drained): the admission queue "
	                                 "screens it before it takes jobs again",
	                                 &err) != 0;
	return 0;
}

int ng_flow_admit_unscreen(const ng_ctx *ctx, const char *list, size_t *failed)
{
	struct unscreen u = {.ctx = ctx};
	long n = ng_hostlist_expand(list, strlen(list), 100000, unscreen_one, &u);
	*failed = u.failed;
	return n < 0 ? -1 : 0;
}

int ng_flow_prolog_asks(const ng_ctx *ctx, const char *job_id, const char *slurm_node,
                        char *why, size_t len)
{
	if (!job_id || !*job_id || strspn(job_id, "0123456789_") != strlen(job_id)) {
		snprintf(why, len, "no job to read (SLURM_JOB_ID is \"%s\")", job_id ? job_id : "");
		return -1;
	}
	ng_slurm_opts o = {.node = slurm_node && *slurm_node ? slurm_node : NULL};
	ng_slurm_result r;
	char *text = NULL, fail[400] = "";
	ng_err err = {0};
	const char *args[] = {"show", "job", job_id, "-o"};
	int rc = ng_slurm_scontrol(&o, args, 4, &r, &text, fail, sizeof fail, &err);
	ng_prolog_job job;
	if (rc == 0 && ng_prolog_job_parse(text, &job) < 0) {
		snprintf(fail, sizeof fail, "scontrol show job %s: no JobId= in its answer", job_id);
		rc = 1;
	}
	free(text);
	if (rc != 0) {
		snprintf(why, len, "cannot read job %s: %s", job_id, rc > 0 ? fail : err.msg);
		return -1;
	}
	return ng_prolog_job_asks(&ctx->policy, &job, why, len) ? 1 : 0;
}

/* ---- from an admission run ----------------------------------------------------------- */

static void note_to_run(void *arg, const char *verb, const char *fmt, va_list ap)
{
	(void)verb;
	char buf[600];
	vsnprintf(buf, sizeof buf, fmt, ap);
	ng_admit_note(arg, "%s", buf);
}

int ng_admit_land_queue(ng_store *st, const ng_ctx *in, struct ng_admit_run *r,
                        const char *node, ng_err *err)
{
	ng_ctx ctx = *in;
	ctx.store = st;
	ctx.actor = r->actor;
	ctx.note = note_to_run;
	ctx.note_arg = r;
	/* The node's comment says why it stays out: the case, else the
	 * first of the run's notes. */
	char why[400] = "";
	const cJSON *first = cJSON_GetArrayItem(r->notes, 0);
	if (r->case_id)
		snprintf(why, sizeof why, "case %lld (nodegate quarantine show %lld)",
		         (long long)r->case_id, (long long)r->case_id);
	else if (cJSON_IsString(first))
		snprintf(why, sizeof why, "%s", first->valuestring);
	else
		snprintf(why, sizeof why, "run %s", r->run_id);
	return ng_flow_admit_queue(&ctx, r->node, node ? node : r->node_name[0] ? r->node_name : NULL,
	                           r->outcome, why, err);
}
