/* Node identity: what is read from a fake root tree, what is left absent
 * when files are missing, where the node id comes from, the class template
 * language, and stamping records. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ftw.h>

#include "collect/identity.h"
#include "core/json.h"
#include "core/policy.h"

static char root[PATH_MAX];

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
}

/* Writes root/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s%s", root, rel);
	mkdirs(path);
	FILE *f = fopen(path, "w");
	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void put_bytes(const char *rel, const unsigned char *b, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s%s", root, rel);
	mkdirs(path);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n)
		fail_msg("cannot write %s", path);
	fclose(f);
}

/* root/rel -> target (as sysfs links a device to its driver). */
static void link_to(const char *rel, const char *target)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s%s", root, rel);
	mkdirs(path);
	if (symlink(target, path) < 0)
		fail_msg("symlink %s: %s", path, strerror(errno));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/ng-identity-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(root))
		return -1;
	unsetenv("NODEGATE_CONTAINER_DIGEST");
	unsetenv("NODEGATE_CONTAINER_IMAGE");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	ng_identity_nvml_hook = NULL;
	unsetenv("NODEGATE_CONTAINER_DIGEST");
	return 0;
}

static cJSON *profile(void)
{
	ng_identity_opts o = {.root = root};
	ng_err err = {0};
	cJSON *p = ng_identity_profile(&o, &err);
	if (!p)
		fail_msg("no profile: %s", err.msg);
	return p;
}

/* The value at a dotted path, as the template reads it. */
static const cJSON *at(const cJSON *p, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *v = p;
	for (char *save, *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, atoi(k)) : cJSON_GetObjectItemCaseSensitive(v, k);
	return v;
}

static void expect_str(const cJSON *p, const char *path, const char *want)
{
	const cJSON *v = at(p, path);
	if (!cJSON_IsString(v))
		fail_msg("%s: not a string in the profile", path);
	assert_string_equal(v->valuestring, want);
}

static void expect_num(const cJSON *p, const char *path, double want)
{
	const cJSON *v = at(p, path);
	if (!cJSON_IsNumber(v))
		fail_msg("%s: not a number in the profile", path);
	if (v->valuedouble != want)
		fail_msg("%s = %.17g, want %.17g", path, v->valuedouble, want);
}

static void expect_absent(const cJSON *p, const char *path)
{
	if (at(p, path))
		fail_msg("%s is in the profile but nothing was there to read", path);
}

static const char *const cpu_block =
	"processor\t: %d\nvendor_id\t: GenuineIntel\n"
	"model name\t: Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz\nmicrocode\t: 0x2b000590\n"
	"physical id\t: %d\nsiblings\t: 4\ncore id\t\t: %d\ncpu cores\t: 2\n"
	"flags\t\t: fpu sse2 avx avx2 avx512f avx512bw\n\n";

/* Two sockets x two cores x two threads. */
static void build_cpuinfo(void)
{
	char text[8192] = "", one[512];
	for (int i = 0; i < 8; i++) {
		snprintf(one, sizeof one, cpu_block, i, i / 4, (i / 2) % 2);
		strcat(text, one);
	}
	put("/proc/cpuinfo", text);
}

static void build_gpu(const char *bus, const char *uuid)
{
	char rel[256], info[512];
	snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/vendor", bus);
	put(rel, "0x10de\n");
	snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/device", bus);
	put(rel, "0x2330\n");
	snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/class", bus);
	put(rel, "0x030200\n");
	snprintf(rel, sizeof rel, "/proc/driver/nvidia/gpus/%s/information", bus);
	snprintf(info, sizeof info,
	         "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 10\nGPU UUID: \t %s\n"
	         "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nBus Location: \t %s\n", uuid, bus);
	put(rel, info);
}

/* A whole node: two sockets, 2 NUMA nodes, two H100s, one HCA with two
 * ports, one NIC, one NVMe drive, DMI, systemd machine-id. */
static void build_node(void)
{
	build_cpuinfo();
	put("/proc/meminfo", "MemTotal:       2113336140 kB\nMemFree:        1000 kB\n"
	                     "HugePages_Total:      16\nHugepagesize:       2048 kB\n");
	put("/proc/sys/kernel/osrelease", "6.1.0-26-amd64\n");
	put("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1\n");
	put("/proc/sys/kernel/hostname", "gpu-a17\n");
	put("/proc/sys/kernel/arch", "x86_64\n");
	put("/etc/machine-id", "0123456789abcdef0123456789abcdef\n");
	put("/etc/os-release", "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n");
	put("/sys/class/dmi/id/bios_version", "2.3.4\n");
	put("/sys/class/dmi/id/product_name", "PowerEdge XE9680\n");
	put("/sys/class/dmi/id/product_uuid", "4C4C4544-0042-3510-8052-B2C04F4B3333\n");
	put("/sys/devices/system/node/node0/cpulist", "0-3\n");
	put("/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1056668070 kB\n");
	put("/sys/devices/system/node/node1/cpulist", "4-7\n");
	put("/sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       1056668070 kB\n");
	put("/sys/devices/system/node/possible", "0-1\n");
	build_gpu("0000:19:00.0", "GPU-11111111-2222-3333-4444-555555555555");
	build_gpu("0000:3b:00.0", "GPU-66666666-7777-8888-9999-000000000000");
	/* The GPU's audio function and a non-NVIDIA device are not GPUs. */
	put("/sys/bus/pci/devices/0000:19:00.1/vendor", "0x10de\n");
	put("/sys/bus/pci/devices/0000:19:00.1/class", "0x040300\n");
	put("/sys/bus/pci/devices/0000:00:1f.0/vendor", "0x8086\n");
	put("/sys/bus/pci/devices/0000:00:1f.0/class", "0x030000\n");
	put("/proc/driver/nvidia/version",
	    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n");
	put("/sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
	put("/sys/class/infiniband/mlx5_0/hca_type", "MT4129\n");
	put("/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
	put("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	put("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
	put("/sys/class/infiniband/mlx5_0/ports/2/state", "1: DOWN\n");
	put("/sys/class/infiniband/mlx5_0/ports/2/link_layer", "InfiniBand\n");
	put("/sys/class/net/eth0/address", "b8:ce:f6:00:00:01\n");
	put("/sys/class/net/eth0/mtu", "9000\n");
	put("/sys/class/net/eth0/speed", "100000\n");
	put("/sys/class/net/eth0/operstate", "up\n");
	put("/sys/devices/pci0000:00/0000:00:03.0/driver/.keep", "");
	link_to("/sys/class/net/eth0/device", "../../../devices/pci0000:00/0000:00:03.0");
	put("/sys/bus/pci/drivers/mlx5_core/.keep", "");
	link_to("/sys/devices/pci0000:00/0000:00:03.0/driver_link", "x"); /* noise */
	put("/sys/class/net/lo/address", "00:00:00:00:00:00\n");
	put("/sys/class/net/lo/mtu", "65536\n");
	put("/sys/block/nvme0n1/size", "7501476528\n");
	put("/sys/block/nvme0n1/queue/rotational", "0\n");
	put("/sys/block/nvme0n1/removable", "0\n");
	put("/sys/block/nvme0n1/device/model", "SAMSUNG MZQL27T6HBLA-00A07              \n");
	put("/sys/block/nvme0n1/device/firmware_rev", "GDC5902Q\n");
	put("/sys/block/loop0/size", "0\n");
}

static void reads_a_whole_node(void **state)
{
	(void)state;
	build_node();
	cJSON *p = profile();
	expect_str(p, "schema", "nodegate/profile/1");
	expect_str(p, "node_id", "0123456789abcdef0123456789abcdef");
	expect_str(p, "node_id_source", "/etc/machine-id");
	expect_absent(p, "node_id_note");
	expect_str(p, "hostname", "gpu-a17");
	expect_str(p, "kernel.release", "6.1.0-26-amd64");
	expect_str(p, "kernel.machine", "x86_64");
	expect_absent(p, "kernel.cmdline");
	expect_str(p, "os.id", "ubuntu");
	expect_str(p, "os.version_id", "22.04");
	expect_str(p, "os.pretty_name", "Ubuntu 22.04.4 LTS");
	expect_str(p, "cpu.model", "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz");
	expect_str(p, "cpu.vendor", "GenuineIntel");
	expect_str(p, "cpu.vector", "avx512");
	expect_str(p, "cpu.microcode", "0x2b000590");
	expect_num(p, "cpu.threads", 8);
	expect_num(p, "cpu.sockets", 2);
	expect_num(p, "cpu.cores", 4);
	expect_absent(p, "cpu.max_mhz");
	expect_absent(p, "cpu.governor");
	expect_num(p, "memory.total_bytes", 2113336140.0 * 1024);
	expect_num(p, "memory.gib", 2015);
	expect_num(p, "memory.hugepages", 16);
	expect_num(p, "memory.hugepage_bytes", 2097152);
	expect_num(p, "numa.nodes", 2);
	expect_str(p, "numa.layout.1.cpus", "4-7");
	expect_num(p, "numa.layout.1.memory_bytes", 1056668070.0 * 1024);
	expect_str(p, "firmware.bios_version", "2.3.4");
	expect_str(p, "firmware.product_name", "PowerEdge XE9680");
	expect_absent(p, "firmware.board_serial");
	expect_num(p, "gpu.count", 2);
	expect_str(p, "gpu.model", "NVIDIA H100 80GB HBM3");
	expect_str(p, "gpu.device_id", "10de:2330");
	expect_str(p, "gpu.driver", "550.54.15");
	expect_str(p, "gpu.uuids.1", "GPU-66666666-7777-8888-9999-000000000000");
	expect_str(p, "gpu.devices.0.bus", "0000:19:00.0");
	expect_str(p, "gpu.devices.0.vbios", "96.00.99.00.01");
	expect_num(p, "ib.ports", 2);
	expect_num(p, "ib.active_ports", 1);
	expect_str(p, "ib.devices.0.fw_ver", "28.39.1002");
	expect_str(p, "ib.devices.0.ports.0.rate", "400 Gb/sec (4X NDR)");
	expect_absent(p, "ib.devices.0.ports.1.rate");
	/* lo has no device link: not a NIC of the node. */
	expect_num(p, "nics.count", 1);
	expect_str(p, "nics.devices.0.name", "eth0");
	expect_str(p, "nics.devices.0.pci", "0000:00:03.0");
	expect_num(p, "nics.devices.0.speed_mbps", 100000);
	expect_absent(p, "nics.devices.0.driver");
	expect_num(p, "drives.count", 1);
	expect_str(p, "drives.devices.0.name", "nvme0n1");
	expect_str(p, "drives.devices.0.model", "SAMSUNG MZQL27T6HBLA-00A07");
	expect_num(p, "drives.devices.0.size_bytes", 7501476528.0 * 512);
	assert_true(cJSON_IsFalse(at(p, "drives.devices.0.rotational")));
	expect_absent(p, "container");

	ng_strbuf key = {0};
	ng_err err = {0};
	ng_policy pol;
	ng_policy_default(&pol);
	assert_int_equal(ng_identity_class(p, pol.class_template, &key, &err), 0);
	assert_string_equal(key.s, "2xNVIDIA-H100-80GB-HBM3/Intel-Xeon-Platinum-8480+-CPU-2.00GHzx2/"
	                           "2015GiB/2ib/6.1.0-26-amd64/nvidia-550.54.15");
	ng_strbuf_free(&key);
	cJSON_Delete(p);
}

static void missing_files_are_absent_fields(void **state)
{
	(void)state;
	/* Only a few files: everything else must be absent, not zero or empty. */
	put("/proc/meminfo", "MemFree: 10 kB\n");
	put("/proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n");
	put("/sys/class/dmi/id/bios_version", "1.0\n");
	put("/sys/class/dmi/id/product_name", "\n");
	put("/sys/class/net/eth0/speed", "-1\n");
	put("/sys/class/net/eth0/mtu", "1500\n");
	link_to("/sys/class/net/eth0/device", "/nonexistent"); /* dangling: not physical */
	cJSON *p = profile();
	expect_absent(p, "node_id");
	expect_absent(p, "node_id_source");
	expect_absent(p, "hostname");
	expect_absent(p, "kernel");
	expect_absent(p, "memory");
	expect_num(p, "cpu.threads", 2);
	expect_absent(p, "cpu.model");
	expect_absent(p, "cpu.sockets");
	expect_absent(p, "cpu.cores");
	expect_absent(p, "cpu.vector");
	expect_str(p, "firmware.bios_version", "1.0");
	expect_absent(p, "firmware.product_name");
	expect_absent(p, "numa");
	expect_absent(p, "gpu");
	expect_absent(p, "ib");
	expect_absent(p, "nics");
	expect_absent(p, "drives");
	expect_absent(p, "os");
	assert_int_equal(cJSON_GetArraySize(p), 3); /* schema, cpu, firmware */

	ng_strbuf key = {0};
	ng_err err = {0};
	assert_int_equal(ng_identity_class(p, NG_DEFAULT_CLASS_TEMPLATE, &key, &err), -1);
	assert_non_null(strstr(err.msg, "{memory.gib}"));
	ng_strbuf_free(&key);
	cJSON_Delete(p);
}

static void topology_from_sysfs_when_cpuinfo_lacks_it(void **state)
{
	(void)state;
	put("/proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd sve\n\nprocessor\t: 1\n\n"
	                     "processor\t: 2\n\nprocessor\t: 3\n");
	for (int i = 0; i < 4; i++) {
		char rel[128], v[8];
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", i);
		snprintf(v, sizeof v, "%d\n", i / 2);
		put(rel, v);
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/topology/core_id", i);
		snprintf(v, sizeof v, "%d\n", i % 2);
		put(rel, v);
	}
	put("/sys/devices/system/cpu/cpufreq/policy0/x", "");
	put("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
	put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
	cJSON *p = profile();
	expect_num(p, "cpu.threads", 4);
	expect_num(p, "cpu.sockets", 2);
	expect_num(p, "cpu.cores", 4);
	expect_str(p, "cpu.vector", "sve");
	expect_num(p, "cpu.max_mhz", 3500);
	expect_str(p, "cpu.governor", "performance");
	cJSON_Delete(p);
}

/* An SMBIOS type 17 structure (length 0x28) with its two strings. */
static void put_dimm(int n, unsigned size_word, unsigned ext_mib, unsigned speed)
{
	unsigned char r[0x28 + 64] = {17, 0x28};
	r[0x0C] = size_word & 0xFF, r[0x0D] = size_word >> 8;
	r[0x10] = 1;    /* locator: string 1 */
	r[0x12] = 0x22; /* DDR5 */
	r[0x15] = speed & 0xFF, r[0x16] = speed >> 8;
	r[0x1A] = 2;    /* part: string 2 */
	r[0x1C] = ext_mib & 0xFF, r[0x1D] = (ext_mib >> 8) & 0xFF, r[0x1E] = (ext_mib >> 16) & 0xFF;
	char strings[64];
	int len = snprintf(strings, sizeof strings, "DIMM_%c1%cM321R8GA0BB0-CQKZJ  ", 'A' + n, 0);
	memcpy(r + 0x28, strings, (size_t)len + 1);
	r[0x28 + len + 1] = 0;
	char rel[96];
	snprintf(rel, sizeof rel, "/sys/firmware/dmi/entries/17-%d/raw", n);
	put_bytes(rel, r, 0x28 + (size_t)len + 2);
}

static void memory_population(void **state)
{
	(void)state;
	put_dimm(0, 0x7FFF, 65536, 4800); /* 64 GiB through the extended size */
	put_dimm(1, 0x0000, 0, 0);        /* empty slot */
	put_dimm(2, 0x7FFF, 65536, 4800);
	put_dimm(10, 0x8000 | 512, 0, 0); /* 512 KiB, sorted after 17-2 */
	put("/sys/firmware/dmi/entries/16-0/raw", "not a memory device");
	cJSON *p = profile();
	expect_num(p, "memory.dimms.slots", 4);
	expect_num(p, "memory.dimms.populated", 3);
	expect_num(p, "memory.dimms.total_bytes", 2 * 68719476736.0 + 524288);
	expect_absent(p, "memory.dimms.dimm_bytes"); /* not all the same */
	expect_str(p, "memory.dimms.devices.0.locator", "DIMM_A1");
	expect_str(p, "memory.dimms.devices.0.part", "M321R8GA0BB0-CQKZJ");
	expect_str(p, "memory.dimms.devices.0.type", "DDR5");
	expect_num(p, "memory.dimms.devices.1.speed_mts", 4800);
	expect_str(p, "memory.dimms.devices.2.locator", "DIMM_K1");
	expect_absent(p, "memory.dimms.devices.2.speed_mts");
	expect_absent(p, "memory.total_bytes");
	cJSON_Delete(p);
}

static void listings_in_natural_order(void **state)
{
	(void)state;
	const char *nodes[] = {"node10", "node2", "node0"};
	for (size_t i = 0; i < 3; i++) {
		char rel[96];
		snprintf(rel, sizeof rel, "/sys/devices/system/node/%s/cpulist", nodes[i]);
		put(rel, nodes[i] + 4);
	}
	cJSON *p = profile();
	expect_num(p, "numa.nodes", 3);
	expect_num(p, "numa.layout.0.node", 0);
	expect_num(p, "numa.layout.1.node", 2);
	expect_num(p, "numa.layout.2.node", 10);
	cJSON_Delete(p);
}

static void expect_node_id(const char *id, const char *source)
{
	cJSON *p = profile();
	expect_str(p, "node_id", id);
	expect_str(p, "node_id_source", source);
	cJSON_Delete(p);
}

static void node_id_sources_in_order(void **state)
{
	(void)state;
	put("/proc/sys/kernel/hostname", "n1\n");
	cJSON *p = profile();
	expect_str(p, "node_id", "n1");
	expect_str(p, "node_id_source", "hostname");
	assert_non_null(strstr(at(p, "node_id_note")->valuestring, "not stable"));
	cJSON_Delete(p);

	/* Placeholders vendors ship are never an identity. */
	put("/sys/class/dmi/id/product_serial", "To be filled by O.E.M.\n");
	put("/sys/class/dmi/id/board_serial", "0000000000\n");
	expect_node_id("n1", "hostname");
	put("/sys/class/dmi/id/board_serial", "CN7016352B0123\n");
	expect_node_id("cn7016352b0123", "dmi:board_serial");
	put("/sys/class/dmi/id/product_uuid", "03000200-0400-0500-0006-000700080009\n");
	expect_node_id("cn7016352b0123", "dmi:board_serial");
	put("/sys/class/dmi/id/product_uuid", "4C4C4544-0042-3510-8052-B2C04F4B3333\n");
	expect_node_id("4c4c4544-0042-3510-8052-b2c04f4b3333", "dmi:product_uuid");
	/* A first-boot machine-id is not one. */
	put("/etc/machine-id", "uninitialized\n");
	expect_node_id("4c4c4544-0042-3510-8052-b2c04f4b3333", "dmi:product_uuid");
	put("/var/lib/dbus/machine-id", "fedcba9876543210fedcba9876543210\n");
	expect_node_id("fedcba9876543210fedcba9876543210", "/var/lib/dbus/machine-id");
	put("/etc/machine-id", "0123456789abcdef0123456789abcdef\n");
	expect_node_id("0123456789abcdef0123456789abcdef", "/etc/machine-id");

	/* In a container the image's machine-id is not the node's: DMI first. */
	put("/proc/self/cgroup",
	    "0::/system.slice/docker-3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100.scope\n");
	expect_node_id("4c4c4544-0042-3510-8052-b2c04f4b3333", "dmi:product_uuid");
}

static void container_identity(void **state)
{
	(void)state;
	const char *id = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100";
	char line[512];
	snprintf(line, sizeof line,
	         "12:memory:/kubepods/burstable/pod1234/cri-containerd-%s.scope\n1:name=systemd:/\n", id);
	put("/proc/self/cgroup", line);
	put("/etc/machine-id", "0123456789abcdef0123456789abcdef\n");
	setenv("NODEGATE_CONTAINER_DIGEST", "sha256:abcdef0123", 1);
	cJSON *p = profile();
	expect_str(p, "container.runtime", "containerd");
	expect_str(p, "container.id", id);
	expect_str(p, "container.id_source", "/proc/self/cgroup");
	assert_true(cJSON_IsTrue(at(p, "container.kubernetes")));
	expect_str(p, "container.digest", "sha256:abcdef0123");
	expect_str(p, "container.digest_source", "env:NODEGATE_CONTAINER_DIGEST");
	/* No DMI id here: the machine-id is used, with a warning. */
	expect_str(p, "node_id_source", "/etc/machine-id");
	assert_non_null(at(p, "node_id_note"));
	cJSON_Delete(p);
	unsetenv("NODEGATE_CONTAINER_DIGEST");

	/* cgroup v2 namespace: only the bind mounts tell the docker id. */
	put("/proc/self/cgroup", "0::/\n");
	snprintf(line, sizeof line,
	         "612 600 254:1 /var/lib/docker/containers/%s/hostname /etc/hostname rw - ext4 /dev/vda1 rw\n",
	         id);
	put("/proc/self/mountinfo", line);
	p = profile();
	expect_str(p, "container.runtime", "docker");
	expect_str(p, "container.id", id);
	expect_str(p, "container.id_source", "/proc/self/mountinfo");
	expect_absent(p, "container.digest");
	expect_absent(p, "container.kubernetes");
	cJSON_Delete(p);

	/* Neither: not a container, and nothing pretends it is. */
	put("/proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	p = profile();
	expect_absent(p, "container");
	cJSON_Delete(p);
}

static void gpus_without_the_driver(void **state)
{
	(void)state;
	/* PCI only (driver not loaded): count and device id, no model or UUID. */
	put("/sys/bus/pci/devices/0000:19:00.0/vendor", "0x10de\n");
	put("/sys/bus/pci/devices/0000:19:00.0/device", "0x2330\n");
	put("/sys/bus/pci/devices/0000:19:00.0/class", "0x030200\n");
	put("/proc/meminfo", "MemTotal: 1048576 kB\n");
	cJSON *p = profile();
	expect_num(p, "gpu.count", 1);
	expect_str(p, "gpu.device_id", "10de:2330");
	expect_absent(p, "gpu.model");
	expect_absent(p, "gpu.uuids");
	expect_absent(p, "gpu.driver");
	ng_strbuf key = {0};
	ng_err err = {0};
	assert_int_equal(ng_identity_class(p, "[{gpu.count}x{gpu.model|gpu.device_id}/]{memory.gib}GiB",
	                                   &key, &err), 0);
	assert_string_equal(key.s, "1x10de:2330/1GiB");
	ng_strbuf_free(&key);
	cJSON_Delete(p);
}

static int fake_nvml(cJSON *gpu, ng_err *err)
{
	(void)err;
	cJSON_AddStringToObject(gpu, "cuda", "12.4");
	return 0;
}

static int broken_nvml(cJSON *gpu, ng_err *err)
{
	(void)gpu;
	return ng_fail(err, "libnvidia-ml.so.1: cannot open");
}

static void nvml_hook_adds_to_gpu(void **state)
{
	(void)state;
	build_gpu("0000:19:00.0", "GPU-1");
	ng_identity_nvml_hook = fake_nvml;
	cJSON *p = profile();
	expect_str(p, "gpu.cuda", "12.4");
	expect_str(p, "gpu.model", "NVIDIA H100 80GB HBM3");
	cJSON_Delete(p);
	ng_identity_nvml_hook = broken_nvml;
	p = profile();
	expect_str(p, "gpu.nvml_error", "libnvidia-ml.so.1: cannot open");
	expect_num(p, "gpu.count", 1);
	cJSON_Delete(p);
}

/* Template language on a small hand-written profile. */
static const char *const small_profile =
	"{\"a\": {\"b\": \"Intel(R) Xeon(TM)  Gold/6338 (x)\", \"n\": 8, \"f\": 2.5, \"t\": true,"
	" \"z\": null, \"o\": {}, \"l\": [\"u0\", \"u1\"]}, \"k\": \"6.1.0-26\"}";

static void expect_key(const char *tmpl, const char *want)
{
	ng_err err = {0};
	cJSON *p = ng_json_parse(small_profile, strlen(small_profile), &err);
	assert_non_null(p);
	ng_strbuf key = {0};
	if (ng_identity_class(p, tmpl, &key, &err) < 0)
		fail_msg("template %s: %s", tmpl, err.msg);
	assert_string_equal(key.s, want);
	ng_strbuf_free(&key);
	cJSON_Delete(p);
}

static void expect_template_error(const char *tmpl, const char *words)
{
	ng_err err = {0};
	cJSON *p = ng_json_parse(small_profile, strlen(small_profile), &err);
	ng_strbuf key = {0};
	if (ng_identity_class(p, tmpl, &key, &err) == 0)
		fail_msg("template %s gave \"%s\", wanted an error", tmpl, key.s);
	if (!strstr(err.msg, words))
		fail_msg("template %s: error \"%s\" lacks \"%s\"", tmpl, err.msg, words);
	ng_strbuf_free(&key);
	cJSON_Delete(p);
}

static void template_language(void **state)
{
	(void)state;
	expect_key("plain", "plain");
	expect_key("{a.b}", "Intel-Xeon-Gold-6338-x");
	expect_key("{a.n}x/{a.f}/{a.t}/{k}", "8x/2.5/true/6.1.0-26");
	expect_key("{a.l.1}", "u1");
	expect_key("{nope?}-{k}", "-6.1.0-26");
	expect_key("{a.z?}{k}", "6.1.0-26"); /* null is unknown, as absent */
	expect_key("{nope|a.n}", "8");
	expect_key("{nope|also.not?}k", "k");
	expect_key("[{nope}x/]{k}", "6.1.0-26");
	expect_key("[{a.n}x/]{k}", "8x/6.1.0-26");
	expect_key("[lit-{a.n}-{nope?}/]{k}", "6.1.0-26"); /* any missing field drops the section */
	expect_key("\\{\\}\\[\\]\\\\", "{}[]\\");
	expect_template_error("{nope}", "{nope} is not in this node's profile");
	expect_template_error("{a.z}", "{a.z}");
	expect_template_error("{a.o}", "not a single value");
	expect_template_error("{a.l}", "not a single value");
	expect_template_error("{a.n", "without a closing");
	expect_template_error("a}", "without an opening");
	expect_template_error("[a", "without a closing ']'");
	expect_template_error("a]", "without an opening '['");
	expect_template_error("[[{k}]]", "do not nest");
	expect_template_error("{}", "empty");
	expect_template_error("{a b}", "bad field name");
	expect_template_error("", "empty");
	expect_template_error("[{nope}]", "empty class key");
	expect_template_error("x\\", "lone");
}

static cJSON *record(const char *metric, const char *node)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "metric", metric);
	if (node)
		cJSON_AddStringToObject(r, "node", node);
	cJSON *tool = cJSON_AddObjectToObject(r, "tool");
	cJSON_AddStringToObject(tool, "version", "9.8.7");
	return r;
}

static void stamp_records(void **state)
{
	(void)state;
	build_node();
	cJSON *recs = cJSON_CreateArray();
	cJSON_AddItemToArray(recs, record("storage.read", NULL));
	cJSON_AddItemToArray(recs, record("cpu.gflops", "given-node"));
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err = {0};
	const char *doc = "{\"identity\": {\"class_template\": \"{cpu.model}x{cpu.sockets}/{gpu.count}gpu\"}}";
	cJSON *d = ng_json_parse(doc, strlen(doc), &err);
	assert_int_equal(ng_policy_apply_json(&pol, d, "p.json", &err), 0);
	cJSON_Delete(d);
	ng_identity_opts o = {.root = root};
	assert_int_equal(ng_identity_stamp(recs, &pol, &o, &err), 0);
	const cJSON *r0 = cJSON_GetArrayItem(recs, 0), *r1 = cJSON_GetArrayItem(recs, 1);
	expect_str(r0, "node", "0123456789abcdef0123456789abcdef");
	expect_str(r1, "node", "given-node"); /* kept */
	expect_str(r0, "class", "Intel-Xeon-Platinum-8480+-CPU-2.00GHzx2/2gpu");
	expect_str(r1, "class", "Intel-Xeon-Platinum-8480+-CPU-2.00GHzx2/2gpu");
	expect_str(r0, "profile.hostname", "gpu-a17");
	expect_str(r1, "profile.tools.nodegate", "9.8.7");
	expect_num(r1, "profile.gpu.count", 2);
	cJSON_Delete(recs);

	/* A template this node cannot satisfy: node and profile stay, class does not. */
	cJSON *one = record("hostmem.copy", NULL);
	snprintf(pol.class_template, sizeof pol.class_template, "{cpu.model}/{nvlink.lanes}");
	assert_int_equal(ng_identity_stamp(one, &pol, &o, &err), -1);
	assert_non_null(strstr(err.msg, "{nvlink.lanes}"));
	expect_str(one, "node", "0123456789abcdef0123456789abcdef");
	expect_absent(one, "class");
	expect_num(one, "profile.cpu.sockets", 2);
	cJSON_Delete(one);

	/* The default policy (pol NULL) gives the default key. */
	one = record("hostmem.copy", NULL);
	assert_int_equal(ng_identity_stamp(one, NULL, &o, &err), 0);
	expect_str(one, "class", "2xNVIDIA-H100-80GB-HBM3/Intel-Xeon-Platinum-8480+-CPU-2.00GHzx2/"
	                         "2015GiB/2ib/6.1.0-26-amd64/nvidia-550.54.15");
	cJSON_Delete(one);

	cJSON *num = cJSON_CreateNumber(1);
	assert_int_equal(ng_identity_stamp(num, NULL, &o, &err), -1);
	cJSON_Delete(num);
}

static void template_policy_value(void **state)
{
	(void)state;
	ng_policy pol;
	ng_policy_default(&pol);
	ng_err err = {0};
	char big[NG_TEMPLATE_MAX + 16];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	char doc[NG_TEMPLATE_MAX + 64];
	snprintf(doc, sizeof doc, "{\"identity\": {\"class_template\": \"%s\"}}", big);
	cJSON *d = ng_json_parse(doc, strlen(doc), &err);
	assert_int_equal(ng_policy_apply_json(&pol, d, "p.json", &err), -1);
	assert_non_null(strstr(err.msg, "identity.class_template"));
	assert_string_equal(pol.class_template, NG_DEFAULT_CLASS_TEMPLATE);
	cJSON_Delete(d);
}

/* The software identity moves with what a planned change moves, and only
 * with that. */
static void software_identity(void **state)
{
	(void)state;
	const char *base = "{\"node_id\":\"a\",\"hostname\":\"n1\",\"kernel\":{\"release\":\"6.1.0\"},"
	                   "\"firmware\":{\"bios_version\":\"2.1\"},\"gpu\":{\"driver\":\"550.54\"},"
	                   "\"ib\":{\"devices\":[{\"name\":\"mlx5_0\",\"fw_ver\":\"28.39\"}]},"
	                   "\"memory\":{\"total_bytes\":100}}";
	cJSON *p = cJSON_Parse(base);
	ng_strbuf a = {0}, b = {0};
	ng_identity_software(p, &a);
	assert_int_equal(a.len, 19);
	assert_memory_equal(a.s, "sw-", 3);
	/* Not software: another node, another host name, other memory. */
	cJSON_ReplaceItemInObject(p, "node_id", cJSON_CreateString("b"));
	cJSON_ReplaceItemInObject(p, "hostname", cJSON_CreateString("n2"));
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(p, "memory"), "total_bytes", cJSON_CreateNumber(7));
	ng_identity_software(p, &b);
	assert_string_equal(a.s, b.s);
	/* Each of these is a planned change. */
	static const char *const changes[][3] = {
		{"kernel", "release", "6.1.1"},
		{"firmware", "bios_version", "2.2"},
		{"gpu", "driver", "550.90"},
	};
	for (size_t i = 0; i < 3; i++) {
		cJSON *q = cJSON_Parse(base);
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(q, changes[i][0]), changes[i][1],
		                          cJSON_CreateString(changes[i][2]));
		ng_identity_software(q, &b);
		assert_string_not_equal(a.s, b.s);
		cJSON_Delete(q);
	}
	cJSON *q = cJSON_Parse(base);
	cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(q, "ib"), "devices"), 0);
	cJSON_ReplaceItemInObject(dev, "fw_ver", cJSON_CreateString("28.40"));
	ng_identity_software(q, &b);
	assert_string_not_equal(a.s, b.s);
	cJSON_Delete(q);
	cJSON_Delete(p);
	ng_strbuf_free(&a);
	ng_strbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(reads_a_whole_node, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_files_are_absent_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(topology_from_sysfs_when_cpuinfo_lacks_it, setup, teardown),
		cmocka_unit_test_setup_teardown(node_id_sources_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(container_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(gpus_without_the_driver, setup, teardown),
		cmocka_unit_test_setup_teardown(nvml_hook_adds_to_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_population, setup, teardown),
		cmocka_unit_test_setup_teardown(listings_in_natural_order, setup, teardown),
		cmocka_unit_test(template_language),
		cmocka_unit_test_setup_teardown(stamp_records, setup, teardown),
		cmocka_unit_test(template_policy_value),
		cmocka_unit_test(software_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
