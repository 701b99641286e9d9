/* Releasing a quarantined node to probation: the rule a front end applies
 * when an operator asks for it (`nodegate release`).
 *
 * A case closes when the failed test has passed again policy
 * release_passes times since it opened, or by an administrator's named
 * decision (manual); a lemon is never released unless forced. Closing puts
 * the node on probation in one audited transaction; then, when asked and
 * the context lands, Slurm resumes the node (only from this case's drain,
 * audited as land.resume) or Kubernetes marks it on probation. */
#ifndef NODEGATE_FLOW_RELEASE_H
#define NODEGATE_FLOW_RELEASE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "flow/ctx.h"
#include "judge/lemon.h"
#include "store/store.h"

typedef enum {
	NG_RELEASE_LAND_NONE,
	NG_RELEASE_LAND_SLURM, /* resume through scontrol, only this case's drain */
	NG_RELEASE_LAND_KUBE,  /* taint nodegate.io/probation, lift nodegate's own cordon */
} ng_release_land;

typedef struct {
	const char *node;     /* NODE as given: the stable id or the scheduler name */
	const char *by;       /* who releases; NULL: ctx->actor, else the system's user */
	const char *reason;   /* why, kept with the case; required for manual and force */
	bool manual;          /* without the passing runs */
	bool force;           /* a lemon too */
	ng_release_land land; /* nothing lands when ctx->no_land */
	const char *land_node; /* the scheduler's name; NULL: the case's, else node */
	FILE *land_log;       /* kube: one line per kubectl step; NULL: stdout */
} ng_release_request;

typedef enum {
	NG_RELEASED,        /* the case is closed and the node on probation */
	NG_RELEASE_NO_CASE, /* the node has no open case */
	NG_RELEASE_NOT_YET, /* the condition does not hold: too few passing runs */
	NG_RELEASE_LEMON,   /* a lemon, and not forced */
} ng_release_state;

typedef struct {
	ng_release_state state;
	char node[128];         /* the stable id NODE named */
	long passes_needed;     /* the policy's release_passes */
	ng_store_case opened;   /* the case as it was (all but NO_CASE) */
	ng_store_case closed;   /* RELEASED and audited: the case as it is now */
	bool have_closed;
	ng_lemon_verdict lemon; /* LEMON and RELEASED */
	cJSON *landing;         /* slurm: what the resume did (ng_slurm_result_json, "case",
	                           "result": done, left-alone or failed), or NULL */
	bool landing_unaudited; /* the resume's audit entry could not be written */
} ng_release_result;

/* Releases req->node's open case in ctx (its store, policy, clock, note
 * sink, no_land). 0 with *out in every state above; -1 with err:
 * NG_ERR_USAGE when NODE names two nodes or manual/force lack by and
 * reason, NG_ERR_STORE when the store failed. A landing that fails leaves
 * the case closed: it is a note, and out->landing says so. Release *out
 * with ng_release_result_release. */
int ng_release(const ng_ctx *ctx, const ng_release_request *req, ng_release_result *out,
               ng_err *err);
void ng_release_result_release(ng_release_result *r);

/* Slurm: resumes node (the scheduler's name) from case c's drain alone
 * (land/slurm.h never resumes an operator's), after the case closed, by
 * whichever way it closed. Whatever happens is audited (land.resume) and
 * returned: the resume's result with "case" and "result" (done, left-alone,
 * failed); *unaudited when the audit entry could not be written. */
cJSON *ng_release_resume_slurm(const ng_ctx *ctx, const ng_store_case *c, const char *node,
                               const char *by, int64_t now, bool *unaudited);

/* A release as `nodegate release --json` prints it: node, node_name, case,
 * manual, passes of passes_needed, retries, closed at, by and why, state
 * "probation", the canary job of ctx's policy, forced_lemon, and the
 * landing when Slurm was asked. r->state is NG_RELEASED. */
cJSON *ng_release_result_json(const ng_ctx *ctx, const ng_release_result *r, bool manual);

#endif
