/* GPU health as Prometheus metrics (land/metrics.h, docs/metrics.md).
 *
 * Labels follow dcgm-exporter's (gpu, UUID, pci_bus_id, Hostname), so a
 * dashboard or an alert joins nodegate's verdict on a GPU with DCGM's
 * readings of it; Hostname is the node's scheduler name (docs/naming.md)
 * and node its stable id, as nodegate's other series carry it. A severity
 * is a one-hot family (1 for the current one, 0
 * for the others), so "GPU fatal on node X" is one expression and a GPU
 * that stops being fatal stops alerting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "land/metrics.h"

#ifndef NODEGATE_VERSION
#define NODEGATE_VERSION "unknown"
#endif

static const char *const severities[] = {"ok", "transient", "unresponsive", "unknown", "degraded", "fatal"};
#define N_SEVERITIES (sizeof severities / sizeof *severities)
static const char *const outcomes[] = {"ok", "transient", "unresponsive", "unknown", "degraded", "fatal",
                                       "n/a"};
#define N_OUTCOMES (sizeof outcomes / sizeof *outcomes)

void ng_metrics_build_info(ng_strbuf *out)
{
	ng_metrics_family(out, "nodegate_build_info", "The nodegate build that wrote these series (always 1).");
	ng_metrics_sample(out, "nodegate_build_info", 1, "version", NODEGATE_VERSION, NULL);
}

/* dcgm-exporter writes pci_bus_id as NVML does: "00000000:3B:00.0". */
static void dcgm_bus(const char *bus, char out[32])
{
	unsigned d, b, v;
	if (sscanf(bus, "%x:%x:%x", &d, &b, &v) == 3)
		snprintf(out, 32, "%08X:%02X:%02X.0", d, b, v);
	else
		snprintf(out, 32, "%s", bus);
}

/* The node's scheduler name, else its id: rows come grouped by node, so
 * one look-up a node. */
struct names {
	ng_store *st;
	char node[256], name[128];
};

static const char *host_of(struct names *nm, const char *node)
{
	if (strcmp(nm->node, node) != 0) {
		ng_err ignored;
		snprintf(nm->node, sizeof nm->node, "%s", node);
		if (ng_store_node_name_of(nm->st, node, nm->name, sizeof nm->name, &ignored) != 1)
			nm->name[0] = '\0';
	}
	return nm->name[0] ? nm->name : node;
}

static void render_gpu(ng_strbuf *o, const ng_store_gpu *g, const char *node, const char *host,
                       const char *name)
{
	char idx[24], bus[32];
	snprintf(idx, sizeof idx, "%lld", (long long)g->index);
	dcgm_bus(g->bus, bus);
	if (strcmp(name, "nodegate_gpu_check_severity") == 0) {
		bool known = false;
		for (size_t k = 0; k < N_SEVERITIES; k++) {
			known = known || strcmp(g->severity, severities[k]) == 0;
			ng_metrics_sample(o, name, strcmp(g->severity, severities[k]) == 0, "Hostname", host, "node", node, "gpu", idx,
			                  "UUID", g->uuid, "pci_bus_id", bus, "mode", g->mode, "severity",
			                  severities[k], NULL);
		}
		if (!known)
			ng_metrics_sample(o, name, 1, "Hostname", host, "node", node, "gpu", idx, "UUID", g->uuid, "pci_bus_id", bus,
			                  "mode", g->mode, "severity", g->severity, NULL);
	} else if (strcmp(name, "nodegate_gpu_check_signal") == 0) {
		/* "signal=severity signal=severity ..." as the check kept it */
		char sig[sizeof g->signals];
		snprintf(sig, sizeof sig, "%s", g->signals);
		for (char *save = NULL, *t = strtok_r(sig, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(t, '=');
			if (!eq)
				continue;
			*eq = '\0';
			ng_metrics_sample(o, name, 1, "Hostname", host, "node", node, "gpu", idx, "UUID", g->uuid, "pci_bus_id", bus,
			                  "signal", t, "severity", eq + 1, NULL);
		}
	} else {
		ng_metrics_sample(o, name, (double)g->checked_at, "Hostname", host, "node", node, "gpu", idx, "UUID", g->uuid,
		                  "pci_bus_id", bus, NULL);
	}
}

int ng_metrics_render_gpus(ng_store *st, ng_metrics_scope scope, const char *node, ng_strbuf *out,
                           ng_err *err)
{
	ng_store_gpu_check_run *runs = NULL;
	size_t n_runs = 0;
	if (ng_store_last_gpu_check_runs(st, scope == NG_METRICS_NODE ? node : NULL, &runs, &n_runs, err) < 0)
		return -1;
	struct names nm = {.st = st};
	if (scope != NG_METRICS_FLEET) {
		ng_store_gpu *gpus = NULL;
		char(*hosts)[256] = NULL;
		size_t n = 0;
		if (ng_store_all_gpus(st, scope == NG_METRICS_NODE ? node : NULL, &gpus, &hosts, &n, err) < 0) {
			free(runs);
			return -1;
		}
		static const struct {
			const char *name, *help;
		} fam[] = {
			{"nodegate_gpu_check_severity",
			 "Each GPU's severity in the last epilog, prolog or health check that judged it: 1 for it, 0 "
			 "for the others (labels as dcgm-exporter's)."},
			{"nodegate_gpu_check_signal",
			 "Each reason behind that severity: its signal (xid.79, gpu.missing, pcie.width, ...) and its "
			 "own severity."},
			{"nodegate_gpu_check_timestamp_seconds", "When that check ran (unix seconds)."},
		};
		for (size_t f = 0; f < sizeof fam / sizeof *fam; f++) {
			ng_metrics_family(out, fam[f].name, fam[f].help);
			for (size_t i = 0; i < n; i++)
				if (gpus[i].checked_at > 0)
					render_gpu(out, &gpus[i], hosts[i], host_of(&nm, hosts[i]), fam[f].name);
		}
		free(gpus);
		free(hosts);
		ng_metrics_family(out, "nodegate_gpu_check_outcome",
		                  "Each node's last epilog, prolog and health outcome: 1 for it, 0 for the others "
		                  "(unknown and n/a are monitoring failures, never healthy).");
		for (size_t i = 0; i < n_runs; i++)
			for (size_t k = 0; k < N_OUTCOMES; k++)
				ng_metrics_sample(out, "nodegate_gpu_check_outcome", strcmp(runs[i].outcome, outcomes[k]) == 0,
				                  "Hostname", host_of(&nm, runs[i].node), "node", runs[i].node, "mode",
				                  runs[i].mode, "outcome", outcomes[k], NULL);
		ng_metrics_family(out, "nodegate_gpu_check_last_timestamp_seconds",
		                  "When each node's last epilog, prolog or health check ran (unix seconds).");
		for (size_t i = 0; i < n_runs; i++)
			ng_metrics_sample(out, "nodegate_gpu_check_last_timestamp_seconds", (double)runs[i].at,
			                  "Hostname", host_of(&nm, runs[i].node), "node", runs[i].node, "mode",
			                  runs[i].mode, NULL);
	}
	if (scope != NG_METRICS_NODE) {
		/* A fleet-wide monitoring failure is one event: many nodes unknown at once. */
		ng_metrics_family(out, "nodegate_gpu_check_nodes",
		                  "Nodes by the outcome of their last GPU check of each mode.");
		static const char *const modes[] = {"epilog", "prolog", "health"};
		for (size_t m = 0; m < 3; m++)
			for (size_t k = 0; k < N_OUTCOMES; k++) {
				size_t c = 0;
				for (size_t i = 0; i < n_runs; i++)
					c += strcmp(runs[i].mode, modes[m]) == 0 && strcmp(runs[i].outcome, outcomes[k]) == 0;
				ng_metrics_sample(out, "nodegate_gpu_check_nodes", (double)c, "mode", modes[m], "outcome",
				                  outcomes[k], NULL);
			}
	}
	free(runs);
	return out->oom ? ng_fail(err, "out of memory") : 0;
}
