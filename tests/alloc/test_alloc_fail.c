/* Every allocation on the main paths, failed in turn: the gate's batch mode
 * and an admission from records, through the public API
 * (include/nodegate/nodegate.h).
 *
 * The program is linked with -Wl,--wrap for malloc, calloc, realloc, strdup
 * and strndup, and cJSON is given the same counting allocator, so every
 * allocation nodegate's code and cJSON make is counted. A reference run
 * counts N of them on the path; then, for each k in 1..N, a child process
 * runs the same path with the k-th allocation failing and reports what came
 * of it. Each must be a clean error (-1 with a classed error and a message,
 * or a line {"error": ...} in the batch's output), or the reference's own
 * result, or (for the admission) an outcome that is not a pass; never a
 * crash, a hang, or a pass where the reference quarantines. SQLite's own
 * allocations are its own (it answers SQLITE_NOMEM, a store error) and are
 * not failed here.
 *
 * Usage: test_alloc_fail DIR (a scratch directory). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodegate/nodegate.h>

/* ---- the counting allocator ------------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static bool armed;        /* counting the path's allocations */
static long calls;        /* allocations since armed */
static long fail_at = -1; /* the one to fail (1-based), or -1 */

static bool fails(void)
{
	return armed && ++calls == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fails() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fails() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fails() ? NULL : __real_strndup(s, n);
}

static void *cjson_malloc(size_t n)
{
	return __wrap_malloc(n);
}

/* ---- what the paths are given ------------------------------------------------------------ */

#define NOW 1790000000

static int64_t fixed_clock(void *arg)
{
	(void)arg;
	return NOW;
}

static char dir[4096];

/* One node's records: storage and CPU, nine samples each, storage at the
 * given median. */
static void records(char *out, size_t cap, const char *node, double storage)
{
	static const double spread[9] = {0.99, 1.0, 1.01, 0.995, 1.0, 1.005, 0.998, 1.0, 1.002};
	const char *metric[2] = {"storage.seqread.gbps", "cpu.fp64.gflops"};
	const char *domain[2] = {"storage", "compute"};
	double median[2] = {storage, 980.0};
	size_t n = (size_t)snprintf(out, cap, "[");
	for (int m = 0; m < 2; m++) {
		n += (size_t)snprintf(out + n, cap - n,
		                      "%s{\"schema\": \"nodegate/record/1\", \"node\": \"%s\", \"class\": "
		                      "\"c\", \"software\": \"sw\", \"domain\": \"%s\", \"metric\": \"%s\", "
		                      "\"wrong\": 0, \"samples\": [",
		                      m ? ", " : "", node, domain[m], metric[m]);
		for (int i = 0; i < 9; i++)
			n += (size_t)snprintf(out + n, cap - n, "%s%.4f", i ? ", " : "", median[m] * spread[i]);
		n += (size_t)snprintf(out + n, cap - n, "]}");
	}
	snprintf(out + n, cap - n, "]");
}

static nodegate_ctx *context(const char *store)
{
	nodegate_error err;
	nodegate_ctx *ctx = nodegate_ctx_new();
	if (!ctx)
		return NULL;
	nodegate_ctx_set_clock(ctx, fixed_clock, NULL);
	nodegate_ctx_set_actor(ctx, "alloc-test");
	if (nodegate_ctx_policy_json(ctx, "{\"admission\": {\"small_class_min_nodes\": 0}}", &err) < 0 ||
	    (store && nodegate_ctx_open_store(ctx, store, &err) < 0)) {
		fprintf(stderr, "context: %s\n", err.message);
		nodegate_ctx_free(ctx);
		return NULL;
	}
	return ctx;
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;
	int rc = in && out ? 0 : -1;
	while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
		rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	return rc;
}

/* ---- the paths ------------------------------------------------------------------------- */

enum { SAME = 0, CLEAN_ERROR = 1, NOT_A_PASS = 2, UNCLEAN = 3, FALSE_PASS = 4, SETUP = 5 };

static char reference_outcome[32];
static char reference_batch[8192];

/* An admission of a node that reads 20% slow twice: the reference
 * quarantines it. */
static int admit_path(long k)
{
	char store[4200], first[4096];
	snprintf(store, sizeof store, "%s/admit-%ld.db", dir, k);
	char tmpl[4200];
	snprintf(tmpl, sizeof tmpl, "%s/template.db", dir);
	if (copy_file(tmpl, store) < 0)
		return SETUP;
	nodegate_ctx *ctx = context(store);
	if (!ctx)
		return SETUP;
	records(first, sizeof first, "slow", 4.8);
	nodegate_admission *a = NULL;
	nodegate_error err = {0};
	fail_at = k;
	calls = 0;
	armed = true;
	int rc = nodegate_admit_records(ctx, first, first, &a, &err);
	armed = false;
	int result;
	if (rc < 0) {
		result = err.code != NODEGATE_ERR_NONE && err.message[0] && !a ? CLEAN_ERROR : UNCLEAN;
	} else {
		const char *o = nodegate_admission_outcome(a);
		if (k < 0)
			snprintf(reference_outcome, sizeof reference_outcome, "%s", o);
		result = strcmp(o, reference_outcome) == 0 ? SAME
		         : nodegate_admission_exit_status(a) == 0 ? FALSE_PASS
		                                                 : NOT_A_PASS;
	}
	nodegate_admission_release(a);
	nodegate_ctx_free(ctx);
	unlink(store);
	return result;
}

static const char batch_in[] =
	"{\"record\": {\"class\": \"c\", \"samples\": [100, 101, 99], \"wrong\": 0}, "
	"\"baseline\": {\"class\": \"c\", \"median\": 100, \"cv\": 0.01}}\n"
	"{\"record\": {\"class\": \"c\", \"samples\": [80, 81, 79], \"wrong\": 0}, "
	"\"baseline\": {\"class\": \"c\", \"median\": 100, \"cv\": 0.01}, \"cohort_drops\": [0.01, 0.0]}\n"
	"{\"record\": {\"class\": \"c\", \"samples\": [80, 81, 79], \"wrong\": 0}, "
	"\"baseline\": {\"class\": \"c\", \"median\": 100, \"cv\": 0.01}, "
	"\"history\": [\"block\", \"block\"], \"blocked\": true}\n"
	"{\"record\": {\"class\": \"c\", \"samples\": [100, 100, 100], \"wrong\": 2}, "
	"\"baseline\": {\"class\": \"c\", \"median\": 100, \"cv\": 0.01}}\n"
	"{\"record\": {\"class\": \"c\", \"samples\": [100], \"wrong\": 0}, \"blocked\": 1, \"bogus\": 2}\n";

/* Whether every line of got is the reference's line or an error line, and
 * (complete) there are as many. */
static bool batch_clean(const char *got, bool complete)
{
	const char *r = reference_batch, *g = got;
	while (*g) {
		const char *ge = strchr(g, '\n'), *re = strchr(r, '\n');
		if (!ge || !re)
			return false;
		bool same = ge - g == re - r && memcmp(g, r, (size_t)(ge - g)) == 0;
		if (!same && strncmp(g, "{\"error\": ", 10) != 0)
			return false;
		g = ge + 1;
		r = re + 1;
	}
	return !complete || *r == '\0';
}

static int batch_path(long k)
{
	char in_path[4200];
	snprintf(in_path, sizeof in_path, "%s/batch.in", dir);
	nodegate_ctx *ctx = context(NULL);
	FILE *in = fopen(in_path, "r"), *out = tmpfile();
	if (!ctx || !in || !out)
		return SETUP;
	nodegate_error err = {0};
	fail_at = k;
	calls = 0;
	armed = true;
	int rc = nodegate_gate_batch(ctx, in, out, &err);
	armed = false;
	char got[8192] = "";
	rewind(out);
	size_t n = fread(got, 1, sizeof got - 1, out);
	got[n] = '\0';
	fclose(in);
	fclose(out);
	nodegate_ctx_free(ctx);
	if (k < 0) {
		snprintf(reference_batch, sizeof reference_batch, "%s", got);
		return rc == 1 ? SAME : SETUP; /* the last line is refused */
	}
	if (rc < 0)
		return err.code != NODEGATE_ERR_NONE && err.message[0] && batch_clean(got, false)
		               ? CLEAN_ERROR
		               : UNCLEAN;
	if (!batch_clean(got, true))
		return strstr(got, "pass") && !strstr(reference_batch, "pass") ? FALSE_PASS : UNCLEAN;
	return strcmp(got, reference_batch) == 0 ? SAME : CLEAN_ERROR;
}

/* ---- the driver ---------------------------------------------------------------------------- */

/* Runs path(k) in a child; its result, or -signal when it crashed, or -100
 * when it hung. */
static int in_child(int (*path)(long), long k)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(20);
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 2); /* notes of a failed allocation are expected */
		_exit(path(k));
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -200;
	if (WIFSIGNALED(st))
		return WTERMSIG(st) == SIGALRM ? -100 : -WTERMSIG(st);
	return WEXITSTATUS(st);
}

static int every_allocation(const char *name, int (*path)(long))
{
	if (path(-1) != SAME) {
		fprintf(stderr, "FAIL %s: the reference run did not run\n", name);
		return 1;
	}
	long n = calls;
	long seen[6] = {0};
	int bad = 0;
	for (long k = 1; k <= n; k++) {
		int r = in_child(path, k);
		if (getenv("NG_ALLOC_DEBUG"))
			fprintf(stderr, "%s %ld -> %d\n", name, k, r);
		if (r >= 0 && r <= NOT_A_PASS) {
			seen[r]++;
			continue;
		}
		bad++;
		if (bad <= 10)
			fprintf(stderr, "FAIL %s: allocation %ld of %ld failed: %s\n", name, k, n,
			        r == UNCLEAN        ? "an error without a class or message, or a damaged output"
			        : r == FALSE_PASS   ? "a pass where the reference does not pass"
			        : r == SETUP        ? "the test could not set up"
			        : r == -100         ? "it hung"
			                            : "it crashed");
	}
	printf("%s: %ld allocations failed in turn: %ld clean errors, %ld unchanged, %ld not a pass, "
	       "%d wrong\n",
	       name, n, seen[CLEAN_ERROR], seen[SAME], seen[NOT_A_PASS], bad);
	/* A path whose failures never surface would be a test that cannot fail. */
	if (n == 0 || seen[CLEAN_ERROR] == 0) {
		fprintf(stderr, "FAIL %s: no allocation failure came back as an error\n", name);
		bad++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	snprintf(dir, sizeof dir, "%s", argv[1]);
	cJSON_Hooks hooks = {.malloc_fn = cjson_malloc, .free_fn = free};
	cJSON_InitHooks(&hooks);

	/* The class's history: ten healthy nodes admitted, so the slow node is
	 * judged against a baseline and its confirmation quarantines it. */
	char tmpl[4200], rec[4096], in_path[4200];
	snprintf(tmpl, sizeof tmpl, "%s/template.db", dir);
	unlink(tmpl);
	nodegate_ctx *ctx = context(tmpl);
	if (!ctx)
		return 1;
	for (int i = 0; i < 10; i++) {
		char node[16];
		snprintf(node, sizeof node, "n%02d", i);
		records(rec, sizeof rec, node, 6.0);
		nodegate_admission *a;
		nodegate_error err;
		if (nodegate_admit_records(ctx, rec, NULL, &a, &err) < 0) {
			fprintf(stderr, "history: %s\n", err.message);
			return 1;
		}
		nodegate_admission_release(a);
	}
	nodegate_ctx_free(ctx);
	snprintf(in_path, sizeof in_path, "%s/batch.in", dir);
	FILE *f = fopen(in_path, "w");
	if (!f || fputs(batch_in, f) < 0 || fclose(f) != 0)
		return 1;

	int bad = every_allocation("gate --batch", batch_path);
	bad += every_allocation("admit from records", admit_path);
	if (strcmp(reference_outcome, "quarantined") != 0) {
		fprintf(stderr, "FAIL the reference admission is %s, not quarantined\n", reference_outcome);
		bad++;
	}
	return bad != 0;
}
