/* The store as Prometheus metrics: a text-exposition file for node_exporter's
 * textfile collector (docs/metrics.md). Reads the store, never writes it. */
#ifndef NODEGATE_LAND_METRICS_H
#define NODEGATE_LAND_METRICS_H

#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "judge/lemon.h"
#include "store/store.h"

/* The file name the textfile collector reads in its directory. */
#define NG_METRICS_FILE "nodegate.prom"

/* Appends every metric family, in text exposition format 0.0.4, to out.
 * now is the time written as nodegate_metrics_generated_timestamp_seconds. */
int ng_metrics_render(ng_store *st, int64_t now, ng_strbuf *out, ng_err *err);

/* Which series a host writes. With one store shared by the fleet, every
 * node writes its own (node) and one host the fleet's (fleet): never both
 * from every host, or each series is exported once per node. */
typedef enum {
	NG_METRICS_ALL,   /* everything the store holds (one store per host, or by hand) */
	NG_METRICS_NODE,  /* this node's GPUs and GPU checks only, and nodegate_build_info */
	NG_METRICS_FLEET, /* the fleet: admission, baselines, cases, counts; no per-GPU series */
} ng_metrics_scope;

/* ng_metrics_render for one scope; node names the node (its stable id)
 * for NG_METRICS_NODE. */
int ng_metrics_render_scope(ng_store *st, int64_t now, ng_metrics_scope scope, const char *node,
                            ng_strbuf *out, ng_err *err);

/* metrics_gpu.c: each GPU's last epilog/prolog/health severity and signals,
 * labelled as dcgm-exporter labels its series (gpu, UUID, pci_bus_id,
 * Hostname) so dashboards join them; each node's last GPU check outcome;
 * in the fleet scope, nodes by outcome. */
int ng_metrics_render_gpus(ng_store *st, ng_metrics_scope scope, const char *node, ng_strbuf *out,
                           ng_err *err);
/* metrics_shadow.c: the shadow policy's would-be drains and quarantines
 * per rule and class (none when no policy runs in shadow). */
int ng_metrics_render_shadow(ng_store *st, ng_strbuf *out, ng_err *err);
/* metrics_repeat.c: the nodes on probation and how probations ended; per
 * node of nodes[] (n of them) its lemon verdict v[] (flow/lemon.h computes
 * them: the policy's window is the caller's). */
int ng_metrics_render_repeat(ng_store *st, const char (*nodes)[256], const ng_lemon_verdict *v,
                             size_t n, ng_strbuf *out, ng_err *err);
/* nodegate_build_info{version="..."} 1 */
void ng_metrics_build_info(ng_strbuf *out);

/* The exposition primitives the files share: a family's HELP and TYPE
 * (gauge), and one sample with label pairs ending in NULL. */
void ng_metrics_family(ng_strbuf *out, const char *name, const char *help);
void ng_metrics_sample(ng_strbuf *out, const char *name, double v, ...);

/* Appends s as a label value: backslash, double quote and newline escaped. */
void ng_metrics_add_label_value(ng_strbuf *out, const char *s);

#endif
