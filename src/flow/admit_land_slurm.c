/* Landing an admission outcome on Slurm (`admit --land slurm`): a
 * quarantined node drained with its case's reason, and the nodes of the
 * cases the run withdrew resumed from those drains alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/admit.h"
#include "flow/release.h"
#include "land/slurm.h"

struct hook_check {
	ng_store *st;
	const char *node;
};

/* Slurm's Epilog/Prolog error drain is nodegate's when the store's newest
 * GPU check of the node was that hook, and it exited 1 just before. */
static bool hook_drain_ours(const char *reason, long long stamp, void *arg)
{
	const struct hook_check *h = arg;
	ng_store_gpu_check last;
	ng_err err;
	if (ng_store_last_gpu_check(h->st, h->node, &last, &err) != 1)
		return false;
	return ng_slurm_hook_drain_is_ours(reason, stamp, last.mode, last.drain, last.at);
}

/* Resumes the nodes of the cases this run withdrew, each from that case's
 * drain alone. */
static void resume_withdrawn(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r)
{
	const cJSON *w;
	cJSON_ArrayForEach(w, r->withdrawn) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(w, "case");
		ng_store_case c = {0};
		ng_err err;
		if (!cJSON_IsNumber(id) || ng_store_get_case(st, (int64_t)id->valuedouble, &c, &err) != 1)
			continue;
		if (!c.node_name[0]) {
			ng_admit_note(r, "slurm: case %lld's node %s has no scheduler name in the store: "
			                 "not resumed (`scontrol update nodename=... state=resume` if it is "
			                 "drained)",
			              (long long)c.id, c.node);
		} else {
			bool unaudited = false;
			cJSON *d = ng_release_resume_slurm(ctx, &c, c.node_name, r->actor, r->now, &unaudited);
			const char *res = ng_admit_str(d, "result");
			ng_admit_note(r, "slurm: %s resumed from withdrawn case %lld: %s", c.node_name,
			              (long long)c.id, res ? res : "failed");
			cJSON_Delete(d);
		}
		ng_store_case_free(&c);
	}
}

int ng_admit_land_slurm(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                        const char *node, ng_err *err)
{
	if (!ctx->no_land)
		resume_withdrawn(st, ctx, r);
	if (ctx->no_land || strcmp(r->outcome, "quarantined") != 0 || !r->case_id)
		return 0;
	ng_store_case c = {0};
	int has = ng_store_open_case_of(st, r->node, &c, err);
	if (has < 0)
		return -1;
	if (has == 0) {
		ng_admit_note(r, "slurm: no open case to land");
		return 0;
	}
	/* "ng:quarantine memory hostmem.bw case N: 61.2 GB/s, 48% of median
	 * (bar 80) [nodegate]": what failed first (sinfo -R shows 20
	 * characters), how badly, and the case to read. */
	char how[160] = "";
	const struct ng_admit_judged *j = ng_admit_latest_of(r, c.metric);
	if (j && isfinite(j->res.value)) {
		int n = snprintf(how, sizeof how, " %.4g %s", j->res.value, j->unit ? j->unit : "");
		if (n > 0 && isfinite(j->line.flag.percent))
			snprintf(how + n, sizeof how - (size_t)n, ", %.0f%% of median (bar %.4g)",
			         j->line.flag.percent, j->line.flag.bar);
	}
	char reason[NG_SLURM_REASON_MAX * 2];
	snprintf(reason, sizeof reason, "ng:quarantine %s %s case %lld:%s", c.domain, c.metric,
	         (long long)c.id, how);
	ng_store_case_free(&c);
	/* Slurm knows the node by its scheduler name; the stable id is the
	 * store's key and names no Slurm node. */
	struct hook_check hc = {st, r->node};
	ng_slurm_opts o = {.node = node ? node : r->node_name, .hook_drain_ours = hook_drain_ours,
	                   .hook_arg = &hc};
	ng_slurm_result res;
	memset(&res, 0, sizeof res);
	ng_err lerr = {0};
	int rc = -1;
	if (o.node && *o.node)
		rc = ng_slurm_drain(&o, reason, &res, &lerr);
	else
		ng_fail(&lerr, "the records and the store give no scheduler name for node %s (only its "
		               "stable id): name it with --node",
		        r->node);
	if (rc == 0)
		ng_admit_note(r, "slurm: %s", res.message);
	else if (rc == 1)
		ng_admit_note(r, "slurm: not drained: %s", res.message);
	else
		ng_admit_note(r, "slurm: drain not landed: %s", lerr.msg);
	/* What landing did, in the audit log, whatever it was. */
	char *detail = ng_slurm_result_json(&res, "drain");
	cJSON *d = detail ? cJSON_Parse(detail) : NULL;
	free(detail);
	if (d) {
		cJSON_AddNumberToObject(d, "case", (double)r->case_id);
		cJSON_AddStringToObject(d, "result", rc == 0 ? "done" : rc == 1 ? "left-alone" : "failed");
		if (rc < 0)
			cJSON_AddStringToObject(d, "error", lerr.msg);
	}
	char *text = d ? cJSON_PrintUnformatted(d) : NULL;
	cJSON_Delete(d);
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", r->node);
	int arc = text ? ng_store_audit(st, false, r->now, r->actor, "land.drain", subject, text, err)
	               : ng_fail(err, "out of memory");
	cJSON_free(text);
	return arc < 0 ? -1 : 0;
}
