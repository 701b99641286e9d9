/* An admission run of one node (flow/admit.h): screen this node, or records
 * measured elsewhere, against its class baselines, confirm what was flagged
 * once, and land the outcome.
 *
 * The flow is the admission seed's: measure every domain; judge each metric
 * against its class baseline and floor; when anything is flagged, check that
 * the node is still exclusive and its environment unchanged, and re-run only
 * the flagged domains once; then admit, admit with a warning and a recheck
 * date, hold (nothing measured: fix the harness), or quarantine with a case
 * that names its evidence and its release condition. Everything it measured
 * and decided is in the store before it says so. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/identity.h"
#include "core/clock.h"
#include "core/json.h"
#include "flow/admit.h"
#include "flow/admit_queue.h"
#include "flow/evidence.h"
#include "flow/records_in.h"
#include "flow/shadow.h"
#include "land/hook.h"

const char *ng_admit_str(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void ng_admit_note(struct ng_admit_run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(r->notes, cJSON_CreateString(buf));
}

/* Every record of a run must be of one node, one class and one software
 * identity: a run is one node's, judged against one class. */
static int identify(struct ng_admit_run *r, const cJSON *records, const char *what, ng_err *err)
{
	const cJSON *rec;
	int i = 0;
	cJSON_ArrayForEach(rec, records)
	{
		const char *node = ng_admit_str(rec, "node"), *cls = ng_admit_str(rec, "class");
		const char *sw = ng_admit_str(rec, "software");
		if (!cJSON_IsObject(rec))
			return ng_fail(err, "%s record %d is not a JSON object", what, i);
		const char *metric = ng_admit_str(rec, "metric");
		if (!metric || !metric[0])
			return ng_fail(err, "%s record %d has no metric", what, i);
		if (!node || !cls || !node[0] || !cls[0])
			return ng_fail(err,
			               "%s record %d has no %s: records from `nodegate probe` and `run` carry "
			               "node and class (or the class template cannot describe this node: see "
			               "`nodegate identity`)",
			               what, i, node ? "class" : "node");
		const char *name = ng_admit_str(rec, "node_name");
		if (name && !r->node_name[0])
			ng_copy(r->node_name, sizeof r->node_name, name);
		if (!r->node[0]) {
			ng_copy(r->node, sizeof r->node, node);
			ng_copy(r->class_key, sizeof r->class_key, cls);
			ng_copy(r->software, sizeof r->software, sw ? sw : "");
		} else if (strcmp(r->node, node) != 0 || strcmp(r->class_key, cls) != 0 ||
		           strcmp(r->software, sw ? sw : "") != 0) {
			return ng_fail(err,
			               "%s record %d is of %s (%s, %s), not %s (%s, %s): one run is one "
			               "node's, of one class and software identity",
			               what, i, node, cls, sw ? sw : "no software identity", r->node,
			               r->class_key, r->software[0] ? r->software : "no software identity");
		}
		i++;
	}
	if (i == 0)
		return ng_fail(err, "%s: no records", what);
	return 0;
}

/* Exclusivity and environment parity, checked before re-running anything:
 * a confirmation under different conditions confirms nothing. */
static bool ready_to_confirm(const ng_ctx *ctx, struct ng_admit_run *r)
{
	long others = ng_admit_other_runnable();
	if (others < 0) {
		ng_admit_note(r, "not confirmed: cannot read /proc/stat to check the node is exclusive");
		return false;
	}
	if (others > ctx->policy.exclusive_max_runnable) {
		ng_admit_note(r,
		              "not confirmed: the node is not exclusive (%ld other runnable tasks, "
		              "admission.exclusive_max_runnable is %ld): drain it and screen again",
		              others, ctx->policy.exclusive_max_runnable);
		return false;
	}
	/* The first run's records stamped again, as they were then (their
	 * tools' versions are part of the software identity), so the same node
	 * in the same state gives the same class and software identity. */
	ng_err err = {0};
	cJSON *probe = cJSON_CreateArray();
	static const char *const stamped[] = {"node", "class", "software", "profile"};
	for (size_t i = 0; probe && i < r->n; i++) {
		if (strcmp(r->j[i].stage, "first") != 0)
			continue;
		cJSON *copy = cJSON_Duplicate(r->j[i].rec, true);
		for (size_t k = 0; copy && k < sizeof stamped / sizeof stamped[0]; k++)
			cJSON_DeleteItemFromObjectCaseSensitive(copy, stamped[k]);
		cJSON_AddItemToArray(probe, copy);
	}
	bool same = false;
	if (ng_identity_stamp(probe, &ctx->policy, NULL, &err) == 0) {
		const cJSON *first = cJSON_GetArrayItem(probe, 0);
		const char *cls = ng_admit_str(first, "class"), *sw = ng_admit_str(first, "software");
		same = cls && sw && strcmp(cls, r->class_key) == 0 && strcmp(sw, r->software) == 0;
		if (!same)
			ng_admit_note(r,
			              "not confirmed: the environment changed since the first run (class %s, "
			              "software %s; was %s, %s)",
			              cls ? cls : "?", sw ? sw : "?", r->class_key, r->software);
	} else {
		ng_admit_note(r, "not confirmed: cannot read the node's identity again: %s", err.msg);
	}
	cJSON_Delete(probe);
	return same;
}

/* Live: re-runs the flagged domains once. Returns the records, or NULL when
 * the confirmation could not be run (a note says why). */
static cJSON *confirm_live(const ng_ctx *ctx, const struct ng_admit_request *q,
                           struct ng_admit_run *r)
{
	if (!ready_to_confirm(ctx, r))
		return NULL;
	cJSON *missing = NULL;
	cJSON *recs = ng_admit_collect(ctx, &q->profile, r->d.confirm, r->d.n_confirm, &missing);
	const cJSON *m;
	cJSON_ArrayForEach(m, missing)
	{
		ng_admit_note(r,
		              "cannot re-run %s here: run its harness again under the same conditions "
		              "and judge both runs with --from and --confirm-from",
		              m->valuestring);
	}
	bool short_of = cJSON_GetArraySize(missing) > 0;
	cJSON_Delete(missing);
	if (short_of) {
		cJSON_Delete(recs);
		return NULL;
	}
	return recs;
}

/* ---- the run --------------------------------------------------------------------------- */

int ng_admit_exit_status(const struct ng_admit_run *r)
{
	return r->outcome && (strcmp(r->outcome, "admitted") == 0 ||
	                      strcmp(r->outcome, "admitted-warn") == 0)
	               ? 0
	               : 1;
}

/* A stage's records: from memory (checked as files are, and copied, so the
 * run owns what it judged), read from files, or NULL with neither. */
static cJSON *stage_records(const cJSON *mem, const char *const *files, size_t n, ng_err *err)
{
	if (mem) {
		if (ng_records_check(mem, "record", err) < 0)
			return NULL;
		cJSON *copy = cJSON_IsArray(mem) ? cJSON_Duplicate(mem, true) : cJSON_CreateArray();
		if (copy && !cJSON_IsArray(mem))
			cJSON_AddItemToArray(copy, cJSON_Duplicate(mem, true));
		if (!copy || (!cJSON_IsArray(mem) && !copy->child))
			ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
		return copy;
	}
	return n ? ng_records_load_files(files, n, err) : NULL;
}

static int input_failed(ng_err *err)
{
	err->code = NG_ERR_INPUT;
	return -1;
}

static int store_failed(ng_err *err)
{
	if (err->code == NG_ERR_UNCLASSIFIED)
		err->code = NG_ERR_STORE;
	return -1;
}

/* Tells ctx->on_verdict of the decision, now in the store; a failure is a
 * note, and the decision stands. */
static void tell_hook(const ng_ctx *ctx, struct ng_admit_run *r)
{
	if (ctx->no_land || !ctx->on_verdict || !*ctx->on_verdict)
		return;
	cJSON *verdict = ng_admit_json(r);
	char *json = verdict ? cJSON_PrintUnformatted(verdict) : NULL;
	char note[512];
	int rc = ng_land_hook_run(ctx->on_verdict, json ? json : "{}", NG_HOOK_TIMEOUT_S, note,
	                          sizeof note);
	cJSON_free(json);
	cJSON_Delete(verdict);
	if (rc != 0)
		ng_admit_note(r, "%s", note);
}

int ng_admit_run_flow(const ng_ctx *ctx, const struct ng_admit_request *q,
                      struct ng_admit_run *r, ng_err *err)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*r = (struct ng_admit_run){.now = ng_ctx_now(ctx), .actor = ctx->actor ? ctx->actor : ng_actor(),
	                           .started = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
	                           .notes = cJSON_CreateArray()};
	*err = (ng_err){0};
	ng_store *st = ctx->store;
	if (!r->notes)
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	if (!st)
		return ng_fail_as(err, NG_ERR_USAGE, "an admission run needs a store");
	bool given = q->records || q->n_from;
	cJSON *first;
	if (given) {
		first = stage_records(q->records, q->from, q->n_from, err);
	} else {
		cJSON *missing = NULL;
		first = ng_admit_collect(ctx, &q->profile, NULL, 0, &missing);
		cJSON_Delete(missing);
		if (!first)
			ng_fail(err, "out of memory");
	}
	r->records[0] = first;
	const char *what = q->n_from ? "--from" : given ? "the given" : "this node's";
	if (!first || identify(r, first, what, err) < 0)
		return input_failed(err);
	/* Records from elsewhere may not say what the scheduler calls the node:
	 * the store may know it from an earlier run. */
	if (!r->node_name[0] && ng_store_node_name_of(st, r->node, r->node_name, sizeof r->node_name,
	                                              err) < 0)
		return store_failed(err);
	ng_run_id(r->run_id, r->node, r->now);
	if (ng_admit_judge_stage(st, ctx, r, first, "first", err) < 0)
		return store_failed(err);
	if (ng_admit_decide_run(r, &ctx->policy) < 0)
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");

	if (r->d.outcome == NG_ADMIT_SUSPECT) {
		/* The flagged domains' evidence, before the confirmation changes it. */
		if (ng_evidence_capture(st,
		                        &(ng_evidence_capture_in){.node = r->node, .run_id = r->run_id,
		                                                  .domains = r->d.confirm,
		                                                  .n_domains = r->d.n_confirm,
		                                                  .records = first, .now = r->now,
		                                                  .deadline_s = (double)ctx->policy
		                                                                    .health_deadline_seconds},
		                        err) < 0)
			return store_failed(err);
		cJSON *confirm = NULL;
		bool confirm_given = q->confirm_records || q->n_confirm_from;
		if (confirm_given) {
			confirm = stage_records(q->confirm_records, q->confirm_from, q->n_confirm_from, err);
			struct ng_admit_run probe = {.notes = NULL};
			ng_copy(probe.node, sizeof probe.node, r->node);
			ng_copy(probe.class_key, sizeof probe.class_key, r->class_key);
			ng_copy(probe.software, sizeof probe.software, r->software);
			if (!confirm || identify(&probe, confirm, q->n_confirm_from ? "--confirm-from"
			                                                            : "the confirmation's",
			                         err) < 0) {
				cJSON_Delete(confirm);
				return input_failed(err);
			}
			ng_admit_note(r, "confirmation from --confirm-from: exclusivity was the harness's "
			                 "to ensure; node, class and software identity match");
		} else if (q->remeasure) {
			confirm = q->remeasure(q->remeasure_arg, r->d.confirm, r->d.n_confirm);
		} else if (!given) {
			confirm = confirm_live(ctx, q, r);
		}
		r->records[1] = confirm;
		if (confirm && ng_admit_judge_stage(st, ctx, r, confirm, "confirm", err) < 0)
			return store_failed(err);
		if (confirm && ng_admit_decide_run(r, &ctx->policy) < 0)
			return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
		if (!confirm && (!given || q->remeasure)) {
			/* It was flagged and could not be confirmed: not a pass, not proof. */
			r->d.outcome = NG_ADMIT_HELD;
		}
	}
	if (ng_admit_land(st, ctx, r, err) < 0 || ng_admit_store_decision(st, r, err) < 0)
		return store_failed(err);
	if (ng_shadow_admission(st, &(ng_shadow_admit){r->node, r->class_key, r->run_id, r->now,
	                        r->first, r->confirm, r->n_first, r->n_confirm, r->outcome}, err) < 0)
		ng_admit_note(r, "shadow policy: %s (the enforcing outcome stands)", err->msg);
	if (q->land_slurm && ng_admit_land_slurm(st, ctx, r, q->land_node, err) < 0)
		return store_failed(err);
	if (q->queue && ng_admit_land_queue(st, ctx, r, q->land_node, err) < 0)
		return store_failed(err);
	tell_hook(ctx, r);
	return 0;
}

void ng_admit_run_release(struct ng_admit_run *r)
{
	if (!r)
		return;
	cJSON_Delete(r->records[0]);
	cJSON_Delete(r->records[1]);
	cJSON_Delete(r->notes);
	cJSON_Delete(r->withdrawn);
	for (size_t i = 0; i < r->n; i++)
		free(r->j[i].cohort);
	free(r->j);
	free(r->first);
	free(r->confirm);
	free(r->first_idx);
	free(r->confirm_idx);
	*r = (struct ng_admit_run){0};
}
