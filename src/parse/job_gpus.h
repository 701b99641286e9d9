/* The GPUs a job was given, from SLURM_JOB_GPUS or --gpus: pure parsing.
 *
 * Slurm writes a comma list of ordinals ("0,1,3"), sometimes ranges
 * ("0-3"), and, depending on its version and GresTypes, GPU UUIDs
 * ("GPU-8-4-4-4-12 hex"). MIG identifiers ("MIG-<uuid>", "MIG-GPU-<uuid>/1/0",
 * "GPU-<uuid>/1/0") are skipped with a note: a MIG slice's health is its
 * parent GPU's, and which parent is not something to guess. Anything else is
 * refused item by item with a note. An item is only ever compared with what
 * NVML says: it is never a path, never handed to a shell, and what is echoed
 * back in a note is cut short and escaped.
 *
 * At most NG_JOB_GPUS_MAX distinct GPUs are kept (duplicates folded); the
 * rest is counted and noted, never an error. An ordinal the node does not
 * have is a note when the list is resolved against the node's GPUs
 * (ng_job_gpus_resolve), not a fault. */
#ifndef NODEGATE_CLI_JOB_GPUS_H
#define NODEGATE_CLI_JOB_GPUS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/gpu.h"

#define NG_JOB_GPUS_MAX 256        /* distinct GPUs kept from one list */
#define NG_JOB_GPU_ORDINAL_MAX 1023 /* a larger ordinal is refused as implausible */
#define NG_JOB_GPU_ITEM_MAX 128    /* a longer item is refused unread */
#define NG_JOB_GPUS_NOTES_MAX 12   /* notes kept; the rest are counted */
#define NG_JOB_GPUS_ITEM_NOTES 6   /* of which about single items: the summaries always fit */
#define NG_JOB_GPU_UUID_LEN 40     /* "GPU-" + 36 */

typedef struct {
	int ordinal; /* the NVML index Slurm gave, or -1 for a UUID */
	char uuid[NG_JOB_GPU_UUID_LEN + 1];
} ng_job_gpu;

typedef struct {
	size_t n;
	ng_job_gpu gpu[NG_JOB_GPUS_MAX];

	size_t n_items;     /* non-empty items read */
	size_t n_mig;       /* MIG identifiers skipped */
	size_t n_refused;   /* items that are none of the above */
	size_t n_duplicate; /* items naming a GPU already in the list */
	size_t n_over_cap;  /* GPUs beyond NG_JOB_GPUS_MAX, dropped */

	size_t n_notes;
	char note[NG_JOB_GPUS_NOTES_MAX][200];
	size_t notes_dropped; /* notes beyond NG_JOB_GPUS_NOTES_MAX */
} ng_job_gpus;

/* Parses text (NULL or "" is an empty list). Never fails: what cannot be
 * used is a note. */
void ng_job_gpus_parse(const char *text, ng_job_gpus *out);

/* Adds a note (formatted), counting it when the notes are full. */
void ng_job_gpus_note(ng_job_gpus *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Marks keep[i] for each GPU of the node (node->gpu[i], a snapshot of every
 * GPU) the list names: an ordinal by NVML index, a UUID by exact
 * (case-insensitive) comparison with NVML's. An ordinal or UUID the node
 * does not have is a note. Returns how many were marked. */
size_t ng_job_gpus_resolve(ng_job_gpus *j, const ng_gpu_snapshot *node, bool keep[NG_GPU_MAX]);

/* Whether every entry is an ordinal (then no full list is needed to resolve
 * them). */
bool ng_job_gpus_ordinals_only(const ng_job_gpus *j);

/* Writes s into out (cap bytes) for a note: printable ASCII as is, anything
 * else as \xNN, cut at max_chars with "...". */
void ng_job_gpus_escape(const char *s, size_t len, size_t max_chars, char *out, size_t cap);

#endif
