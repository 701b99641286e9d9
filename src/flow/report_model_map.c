/* A string -> dense index table for the report: node ids, host names and
 * class keys are looked up once per row of a month of records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow/report_model.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

long ng_rmap_find(const ng_rmap *m, const char *key)
{
	if (!m->n_slots)
		return -1;
	for (size_t i = hash(key) & (m->n_slots - 1);; i = (i + 1) & (m->n_slots - 1)) {
		size_t v = m->slots[i];
		if (v == 0)
			return -1;
		if (strcmp(m->keys[v - 1], key) == 0)
			return (long)(v - 1);
	}
}

static int grow(ng_rmap *m)
{
	size_t n = m->n_slots ? m->n_slots * 2 : 64;
	size_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t k = 0; k < m->n; k++) {
		size_t i = hash(m->keys[k]) & (n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = k + 1;
	}
	free(m->slots);
	m->slots = slots;
	m->n_slots = n;
	return 0;
}

long ng_rmap_add(ng_rmap *m, const char *key)
{
	long found = ng_rmap_find(m, key);
	if (found >= 0)
		return found;
	/* At most half full, so a probe always ends at an empty slot. */
	if ((m->n + 1) * 2 > m->n_slots && grow(m) < 0)
		return -1;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		char **keys = realloc(m->keys, cap * sizeof *keys);
		if (!keys)
			return -1;
		m->keys = keys;
		m->cap = cap;
	}
	char *copy = strdup(key);
	if (!copy)
		return -1;
	m->keys[m->n] = copy;
	size_t i = hash(key) & (m->n_slots - 1);
	while (m->slots[i])
		i = (i + 1) & (m->n_slots - 1);
	m->slots[i] = ++m->n;
	return (long)(m->n - 1);
}

void ng_rmap_free(ng_rmap *m)
{
	for (size_t k = 0; k < m->n; k++)
		free(m->keys[k]);
	free(m->keys);
	free(m->slots);
	memset(m, 0, sizeof *m);
}
