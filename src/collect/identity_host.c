/* Identity of the software and firmware: kernel, OS release, BIOS/DMI, and
 * the container nodegate runs in. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "collect/identity_parts.h"
#include "collect/identity_read.h"

void ng_id_kernel(cJSON *prof, const char *root)
{
	cJSON *k = cJSON_CreateObject();
	ng_id_add_file(k, "release", root, "/proc/sys/kernel/osrelease");
	ng_id_add_file(k, "version", root, "/proc/sys/kernel/version");
	if (!ng_id_add_file(k, "machine", root, "/proc/sys/kernel/arch")) {
		/* Older kernels have no arch file; uname tells only of the running
		 * kernel, so it is used only when reading the running node. */
		struct utsname u;
		if (strcmp(root, "/") == 0 && uname(&u) == 0)
			cJSON_AddStringToObject(k, "machine", u.machine);
	}
	ng_id_add_file(k, "cmdline", root, "/proc/cmdline");
	if (k->child)
		cJSON_AddItemToObject(prof, "kernel", k);
	else
		cJSON_Delete(k);
}

/* os-release values are shell words, maybe quoted. */
static void add_os_value(cJSON *os, const char *text, const char *key, const char *name)
{
	size_t kl = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t ll = eol ? (size_t)(eol - line) : strlen(line);
		if (ll > kl && strncmp(line, key, kl) == 0 && line[kl] == '=') {
			const char *v = line + kl + 1;
			size_t vl = ll - kl - 1;
			if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
				v++;
				vl -= 2;
			}
			if (vl > 0) {
				char *s = strndup(v, vl);
				if (s)
					cJSON_AddStringToObject(os, name, s);
				free(s);
			}
			return;
		}
		line = eol ? eol + 1 : NULL;
	}
}

void ng_id_os(cJSON *prof, const char *root)
{
	char *t = ng_id_read(root, "/etc/os-release");
	if (!t)
		t = ng_id_read(root, "/usr/lib/os-release");
	if (!t)
		return;
	cJSON *os = cJSON_CreateObject();
	add_os_value(os, t, "ID", "id");
	add_os_value(os, t, "VERSION_ID", "version_id");
	add_os_value(os, t, "PRETTY_NAME", "pretty_name");
	free(t);
	if (os->child)
		cJSON_AddItemToObject(prof, "os", os);
	else
		cJSON_Delete(os);
}

void ng_id_firmware(cJSON *prof, const char *root)
{
	/* Serials and the UUID are readable by root only; as another user they
	 * are simply absent. */
	static const char *const names[] = {
		"sys_vendor", "product_name", "product_version", "product_serial", "product_uuid",
		"board_vendor", "board_name", "board_version", "board_serial",
		"bios_vendor", "bios_version", "bios_date", "bios_release", "chassis_type",
	};
	cJSON *fw = cJSON_CreateObject();
	char path[96];
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(path, sizeof path, "/sys/class/dmi/id/%s", names[i]);
		ng_id_add_file(fw, names[i], root, path);
	}
	if (fw->child)
		cJSON_AddItemToObject(prof, "firmware", fw);
	else
		cJSON_Delete(fw);
}

/* A container id: 64 hex digits after one of the runtime markers. */
static bool find_id(const char *text, const char *marker, char id[65])
{
	for (const char *p = strstr(text, marker); p; p = strstr(p + 1, marker)) {
		const char *h = p + strlen(marker);
		size_t n = 0;
		while (n < 64 && isxdigit((unsigned char)h[n]))
			n++;
		if (n == 64 && !isxdigit((unsigned char)h[64])) {
			memcpy(id, h, 64);
			id[64] = '\0';
			return true;
		}
	}
	return false;
}

struct runtime {
	const char *marker, *runtime;
};

/* cgroup paths as docker, containerd, CRI-O, podman and kubelet write them. */
static const struct runtime markers[] = {
	{"/docker/", "docker"},       {"docker-", "docker"},
	{"cri-containerd-", "containerd"}, {"/containerd/", "containerd"},
	{"crio-", "cri-o"},           {"libpod-", "podman"},
	{"/kubepods", NULL}, /* qualifies the others: run by kubelet */
};

static bool from_cgroup(cJSON *c, const char *root, const char *path)
{
	char *t = ng_id_read(root, path);
	if (!t)
		return false;
	char id[65];
	bool found = false;
	for (size_t i = 0; i < sizeof markers / sizeof *markers && !found; i++) {
		if (markers[i].runtime && find_id(t, markers[i].marker, id)) {
			cJSON_AddStringToObject(c, "runtime", markers[i].runtime);
			cJSON_AddStringToObject(c, "id", id);
			cJSON_AddStringToObject(c, "id_source", path);
			found = true;
		}
	}
	if (strstr(t, "kubepods") && !cJSON_HasObjectItem(c, "kubernetes")) {
		cJSON_AddBoolToObject(c, "kubernetes", true);
		found = true;
	}
	free(t);
	return found;
}

/* With cgroup v2 namespaces the cgroup file says only "0::/"; the runtime's
 * bind mounts (hostname, resolv.conf) still name the container's directory. */
static bool from_mountinfo(cJSON *c, const char *root)
{
	char *t = ng_id_read(root, "/proc/self/mountinfo");
	if (!t)
		return false;
	char id[65];
	bool found = false;
	if (find_id(t, "/docker/containers/", id)) {
		cJSON_AddStringToObject(c, "runtime", "docker");
		found = true;
	} else if (find_id(t, "/containers/storage/overlay-containers/", id)) {
		cJSON_AddStringToObject(c, "runtime", "podman");
		found = true;
	} else if (find_id(t, "/sandboxes/", id)) {
		cJSON_AddStringToObject(c, "runtime", "containerd");
		cJSON_AddStringToObject(c, "id_note", "the pod sandbox's id, not the container's");
		found = true;
	}
	if (found) {
		cJSON_AddStringToObject(c, "id", id);
		cJSON_AddStringToObject(c, "id_source", "/proc/self/mountinfo");
	}
	free(t);
	return found;
}

/* The image digest is not visible from inside a container; the launcher
 * passes it (NODEGATE_CONTAINER_DIGEST), or podman writes it. */
static void digest(cJSON *c, const char *root)
{
	const char *env = getenv("NODEGATE_CONTAINER_DIGEST");
	if (env && env[0]) {
		cJSON_AddStringToObject(c, "digest", env);
		cJSON_AddStringToObject(c, "digest_source", "env:NODEGATE_CONTAINER_DIGEST");
		return;
	}
	char *t = ng_id_read(root, "/run/.containerenv");
	char buf[256];
	if (t && ng_id_field(t, "imageid", '=', buf, sizeof buf)) {
		size_t n = strlen(buf);
		if (n >= 2 && buf[0] == '"' && buf[n - 1] == '"') {
			memmove(buf, buf + 1, n - 2);
			buf[n - 2] = '\0';
		}
		if (buf[0]) {
			cJSON_AddStringToObject(c, "image_id", buf);
			cJSON_AddStringToObject(c, "image_id_source", "/run/.containerenv");
		}
	}
	free(t);
	const char *img = getenv("NODEGATE_CONTAINER_IMAGE");
	if (img && img[0])
		cJSON_AddStringToObject(c, "image", img);
}

bool ng_id_container(cJSON *prof, const char *root)
{
	cJSON *c = cJSON_CreateObject();
	bool in = from_cgroup(c, root, "/proc/self/cgroup");
	if (!cJSON_HasObjectItem(c, "id") && from_cgroup(c, root, "/proc/1/cgroup"))
		in = true;
	if (!cJSON_HasObjectItem(c, "id") && from_mountinfo(c, root))
		in = true;
	if (ng_id_exists(root, "/.dockerenv")) {
		cJSON_AddBoolToObject(c, "dockerenv", true);
		in = true;
	}
	if (ng_id_exists(root, "/run/.containerenv")) {
		cJSON_AddBoolToObject(c, "containerenv", true);
		in = true;
	}
	const char *env = getenv("NODEGATE_CONTAINER_DIGEST");
	if (in || (env && env[0])) {
		digest(c, root);
		in = true;
	}
	if (in)
		cJSON_AddItemToObject(prof, "container", c);
	else
		cJSON_Delete(c);
	return in;
}
