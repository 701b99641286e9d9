/* Repeated keys in a parsed JSON document (core/json.h): a record or a
 * policy that names a key twice is refused, never read as its last value.
 * Apart from json.c's reader, which cJSON's parse keeps every duplicate for. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/strbuf.h"

static int cmp_name(const void *pa, const void *pb)
{
	const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
	return strcmp(a->string, b->string);
}

/* The first repeated key of obj itself, or NULL. */
static const char *repeated_key(const cJSON *obj)
{
	size_t n = 0;
	for (const cJSON *c = obj->child; c; c = c->next)
		n++;
	if (n <= 32) {
		for (const cJSON *c = obj->child; c; c = c->next)
			for (const cJSON *d = c->next; d; d = d->next)
				if (strcmp(c->string, d->string) == 0)
					return c->string;
		return NULL;
	}
	const cJSON **v = malloc(n * sizeof *v);
	if (!v)
		return NULL; /* out of memory: the caller's parse already holds the whole tree */
	size_t i = 0;
	for (const cJSON *c = obj->child; c; c = c->next)
		v[i++] = c;
	qsort(v, n, sizeof *v, cmp_name);
	const char *found = NULL;
	for (i = 0; i + 1 < n && !found; i++)
		if (strcmp(v[i]->string, v[i + 1]->string) == 0)
			found = v[i]->string;
	free(v);
	return found;
}

static bool find_duplicate(const cJSON *v, ng_strbuf *path, int depth)
{
	if (!v || depth > 1000)
		return false;
	size_t mark = path->len;
	if (cJSON_IsObject(v)) {
		const char *k = repeated_key(v);
		if (k) {
			if (path->len)
				ng_strbuf_addc(path, '.');
			ng_strbuf_adds(path, k);
			return true;
		}
		for (const cJSON *c = v->child; c; c = c->next) {
			if (path->len)
				ng_strbuf_addc(path, '.');
			ng_strbuf_adds(path, c->string);
			if (find_duplicate(c, path, depth + 1))
				return true;
			path->len = mark;
			if (path->s)
				path->s[mark] = '\0';
		}
	} else if (cJSON_IsArray(v)) {
		size_t i = 0;
		for (const cJSON *c = v->child; c; c = c->next, i++) {
			ng_strbuf_printf(path, "[%zu]", i);
			if (find_duplicate(c, path, depth + 1))
				return true;
			path->len = mark;
			if (path->s)
				path->s[mark] = '\0';
		}
	}
	return false;
}

bool ng_json_find_duplicate(const cJSON *v, ng_strbuf *path)
{
	return find_duplicate(v, path, 0);
}
