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
	/* what another process's I/O during the capture reads as */
	cJSON_SetNumberValue(cJSON_GetObjectItem(devs->child, "ios_per_s"), 420);
	cJSON_AddNumberToObject(devs->child, "ms_per_io", 75);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("storage", ev, lines, 16);
	assert_true(has_line(lines, n, "another process drove 420 I/Os per second on sda while nodegate ran nothing"));
	assert_true(has_line(lines, n, "sda: 75 ms per I/O"));
	assert_true(has_line(lines, n, "the target /scratch/ng is on nfs4 from fs01:/scratch: a shared service"));
	assert_true(has_line(lines, n, "the target's file system is mounted sync"));
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
	setenv("NCCL_IB_HCA", "mlx5_0", 1);
	ng_evidence_opts o = {.root = root};
	cJSON *ev = ng_evidence_fabric(&o);
	unsetenv("NCCL_IB_HCA");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "hca_numa_node"), "mlx5_0")->valueint, 1);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "transport_selection"), "NCCL_IB_HCA")->valuestring,
		"mlx5_0");
	char lines[16][NG_SUMMARY_LINE];
	size_t n = summary_of("fabric", ev, lines, 16);
	assert_true(has_line(lines, n, "mlx5_0 port 1: link_downed counter 3 (no earlier read to compare)"));
	assert_true(has_line(lines, n, "mlx5_1 port 1: DOWN"));
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(lines[i], "symbol_error"));
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
		cmocka_unit_test_setup_teardown(test_compute_power_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_without_nvml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_storage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fabric, setup, teardown),
		cmocka_unit_test(test_no_collector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
