/* What the check says: the drain reason, landing, the exit status and the
 * result as JSON (cli/gpu_check_print.c prints it). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/gpu_check_run.h"
#include "core/json.h"

/* ---- landing ------------------------------------------------------------------------ */

/* Where a drain lands, as the result's "drain_by". epilog and prolog drain
 * through their exit status: Slurm drains the node when Epilog or Prolog
 * exits non-zero. `health` runs as HealthCheckProgram, whose exit status
 * Slurm only logs: without --land slurm it prints the reason and exits 1 for
 * whoever runs it; with it, the drain goes through scontrol (src/land/). */
static const char *land(const struct ng_gpu_check_result *c)
{
	if (!c->drain)
		return "none";
	if (c->landed && c->mode == NG_CHECK_HEALTH)
		return c->land_rc == 0 ? "scontrol" : c->land_rc == 1 ? "scontrol (left alone)"
		                                                      : "scontrol (failed)";
	if (c->landed)
		return "exit status (Slurm drains the node); scontrol set the reason first";
	if (c->mode == NG_CHECK_HEALTH)
		return "reported (the caller drains; --land slurm drains through scontrol)";
	return "exit status (Slurm drains the node)";
}

/* --land slurm: drains the node through scontrol with the specific reason.
 * health needs it (HealthCheckProgram's exit status only logs); epilog and
 * prolog still exit non-zero (Slurm drains with "Epilog error" or "Prolog
 * error"), and set nodegate's reason first so the operator sees why. The
 * hooks run under Slurm's own timeout: their landing gets a shorter budget,
 * and ends by the check's deadline whatever the budget says (the drain
 * itself is the exit status, which a landing cut short does not change).
 * An operator's drain is never overwritten (land/slurm.h). */
/* Slurm's own drain after the previous check here exited 1 is ours. */
static bool hook_drain_ours(const char *reason, long long stamp, void *arg)
{
	const struct ng_gpu_check_result *c = arg;
	return ng_slurm_hook_drain_is_ours(reason, stamp, c->last_mode, c->last_drain, c->last_at);
}

void ng_check_land_slurm(struct ng_gpu_check_result *c)
{
	if (!c->drain || !c->land_slurm || c->ctx.no_land)
		return;
	ng_slurm_opts o = {.slurm_conf = c->slurm_conf, .node = c->node_name,
	                   .hook_drain_ours = hook_drain_ours, .hook_arg = c};
	if (c->mode != NG_CHECK_HEALTH) {
		o.call_timeout_s = 5;
		o.budget_s = 10;
		o.readback_s = 3;
		/* ... and all of it within the check's deadline. */
		o.deadline = c->t_end;
	}
	ng_err err = {0};
	c->land_rc = ng_slurm_drain(&o, c->why, &c->slurm, &err);
	c->landed = true;
	if (c->land_rc < 0)
		snprintf(c->land_error, sizeof c->land_error, "%s", err.msg);
}

static cJSON *landing_json(const struct ng_gpu_check_result *c)
{
	cJSON *o = cJSON_CreateObject();
	const ng_slurm_result *r = &c->slurm;
	cJSON_AddStringToObject(o, "to", "slurm");
	cJSON_AddStringToObject(o, "result", c->land_rc == 0   ? "done"
	                                     : c->land_rc == 1 ? "left-alone"
	                                                       : "failed");
	cJSON_AddStringToObject(o, "node", r->node);
	cJSON_AddStringToObject(o, "reason", r->reason);
	cJSON_AddStringToObject(o, "state_before", r->state_before);
	cJSON_AddStringToObject(o, "reason_before", r->reason_before);
	cJSON_AddStringToObject(o, "state_after", r->state_after);
	cJSON_AddStringToObject(o, "reason_after", r->reason_after);
	cJSON_AddBoolToObject(o, "changed", r->changed);
	cJSON_AddBoolToObject(o, "left_alone", r->left_alone);
	cJSON_AddBoolToObject(o, "hook_drain", r->hook_drain);
	cJSON_AddNumberToObject(o, "calls", r->calls);
	cJSON_AddStringToObject(o, "message", c->land_rc < 0 && c->land_error[0] ? c->land_error
	                                                                          : r->message);
	return o;
}

/* ---- the result ------------------------------------------------------------------------ */

static const ng_gpu_state *state_of(const struct ng_gpu_check_result *c, size_t i)
{
	return i < c->snap->n_gpus ? &c->snap->gpu[i] : NULL;
}

/* The drain reason: the worst GPU's worst reason, and how many GPUs more. */
/* What failed, in a word: "ecc", "pcie", "xid79", "remapped_rows" (a rate's
 * counter), from a rule's signal ("ecc.volatile_uncorrected", "xid.79"). */
static void short_signal(const char *signal, char *out, size_t cap)
{
	const char *s = signal;
	if (strncmp(s, "rate.", 5) == 0)
		s += 5;
	size_t n = strcspn(s, ".");
	if (strncmp(s, "xid.", 4) == 0 && s[4])
		snprintf(out, cap, "xid%.*s", (int)strcspn(s + 4, "."), s + 4);
	else
		snprintf(out, cap, "%.*s", (int)n, s);
}

void ng_check_drain_reason(struct ng_gpu_check_result *c)
{
	const ng_node_health *h = c->health;
	const ng_gpu_verdict *worst = NULL;
	size_t n_bad = 0;
	for (size_t i = 0; i < h->n_gpus; i++) {
		const ng_gpu_verdict *v = &h->gpu[i];
		if (v->severity != NG_HEALTH_DEGRADED && v->severity != NG_HEALTH_FATAL)
			continue;
		n_bad++;
		if (!worst || (v->severity == NG_HEALTH_FATAL && worst->severity != NG_HEALTH_FATAL))
			worst = v;
	}
	if (!worst) {
		ng_slurm_sanitize_reason(ng_health_name(h->severity), c->why);
		return;
	}
	const ng_health_reason *r = NULL;
	for (size_t k = 0; k < worst->n_reasons; k++)
		if (worst->reason[k].severity == worst->severity) {
			r = &worst->reason[k];
			break;
		}
	char more[48] = "";
	if (n_bad > 1)
		snprintf(more, sizeof more, " (and %zu more GPU%s)", n_bad - 1, n_bad > 2 ? "s" : "");
	/* sinfo -R shows 20 characters: severity, what failed and the GPU come
	 * first ("ng:fatal ecc GPU0 0000:ba:00: ecc.volatile_uncorrected: ..."). */
	char what[24];
	short_signal(r && r->signal ? r->signal : "", what, sizeof what);
	char text[NG_SLURM_REASON_MAX * 2];
	snprintf(text, sizeof text, "%s %s%sGPU%d %s: %s%s%s%s", ng_health_name(worst->severity), what,
	         what[0] ? " " : "", worst->index, worst->bus, r && r->signal ? r->signal : "",
	         r && r->signal ? ": " : "", r ? r->text : "", more);
	ng_slurm_sanitize_reason(text, c->why);
}

cJSON *ng_check_gpu_json(const struct ng_gpu_check_result *c, size_t i)
{
	const ng_gpu_verdict *v = &c->health->gpu[i];
	const ng_gpu_state *g = state_of(c, i);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", v->index);
	cJSON_AddStringToObject(o, "uuid", v->uuid);
	cJSON_AddStringToObject(o, "bus", v->bus);
	if (g)
		cJSON_AddStringToObject(o, "name", g->name);
	cJSON_AddStringToObject(o, "severity", ng_health_name(v->severity));
	cJSON *rs = cJSON_AddArrayToObject(o, "reasons");
	for (size_t k = 0; k < v->n_reasons; k++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "severity", ng_health_name(v->reason[k].severity));
		cJSON_AddStringToObject(r, "signal", v->reason[k].signal ? v->reason[k].signal : "");
		cJSON_AddStringToObject(r, "text", v->reason[k].text);
		cJSON_AddItemToArray(rs, r);
	}
	if (v->reasons_truncated)
		cJSON_AddBoolToObject(o, "reasons_truncated", true);
	if (g && g->n_xid) {
		cJSON *xs = cJSON_AddArrayToObject(o, "xids");
		for (size_t k = 0; k < g->n_xid; k++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "code", g->xid[k].code);
			cJSON_AddStringToObject(x, "message", g->xid[k].message);
			cJSON_AddItemToArray(xs, x);
		}
	}
	return o;
}

int ng_check_exit_status(const struct ng_gpu_check_result *c)
{
	return c->drain ? 1 : 0; /* 1: Slurm drains the node (an Epilog or Prolog that fails) */
}

cJSON *ng_check_result_json(const struct ng_gpu_check_result *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "schema", "nodegate/gpu-check/1");
	cJSON_AddStringToObject(o, "mode", ng_check_mode_name(c->mode));
	cJSON_AddStringToObject(o, "severity", c->outcome);
	cJSON_AddBoolToObject(o, "drain", c->drain);
	cJSON_AddStringToObject(o, "drain_by", land(c));
	if (c->landed)
		cJSON_AddItemToObject(o, "landing", landing_json(c));
	cJSON_AddNumberToObject(o, "exit", ng_check_exit_status(c));
	cJSON_AddStringToObject(o, "reason", c->why);
	cJSON_AddStringToObject(o, "gpus_from", c->gpus_from);
	cJSON_AddNumberToObject(o, "checked", c->health ? (double)c->health->n_gpus : 0);
	cJSON_AddNumberToObject(o, "deadline_seconds", c->deadline_s);
	cJSON_AddBoolToObject(o, "timed_out", c->timed_out);
	if (c->snap && c->snap->source[0])
		cJSON_AddStringToObject(o, "source", c->snap->source);
	if (c->snap && c->snap->driver[0])
		cJSON_AddStringToObject(o, "driver", c->snap->driver);
	cJSON_AddNumberToObject(o, "xids_read", (double)c->n_xid);
	cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
	for (size_t i = 0; c->health && i < c->health->n_gpus; i++)
		cJSON_AddItemToArray(gs, ng_check_gpu_json(c, i));
	cJSON_AddItemReferenceToObject(o, "notes", c->notes);
	return o;
}

char *ng_gpu_check_busy_json(const char *lock_path)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "mode", "health");
	cJSON_AddStringToObject(o, "severity", "n/a");
	cJSON_AddBoolToObject(o, "drain", false);
	cJSON_AddNumberToObject(o, "exit", 0);
	cJSON_AddStringToObject(o, "reason", NG_GPU_CHECK_BUSY);
	cJSON_AddStringToObject(o, "lock", lock_path);
	char *text = o ? cJSON_Print(o) : NULL;
	cJSON_Delete(o);
	return text;
}
