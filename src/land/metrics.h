/* The store as Prometheus metrics: a text-exposition file for node_exporter's
 * textfile collector (docs/metrics.md). Reads the store, never writes it. */
#ifndef NODEGATE_LAND_METRICS_H
#define NODEGATE_LAND_METRICS_H

#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "store/store.h"

/* The file name the textfile collector reads in its directory. */
#define NG_METRICS_FILE "nodegate.prom"

/* Appends every metric family, in text exposition format 0.0.4, to out.
 * now is the time written as nodegate_metrics_generated_timestamp_seconds. */
int ng_metrics_render(ng_store *st, int64_t now, ng_strbuf *out, ng_err *err);

/* Appends s as a label value: backslash, double quote and newline escaped. */
void ng_metrics_add_label_value(ng_strbuf *out, const char *s);
/* metrics_gpu.c: nodegate_gpu_health and nodegate_gpu_check_timestamp_seconds
 * from each node's last GPU check in the store. */
int ng_metrics_render_gpu(ng_strbuf *out, ng_sql *db, ng_err *err);

#endif
