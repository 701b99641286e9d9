/* Where a strict JSON reader is, and its refusals (core/json_path.h). */
#include "core/json_path.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Appends what snprintf(path, "%s%.60s" or "[%zu]") would, without
 * snprintf: a strict reader pushes a key for every field it reads, and a
 * replay reads every GPU check of a month. */
static void append(struct ng_json_path *p, size_t old, const char *s, size_t max)
{
	size_t room = sizeof p->path - 1 - old;
	char *o = p->path + old;
	for (size_t n = 0; s[n] && n < max && room; n++, room--)
		*o++ = s[n];
	*o = '\0';
}

size_t ng_json_path_key(struct ng_json_path *p, const char *key)
{
	size_t old = strlen(p->path);
	if (old)
		append(p, old, ".", 1);
	append(p, strlen(p->path), key, 60);
	return old;
}

size_t ng_json_path_index(struct ng_json_path *p, size_t i)
{
	char text[24], *d = text + sizeof text;
	*--d = '\0';
	*--d = ']';
	do
		*--d = (char)('0' + i % 10);
	while ((i /= 10) != 0);
	*--d = '[';
	size_t old = strlen(p->path);
	append(p, old, d, sizeof text);
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
	return ng_json_path_find_members(p, obj, keys, n_keys, list_known, NULL);
}

int ng_json_path_find_members(struct ng_json_path *p, const cJSON *obj, const char *const *keys,
                              size_t n_keys, bool list_known, const cJSON **found)
{
	if (found)
		for (size_t i = 0; i < n_keys; i++)
			found[i] = NULL;
	if (!cJSON_IsObject(obj))
		return ng_json_path_refuse(p, "expected an object");
	/* Members mostly come in the order of keys[] (the writers' order): the
	 * search for the next starts after the last found. Each key found is
	 * marked, so one given twice is found without comparing every pair. */
	uint64_t seen = 0;
	size_t next = 0;
	for (const cJSON *m = obj->child; m; m = m->next) {
		size_t hit = n_keys;
		for (size_t t = 0; t < n_keys && hit == n_keys; t++) {
			size_t i = (next + t) % n_keys;
			if (strcmp(m->string, keys[i]) == 0)
				hit = i;
		}
		if (hit == n_keys && !list_known)
			return ng_json_path_refuse(p, "unknown key \"%.60s\"", m->string);
		if (hit == n_keys) {
			char list[256] = "";
			for (size_t i = 0; i < n_keys; i++) {
				size_t l = strlen(list);
				snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", keys[i]);
			}
			return ng_json_path_refuse(p, "unknown key \"%.60s\" (known: %s)", m->string, list);
		}
		next = hit + 1;
		if (found)
			found[hit] = m;
		bool twice = false;
		if (hit < 64) {
			twice = (seen >> hit) & 1;
			seen |= (uint64_t)1 << hit;
		} else {
			for (const cJSON *q = obj->child; q != m && !twice; q = q->next)
				twice = strcmp(q->string, m->string) == 0;
		}
		if (twice)
			return ng_json_path_refuse(p, "key \"%.60s\" given twice", m->string);
	}
	return 0;
}
