/* Slurm's topology.conf (topology.h). */
#include "parse/topology.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse/sacct.h"

void ng_topology_free(ng_topology *t)
{
	if (!t)
		return;
	free(t->switches);
	free(t->nodes);
	memset(t, 0, sizeof *t);
}

struct pending { /* Switches= read before every switch is known */
	size_t parent, line;
	char *list;
};

struct reader {
	ng_topology *t;
	size_t cap_sw, cap_nodes;
	struct pending *pend;
	size_t n_pend, cap_pend;
	ng_err *err;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static size_t find_switch(const ng_topology *t, const char *name)
{
	for (size_t i = 0; i < t->n_switches; i++)
		if (strcmp(t->switches[i].name, name) == 0)
			return i;
	return SIZE_MAX;
}

/* A word of the line: KEY=VALUE up to the next blank. */
static const char *word(const char *p, const char *end, const char **key, size_t *klen,
                        const char **val, size_t *vlen)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end)
		return NULL;
	const char *w = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	const char *eq = memchr(w, '=', (size_t)(p - w));
	*key = w;
	*klen = eq ? (size_t)(eq - w) : (size_t)(p - w);
	*val = eq ? eq + 1 : p;
	*vlen = eq ? (size_t)(p - eq - 1) : 0;
	return p;
}

static bool key_is(const char *k, size_t n, const char *want)
{
	return n == strlen(want) && strncasecmp(k, want, n) == 0;
}

/* Names of a host list, malloc'd (parse/sacct.h reads the list). */
struct names {
	char **v;
	size_t n, cap;
};

static int collect(const char *name, size_t len, void *arg)
{
	struct names *ns = arg;
	(void)len;
	if (ns->n == ns->cap)
		return 1;
	if (!(ns->v[ns->n] = strdup(name)))
		return 1;
	ns->n++;
	return 0;
}

/* Expands list into at most cap names; n of them in out, false when the
 * list cannot be read (or is longer than cap). */
static bool expand(const char *list, char **out, size_t cap, size_t *n)
{
	struct names ns = {out, 0, cap};
	long got = ng_hostlist_expand(list, strlen(list), cap, collect, &ns);
	*n = ns.n;
	return got >= 0;
}

static int add_nodes(struct reader *r, size_t sw, const char *list, size_t line)
{
	ng_topology *t = r->t;
	char **names = malloc(NG_TOPOLOGY_MAX_NODES * sizeof *names);
	if (!names)
		return ng_fail_as(r->err, NG_ERR_INTERNAL, "out of memory reading topology line %zu", line);
	size_t n;
	bool bad = !expand(list, names, NG_TOPOLOGY_MAX_NODES, &n);
	int rc = 0;
	if (bad)
		rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: cannot read the host list "
		                "Nodes=%.80s", line, list);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (strlen(names[i]) >= NG_TOPOLOGY_NAME_MAX) {
			rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: node name %.80s... is "
			                "longer than %d characters", line, names[i], NG_TOPOLOGY_NAME_MAX - 1);
			break;
		}
		if (t->n_nodes >= NG_TOPOLOGY_MAX_NODES ||
		    grow((void **)&t->nodes, &r->cap_nodes, t->n_nodes + 1, sizeof *t->nodes) < 0) {
			rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: more than %d nodes", line,
			                NG_TOPOLOGY_MAX_NODES);
			break;
		}
		ng_topology_node *nd = &t->nodes[t->n_nodes++];
		memcpy(nd->name, names[i], strlen(names[i]) + 1);
		nd->leaf = sw;
		t->switches[sw].n_nodes++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int read_line(struct reader *r, const char *p, const char *end, size_t line)
{
	ng_topology *t = r->t;
	const char *k, *v, *name = NULL, *nodes = NULL, *sws = NULL;
	size_t kl, vl, name_l = 0, nodes_l = 0, sws_l = 0;
	bool any = false;
	while ((p = word(p, end, &k, &kl, &v, &vl))) {
		if (!any && key_is(k, kl, "Include"))
			return ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: Include is not followed "
			                  "(no file is opened from a file read): give the included file", line);
		any = true;
		if (key_is(k, kl, "SwitchName"))
			name = v, name_l = vl;
		else if (key_is(k, kl, "Nodes"))
			nodes = v, nodes_l = vl;
		else if (key_is(k, kl, "Switches"))
			sws = v, sws_l = vl;
	}
	if (!any)
		return 0;
	if (!name || name_l == 0)
		return ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: no SwitchName=", line);
	if (name_l >= NG_TOPOLOGY_NAME_MAX)
		return ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: switch name longer than %d "
		                  "characters", line, NG_TOPOLOGY_NAME_MAX - 1);
	char nm[NG_TOPOLOGY_NAME_MAX];
	memcpy(nm, name, name_l);
	nm[name_l] = '\0';
	if (find_switch(t, nm) != SIZE_MAX)
		return ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: switch %s is defined twice",
		                  line, nm);
	if (t->n_switches >= NG_TOPOLOGY_MAX_SWITCHES ||
	    grow((void **)&t->switches, &r->cap_sw, t->n_switches + 1, sizeof *t->switches) < 0)
		return ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: more than %d switches", line,
		                  NG_TOPOLOGY_MAX_SWITCHES);
	size_t sw = t->n_switches++;
	ng_topology_switch *s = &t->switches[sw];
	memset(s, 0, sizeof *s);
	memcpy(s->name, nm, name_l + 1);
	s->parent = SIZE_MAX;
	s->line = line;
	if (nodes && nodes_l) {
		char *list = strndup(nodes, nodes_l);
		if (!list)
			return ng_fail_as(r->err, NG_ERR_INTERNAL, "out of memory");
		int rc = add_nodes(r, sw, list, line);
		free(list);
		if (rc < 0)
			return -1;
	}
	if (sws && sws_l) {
		if (grow((void **)&r->pend, &r->cap_pend, r->n_pend + 1, sizeof *r->pend) < 0)
			return ng_fail_as(r->err, NG_ERR_INTERNAL, "out of memory");
		char *list = strndup(sws, sws_l);
		if (!list)
			return ng_fail_as(r->err, NG_ERR_INTERNAL, "out of memory");
		r->pend[r->n_pend++] = (struct pending){sw, line, list};
	}
	return 0;
}

/* Switches= of every line, now that every switch is known. */
static int link_parents(struct reader *r)
{
	ng_topology *t = r->t;
	char **names = malloc(NG_TOPOLOGY_MAX_SWITCHES * sizeof *names);
	if (!names)
		return ng_fail_as(r->err, NG_ERR_INTERNAL, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < r->n_pend && rc == 0; i++) {
		size_t n;
		bool bad = !expand(r->pend[i].list, names, NG_TOPOLOGY_MAX_SWITCHES, &n);
		if (bad)
			rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: cannot read the switch "
			                "list Switches=%.80s", r->pend[i].line, r->pend[i].list);
		for (size_t k = 0; k < n && rc == 0; k++) {
			size_t c = find_switch(t, names[k]);
			if (c == SIZE_MAX)
				rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: Switches= names %.64s, "
				                "which no line defines", r->pend[i].line, names[k]);
			else if (c == r->pend[i].parent)
				rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: switch %s is listed "
				                "under itself", r->pend[i].line, names[k]);
			else if (t->switches[c].parent != SIZE_MAX)
				rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: switch %s already "
				                "has a parent (%s): a tree has one", r->pend[i].line, names[k],
				                t->switches[t->switches[c].parent].name);
			else
				t->switches[c].parent = r->pend[i].parent;
		}
		for (size_t k = 0; k < n; k++)
			free(names[k]);
	}
	free(names);
	/* A loop: walking up from any switch must end within n steps. */
	for (size_t i = 0; i < t->n_switches && rc == 0; i++) {
		size_t s = i, steps = 0;
		while (s != SIZE_MAX && steps <= t->n_switches)
			s = t->switches[s].parent, steps++;
		if (s != SIZE_MAX)
			rc = ng_fail_as(r->err, NG_ERR_INPUT, "topology line %zu: switch %s is in a loop of "
			                "Switches=", t->switches[i].line, t->switches[i].name);
	}
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const ng_topology_node *)a)->name, ((const ng_topology_node *)b)->name);
}

int ng_topology_parse(const char *text, size_t len, ng_topology *out, ng_err *err)
{
	memset(out, 0, sizeof *out);
	struct reader r = {.t = out, .err = err};
	/* Lines joined where one ends in a backslash, comments cut. */
	char *line = malloc(len + 1);
	if (!line)
		return ng_fail_as(err, NG_ERR_INTERNAL, "out of memory reading the topology");
	size_t ln = 0, at = 1, start_line = 1;
	int rc = 0;
	bool in_comment = false;
	for (size_t i = 0; i <= len && rc == 0; i++) {
		char c = i < len ? text[i] : '\n';
		if (c == '\0')
			c = ' ';
		if (c == '\n') {
			at++;
			if (ln && line[ln - 1] == '\\' && !in_comment) {
				line[ln - 1] = ' ';
				continue;
			}
			rc = read_line(&r, line, line + ln, start_line);
			ln = 0;
			in_comment = false;
			start_line = at;
			continue;
		}
		if (c == '#')
			in_comment = true;
		if (in_comment)
			continue;
		line[ln++] = c == '\r' ? ' ' : c;
	}
	free(line);
	if (rc == 0)
		rc = link_parents(&r);
	for (size_t i = 0; i < r.n_pend; i++)
		free(r.pend[i].list);
	free(r.pend);
	if (rc == 0 && out->n_nodes) {
		qsort(out->nodes, out->n_nodes, sizeof *out->nodes, by_name);
		for (size_t i = 1; i < out->n_nodes && rc == 0; i++)
			if (strcmp(out->nodes[i].name, out->nodes[i - 1].name) == 0) {
				size_t a = out->nodes[i - 1].leaf, b = out->nodes[i].leaf;
				rc = a == b ? ng_fail_as(err, NG_ERR_INPUT, "topology line %zu: node %s is "
				                         "listed twice under switch %s", out->switches[a].line,
				                         out->nodes[i].name, out->switches[a].name)
				            : ng_fail_as(err, NG_ERR_INPUT, "topology: node %s is under two "
				                         "switches, %s (line %zu) and %s (line %zu)",
				                         out->nodes[i].name, out->switches[a].name,
				                         out->switches[a].line, out->switches[b].name,
				                         out->switches[b].line);
			}
	}
	if (rc < 0)
		ng_topology_free(out);
	return rc;
}

size_t ng_topology_leaf(const ng_topology *t, const char *node)
{
	if (!t || !node || !t->n_nodes)
		return SIZE_MAX;
	size_t lo = 0, hi = t->n_nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->nodes[mid].name, node);
		if (c == 0)
			return t->nodes[mid].leaf;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

const char *ng_topology_leaf_name(const ng_topology *t, const char *node)
{
	size_t s = ng_topology_leaf(t, node);
	return s == SIZE_MAX ? NULL : t->switches[s].name;
}

size_t ng_topology_common(const ng_topology *t, size_t a, size_t b)
{
	if (!t || a >= t->n_switches || b >= t->n_switches)
		return SIZE_MAX;
	/* The parse refused loops, so each walk ends. */
	for (size_t x = a; x != SIZE_MAX; x = t->switches[x].parent)
		for (size_t y = b; y != SIZE_MAX; y = t->switches[y].parent)
			if (x == y)
				return x;
	return SIZE_MAX;
}
