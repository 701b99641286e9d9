/* The class baselines as an operator keeps them (`nodegate baseline`):
 * building every key the store has runs for, the one in force per key,
 * pinning one, and expiring a class after a planned change. How one
 * baseline is built and chosen for a run is flow/class_baseline.h. */
#ifndef NODEGATE_FLOW_BASELINES_H
#define NODEGATE_FLOW_BASELINES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "flow/ctx.h"
#include "store/store.h"

/* Which keys to build; NULL: any. */
typedef struct {
	const char *class_key, *software, *metric;
} ng_baseline_filter;

typedef struct {
	ng_store_baseline *rows; /* one per key built or refused, the store's order */
	size_t n;
	size_t built;            /* rows that are baselines ("ok"), not refusals */
	int64_t since;           /* the window's start: the policy's baseline_window_days */
} ng_baseline_build_result;

/* Builds the baselines of every key (class, software, metric) of the store's
 * accepted idle runs within the window that f lets through, keeping the
 * refusals (so `show` says which classes are establishing). 0; -1 with err
 * (NG_ERR_STORE; NG_ERR_INTERNAL out of memory), *out then holding the rows
 * built before the failure. free(out->rows) either way. */
int ng_baselines_build(const ng_ctx *ctx, const ng_baseline_filter *f,
                       ng_baseline_build_result *out, ng_err *err);

/* "ok": a baseline, not a refusal. */
bool ng_baseline_is_ok(const ng_store_baseline *b);

/* The baselines of class_key (NULL: every class) sorted by key, newest
 * first within one: with all, every row ever built; else one row per key,
 * the one in force (the newest pin, else the newest "ok", else the newest
 * refusal, which says why there is none). *rows malloc'd. 0, or -1 with an
 * NG_ERR_STORE err. */
int ng_baselines_in_force(const ng_ctx *ctx, const char *class_key, bool all,
                          ng_store_baseline **rows, size_t *n, ng_err *err);

typedef enum {
	NG_BASELINE_PINNED,     /* *b: the pinned row as it is now */
	NG_BASELINE_NO_SUCH,    /* no baseline with that id */
	NG_BASELINE_REFUSAL,    /* *b: a refusal, nothing to pin */
	NG_BASELINE_EXPIRED,    /* *b: expired; build a new one */
} ng_baseline_pin_state;

/* Pins baseline id under name in ctx's store (name fits b->pinned_name).
 * 0 with *state (and *b); -1 with an NG_ERR_STORE err. */
int ng_baseline_pin(const ng_ctx *ctx, int64_t id, const char *name,
                    ng_baseline_pin_state *state, ng_store_baseline *b, ng_err *err);

typedef struct {
	bool known;      /* the store has records or baselines of the class; else nothing done */
	int64_t expired; /* baselines expired */
	int64_t at;      /* when: samples of the class before it are retired (no metric) */
} ng_baseline_expiry;

/* Expires the baselines of class_key (of one metric, or NULL: all, which
 * also retires the class's samples taken before now), with reason. A class
 * the store does not know expires nothing (out->known false). 0, or -1 with
 * an NG_ERR_STORE err. */
int ng_baselines_expire(const ng_ctx *ctx, const char *class_key, const char *metric,
                        const char *reason, ng_baseline_expiry *out, ng_err *err);

/* ---- as JSON (baselines_json.c): what `nodegate baseline ... --json` prints ---- */

/* One stored row: id (null for a refusal never stored), class, software,
 * metric, unit, status and its sentence, median, cv, node_mad (null when
 * not computed), counts, times (null for never), pin and expiry. */
cJSON *ng_baseline_json(const ng_store_baseline *b);
/* The sentence for a row's status ("ok", "too-few-nodes", ...). */
const char *ng_baseline_row_status_text(const ng_store_baseline *b);
/* {"baselines": [...]}: show. */
cJSON *ng_baselines_json(const ng_store_baseline *rows, size_t n);
/* {"baselines": [...], "window_start": since}: build. */
cJSON *ng_baseline_build_json(const ng_baseline_build_result *res);
/* {"pinned": row}: pin. */
cJSON *ng_baseline_pin_json(const ng_store_baseline *pinned);
/* {class, metric (null: all), expired, samples_retired, at, reason}: expire. */
cJSON *ng_baseline_expiry_json(const char *class_key, const char *metric, const char *reason,
                               const ng_baseline_expiry *x);

#endif
