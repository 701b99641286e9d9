/* What the kernel says about a node's GPUs, apart from NVML: the NVIDIA
 * driver's /proc/driver/nvidia/gpus/<bus>/information text, and the small
 * sysfs attributes of a PCI device (vendor, class). Pure: text in, fields
 * out. The files are the kernel's, but a root directory given for tests or
 * scenarios can hold anything, so every byte is read as untrusted. */
#ifndef NODEGATE_PARSE_NVIDIA_PROC_H
#define NODEGATE_PARSE_NVIDIA_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	int minor;     /* "Device Minor:" (the N of /dev/nvidiaN), -1 when absent */
	char bus[16];  /* "Bus Location:" normalized ("0000:3b:00"), "" when absent */
	char uuid[96]; /* "GPU UUID:" when it is a GPU-<hex> UUID, else "" */
	char model[64]; /* "Model:", printable ASCII, "" when absent */
	bool excluded;  /* "GPU Excluded: Yes": the driver was told to leave it alone */
} ng_nvidia_gpu_info;

/* Reads one information file. 0 when it names a minor or a bus; -1 when it
 * holds neither (not the driver's file). */
int ng_nvidia_gpu_info_parse(const char *text, size_t len, ng_nvidia_gpu_info *out);

/* A sysfs hex attribute ("0x10de\n", "0x030200\n"): 0 and *out, or -1. */
int ng_sysfs_hex_parse(const char *text, size_t len, uint32_t *out);

#define NG_PCI_VENDOR_NVIDIA 0x10de
/* NVIDIA GPUs: display controllers, VGA (0x0300) and 3D (0x0302). */
int ng_pci_class_is_gpu(uint32_t pci_class);

#endif
