/* The NVIDIA driver's per-GPU /proc text and sysfs PCI attributes
 * (parse/nvidia_proc.h). The information file reads, one field a line:
 *   Model:           NVIDIA H100 80GB HBM3
 *   IRQ:             1234
 *   GPU UUID:        GPU-5c4a1f0e-7a2b-4c1d-9e3f-0a1b2c3d4e5f
 *   Bus Location:    0000:18:00.0
 *   Device Minor:    0
 * Pure: no I/O, no allocation. */
#include "parse/nvidia_proc.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/gpu.h"

static bool space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static bool hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* "GPU-" and 8-4-4-4-12 hex digits, and nothing else. */
static bool gpu_uuid(const char *s, size_t n)
{
	static const int groups[] = {8, 4, 4, 4, 12};
	if (n != 4 + 36 || memcmp(s, "GPU-", 4) != 0)
		return false;
	size_t i = 4;
	for (size_t g = 0; g < 5; g++) {
		for (int k = 0; k < groups[g]; k++, i++)
			if (!hex_digit(s[i]))
				return false;
		if (g < 4 && s[i++] != '-')
			return false;
	}
	return true;
}

int ng_nvidia_gpu_info_parse(const char *text, size_t len, ng_nvidia_gpu_info *out)
{
	memset(out, 0, sizeof *out);
	out->minor = -1;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (colon) {
			const char *k = p, *ke = colon, *v = colon + 1, *ve = eol;
			while (k < ke && space(*k))
				k++;
			while (ke > k && space(ke[-1]))
				ke--;
			while (v < ve && space(*v))
				v++;
			while (ve > v && space(ve[-1]))
				ve--;
			size_t kn = (size_t)(ke - k), vn = (size_t)(ve - v);
			if (kn == 12 && memcmp(k, "Device Minor", 12) == 0 && out->minor < 0) {
				long m = 0;
				size_t i = 0;
				for (; i < vn && i < 7 && v[i] >= '0' && v[i] <= '9'; i++)
					m = m * 10 + (v[i] - '0');
				if (i == vn && vn > 0 && m <= 1048575) /* the kernel's 20-bit minor */
					out->minor = (int)m;
			} else if (kn == 12 && memcmp(k, "Bus Location", 12) == 0 && !out->bus[0] && vn < 32) {
				char raw[32];
				memcpy(raw, v, vn);
				raw[vn] = '\0';
				if (ng_gpu_bus_normalize(raw, out->bus) < 0)
					out->bus[0] = '\0';
			} else if (kn == 8 && memcmp(k, "GPU UUID", 8) == 0 && !out->uuid[0] &&
			           gpu_uuid(v, vn)) {
				memcpy(out->uuid, v, vn);
				out->uuid[vn] = '\0';
			} else if (kn == 12 && memcmp(k, "GPU Excluded", 12) == 0) {
				out->excluded = vn == 3 && memcmp(v, "Yes", 3) == 0;
			} else if (kn == 5 && memcmp(k, "Model", 5) == 0 && !out->model[0]) {
				size_t n = vn < sizeof out->model - 1 ? vn : sizeof out->model - 1;
				for (size_t i = 0; i < n; i++) {
					unsigned char c = (unsigned char)v[i];
					out->model[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
				}
				out->model[n] = '\0';
			}
		}
		p = eol + 1;
	}
	return out->minor >= 0 || out->bus[0] ? 0 : -1;
}

int ng_sysfs_hex_parse(const char *text, size_t len, uint32_t *out)
{
	size_t i = 0;
	while (len && (text[len - 1] == '\n' || space(text[len - 1])))
		len--;
	if (len >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		i = 2;
	if (i == len || len - i > 8)
		return -1;
	uint32_t v = 0;
	for (; i < len; i++) {
		char c = text[i];
		if (!hex_digit(c))
			return -1;
		v = v * 16 + (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	*out = v;
	return 0;
}

int ng_pci_class_is_gpu(uint32_t pci_class)
{
	uint32_t cls = pci_class >> 8; /* class and subclass, without the interface */
	return cls == 0x0300 || cls == 0x0302;
}
