/* The metric registry: every metric name nodegate records, its canonical unit,
 * which direction is better, and where the figure comes from. Units are
 * converted once, at the edge, by the parser that reads the tool. */
#ifndef NODEGATE_CORE_METRIC_H
#define NODEGATE_CORE_METRIC_H

#include <stdbool.h>
#include <stddef.h>

struct ng_metric {
	const char *name;   /* exact, or a family ending in ".*" */
	const char *domain; /* compute, memory, storage, fabric, health */
	const char *unit;   /* canonical unit; "" for a status with no samples */
	bool higher_is_better;
	const char *provenance;
};

/* The entry for name (exact match first, then the longest family), or NULL. */
const struct ng_metric *ng_metric_lookup(const char *name);
const struct ng_metric *ng_metric_table(size_t *n);

#endif
