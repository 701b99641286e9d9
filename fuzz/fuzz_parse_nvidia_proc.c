/* libFuzzer target for the kernel's view of the GPUs: the driver's
 * /proc/driver/nvidia/gpus/<bus>/information text, sysfs hex attributes, and
 * the view's own text form (what a child hands its parent). For any bytes:
 * fields are absent or well-formed (a normalized bus, a GPU- UUID, a minor
 * in the kernel's range, printable text), and parsing never reads past the
 * input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gpu_kernel.h"
#include "parse/nvidia_proc.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static void printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	require(n < cap);
	for (size_t i = 0; i < n; i++)
		require((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f);
}

static ng_kernel_view view;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so a read past the end is caught */
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	ng_nvidia_gpu_info info;
	int rc = ng_nvidia_gpu_info_parse(text, size, &info);
	require(info.minor >= -1 && info.minor <= 1048575);
	printable(info.bus, sizeof info.bus);
	require(info.bus[0] == '\0' || (strlen(info.bus) >= 10 && strlen(info.bus) <= 14)); /* VMD domains pass 16 bits */
	char again[16];
	require(info.bus[0] == '\0' || (ng_gpu_bus_normalize(info.bus, again) == 0 && strcmp(again, info.bus) == 0));
	printable(info.uuid, sizeof info.uuid);
	require(info.uuid[0] == '\0' || (strlen(info.uuid) == 40 && memcmp(info.uuid, "GPU-", 4) == 0));
	printable(info.model, sizeof info.model);
	require(rc == 0 || (info.minor < 0 && !info.bus[0]));

	uint32_t v;
	if (ng_sysfs_hex_parse(text, size, &v) == 0)
		(void)ng_pci_class_is_gpu(v);

	ng_kernel_view_parse(text, size, &view);
	require(view.n <= NG_GPU_MAX && view.n_notes <= NG_KERNEL_NOTES_MAX);
	for (size_t i = 0; i < view.n; i++) {
		require(strnlen(view.gpu[i].bus, sizeof view.gpu[i].bus) < sizeof view.gpu[i].bus);
		require(strnlen(view.gpu[i].driver, sizeof view.gpu[i].driver) < sizeof view.gpu[i].driver);
		require(strnlen(view.gpu[i].uuid, sizeof view.gpu[i].uuid) < sizeof view.gpu[i].uuid);
	}
	free(text);
	return 0;
}
