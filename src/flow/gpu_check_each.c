/* One GPU's hang is that GPU's: after the whole node's NVML query hung, the
 * GPUs NVML lists (identity only), then each GPU in scope read in a child
 * of its own, all at once under the one deadline. A GPU fallen off the bus
 * or wedged in the driver then holds only its own child: its siblings are
 * judged, and it is kept with every field failed, which the rules call
 * unresponsive (judge/gpu_health.c) while its siblings answer. A hang of
 * the list itself, or of every GPU, is the node's: unknown, as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_fields.h"
#include "flow/gpu_check_run.h"

#define EACH_MAX_BYTES (1u << 20) /* one GPU's snapshot */

/* Whether the GPU is one the check reads past its identity (as
 * collect/nvml.c's minor filter says). */
static bool in_scope(const ng_gpu_state *g, const int *minors, size_t n_minors)
{
	if (!minors || g->minor.state != NG_FIELD_OK)
		return true;
	for (size_t i = 0; i < n_minors; i++)
		if (minors[i] >= 0 && (uint64_t)minors[i] == g->minor.value)
			return true;
	return false;
}

/* Its identity, and every field failed: what a GPU that never answered is. */
static void unanswered(ng_gpu_state *g, const char *why)
{
#define FAIL_FIELD(m) if (g->m.state != NG_FIELD_OK) g->m = (ng_gpu_field){.state = NG_FIELD_FAILED};
	NG_GPU_FIELDS(FAIL_FIELD)
#undef FAIL_FIELD
	snprintf(g->error, sizeof g->error, "%s", why);
}

/* The GPU list, identity only, in the first half of what is left. */
static int list_gpus(struct ng_gpu_check_result *c, ng_gpu_snapshot *list)
{
	struct ng_check_nvml_arg a = {.identity_only = true};
	ng_bounded b;
	double end = c->t_end, now = ng_check_now();
	c->t_end = now + (end - now) / 2;
	int rc = ng_check_run_bounded(c, "the NVML GPU list", ng_check_nvml_child, &a, EACH_MAX_BYTES,
	                              &b);
	c->t_end = end;
	char why[512];
	if (rc == 0 && (!b.finished || ng_check_nvml_answer(&b, list, why, sizeof why) < 0 ||
	                list->nvml != NG_FIELD_OK))
		rc = -1;
	ng_strbuf_free(&b.out);
	return rc;
}

int ng_check_nvml_each(struct ng_gpu_check_result *c, const int *minors, size_t n_minors)
{
	ng_gpu_snapshot *list = calloc(1, sizeof *list), *one = calloc(1, sizeof *one);
	ng_bounded *b = calloc(NG_GPU_MAX, sizeof *b);
	int rc = -1;
	if (!list || !one || !b || list_gpus(c, list) < 0)
		goto out;
	int idx[NG_GPU_MAX];
	size_t pick[NG_GPU_MAX], n = 0;
	struct ng_check_nvml_arg args[NG_GPU_MAX];
	const void *argp[NG_GPU_MAX];
	for (size_t i = 0; i < list->n_gpus && n < NG_GPU_MAX; i++) {
		if (!in_scope(&list->gpu[i], n_minors ? minors : NULL, n_minors))
			continue;
		idx[n] = list->gpu[i].index;
		args[n] = (struct ng_check_nvml_arg){.idx = &idx[n], .n_idx = 1};
		argp[n] = &args[n];
		pick[n++] = i;
	}
	ng_check_run_bounded_each(c, "an NVML query of one GPU", ng_check_nvml_child, argp, n,
	                          EACH_MAX_BYTES, b);
	size_t answered = 0, hung = 0;
	char why[512];
	/* Assembled in list, which becomes the snapshot: its header is NVML's. */
	ng_gpu_state *gpus = list->gpu;
	size_t kept = 0;
	for (size_t k = 0; k < n; k++) {
		ng_gpu_state g = gpus[pick[k]];
		if (b[k].finished && ng_check_nvml_answer(&b[k], one, why, sizeof why) == 0 &&
		    one->nvml == NG_FIELD_OK && one->n_gpus == 1 && strcmp(one->gpu[0].uuid, g.uuid) == 0) {
			g = one->gpu[0];
			answered++;
		} else if (!b[k].finished && !b[k].too_big) {
			char text[160];
			snprintf(text, sizeof text, "NVML did not answer for this GPU within the check's %g s (a query hung)",
			         c->deadline_s);
			unanswered(&g, text);
			hung++;
		} else {
			unanswered(&g, b[k].finished ? "NVML's answer for this GPU could not be read"
			                             : "NVML's answer for this GPU was too large");
		}
		gpus[kept++] = g;
	}
	if (n && !answered)
		goto out; /* every GPU hung: the node's hang */
	list->n_gpus = kept;
	memcpy(c->snap, list, sizeof *list);
	ng_check_note(c, "NVML hung on the whole node's query: each GPU read on its own, %zu of %zu "
	                 "answered%s",
	              answered, n, hung ? "; the rest hung" : "");
	rc = 0;
out:
	for (size_t k = 0; b && k < NG_GPU_MAX; k++)
		ng_strbuf_free(&b[k].out);
	free(b);
	free(one);
	free(list);
	return rc;
}
