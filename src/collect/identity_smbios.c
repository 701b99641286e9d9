/* Memory population from the SMBIOS memory device tables (type 17), which
 * the kernel exposes as /sys/firmware/dmi/entries/17-N/raw (root only). A
 * node with a missing or smaller DIMM has the same MemTotal class only by
 * luck; the population says so outright. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/identity_parts.h"
#include "collect/identity_read.h"

#define MIB (1024.0 * 1024.0)

static unsigned word(const unsigned char *r, size_t off)
{
	return (unsigned)r[off] | (unsigned)r[off + 1] << 8;
}

static uint32_t dword(const unsigned char *r, size_t off)
{
	return (uint32_t)word(r, off) | (uint32_t)word(r, off + 2) << 16;
}

/* String number i (1-based) of the structure's string set, or NULL. */
static const char *smbios_string(const unsigned char *r, size_t fmt_len, size_t len, unsigned i)
{
	if (i == 0)
		return NULL;
	const char *p = (const char *)r + fmt_len, *end = (const char *)r + len;
	for (unsigned k = 1; p < end && *p; k++) {
		size_t n = strnlen(p, (size_t)(end - p));
		if (p + n >= end)
			return NULL; /* unterminated */
		if (k == i)
			return p;
		p += n + 1;
	}
	return NULL;
}

/* Bytes of a memory device, 0 when the slot is empty, -1 when unknown. */
static double device_bytes(const unsigned char *r, size_t fmt_len)
{
	unsigned size = word(r, 0x0C);
	if (size == 0)
		return 0;
	if (size == 0xFFFF)
		return -1;
	if (size == 0x7FFF)
		return fmt_len >= 0x20 ? (double)(dword(r, 0x1C) & 0x7FFFFFFF) * MIB : -1;
	return size & 0x8000 ? (double)(size & 0x7FFF) * 1024.0 : (double)size * MIB;
}

static const char *memory_type(unsigned t)
{
	switch (t) {
	case 0x18: return "DDR3";
	case 0x1A: return "DDR4";
	case 0x1B: return "LPDDR";
	case 0x1C: return "LPDDR2";
	case 0x1D: return "LPDDR3";
	case 0x1E: return "LPDDR4";
	case 0x20: return "HBM";
	case 0x21: return "HBM2";
	case 0x22: return "DDR5";
	case 0x23: return "LPDDR5";
	case 0x24: return "HBM3";
	default: return NULL;
	}
}

static void add_trimmed(cJSON *o, const char *key, const char *s)
{
	if (!s)
		return;
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n == 0)
		return;
	char buf[128];
	snprintf(buf, sizeof buf, "%.*s", (int)n, s);
	cJSON_AddStringToObject(o, key, buf);
}

/* One slot's record, or NULL when the table is too short to read. */
static cJSON *device(const unsigned char *r, size_t len, double *bytes)
{
	if (len < 0x15 || r[0] != 17)
		return NULL;
	size_t fmt = r[1];
	if (fmt < 0x15 || fmt > len)
		return NULL;
	cJSON *d = cJSON_CreateObject();
	add_trimmed(d, "locator", smbios_string(r, fmt, len, r[0x10]));
	*bytes = device_bytes(r, fmt);
	if (*bytes >= 0)
		cJSON_AddNumberToObject(d, "size_bytes", *bytes);
	const char *type = memory_type(r[0x12]);
	if (type)
		cJSON_AddStringToObject(d, "type", type);
	if (fmt >= 0x17 && word(r, 0x15) != 0 && word(r, 0x15) != 0xFFFF)
		cJSON_AddNumberToObject(d, "speed_mts", word(r, 0x15));
	if (fmt >= 0x22 && word(r, 0x20) != 0 && word(r, 0x20) != 0xFFFF)
		cJSON_AddNumberToObject(d, "configured_speed_mts", word(r, 0x20));
	if (fmt >= 0x1B) {
		add_trimmed(d, "manufacturer", smbios_string(r, fmt, len, r[0x17]));
		add_trimmed(d, "part", smbios_string(r, fmt, len, r[0x1A]));
	}
	return d;
}

void ng_id_dimms(cJSON *memory, const char *root)
{
	char **names;
	size_t m = ng_id_list(root, "/sys/firmware/dmi/entries", "17-", &names);
	cJSON *list = cJSON_CreateArray();
	int slots = 0, populated = 0;
	double total = 0, common = -2;
	bool known = true;
	for (size_t i = 0; i < m; i++) {
		size_t len;
		char path[320];
		snprintf(path, sizeof path, "/sys/firmware/dmi/entries/%s/raw", names[i]);
		char *raw = ng_id_read_bytes(root, path, &len);
		double bytes = -1;
		cJSON *d = raw ? device((const unsigned char *)raw, len, &bytes) : NULL;
		free(raw);
		if (!d)
			continue;
		slots++;
		if (bytes == 0) {
			cJSON_Delete(d); /* an empty slot: counted, not listed */
			continue;
		}
		populated++;
		if (bytes < 0)
			known = false;
		total += bytes;
		common = common == -2 ? bytes : (common == bytes ? common : -1);
		cJSON_AddItemToArray(list, d);
	}
	ng_id_free_list(names, m);
	if (slots == 0) {
		cJSON_Delete(list);
		return;
	}
	cJSON *o = cJSON_AddObjectToObject(memory, "dimms");
	cJSON_AddNumberToObject(o, "slots", slots);
	cJSON_AddNumberToObject(o, "populated", populated);
	if (known && populated > 0) {
		cJSON_AddNumberToObject(o, "total_bytes", total);
		cJSON_AddNumberToObject(o, "total_gib", total / (1024.0 * MIB));
	}
	if (common > 0)
		cJSON_AddNumberToObject(o, "dimm_bytes", common);
	cJSON_AddItemToObject(o, "devices", list);
}
