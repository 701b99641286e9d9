/* The node's software and firmware identity: the parts of the profile that a
 * planned change moves (kernel, OS, driver, BIOS, microcode, GPU VBIOS, NIC
 * firmware, container image, tool versions), digested to one short key.
 * Baselines are kept per (class, software identity), so after an upgrade a
 * node is never judged against samples from a configuration that no longer
 * exists: its new identity starts its own baseline. */
#include <string.h>

#include "collect/identity.h"
#include "core/json.h"
#include "core/sha256.h"

/* Profile paths whose values make up the identity, in a fixed order. */
static const char *const software_fields[] = {
	"kernel.release", "kernel.version", "os.id", "os.version_id", "firmware.bios_vendor",
	"firmware.bios_version", "firmware.bios_date", "cpu.microcode", "gpu.driver",
	"gpu.cuda", "gpu.vbios", "gpu.vbioses", "container.digest", "tools",
};

static const cJSON *at_path(const cJSON *obj, const char *path)
{
	char key[64];
	const char *dot = strchr(path, '.');
	if (!dot)
		return ng_json_get(obj, path);
	size_t n = (size_t)(dot - path) < sizeof key - 1 ? (size_t)(dot - path) : sizeof key - 1;
	memcpy(key, path, n);
	key[n] = '\0';
	return at_path(ng_json_get(obj, key), dot + 1);
}

/* NIC firmware: every device's fw_ver, in the profile's (natural) order. */
static void add_nic_firmware(const cJSON *prof, ng_strbuf *b)
{
	const cJSON *devs = at_path(prof, "ib.devices"), *d;
	if (!cJSON_IsArray(devs))
		return;
	ng_strbuf_adds(b, "ib.fw_ver=");
	cJSON_ArrayForEach(d, devs)
	{
		const cJSON *fw = ng_json_get(d, "fw_ver");
		ng_strbuf_adds(b, cJSON_IsString(fw) ? fw->valuestring : "?");
		ng_strbuf_addc(b, ',');
	}
	ng_strbuf_addc(b, '\n');
}

void ng_identity_software(const cJSON *prof, ng_strbuf *out)
{
	ng_strbuf b = {0};
	for (size_t i = 0; i < sizeof software_fields / sizeof software_fields[0]; i++) {
		const cJSON *v = at_path(prof, software_fields[i]);
		if (!v)
			continue;
		ng_strbuf_adds(&b, software_fields[i]);
		ng_strbuf_addc(&b, '=');
		ng_json_canonical(v, &b);
		ng_strbuf_addc(&b, '\n');
	}
	add_nic_firmware(prof, &b);
	char hex[65];
	ng_sha256_hex(b.s ? b.s : "", b.len, hex);
	ng_strbuf_free(&b);
	ng_strbuf_reset(out);
	ng_strbuf_printf(out, "sw-%.16s", hex);
}
