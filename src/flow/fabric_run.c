/* One fabric test through a launcher and the harness (fabric.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flow/fabric.h"
#include "collect/harness.h"
#include "collect/spawn.h"
#include "core/json.h"
#include "core/json_file.h"
#include "core/record_build.h"
#include "core/stats.h"
#include "parse/help.h"
#include "parse/nccl_transport.h"

#define MAX_OUTPUT (4u << 20)
#define PERFTEST_SERVER_HEAD_S 1.0

/* ---- command lines ---------------------------------------------------------------------- */

struct argvbuf {
	char *v[NG_FABRIC_MAX_TOKENS * 3];
	size_t n;
	char *owned[8];
	size_t n_owned;
};

static void argv_free(struct argvbuf *a)
{
	for (size_t i = 0; i < a->n_owned; i++)
		free(a->owned[i]);
	a->n_owned = 0;
}

static void push(struct argvbuf *a, char *s)
{
	if (a->n + 1 < sizeof a->v / sizeof a->v[0])
		a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static char *own(struct argvbuf *a, char *s)
{
	if (s && a->n_owned < 8)
		a->owned[a->n_owned++] = s;
	return s;
}

/* The launcher with {nodes} and {n} put in, for these nodes. */
static void launcher_for(const ng_fabric_opts *o, struct argvbuf *a, char *const *nodes,
                         size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(nodes[i]) + 1;
	char *list = own(a, calloc(len, 1));
	for (size_t i = 0; list && i < n; i++) {
		if (i)
			strcat(list, ",");
		strcat(list, nodes[i]);
	}
	char count[24];
	snprintf(count, sizeof count, "%zu", n);
	for (size_t i = 0; i < o->n_launcher; i++) {
		const char *t = o->launcher[i];
		const char *at_nodes = strstr(t, "{nodes}"), *at_n = strstr(t, "{n}");
		if (!at_nodes && !at_n) {
			push(a, o->launcher[i]);
			continue;
		}
		const char *at = at_nodes ? at_nodes : at_n;
		const char *val = at_nodes ? (list ? list : "") : count;
		size_t skip = at_nodes ? 7 : 3;
		char *s = NULL;
		if (asprintf(&s, "%.*s%s%s", (int)(at - t), t, val, at + skip) < 0)
			s = NULL;
		push(a, own(a, s) ? s : o->launcher[i]);
	}
}

/* ---- what a test is judged against ---------------------------------------------------- */

void ng_fabric_topology_key(const ng_fabric_opts *o, size_t n, const char *hca, char *out, size_t cap)
{
	if (hca || o->n_hcas)
		snprintf(out, cap, "%.100s/%zunode/%zurail", o->class_key, n, hca ? (size_t)1 : o->n_hcas);
	else
		snprintf(out, cap, "%.100s/%zunode", o->class_key, n);
}

double ng_fabric_expected(const ng_fabric_opts *o, size_t n, const char *hca, char *why, size_t cap)
{
	if (o->expect_busbw > 0)
		/* One rail alone carries its share of the all-rail figure. */
		return hca && o->n_hcas ? o->expect_busbw / (double)o->n_hcas : o->expect_busbw;
	char key[160];
	ng_fabric_topology_key(o, n, hca, key, sizeof key);
	for (size_t i = 0; i < o->n_baselines; i++) {
		const struct ng_fabric_baseline *b = &o->baselines[i];
		if (b->nodes == n && b->one_rail == (hca != NULL) && b->median > 0)
			return b->median;
	}
	snprintf(why, cap, "no baseline of nccl.all_reduce.busbw for %s in the store, and no "
	         "--expect-busbw: nothing to judge against", key);
	return NAN;
}

/* ---- tool checks ------------------------------------------------------------------------ */

static char *help_check(const ng_fabric_opts *o, const char *node, char *const *tool, size_t n)
{
	struct argvbuf a = {0};
	char *one[1] = {(char *)node};
	launcher_for(o, &a, one, 1);
	push(&a, tool[0]);
	push(&a, "-h");
	ng_spawn_result r;
	char ebuf[256], *why = NULL;
	if (ng_spawn_capture(a.v, o->timeout_s < 30 ? o->timeout_s : 30, 1 << 20, &r, ebuf, sizeof ebuf) < 0) {
		argv_free(&a);
		return strdup(ebuf);
	}
	char how[256], opt[128];
	if (!r.spawned || r.timed_out || r.signal) {
		ng_spawn_describe(&r, how, sizeof how);
		if (asprintf(&why, "not run: %s -h through %s on %s %s", tool[0], o->launcher[0], node, how) < 0)
			why = NULL;
	} else {
		bool oom;
		const char *bad = ng_harness_unlisted_option(&r, tool + 1, n - 1, opt, sizeof opt, &oom);
		if (bad && asprintf(&why, "not run: %s does not list the option %s in its help text, and "
		                          "a build that does not know an option may print usage and exit 0 "
		                          "without measuring", tool[0], bad) < 0)
			why = NULL;
	}
	ng_spawn_result_free(&r);
	argv_free(&a);
	return why;
}

char *ng_fabric_check_tools(const ng_fabric_opts *o, const char *node, bool perftest)
{
	char *why = help_check(o, node, o->nccl, o->n_nccl);
	if (why || !perftest)
		return why;
	char secs[32];
	snprintf(secs, sizeof secs, "%g", o->perftest_seconds);
	char *pt[] = {(char *)o->perftest, "-d", "x", "-D", secs, "-F", NULL};
	return help_check(o, node, pt, 6);
}

/* ---- running ----------------------------------------------------------------------------- */

static cJSON *nodes_json(char *const *nodes, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(nodes[i]));
	return a;
}

/* The harness's raw stdout and stderr of the first run, read back. */
static char *raw_text(const cJSON *rec, size_t *len)
{
	const cJSON *runs = ng_json_get(ng_json_get(rec, "tool"), "runs");
	const cJSON *run = cJSON_IsArray(runs) ? runs->child : NULL;
	const char *files[2] = {NULL, NULL};
	const cJSON *f = ng_json_get(run, "stdout_file"), *g = ng_json_get(run, "stderr_file");
	files[0] = cJSON_IsString(f) ? f->valuestring : NULL;
	files[1] = cJSON_IsString(g) ? g->valuestring : NULL;
	char *all = NULL;
	size_t n = 0;
	for (int k = 0; k < 2; k++) {
		if (!files[k])
			continue;
		ng_err err;
		size_t l;
		char *t = ng_read_file(files[k], &l, &err);
		if (!t)
			continue;
		char *grown = realloc(all, n + l + 2);
		if (grown) {
			all = grown;
			memcpy(all + n, t, l);
			n += l;
			all[n++] = '\n';
			all[n] = '\0';
		}
		free(t);
	}
	*len = n;
	return all;
}

static void test_dir(const ng_fabric_opts *o, unsigned test_no, char *out, size_t cap)
{
	snprintf(out, cap, "%s/t%04u", o->raw_dir, test_no);
}

static const cJSON *first_metric(const cJSON *recs, const char *prefix)
{
	for (const cJSON *r = recs ? recs->child : NULL; r; r = r->next) {
		const cJSON *m = ng_json_get(r, "metric");
		if (cJSON_IsString(m) && strncmp(m->valuestring, prefix, strlen(prefix)) == 0)
			return r;
	}
	return recs ? recs->child : NULL;
}

static void samples_of(const cJSON *rec, double *v, size_t *n, size_t cap)
{
	*n = 0;
	const cJSON *s = ng_json_get(rec, "samples");
	for (const cJSON *x = cJSON_IsArray(s) ? s->child : NULL; x && *n < cap; x = x->next)
		if (cJSON_IsNumber(x))
			v[(*n)++] = x->valuedouble;
}

static double wrong_of(const cJSON *rec)
{
	const cJSON *w = ng_json_get(rec, "wrong");
	return cJSON_IsNumber(w) ? w->valuedouble : 0;
}

static const char *verdict_of(ng_fabric_outcome o, bool incomparable)
{
	if (incomparable)
		return "incomparable";
	return o == NG_FT_PASS ? "pass" : o == NG_FT_SLOW ? "slow" : "no-measurement";
}

/* The harness names records by tool, second and process; tests of one round
 * run at once in one process, so each record gets its test's number too. */
static void unique_ids(cJSON *recs, unsigned test_no, const char *side)
{
	int k = 0;
	for (cJSON *r = recs ? recs->child : NULL; r; r = r->next, k++) {
		const cJSON *id = ng_json_get(r, "id");
		char buf[160];
		snprintf(buf, sizeof buf, "%.100s-t%u%s-%d", cJSON_IsString(id) ? id->valuestring : "fabric",
		         test_no, side, k);
		ng_json_set(r, "id", cJSON_CreateString(buf));
	}
}

cJSON *ng_fabric_allreduce(const ng_fabric_opts *o, char *const *nodes, size_t n, const char *hca,
                        unsigned test_no)
{
	struct argvbuf a = {0};
	launcher_for(o, &a, nodes, n);
	/* env(1) carries the settings to the ranks whatever the launcher exports. */
	push(&a, "env");
	push(&a, "NCCL_DEBUG=INFO");
	char *hca_env = NULL;
	if (hca && asprintf(&hca_env, "NCCL_IB_HCA==%s", hca) > 0)
		push(&a, own(&a, hca_env));
	for (size_t i = 0; i < o->n_nccl; i++)
		push(&a, o->nccl[i]);
	char dir[4200];
	test_dir(o, test_no, dir, sizeof dir);
	char cls[160], nobase[400] = "";
	ng_fabric_topology_key(o, n, hca, cls, sizeof cls);
	double expected = ng_fabric_expected(o, n, hca, nobase, sizeof nobase);
	struct ng_harness_opts h = {
		.parser = ng_parser_find("nccl-tests"), .argv = a.v, .argc = a.n, .repeat = 1,
		.timeout_s = o->timeout_s, .raw_dir = dir, .probe = false, .node = nodes[0],
		.cls = cls, .max_output = MAX_OUTPUT,
	};
	ng_err err;
	cJSON *recs = ng_harness_run(&h, &err);
	unique_ids(recs, test_no, "");
	argv_free(&a);
	cJSON *res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "test", "all_reduce");
	cJSON_AddItemToObject(res, "nodes", nodes_json(nodes, n));
	if (hca)
		cJSON_AddStringToObject(res, "hca", hca);
	else
		cJSON_AddNullToObject(res, "hca");
	ng_json_add_number(res, "expected", expected);
	cJSON_AddStringToObject(res, "topology", cls);
	if (!recs) {
		cJSON_AddStringToObject(res, "outcome", "unmeasured");
		cJSON_AddStringToObject(res, "verdict", "no-measurement");
		cJSON_AddStringToObject(res, "reason", err.msg);
		return res;
	}
	const cJSON *rec = first_metric(recs, "nccl.");
	double v[64], median;
	size_t ns;
	samples_of(rec, v, &ns, 64);
	size_t tl;
	char *text = raw_text(rec, &tl);
	ng_nccl_transport tr;
	ng_nccl_transport_read(text, tl, &tr);
	free(text);
	cJSON *tj = ng_nccl_transport_json(&tr);
	ng_fabric_path path = {(const char *const *)o->hcas, hca ? 0 : o->n_hcas, o->need_gdr};
	const char *one_hca[1] = {hca};
	if (hca) {
		path.hcas = one_hca;
		path.n_hcas = 1;
	}
	char why[512];
	/* A run that measured nothing (timed out, no table) is that, whatever its
	 * transport lines; only numbers can be of the wrong path. */
	bool comparable = ns == 0 || ng_fabric_transport_ok(tj, &path, why, sizeof why);
	ng_fabric_outcome out = ng_fabric_judge_bw(v, ns, expected, o->fraction, wrong_of(rec), &median);
	const cJSON *reason = ng_json_get(rec, "reason");
	if (!comparable) {
		out = NG_FT_UNMEASURED;
		cJSON_AddStringToObject(res, "reason", why);
	} else if (out == NG_FT_UNMEASURED) {
		cJSON_AddStringToObject(res, "reason", cJSON_IsString(reason) ? reason->valuestring
		                        : nobase[0] ? nobase : "no samples");
	} else if (wrong_of(rec) > 0) {
		cJSON_AddStringToObject(res, "reason", "wrong results in the all-reduce");
	}
	if (comparable && ns > 0 && !isfinite(expected) && !(wrong_of(rec) > 0))
		/* Nothing to judge it against yet: it may start the topology's baseline. */
		cJSON_AddTrueToObject(res, "establishing");
	cJSON_AddStringToObject(res, "outcome", ng_fabric_outcome_name(out));
	cJSON_AddStringToObject(res, "verdict", verdict_of(out, !comparable));
	ng_json_add_number(res, "busbw", median);
	cJSON_AddItemToObject(res, "transport", tj);
	const cJSON *runs = ng_json_get(ng_json_get(rec, "tool"), "runs");
	const cJSON *secs = cJSON_IsArray(runs) && runs->child ? ng_json_get(runs->child, "seconds") : NULL;
	ng_json_add_number(res, "seconds", cJSON_IsNumber(secs) ? secs->valuedouble : NAN);
	cJSON *kept = cJSON_Duplicate(rec, 1);
	if (kept) {
		cJSON *cond = cJSON_GetObjectItemCaseSensitive(kept, "conditions");
		if (!cond)
			cond = cJSON_AddObjectToObject(kept, "conditions");
		cJSON_AddItemToObject(cond, "transport", cJSON_Duplicate(tj, 1));
		cJSON_AddItemToObject(cond, "nodes", nodes_json(nodes, n));
		if (!comparable)
			ng_json_set(kept, "samples", cJSON_CreateArray());
		cJSON_AddItemToObject(res, "record", kept);
	}
	cJSON_Delete(recs);
	return res;
}

struct server_job {
	struct ng_harness_opts h;
	cJSON *recs;
};

static void *server_main(void *arg)
{
	struct server_job *j = arg;
	ng_err err;
	j->recs = ng_harness_run(&j->h, &err);
	return NULL;
}

cJSON *ng_fabric_perftest(const ng_fabric_opts *o, const char *client, const char *server,
                       const char *hca, unsigned test_no)
{
	char secs[32];
	snprintf(secs, sizeof secs, "%g", o->perftest_seconds);
	struct argvbuf sa = {0}, ca = {0};
	char *s1[1] = {(char *)server}, *c1[1] = {(char *)client};
	launcher_for(o, &sa, s1, 1);
	launcher_for(o, &ca, c1, 1);
	char *tool[] = {(char *)o->perftest, "-d", (char *)hca, "-D", secs, "-F"};
	for (size_t i = 0; i < 6; i++) {
		push(&sa, tool[i]);
		push(&ca, tool[i]);
	}
	push(&ca, (char *)server);
	char sdir[4300], cdir[4300], dir[4200];
	test_dir(o, test_no, dir, sizeof dir);
	snprintf(sdir, sizeof sdir, "%s-server", dir);
	snprintf(cdir, sizeof cdir, "%s-client", dir);
	struct server_job sj = {
		.h = {.parser = ng_parser_find("perftest"), .argv = sa.v, .argc = sa.n, .repeat = 1,
		      .timeout_s = o->timeout_s, .raw_dir = sdir, .node = server, .cls = o->class_key,
		      .max_output = MAX_OUTPUT},
	};
	pthread_t th;
	bool started = pthread_create(&th, NULL, server_main, &sj) == 0;
	/* The server must listen before the client connects. */
	usleep((useconds_t)(PERFTEST_SERVER_HEAD_S * 1e6 * (o->perftest_seconds < 1 ? 0.2 : 1)));
	struct ng_harness_opts h = {
		.parser = ng_parser_find("perftest"), .argv = ca.v, .argc = ca.n, .repeat = 1,
		.timeout_s = o->timeout_s, .raw_dir = cdir, .node = client, .cls = o->class_key,
		.max_output = MAX_OUTPUT,
	};
	ng_err err;
	cJSON *recs = ng_harness_run(&h, &err);
	unique_ids(recs, test_no, "c");
	if (started)
		pthread_join(th, NULL);
	cJSON_Delete(sj.recs);
	argv_free(&sa);
	argv_free(&ca);
	cJSON *res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "test", o->perftest);
	char *both[2] = {(char *)client, (char *)server};
	cJSON_AddItemToObject(res, "nodes", nodes_json(both, 2));
	cJSON_AddStringToObject(res, "client", client);
	cJSON_AddStringToObject(res, "server", server);
	cJSON_AddStringToObject(res, "hca", hca);
	const cJSON *rec = recs ? first_metric(recs, "rdma.") : NULL;
	for (const cJSON *r = recs ? recs->child : NULL; r; r = r->next) {
		const cJSON *m = ng_json_get(r, "metric");
		if (cJSON_IsString(m) && strstr(m->valuestring, ".bw_avg"))
			rec = r;
	}
	double v[64];
	size_t ns = 0;
	samples_of(rec, v, &ns, 64);
	double gbps = NAN;
	if (ns) {
		double work[64];
		memcpy(work, v, ns * sizeof *v);
		gbps = ng_np_median_inplace(work, ns);
	}
	ng_json_add_number(res, "gbps", gbps);
	const cJSON *reason = ng_json_get(rec, "reason");
	if (!ns)
		cJSON_AddStringToObject(res, "reason", !recs ? err.msg
		                        : cJSON_IsString(reason) ? reason->valuestring : "no samples");
	if (rec)
		cJSON_AddItemToObject(res, "record", cJSON_Duplicate(rec, 1));
	cJSON_Delete(recs);
	return res;
}

/* ---- rounds, ports, the store ------------------------------------------------------------- */

struct par {
	void (*fn)(void *, size_t);
	void *arg;
	size_t i;
};

static void *par_main(void *p)
{
	struct par *q = p;
	q->fn(q->arg, q->i);
	return NULL;
}

void ng_fabric_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
	struct par *ps = calloc(n ? n : 1, sizeof *ps);
	pthread_t *th = calloc(n ? n : 1, sizeof *th);
	bool *ok = calloc(n ? n : 1, sizeof *ok);
	if (!ps || !th || !ok) {
		for (size_t i = 0; i < n; i++)
			fn(arg, i); /* one at a time, still every one */
	} else {
		for (size_t i = 0; i < n; i++) {
			ps[i] = (struct par){fn, arg, i};
			ok[i] = pthread_create(&th[i], NULL, par_main, &ps[i]) == 0;
			if (!ok[i])
				fn(arg, i);
		}
		for (size_t i = 0; i < n; i++)
			if (ok[i])
				pthread_join(th[i], NULL);
	}
	free(ps);
	free(th);
	free(ok);
}

struct ports_job {
	const ng_fabric_opts *o;
	char *const *nodes;
	cJSON **snaps;
};

static void ports_one(void *arg, size_t i)
{
	struct ports_job *j = arg;
	struct argvbuf a = {0};
	char *one[1] = {j->nodes[i]};
	launcher_for(j->o, &a, one, 1);
	push(&a, (char *)j->o->remote_nodegate);
	push(&a, "fabric");
	push(&a, "ports");
	push(&a, "--json");
	ng_spawn_result r;
	char ebuf[256];
	cJSON *snap = NULL;
	if (ng_spawn_capture(a.v, 30, 1 << 20, &r, ebuf, sizeof ebuf) == 0) {
		ng_err err;
		if (r.spawned && !r.timed_out && !r.signal && r.exit_status == 0)
			snap = ng_json_parse(r.out, r.out_len, &err);
		if (!snap) {
			char how[256];
			ng_spawn_describe(&r, how, sizeof how);
			snap = cJSON_CreateObject();
			cJSON_AddStringToObject(snap, "unreadable", how);
		}
		ng_spawn_result_free(&r);
	}
	argv_free(&a);
	j->snaps[i] = snap;
}

cJSON *ng_fabric_ports(const ng_fabric_opts *o, char *const *nodes, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	if (!o->counters)
		return doc;
	cJSON **snaps = calloc(n ? n : 1, sizeof *snaps);
	if (!snaps)
		return doc;
	struct ports_job j = {o, nodes, snaps};
	ng_fabric_parallel(n, ports_one, &j);
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToObject(doc, nodes[i], snaps[i] ? snaps[i] : cJSON_CreateNull());
	free(snaps);
	return doc;
}

void ng_fabric_note_ports(cJSON *result, const cJSON *before, const cJSON *after)
{
	const cJSON *nodes = ng_json_get(result, "nodes");
	cJSON *risen = cJSON_CreateArray(), *unread = cJSON_CreateArray();
	for (const cJSON *n = cJSON_IsArray(nodes) ? nodes->child : NULL; n; n = n->next) {
		if (!cJSON_IsString(n))
			continue;
		const cJSON *b = ng_json_get(before, n->valuestring), *a = ng_json_get(after, n->valuestring);
		if (!b && !a)
			continue;
		if (!cJSON_IsArray(ng_json_get(b, "ports")) || !cJSON_IsArray(ng_json_get(a, "ports"))) {
			cJSON_AddItemToArray(unread, cJSON_CreateString(n->valuestring));
			continue;
		}
		cJSON *ch = ng_fabric_ports_changed(b, a);
		for (cJSON *c = ch ? ch->child : NULL; c; c = c->next)
			cJSON_AddStringToObject(c, "node", n->valuestring);
		while (ch && ch->child)
			cJSON_AddItemToArray(risen, cJSON_DetachItemViaPointer(ch, ch->child));
		cJSON_Delete(ch);
	}
	cJSON_AddItemToObject(result, "ports_changed", risen);
	if (cJSON_GetArraySize(unread))
		cJSON_AddItemToObject(result, "ports_unread", unread);
	else
		cJSON_Delete(unread);
}

/* A record that may build its topology's baseline: an all-reduce that
 * measured the intended path, with no wrong results and no counter risen,
 * and passed, or had nothing yet to be judged against (establishing, as an
 * admission of a new class is: the robust median of many groups is what
 * the first baseline is, and a few slow groups do not move it). */
static bool feeds_baseline(const cJSON *r)
{
	/* Only an all-reduce has a topology (a gang's results carry their test
	 * number under "test" too). */
	const cJSON *topo = ng_json_get(r, "topology"), *out = ng_json_get(r, "outcome");
	if (!cJSON_IsString(topo) || !cJSON_IsString(out) || cJSON_GetArraySize(ng_json_get(r, "ports_changed")) > 0 ||
	    ng_json_get(r, "ports_unread"))
		return false;
	return strcmp(out->valuestring, "pass") == 0 || cJSON_IsTrue(ng_json_get(r, "establishing"));
}

int ng_fabric_store(const ng_ctx *ctx, const ng_fabric_opts *o, cJSON *results,
                    const char *run_id, cJSON *doc, char *problem, size_t cap)
{
	if (!ctx->store)
		return 0;
	cJSON *recs = cJSON_CreateArray();
	size_t n = 0;
	for (const cJSON *r = results ? results->child : NULL; r; r = r->next) {
		const cJSON *rec = ng_json_get(r, "record");
		if (!rec)
			continue;
		cJSON *k = cJSON_Duplicate(rec, 1);
		/* The result beside the record: peers, paths, the variable changed, counters. */
		cJSON *fab = cJSON_Duplicate(r, 1);
		cJSON_DeleteItemFromObjectCaseSensitive(fab, "record");
		ng_json_set(k, "fabric", fab);
		cJSON_AddItemToArray(recs, k);
		n++;
	}
	int rc = 0;
	int64_t *ids = n ? calloc(n, sizeof *ids) : NULL;
	if (n && !ids) {
		snprintf(problem, cap, "out of memory");
		rc = -1;
	} else if (n) {
		ng_store_ingest how = {.run_id = run_id, .taken_at = ng_ctx_now(ctx), .idle = true,
		                       .accepted = false, .actor = ctx->actor};
		ng_err err;
		if (ng_store_put_json_records(ctx->store, recs, &how, ids, &err) < 0) {
			snprintf(problem, cap, "%s", err.msg);
			rc = -1;
		} else {
			/* The passing ones join their topology's baseline. */
			size_t k = 0, i = 0;
			for (cJSON *r = results->child; r; r = r->next) {
				if (!ng_json_get(r, "record"))
					continue;
				if (feeds_baseline(r)) {
					ids[k++] = ids[i];
					cJSON_AddTrueToObject(r, "accepted");
				}
				i++;
			}
			if (k && ng_store_accept_records(ctx->store, ids, k, &err) < 0) {
				snprintf(problem, cap, "%s", err.msg);
				rc = -1;
			}
		}
	}
	free(ids);
	cJSON_Delete(recs);
	if (rc < 0)
		return -1;
	/* What passed builds its topology's baseline for the next run. */
	cJSON *built = cJSON_CreateArray();
	ng_err berr;
	if (ng_fabric_build_baselines(ctx, o, results, built, &berr) < 0) {
		snprintf(problem, cap, "%s", berr.msg);
		rc = -1;
	}
	if (cJSON_GetArraySize(built))
		cJSON_AddItemToObject(doc, "baselines", built);
	else
		cJSON_Delete(built);
	return rc;
}
