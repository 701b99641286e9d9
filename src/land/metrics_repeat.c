/* Probation and repeat offenders as metrics (land/metrics.h): the nodes on
 * probation now and how probations ended, and per node its quarantines in
 * the lemon window, whether it is a lemon, the GPU counted most and the mean
 * time between its incidents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "land/metrics.h"
#include "store/probation.h"

int ng_metrics_render_repeat(ng_store *st, const char (*nodes)[256], const ng_lemon_verdict *v,
                             size_t n, ng_strbuf *o, ng_err *err)
{
	ng_store_probation *p = NULL;
	size_t np = 0;
	if (ng_store_list_probations(st, true, &p, &np, err) < 0)
		return -1;
	int rc = 0;
	ng_metrics_family(o, "nodegate_node_probation",
	                  "1 for each node on probation after a release: its next job (or canary "
	                  "job) decides whether it returns to admitted.");
	for (size_t i = 0; i < np && rc == 0; i++) {
		if (p[i].ended_at)
			continue;
		char name[128], id[32];
		rc = ng_store_node_name_of(st, p[i].node, name, sizeof name, err) < 0 ? -1 : 0;
		snprintf(id, sizeof id, "%lld", (long long)p[i].case_id);
		ng_metrics_sample(o, "nodegate_node_probation", 1, "node", p[i].node, "?node_name",
		                  name, "case", id, NULL);
	}
	ng_metrics_family(o, "nodegate_node_probation_started_timestamp_seconds",
	                  "When each node in force on probation was released (unix seconds).");
	for (size_t i = 0; i < np; i++) {
		char id[32];
		snprintf(id, sizeof id, "%lld", (long long)p[i].case_id);
		if (!p[i].ended_at)
			ng_metrics_sample(o, "nodegate_node_probation_started_timestamp_seconds",
			                  (double)p[i].started_at, "node", p[i].node, "case", id, NULL);
	}
	ng_metrics_family(o, "nodegate_probations_ended",
	                  "Probations ended, by outcome: passed (the node is admitted), failed (its "
	                  "case opened again), superseded (a new case opened meanwhile).");
	static const char *const outcomes[] = {"passed", "failed", "superseded"};
	for (size_t k = 0; k < 3; k++) {
		size_t count = 0;
		for (size_t i = 0; i < np; i++)
			count += p[i].ended_at && strcmp(p[i].outcome, outcomes[k]) == 0;
		ng_metrics_sample(o, "nodegate_probations_ended", (double)count, "outcome", outcomes[k],
		                  NULL);
	}
	free(p);
	if (rc < 0)
		return -1;

	char(*names)[128] = calloc(n ? n : 1, sizeof *names);
	if (!names)
		return ng_fail(err, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = ng_store_node_name_of(st, nodes[i], names[i], sizeof names[i], err) < 0 ? -1 : 0;
	ng_metrics_family(o, "nodegate_node_lemon",
	                  "1 for a node that is a lemon (quarantined quarantine.lemon_count times in "
	                  "lemon_days, as a node or one GPU): never released automatically.");
	for (size_t i = 0; i < n && rc == 0; i++)
		ng_metrics_sample(o, "nodegate_node_lemon", v[i].lemon, "node", nodes[i], "?node_name",
		                  names[i], NULL);
	ng_metrics_family(o, "nodegate_node_quarantines_in_window",
	                  "Each node's quarantines within quarantine.lemon_days, those of GPUs "
	                  "replaced since left out.");
	for (size_t i = 0; i < n && rc == 0; i++)
		ng_metrics_sample(o, "nodegate_node_quarantines_in_window", (double)v[i].node_count,
		                  "node", nodes[i], "?node_name", names[i], NULL);
	ng_metrics_family(o, "nodegate_gpu_quarantines_in_window",
	                  "The GPU (by UUID) the most of a node's quarantines in the window blamed, "
	                  "counted on whatever node it was in.");
	for (size_t i = 0; i < n && rc == 0; i++)
		if (v[i].gpu[0])
			ng_metrics_sample(o, "nodegate_gpu_quarantines_in_window", (double)v[i].gpu_count,
			                  "node", nodes[i], "?node_name", names[i], "UUID", v[i].gpu, NULL);
	ng_metrics_family(o, "nodegate_node_mean_seconds_between_incidents",
	                  "Mean time between a node's quarantines, over all of them (nodes with two "
	                  "or more).");
	for (size_t i = 0; i < n && rc == 0; i++)
		if (v[i].mtbi_s >= 0)
			ng_metrics_sample(o, "nodegate_node_mean_seconds_between_incidents", v[i].mtbi_s,
			                  "node", nodes[i], "?node_name", names[i], NULL);
	free(names);
	return rc;
}
