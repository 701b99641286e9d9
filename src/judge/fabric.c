/* Fabric decisions across nodes (fabric.h). */
#include "judge/fabric.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/stats.h"

/* ---- the path ---------------------------------------------------------------------- */

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = ng_json_get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = ng_json_get(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* "mlx5_0:1" names the HCA "mlx5_0". */
static bool hca_expected(const ng_fabric_path *p, const char *dev)
{
	size_t n = strcspn(dev, ":");
	for (size_t i = 0; i < p->n_hcas; i++)
		if (strlen(p->hcas[i]) == n && strncmp(p->hcas[i], dev, n) == 0)
			return true;
	return false;
}

bool ng_fabric_transport_ok(const cJSON *t, const ng_fabric_path *p, char *why, size_t cap)
{
	const char *kind = jstr(t, "kind");
	if (!t || !kind) {
		snprintf(why, cap, "no transport summary: the run's network is unknown");
		return false;
	}
	if (strcmp(kind, "socket") == 0) {
		const cJSON *ifs = ng_json_get(t, "socket_interfaces");
		const char *ifname = cJSON_IsArray(ifs) && ifs->child && cJSON_IsString(ifs->child)
		                         ? ifs->child->valuestring : "an unnamed interface";
		snprintf(why, cap, "NCCL fell back to sockets (NET/Socket over %s%s): not a measurement "
		         "of the intended IB path", ifname,
		         ng_json_truthy(ng_json_get(t, "ib_no_device")) ? "; NET/IB found no device" : "");
		return false;
	}
	if (strcmp(kind, "unseen") == 0) {
		snprintf(why, cap, "no NCCL_DEBUG=INFO channel lines: the run was not shown to cross "
		         "the fabric (%g INFO lines)", jnum(t, "info_lines", 0));
		return false;
	}
	if (strcmp(kind, "ib") != 0) {
		snprintf(why, cap, "NCCL channels went over %s, not only NET/IB (%g IB, %g socket, %g other)",
		         jstr(t, "network") ? jstr(t, "network") : "a mix of networks",
		         jnum(t, "channels_ib", 0), jnum(t, "channels_socket", 0),
		         jnum(t, "channels_other", 0));
		return false;
	}
	if (ng_json_truthy(ng_json_get(t, "network_conflict"))) {
		snprintf(why, cap, "ranks named different networks in \"Using network\"");
		return false;
	}
	if (p && p->n_hcas) {
		const cJSON *devs = ng_json_get(t, "ib_devices");
		if (!cJSON_IsArray(devs) || !devs->child) {
			snprintf(why, cap, "NCCL did not list the HCAs it used (NET/IB : Using ...)");
			return false;
		}
		for (const cJSON *d = devs->child; d; d = d->next) {
			if (cJSON_IsString(d) && !hca_expected(p, d->valuestring)) {
				snprintf(why, cap, "NCCL used %s, which the class does not list among its HCAs",
				         d->valuestring);
				return false;
			}
		}
	}
	if (p && p->need_gdr && !ng_json_truthy(ng_json_get(t, "gdr"))) {
		snprintf(why, cap, "GPUDirect RDMA was not used (no GDRDMA channel), and the class "
		         "expects it");
		return false;
	}
	if (cap)
		why[0] = '\0';
	return true;
}

static const cJSON *find_port(const cJSON *ports, const char *hca, double port)
{
	for (const cJSON *p = ports ? ports->child : NULL; p; p = p->next) {
		const char *h = jstr(p, "hca");
		if (h && strcmp(h, hca) == 0 && jnum(p, "port", -1) == port)
			return p;
	}
	return NULL;
}

static void add_change(cJSON *out, const char *hca, double port, const char *key, const char *what,
                       cJSON *before, cJSON *after)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "hca", hca);
	cJSON_AddNumberToObject(o, "port", port);
	cJSON_AddStringToObject(o, key, what);
	cJSON_AddItemToObject(o, "before", before ? before : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "after", after ? after : cJSON_CreateNull());
	cJSON_AddItemToArray(out, o);
}

cJSON *ng_fabric_ports_changed(const cJSON *before, const cJSON *after)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *pb = ng_json_get(before, "ports"), *pa = ng_json_get(after, "ports");
	for (const cJSON *p = cJSON_IsArray(pb) ? pb->child : NULL; out && p; p = p->next) {
		const char *hca = jstr(p, "hca");
		double port = jnum(p, "port", -1);
		if (!hca)
			continue;
		const cJSON *q = find_port(pa, hca, port);
		if (!q) {
			add_change(out, hca, port, "change", "gone", NULL, NULL);
			continue;
		}
		const char *sb = jstr(p, "state"), *sa = jstr(q, "state");
		if (sb && (!sa || strcmp(sa, sb) != 0))
			add_change(out, hca, port, "change", "state", cJSON_CreateString(sb),
			           sa ? cJSON_CreateString(sa) : NULL);
		double rb = jnum(p, "rate_gbps", NAN), ra = jnum(q, "rate_gbps", NAN);
		if (isfinite(rb) && !(ra == rb))
			add_change(out, hca, port, "change", "rate", cJSON_CreateNumber(rb),
			           isfinite(ra) ? cJSON_CreateNumber(ra) : NULL);
		const cJSON *cb = ng_json_get(p, "counters"), *ca = ng_json_get(q, "counters");
		for (const cJSON *c = cb ? cb->child : NULL; c; c = c->next) {
			if (!cJSON_IsNumber(c))
				continue;
			const cJSON *a = ng_json_get(ca, c->string);
			/* Unreadable afterwards is not "stayed still": it is named. */
			if (!cJSON_IsNumber(a) || a->valuedouble > c->valuedouble)
				add_change(out, hca, port, "counter", c->string,
				           cJSON_CreateNumber(c->valuedouble),
				           cJSON_IsNumber(a) ? cJSON_CreateNumber(a->valuedouble) : NULL);
		}
	}
	return out;
}

/* ---- one group --------------------------------------------------------------------- */

const char *ng_fabric_outcome_name(ng_fabric_outcome o)
{
	switch (o) {
	case NG_FT_PASS: return "pass";
	case NG_FT_SLOW: return "slow";
	case NG_FT_UNMEASURED: return "unmeasured";
	}
	return "?";
}

ng_fabric_outcome ng_fabric_judge_bw(const double *samples, size_t n, double expected,
                                     double fraction, double wrong, double *median)
{
	*median = NAN;
	if (n == 0 || !(expected > 0) || !isfinite(expected) || !(fraction > 0))
		return NG_FT_UNMEASURED;
	double work[64];
	size_t m = 0;
	for (size_t i = 0; i < n && m < 64; i++)
		if (isfinite(samples[i]) && samples[i] > 0)
			work[m++] = samples[i];
	if (m == 0)
		return NG_FT_UNMEASURED;
	*median = ng_np_median_inplace(work, m);
	if (wrong > 0)
		return NG_FT_SLOW; /* wrong answers fail the group whatever its speed */
	return *median < fraction * expected ? NG_FT_SLOW : NG_FT_PASS;
}

/* ---- bisection --------------------------------------------------------------------- */

const char *ng_fb_node_name(enum ng_fb_node s)
{
	switch (s) {
	case NG_FB_UNTESTED: return "untested";
	case NG_FB_PASSED: return "passed";
	case NG_FB_SLOW: return "slow";
	case NG_FB_NO_ANSWER: return "no-answer";
	case NG_FB_HELD: return "held";
	}
	return "?";
}

static size_t add_test(ng_fabric_bisect *b, const size_t *nodes, size_t n, size_t parent)
{
	if (b->n_tests == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 16;
		ng_fb_test *g = realloc(b->tests, nc * sizeof *g);
		if (!g) {
			b->oom = true;
			return SIZE_MAX;
		}
		b->tests = g;
		b->cap = nc;
	}
	ng_fb_test *t = &b->tests[b->n_tests];
	memset(t, 0, sizeof *t);
	t->nodes = malloc((n + 1) * sizeof *t->nodes);
	if (!t->nodes) {
		b->oom = true;
		return SIZE_MAX;
	}
	memcpy(t->nodes, nodes, n * sizeof *nodes);
	t->n = n;
	t->helper = SIZE_MAX;
	t->parent = parent;
	return b->n_tests++;
}

int ng_fabric_bisect_init(ng_fabric_bisect *b, size_t n, size_t n_refs)
{
	memset(b, 0, sizeof *b);
	b->n_nodes = n;
	b->n_refs = n_refs;
	b->state = calloc(n ? n : 1, sizeof *b->state);
	size_t *all = malloc((n ? n : 1) * sizeof *all);
	if (!b->state || !all) {
		free(all);
		ng_fabric_bisect_free(b);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		all[i] = i;
	if (n)
		add_test(b, all, n, SIZE_MAX);
	free(all);
	return b->oom ? -1 : 0;
}

void ng_fabric_bisect_free(ng_fabric_bisect *b)
{
	for (size_t i = 0; i < b->n_tests; i++)
		free(b->tests[i].nodes);
	free(b->tests);
	free(b->state);
	free(b->leaf);
	memset(b, 0, sizeof *b);
}

int ng_fabric_bisect_set_leaves(ng_fabric_bisect *b, const size_t *leaf)
{
	size_t total = b->n_nodes + b->n_refs;
	size_t *l = malloc((total ? total : 1) * sizeof *l);
	if (!l)
		return -1;
	memcpy(l, leaf, total * sizeof *l);
	free(b->leaf);
	b->leaf = l;
	return 0;
}

/* A node known good now: a reference peer, or a gang member a measured test passed. */
static bool known_good(const ng_fabric_bisect *b, size_t node)
{
	return node >= b->n_nodes || b->state[node] == NG_FB_PASSED;
}

size_t ng_fabric_bisect_next(ng_fabric_bisect *b, size_t *out, size_t cap)
{
	size_t total = b->n_nodes + b->n_refs, k = 0;
	bool *busy = calloc(total ? total : 1, sizeof *busy);
	if (!busy) {
		b->oom = true;
		return 0;
	}
	bool lone_waiting = false;
	for (size_t i = 0; i < b->n_tests && k < cap; i++) {
		ng_fb_test *t = &b->tests[i];
		if (t->round || t->done)
			continue;
		bool clash = false;
		for (size_t j = 0; j < t->n; j++)
			clash = clash || busy[t->nodes[j]];
		if (clash)
			continue;
		if (t->n == 1) {
			/* An all-reduce needs two nodes: a lone suspect gets a known-good peer. */
			size_t h = SIZE_MAX, me = t->nodes[0];
			/* Its own leaf first: beside a peer under the same switch, only
			 * the node changes; elsewhere, the path through the spine too. */
			if (b->leaf && b->leaf[me] != SIZE_MAX)
				for (size_t c = 0; c < total && h == SIZE_MAX; c++)
					if (c != me && !busy[c] && known_good(b, c) && b->leaf[c] == b->leaf[me])
						h = c;
			for (size_t c = 0; c < total && h == SIZE_MAX; c++)
				if (c != me && !busy[c] && known_good(b, c))
					h = c;
			if (h == SIZE_MAX) {
				lone_waiting = true;
				continue;
			}
			t->helper = h;
			t->nodes[t->n] = h;
			busy[h] = true;
		}
		for (size_t j = 0; j < t->n; j++)
			busy[t->nodes[j]] = true;
		t->round = b->rounds + 1;
		out[k++] = i;
	}
	free(busy);
	if (k == 0 && lone_waiting) {
		/* Nothing else runs and no known-good peer exists: these lone nodes
		 * cannot be measured apart. They stay uncovered, and finish holds them. */
		for (size_t i = 0; i < b->n_tests; i++)
			if (!b->tests[i].round && !b->tests[i].done)
				b->tests[i].done = true;
	}
	if (k)
		b->rounds++;
	return k;
}

void ng_fabric_bisect_report(ng_fabric_bisect *b, size_t ti, ng_fabric_outcome o)
{
	if (ti >= b->n_tests)
		return;
	ng_fb_test *t = &b->tests[ti];
	t->done = true;
	t->outcome = o;
	if (o == NG_FT_PASS) {
		for (size_t j = 0; j < t->n; j++)
			if (t->nodes[j] < b->n_nodes && b->state[t->nodes[j]] == NG_FB_UNTESTED)
				b->state[t->nodes[j]] = NG_FB_PASSED;
		return;
	}
	if (t->n == 1) {
		/* Alone beside a known-good peer: what the pair measured is this node's. */
		size_t node = t->nodes[0];
		if (node < b->n_nodes)
			b->state[node] = o == NG_FT_SLOW ? NG_FB_SLOW : NG_FB_NO_ANSWER;
		return;
	}
	size_t half = t->n / 2;
	size_t *copy = malloc(t->n * sizeof *copy);
	if (!copy) {
		b->oom = true;
		return;
	}
	memcpy(copy, t->nodes, t->n * sizeof *copy);
	size_t n = t->n; /* t moves when tests grow */
	add_test(b, copy, half, ti);
	add_test(b, copy + half, n - half, ti);
	free(copy);
}

void ng_fabric_bisect_finish(ng_fabric_bisect *b)
{
	for (size_t i = 0; i < b->n_nodes; i++)
		if (b->state[i] == NG_FB_UNTESTED)
			b->state[i] = NG_FB_HELD;
}

/* ---- paired tests ------------------------------------------------------------------ */

const char *ng_fabric_blame_name(ng_fabric_blame b)
{
	switch (b) {
	case NG_BLAME_NONE: return "none";
	case NG_BLAME_CANDIDATE: return "candidate";
	case NG_BLAME_PEER_A: return "peer-a";
	case NG_BLAME_PEER_B: return "peer-b";
	case NG_BLAME_UNKNOWN: return "unknown";
	}
	return "?";
}

ng_fabric_blame ng_fabric_attribute(ng_fabric_outcome ca, bool has_b, ng_fabric_outcome cb,
                                    ng_fabric_outcome ab, const char **why)
{
	if (ca == NG_FT_UNMEASURED || (has_b && cb == NG_FT_UNMEASURED)) {
		*why = "a paired test with the candidate measured nothing";
		return NG_BLAME_UNKNOWN;
	}
	if (!has_b) {
		if (ca == NG_FT_PASS) {
			*why = "fine with its one peer (a second peer would confirm)";
			return NG_BLAME_NONE;
		}
		*why = "slow with its one peer: the candidate, the peer or the path; a second peer "
		       "is needed to tell";
		return NG_BLAME_UNKNOWN;
	}
	if (ca == NG_FT_PASS && cb == NG_FT_PASS) {
		*why = "fine with both peers";
		return NG_BLAME_NONE;
	}
	if (ca == NG_FT_SLOW && cb == NG_FT_SLOW) {
		if (ab == NG_FT_PASS) {
			*why = "slow with two peers that are fine together";
			return NG_BLAME_CANDIDATE;
		}
		*why = ab == NG_FT_SLOW ? "the peers are slow together too: they are not a known-good pair"
		                        : "the peers were not measured together";
		return NG_BLAME_UNKNOWN;
	}
	*why = ca == NG_FT_SLOW ? "slow with peer A only: peer A, or the path to it"
	                        : "slow with peer B only: peer B, or the path to it";
	return ca == NG_FT_SLOW ? NG_BLAME_PEER_A : NG_BLAME_PEER_B;
}

size_t ng_fabric_rail_outliers(const double *gbps, size_t n, double fraction, double floor,
                               bool *slow, bool *unmeasured)
{
	size_t count = 0;
	double work[64];
	for (size_t k = 0; k < n; k++) {
		slow[k] = false;
		unmeasured[k] = !(isfinite(gbps[k]) && gbps[k] > 0);
	}
	for (size_t k = 0; k < n; k++) {
		if (unmeasured[k])
			continue;
		size_t m = 0;
		for (size_t j = 0; j < n && m < 64; j++)
			if (j != k && !unmeasured[j])
				work[m++] = gbps[j];
		double ref = m ? ng_np_median_inplace(work, m) : 0;
		double bar = fraction * (ref > floor ? ref : floor);
		if (bar > 0 && gbps[k] < bar) {
			slow[k] = true;
			count++;
		}
	}
	return count;
}
