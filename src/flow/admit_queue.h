/* Admission where the seed puts it, in Slurm (docs/slurm.md): the admission
 * queue's landing on node features, and which jobs the Prolog screens the
 * nodes of. */
#ifndef NODEGATE_FLOW_ADMIT_QUEUE_H
#define NODEGATE_FLOW_ADMIT_QUEUE_H

#include <stddef.h>

#include "core/error.h"
#include "flow/ctx.h"

/* Lands an admission outcome on the node's Slurm features
 * (land/slurm_features.h): admitted and admitted-warn gain ng_admitted,
 * anything else loses it with why in the node's comment. What happened is
 * a note and a "land.features" audit entry of node_id (when ctx has a
 * store); a failed landing is a note, never an error. 0 landed (or no
 * landing asked), 1 not landed, -1 when the store failed. slurm_node NULL:
 * $SLURMD_NODENAME, else the short host name. */
int ng_flow_admit_queue(const ng_ctx *ctx, const char *node_id, const char *slurm_node,
                        const char *outcome, const char *why, ng_err *err);

/* admit --unscreen LIST: every node of the Slurm host list (gpu-[001-004])
 * loses ng_admitted and gains unscreened, the admission queue's way back
 * in, each said as a note. *failed: the nodes not landed. -1 for a list
 * that does not read. */
int ng_flow_admit_unscreen(const ng_ctx *ctx, const char *list, size_t *failed);

/* Whether job job_id asks its nodes to be screened in the Prolog
 * (judge/prolog_ask.h), read through `scontrol show job`. 1 yes, 0 no, -1
 * it could not be read; why says which. */
int ng_flow_prolog_asks(const ng_ctx *ctx, const char *job_id, const char *slurm_node,
                        char *why, size_t len);

struct ng_admit_run;
/* The admission queue's landing of one run (admit --queue): r->outcome on
 * the node's Slurm features (node: its Slurm name, else the run's), the
 * reason from the run's case or first note; what happened is a note of the
 * run. -1 only when the store failed. */
int ng_admit_land_queue(ng_store *st, const ng_ctx *ctx, struct ng_admit_run *r,
                        const char *node, ng_err *err);

#endif
