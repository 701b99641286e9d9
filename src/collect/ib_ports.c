/* Port state, rate and error counters from sysfs (ib_ports.h). */
#include "collect/ib_ports.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/ib_counters.h"

/* A path cut short names a file that is not there: the port reads as
 * unreadable, never as a value, so truncation is safe here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* sysfs files are small; one read of at most cap-1 bytes. -1 when unreadable. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < cap) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of a directory, sorted; NULL when it cannot be opened. */
static char **list_dir(const char *path, size_t *n)
{
	*n = 0;
	DIR *d = opendir(path);
	if (!d)
		return NULL;
	char **names = NULL;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **g = realloc(names, nc * sizeof *g);
			if (!g)
				break;
			names = g;
			cap = nc;
		}
		names[*n] = strdup(e->d_name);
		if (names[*n])
			(*n)++;
	}
	closedir(d);
	if (!names)
		names = calloc(1, sizeof *names);
	if (names && *n)
		qsort(names, *n, sizeof *names, by_name);
	return names;
}

static void free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void unreadable(cJSON *port, const char *file)
{
	cJSON *u = cJSON_GetObjectItemCaseSensitive(port, "unreadable");
	if (!u)
		u = cJSON_AddArrayToObject(port, "unreadable");
	cJSON_AddItemToArray(u, cJSON_CreateString(file));
}

static cJSON *read_port(const char *dir, const char *hca, const char *port)
{
	char path[PATH_MAX], buf[256], name[64];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "hca", hca);
	cJSON_AddNumberToObject(o, "port", atoi(port));
	int code;
	snprintf(path, sizeof path, "%s/state", dir);
	ssize_t n = read_small(path, buf, sizeof buf);
	if (n >= 0 && ng_ib_parse_state(buf, (size_t)n, &code, name, sizeof name)) {
		cJSON_AddStringToObject(o, "state", name);
		cJSON_AddNumberToObject(o, "state_code", code);
	} else {
		unreadable(o, "state");
	}
	snprintf(path, sizeof path, "%s/phys_state", dir);
	n = read_small(path, buf, sizeof buf);
	if (n >= 0 && ng_ib_parse_state(buf, (size_t)n, &code, name, sizeof name))
		cJSON_AddStringToObject(o, "phys_state", name);
	else
		unreadable(o, "phys_state");
	double gbps;
	snprintf(path, sizeof path, "%s/rate", dir);
	n = read_small(path, buf, sizeof buf);
	if (n >= 0 && ng_ib_parse_rate(buf, (size_t)n, &gbps, name, sizeof name)) {
		cJSON_AddNumberToObject(o, "rate_gbps", gbps);
		if (name[0])
			cJSON_AddStringToObject(o, "rate", name);
	} else {
		unreadable(o, "rate");
	}
	snprintf(path, sizeof path, "%s/link_layer", dir);
	n = read_small(path, buf, sizeof buf);
	if (n > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		cJSON_AddStringToObject(o, "link_layer", buf);
	}
	cJSON *counters = cJSON_AddObjectToObject(o, "counters");
	for (size_t i = 0; i < ng_ib_n_error_counters; i++) {
		uint64_t v;
		snprintf(path, sizeof path, "%s/counters/%s", dir, ng_ib_error_counters[i]);
		n = read_small(path, buf, sizeof buf);
		if (n < 0 && errno == ENOENT)
			continue; /* not every driver has every counter */
		char file[96];
		snprintf(file, sizeof file, "counters/%s", ng_ib_error_counters[i]);
		if (n >= 0 && ng_ib_parse_counter(buf, (size_t)n, &v))
			cJSON_AddNumberToObject(counters, ng_ib_error_counters[i], (double)v);
		else
			unreadable(o, file);
	}
	return o;
}

cJSON *ng_ib_ports_read(const char *root, ng_err *err)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc) {
		ng_fail(err, "out of memory");
		return NULL;
	}
	const char *r = root && *root ? root : "/";
	cJSON_AddStringToObject(doc, "root", r);
	cJSON *ports = cJSON_AddArrayToObject(doc, "ports");
	char base[PATH_MAX];
	size_t rl = strlen(r);
	while (rl > 0 && r[rl - 1] == '/')
		rl--; /* "/" and "dir/" join like "dir" */
	snprintf(base, sizeof base, "%.*s/sys/class/infiniband", (int)rl, r);
	size_t nh;
	char **hcas = list_dir(base, &nh);
	if (!hcas || nh == 0) {
		char note[PATH_MAX + 64];
		snprintf(note, sizeof note, "no HCA under %s", base);
		cJSON_AddStringToObject(doc, "note", note);
	}
	for (size_t i = 0; i < nh; i++) {
		char pdir[PATH_MAX];
		snprintf(pdir, sizeof pdir, "%s/%s/ports", base, hcas[i]);
		size_t np;
		char **pl = list_dir(pdir, &np);
		for (size_t k = 0; k < np; k++) {
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%s/%s", pdir, pl[k]);
			cJSON_AddItemToArray(ports, read_port(dir, hcas[i], pl[k]));
		}
		free_list(pl, np);
	}
	free_list(hcas, nh);
	return doc;
}
