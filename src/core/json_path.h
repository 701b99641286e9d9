/* The strict JSON readers' common part: where in the document a reader is
 * ("gpus[2].pcie.width"), a refusal that names it, and the check that an
 * object holds only known keys, each once. Used by core/gpu_json.c and by
 * the synthetic NVML library (src/synth/), which compiles json_path.c into
 * itself rather than link nodegate_core. Needs cJSON alone. */
#ifndef NODEGATE_CORE_JSON_PATH_H
#define NODEGATE_CORE_JSON_PATH_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct ng_json_path {
	char path[256]; /* where in the document; "" at its top */
	char msg[768];  /* after a refusal: "path: what" */
};

/* Appends ".key" or "[i]"; returns the old length, for ng_json_path_pop. */
size_t ng_json_path_key(struct ng_json_path *p, const char *key);
size_t ng_json_path_index(struct ng_json_path *p, size_t i);
void ng_json_path_pop(struct ng_json_path *p, size_t old);
/* Writes "path: what" (or "what" at the top) into p->msg; returns -1. */
int ng_json_path_refuse(struct ng_json_path *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int ng_json_path_vrefuse(struct ng_json_path *p, const char *fmt, va_list ap);
/* obj is an object whose every member is one of keys[] and none is given
 * twice; else refuses, naming the key (and, with list_known, the keys it
 * knows). Returns 0 or -1. */
int ng_json_path_check_members(struct ng_json_path *p, const cJSON *obj, const char *const *keys,
                               size_t n_keys, bool list_known);
/* The same, and found[i] is the member of key i (NULL: absent), so a reader
 * takes each member without looking for it again. */
int ng_json_path_find_members(struct ng_json_path *p, const cJSON *obj, const char *const *keys,
                              size_t n_keys, bool list_known, const cJSON **found);

#endif
