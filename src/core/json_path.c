/* Where a strict JSON reader is, and its refusals (core/json_path.h). */
#include "core/json_path.h"

#include <stdio.h>
#include <string.h>

size_t ng_json_path_key(struct ng_json_path *p, const char *key)
{
	size_t old = strlen(p->path);
	snprintf(p->path + old, sizeof p->path - old, "%s%.60s", old ? "." : "", key);
	return old;
}

size_t ng_json_path_index(struct ng_json_path *p, size_t i)
{
	size_t old = strlen(p->path);
	snprintf(p->path + old, sizeof p->path - old, "[%zu]", i);
	return old;
}

void ng_json_path_pop(struct ng_json_path *p, size_t old) { p->path[old] = '\0'; }

int ng_json_path_vrefuse(struct ng_json_path *p, const char *fmt, va_list ap)
{
	char what[384];
	vsnprintf(what, sizeof what, fmt, ap);
	if (p->path[0])
		snprintf(p->msg, sizeof p->msg, "%s: %s", p->path, what);
	else
		snprintf(p->msg, sizeof p->msg, "%s", what);
	return -1;
}

int ng_json_path_refuse(struct ng_json_path *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ng_json_path_vrefuse(p, fmt, ap);
	va_end(ap);
	return -1;
}

int ng_json_path_check_members(struct ng_json_path *p, const cJSON *obj, const char *const *keys,
                               size_t n_keys, bool list_known)
{
	if (!cJSON_IsObject(obj))
		return ng_json_path_refuse(p, "expected an object");
	for (const cJSON *m = obj->child; m; m = m->next) {
		bool known = false;
		for (size_t i = 0; i < n_keys && !known; i++)
			known = strcmp(m->string, keys[i]) == 0;
		if (!known && !list_known)
			return ng_json_path_refuse(p, "unknown key \"%.60s\"", m->string);
		if (!known) {
			char list[256] = "";
			for (size_t i = 0; i < n_keys; i++) {
				size_t l = strlen(list);
				snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", keys[i]);
			}
			return ng_json_path_refuse(p, "unknown key \"%.60s\" (known: %s)", m->string, list);
		}
		for (const cJSON *q = obj->child; q != m; q = q->next)
			if (strcmp(q->string, m->string) == 0)
				return ng_json_path_refuse(p, "key \"%.60s\" given twice", m->string);
	}
	return 0;
}
