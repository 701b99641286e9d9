/* Identity of the CPUs, memory and NUMA layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/identity_parts.h"
#include "collect/identity_read.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

struct pair {
	long pkg, core;
};

static int by_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->pkg != y->pkg)
		return x->pkg < y->pkg ? -1 : 1;
	return (x->core > y->core) - (x->core < y->core);
}

/* Sockets and physical cores from (package, core) pairs, one per thread. */
static void add_topology(cJSON *cpu, struct pair *v, size_t n)
{
	if (!n)
		return;
	qsort(v, n, sizeof *v, by_pair);
	size_t sockets = 1, cores = 1;
	for (size_t i = 1; i < n; i++) {
		if (v[i].pkg != v[i - 1].pkg)
			sockets++;
		if (by_pair(&v[i], &v[i - 1]) != 0)
			cores++;
	}
	cJSON_AddNumberToObject(cpu, "sockets", (double)sockets);
	cJSON_AddNumberToObject(cpu, "cores", (double)cores);
}

static bool push(struct pair **v, size_t *n, size_t *cap, struct pair p)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct pair *t = realloc(*v, nc * sizeof *t);
		if (!t)
			return false;
		*v = t;
		*cap = nc;
	}
	(*v)[(*n)++] = p;
	return true;
}

/* x86 cpuinfo names the package and core of every processor. */
static size_t cpuinfo_topology(const char *text, struct pair **v, size_t *cap, long *threads)
{
	size_t n = 0;
	long pkg = -1;
	*threads = 0;
	bool complete = true;
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		long x;
		if (strncmp(line, "processor", 9) == 0) {
			(*threads)++;
			if (pkg == -1 && *threads > 1)
				complete = false;
			pkg = -1;
		} else if (sscanf(line, "physical id : %ld", &x) == 1) {
			pkg = x;
		} else if (sscanf(line, "core id : %ld", &x) == 1 && pkg >= 0) {
			if (!push(v, &n, cap, (struct pair){pkg, x}))
				return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	/* Pairs for only some processors would undercount: use none. */
	return complete && (long)n == *threads ? n : 0;
}

/* The same from sysfs, where cpuinfo lacks it (arm64, some hypervisors). */
static size_t sysfs_topology(const char *root, struct pair **v, size_t *cap)
{
	char **names;
	size_t m = ng_id_list(root, "/sys/devices/system/cpu", "cpu", &names), n = 0;
	for (size_t i = 0; i < m; i++) {
		char p1[128], p2[128];
		long long pkg, core;
		if (strspn(names[i] + 3, "0123456789") != strlen(names[i] + 3) || !names[i][3])
			continue;
		snprintf(p1, sizeof p1, "/sys/devices/system/cpu/%s/topology/physical_package_id", names[i]);
		snprintf(p2, sizeof p2, "/sys/devices/system/cpu/%s/topology/core_id", names[i]);
		if (ng_id_read_int(root, p1, &pkg) && ng_id_read_int(root, p2, &core))
			if (!push(v, &n, cap, (struct pair){(long)pkg, (long)core}))
				break;
	}
	ng_id_free_list(names, m);
	return n;
}

/* The widest vector unit, so a CPU probe's class can tell AVX-512 nodes. */
static const char *vector_isa(const char *flags)
{
	static const char *const order[][2] = {
		{"avx512f", "avx512"}, {"avx2", "avx2"}, {"avx", "avx"}, {"sse2", "sse2"},
		{"sve2", "sve2"}, {"sve", "sve"}, {"asimd", "neon"},
	};
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		size_t l = strlen(order[i][0]);
		for (const char *p = strstr(flags, order[i][0]); p; p = strstr(p + 1, order[i][0]))
			if ((p == flags || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0'))
				return order[i][1];
	}
	return NULL;
}

void ng_id_cpu(cJSON *prof, const char *root)
{
	cJSON *cpu = cJSON_CreateObject();
	char *t = ng_id_read(root, "/proc/cpuinfo");
	char buf[4096];
	struct pair *v = NULL;
	size_t cap = 0, n = 0;
	if (t) {
		if (ng_id_field(t, "model name", ':', buf, sizeof buf))
			cJSON_AddStringToObject(cpu, "model", buf);
		if (ng_id_field(t, "vendor_id", ':', buf, sizeof buf))
			cJSON_AddStringToObject(cpu, "vendor", buf);
		if (ng_id_field(t, "microcode", ':', buf, sizeof buf))
			cJSON_AddStringToObject(cpu, "microcode", buf);
		const char *flags = ng_id_field(t, "flags", ':', buf, sizeof buf);
		if (!flags)
			flags = ng_id_field(t, "Features", ':', buf, sizeof buf);
		const char *isa = flags ? vector_isa(flags) : NULL;
		if (isa)
			cJSON_AddStringToObject(cpu, "vector", isa);
		long threads;
		n = cpuinfo_topology(t, &v, &cap, &threads);
		if (threads > 0)
			cJSON_AddNumberToObject(cpu, "threads", (double)threads);
		free(t);
	}
	if (!n)
		n = sysfs_topology(root, &v, &cap);
	add_topology(cpu, v, n);
	free(v);
	long long khz;
	if (ng_id_read_int(root, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", &khz))
		cJSON_AddNumberToObject(cpu, "max_mhz", (double)(khz / 1000));
	/* The governor changes what a compute probe measures: it belongs to the profile. */
	ng_id_add_file(cpu, "governor", root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	ng_id_add_file(cpu, "online", root, "/sys/devices/system/cpu/online");
	if (cpu->child)
		cJSON_AddItemToObject(prof, "cpu", cpu);
	else
		cJSON_Delete(cpu);
}

static bool meminfo_kib(const char *text, const char *key, double *kib)
{
	char buf[64];
	if (!ng_id_field(text, key, ':', buf, sizeof buf))
		return false;
	char *end;
	double v = strtod(buf, &end);
	if (end == buf || v < 0)
		return false;
	/* "kB" means KiB in meminfo; a count (HugePages_Total) has no unit. */
	*kib = v;
	return true;
}

void ng_id_memory(cJSON *prof, const char *root)
{
	char *t = ng_id_read(root, "/proc/meminfo");
	cJSON *mem = cJSON_CreateObject();
	double kib, pages;
	if (t && meminfo_kib(t, "MemTotal", &kib)) {
		cJSON_AddNumberToObject(mem, "total_bytes", kib * 1024.0);
		/* Whole GiB: firmware and kernel reservations differ by megabytes
		 * between identical nodes, and the class should not. */
		cJSON_AddNumberToObject(mem, "gib", round(kib * 1024.0 / GIB));
	}
	if (t && meminfo_kib(t, "HugePages_Total", &pages) && meminfo_kib(t, "Hugepagesize", &kib)) {
		cJSON_AddNumberToObject(mem, "hugepages", pages);
		cJSON_AddNumberToObject(mem, "hugepage_bytes", kib * 1024.0);
	}
	free(t);
	ng_id_dimms(mem, root);
	if (mem->child)
		cJSON_AddItemToObject(prof, "memory", mem);
	else
		cJSON_Delete(mem);
}

void ng_id_numa(cJSON *prof, const char *root)
{
	char **names;
	size_t m = ng_id_list(root, "/sys/devices/system/node", "node", &names);
	cJSON *layout = cJSON_CreateArray();
	for (size_t i = 0; i < m; i++) {
		char *end;
		long id = strtol(names[i] + 4, &end, 10);
		if (end == names[i] + 4 || *end)
			continue; /* "node" files that are not node directories */
		cJSON *node = cJSON_CreateObject();
		cJSON_AddNumberToObject(node, "node", (double)id);
		char *cpus = ng_id_readf(root, "/sys/devices/system/node/%s/cpulist", names[i]);
		if (cpus)
			cJSON_AddStringToObject(node, "cpus", cpus);
		free(cpus);
		char *mi = ng_id_readf(root, "/sys/devices/system/node/%s/meminfo", names[i]);
		/* "Node 0 MemTotal:  123 kB" */
		const char *p = mi ? strstr(mi, "MemTotal:") : NULL;
		double kib;
		if (p && sscanf(p, "MemTotal: %lf", &kib) == 1)
			cJSON_AddNumberToObject(node, "memory_bytes", kib * 1024.0);
		free(mi);
		cJSON_AddItemToArray(layout, node);
	}
	ng_id_free_list(names, m);
	int n = cJSON_GetArraySize(layout);
	if (n > 0) {
		cJSON *numa = cJSON_AddObjectToObject(prof, "numa");
		cJSON_AddNumberToObject(numa, "nodes", n);
		cJSON_AddItemToObject(numa, "layout", layout);
	} else {
		cJSON_Delete(layout);
	}
}
