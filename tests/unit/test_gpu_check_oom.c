/* The epilog path (flow/gpu_check.h) with each allocation
 * failing in turn: malloc, calloc and realloc of nodegate's own code (the
 * link wraps them) and cJSON's (its hooks, which the synthetic NVML's
 * cJSON shares), the n-th one failing, counted across the run and the
 * children it forks, for every n until a run needs fewer than n. Each failure must end in a clean error
 * (NG_GPU_CHECK_NOMEM, no result) or a result that does not drain and exits
 * 0: never a crash, never a drain of healthy GPUs. Each run is a child of
 * its own, so a crash names the allocation that caused it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flow/gpu_check.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* Shared with the run's own children (the NVML query, the kernel's view are
 * forks), so the n-th allocation is counted across all of them. */
struct counter {
	long fail_at; /* 0: none fails */
	long seen;    /* allocations so far */
};
static struct counter *cnt;

static long allocations(void)
{
	return __atomic_load_n(&cnt->seen, __ATOMIC_SEQ_CST);
}

static bool fails_now(void)
{
	return cnt && __atomic_add_fetch(&cnt->seen, 1, __ATOMIC_SEQ_CST) == cnt->fail_at;
}

void *__wrap_malloc(size_t n)
{
	return fails_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return fails_now() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fails_now() ? NULL : __real_realloc(p, n);
}

static const char *synth_lib;
static char dir[] = "/tmp/ng-oom-XXXXXX";
static char kmsg[64];

enum { CHILD_OK = 0, CHILD_DRAINED = 10, CHILD_BAD = 11, CHILD_NOT_REACHED = 20 };

/* One run with allocation n failing; the child's exit status says how it went. */
static int run_failing(long n)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		cnt->fail_at = n;
		cnt->seen = 0;
		ng_gpu_check_request req;
		ng_gpu_check_request_init(&req, NG_CHECK_EPILOG);
		req.gpus = "0,1";
		req.kmsg_path = kmsg;
		req.no_store = true;
		req.deadline_s = 20;
		ng_gpu_check_result *r = NULL;
		int rc = ng_gpu_check_run(NULL, &req, &r);
		int status = CHILD_OK;
		if (rc == NG_GPU_CHECK_NOMEM) {
			status = r ? CHILD_BAD : CHILD_OK;
		} else if (rc != NG_GPU_CHECK_RAN || !r) {
			status = CHILD_BAD;
		} else {
			char *json = ng_gpu_check_json(r);
			if (ng_gpu_check_drains(r) || ng_gpu_check_exit_status(r) != 0)
				status = CHILD_DRAINED;
			else if (allocations() < n && (strcmp(ng_gpu_check_severity(r), "ok") != 0 ||
			                                ng_gpu_check_count(r) != 2 || !json))
				status = CHILD_BAD; /* nothing failed: the whole verdict */
			free(json);
			ng_gpu_check_result_release(r);
		}
		if (status == CHILD_OK && allocations() < n)
			status = CHILD_NOT_REACHED;
		if (status == CHILD_BAD)
			fprintf(stderr, "allocation %ld failing: ng_gpu_check_run returned %d\n", n, rc);
		_exit(status);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("allocation %ld failing: the run crashed on signal %d", n, WTERMSIG(st));
	return WEXITSTATUS(st);
}

static void test_each_allocation_fails_cleanly(void **state)
{
	(void)state;
	long n;
	for (n = 1; n < 100000; n++) {
		int rc = run_failing(n);
		if (rc == CHILD_NOT_REACHED)
			break;
		if (rc == CHILD_DRAINED)
			fail_msg("allocation %ld failing: healthy GPUs drained", n);
		if (rc != CHILD_OK)
			fail_msg("allocation %ld failing: not a clean error (child status %d)", n, rc);
	}
	print_message("%ld allocations on the epilog path, each failed once\n", n - 1);
	/* The path allocates: a count this low means the wrap caught nothing. */
	assert_true(n > 20);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_gpu_check_oom SYNTHETIC_NVML_LIBRARY\n");
		return 2;
	}
	synth_lib = argv[1];
	cnt = mmap(NULL, sizeof *cnt, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED)
		return 2;
	cJSON_Hooks hooks = {.malloc_fn = __wrap_malloc, .free_fn = free};
	cJSON_InitHooks(&hooks);
	if (!mkdtemp(dir))
		return 2;
	char path[128], root[128];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	snprintf(root, sizeof root, "%s/root", dir);
	snprintf(kmsg, sizeof kmsg, "%s/kmsg", dir);
	FILE *f = fopen(path, "w");
	FILE *k = fopen(kmsg, "w");
	if (!f || !k || mkdir(root, 0700) < 0)
		return 2;
	fputs("{\"schema\": \"nodegate/synthetic-gpus/1\", \"gpus\": [{}, {}]}\n", f);
	/* An Xid on a bus no job GPU has: read, attached to nothing. */
	fputs("[  100.000000] NVRM: Xid (PCI:0000:99:00): 79, pid=1, GPU has fallen off the bus.\n", k);
	fclose(f);
	fclose(k);
	for (char **e = environ; *e;)
		if (strncmp(*e, "SLURM_", 6) == 0 || strncmp(*e, "NODEGATE_", 9) == 0) {
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
			unsetenv(name);
		} else {
			e++;
		}
	setenv("NODEGATE_NVML_LIBRARY", synth_lib, 1);
	setenv("NODEGATE_SYNTH_GPUS", path, 1);
	setenv("NODEGATE_ROOT", root, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_allocation_fails_cleanly),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	unlink(kmsg);
	rmdir(root);
	rmdir(dir);
	return rc;
}
