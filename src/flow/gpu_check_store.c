/* The store, when one is named: earlier counters for rates, and a record per GPU. */
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/gpu_check_run.h"
#include "flow/shadow.h"
#include "collect/identity.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/policy_digest.h"
#include "core/policy_json.h"
#include "flow/probation.h"

/* ---- the store (optional) --------------------------------------------------------- */

static const char *named_store(const struct ng_gpu_check_result *c)
{
	if (c->no_store)
		return NULL;
	if (c->store)
		return c->store;
	if (c->ctx.store_spec)
		return c->ctx.store_spec;
	const char *env = getenv("NODEGATE_STORE");
	return env && *env ? env : NULL;
}

#define STORE_MIN_S 0.1 /* less of the deadline left than this: the store is skipped */

/* The node as the store knows it between checks: its stable id, as
 * admission's records key it, and its scheduler name beside it
 * (docs/naming.md). */
static void store_node(char host[256], char name[128])
{
	ng_node_names(host, 256, name, 128);
}

/* A sum of counters the way the rules take it: -1 when one failed or none
 * was read, so a later rate is never taken against a zero that was not. */
static int64_t counter_total(const ng_gpu_field *const *f, size_t n)
{
	uint64_t sum = 0;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (f[i]->state == NG_FIELD_FAILED)
			return -1;
		if (f[i]->state == NG_FIELD_OK) {
			sum += f[i]->value;
			any = true;
		}
	}
	return any && sum <= INT64_MAX ? (int64_t)sum : -1;
}

static void counters_of(const ng_gpu_state *g, int64_t at, ng_store_gpu_counters *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->uuid, sizeof out->uuid, "%s", g->uuid);
	out->at = at;
	const ng_gpu_field *pages[] = {&g->retired_pages_sbe, &g->retired_pages_dbe};
	const ng_gpu_field *rows[] = {&g->remap_corrected, &g->remap_uncorrected};
	const ng_gpu_field *replays[] = {&g->pcie_replays};
	const ng_gpu_field *links[NG_NVLINK_MAX * 3];
	size_t n = 0;
	for (size_t k = 0; k < g->n_links && k < NG_NVLINK_MAX; k++) {
		links[n++] = &g->link[k].replay_errors;
		links[n++] = &g->link[k].recovery_errors;
		links[n++] = &g->link[k].crc_errors;
	}
	out->retired_pages = counter_total(pages, 2);
	out->remapped_rows = counter_total(rows, 2);
	out->pcie_replays = counter_total(replays, 1);
	out->nvlink_errors = n ? counter_total(links, n) : -1;
}

/* The child's side of reading what the store knows, one line each:
 *   C uuid age retired remapped replays nvlink   counters at an earlier check (-1: not read)
 *   I uuid bus minor first last unresponsive hw_thermal   a GPU of the node's inventory
 *   M bus boot_id at_usec                      the newest kernel-log time judged for a bus
 *   L mode drained at                          the node's previous check (drained: it exited 1) */
static void history_child(int wfd, const struct ng_gpu_check_result *c, const void *arg)
{
	ng_err err;
	ng_store *st;
	if (ng_store_open(arg, &st, &err) < 0)
		return; /* no history: no rates, and keep_records will say why */
	char host[256], name[128];
	store_node(host, name);
	int64_t now = ng_ctx_now(&c->ctx);
	int64_t before = now - (int64_t)(c->ctx.policy.health_rate_min_hours * 3600);
	char line[512];
	/* The previous check first: whether a drain Slurm made after it is ours. */
	ng_store_gpu_check last;
	if (ng_store_last_gpu_check(st, host, &last, &err) == 1 && !strchr(last.mode, ' ') &&
	    last.mode[0]) {
		int len = snprintf(line, sizeof line, "L %s %d %lld\n", last.mode, last.drain,
		                   (long long)last.at);
		if (len > 0 && (size_t)len < sizeof line)
			ng_write_all(wfd, line, (size_t)len);
	}
	ng_store_gpu *inv = NULL;
	size_t n_inv = 0;
	if (ng_store_gpus_of(st, host, &inv, &n_inv, &err) == 0) {
		for (size_t i = 0; i < n_inv && i < NG_GPU_MAX; i++) {
			const ng_store_gpu *g = &inv[i];
			if (!g->uuid[0] || strchr(g->uuid, ' ') || !g->bus[0] || strchr(g->bus, ' '))
				continue; /* not a row this build wrote */
			int len = snprintf(line, sizeof line, "I %s %s %lld %lld %lld %lld %lld\n", g->uuid, g->bus,
			                   (long long)g->minor, (long long)g->first_seen, (long long)g->last_seen,
			                   (long long)g->unresponsive, (long long)g->hw_thermal);
			if (len > 0 && (size_t)len < sizeof line)
				ng_write_all(wfd, line, (size_t)len);
		}
	}
	free(inv);
	ng_store_kmsg_mark *marks = NULL;
	size_t n_marks = 0;
	if (ng_store_kmsg_marks(st, host, &marks, &n_marks, &err) == 0) {
		for (size_t i = 0; i < n_marks && i < NG_GPU_MAX; i++) {
			const ng_store_kmsg_mark *m = &marks[i];
			if (!m->bus[0] || strchr(m->bus, ' ') || !m->boot_id[0] || strchr(m->boot_id, ' '))
				continue;
			int len = snprintf(line, sizeof line, "M %s %s %lld\n", m->bus, m->boot_id,
			                   (long long)m->at_usec);
			if (len > 0 && (size_t)len < sizeof line)
				ng_write_all(wfd, line, (size_t)len);
		}
	}
	free(marks);
	for (size_t i = 0; i < c->snap->n_gpus; i++) {
		const char *uuid = c->snap->gpu[i].uuid;
		ng_store_gpu_counters p;
		if (!uuid[0] || strchr(uuid, ' ') ||
		    ng_store_gpu_counters_past(st, host, uuid, before, now, &p, &err) != 1)
			continue;
		int len = snprintf(line, sizeof line, "C %s %lld %lld %lld %lld %lld\n", uuid,
		                   (long long)(now - p.at), (long long)p.retired_pages,
		                   (long long)p.remapped_rows, (long long)p.pcie_replays,
		                   (long long)p.nvlink_errors);
		if (len > 0 && (size_t)len < sizeof line)
			ng_write_all(wfd, line, (size_t)len);
	}
	ng_store_close(st);
}

static void take_counters(struct ng_gpu_check_result *c, const char *p)
{
	char uuid[96];
	long long age, v[4];
	if (c->n_history >= NG_GPU_MAX ||
	    sscanf(p, "C %95s %lld %lld %lld %lld %lld", uuid, &age, &v[0], &v[1], &v[2], &v[3]) != 6)
		return;
	size_t k = c->n_history++;
	snprintf(c->history_uuid[k], sizeof c->history_uuid[k], "%s", uuid);
	ng_gpu_history *h = &c->history[k];
	*h = (ng_gpu_history){.uuid = c->history_uuid[k], .hours_ago = (double)age / 3600.0};
	uint64_t *dst[] = {&h->retired_pages, &h->remapped_rows, &h->pcie_replays, &h->nvlink_errors};
	for (int f = 0; f < 4; f++) {
		if (v[f] < 0)
			h->unread |= 1u << f; /* the NG_HIST_UNREAD_* order */
		else
			*dst[f] = (uint64_t)v[f];
	}
}

static void take_inventory(struct ng_gpu_check_result *c, const char *p)
{
	ng_store_gpu g = {0};
	long long minor, first, last, unresp, thermal;
	char bus[32];
	if (c->n_inv >= NG_GPU_MAX ||
	    sscanf(p, "I %95s %31s %lld %lld %lld %lld %lld", g.uuid, bus, &minor, &first, &last, &unresp,
	           &thermal) != 7 ||
	    ng_gpu_bus_normalize(bus, g.bus) < 0)
		return;
	g.minor = minor >= 0 && minor <= 1048575 ? minor : -1;
	g.first_seen = first;
	g.last_seen = last;
	g.unresponsive = unresp > 0 && unresp < 1000000 ? unresp : 0;
	g.hw_thermal = thermal > 0 && thermal < 1000000 ? thermal : 0;
	c->inv[c->n_inv++] = g;
}

static void take_mark(struct ng_gpu_check_result *c, const char *p)
{
	ng_store_kmsg_mark m = {0};
	char bus[32];
	long long at;
	if (c->n_marks >= NG_GPU_MAX || sscanf(p, "M %31s %39s %lld", bus, m.boot_id, &at) != 3 ||
	    ng_gpu_bus_normalize(bus, m.bus) < 0)
		return;
	m.at_usec = at;
	c->marks[c->n_marks++] = m;
}

/* The node's previous GPU check: is a Slurm Epilog or Prolog error drain
 * right after it nodegate's own (land/slurm.h)? */
static void take_last_check(struct ng_gpu_check_result *c, const char *p)
{
	char mode[16];
	int drained;
	long long at;
	if (sscanf(p, "L %15s %d %lld", mode, &drained, &at) != 3)
		return;
	snprintf(c->last_mode, sizeof c->last_mode, "%s", mode);
	c->last_drain = drained == 1;
	c->last_at = at;
}

/* What the store knows of this node's GPUs: earlier counters for the
 * rules' rates, the inventory, the kernel-log marks. Bounded like every
 * store access here; a store that cannot be read is no history, never a
 * fault (and a corrupt one reads as nothing). */
void ng_check_load_history(struct ng_gpu_check_result *c)
{
	const char *spec = named_store(c);
	if (!spec || c->t_end - ng_check_now() < STORE_MIN_S)
		return;
	ng_bounded b;
	if (ng_check_run_bounded(c, "the history read", history_child, spec, 1u << 20, &b) < 0 ||
	    !b.finished) {
		ng_check_note(c, "store: earlier counters not read in time: no rates this run");
		ng_strbuf_free(&b.out);
		return;
	}
	c->store_read = b.reaped && WIFEXITED(b.status) && WEXITSTATUS(b.status) == 0;
	for (const char *p = b.out.s; p && *p;) {
		if (p[0] == 'C')
			take_counters(c, p);
		else if (p[0] == 'I')
			take_inventory(c, p);
		else if (p[0] == 'M')
			take_mark(c, p);
		else if (p[0] == 'L')
			take_last_check(c, p);
		const char *eol = strchr(p, '\n');
		if (!eol)
			break;
		p = eol + 1;
	}
	/* The inventory carries each GPU's run of unresponsive and thermal
	 * checks; a GPU without counters still has those. */
	for (size_t i = 0; i < c->n_inv; i++) {
		ng_gpu_history *h = NULL;
		for (size_t k = 0; k < c->n_history && !h; k++)
			if (strcmp(c->history_uuid[k], c->inv[i].uuid) == 0)
				h = &c->history[k];
		if (!h && c->n_history < NG_GPU_MAX) {
			size_t k = c->n_history++;
			snprintf(c->history_uuid[k], sizeof c->history_uuid[k], "%s", c->inv[i].uuid);
			h = &c->history[k];
			*h = (ng_gpu_history){.uuid = c->history_uuid[k], .hours_ago = NAN, .unread = 0xf};
		}
		if (h) {
			h->unresponsive_before = (unsigned)c->inv[i].unresponsive;
			h->hw_thermal_before = (unsigned)c->inv[i].hw_thermal;
		}
	}
	ng_strbuf_free(&b.out);
}

/* The child's side: one gpu.health record per GPU checked, and what went
 * wrong (if anything) as one line on the pipe. */
static void store_child(int wfd, const struct ng_gpu_check_result *c, const void *arg)
{
	const char *spec = arg;
	char msg[640] = "";
	ng_err err;
	ng_store *st;
	if (ng_store_open(spec, &st, &err) < 0) {
		snprintf(msg, sizeof msg, "store: %.500s: records not kept", err.msg);
		ng_write_all(wfd, msg, strlen(msg));
		return;
	}
	char host[256], name[128];
	store_node(host, name);
	int64_t now = ng_ctx_now(&c->ctx);
	char run_id[80];
	ng_run_id(run_id, host, now);
	size_t n = c->health->n_gpus;
	ng_store_record *recs = calloc(n ? n : 1, sizeof *recs);
	char **bodies = calloc(n ? n : 1, sizeof *bodies);
	const char *job = getenv("SLURM_JOB_ID");
	int rc = recs && bodies ? 0 : ng_fail(&err, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		cJSON *b = ng_check_gpu_json(c, i);
		cJSON_AddStringToObject(b, "schema", "nodegate/record/1");
		cJSON_AddStringToObject(b, "node", host);
		cJSON_AddStringToObject(b, "node_name", name);
		cJSON_AddStringToObject(b, "domain", "health");
		cJSON_AddStringToObject(b, "metric", "gpu.health");
		cJSON_AddStringToObject(b, "mode", ng_check_mode_name(c->mode));
		/* the run's exit 1, for telling Slurm's Epilog error drain after it */
		cJSON_AddBoolToObject(b, "drain", c->drain);
		if (job && *job)
			cJSON_AddStringToObject(b, "job", job);
		bodies[i] = cJSON_PrintUnformatted(b);
		cJSON_Delete(b);
		if (!bodies[i]) {
			rc = ng_fail(&err, "out of memory");
			break;
		}
		recs[i] = (ng_store_record){
			.node = host, .node_name = name, .class_key = "", .domain = "health", .metric = "gpu.health",
			.unit = "", .run_id = run_id, .taken_at = now, .body = bodies[i],
		};
	}
	if (rc == 0 && n)
		rc = ng_store_put_records(st, recs, n, NULL, &err);
	/* The wear counters, for the next check's rates. */
	ng_store_gpu_counters *cnt = calloc(c->snap->n_gpus ? c->snap->n_gpus : 1, sizeof *cnt);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && cnt && i < c->snap->n_gpus; i++)
		if (c->snap->gpu[i].uuid[0] && !c->snap->gpu[i].lost)
			counters_of(&c->snap->gpu[i], now, &cnt[k++]);
	if (rc == 0 && cnt)
		rc = ng_store_put_gpu_counters(st, host, cnt, k, &err);
	free(cnt);
	/* The inventory: every GPU NVML listed, and the ones replaced at their
	 * bus. A saved nvidia-smi dump is some node at some time, not this
	 * node's GPUs now: it never enters the inventory or the marks. */
	ng_store_gpu *inv = calloc(c->snap->n_gpus ? c->snap->n_gpus : 1, sizeof *inv);
	size_t n_inv = 0;
	for (size_t i = 0; rc == 0 && inv && !c->smi_file && i < c->snap->n_gpus; i++) {
		const ng_gpu_state *g = &c->snap->gpu[i];
		if (!g->uuid[0] || !g->bus[0] || strchr(g->uuid, ' '))
			continue;
		if (g->presence == NG_GPU_UNANSWERED)
			continue; /* NVML said nothing of it: nothing to record */
		ng_store_gpu *o = &inv[n_inv++];
		o->listed = g->presence == NG_GPU_LISTED;
		snprintf(o->uuid, sizeof o->uuid, "%s", g->uuid);
		snprintf(o->bus, sizeof o->bus, "%s", g->bus);
		o->minor = g->minor.state == NG_FIELD_OK ? (int64_t)g->minor.value : -1;
		o->first_seen = o->last_seen = o->checked_at = now;
		o->index = g->index;
		snprintf(o->mode, sizeof o->mode, "%s", ng_check_mode_name(c->mode));
		const ng_gpu_verdict *v = i < c->health->n_gpus ? &c->health->gpu[i] : NULL;
		o->unresponsive = v ? v->unresponsive_run : 0;
		o->hw_thermal = v ? v->hw_thermal_run : 0;
		snprintf(o->severity, sizeof o->severity, "%s", v ? ng_health_name(v->severity) : "unknown");
		size_t used = 0;
		for (size_t r = 0; v && r < v->n_reasons; r++) {
			int w = snprintf(o->signals + used, sizeof o->signals - used, "%s%s=%s", used ? " " : "",
			                 v->reason[r].signal, ng_health_name(v->reason[r].severity));
			if (w < 0 || (size_t)w >= sizeof o->signals - used) {
				o->signals[used] = '\0';
				break;
			}
			used += (size_t)w;
		}
	}
	const char *gone[NG_GPU_MAX];
	for (size_t i = 0; i < c->n_replaced; i++)
		gone[i] = c->replaced[i];
	if (rc == 0 && inv)
		rc = ng_store_put_gpus(st, host, inv, n_inv, gone, c->n_replaced, &err);
	free(inv);
	if (rc == 0 && !c->smi_file)
		rc = ng_store_put_kmsg_marks(st, host, c->new_marks, c->n_new_marks, now, &err);
	/* What the rules judged from, under which policy: a replay judges the
	 * check again from these (flow/gpu_readings.h). Readings that cannot
	 * be written leave the run without them, as runs from before were. */
	char digest[NG_POLICY_DIGEST_LEN];
	ng_policy_digest(&c->ctx.policy, digest);
	char *policy_text = rc == 0 ? ng_policy_to_text(&c->ctx.policy) : NULL;
	char *readings = rc == 0 && c->snap ? ng_gpu_readings_text(c->snap, c->history, c->n_history,
	                                                           ng_check_readings_run(c, c->judged))
	                                    : NULL;
	if (rc == 0)
		rc = ng_store_put_gpu_check_run_readings(st, host, ng_check_mode_name(c->mode), c->outcome,
		                                         now, c->why, digest, policy_text, readings, &err);
	free(policy_text);
	free(readings);
	if (rc == 0 && c->snap &&
	    ng_shadow_gpu_check(st, &(ng_shadow_gpu){host, ng_check_mode_name(c->mode), now, c->snap,
	                                             c->history, c->n_history, c->drain}, &err) < 0) {
		snprintf(msg, sizeof msg, "shadow policy: %.400s (nothing of it is landed)", err.msg);
		ng_write_all(wfd, msg, strlen(msg));
	}
	/* A released node's probation is decided by the job this epilog follows. */
	if (rc == 0)
		rc = ng_probation_after_check(st, &c->ctx.policy,
		                              &(ng_probation_check){.node = host,
		                                                    .mode = ng_check_mode_name(c->mode),
		                                                    .outcome = c->outcome,
		                                                    .drained = c->drain,
		                                                    .new_xids = c->n_xid, .now = now},
		                              NULL, NULL, 0, &err);
	if (rc < 0) {
		snprintf(msg, sizeof msg, "store %.200s: %.400s: records not kept", ng_store_where(st),
		         err.msg);
		ng_write_all(wfd, msg, strlen(msg));
	}
	ng_store_close(st);
	/* The child exits right after: what it allocated goes with it. */
	for (size_t i = 0; bodies && i < n; i++)
		free(bodies[i]);
	free(bodies);
	free(recs);
}

/* One gpu.health record per GPU checked, in a child under what is left of
 * the deadline. Keeping them is a convenience: a store that cannot be
 * opened, written or reached in time is a note, never a drain. */
void ng_check_keep_records(struct ng_gpu_check_result *c)
{
	const char *spec = named_store(c);
	if (!spec || !c->health)
		return; /* every run is kept, unknown and n/a included */
	if (c->t_end - ng_check_now() < STORE_MIN_S) {
		ng_check_note(c, "store: skipped, the deadline is spent: records not kept");
		return;
	}
	ng_bounded b;
	if (ng_check_run_bounded(c, "the store write", store_child, spec, 4096, &b) < 0)
		ng_check_note(c, "store: could not start the write (%s): records not kept", strerror(b.error));
	else if (!b.finished)
		ng_check_note(c, "store: not written within the deadline: records not kept");
	else if (b.out.len)
		ng_check_note(c, "%s", b.out.s);
	else if (!b.reaped || !WIFEXITED(b.status) || WEXITSTATUS(b.status) != 0)
		ng_check_note(c, "store: the write did not finish cleanly: records may not be kept");
	ng_strbuf_free(&b.out);
}
