/* The kernel's view of a node's GPUs, apart from NVML: NVIDIA display and 3D
 * controllers on the PCI bus (ROOT/sys/bus/pci/devices/<addr>/{vendor,class,
 * driver}), the driver's own list with each GPU's device minor
 * (ROOT/proc/driver/nvidia/gpus/<addr>/information), and the boot id
 * (ROOT/proc/sys/kernel/random/boot_id). ROOT is "/" on a node; tests and
 * scenarios give a directory of their own (like `nodegate identity --root`).
 *
 * It reads and reports; it never decides. A file that cannot be read is a
 * note, and what it would have said is unknown, never "no GPU". */
#ifndef NODEGATE_COLLECT_GPU_KERNEL_H
#define NODEGATE_COLLECT_GPU_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/gpu.h"

typedef struct {
	char bus[16];    /* normalized "0000:3b:00" */
	char driver[32]; /* the bound driver's name ("nvidia", "vfio-pci"), "" for none */
	int minor;       /* from the driver's information file, -1 when unknown */
	char uuid[96];   /* likewise, "" when unknown */
	bool on_pci;     /* seen on the PCI bus (else only in the driver's list) */
	bool excluded;   /* the driver lists it as excluded (NVreg_ExcludedGpus): not NVML's */
} ng_kernel_gpu;

#define NG_KERNEL_NOTES_MAX 4

typedef struct {
	bool pci_read;  /* the PCI device list could be read */
	bool proc_read; /* the driver's GPU list could be read (absent: no driver loaded) */
	size_t n;
	ng_kernel_gpu gpu[NG_GPU_MAX];
	char boot_id[40]; /* "" when unknown */
	size_t n_notes;
	char note[NG_KERNEL_NOTES_MAX][200];
} ng_kernel_view;

/* Fills out from the files under root ("/" when NULL or ""). Never fails:
 * what could not be read is in the notes. */
void ng_kernel_view_read(const char *root, ng_kernel_view *out);

/* The view as text lines and back, for a child process to hand its parent. */
size_t ng_kernel_view_write(const ng_kernel_view *v, char *buf, size_t cap);
void ng_kernel_view_parse(const char *text, size_t len, ng_kernel_view *out);

/* The entry for a normalized bus, or NULL. */
const ng_kernel_gpu *ng_kernel_view_find(const ng_kernel_view *v, const char *bus);

#endif
