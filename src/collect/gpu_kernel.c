/* The kernel's view of the GPUs (collect/gpu_kernel.h). */
#include "collect/gpu_kernel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/nvidia_proc.h"

#define SMALL_FILE_MAX 4096

static void note(ng_kernel_view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(ng_kernel_view *v, const char *fmt, ...)
{
	if (v->n_notes == NG_KERNEL_NOTES_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->note[v->n_notes++], sizeof v->note[0], fmt, ap);
	va_end(ap);
}

/* A small file, NUL-terminated; -1 when it cannot be read. O_NONBLOCK: a
 * FIFO planted in a scenario root never blocks the check. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < cap) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

static ng_kernel_gpu *entry_for(ng_kernel_view *v, const char *bus)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->gpu[i].bus, bus) == 0)
			return &v->gpu[i];
	if (v->n == NG_GPU_MAX)
		return NULL;
	ng_kernel_gpu *g = &v->gpu[v->n++];
	memset(g, 0, sizeof *g);
	snprintf(g->bus, sizeof g->bus, "%s", bus);
	g->minor = -1;
	return g;
}

static void read_pci(const char *root, ng_kernel_view *v)
{
	char dir[PATH_MAX / 2];
	snprintf(dir, sizeof dir, "%.1900s/sys/bus/pci/devices", root);
	DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			note(v, "kernel view: %s not read (%s): GPUs on the PCI bus unknown", dir, strerror(errno));
		return;
	}
	v->pci_read = true;
	size_t unreadable = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char bus[16];
		if (de->d_name[0] == '.' || strlen(de->d_name) > 32 || ng_gpu_bus_normalize(de->d_name, bus) < 0)
			continue;
		char path[PATH_MAX], text[64];
		uint32_t vendor, cls;
		snprintf(path, sizeof path, "%s/%.32s/vendor", dir, de->d_name);
		ssize_t n = read_small(path, text, sizeof text);
		if (n < 0) {
			unreadable++;
			continue;
		}
		if (ng_sysfs_hex_parse(text, (size_t)n, &vendor) < 0 || vendor != NG_PCI_VENDOR_NVIDIA)
			continue;
		snprintf(path, sizeof path, "%s/%.32s/class", dir, de->d_name);
		n = read_small(path, text, sizeof text);
		if (n < 0) {
			unreadable++;
			continue;
		}
		if (ng_sysfs_hex_parse(text, (size_t)n, &cls) < 0 || !ng_pci_class_is_gpu(cls))
			continue; /* an NVSwitch, an audio function, a bridge */
		ng_kernel_gpu *g = entry_for(v, bus);
		if (!g) {
			note(v, "kernel view: more than %d NVIDIA GPUs on the PCI bus: the rest not read", NG_GPU_MAX);
			break;
		}
		g->on_pci = true;
		char link[PATH_MAX], target[PATH_MAX];
		snprintf(link, sizeof link, "%s/%.32s/driver", dir, de->d_name);
		ssize_t l = readlink(link, target, sizeof target - 1);
		if (l > 0) {
			target[l] = '\0';
			const char *base = strrchr(target, '/');
			base = base ? base + 1 : target;
			size_t k = 0;
			for (; base[k] && k < sizeof g->driver - 1; k++) {
				unsigned char c = (unsigned char)base[k];
				g->driver[k] = c > 0x20 && c < 0x7f ? (char)c : '?';
			}
			g->driver[k] = '\0';
		}
	}
	closedir(d);
	if (unreadable)
		note(v, "kernel view: %zu PCI device%s under %s could not be read", unreadable,
		     unreadable == 1 ? "" : "s", dir);
}

static void read_proc(const char *root, ng_kernel_view *v)
{
	char dir[PATH_MAX / 2];
	snprintf(dir, sizeof dir, "%.1900s/proc/driver/nvidia/gpus", root);
	DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			note(v, "kernel view: %s not read (%s): device minors unknown", dir, strerror(errno));
		return;
	}
	v->proc_read = true;
	size_t unreadable = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) > 32)
			continue;
		char path[PATH_MAX], text[SMALL_FILE_MAX];
		snprintf(path, sizeof path, "%s/%.32s/information", dir, de->d_name);
		ssize_t n = read_small(path, text, sizeof text);
		ng_nvidia_gpu_info info;
		if (n < 0 || ng_nvidia_gpu_info_parse(text, (size_t)n, &info) < 0) {
			unreadable++;
			continue;
		}
		char bus[16];
		if (!info.bus[0] && ng_gpu_bus_normalize(de->d_name, bus) == 0)
			snprintf(info.bus, sizeof info.bus, "%s", bus);
		if (!info.bus[0]) {
			unreadable++;
			continue;
		}
		ng_kernel_gpu *g = entry_for(v, info.bus);
		if (!g)
			break;
		g->minor = info.minor;
		g->excluded = info.excluded;
		snprintf(g->uuid, sizeof g->uuid, "%s", info.uuid);
		if (!g->on_pci && !g->driver[0])
			snprintf(g->driver, sizeof g->driver, "nvidia"); /* the driver lists only its own */
	}
	closedir(d);
	if (unreadable)
		note(v, "kernel view: %zu GPU information file%s under %s could not be read", unreadable,
		     unreadable == 1 ? "" : "s", dir);
}

static int hex_or_dash(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-';
}

static void read_boot_id(const char *root, ng_kernel_view *v)
{
	char path[PATH_MAX], text[64];
	snprintf(path, sizeof path, "%.3900s/proc/sys/kernel/random/boot_id", root);
	ssize_t n = read_small(path, text, sizeof text);
	if (n <= 0)
		return;
	size_t k = 0;
	for (ssize_t i = 0; i < n && k < sizeof v->boot_id - 1; i++)
		if (hex_or_dash(text[i]))
			v->boot_id[k++] = text[i];
		else if (text[i] != '\n')
			break;
	v->boot_id[k] = '\0';
	if (k < 8)
		v->boot_id[0] = '\0';
}

void ng_kernel_view_read(const char *root, ng_kernel_view *out)
{
	memset(out, 0, sizeof *out);
	if (!root || !*root || strcmp(root, "/") == 0)
		root = "";
	read_pci(root, out);
	read_proc(root, out);
	read_boot_id(root, out);
}

size_t ng_kernel_view_write(const ng_kernel_view *v, char *buf, size_t cap)
{
	size_t used = 0;
#define PUT(...)                                                                        \
	do {                                                                            \
		int w = snprintf(buf + used, cap > used ? cap - used : 0, __VA_ARGS__); \
		if (w > 0)                                                              \
			used += (size_t)w;                                              \
	} while (0)
	PUT("V %d %d %s\n", v->pci_read, v->proc_read, v->boot_id[0] ? v->boot_id : "-");
	for (size_t i = 0; i < v->n; i++)
		PUT("G %s %s %d %s %d %d\n", v->gpu[i].bus, v->gpu[i].driver[0] ? v->gpu[i].driver : "-",
		    v->gpu[i].minor, v->gpu[i].uuid[0] ? v->gpu[i].uuid : "-", v->gpu[i].on_pci,
		    v->gpu[i].excluded);
	for (size_t i = 0; i < v->n_notes; i++)
		PUT("N %s\n", v->note[i]);
#undef PUT
	return used < cap ? used : cap;
}

void ng_kernel_view_parse(const char *text, size_t len, ng_kernel_view *out)
{
	memset(out, 0, sizeof *out);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		char line[320];
		size_t n = (size_t)(eol - p) < sizeof line - 1 ? (size_t)(eol - p) : sizeof line - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		int a, b, minor, on_pci, excluded;
		char s1[48], s2[48], s3[100];
		if (sscanf(line, "V %d %d %39s", &a, &b, s1) == 3) {
			out->pci_read = a;
			out->proc_read = b;
			if (strcmp(s1, "-") != 0)
				snprintf(out->boot_id, sizeof out->boot_id, "%.39s", s1);
		} else if (sscanf(line, "G %15s %31s %d %95s %d %d", s1, s2, &minor, s3, &on_pci, &excluded) == 6 &&
		           out->n < NG_GPU_MAX) {
			ng_kernel_gpu *g = &out->gpu[out->n++];
			memset(g, 0, sizeof *g);
			snprintf(g->bus, sizeof g->bus, "%.15s", s1);
			if (strcmp(s2, "-") != 0)
				snprintf(g->driver, sizeof g->driver, "%.31s", s2);
			g->minor = minor;
			if (strcmp(s3, "-") != 0)
				snprintf(g->uuid, sizeof g->uuid, "%.95s", s3);
			g->on_pci = on_pci;
			g->excluded = excluded;
		} else if (n > 2 && line[0] == 'N' && line[1] == ' ' && out->n_notes < NG_KERNEL_NOTES_MAX) {
			snprintf(out->note[out->n_notes++], sizeof out->note[0], "%.199s", line + 2);
		}
		p = eol + 1;
	}
}

const ng_kernel_gpu *ng_kernel_view_find(const ng_kernel_view *v, const char *bus)
{
	for (size_t i = 0; bus && bus[0] && i < v->n; i++)
		if (strcmp(v->gpu[i].bus, bus) == 0)
			return &v->gpu[i];
	return NULL;
}
