/* The kernel's view of the GPUs: the driver's information text and sysfs
 * attributes (parse/nvidia_proc.h), and the reader under a root directory
 * (collect/gpu_kernel.h) on trees written here, unreadable files and
 * hostile names included. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/gpu_kernel.h"
#include "parse/nvidia_proc.h"

static void test_information(void **state)
{
	(void)state;
	const char *t = "Model: \t\t NVIDIA A40\nIRQ:             88\n"
	                "GPU UUID:        GPU-5c4a1f0e-7a2b-4c1d-9e3f-0a1b2c3d4e5f\n"
	                "Video BIOS:      94.02.5c.00.03\nBus Type:        PCIe\n"
	                "Bus Location:    0000:3B:00.0\nDevice Minor:    3\nGPU Excluded:    No\n";
	ng_nvidia_gpu_info i;
	assert_int_equal(ng_nvidia_gpu_info_parse(t, strlen(t), &i), 0);
	assert_int_equal(i.minor, 3);
	assert_string_equal(i.bus, "0000:3b:00");
	assert_string_equal(i.uuid, "GPU-5c4a1f0e-7a2b-4c1d-9e3f-0a1b2c3d4e5f");
	assert_string_equal(i.model, "NVIDIA A40");
	assert_false(i.excluded);
	const char *ex = "Device Minor: 2\nGPU Excluded:    Yes\n";
	assert_int_equal(ng_nvidia_gpu_info_parse(ex, strlen(ex), &i), 0);
	assert_true(i.excluded);

	/* hostile or broken values read as absent, never as something else */
	const char *bad = "Device Minor: -1\nBus Location: ../../etc\nGPU UUID: GPU-%s%n\n"
	                  "Model: \x01\x7f\xff\n";
	assert_int_equal(ng_nvidia_gpu_info_parse(bad, strlen(bad), &i), -1);
	assert_int_equal(i.minor, -1);
	assert_string_equal(i.bus, "");
	assert_string_equal(i.uuid, "");
	assert_string_equal(i.model, "???");
	const char *big = "Device Minor: 99999999999\n";
	assert_int_equal(ng_nvidia_gpu_info_parse(big, strlen(big), &i), -1);
	/* no newline at the end, NUL bytes inside */
	const char nul[] = "Device Minor:\t7";
	assert_int_equal(ng_nvidia_gpu_info_parse(nul, sizeof nul - 1, &i), 0);
	assert_int_equal(i.minor, 7);
	const char withnul[] = "Device\0 Minor: 7\n";
	assert_int_equal(ng_nvidia_gpu_info_parse(withnul, sizeof withnul - 1, &i), -1);
	assert_int_equal(ng_nvidia_gpu_info_parse("", 0, &i), -1);
}

static void test_sysfs_hex(void **state)
{
	(void)state;
	uint32_t v;
	assert_int_equal(ng_sysfs_hex_parse("0x10de\n", 7, &v), 0);
	assert_int_equal(v, 0x10de);
	assert_int_equal(ng_sysfs_hex_parse("0x030200", 8, &v), 0);
	assert_true(ng_pci_class_is_gpu(v));
	assert_int_equal(ng_sysfs_hex_parse("0x068000\n", 9, &v), 0);
	assert_false(ng_pci_class_is_gpu(v)); /* an NVSwitch bridge */
	assert_int_equal(ng_sysfs_hex_parse("0x040300\n", 9, &v), 0);
	assert_false(ng_pci_class_is_gpu(v)); /* the GPU's HDMI audio function */
	assert_int_equal(ng_sysfs_hex_parse("", 0, &v), -1);
	assert_int_equal(ng_sysfs_hex_parse("0x", 2, &v), -1);
	assert_int_equal(ng_sysfs_hex_parse("0x1234567890", 12, &v), -1);
	assert_int_equal(ng_sysfs_hex_parse("10de zz", 7, &v), -1);
}

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *q = path + strlen(root) + 1; *q; q++)
		if (*q == '/') {
			*q = '\0';
			mkdir(path, 0700);
			*q = '/';
		}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void link_driver(const char *dev, const char *driver)
{
	char path[512], target[128];
	snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/driver", root, dev);
	snprintf(target, sizeof target, "../../../bus/pci/drivers/%s", driver);
	assert_int_equal(symlink(target, path), 0);
}

static int rm(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void gpu(const char *dev, const char *cls, const char *driver)
{
	char rel[256];
	snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/vendor", dev);
	put(rel, "0x10de\n");
	snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/class", dev);
	put(rel, cls);
	if (driver)
		link_driver(dev, driver);
}

static void test_reader(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "%s/ng-kview-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	ng_kernel_view v;
	/* an empty root: nothing read, nothing said to be missing */
	ng_kernel_view_read(root, &v);
	assert_false(v.pci_read);
	assert_int_equal(v.n, 0);

	gpu("0000:18:00.0", "0x030200\n", "nvidia");
	gpu("0000:2a:00.0", "0x030000\n", "vfio-pci");
	gpu("0000:3a:00.0", "0x030200\n", NULL);      /* no driver bound */
	gpu("0000:3a:00.1", "0x040300\n", NULL);      /* audio: not a GPU */
	gpu("0000:c5:00.0", "0x068000\n", "nvidia");  /* NVSwitch: not a GPU */
	put("sys/bus/pci/devices/0000:00:01.0/vendor", "0x8086\n");
	put("sys/bus/pci/devices/0000:00:01.0/class", "0x030000\n");
	put("sys/bus/pci/devices/not-an-address/vendor", "0x10de\n");
	put("proc/driver/nvidia/gpus/0000:18:00.0/information",
	    "GPU UUID: GPU-00000000-0000-4000-8000-000000000000\nBus Location: 0000:18:00.0\nDevice Minor: 0\n");
	/* in the driver's list only (off the PCI bus since) */
	put("proc/driver/nvidia/gpus/0000:5d:00.0/information", "Device Minor: 3\n");
	put("proc/driver/nvidia/gpus/junk/information", "nothing here\n");
	put("proc/sys/kernel/random/boot_id", "3f1c2a9e-5b7d-4e21-9c0a-1d2e3f4a5b6c\n");
	ng_kernel_view_read(root, &v);
	assert_true(v.pci_read && v.proc_read);
	assert_string_equal(v.boot_id, "3f1c2a9e-5b7d-4e21-9c0a-1d2e3f4a5b6c");
	assert_int_equal(v.n, 4);
	const ng_kernel_gpu *g = ng_kernel_view_find(&v, "0000:18:00");
	assert_non_null(g);
	assert_string_equal(g->driver, "nvidia");
	assert_int_equal(g->minor, 0);
	assert_string_equal(g->uuid, "GPU-00000000-0000-4000-8000-000000000000");
	assert_true(g->on_pci);
	g = ng_kernel_view_find(&v, "0000:2a:00");
	assert_non_null(g);
	assert_string_equal(g->driver, "vfio-pci");
	assert_int_equal(g->minor, -1);
	g = ng_kernel_view_find(&v, "0000:3a:00");
	assert_non_null(g);
	assert_string_equal(g->driver, "");
	g = ng_kernel_view_find(&v, "0000:5d:00");
	assert_non_null(g);
	assert_false(g->on_pci);
	assert_string_equal(g->driver, "nvidia");
	assert_int_equal(g->minor, 3);
	assert_null(ng_kernel_view_find(&v, "0000:c5:00"));
	assert_int_equal(v.n_notes, 1); /* the junk information file */

	/* through text and back, as a child hands it over */
	char buf[8192];
	size_t n = ng_kernel_view_write(&v, buf, sizeof buf);
	ng_kernel_view w;
	ng_kernel_view_parse(buf, n, &w);
	assert_int_equal(w.n, v.n);
	assert_string_equal(w.boot_id, v.boot_id);
	for (size_t i = 0; i < v.n; i++) {
		assert_string_equal(w.gpu[i].bus, v.gpu[i].bus);
		assert_string_equal(w.gpu[i].driver, v.gpu[i].driver);
		assert_int_equal(w.gpu[i].minor, v.gpu[i].minor);
	}
	/* cut anywhere: never more than was there */
	for (size_t cut = 0; cut < n; cut += 7) {
		ng_kernel_view_parse(buf, cut, &w);
		assert_true(w.n <= v.n);
	}

	/* unreadable files (a directory where a file should be: read fails,
	 * as root too): a note, and the GPU is not made up */
	char path[512];
	snprintf(path, sizeof path, "%s/sys/bus/pci/devices/0000:18:00.0/class", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/proc/driver/nvidia/gpus/0000:5d:00.0/information", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	ng_kernel_view_read(root, &v);
	g = ng_kernel_view_find(&v, "0000:18:00");
	assert_non_null(g); /* from the driver's list only */
	assert_false(g->on_pci);
	assert_null(ng_kernel_view_find(&v, "0000:5d:00"));
	assert_int_equal(v.n_notes, 2);
	assert_non_null(strstr(v.note[0], "could not be read"));
	nftw(root, rm, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_information),
		cmocka_unit_test(test_sysfs_hex),
		cmocka_unit_test(test_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
