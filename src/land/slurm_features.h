/* The admission queue in Slurm, through node features (docs/slurm.md,
 * "The admission queue"): a node nodegate admitted carries the feature
 * ng_admitted, which every production job requires (job_submit.lua adds it);
 * a node that came back and was not screened since carries `unscreened`,
 * which only the admission partition's jobs ask for. Landing an admission
 * outcome edits only those two words of the node's AvailableFeatures and
 * ActiveFeatures, keeps every other feature as it is, and writes the
 * reason into the node's Comment only when the comment is empty or
 * nodegate's own ("ng:" in front): an operator's comment is never
 * overwritten. Through scontrol, as land/slurm.h drains (no shell, every
 * call under a timeout, read back). */
#ifndef NODEGATE_LAND_SLURM_FEATURES_H
#define NODEGATE_LAND_SLURM_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "land/slurm.h"

#define NG_SLURM_ADMITTED_FEATURE "ng_admitted"
#define NG_SLURM_UNSCREENED_FEATURE "unscreened"
#define NG_SLURM_FEATURES_MAX 1024
#define NG_SLURM_COMMENT_MAX 200

typedef struct {
	char available[NG_SLURM_FEATURES_MAX], active[NG_SLURM_FEATURES_MAX];
	bool comment_ours; /* the node's Comment is empty or starts "ng:" */
} ng_slurm_features;

typedef struct {
	ng_slurm_result r;    /* node, calls, message */
	ng_slurm_features before, after;
	char comment[NG_SLURM_COMMENT_MAX + 1]; /* the comment sent; "" cleared or untouched */
	bool comment_left_alone; /* an operator's comment: not overwritten */
	bool admitted_after;     /* read back: ActiveFeatures has ng_admitted */
} ng_slurm_queue_result;

/* Whether the comma-separated list holds the word. */
bool ng_slurm_feature_has(const char *list, const char *word);

/* list without `drop` (NULL: none) and with `add` (NULL: none) appended
 * when missing, every other word kept in order. "(null)" reads as empty.
 * -1 when it does not fit in len. */
int ng_slurm_feature_edit(const char *list, const char *add, const char *drop, char *out,
                          size_t len);

/* From `scontrol show node NODE -o`: AvailableFeatures=, ActiveFeatures=
 * ("(null)" is empty) and whether the Comment is nodegate's or empty.
 * -1 when there is no AvailableFeatures= (not a node's answer). */
int ng_slurm_parse_features(const char *text, ng_slurm_features *out);

/* Lands an admission outcome: admitted (admitted or admitted-warn) gains
 * ng_admitted and loses unscreened; anything else loses ng_admitted and
 * gains unscreened, with "ng:OUTCOME: WHY" in the comment. Returns 0 when
 * the read-back shows it, -1 when it could not be done (err, out->r.message). */
int ng_slurm_land_queue(const ng_slurm_opts *o, bool admitted, const char *outcome,
                        const char *why, ng_slurm_queue_result *out, ng_err *err);

/* The result as a JSON object text for the audit log (free() it). */
char *ng_slurm_queue_json(const ng_slurm_queue_result *r);

#endif
