/* Crash safety of the store, on the backend NODEGATE_TEST_BACKEND names.
 *
 * Writers are separate processes (this program run again with --writer), each
 * with its own connection. A writer loops: it notes the batch it is about to
 * write, stores it with ng_store_put_records (one transaction), and only once
 * that returned 0 acknowledges the batch's run id in its ack file (write(2),
 * then fsync); then it appends an audit entry for the batch in a transaction
 * of its own and acknowledges that too. So an acknowledgement is exactly a
 * promise the store made.
 *
 * kill_rounds: writers are SIGKILLed at random moments, 0 to 20 ms after
 * they are ready (mostly inside a transaction, since that is where a writer
 * spends its time) and started again, round after round. Afterwards every
 * acknowledged batch is there in full, no batch is there in part, every
 * acknowledged audit entry is there, the audit chain verifies and (SQLite)
 * PRAGMA integrity_check says ok.
 *
 * many_writers: 32 writers at once, 200 records each in batches of 10 with
 * an audit entry per batch. None may see an error (SQLite writers queue
 * beside the store, then wait up to the 30 s busy timeout; PostgreSQL
 * writers queue on an advisory lock), and all 6400 records and 640 entries
 * are there afterwards.
 *
 * first_open_race: 16 writers open a store that does not exist yet, at
 * once: one creates the schema, the others find it, none fails.
 *
 * NODEGATE_CRASH_ROUNDS and NODEGATE_CRASH_SEED change the number of kill
 * rounds (40) and the random seed (the time; printed, to replay a run);
 * NODEGATE_CRASH_WRITERS the writers of many_writers (32). `make stress`
 * runs it with hundreds of kills and 64 writers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "store_test_env.h"

#define READY_FD 100
#define KILL_BATCH 50
#define KILL_WRITERS 4
#define MANY_WRITERS 32
#define MANY_BATCHES 20
#define MANY_BATCH 10

static bool pg;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the writer process -------------------------------------------------------------- */

/* One line to the ack file; fsync'd when it acknowledges something. */
static void ack(int fd, bool sync, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ack(int fd, bool sync, const char *fmt, ...)
{
	char line[700];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		_exit(5);
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) != n || (sync && fsync(fd) != 0))
		_exit(5);
}

/* self --writer SPEC ACKFILE WRITER GENERATION BATCHES(0: forever) BATCH_SIZE */
static int writer_main(char **argv)
{
	const char *spec = argv[2], *ack_path = argv[3];
	int writer = atoi(argv[4]), gen = atoi(argv[5]);
	long batches = atol(argv[6]);
	int size = atoi(argv[7]);
	int fd = open(ack_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return 4;
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(spec, &st, &err) != 0) {
		ack(fd, true, "E open: %s", err.msg);
		return 3;
	}
	/* Ready: the parent's clock for the kill starts now. */
	if (fcntl(READY_FD, F_GETFD) >= 0) {
		if (write(READY_FD, "r", 1) != 1)
			return 4;
		close(READY_FD);
	}
	ng_store_record *recs = calloc((size_t)size, sizeof *recs);
	char(*nodes)[32] = calloc((size_t)size, sizeof *nodes);
	char(*bodies)[256] = calloc((size_t)size, sizeof *bodies);
	double samples[9], slowest = 0;
	if (!recs || !nodes || !bodies)
		return 4;
	for (long b = 0; batches == 0 || b < batches; b++) {
		char run_id[64];
		snprintf(run_id, sizeof run_id, "w%02d-g%03d-b%05ld", writer, gen, b);
		for (int k = 0; k < 9; k++)
			samples[k] = 200.0 + (double)((b + k) % 7);
		for (int j = 0; j < size; j++) {
			snprintf(nodes[j], sizeof nodes[j], "node-%04d", j);
			snprintf(bodies[j], sizeof bodies[j],
			         "{\"schema\":\"nodegate/record/1\",\"node\":\"%s\",\"class\":\"crash\","
			         "\"metric\":\"nccl.all_reduce.busbw\",\"run\":\"%s\",\"wrong\":0}",
			         nodes[j], run_id);
			recs[j] = (ng_store_record){
				.node = nodes[j],
				.class_key = "crash",
				.software = "sw",
				.domain = "fabric",
				.metric = "nccl.all_reduce.busbw",
				.unit = "GB/s",
				.run_id = run_id,
				.taken_at = 1000000 + b,
				.samples = samples,
				.n_samples = 9,
				.idle = true,
				.accepted = true,
				.body = bodies[j],
			};
		}
		ack(fd, false, "P %s", run_id);
		double t_put = now_s();
		if (ng_store_put_records(st, recs, (size_t)size, NULL, &err) != 0) {
			ack(fd, true, "E put %s: %s", run_id, err.msg);
			return 2;
		}
		ack(fd, true, "B %s", run_id);
		char detail[96];
		snprintf(detail, sizeof detail, "{\"records\":%d}", size);
		if (ng_store_audit(st, false, 1000000 + b, "crash-writer", "test.batch", run_id, detail,
		                   &err) != 0) {
			ack(fd, true, "E audit %s: %s", run_id, err.msg);
			return 2;
		}
		ack(fd, true, "A %s", run_id);
		double took = now_s() - t_put;
		if (took > slowest)
			slowest = took;
	}
	/* The slowest batch and its audit entry, waits for the lock included. */
	ack(fd, false, "T %.6f", slowest);
	free(recs);
	free(nodes);
	free(bodies);
	ng_store_close(st);
	close(fd);
	return 0;
}

/* ---- the parent ---------------------------------------------------------------------- */

struct writer {
	pid_t pid;
	int ready; /* read end of the ready pipe, -1 once read */
	int gen;
	char ack[1200];
};

static char workdir[1024];

static void spawn(struct writer *w, int id, const char *spec, long batches, int size,
                  bool want_ready)
{
	int p[2] = {-1, -1};
	if (want_ready && pipe2(p, O_CLOEXEC) != 0)
		fail_msg("pipe: %s", strerror(errno));
	w->gen++;
	snprintf(w->ack, sizeof w->ack, "%s/w%02d-g%03d.ack", workdir, id, w->gen);
	char a_id[16], a_gen[16], a_batches[24], a_size[16];
	snprintf(a_id, sizeof a_id, "%d", id);
	snprintf(a_gen, sizeof a_gen, "%d", w->gen);
	snprintf(a_batches, sizeof a_batches, "%ld", batches);
	snprintf(a_size, sizeof a_size, "%d", size);
	pid_t pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		if (want_ready && dup2(p[1], READY_FD) < 0)
			_exit(127);
		char *argv[] = {(char *)"test_store_crash", (char *)"--writer", (char *)spec, w->ack,
		                a_id, a_gen, a_batches, a_size, NULL};
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	w->pid = pid;
	w->ready = -1;
	if (want_ready) {
		close(p[1]);
		w->ready = p[0];
	}
}

/* The last line of a writer's ack file that starts with E, for messages. */
static void writer_error(const char *path, char *out, size_t cap)
{
	snprintf(out, cap, "(no error line in %s)", path);
	FILE *f = fopen(path, "r");
	char line[800];
	while (f && fgets(line, sizeof line, f))
		if (line[0] == 'E')
			snprintf(out, cap, "%s", line);
	if (f)
		fclose(f);
}

static void wait_ready(struct writer *w)
{
	if (w->ready < 0)
		return;
	struct pollfd pfd = {w->ready, POLLIN, 0};
	int r = poll(&pfd, 1, 60000);
	char c;
	if (r != 1 || read(w->ready, &c, 1) != 1) {
		char why[800];
		writer_error(w->ack, why, sizeof why);
		fail_msg("writer %d did not get ready: %s", (int)w->pid, why);
	}
	close(w->ready);
	w->ready = -1;
}

static void kill_and_reap(struct writer *w)
{
	kill(w->pid, SIGKILL);
	int status;
	if (waitpid(w->pid, &status, 0) != w->pid)
		fail_msg("waitpid: %s", strerror(errno));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
		char why[800];
		writer_error(w->ack, why, sizeof why);
		fail_msg("writer %d ended on its own (status 0x%x) before it was killed: %s",
		         (int)w->pid, status, why);
	}
	if (w->ready >= 0) {
		close(w->ready);
		w->ready = -1;
	}
}

/* Sorted, unique strings. */
struct set {
	char **s;
	size_t n, cap;
};

static void set_add(struct set *t, const char *s)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->s = realloc(t->s, t->cap * sizeof *t->s);
		assert_non_null(t->s);
	}
	t->s[t->n] = strdup(s);
	assert_non_null(t->s[t->n]);
	t->n++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_sort(struct set *t)
{
	qsort(t->s, t->n, sizeof *t->s, cmp_str);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (k && strcmp(t->s[k - 1], t->s[i]) == 0) {
			free(t->s[i]);
			continue;
		}
		t->s[k++] = t->s[i];
	}
	t->n = k;
}

static bool set_has(const struct set *t, const char *s)
{
	return bsearch(&s, t->s, t->n, sizeof *t->s, cmp_str) != NULL;
}

static void set_free(struct set *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	memset(t, 0, sizeof *t);
}

/* What the ack files say: batches begun (P), acknowledged (B), audited (A),
 * and how each writer incarnation's file ended. */
struct acks {
	struct set begun, batches, audited;
	size_t ended_in_put, ended_in_audit, ended_between, errors;
	double slowest; /* seconds, the slowest batch a writer that finished wrote */
	char first_error[800];
};

static void read_acks(struct acks *a)
{
	memset(a, 0, sizeof *a);
	DIR *d = opendir(workdir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 4, ".ack") != 0)
			continue;
		char path[2400], line[800];
		snprintf(path, sizeof path, "%s/%s", workdir, e->d_name);
		FILE *f = fopen(path, "r");
		assert_non_null(f);
		char last = 'A';
		while (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0] || line[1] != ' ')
				fail_msg("unreadable ack line in %s: %s", path, line);
			switch (line[0]) {
			case 'P': set_add(&a->begun, line + 2); break;
			case 'B': set_add(&a->batches, line + 2); break;
			case 'A': set_add(&a->audited, line + 2); break;
			case 'T':
				if (strtod(line + 2, NULL) > a->slowest)
					a->slowest = strtod(line + 2, NULL);
				continue; /* not a step of the write: the file's end is what it was */
			case 'E':
				if (!a->errors++)
					snprintf(a->first_error, sizeof a->first_error, "%.200s: %.590s", path, line);
				break;
			default: fail_msg("unreadable ack line in %s: %s", path, line);
			}
			last = line[0];
		}
		fclose(f);
		if (last == 'P')
			a->ended_in_put++;
		else if (last == 'B')
			a->ended_in_audit++;
		else
			a->ended_between++;
	}
	closedir(d);
	set_sort(&a->begun);
	set_sort(&a->batches);
	set_sort(&a->audited);
}

static void acks_free(struct acks *a)
{
	set_free(&a->begun);
	set_free(&a->batches);
	set_free(&a->audited);
}

struct verdict {
	size_t run_ids, records, audit_entries, committed_unacked;
};

/* Checks the store against the acknowledgements; fails the test on any
 * lost, partial or extra batch, any lost audit entry, a broken chain or a
 * damaged file. */
static void verify(const char *spec, const struct acks *a, int batch, struct verdict *v)
{
	memset(v, 0, sizeof *v);
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(spec, &st, &err) != 0)
		fail_msg("cannot reopen the store after the writers: %s", err.msg);
	ng_sql *db = ng_store_sql(st);

	ng_sql_stmt *q = NULL;
	if (ng_sql_prepare(db, "SELECT run_id, count(*) FROM records GROUP BY run_id ORDER BY run_id",
	                   &q, &err) != 0)
		fail_msg("%s", err.msg);
	struct set present = {0};
	int r;
	while ((r = ng_sql_step(q, &err)) == 1) {
		const char *run = ng_sql_column_text(q, 0);
		int64_t n = ng_sql_column_int64(q, 1);
		if (n != batch)
			fail_msg("batch %s has %" PRId64 " of its %d records: a partial batch landed",
			         run ? run : "(null)", n, batch);
		if (!set_has(&a->begun, run))
			fail_msg("batch %s is in the store but no writer began it", run);
		if (!set_has(&a->batches, run))
			v->committed_unacked++; /* committed, killed before the ack: allowed */
		set_add(&present, run);
		v->run_ids++;
		v->records += (size_t)n;
	}
	ng_sql_finalize(q);
	if (r < 0)
		fail_msg("%s", err.msg);
	set_sort(&present);
	for (size_t i = 0; i < a->batches.n; i++)
		if (!set_has(&present, a->batches.s[i]))
			fail_msg("acknowledged batch %s is not in the store", a->batches.s[i]);
	assert_int_equal(ng_store_count_records(st, &err), (int64_t)v->records);

	struct set subjects = {0};
	if (ng_sql_prepare(db, "SELECT subject FROM audit_log", &q, &err) != 0)
		fail_msg("%s", err.msg);
	while ((r = ng_sql_step(q, &err)) == 1) {
		const char *s = ng_sql_column_text(q, 0);
		if (!set_has(&present, s))
			fail_msg("an audit entry names batch %s, which is not in the store", s);
		set_add(&subjects, s);
		v->audit_entries++;
	}
	ng_sql_finalize(q);
	if (r < 0)
		fail_msg("%s", err.msg);
	set_sort(&subjects);
	if (subjects.n != v->audit_entries)
		fail_msg("a batch has two audit entries");
	for (size_t i = 0; i < a->audited.n; i++)
		if (!set_has(&subjects, a->audited.s[i]))
			fail_msg("acknowledged audit entry for %s is not in the log", a->audited.s[i]);

	ng_store_audit_report rep;
	int vr = ng_store_audit_verify(st, &rep, &err);
	if (vr != 0)
		fail_msg("the audit chain does not verify (rc %d): %s%s", vr, rep.problem, err.msg);
	assert_int_equal(rep.entries, (int64_t)v->audit_entries);

	ng_strbuf report = {0};
	int cr = ng_store_check(st, &report, &err);
	if (cr != 0)
		fail_msg("the store's check failed (rc %d): %s%s", cr, report.s ? report.s : "", err.msg);
	assert_string_equal(report.s, "ok");
	ng_strbuf_free(&report);
	set_free(&present);
	set_free(&subjects);
	ng_store_close(st);
}

static void make_workdir(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(workdir, sizeof workdir, "%s/ng-crash-acks.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(workdir))
		fail_msg("mkdtemp: %s", strerror(errno));
}

static void remove_workdir(void)
{
	DIR *d = opendir(workdir);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			char path[2400];
			snprintf(path, sizeof path, "%s/%s", workdir, e->d_name);
			unlink(path);
		}
	}
	if (d)
		closedir(d);
	rmdir(workdir);
}

/* The schema is made once, before any writer, so the writers' opens find it. */
static void make_store(const char *name, char *spec, size_t cap)
{
	if (ng_test_store_spec(name, spec, cap) != 0)
		fail_msg("cannot make a store for %s", name);
	ng_store *st = NULL;
	ng_err err = {0};
	if (ng_store_open(spec, &st, &err) != 0)
		fail_msg("cannot create the store %s: %s", spec, err.msg);
	ng_store_close(st);
}

static void kill_rounds(void **state)
{
	(void)state;
	const char *env = getenv("NODEGATE_CRASH_ROUNDS");
	int rounds = env && atoi(env) > 0 ? atoi(env) : 40;
	env = getenv("NODEGATE_CRASH_SEED");
	unsigned seed = env && *env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
	srand(seed);
	char spec[1024];
	make_store("crash_kill", spec, sizeof spec);
	make_workdir();
	fprintf(stderr, "[ info     ] %d kill rounds, %d writers, seed %u (NODEGATE_CRASH_SEED)\n",
	        rounds, KILL_WRITERS, seed);

	double t0 = now_s();
	struct writer w[KILL_WRITERS];
	memset(w, 0, sizeof w);
	for (int i = 0; i < KILL_WRITERS; i++)
		spawn(&w[i], i, spec, 0, KILL_BATCH, true);
	int kills = 0;
	for (int round = 0; round < rounds; round++) {
		int v = rand() % KILL_WRITERS;
		wait_ready(&w[v]);
		long delay_us = rand() % 20001;
		nanosleep(&(struct timespec){0, delay_us * 1000}, NULL);
		kill_and_reap(&w[v]);
		kills++;
		spawn(&w[v], v, spec, 0, KILL_BATCH, true);
	}
	/* The last of them, killed the same way. */
	for (int i = 0; i < KILL_WRITERS; i++) {
		wait_ready(&w[i]);
		nanosleep(&(struct timespec){0, (long)(rand() % 20001) * 1000}, NULL);
		kill_and_reap(&w[i]);
		kills++;
	}
	double t_kill = now_s() - t0;

	struct acks a;
	read_acks(&a);
	if (a.errors)
		fail_msg("%zu writer(s) saw an error: %s", a.errors, a.first_error);
	struct verdict v;
	verify(spec, &a, KILL_BATCH, &v);
	fprintf(stderr,
	        "[ info     ] %d writers SIGKILLed in %.1f s: %zu inside put_records (batch begun, "
	        "not acknowledged), %zu inside the audit transaction, %zu between batches\n",
	        kills, t_kill, a.ended_in_put, a.ended_in_audit, a.ended_between);
	fprintf(stderr,
	        "[ info     ] %zu batches begun, %zu acknowledged, %zu in the store (all %d records "
	        "each; %zu committed but killed before the ack), %zu records; lost 0; %zu audit "
	        "entries (%zu acknowledged), chain verifies, check ok\n",
	        a.begun.n, a.batches.n, v.run_ids, KILL_BATCH, v.committed_unacked, v.records,
	        v.audit_entries, a.audited.n);
	assert_true(a.batches.n > 0);
	assert_true(v.run_ids >= a.batches.n);
	acks_free(&a);
	remove_workdir();
	ng_test_store_cleanup(spec);
}

/* n writers at once, each `batches` batches of `size`; none may fail. When
 * created is false the store does not exist yet: the writers' opens race to
 * create its schema. */
static void writers_at_once(const char *name, int n, int batches, int size, bool created)
{
	char spec[1024];
	if (created) {
		make_store(name, spec, sizeof spec);
	} else if (ng_test_store_spec(name, spec, sizeof spec) != 0) {
		fail_msg("cannot make a store for %s", name);
	}
	make_workdir();
	double t0 = now_s();
	struct writer *w = calloc((size_t)n, sizeof *w);
	assert_non_null(w);
	for (int i = 0; i < n; i++)
		spawn(&w[i], i, spec, batches, size, false);
	int failed = 0;
	char why[800] = "";
	for (int i = 0; i < n; i++) {
		int status;
		if (waitpid(w[i].pid, &status, 0) != w[i].pid)
			fail_msg("waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (!failed++)
				writer_error(w[i].ack, why, sizeof why);
		}
	}
	double elapsed = now_s() - t0;
	free(w);
	if (failed)
		fail_msg("%d of %d writers failed; the first says: %s", failed, n, why);
	struct acks a;
	read_acks(&a);
	if (a.errors)
		fail_msg("%zu writer(s) saw an error: %s", a.errors, a.first_error);
	size_t want_batches = (size_t)n * (size_t)batches;
	assert_int_equal(a.batches.n, want_batches);
	assert_int_equal(a.audited.n, want_batches);
	struct verdict v;
	verify(spec, &a, size, &v);
	assert_int_equal(v.records, want_batches * (size_t)size);
	assert_int_equal(v.run_ids, want_batches);
	assert_int_equal(v.audit_entries, want_batches);
	fprintf(stderr,
	        "[ info     ] %d writers x %d batches of %d%s in %.1f s: %zu records, %zu audit "
	        "entries, no errors, lost 0, chain verifies, check ok; the slowest batch and its "
	        "audit entry took %.2f s\n",
	        n, batches, size, created ? "" : " (on a store none had created)", elapsed,
	        v.records, v.audit_entries, a.slowest);
	acks_free(&a);
	remove_workdir();
	ng_test_store_cleanup(spec);
}

static void many_writers(void **state)
{
	(void)state;
	const char *env = getenv("NODEGATE_CRASH_WRITERS");
	int n = env && atoi(env) > 0 ? atoi(env) : MANY_WRITERS;
	writers_at_once("crash_many", n, MANY_BATCHES, MANY_BATCH, true);
}

/* The first open of a new store, by many processes at once: one creates the
 * schema, the others find it, none fails. */
static void first_open_race(void **state)
{
	(void)state;
	writers_at_once("crash_first_open", 16, 2, 5, false);
}

int main(int argc, char **argv)
{
	if (argc == 8 && strcmp(argv[1], "--writer") == 0)
		return writer_main(argv);
	if (argc != 1) {
		fprintf(stderr, "usage: test_store_crash (the writers are its own --writer runs)\n");
		return 2;
	}
	/* A writer killed mid-write must not take the parent with it. */
	signal(SIGPIPE, SIG_IGN);
	pg = ng_test_backend_is_postgres();
	fprintf(stderr, "[ info     ] backend %s\n", pg ? "postgres" : "sqlite");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kill_rounds),
		cmocka_unit_test(many_writers),
		cmocka_unit_test(first_open_race),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
