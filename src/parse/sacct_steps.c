/* A job's steps from sacct (parse/sacct_steps.h). */
#include "parse/sacct_steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

#define FIELDS 5

/* Splits line on '|' in place into exactly FIELDS fields; false otherwise. */
static bool split(char *line, char **f)
{
	size_t n = 0;
	f[n++] = line;
	for (char *p = line; *p; p++)
		if (*p == '|') {
			if (n == FIELDS)
				return false;
			*p = '\0';
			f[n++] = p + 1;
		}
	return n == FIELDS;
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* "123.0", "123_7.2", "123+1.0": a numbered step. */
static bool numbered_step(const char *id)
{
	const char *dot = strrchr(id, '.');
	return dot && dot > id && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1);
}

size_t ng_sacct_steps_parse(const char *text, size_t len, ng_sacct_step *out, size_t cap,
                            size_t *bad)
{
	size_t n = 0, pos = 0;
	*bad = 0;
	char line[1024];
	while (text && pos < len && n < cap) {
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		size_t l = end - pos;
		bool cut = l >= sizeof line;
		if (!cut) {
			memcpy(line, text + pos, l);
			line[l] = '\0';
			cut = strlen(line) != l; /* a NUL inside */
		}
		pos = end < len ? end + 1 : end;
		if (!cut && l && line[l - 1] == '\r')
			line[--l] = '\0';
		if (!cut && l == 0)
			continue;
		char *f[FIELDS];
		if (cut || !split(line, f) || !printable(line)) {
			(*bad)++;
			continue;
		}
		for (size_t i = 1; i < FIELDS; i++)
			if (!printable(f[i])) {
				f[0] = NULL;
				break;
			}
		if (!f[0] || !f[0][0] || strlen(f[0]) >= sizeof out->id) {
			(*bad)++;
			continue;
		}
		if (!numbered_step(f[0]))
			continue; /* the allocation, .batch, .extern, .interactive */
		ng_sacct_step *s = &out[n];
		char *e;
		errno = 0;
		long long el = strtoll(f[3], &e, 10);
		if (!f[3][0] || *e || errno || el < 0 || strlen(f[1]) >= sizeof s->name ||
		    strlen(f[2]) >= sizeof s->node) {
			(*bad)++;
			continue;
		}
		memset(s, 0, sizeof *s);
		snprintf(s->id, sizeof s->id, "%s", f[0]);
		snprintf(s->name, sizeof s->name, "%s", f[1]);
		/* a host list ("a[1-2]", "a,b") is several nodes: not one node's time */
		if (!strpbrk(f[2], "[,") && strcmp(f[2], "None") != 0)
			snprintf(s->node, sizeof s->node, "%s", f[2]);
		s->elapsed_s = el;
		size_t w = strcspn(f[4], " ");
		snprintf(s->state, sizeof s->state, "%.*s", (int)(w < sizeof s->state ? w : sizeof s->state - 1),
		         f[4]);
		n++;
	}
	return n;
}

static bool counts(const ng_sacct_step *s)
{
	return s->node[0] && strcmp(s->state, "COMPLETED") == 0;
}

double ng_sacct_gang_ratio(const ng_sacct_step *s, size_t n, const char *node, size_t min_peers,
                           size_t *peers, double *own, double *median, char *step, size_t cap)
{
	double best = -1;
	double *v = malloc((n ? n : 1) * sizeof *v), *work = malloc((n ? n : 1) * sizeof *work);
	if (!v || !work) {
		free(v);
		free(work);
		return -1;
	}
	for (size_t i = 0; node && i < n; i++) {
		if (!counts(&s[i]) || strcmp(s[i].node, node) != 0)
			continue;
		/* the first of node's steps of this name speaks for the name */
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = counts(&s[k]) && strcmp(s[k].node, node) == 0 &&
			       strcmp(s[k].name, s[i].name) == 0;
		if (seen)
			continue;
		size_t m = 0;
		for (size_t k = 0; k < n; k++)
			if (counts(&s[k]) && strcmp(s[k].node, node) != 0 &&
			    strcmp(s[k].name, s[i].name) == 0)
				v[m++] = (double)s[k].elapsed_s;
		if (m < min_peers || m == 0)
			continue;
		double med = ng_np_median(v, m, work);
		if (!(med > 0))
			continue;
		double r = (double)s[i].elapsed_s / med;
		if (r > best) {
			best = r;
			if (peers)
				*peers = m;
			if (own)
				*own = (double)s[i].elapsed_s;
			if (median)
				*median = med;
			if (step && cap)
				snprintf(step, cap, "%s", s[i].name);
		}
	}
	free(v);
	free(work);
	return best;
}
