/* Snapshot equality for tests: every member, the strings up to their ends
 * (not the padding, not the bytes after a string's end). Fails the test at
 * the first difference, naming it. */
#ifndef NODEGATE_TESTS_GPU_COMPARE_H
#define NODEGATE_TESTS_GPU_COMPARE_H

#include <stdio.h>
#include <string.h>

#include "core/gpu.h"
#include "core/gpu_fields.h"

static void gpu_compare_field(const ng_gpu_field *a, const ng_gpu_field *b, const char *where, size_t gpu,
                              const char *name)
{
	if (a->state != b->state || a->value != b->value || a->nvml_return != b->nvml_return)
		fail_msg("%s gpu[%zu].%s: state %d value %llu rc %d, then state %d value %llu rc %d", where, gpu, name,
		         (int)a->state, (unsigned long long)a->value, a->nvml_return, (int)b->state,
		         (unsigned long long)b->value, b->nvml_return);
}

#define GPU_COMPARE_STR(a, b, what)                                                               \
	do {                                                                                      \
		if (strcmp((a), (b)) != 0)                                                        \
			fail_msg("%s %s: \"%s\", then \"%s\"", where, what, (a), (b));            \
	} while (0)

static void assert_same_snapshot(const ng_gpu_snapshot *a, const ng_gpu_snapshot *b, const char *where)
{
	if (a->nvml != b->nvml || a->n_gpus != b->n_gpus)
		fail_msg("%s: nvml %d with %zu GPUs, then nvml %d with %zu", where, (int)a->nvml, a->n_gpus,
		         (int)b->nvml, b->n_gpus);
	GPU_COMPARE_STR(a->nvml_error, b->nvml_error, "nvml_error");
	GPU_COMPARE_STR(a->driver, b->driver, "driver");
	GPU_COMPARE_STR(a->nvml_version, b->nvml_version, "nvml_version");
	GPU_COMPARE_STR(a->source, b->source, "source");
	for (size_t i = 0; i < a->n_gpus; i++) {
		const ng_gpu_state *x = &a->gpu[i], *y = &b->gpu[i];
		char what[32];
		snprintf(what, sizeof what, "gpu[%zu]", i);
		if (x->index != y->index || x->lost != y->lost || x->n_links != y->n_links || x->n_xid != y->n_xid)
			fail_msg("%s %s: index %d lost %d links %zu xids %zu, then %d %d %zu %zu", where, what,
			         x->index, x->lost, x->n_links, x->n_xid, y->index, y->lost, y->n_links, y->n_xid);
		GPU_COMPARE_STR(x->uuid, y->uuid, what);
		GPU_COMPARE_STR(x->name, y->name, what);
		GPU_COMPARE_STR(x->bus, y->bus, what);
		GPU_COMPARE_STR(x->error, y->error, what);
#define GPU_COMPARE_FIELD(m) gpu_compare_field(&x->m, &y->m, where, i, #m);
		NG_GPU_FIELDS(GPU_COMPARE_FIELD)
#undef GPU_COMPARE_FIELD
		for (size_t l = 0; l < x->n_links; l++) {
#define LINK_COMPARE_FIELD(m) gpu_compare_field(&x->link[l].m, &y->link[l].m, where, i, "link." #m);
			NG_NVLINK_FIELDS(LINK_COMPARE_FIELD)
#undef LINK_COMPARE_FIELD
		}
		for (size_t k = 0; k < x->n_xid; k++) {
			if (x->xid[k].code != y->xid[k].code || x->xid[k].at_usec != y->xid[k].at_usec)
				fail_msg("%s %s xid[%zu]: %d at %lld, then %d at %lld", where, what, k, x->xid[k].code,
				         (long long)x->xid[k].at_usec, y->xid[k].code, (long long)y->xid[k].at_usec);
			GPU_COMPARE_STR(x->xid[k].message, y->xid[k].message, what);
		}
	}
}

#endif
