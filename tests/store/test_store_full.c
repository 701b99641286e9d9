/* A SQLite store on a disk that fills up: the write that does not fit fails
 * with a message that says so and names the store, nothing that was
 * acknowledged before it is lost, no batch lands in part, and the audit
 * chain still verifies.
 *
 * Two ways to fill a disk without owning one:
 *
 *   file_size_limit  a child process with RLIMIT_FSIZE just above the
 *                    store's size (SIGXFSZ ignored, so writes past it fail
 *                    with EFBIG); the parent then reopens the store with no
 *                    limit and checks it.
 *   tmpfs_full       a 2 MiB tmpfs mounted in a private mount namespace of a
 *                    child (as root, or in a user namespace of its own); the
 *                    disk really is full (ENOSPC). Skipped where neither is
 *                    permitted.
 *
 * Children report through a pipe, one "KEY value" line each; only the parent
 * asserts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "store_test_env.h"

#define BATCH 20
#define MAX_BATCHES 100000

/* ---- what a child does ---------------------------------------------------------------- */

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) != n)
		_exit(6);
}

/* One batch of BATCH records of run run_id, each with a ~500-byte body. */
static int put_batch(ng_store *st, const char *run_id, int64_t at, ng_err *err)
{
	static char bodies[BATCH][600];
	static char nodes[BATCH][32];
	double samples[9];
	ng_store_record recs[BATCH];
	for (int k = 0; k < 9; k++)
		samples[k] = 100.0 + k;
	for (int j = 0; j < BATCH; j++) {
		snprintf(nodes[j], sizeof nodes[j], "node-%03d", j);
		int n = snprintf(bodies[j], sizeof bodies[j],
		                 "{\"schema\":\"nodegate/record/1\",\"node\":\"%s\",\"run\":\"%s\","
		                 "\"pad\":\"",
		                 nodes[j], run_id);
		while (n < 500)
			bodies[j][n++] = 'x';
		memcpy(bodies[j] + n, "\"}", 3);
		recs[j] = (ng_store_record){
			.node = nodes[j],
			.class_key = "full",
			.software = "sw",
			.domain = "fabric",
			.metric = "nccl.all_reduce.busbw",
			.unit = "GB/s",
			.run_id = run_id,
			.taken_at = at,
			.samples = samples,
			.n_samples = 9,
			.idle = true,
			.accepted = true,
			.body = bodies[j],
		};
	}
	return ng_store_put_records(st, recs, BATCH, NULL, err);
}

/* Batches, each followed by its audit entry, until a write fails. Says
 * "ACK run" after each batch and "AUDIT run" after each entry that
 * committed, then how the failure looked. Returns the number of batches. */
static int fill(ng_store *st, int fd, int first)
{
	ng_err err = {0};
	int b;
	for (b = first; b < MAX_BATCHES; b++) {
		char run[32];
		snprintf(run, sizeof run, "run-%06d", b);
		if (put_batch(st, run, 1000 + b, &err) != 0) {
			say(fd, "FAILED_IN put");
			break;
		}
		say(fd, "ACK %s", run);
		if (ng_store_audit(st, false, 1000 + b, "filler", "test.batch", run, NULL, &err) != 0) {
			say(fd, "FAILED_IN audit");
			break;
		}
		say(fd, "AUDIT %s", run);
	}
	say(fd, "CLASS %d", (int)ng_store_last_error(st));
	say(fd, "MESSAGE %s", err.msg);
	/* A second try fails the same way, and does not wedge the store. */
	ng_err again = {0};
	int rc = put_batch(st, "run-again", 999999, &again);
	say(fd, "AGAIN %d %d %s", rc, (int)ng_store_last_error(st), again.msg);
	if (rc == 0)
		say(fd, "ACK run-again");
	/* Reading still works, and sees exactly what was acknowledged. */
	int64_t n = ng_store_count_records(st, &err);
	say(fd, "COUNT %" PRId64, n);
	return b - first;
}

/* ---- the parent's side ---------------------------------------------------------------- */

struct report {
	int acks, audits;
	char failed_in[16];
	int err_class;
	char message[1100];
	int again_rc, again_class;
	char again_message[1100];
	int64_t count;
	int64_t reopen_count;
	int check_rc, verify_rc;
	int64_t verify_entries;
	char check[256];
};

static void read_report(int fd, struct report *r)
{
	memset(r, 0, sizeof *r);
	r->count = r->reopen_count = r->verify_entries = -1;
	r->check_rc = r->verify_rc = -9;
	r->err_class = r->again_class = -1;
	FILE *f = fdopen(fd, "r");
	assert_non_null(f);
	char line[1300];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *v = strchr(line, ' ');
		v = v ? v + 1 : line + strlen(line);
		if (strncmp(line, "ACK ", 4) == 0)
			r->acks++;
		else if (strncmp(line, "AUDIT ", 6) == 0)
			r->audits++;
		else if (strncmp(line, "FAILED_IN ", 10) == 0)
			snprintf(r->failed_in, sizeof r->failed_in, "%s", v);
		else if (strncmp(line, "CLASS ", 6) == 0)
			r->err_class = atoi(v);
		else if (strncmp(line, "MESSAGE ", 8) == 0)
			snprintf(r->message, sizeof r->message, "%s", v);
		else if (strncmp(line, "AGAIN ", 6) == 0) {
			int off = 0;
			if (sscanf(v, "%d %d %n", &r->again_rc, &r->again_class, &off) >= 2)
				snprintf(r->again_message, sizeof r->again_message, "%s", v + off);
		} else if (strncmp(line, "COUNT ", 6) == 0)
			r->count = strtoll(v, NULL, 10);
		else if (strncmp(line, "REOPEN_COUNT ", 13) == 0)
			r->reopen_count = strtoll(v, NULL, 10);
		else if (strncmp(line, "CHECK ", 6) == 0) {
			int off = 0;
			if (sscanf(v, "%d %n", &r->check_rc, &off) >= 1)
				snprintf(r->check, sizeof r->check, "%s", v + off);
		} else if (strncmp(line, "VERIFY ", 7) == 0)
			r->verify_rc = atoi(v);
		else if (strncmp(line, "VERIFY_ENTRIES ", 15) == 0)
			r->verify_entries = strtoll(v, NULL, 10);
		else
			fprintf(stderr, "[ info     ] child: %s\n", line);
	}
	fclose(f);
}

static void put_batch_ok(ng_store *st, const char *run, int64_t at)
{
	ng_err err = {0};
	if (put_batch(st, run, at, &err) != 0)
		fail_msg("put: %s", err.msg);
}

static void check_store(ng_store *st, int64_t want_records, int64_t want_audit)
{
	ng_err err = {0};
	assert_int_equal(ng_store_count_records(st, &err), want_records);
	ng_strbuf rep = {0};
	if (ng_store_check(st, &rep, &err) != 0)
		fail_msg("integrity check: %s%s", rep.s ? rep.s : "", err.msg);
	ng_strbuf_free(&rep);
	ng_store_audit_report ar;
	if (ng_store_audit_verify(st, &ar, &err) != 0)
		fail_msg("audit chain: %s%s", ar.problem, err.msg);
	assert_int_equal(ar.entries, want_audit);
	/* no partial batch: every run has all its records */
	ng_sql_stmt *q = NULL;
	assert_int_equal(ng_sql_prepare(ng_store_sql(st),
	                                "SELECT count(*) FROM (SELECT run_id FROM records GROUP BY"
	                                " run_id HAVING count(*) <> 20) AS partial",
	                                &q, &err),
	                 0);
	assert_int_equal(ng_sql_step(q, &err), 1);
	assert_int_equal(ng_sql_column_int64(q, 0), 0);
	ng_sql_finalize(q);
}

/* EFBIG from a file size limit. SQLite's unixWrite reports a failed write
 * whose errno is not ENOSPC as SQLITE_IOERR_WRITE, and the driver classes
 * an IOERR by its errno: ENOSPC/EDQUOT are a full disk, EFBIG is not among
 * them, so this surfaces as NG_SQL_E_OTHER with SQLite's "disk I/O error".
 * The test accepts NG_SQL_E_FULL too (EFBIG classed as a full disk), and
 * requires the message to name the store either way. */
static void file_size_limit(void **state)
{
	(void)state;
	char path[1024];
	assert_int_equal(ng_test_sqlite_path(path, sizeof path), 0);
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(path, &st, &err) != 0)
		fail_msg("open: %s", err.msg);
	for (int b = 0; b < 5; b++) {
		char run[32];
		snprintf(run, sizeof run, "pre-%d", b);
		put_batch_ok(st, run, 100 + b);
		assert_int_equal(ng_store_audit(st, false, 100 + b, "t", "test.batch", run, NULL, &err), 0);
	}
	ng_store_close(st); /* checkpoints: the WAL goes, the file holds it all */
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	rlim_t limit = (rlim_t)sb.st_size + 256 * 1024;
	fprintf(stderr, "[ info     ] store %s is %lld bytes; limit %llu\n", path,
	        (long long)sb.st_size, (unsigned long long)limit);

	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {limit, limit};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0) {
			say(p[1], "setrlimit failed: %s", strerror(errno));
			_exit(3);
		}
		ng_store *cst = NULL;
		ng_err cerr = {0};
		if (ng_store_open(path, &cst, &cerr) != 0) {
			say(p[1], "open under the limit failed: %s", cerr.msg);
			_exit(3);
		}
		fill(cst, p[1], 0);
		ng_store_close(cst);
		_exit(0);
	}
	close(p[1]);
	struct report r;
	read_report(p[0], &r);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	fprintf(stderr, "[ info     ] %d batches acknowledged under the limit, then %s failed: "
	                "class %d: %s\n",
	        r.acks, r.failed_in, r.err_class, r.message);
	fprintf(stderr, "[ info     ] again: rc %d class %d: %s\n", r.again_rc, r.again_class,
	        r.again_message);
	assert_true(r.acks > 0);
	assert_true(r.acks < MAX_BATCHES);
	assert_true(r.failed_in[0] != '\0');
	assert_non_null(strstr(r.message, path));
	if (r.err_class == NG_SQL_E_FULL) {
		assert_non_null(strstr(r.message, "no space"));
	} else {
		assert_int_equal(r.err_class, NG_SQL_E_OTHER);
		assert_non_null(strstr(r.message, "disk I/O error"));
	}
	assert_int_equal(r.again_rc, -1);
	int64_t want = (int64_t)(5 + r.acks) * BATCH;
	assert_int_equal(r.count, want);

	/* Reopened with no limit: all of it there, intact, and writable again. */
	st = NULL;
	if (ng_store_open(path, &st, &err) != 0)
		fail_msg("reopen: %s", err.msg);
	check_store(st, want, 5 + r.audits);
	put_batch_ok(st, "after", 99999);
	assert_int_equal(ng_store_count_records(st, &err), want + BATCH);
	ng_store_close(st);
	ng_test_store_cleanup(path);
}

/* In a child: a private mount namespace (a user namespace too when not
 * root), a 2 MiB tmpfs, a store on it filled to the brim, then closed and
 * reopened on the still-full disk. Exits 77 when it cannot mount. */
static int tmpfs_child(int fd)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (uid != 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
			say(fd, "no user namespace: %s", strerror(errno));
			return 77;
		}
		char map[64];
		int m = open("/proc/self/setgroups", O_WRONLY);
		if (m >= 0) {
			if (write(m, "deny", 4) != 4)
				return 77;
			close(m);
		}
		snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
		m = open("/proc/self/uid_map", O_WRONLY);
		if (m < 0 || write(m, map, strlen(map)) < 0)
			return 77;
		close(m);
		snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
		m = open("/proc/self/gid_map", O_WRONLY);
		if (m < 0 || write(m, map, strlen(map)) < 0)
			return 77;
		close(m);
	} else if (unshare(CLONE_NEWNS) != 0) {
		say(fd, "no mount namespace: %s", strerror(errno));
		return 77;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		say(fd, "cannot make mounts private: %s", strerror(errno));
		return 77;
	}
	char dir[1024];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/ng-full-tmpfs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		say(fd, "mkdtemp: %s", strerror(errno));
		return 77;
	}
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0700") != 0) {
		say(fd, "cannot mount a tmpfs: %s", strerror(errno));
		rmdir(dir);
		return 77;
	}
	char path[1100];
	snprintf(path, sizeof path, "%s/store.db", dir);
	say(fd, "PATH %s", path);
	int rc = 0;
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(path, &st, &err) != 0) {
		say(fd, "open on tmpfs failed: %s", err.msg);
		rc = 3;
	} else {
		fill(st, fd, 0);
		ng_store_close(st);
		/* Reopened on the disk that is still full. */
		st = NULL;
		if (ng_store_open(path, &st, &err) != 0) {
			say(fd, "REOPEN_FAILED %s", err.msg);
		} else {
			say(fd, "REOPEN_COUNT %" PRId64, ng_store_count_records(st, &err));
			ng_strbuf rep = {0};
			int c = ng_store_check(st, &rep, &err);
			say(fd, "CHECK %d %s", c, rep.s ? rep.s : err.msg);
			ng_strbuf_free(&rep);
			ng_store_audit_report ar;
			int v = ng_store_audit_verify(st, &ar, &err);
			say(fd, "VERIFY %d", v);
			say(fd, "VERIFY_ENTRIES %" PRId64 " %s", ar.entries, ar.problem);
			ng_store_close(st);
		}
	}
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	return rc;
}

static void tmpfs_full(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		_exit(tmpfs_child(p[1]));
	}
	close(p[1]);
	struct report r;
	read_report(p[0], &r);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		fprintf(stderr, "[ info     ] cannot mount a tmpfs here: skipped\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	fprintf(stderr, "[ info     ] tmpfs of 2 MiB: %d batches of %d acknowledged, then %s "
	                "failed: class %d: %s\n",
	        r.acks, BATCH, r.failed_in, r.err_class, r.message);
	fprintf(stderr, "[ info     ] again: rc %d class %d: %s\n", r.again_rc, r.again_class,
	        r.again_message);
	assert_true(r.acks > 0 && r.acks < MAX_BATCHES);
	assert_int_equal(r.err_class, NG_SQL_E_FULL);
	assert_non_null(strstr(r.message, "no space left"));
	assert_non_null(strstr(r.message, "ng-full-tmpfs."));
	assert_int_equal(r.again_rc, -1);
	assert_int_equal(r.again_class, NG_SQL_E_FULL);
	int64_t want = (int64_t)r.acks * BATCH;
	assert_int_equal(r.count, want);
	assert_int_equal(r.reopen_count, want);
	assert_int_equal(r.check_rc, 0);
	assert_string_equal(r.check, "ok");
	assert_int_equal(r.verify_rc, 0);
	assert_int_equal(r.verify_entries, r.audits);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_size_limit),
		cmocka_unit_test(tmpfs_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
