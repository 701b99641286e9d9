/* The failing domain's evidence: the /proc readers (parse/proc_text.h), the
 * four collectors on a planted root and the synthetic NVML
 * (collect/evidence.h), and the plain summary of what they found
 * (judge/evidence_summary.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/evidence.h"
#include "judge/evidence_summary.h"
#include "parse/proc_text.h"

static char root[PATH_MAX - 64];

static void mkdirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
}

static void plant(const char *rel, const char *text)
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

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/ng-evidence-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	unsetenv("NODEGATE_SYNTH_GPUS");
	return 0;
}

/* The summary lines of one capture. */
static size_t summary_of(const char *domain, cJSON *ev, char (*lines)[NG_SUMMARY_LINE], size_t cap)
{
	cJSON *caps = cJSON_CreateArray(), *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "domain", domain);
	cJSON_AddItemToObject(c, "evidence", ev);
	cJSON_AddItemToArray(caps, c);
	size_t n = ng_evidence_summary(caps, lines, cap);
	cJSON_Delete(caps);
	return n;
}

static bool has_line(char (*lines)[NG_SUMMARY_LINE], size_t n, const char *text)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(lines[i], text) == 0)
			return true;
	return false;
}

static void test_diskstats(void **state)
{
	(void)state;
	const char text[] =
		"   8       0 sda 1200 10 96000 340 5000 20 400000 9100 2 4000 9440 0 0 0 0\n"
		" 259       0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11\n"
		"   8       1 sda1 x 10 96000 340 5000 20 400000 9100 2 4000 9440\n" /* not a number */
		"   8       2\n"                                                  /* too short */
		"\n";
	ng_diskstat d[4];
	size_t bad;
	assert_int_equal(ng_diskstats_parse(text, sizeof text - 1, d, 4, &bad), 2);
	assert_int_equal(bad, 2);
	assert_string_equal(d[0].name, "sda");
	assert_int_equal(d[0].reads, 1200);
	assert_int_equal(d[0].writes, 5000);
	assert_int_equal(d[0].ms_writing, 9100);
	assert_int_equal(d[0].in_flight, 2);
	assert_int_equal(d[1].ms_weighted, 11);
	/* a NUL inside a line is not text */
	const char nul[] = "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\0 junk\n";
	assert_int_equal(ng_diskstats_parse(nul, sizeof nul - 1, d, 4, &bad), 0);
	assert_int_equal(bad, 1);
}

static void test_mounts(void **state)
{
	(void)state;
	const char text[] = "/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n"
	                    "fs01:/export/data /data nfs4 rw,vers=4.2,hard 0 0\n"
	                    "/dev/sdb1 /data/local\\040disk xfs ro,noatime 0 0\n"
	                    "broken-line\n";
	ng_mount m[8];
	size_t bad;
	size_t n = ng_mounts_parse(text, sizeof text - 1, m, 8, &bad);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 1);
	assert_string_equal(m[2].mountpoint, "/data/local disk");
	assert_string_equal(ng_mount_of(m, n, "/data/set1")->fstype, "nfs4");
	assert_string_equal(ng_mount_of(m, n, "/data/local disk/x")->fstype, "xfs");
	/* /database is not under /data */
	assert_string_equal(ng_mount_of(m, n, "/database")->mountpoint, "/");
	assert_null(ng_mount_of(m, 0, "/x"));
}

static void test_compute_power_cap(void **state)
{
	(void)state;
	plant("/gpus.json", "{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":["
	                    "{\"power_limit_mw\":300000,\"clock_reasons\":[\"sw_power_cap\"],"
	                    "\"app_sm_clock_mhz\":1410,\"processes\":[4242],\"utilization_gpu\":60},"
	                    "{}]}");
	char gpus[PATH_MAX];
	snprintf(gpus, sizeof gpus, "%s/gpus.json", root);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	plant("/proc/self/status", "Name:\tnodegate\nCpus_allowed_list:\t0-15\n");
	plant("/proc/self/cgroup", "0::/slurm/job_77\n");
	plant("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
	plant("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
	plant("/sys/devices/system/cpu/cpufreq/policy0", "not a cpu\n");
	ng_evidence_opts o = {.root = root, .nvml_lib = NG_SYNTH_LIB};
	cJSON *ev = ng_evidence_collect("compute", &o);
	assert_non_null(ev);
	cJSON *cpu = cJSON_GetObjectItem(ev, "cpu");
	assert_string_equal(cJSON_GetObjectItem(cpu, "affinity")->valuestring, "0-15");
	assert_string_equal(cJSON_GetObjectItem(cpu, "cgroup")->valuestring, "0::/slurm/job_77");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "gpus")), 2);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("compute", ev, lines, 16);
	assert_true(has_line(lines, n, "GPU 0: power limit 300 W of 700 W"));
	assert_true(has_line(lines, n, "GPU 0: clocks held back by sw_power_cap"));
	assert_true(has_line(lines, n, "GPU 0: application clock 1410 MHz of 1980 MHz"));
	assert_true(has_line(lines, n, "another process (pid 4242) was on GPU 0, at 60% utilization"));
	assert_true(has_line(lines, n, "CPU frequency governor powersave on 2 CPUs"));
	/* the healthy GPU says nothing */
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(lines[i], "GPU 1"));
}

/* The kernel log's Xids since boot, read from the log's first record. */
static void test_compute_xids_since_boot(void **state)
{
	(void)state;
	plant("/gpus.json", "{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":[{},{}]}");
	char gpus[PATH_MAX];
	snprintf(gpus, sizeof gpus, "%s/gpus.json", root);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	/* the synthetic GPUs sit at 0000:18:00 and 0000:2a:00 */
	plant("/dev/kmsg", "6,100,1000000,-;nvidia: loading out-of-tree module\n"
	                   "4,101,2000000,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=77, name=train, "
	                   "An uncorrectable double bit error (DBE) has been detected on GPU\n"
	                   "4,102,3000000,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=77, name=train, "
	                   "An uncorrectable double bit error (DBE) has been detected on GPU\n"
	                   "4,103,4000000,-;NVRM: Xid (PCI:0000:c1:00): 79, GPU has fallen off the bus.\n");
	ng_evidence_opts o = {.root = root, .nvml_lib = NG_SYNTH_LIB};
	cJSON *ev = ng_evidence_compute(&o);
	cJSON *x = cJSON_GetObjectItem(ev, "xids_since_boot");
	assert_int_equal(cJSON_GetObjectItem(x, "count")->valueint, 3);
	cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(x, "newest"), 0);
	assert_string_equal(cJSON_GetObjectItem(first, "bus")->valuestring, "0000:2a:00");
	assert_int_equal(cJSON_GetObjectItem(first, "code")->valueint, 48);
	assert_int_equal(cJSON_GetObjectItem(first, "at_s")->valueint, 2);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("compute", ev, lines, 16);
	for (size_t i = 0; i < n; i++)
		print_message("  %s\n", lines[i]);
	assert_true(has_line(lines, n, "GPU 1 (0000:2a:00): Xid 48 since boot, 2 times: An uncorrectable "
	                               "double bit error (DBE) has been detected on GPU"));
	/* a GPU NVML does not list is named by its address */
	assert_true(has_line(lines, n, "0000:c1:00: Xid 79 since boot: GPU has fallen off the bus."));
}

static void test_compute_without_nvml(void **state)
{
	(void)state;
	ng_evidence_opts o = {.root = root, .nvml_lib = "/nonexistent/libnvidia-ml.so.1"};
	cJSON *ev = ng_evidence_compute(&o);
	assert_non_null(ev);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "gpus")), 0);
	/* NVML and the unplanted /proc files are listed, never read as zero */
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "unreadable")) >= 3);
	char lines[4][NG_SUMMARY_LINE];
	assert_int_equal(summary_of("compute", ev, lines, 4), 0);
}

static void test_memory(void **state)
{
	(void)state;
	plant("/gpus.json", "{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":["
	                    "{\"ecc\":{\"volatile\":{\"uncorrected\":2}},"
	                    "\"remapped_rows\":{\"pending\":true}},{}]}");
	char gpus[PATH_MAX];
	snprintf(gpus, sizeof gpus, "%s/gpus.json", root);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	plant("/sys/devices/system/edac/mc/mc0/ce_count", "17\n");
	plant("/sys/devices/system/edac/mc/mc0/ue_count", "0\n");
	plant("/proc/meminfo", "MemTotal: 1000 kB\nHardwareCorrupted:     4 kB\n");
	cJSON *recs = cJSON_Parse("[{\"domain\":\"memory\",\"metric\":\"hostmem.pattern\","
	                          "\"reason\":\"walking ones: 3 words wrong\",\"tool\":{\"name\":"
	                          "\"nodegate\",\"probe\":\"hostmem\"}},{\"domain\":\"compute\"}]");
	ng_evidence_opts o = {.root = root, .nvml_lib = NG_SYNTH_LIB, .records = recs};
	cJSON *ev = ng_evidence_memory(&o);
	cJSON_Delete(recs);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "diagnostics")), 1);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("memory", ev, lines, 16);
	assert_true(has_line(lines, n, "GPU 0: 2 uncorrectable ECC errors since the last reset"));
	assert_true(has_line(lines, n, "GPU 0: a row remap is pending (reset the GPU)"));
	assert_true(has_line(lines, n, "host memory controller mc0: 17 corrected errors"));
	assert_true(has_line(lines, n, "the kernel took 4 kB of host memory out of use (HardwareCorrupted)"));
	assert_true(has_line(lines, n, "hostmem.pattern: the diagnostic said \"walking ones: 3 words wrong\""));
}

static void test_storage(void **state)
{
	(void)state;
	plant("/proc/diskstats", "   8 0 sda 100 0 800 50 200 0 1600 300 1 400 350\n"
	                         "   7 0 loop0 1 0 8 0 0 0 0 0 0 0 0\n");
	plant("/proc/self/mounts", "/dev/sda1 / ext4 rw 0 0\nfs01:/scratch /scratch nfs4 rw,sync 0 0\n");
	plant("/proc/meminfo", "Cached: 512 kB\nDirty: 8 kB\n");
	plant("/proc/self/mountstats",
	      "device rootfs mounted on / with fstype rootfs\n"
	      "device fs01:/scratch mounted on /scratch with fstype nfs4 statvers=1.1\n"
	      "\topts:\trw,vers=4.2,hard\n"
	      "\tage:\t86400\n"
	      "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
	      "\txprt:\ttcp 0 1 2 0 11 123 123 0 456 0 2 0 0\n"
	      "\tper-op statistics\n"
	      "\t        NULL: 0 0 0 0 0 0 0 0 0\n"
	      "\t        READ: 1000 1012 2 120000 102400000 500 72000 75000 0\n"
	      "\t       WRITE: 10 10 0 4096000 1200 0 50 60 1\n"
	      "\n");
	cJSON *recs = cJSON_Parse("[{\"domain\":\"storage\",\"metric\":\"storage.seqread.gbps\","
	                          "\"conditions\":{\"where\":{\"path\":\"/scratch/ng\"}}}]");
	ng_evidence_opts o = {.root = root, .records = recs, .settle_s = 0.01};
	cJSON *ev = ng_evidence_storage(&o);
	cJSON_Delete(recs);
	/* the file did not change between the reads: no I/O; loop devices left out */
	cJSON *devs = cJSON_GetObjectItem(ev, "devices");
	assert_int_equal(cJSON_GetArraySize(devs), 1);
	assert_int_equal(cJSON_GetObjectItem(devs->child, "ios")->valueint, 0);
	assert_int_equal(cJSON_GetObjectItem(devs->child, "in_flight")->valueint, 1);
	cJSON *t = cJSON_GetObjectItem(ev, "target_mount");
	assert_string_equal(cJSON_GetObjectItem(t, "fstype")->valuestring, "nfs4");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "page_cache"), "Dirty")->valuestring,
	                    "8 kB");
	/* the shared service's own account of its RPCs */
	cJSON *nfs = cJSON_GetObjectItem(ev, "nfs_mountstats");
	assert_int_equal(cJSON_GetArraySize(nfs), 1);
	cJSON *read = cJSON_GetArrayItem(cJSON_GetObjectItem(nfs->child, "ops"), 0);
	assert_string_equal(cJSON_GetObjectItem(read, "op")->valuestring, "READ");
	assert_int_equal(cJSON_GetObjectItem(read, "retransmissions")->valueint, 12);
	assert_int_equal(cJSON_GetObjectItem(read, "avg_rtt_ms")->valueint, 72);
	/* what another process's I/O during the capture reads as */
	cJSON_SetNumberValue(cJSON_GetObjectItem(devs->child, "ios_per_s"), 420);
	cJSON_AddNumberToObject(devs->child, "ms_per_io", 75);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("storage", ev, lines, 16);
	assert_true(has_line(lines, n, "another process drove 420 I/Os per second on sda while nodegate ran nothing"));
	assert_true(has_line(lines, n, "sda: 75 ms per I/O"));
	assert_true(has_line(lines, n, "the target /scratch/ng is on nfs4 from fs01:/scratch: a shared service"));
	assert_true(has_line(lines, n, "the target's file system is mounted sync"));
	assert_true(has_line(lines, n, "NFS /scratch: 12 of 1000 READ calls retransmitted"));
	assert_true(has_line(lines, n, "NFS /scratch: 2 major timeouts of READ"));
	assert_true(has_line(lines, n, "NFS /scratch: READ takes 75 ms on average (round trip 72 ms) over 1000 calls"));
	assert_true(has_line(lines, n, "NFS /scratch: 1 WRITE call failed"));
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(lines[i], "WRITE takes")); /* 6 ms: not slow */
}

/* /proc/self/mountstats: only NFS blocks, per-op lines with and without
 * the errors column, escapes undone, and what does not read counted. */
static void test_mountstats(void **state)
{
	(void)state;
	const char text[] =
		"device sysfs mounted on /sys with fstype sysfs\n"
		"device fs02:/home mounted on /home\\040dirs with fstype nfs statvers=1.0\n"
		"\tage:\t30\n"
		"\tper-op statistics\n"
		"\t     GETATTR: 7 7 0 700 800 1 14 21\n"
		"\t        READ: 2 2 x 0 0 0 0 0\n"          /* not a number */
		"\t      lower!: 1 1 0 0 0 0 0 0\n"          /* not an op name */
		"\t      ACCESS: 0 0 0 0 0 0 0 0\n"          /* no calls: left out */
		"device broken line\n"
		"device fs03:/x mounted on /x with fstype nfs4 statvers=1.1\n"
		"\tper-op statistics\n"
		"\t       WRITE: 4 5 0 40 4 0 8 12 1\n"
		"device tmpfs mounted on /tmp with fstype tmpfs\n"
		"\t       WRITE: 4 5 0 40 4 0 8 12 1\n";     /* not NFS: not read */
	ng_nfs_mount *m = calloc(4, sizeof *m);
	size_t bad;
	size_t n = ng_mountstats_parse(text, sizeof text - 1, m, 4, &bad);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 1);
	assert_string_equal(m[0].mountpoint, "/home dirs");
	assert_string_equal(m[0].fstype, "nfs");
	assert_true(m[0].has_age);
	assert_int_equal(m[0].age_s, 30);
	assert_int_equal(m[0].n_ops, 1);
	assert_int_equal(m[0].ops_unread, 2);
	assert_string_equal(m[0].op[0].name, "GETATTR");
	assert_int_equal(m[0].op[0].execute_ms, 21);
	assert_false(m[0].op[0].has_errors);
	assert_string_equal(m[1].device, "fs03:/x");
	assert_int_equal(m[1].op[0].transmissions, 5);
	assert_true(m[1].op[0].has_errors);
	assert_int_equal(m[1].op[0].errors, 1);
	/* at most cap mounts */
	assert_int_equal(ng_mountstats_parse(text, sizeof text - 1, m, 1, &bad), 1);
	free(m);
}

static void test_fabric(void **state)
{
	(void)state;
	plant("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	plant("/sys/class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
	plant("/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
	plant("/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed", "3\n");
	plant("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "0\n");
	plant("/sys/class/infiniband/mlx5_0/device/numa_node", "1\n");
	plant("/sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
	/* GPU 0 and GPU 2 may not reach each other (a BIOS's ACS, a driver's
	 * registry key); GPU 2 has no NVLink */
	plant("/gpus.json", "{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":["
	                    "{\"p2p\":{\"2\":\"disabled_by_regkey\"}},{},{\"nvlink\":[]}]}");
	char gpus[PATH_MAX];
	snprintf(gpus, sizeof gpus, "%s/gpus.json", root);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	setenv("NCCL_IB_HCA", "mlx5_0", 1);
	ng_evidence_opts o = {.root = root, .nvml_lib = NG_SYNTH_LIB};
	cJSON *ev = ng_evidence_fabric(&o);
	unsetenv("NCCL_IB_HCA");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "hca_numa_node"), "mlx5_0")->valueint, 1);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "transport_selection"), "NCCL_IB_HCA")->valuestring,
		"mlx5_0");
	cJSON *pa = cJSON_GetObjectItem(ev, "peer_access");
	assert_int_equal(cJSON_GetObjectItem(pa, "gpus")->valueint, 3);
	cJSON *pairs = cJSON_GetObjectItem(pa, "pairs");
	assert_int_equal(cJSON_GetArraySize(pairs), 3);
	/* 0-1: NVLink; 0-2: everything off; 1-2: PCIe only, which is no fault */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pairs, 0), "nvlink")->valuestring, "ok");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pairs, 1), "read")->valuestring,
	                    "disabled_by_regkey");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pairs, 2), "nvlink")->valuestring,
	                    "not_supported");
	assert_int_equal(cJSON_GetObjectItem(pa, "pairs_not_ok")->valueint, 5);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("fabric", ev, lines, 16);
	assert_true(has_line(lines, n, "mlx5_0 port 1: link_downed counter 3 (no earlier read to compare)"));
	assert_true(has_line(lines, n, "mlx5_1 port 1: DOWN"));
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(lines[i], "symbol_error"));
	assert_true(has_line(lines, n, "GPU 0 and GPU 2: peer access read disabled_by_regkey, write "
	                               "disabled_by_regkey, nvlink disabled_by_regkey, atomics "
	                               "disabled_by_regkey, pci disabled_by_regkey"));
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(lines[i], "GPU 1 and GPU 2"));
}

static void test_no_collector(void **state)
{
	(void)state;
	assert_null(ng_evidence_collect("health", NULL));
	assert_null(ng_evidence_collect(NULL, NULL));
	char lines[2][NG_SUMMARY_LINE];
	cJSON *junk = cJSON_Parse("[1, {\"domain\": 3}, {\"domain\":\"compute\",\"evidence\":[]},"
	                          "{\"domain\":\"compute\",\"evidence\":{\"gpus\":{\"a\":1}}}]");
	assert_int_equal(ng_evidence_summary(junk, lines, 2), 0);
	cJSON_Delete(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diskstats),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_mountstats),
		cmocka_unit_test_setup_teardown(test_compute_xids_since_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_power_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_without_nvml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_storage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fabric, setup, teardown),
		cmocka_unit_test(test_no_collector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
