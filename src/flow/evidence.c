/* The failing domain's evidence, captured and kept (flow/evidence.h). */
#include "flow/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/bounded.h"
#include "collect/evidence.h"
#include "collect/identity.h"
#include "store/probation.h"

#define EVIDENCE_DEADLINE_S 15.0
#define EVIDENCE_MAX_BYTES (4u << 20)

struct collect_call {
	const char *domain;
	const ng_evidence_opts *o;
};

/* In the child: the collector's evidence as one JSON text on wfd. */
static void collect_child(int wfd, const void *arg)
{
	const struct collect_call *k = arg;
	cJSON *ev = ng_evidence_collect(k->domain, k->o);
	char *body = ev ? cJSON_PrintUnformatted(ev) : NULL;
	if (body)
		ng_write_all(wfd, body, strlen(body));
}

/* The domain's evidence, from a child under the deadline: what it wrote,
 * or an object saying why there is none. NULL for a domain without a
 * collector (or out of memory). */
static cJSON *collect_bounded(const char *domain, const ng_evidence_opts *o, double deadline_s)
{
	if (!ng_evidence_has_collector(domain))
		return NULL;
	ng_bounded b;
	struct collect_call k = {domain, o};
	int rc = ng_run_bounded(ng_monotonic_now() + deadline_s, collect_child, &k,
	                        EVIDENCE_MAX_BYTES, &b);
	cJSON *ev = rc == 0 && b.finished && !b.too_big && b.out.s ? cJSON_Parse(b.out.s) : NULL;
	ng_strbuf_free(&b.out);
	if (!ev) {
		char why[200];
		snprintf(why, sizeof why,
		         rc < 0 ? "the collector could not be started"
		         : b.finished ? "the collector's output could not be read"
		                      : "the collector did not finish within %.0f s (NVML or a file read "
		                        "hung?): nothing it read is kept",
		         deadline_s);
		ev = cJSON_CreateObject();
		cJSON_AddStringToObject(ev, "domain", domain);
		cJSON_AddStringToObject(ev, "incomplete", why);
	}
	return ev;
}

/* Fabric counters only count up: what they say of this run is their
 * change since the node's earlier read ("+3 symbol errors"), not the sum
 * since the HCA was last reset. */
static int mark_changes(ng_store *st, const ng_evidence_capture_in *in, const char *domain,
                        cJSON *ev, ng_err *err)
{
	if (strcmp(domain, "fabric") != 0 || cJSON_GetObjectItemCaseSensitive(ev, "incomplete"))
		return 0;
	cJSON *prev = NULL;
	if (ng_store_previous_evidence(st, in->node, domain, in->run_id, &prev, err) < 0)
		return -1;
	ng_evidence_fabric_since(ev, prev);
	cJSON_Delete(prev);
	return 0;
}

int ng_evidence_capture(ng_store *st, const ng_evidence_capture_in *in, ng_err *err)
{
	char id[256], name[128];
	ng_node_names(id, sizeof id, name, sizeof name);
	if (!in->node || strcmp(in->node, id) != 0)
		return 0;
	ng_evidence_opts o = {.records = in->records};
	int kept = 0;
	for (size_t i = 0; i < in->n_domains; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = in->domains[k] && in->domains[i] && !strcmp(in->domains[k], in->domains[i]);
		cJSON *ev = seen || !in->domains[i]
		                ? NULL
		                : collect_bounded(in->domains[i], &o,
		                                  in->deadline_s > 0 ? in->deadline_s
		                                                     : EVIDENCE_DEADLINE_S);
		if (!ev)
			continue;
		if (mark_changes(st, in, in->domains[i], ev, err) < 0) {
			cJSON_Delete(ev);
			return -1;
		}
		char *body = cJSON_PrintUnformatted(ev);
		cJSON_Delete(ev);
		if (!body)
			return ng_fail(err, "out of memory");
		int rc = ng_store_put_evidence(st, in->node, in->run_id, in->domains[i], in->now, body,
		                               err);
		cJSON_free(body);
		if (rc < 0)
			return -1;
		kept++;
	}
	return kept;
}
