/* An epilog decision through nodegate's public header alone: what a front
 * end other than the `nodegate` command (a daemon, an operator, a binding)
 * does to check a job's GPUs after the job and learn whether to drain.
 *
 *   epilog [GPUS [DEADLINE [KMSG]]]
 *
 * GPUS is the job's GPU list as SLURM_JOB_GPUS gives it ("-": that
 * variable); DEADLINE the seconds the whole check may take (default: the
 * policy's, 10); KMSG a saved kernel log to read Xids from (default: none).
 * NVML is whatever NODEGATE_NVML_LIBRARY names (docs/synthetic-gpus.md for
 * a node without GPUs). Prints the result's JSON, then one line with the
 * verdict, and exits with the status Slurm's Epilog would: 1 drains.
 *
 * Build: cc epilog.c $(pkg-config --cflags --libs nodegate) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodegate/nodegate.h>

int main(int argc, char **argv)
{
	nodegate_gpu_check_request req;
	nodegate_gpu_check_request_init(&req, NODEGATE_CHECK_EPILOG);
	req.gpus = argc > 1 && strcmp(argv[1], "-") != 0 ? argv[1] : NULL;
	if (argc > 2)
		req.deadline_s = atof(argv[2]);
	if (argc > 3)
		req.kmsg_path = argv[3];
	else
		req.no_kmsg = 1;
	req.no_store = 1; /* keep nothing: this example only decides */

	/* A fresh context: the built-in policy, the system clock, no store, no
	 * hook. */
	nodegate_ctx *ctx = nodegate_ctx_new();
	if (!ctx) {
		fprintf(stderr, "epilog: out of memory: nothing checked\n");
		return 0; /* never drain on ignorance */
	}
	nodegate_gpu_check *r;
	nodegate_error err = {0};
	if (nodegate_gpu_check_run(ctx, &req, &r, &err) < 0) {
		fprintf(stderr, "epilog: %s error: %s: nothing checked\n",
		        nodegate_error_class_name(err.code), err.message);
		nodegate_ctx_free(ctx);
		return 0; /* never drain on ignorance */
	}
	char *json = nodegate_gpu_check_json(r);
	printf("%s\n", json ? json : "null");
	nodegate_free(json);
	size_t n = nodegate_gpu_check_count(r);
	const char *why = nodegate_gpu_check_reason(r);
	printf("epilog: %s: %zu GPU%s checked: %s%s%s\n", nodegate_gpu_check_severity(r), n,
	       n == 1 ? "" : "s", nodegate_gpu_check_drains(r) ? "drain" : "no drain",
	       *why ? ": " : "", why);
	int status = nodegate_gpu_check_exit_status(r);
	nodegate_gpu_check_release(r);
	nodegate_ctx_free(ctx);
	return status;
}
