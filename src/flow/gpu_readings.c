/* What a GPU check judged from, written and read back (flow/gpu_readings.h). */
#include "flow/gpu_readings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

const char *ng_gpu_check_outcome(const ng_node_health *h, ng_gpu_readings_run run)
{
	if (!run.judged)
		return run.timed_out ? "unknown" : "n/a";
	if (h->n_gpus == 0)
		return "n/a";
	/* NVML did not answer and the kernel's evidence found nothing to drain
	 * for: what it would have been without that evidence. */
	if (!h->drain && !run.nvml_answered && !run.from_dump)
		return run.timed_out ? "unknown" : "n/a";
	return ng_health_name(h->severity);
}

/* Fields of the snapshot no rule reads: left out, unless the read failed
 * (a GPU every one of whose reads failed is unresponsive, and the rules
 * count every field for that). */
static const char *const unread_by_rules[] = {
	"name", "temperature_c", "power_mw", "minor", "power_limit_mw", "power_default_limit_mw",
	"app_sm_clock_mhz", "ecc_aggregate_uncorrected", "ecc_aggregate_corrected",
};

/* The rules quote at most this much of an Xid line (judge/gpu_health.c). */
#define XID_TEXT_KEPT 80

/* A GPU's NVLinks as runs of equal links ({"n": 18, "link": {...}}): a
 * healthy board's 18 links are one run, a tenth of the text. */
static void links_to_runs(cJSON *g)
{
	cJSON *links = cJSON_DetachItemFromObject(g, "nvlink");
	if (!links)
		return;
	cJSON *runs = cJSON_AddArrayToObject(g, "nvlink_runs"), *l, *last = NULL, *n = NULL;
	while ((l = cJSON_DetachItemViaPointer(links, links->child)) != NULL) {
		if (last && cJSON_Compare(cJSON_GetObjectItem(last, "link"), l, true)) {
			n->valuedouble += 1; /* cJSON_SetNumberValue, without its call */
			n->valueint = (int)n->valuedouble;
			cJSON_Delete(l);
			continue;
		}
		last = cJSON_CreateObject();
		n = cJSON_AddNumberToObject(last, "n", 1);
		cJSON_AddItemToObject(last, "link", l); /* moved, not copied */
		cJSON_AddItemToArray(runs, last);
	}
	cJSON_Delete(links);
}

/* Each run's link once, as the snapshot reader takes a GPU's links, and
 * how many links each stands for (runs[k]; *n_runs of them): the reader
 * reads a run's link once, and expand_links copies it after. */
static int runs_to_links(cJSON *g, unsigned char *runs, size_t *n_runs, ng_err *err)
{
	*n_runs = 0;
	cJSON *rl = cJSON_DetachItemFromObject(g, "nvlink_runs");
	if (!rl)
		return 0;
	cJSON *links = cJSON_AddArrayToObject(g, "nvlink"), *r;
	int total = 0;
	cJSON_ArrayForEach(r, rl)
	{
		const cJSON *n = cJSON_GetObjectItem(r, "n");
		cJSON *link = cJSON_DetachItemFromObject(r, "link");
		if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > NG_NVLINK_MAX ||
		    !cJSON_IsObject(link) || (total += (int)n->valuedouble) > NG_NVLINK_MAX) {
			cJSON_Delete(link);
			cJSON_Delete(rl);
			return ng_fail_as(err, NG_ERR_INPUT, "readings: nvlink_runs: more than %d links, "
			                  "or a run that is not {n, link}", NG_NVLINK_MAX);
		}
		runs[(*n_runs)++] = (unsigned char)n->valuedouble;
		cJSON_AddItemToArray(links, link);
	}
	cJSON_Delete(rl);
	return 0;
}

/* A GPU's links, one per run as read, back to one per link. */
static void expand_links(ng_gpu_state *g, const unsigned char *runs, size_t n_runs)
{
	if (!n_runs || g->n_links != n_runs)
		return;
	size_t total = 0;
	for (size_t k = 0; k < n_runs; k++)
		total += runs[k];
	/* from the last run back, so no run is overwritten before it is copied */
	size_t to = total;
	for (size_t k = n_runs; k-- > 0;)
		for (unsigned i = 0; i < runs[k]; i++)
			g->link[--to] = g->link[k];
	g->n_links = total;
}

static void strip_gpu(cJSON *g, bool xid_text)
{
	links_to_runs(g);
	for (size_t i = 0; i < sizeof unread_by_rules / sizeof *unread_by_rules; i++) {
		cJSON *f = cJSON_GetObjectItem(g, unread_by_rules[i]);
		const char *state = cJSON_GetStringValue(cJSON_GetObjectItem(f, "state"));
		bool failed = cJSON_GetObjectItem(f, "failed") || (state && strcmp(state, "failed") == 0);
		if (f && !failed)
			cJSON_DeleteItemFromObject(g, unread_by_rules[i]);
	}
	cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(g, "xid"))
	{
		cJSON_DeleteItemFromObject(x, "at_usec");
		cJSON *m = cJSON_GetObjectItem(x, "message");
		if (!xid_text)
			cJSON_DeleteItemFromObject(x, "message");
		else if (cJSON_IsString(m) && strlen(m->valuestring) > XID_TEXT_KEPT) {
			char cut[XID_TEXT_KEPT + 1];
			memcpy(cut, m->valuestring, XID_TEXT_KEPT);
			cut[XID_TEXT_KEPT] = '\0';
			cJSON_ReplaceItemInObject(x, "message", cJSON_CreateString(cut));
		}
	}
}

static cJSON *history_json(const ng_gpu_history *h, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o)) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddStringToObject(o, "uuid", h[i].uuid ? h[i].uuid : "");
		if (isfinite(h[i].hours_ago))
			cJSON_AddNumberToObject(o, "hours_ago", h[i].hours_ago);
		cJSON_AddNumberToObject(o, "retired_pages", (double)h[i].retired_pages);
		cJSON_AddNumberToObject(o, "remapped_rows", (double)h[i].remapped_rows);
		cJSON_AddNumberToObject(o, "pcie_replays", (double)h[i].pcie_replays);
		cJSON_AddNumberToObject(o, "nvlink_errors", (double)h[i].nvlink_errors);
		cJSON_AddNumberToObject(o, "unread", h[i].unread);
		cJSON_AddNumberToObject(o, "unresponsive_before", h[i].unresponsive_before);
		cJSON_AddNumberToObject(o, "hw_thermal_before", h[i].hw_thermal_before);
	}
	return a;
}

static char *text_of(const ng_gpu_snapshot *s, const ng_gpu_history *history, size_t n_history,
                     ng_gpu_readings_run run, bool xid_text)
{
	static const char *const nvml_states[] = {"unread", "ok", "not_supported", "failed"};
	cJSON *doc = cJSON_CreateObject(), *snap = ng_gpu_snapshot_to_json(s);
	cJSON *hist = history_json(history, n_history);
	if (!doc || !snap || !hist) {
		cJSON_Delete(doc);
		cJSON_Delete(snap);
		cJSON_Delete(hist);
		return NULL;
	}
	cJSON_AddStringToObject(doc, "schema", NG_GPU_READINGS_SCHEMA);
	cJSON_AddBoolToObject(doc, "judged", run.judged);
	cJSON_AddBoolToObject(doc, "nvml_answered", run.nvml_answered);
	cJSON_AddBoolToObject(doc, "from_dump", run.from_dump);
	cJSON_AddBoolToObject(doc, "timed_out", run.timed_out);
	cJSON_AddBoolToObject(doc, "after_job", s->after_job);
	/* NVML's own state is the run's: the snapshot beside it may hold GPUs
	 * the kernel vouched for after NVML failed, which a snapshot of NVML's
	 * alone never does. */
	cJSON_AddStringToObject(doc, "nvml", (unsigned)s->nvml < 4 ? nvml_states[s->nvml] : "failed");
	if (s->nvml_error[0])
		cJSON_AddStringToObject(doc, "nvml_error", s->nvml_error);
	cJSON_ReplaceItemInObject(snap, "nvml", cJSON_CreateString("ok"));
	cJSON_DeleteItemFromObject(snap, "nvml_error");
	cJSON_DeleteItemFromObject(snap, "driver");
	cJSON_DeleteItemFromObject(snap, "nvml_version");
	cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItem(snap, "gpus"))
		strip_gpu(g, xid_text);
	cJSON_AddItemToObject(doc, "snapshot", snap);
	cJSON_AddItemToObject(doc, "history", hist);
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	return text;
}

char *ng_gpu_readings_text(const ng_gpu_snapshot *s, const ng_gpu_history *history,
                           size_t n_history, ng_gpu_readings_run run)
{
	char *text = text_of(s, history, n_history, run, true);
	if (text && strlen(text) > NG_GPU_READINGS_MAX_BYTES) {
		/* Thousands of Xid lines' text: their codes and causes decide. */
		free(text);
		text = text_of(s, history, n_history, run, false);
	}
	if (text && strlen(text) > NG_GPU_READINGS_MAX_BYTES) {
		free(text);
		return NULL;
	}
	return text;
}

static bool flag(const cJSON *doc, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(doc, key));
}

static int read_history(const cJSON *a, ng_gpu_readings *r, ng_err *err)
{
	const cJSON *o;
	r->n_history = 0;
	cJSON_ArrayForEach(o, a)
	{
		if (r->n_history == NG_GPU_MAX)
			return ng_fail_as(err, NG_ERR_INPUT, "readings: more than %d earlier counters",
			                  NG_GPU_MAX);
		size_t k = r->n_history++;
		const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(o, "uuid"));
		if (!uuid || strlen(uuid) >= sizeof r->history_uuid[k])
			return ng_fail_as(err, NG_ERR_INPUT, "readings: history[%zu].uuid", k);
		memcpy(r->history_uuid[k], uuid, strlen(uuid) + 1);
		const cJSON *ago = cJSON_GetObjectItem(o, "hours_ago");
		ng_gpu_history *h = &r->history[k];
		*h = (ng_gpu_history){
			.uuid = r->history_uuid[k],
			.hours_ago = cJSON_IsNumber(ago) ? ago->valuedouble : NAN,
		};
		static const char *const keys[] = {"retired_pages", "remapped_rows", "pcie_replays",
		                                   "nvlink_errors", "unread", "unresponsive_before",
		                                   "hw_thermal_before"};
		double v[7];
		for (int i = 0; i < 7; i++) {
			const cJSON *n = cJSON_GetObjectItem(o, keys[i]);
			if (!cJSON_IsNumber(n) || !(n->valuedouble >= 0) || n->valuedouble > 1e18)
				return ng_fail_as(err, NG_ERR_INPUT, "readings: history[%zu].%s", k, keys[i]);
			v[i] = n->valuedouble;
		}
		h->retired_pages = (uint64_t)v[0];
		h->remapped_rows = (uint64_t)v[1];
		h->pcie_replays = (uint64_t)v[2];
		h->nvlink_errors = (uint64_t)v[3];
		h->unread = (unsigned)v[4];
		h->unresponsive_before = (unsigned)v[5];
		h->hw_thermal_before = (unsigned)v[6];
	}
	return 0;
}

int ng_gpu_readings_read(const char *text, ng_gpu_readings *r, ng_err *err)
{
	ng_gpu_snapshot *snap = r->snap;
	cJSON *doc = ng_json_parse(text, strlen(text), err);
	if (!doc)
		return -1;
	int rc = 0;
	const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "schema"));
	if (!schema || strcmp(schema, NG_GPU_READINGS_SCHEMA) != 0)
		rc = ng_fail_as(err, NG_ERR_INPUT, "readings: not %s", NG_GPU_READINGS_SCHEMA);
	/* each GPU's links as runs: read once each, copied after */
	unsigned char runs[NG_GPU_MAX][NG_NVLINK_MAX];
	size_t n_runs[NG_GPU_MAX] = {0}, n_gpus = 0;
	cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "snapshot"), "gpus"))
	{
		if (rc == 0 && cJSON_IsObject(g) && n_gpus < NG_GPU_MAX)
			rc = runs_to_links(g, runs[n_gpus], &n_runs[n_gpus], err);
		n_gpus++;
	}
	if (rc == 0 && ng_gpu_snapshot_from_json(cJSON_GetObjectItem(doc, "snapshot"), snap, err) < 0)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < snap->n_gpus && i < NG_GPU_MAX; i++)
		expand_links(&snap->gpu[i], runs[i], n_runs[i]);
	if (rc == 0)
		rc = read_history(cJSON_GetObjectItem(doc, "history"), r, err);
	if (rc == 0) {
		r->run = (ng_gpu_readings_run){
			.judged = flag(doc, "judged"), .nvml_answered = flag(doc, "nvml_answered"),
			.from_dump = flag(doc, "from_dump"), .timed_out = flag(doc, "timed_out"),
		};
		snap->after_job = flag(doc, "after_job");
		const char *nvml = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "nvml"));
		snap->nvml = !nvml ? NG_FIELD_FAILED
		             : strcmp(nvml, "ok") == 0 ? NG_FIELD_OK
		             : strcmp(nvml, "unread") == 0 ? NG_FIELD_UNREAD
		             : strcmp(nvml, "not_supported") == 0 ? NG_FIELD_NOT_SUPPORTED
		                                                  : NG_FIELD_FAILED;
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "nvml_error"));
		snprintf(snap->nvml_error, sizeof snap->nvml_error, "%s", why ? why : "");
	}
	cJSON_Delete(doc);
	return rc;
}

const char *ng_gpu_readings_judge(const ng_gpu_readings *r, const ng_policy *pol,
                                  ng_node_health *h)
{
	ng_health_judge(r->snap, r->history, r->n_history, pol, h);
	return ng_gpu_check_outcome(h, r->run);
}
