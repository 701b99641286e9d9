/* The public GPU check (include/nodegate/nodegate.h) against
 * libnodegate.so, through the public header alone: the request's fields
 * reach the check (the job's GPUs, the library, the root), a fault on the
 * job's GPU drains and a neighbour's does not, a missing NVML never drains,
 * the context's store (and no other) remembers the node's GPUs between
 * checks, and misuse and an unusable input are errors of their class. argv[1] is
 * the synthetic NVML (libnodegate-nvml-synth.so). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodegate/nodegate.h>

static const char *synth;
static char dir[] = "/tmp/ng-api-gpu-check-XXXXXX";

/* Two synthetic GPUs, the second with uncorrected ECC errors. */
static const char bad_second[] =
	"{\"schema\": \"nodegate/synthetic-gpus/1\", \"gpus\": [{}, {\"ecc\": "
	"{\"volatile\": {\"corrected\": 0, \"uncorrected\": 3}, "
	"\"aggregate\": {\"corrected\": 0, \"uncorrected\": 3}}}]}";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	char path[256];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(bad_second, f);
	fclose(f);
	setenv("NODEGATE_SYNTH_GPUS", path, 1);
	unsetenv("NODEGATE_STORE");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* An epilog of the job's GPUs on the synthetic node; *out the result. */
static int epilog(nodegate_ctx *ctx, const char *gpus, const char *library,
                  nodegate_gpu_check **out, nodegate_error *err)
{
	nodegate_gpu_check_request req;
	nodegate_gpu_check_request_init(&req, NODEGATE_CHECK_EPILOG);
	req.gpus = gpus;
	req.nvml_library = library;
	req.root = dir; /* no kernel view of GPUs: NVML's alone */
	req.no_kmsg = 1;
	req.deadline_s = 5;
	return nodegate_gpu_check_run(ctx, &req, out, err);
}

static void test_defaults(void **state)
{
	(void)state;
	nodegate_gpu_check_request req;
	memset(&req, 0x5a, sizeof req);
	nodegate_gpu_check_request_init(&req, NODEGATE_CHECK_HEALTH);
	assert_int_equal(req.mode, NODEGATE_CHECK_HEALTH);
	assert_true(req.deadline_s <= 0);
	assert_true(req.since_s < 0);
	assert_int_equal(req.no_kmsg, 0);
	assert_int_equal(req.no_store, 0);
	assert_null(req.gpus);
	assert_null(req.nvml_library);
	assert_null(req.smi_file);
	assert_null(req.root);
}

static void test_job_gpu_fault_drains(void **state)
{
	(void)state;
	nodegate_ctx *ctx = nodegate_ctx_new();
	assert_non_null(ctx);
	nodegate_gpu_check *r = NULL;
	nodegate_error err = {0};
	assert_int_equal(epilog(ctx, "1", synth, &r, &err), 0);
	assert_string_equal(nodegate_gpu_check_severity(r), "fatal");
	assert_true(nodegate_gpu_check_drains(r));
	assert_int_equal(nodegate_gpu_check_exit_status(r), 1);
	assert_int_equal(nodegate_gpu_check_count(r), 1);
	assert_true(strlen(nodegate_gpu_check_reason(r)) > 0);
	char *json = nodegate_gpu_check_json(r);
	assert_non_null(json);
	assert_non_null(strstr(json, "nodegate/gpu-check/1"));
	assert_non_null(strstr(json, "\"fatal\""));
	nodegate_free(json);
	nodegate_gpu_check_release(r);
	nodegate_ctx_free(ctx);
}

static void test_neighbour_fault_does_not_drain(void **state)
{
	(void)state;
	nodegate_ctx *ctx = nodegate_ctx_new();
	nodegate_gpu_check *r = NULL;
	assert_int_equal(epilog(ctx, "0", synth, &r, NULL), 0);
	assert_string_equal(nodegate_gpu_check_severity(r), "ok");
	assert_false(nodegate_gpu_check_drains(r));
	assert_int_equal(nodegate_gpu_check_exit_status(r), 0);
	assert_int_equal(nodegate_gpu_check_count(r), 1);
	nodegate_gpu_check_release(r);
	nodegate_ctx_free(ctx);
}

static void test_missing_nvml_never_drains(void **state)
{
	(void)state;
	nodegate_ctx *ctx = nodegate_ctx_new();
	nodegate_gpu_check *r = NULL;
	char lib[300];
	snprintf(lib, sizeof lib, "%s/no-such-libnvidia-ml.so", dir);
	assert_int_equal(epilog(ctx, "1", lib, &r, NULL), 0);
	assert_string_not_equal(nodegate_gpu_check_severity(r), "ok");
	assert_string_not_equal(nodegate_gpu_check_severity(r), "fatal");
	assert_false(nodegate_gpu_check_drains(r));
	assert_int_equal(nodegate_gpu_check_exit_status(r), 0);
	nodegate_gpu_check_release(r);
	nodegate_ctx_free(ctx);
}

/* NODEGATE_SYNTH_GPUS = a file of n healthy synthetic GPUs. */
static void synth_gpus(int n)
{
	char path[256];
	snprintf(path, sizeof path, "%s/gpus-%d.json", dir, n);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\": \"nodegate/synthetic-gpus/1\", \"gpus\": [{}", f);
	for (int i = 1; i < n; i++)
		fputs(", {}", f);
	fputs("]}", f);
	fclose(f);
	setenv("NODEGATE_SYNTH_GPUS", path, 1);
}

/* A health check of the whole synthetic node; its severity and count. */
static void health(nodegate_ctx *ctx, int no_store, const char *severity, size_t count)
{
	nodegate_gpu_check_request req;
	nodegate_gpu_check_request_init(&req, NODEGATE_CHECK_HEALTH);
	req.nvml_library = synth;
	req.root = dir;
	req.no_kmsg = 1;
	req.no_store = no_store;
	req.deadline_s = 5;
	nodegate_gpu_check *r = NULL;
	nodegate_error err = {0};
	assert_int_equal(nodegate_gpu_check_run(ctx, &req, &r, &err), 0);
	assert_string_equal(nodegate_gpu_check_severity(r), severity);
	assert_int_equal(nodegate_gpu_check_count(r), count);
	nodegate_gpu_check_release(r);
}

/* Two GPUs seen, then one: the context's store knows the other is gone. */
static void test_context_store_remembers_gpus(void **state)
{
	(void)state;
	char db[300];
	snprintf(db, sizeof db, "%s/store.db", dir);
	nodegate_ctx *ctx = nodegate_ctx_new();
	nodegate_error err = {0};
	assert_int_equal(nodegate_ctx_open_store(ctx, db, &err), 0);
	synth_gpus(2);
	health(ctx, 0, "ok", 2);
	synth_gpus(1);
	health(ctx, 1, "ok", 1); /* no_store: the store is not read */
	health(ctx, 0, "fatal", 2); /* gpu.missing */
	nodegate_ctx_free(ctx);
	/* A context without a store reads none, whatever $NODEGATE_STORE says. */
	setenv("NODEGATE_STORE", db, 1);
	ctx = nodegate_ctx_new();
	health(ctx, 0, "ok", 1);
	nodegate_ctx_free(ctx);
	unsetenv("NODEGATE_STORE");
	for (int n = 1; n <= 2; n++) {
		char path[256];
		snprintf(path, sizeof path, "%s/gpus-%d.json", dir, n);
		unlink(path);
	}
	/* The database and what SQLite and the store keep beside it. */
	static const char *const beside[] = {"", "-queue", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < sizeof beside / sizeof *beside; i++) {
		char path[320];
		snprintf(path, sizeof path, "%s%s", db, beside[i]);
		unlink(path);
	}
}

static void test_misuse_is_a_usage_error(void **state)
{
	(void)state;
	nodegate_ctx *ctx = nodegate_ctx_new();
	nodegate_gpu_check_request req;
	nodegate_gpu_check_request_init(&req, NODEGATE_CHECK_EPILOG);
	nodegate_gpu_check *r = (nodegate_gpu_check *)&req; /* must be reset */
	nodegate_error err = {0};
	assert_int_equal(nodegate_gpu_check_run(NULL, &req, &r, &err), -1);
	assert_int_equal(err.code, NODEGATE_ERR_USAGE);
	assert_null(r);
	err.code = NODEGATE_ERR_NONE;
	assert_int_equal(nodegate_gpu_check_run(ctx, NULL, &r, &err), -1);
	assert_int_equal(err.code, NODEGATE_ERR_USAGE);
	req.mode = (nodegate_check_mode)7;
	err.code = NODEGATE_ERR_NONE;
	assert_int_equal(nodegate_gpu_check_run(ctx, &req, &r, &err), -1);
	assert_int_equal(err.code, NODEGATE_ERR_USAGE);
	assert_null(r);
	nodegate_ctx_free(ctx);
}

static void test_unusable_smi_file_is_an_input_error(void **state)
{
	(void)state;
	nodegate_ctx *ctx = nodegate_ctx_new();
	nodegate_gpu_check_request req;
	nodegate_gpu_check_request_init(&req, NODEGATE_CHECK_HEALTH);
	char smi[300];
	snprintf(smi, sizeof smi, "%s/no-such-nvidia-smi.txt", dir);
	req.smi_file = smi;
	req.no_kmsg = 1;
	req.root = dir;
	nodegate_gpu_check *r = NULL;
	nodegate_error err = {0};
	assert_int_equal(nodegate_gpu_check_run(ctx, &req, &r, &err), -1);
	assert_int_equal(err.code, NODEGATE_ERR_INPUT);
	assert_true(strlen(err.message) > 0);
	assert_null(r);
	nodegate_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBNODEGATE-NVML-SYNTH\n", argv[0]);
		return 2;
	}
	synth = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_job_gpu_fault_drains),
		cmocka_unit_test(test_neighbour_fault_does_not_drain),
		cmocka_unit_test(test_missing_nvml_never_drains),
		cmocka_unit_test(test_context_store_remembers_gpus),
		cmocka_unit_test(test_misuse_is_a_usage_error),
		cmocka_unit_test(test_unusable_smi_file_is_an_input_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
