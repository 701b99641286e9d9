/* Identity of the devices: GPUs, InfiniBand/RDMA ports, NICs, local drives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/identity.h"
#include "collect/identity_parts.h"
#include "collect/identity_read.h"

/* {"count": n, "devices": [...]} under key, or nothing when n is 0. */
static void add_devices(cJSON *prof, const char *key, cJSON *list)
{
	int n = cJSON_GetArraySize(list);
	if (n == 0) {
		cJSON_Delete(list);
		return;
	}
	cJSON *o = cJSON_AddObjectToObject(prof, key);
	cJSON_AddNumberToObject(o, "count", n);
	cJSON_AddItemToObject(o, "devices", list);
}

/* Physical devices only: a bridge, veth, loop or device-mapper node has no
 * "device" link and is no part of what the node is. */
static bool physical(const char *root, const char *cls, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s/device", cls, name);
	return ng_id_exists(root, path);
}

static void add_fmt(cJSON *o, const char *key, const char *root, const char *fmt, const char *a)
{
	char path[320];
	snprintf(path, sizeof path, fmt, a);
	ng_id_add_file(o, key, root, path);
}

static void add_link(cJSON *o, const char *key, const char *root, const char *fmt, const char *a)
{
	char path[320];
	snprintf(path, sizeof path, fmt, a);
	char *n = ng_id_link_name(root, path);
	if (n)
		cJSON_AddStringToObject(o, key, n);
	free(n);
}

void ng_id_drives(cJSON *prof, const char *root)
{
	char **names;
	size_t m = ng_id_list(root, "/sys/block", NULL, &names);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < m; i++) {
		const char *d = names[i];
		if (!physical(root, "/sys/block", d))
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", d);
		add_fmt(o, "model", root, "/sys/block/%s/device/model", d);
		add_fmt(o, "firmware", root, "/sys/block/%s/device/firmware_rev", d);
		add_fmt(o, "serial", root, "/sys/block/%s/device/serial", d);
		char path[320];
		long long v;
		snprintf(path, sizeof path, "/sys/block/%s/size", d);
		/* sysfs counts 512-byte sectors whatever the device's block size. */
		if (ng_id_read_int(root, path, &v))
			cJSON_AddNumberToObject(o, "size_bytes", (double)v * 512.0);
		snprintf(path, sizeof path, "/sys/block/%s/queue/rotational", d);
		if (ng_id_read_int(root, path, &v))
			cJSON_AddBoolToObject(o, "rotational", v != 0);
		snprintf(path, sizeof path, "/sys/block/%s/removable", d);
		if (ng_id_read_int(root, path, &v))
			cJSON_AddBoolToObject(o, "removable", v != 0);
		cJSON_AddItemToArray(list, o);
	}
	ng_id_free_list(names, m);
	add_devices(prof, "drives", list);
}

void ng_id_nics(cJSON *prof, const char *root)
{
	char **names;
	size_t m = ng_id_list(root, "/sys/class/net", NULL, &names);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < m; i++) {
		const char *d = names[i];
		if (!physical(root, "/sys/class/net", d))
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", d);
		add_link(o, "driver", root, "/sys/class/net/%s/device/driver", d);
		add_link(o, "pci", root, "/sys/class/net/%s/device", d);
		add_fmt(o, "mac", root, "/sys/class/net/%s/address", d);
		char path[320];
		long long v;
		snprintf(path, sizeof path, "/sys/class/net/%s/mtu", d);
		if (ng_id_read_int(root, path, &v))
			cJSON_AddNumberToObject(o, "mtu", (double)v);
		/* -1 (or EINVAL) while the link is down: no speed, not a zero. */
		snprintf(path, sizeof path, "/sys/class/net/%s/speed", d);
		if (ng_id_read_int(root, path, &v) && v > 0)
			cJSON_AddNumberToObject(o, "speed_mbps", (double)v);
		add_fmt(o, "operstate", root, "/sys/class/net/%s/operstate", d);
		cJSON_AddItemToArray(list, o);
	}
	ng_id_free_list(names, m);
	add_devices(prof, "nics", list);
}

static cJSON *ib_ports(const char *root, const char *dev, int *total, int *active)
{
	char dir[256], **ports;
	snprintf(dir, sizeof dir, "/sys/class/infiniband/%s/ports", dev);
	size_t m = ng_id_list(root, dir, NULL, &ports);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < m; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "port", atoi(ports[i]));
		char path[320];
		snprintf(path, sizeof path, "%s/%s/link_layer", dir, ports[i]);
		ng_id_add_file(p, "link_layer", root, path);
		snprintf(path, sizeof path, "%s/%s/rate", dir, ports[i]);
		ng_id_add_file(p, "rate", root, path);
		snprintf(path, sizeof path, "%s/%s/state", dir, ports[i]);
		ng_id_add_file(p, "state", root, path);
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "state");
		if (cJSON_IsString(st) && strstr(st->valuestring, "ACTIVE"))
			(*active)++;
		(*total)++;
		cJSON_AddItemToArray(list, p);
	}
	ng_id_free_list(ports, m);
	return list;
}

void ng_id_infiniband(cJSON *prof, const char *root)
{
	char **names;
	size_t m = ng_id_list(root, "/sys/class/infiniband", NULL, &names);
	if (!m)
		return;
	cJSON *list = cJSON_CreateArray();
	int total = 0, active = 0;
	for (size_t i = 0; i < m; i++) {
		const char *d = names[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", d);
		add_fmt(o, "hca_type", root, "/sys/class/infiniband/%s/hca_type", d);
		add_fmt(o, "board_id", root, "/sys/class/infiniband/%s/board_id", d);
		add_fmt(o, "fw_ver", root, "/sys/class/infiniband/%s/fw_ver", d);
		add_fmt(o, "node_guid", root, "/sys/class/infiniband/%s/node_guid", d);
		cJSON_AddItemToObject(o, "ports", ib_ports(root, d, &total, &active));
		cJSON_AddItemToArray(list, o);
	}
	ng_id_free_list(names, m);
	cJSON *ib = cJSON_AddObjectToObject(prof, "ib");
	cJSON_AddNumberToObject(ib, "devices_count", (double)m);
	/* Ports present, not ports up: a node with a dead rail keeps its class
	 * and is judged against it, rather than escaping to a class of its own. */
	cJSON_AddNumberToObject(ib, "ports", total);
	cJSON_AddNumberToObject(ib, "active_ports", active);
	cJSON_AddItemToObject(ib, "devices", list);
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..." */
static void nvidia_driver(cJSON *gpu, const char *root)
{
	char *t = ng_id_read(root, "/proc/driver/nvidia/version");
	const char *p = t ? strstr(t, "Kernel Module") : NULL;
	if (p) {
		p += strlen("Kernel Module");
		char ver[64];
		if (sscanf(p, " %63s", ver) == 1) {
			cJSON_AddStringToObject(gpu, "driver", ver);
			cJSON_AddStringToObject(gpu, "driver_source", "/proc/driver/nvidia/version");
		}
	}
	free(t);
}

/* What the driver says of one GPU: model, UUID, VBIOS. */
static void nvidia_information(cJSON *dev, const char *root, const char *bus)
{
	char *t = ng_id_readf(root, "/proc/driver/nvidia/gpus/%s/information", bus);
	if (!t)
		return;
	static const char *const keys[][2] = {
		{"Model", "model"}, {"GPU UUID", "uuid"}, {"Video BIOS", "vbios"}, {"Bus Type", "bus_type"},
	};
	char buf[256];
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (ng_id_field(t, keys[i][0], ':', buf, sizeof buf))
			cJSON_AddStringToObject(dev, keys[i][1], buf);
	free(t);
}

static bool nvidia_gpu_pci(const char *root, const char *bus, char *devid, size_t n)
{
	char *vendor = ng_id_readf(root, "/sys/bus/pci/devices/%s/vendor", bus);
	char *cls = ng_id_readf(root, "/sys/bus/pci/devices/%s/class", bus);
	char *dev = ng_id_readf(root, "/sys/bus/pci/devices/%s/device", bus);
	/* 0x0302xx: 3D controller (data-centre GPUs); 0x0300xx: VGA (workstation). */
	bool ok = vendor && cls && strcmp(vendor, "0x10de") == 0 &&
	          (strncmp(cls, "0x0302", 6) == 0 || strncmp(cls, "0x0300", 6) == 0);
	if (ok)
		snprintf(devid, n, "10de:%s", dev && strlen(dev) > 2 ? dev + 2 : "?");
	free(vendor);
	free(cls);
	free(dev);
	return ok;
}

/* The one value every device shares for key, as gpu[key]; when they differ,
 * the distinct values go in gpu[plural] and key stays absent. */
static void common(cJSON *gpu, const cJSON *devs, const char *key, const char *plural)
{
	cJSON *vals = cJSON_CreateArray();
	bool all = true;
	for (const cJSON *d = devs->child; d; d = d->next) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, key);
		if (!cJSON_IsString(v)) {
			all = false;
			continue;
		}
		bool seen = false;
		for (const cJSON *s = vals->child; s; s = s->next)
			seen |= strcmp(s->valuestring, v->valuestring) == 0;
		if (!seen)
			cJSON_AddItemToArray(vals, cJSON_CreateString(v->valuestring));
	}
	int n = cJSON_GetArraySize(vals);
	if (n == 1 && all)
		cJSON_AddStringToObject(gpu, key, vals->child->valuestring);
	else if (n > 0)
		cJSON_AddItemToObject(gpu, plural, cJSON_Duplicate(vals, true));
	cJSON_Delete(vals);
}

void ng_id_gpus(cJSON *prof, const char *root)
{
	cJSON *gpu = cJSON_CreateObject(), *devs = cJSON_CreateArray(), *uuids = cJSON_CreateArray();
	char **names;
	size_t m = ng_id_list(root, "/sys/bus/pci/devices", NULL, &names);
	for (size_t i = 0; i < m; i++) {
		char devid[32];
		if (!nvidia_gpu_pci(root, names[i], devid, sizeof devid))
			continue;
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "bus", names[i]);
		cJSON_AddStringToObject(d, "device_id", devid);
		nvidia_information(d, root, names[i]);
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(d, "uuid");
		if (cJSON_IsString(u))
			cJSON_AddItemToArray(uuids, cJSON_CreateString(u->valuestring));
		cJSON_AddItemToArray(devs, d);
	}
	ng_id_free_list(names, m);
	int n = cJSON_GetArraySize(devs);
	if (n > 0) {
		cJSON_AddNumberToObject(gpu, "count", n);
		cJSON_AddStringToObject(gpu, "source", "pci");
		common(gpu, devs, "model", "models");
		common(gpu, devs, "device_id", "device_ids");
		common(gpu, devs, "vbios", "vbioses");
		nvidia_driver(gpu, root);
	}
	if (cJSON_GetArraySize(uuids) > 0)
		cJSON_AddItemToObject(gpu, "uuids", uuids);
	else
		cJSON_Delete(uuids);
	cJSON_AddItemToObject(gpu, "devices", devs);
	/* NVML knows more (CUDA version, exact UUIDs without the proc files);
	 * the NVML module sets the hook and it adds to or corrects this object. */
	if (ng_identity_nvml_hook) {
		ng_err e = {0};
		if (ng_identity_nvml_hook(gpu, &e) < 0)
			cJSON_AddStringToObject(gpu, "nvml_error", e.msg[0] ? e.msg : "NVML failed");
	}
	if (n > 0 || cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(gpu, "devices")) > 0)
		cJSON_AddItemToObject(prof, "gpu", gpu);
	else
		cJSON_Delete(gpu);
}
