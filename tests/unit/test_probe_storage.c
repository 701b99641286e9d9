/* The storage probe on a real directory, with small files and short runs:
 * the content checker, where a path lives, a clean run of each pattern, a
 * planted corrupted and a planted misplaced block (wrong > 0, gate "corrupt"),
 * and every way a run can fail to measure (full, read-only, vanished, I/O
 * error, a signal), each leaving no test file behind. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/probe_storage.h"
#include "core/json.h"
#include "core/policy.h"
#include "judge/record.h"
#include "core/record_build.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ng-storage-test.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

/* Files in tmpdir: a run must leave none. */
static int files_left(void)
{
	DIR *d = opendir(tmpdir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

static void small_opts(ng_storage_opts *o, ng_storage_pattern p)
{
	ng_storage_opts_default(o);
	o->dir = tmpdir;
	o->pattern = p;
	o->size = 8u << 20;
	o->block = ng_storage_pattern_random(p) ? 4096 : 64u << 10;
	o->depth = 8;
	o->duration_s = 0.4;
	o->interval_s = 0.1;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = ng_json_get(o, k);
	return o;
}

static double num(const cJSON *rec, const char *path)
{
	const cJSON *v = get(rec, path);
	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}

static const char *str(const cJSON *rec, const char *path)
{
	const cJSON *v = get(rec, path);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static int n_samples(const cJSON *rec) { return cJSON_GetArraySize(ng_json_get(rec, "samples")); }

/* The gate's verdict for rec against a baseline at 1.0 of its own unit. */
static const char *verdict(const cJSON *rec)
{
	ng_policy pol;
	ng_policy_default(&pol);
	ng_gate_input in = {0};
	ng_err err;
	cJSON *b = cJSON_Parse("{\"schema\": \"nodegate/baseline/1\", \"median\": 1.0, \"cv\": 0.05}");
	cJSON *r = cJSON_Duplicate(rec, 1);
	assert_int_equal(ng_gate_input_baseline(&in, b, &err), 0);
	assert_int_equal(ng_gate_input_record(&in, r, NULL, &err), 0);
	ng_gate_trace t;
	ng_verdict v = ng_gate_input_judge(&in, &pol, &t);
	ng_gate_input_free(&in);
	cJSON_Delete(b);
	cJSON_Delete(r);
	return ng_verdict_name(v);
}

static cJSON *run(const ng_storage_opts *o)
{
	ng_err err;
	cJSON *rec = ng_storage_probe(o, &err);
	if (!rec)
		fail_msg("probe refused its options: %s", err.msg);
	return rec;
}

/* ---- content ---- */

static void content_round_trip_and_detects_changes(void **state)
{
	(void)state;
	uint64_t *buf = aligned_alloc(4096, 4 * 4096), found = 0;
	ng_storage_fill(buf, 8192, 4 * 4096, 7);
	assert_int_equal(ng_storage_check(buf, 8192, 4 * 4096, 7, &found), 0);
	/* another seed, another offset: every unit differs */
	assert_int_equal(ng_storage_check(buf, 8192, 4 * 4096, 8, &found), 4);
	assert_int_equal(ng_storage_check(buf, 4096, 4 * 4096, 7, &found), 4);
	assert_int_equal(found, 8192); /* the header says where it came from */
	/* one flipped bit in the third unit's payload */
	((unsigned char *)buf)[2 * 4096 + 1000] ^= 0x10;
	found = 0;
	assert_int_equal(ng_storage_check(buf, 8192, 4 * 4096, 7, &found), 1);
	assert_int_equal(found, 8192 + 2 * 4096);
	/* a zeroed unit is not ours at all */
	memset(buf, 0, 4096);
	assert_int_equal(ng_storage_check(buf, 8192, 4096, 7, &found), 1);
	assert_true(found == UINT64_MAX);
	free(buf);
}

/* ---- where ---- */

static void fs_names_and_mountinfo(void **state)
{
	(void)state;
	assert_string_equal(ng_storage_fs_name(0xef53), "ext4");
	assert_string_equal(ng_storage_fs_name(0x01021994), "tmpfs");
	assert_string_equal(ng_storage_fs_name(0x6969), "nfs");
	assert_string_equal(ng_storage_fs_name(0x0bd00bd0), "lustre");
	assert_null(ng_storage_fs_name(0x12345678));
	char line[] = "36 35 98:0 /mnt1 /mnt/my\\040data rw,noatime master:1 shared:7 - lustre "
	              "10.0.0.1@o2ib:/fs rw,flock\n";
	struct ng_mountinfo m;
	assert_int_equal(ng_storage_parse_mountinfo(line, &m), 0);
	assert_int_equal(m.major, 98);
	assert_int_equal(m.minor, 0);
	assert_string_equal(m.mount_point, "/mnt/my data");
	assert_string_equal(m.fs_type, "lustre");
	assert_string_equal(m.source, "10.0.0.1@o2ib:/fs");
	assert_string_equal(m.super_options, "rw,flock");
	char bad[] = "36 35 98:0 /mnt1 /mnt rw shared:7 lustre";
	assert_int_equal(ng_storage_parse_mountinfo(bad, &m), -1);
}

static void where_names_filesystem_mount_and_device(void **state)
{
	(void)state;
	ng_err err;
	cJSON *w = ng_storage_where(tmpdir, &err);
	assert_non_null(w);
	assert_true(strlen(str(w, "fs_type")) > 0);
	assert_true(strncmp(str(w, "fs_magic"), "0x", 2) == 0);
	assert_true(str(w, "mount_point")[0] == '/');
	assert_true(strlen(str(w, "mount_source")) > 0);
	assert_non_null(ng_json_get(w, "device")); /* an object, or null with a note */
	cJSON_Delete(w);
	assert_null(ng_storage_where("/nonexistent/nodegate", &err));
	assert_non_null(strstr(err.msg, "No such file"));
}

/* ---- clean runs ---- */

static void check_clean(const cJSON *rec, const char *metric)
{
	assert_string_equal(str(rec, "metric"), metric);
	assert_string_equal(str(rec, "domain"), "storage");
	assert_true(n_samples(rec) >= 2);
	for (const cJSON *s = ng_json_get(rec, "samples")->child; s; s = s->next)
		assert_true(s->valuedouble > 0);
	assert_true(num(rec, "wrong") == 0);
	assert_true(num(rec, "detail.integrity.checked_reads") > 0);
	assert_true(num(rec, "detail.latency_us.p50") > 0);
	assert_true(num(rec, "detail.latency_us.p999") >= num(rec, "detail.latency_us.p50"));
	/* latencies are real: no clock read before the I/O was submitted */
	assert_true(num(rec, "detail.latency_us.max") < 60e6);
	assert_true(num(rec, "detail.latency_us.mean") <= num(rec, "detail.latency_us.max"));
	assert_true(cJSON_IsBool(get(rec, "conditions.direct")));
	assert_true(strlen(str(rec, "conditions.cache_action")) > 0);
	assert_true(strlen(str(rec, "conditions.fs_type")) > 0);
	assert_null(ng_json_get(rec, "reason"));
	assert_int_equal(files_left(), 0);
}

static void seqread_measures_and_cleans_up(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	cJSON *rec = run(&o);
	check_clean(rec, "storage.seqread.gbps");
	assert_string_equal(str(rec, "conditions.cache"), "cold");
	assert_string_equal(str(rec, "conditions.pattern"), "read");
	assert_true(num(rec, "conditions.queue_depth") == 8);
	assert_true(num(rec, "conditions.file_bytes") == 8u << 20);
	/* a timed sequential pass wraps: the whole file was read and checked */
	assert_true(num(rec, "detail.integrity.checked_bytes") >= 8u << 20);
	cJSON_Delete(rec);
}

static void randread_counts_iops(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_RANDREAD);
	cJSON *rec = run(&o);
	check_clean(rec, "storage.randread.iops");
	assert_string_equal(str(rec, "unit"), "IOPS");
	/* IOPS, not GB/s: 4 KiB reads at depth 8 give thousands a second */
	assert_true(ng_json_get(rec, "samples")->child->valuedouble > 100);
	cJSON_Delete(rec);
}

static void writes_are_read_back_and_checked(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_RANDWRITE);
	cJSON *rec = run(&o);
	check_clean(rec, "storage.randwrite.iops");
	assert_true(num(rec, "detail.read_back_bytes") == 8u << 20);
	cJSON_Delete(rec);
	small_opts(&o, NG_STORAGE_WRITE);
	rec = run(&o);
	check_clean(rec, "storage.seqwrite.gbps");
	cJSON_Delete(rec);
}

static void warm_cache_is_buffered_and_said(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	o.cache = NG_STORAGE_WARM;
	cJSON *rec = run(&o);
	check_clean(rec, "storage.seqread.gbps");
	assert_string_equal(str(rec, "conditions.cache"), "warm");
	assert_true(cJSON_IsFalse(get(rec, "conditions.direct")));
	assert_non_null(strstr(str(rec, "conditions.cache_action"), "page cache"));
	cJSON_Delete(rec);
}

static void tmpfs_is_named(void **state)
{
	(void)state;
	if (access("/dev/shm", W_OK) != 0)
		skip();
	ng_err err;
	cJSON *w = ng_storage_where("/dev/shm", &err);
	assert_non_null(w);
	assert_string_equal(str(w, "fs_type"), "tmpfs");
	assert_true(cJSON_IsNull(ng_json_get(w, "device")));
	cJSON_Delete(w);
}

static void keep_leaves_the_file(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	o.keep = true;
	o.duration_s = 0.2;
	cJSON *rec = run(&o);
	assert_true(cJSON_IsTrue(get(rec, "detail.kept")));
	assert_int_equal(access(str(rec, "detail.file"), R_OK), 0);
	assert_int_equal(unlink(str(rec, "detail.file")), 0);
	cJSON_Delete(rec);
}

static void kept_file_is_reused_and_checked(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	o.keep = true;
	o.duration_s = 0.2;
	cJSON *first = run(&o);
	char file[600];
	snprintf(file, sizeof file, "%s", str(first, "detail.file"));
	cJSON_Delete(first);
	small_opts(&o, NG_STORAGE_RANDREAD);
	o.dir = NULL;
	o.file = file;
	cJSON *rec = run(&o);
	assert_true(n_samples(rec) >= 2);
	assert_true(num(rec, "wrong") == 0);
	assert_true(cJSON_IsTrue(get(rec, "detail.reused")));
	assert_true(num(rec, "conditions.file_bytes") == 8u << 20);
	assert_int_equal(access(file, F_OK), 0); /* never removed */
	cJSON_Delete(rec);
	/* another seed's content is not ours: refused, not counted as wrong */
	o.seed = 99;
	rec = run(&o);
	assert_int_equal(n_samples(rec), 0);
	assert_non_null(strstr(str(rec, "reason"), "does not hold a nodegate test file"));
	assert_true(num(rec, "wrong") == 0);
	assert_int_equal(access(file, F_OK), 0);
	cJSON_Delete(rec);
	assert_int_equal(unlink(file), 0);
}

/* ---- planted integrity failures ---- */

struct plant {
	uint64_t victim, source; /* block indexes */
	bool misplace;
};

/* Between writing and reading: one block overwritten with garbage, or with
 * another block's (valid) content, through the page cache; O_DIRECT reads
 * flush it first, so the probe sees what is on the file. */
static void plant_block(const char *file, uint64_t size, uint32_t block, void *arg)
{
	const struct plant *p = arg;
	assert_true((p->victim + 1) * block <= size);
	int fd = open(file, O_RDWR);
	assert_true(fd >= 0);
	unsigned char *buf = malloc(block);
	if (p->misplace)
		assert_int_equal(pread(fd, buf, block, (off_t)(p->source * block)), (ssize_t)block);
	else
		memset(buf, 0xa5, block);
	assert_int_equal(pwrite(fd, buf, block, (off_t)(p->victim * block)), (ssize_t)block);
	fsync(fd);
	close(fd);
	free(buf);
}

static void planted_corruption_is_wrong_and_corrupt(void **state)
{
	(void)state;
	struct plant p = {.victim = 5};
	ng_storage_hooks h = {.after_prepare = plant_block, .arg = &p};
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	o.hooks = &h;
	cJSON *rec = run(&o);
	/* read many times over as the pass wraps, counted once */
	assert_true(num(rec, "wrong") == 1);
	assert_true(num(rec, "detail.integrity.bad_reads") >= 1);
	assert_true(num(rec, "detail.integrity.first_bad_offset") == 5 * o.block);
	assert_string_equal(str(rec, "detail.integrity.first_bad_holds"),
	                    "not a nodegate block (overwritten or corrupted)");
	assert_string_equal(verdict(rec), "corrupt");
	assert_int_equal(files_left(), 0);
	cJSON_Delete(rec);
}

static void planted_misplaced_block_is_found(void **state)
{
	(void)state;
	struct plant p = {.victim = 9, .source = 2, .misplace = true};
	ng_storage_hooks h = {.after_prepare = plant_block, .arg = &p};
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_RANDREAD);
	o.block = 64u << 10;
	o.hooks = &h;
	cJSON *rec = run(&o);
	assert_true(num(rec, "wrong") == 1);
	assert_true(num(rec, "detail.integrity.first_bad_offset") == 9 * o.block);
	assert_true(num(rec, "detail.integrity.first_bad_holds_offset") == 2 * o.block);
	assert_string_equal(verdict(rec), "corrupt");
	cJSON_Delete(rec);
}

/* ---- runs that cannot measure ---- */

static void check_unmeasured(const cJSON *rec, const char *needle)
{
	assert_int_equal(n_samples(rec), 0);
	const char *why = str(rec, "reason");
	if (!strstr(why, needle))
		fail_msg("reason \"%s\" does not say \"%s\"", why, needle);
	assert_string_equal(verdict(rec), "no-measurement");
	assert_int_equal(files_left(), 0);
}

static void remove_file(const char *file, uint64_t size, uint32_t block, void *arg)
{
	(void)size;
	(void)block;
	(void)arg;
	assert_int_equal(unlink(file), 0);
}

static void vanished_file_is_no_measurement(void **state)
{
	(void)state;
	ng_storage_hooks h = {.after_prepare = remove_file};
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	o.hooks = &h;
	cJSON *rec = run(&o);
	check_unmeasured(rec, "vanished");
	assert_true(num(rec, "detail.error.errno") == ENOENT);
	cJSON_Delete(rec);
}

static int fault_at(const char *stage, void *arg)
{
	const char *want = arg;
	size_t n = strcspn(want, ":");
	return strncmp(stage, want, n) == 0 && stage[n] == '\0' ? atoi(want + n + 1) : 0;
}

static void full_disk_is_no_measurement(void **state)
{
	(void)state;
	char spec[32];
	snprintf(spec, sizeof spec, "allocate:%d", ENOSPC);
	ng_storage_hooks h = {.fault = fault_at, .arg = spec};
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	o.hooks = &h;
	cJSON *rec = run(&o);
	check_unmeasured(rec, "is full (ENOSPC)");
	assert_non_null(strstr(str(rec, "reason"), "smaller --size"));
	cJSON_Delete(rec);
	snprintf(spec, sizeof spec, "write:%d", ENOSPC);
	rec = run(&o);
	check_unmeasured(rec, "is full (ENOSPC)");
	cJSON_Delete(rec);
}

static void io_error_is_no_measurement(void **state)
{
	(void)state;
	char spec[32];
	snprintf(spec, sizeof spec, "read:%d", EIO);
	ng_storage_hooks h = {.fault = fault_at, .arg = spec};
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_RANDREAD);
	o.hooks = &h;
	cJSON *rec = run(&o);
	check_unmeasured(rec, strerror(EIO));
	cJSON_Delete(rec);
	snprintf(spec, sizeof spec, "create:%d", EROFS);
	rec = run(&o);
	check_unmeasured(rec, "read-only filesystem (EROFS)");
	cJSON_Delete(rec);
}

static void unwritable_and_missing_paths(void **state)
{
	(void)state;
	ng_storage_opts o;
	small_opts(&o, NG_STORAGE_READ);
	/* sysfs refuses new files even to root */
	o.dir = "/sys";
	cJSON *rec = run(&o);
	assert_int_equal(n_samples(rec), 0);
	assert_non_null(strstr(str(rec, "reason"), "no permission to write in /sys"));
	assert_string_equal(str(rec, "conditions.fs_type"), "sysfs");
	cJSON_Delete(rec);
	o.dir = "/nonexistent/nodegate";
	rec = run(&o);
	assert_int_equal(n_samples(rec), 0);
	assert_non_null(strstr(str(rec, "reason"), "cannot examine"));
	cJSON_Delete(rec);
}

static void bad_options_are_refused(void **state)
{
	(void)state;
	ng_storage_opts o;
	ng_err err;
	small_opts(&o, NG_STORAGE_READ);
	o.block = 1000;
	assert_null(ng_storage_probe(&o, &err));
	assert_non_null(strstr(err.msg, "multiple of 4096"));
	small_opts(&o, NG_STORAGE_READ);
	o.size = 4096;
	assert_null(ng_storage_probe(&o, &err));
	small_opts(&o, NG_STORAGE_READ);
	o.depth = 0;
	assert_null(ng_storage_probe(&o, &err));
	small_opts(&o, NG_STORAGE_READ);
	o.interval_s = 1;
	assert_null(ng_storage_probe(&o, &err));
	ng_storage_pattern p;
	assert_int_equal(ng_storage_pattern_parse("randwrite", &p), 0);
	assert_int_equal(p, NG_STORAGE_RANDWRITE);
	assert_int_equal(ng_storage_pattern_parse("rand", &p), -1);
}

/* ---- signals ---- */

static int sync_fd = -1;

static void tell_parent(const char *file, uint64_t size, uint32_t block, void *arg)
{
	(void)size;
	(void)block;
	(void)arg;
	char buf[600];
	int n = snprintf(buf, sizeof buf, "%s\n", file);
	if (write(sync_fd, buf, (size_t)n) != n)
		_exit(3);
}

static void sigterm_removes_the_file(void **state)
{
	(void)state;
	static const int sigs[] = {SIGTERM, SIGINT};
	for (size_t k = 0; k < 2; k++) {
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			sync_fd = fds[1];
			ng_storage_hooks h = {.after_prepare = tell_parent};
			ng_storage_opts o;
			small_opts(&o, NG_STORAGE_READ);
			o.duration_s = 30;
			o.hooks = &h;
			ng_err err;
			ng_storage_probe(&o, &err);
			_exit(0);
		}
		close(fds[1]);
		char file[600] = "";
		ssize_t n = read(fds[0], file, sizeof file - 1);
		close(fds[0]);
		assert_true(n > 1);
		file[n - 1] = '\0';
		assert_int_equal(access(file, F_OK), 0); /* it exists while measuring */
		usleep(100000);
		kill(pid, sigs[k]);
		int st;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == sigs[k]);
		assert_int_equal(access(file, F_OK), -1);
		assert_int_equal(files_left(), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(content_round_trip_and_detects_changes),
		cmocka_unit_test(fs_names_and_mountinfo),
		cmocka_unit_test(where_names_filesystem_mount_and_device),
		cmocka_unit_test(seqread_measures_and_cleans_up),
		cmocka_unit_test(randread_counts_iops),
		cmocka_unit_test(writes_are_read_back_and_checked),
		cmocka_unit_test(warm_cache_is_buffered_and_said),
		cmocka_unit_test(tmpfs_is_named),
		cmocka_unit_test(keep_leaves_the_file),
		cmocka_unit_test(kept_file_is_reused_and_checked),
		cmocka_unit_test(planted_corruption_is_wrong_and_corrupt),
		cmocka_unit_test(planted_misplaced_block_is_found),
		cmocka_unit_test(vanished_file_is_no_measurement),
		cmocka_unit_test(full_disk_is_no_measurement),
		cmocka_unit_test(io_error_is_no_measurement),
		cmocka_unit_test(unwritable_and_missing_paths),
		cmocka_unit_test(bad_options_are_refused),
		cmocka_unit_test(sigterm_removes_the_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
