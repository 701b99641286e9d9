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
 * verdict, and exits with the status Slurm's Epilog would: 1 drains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodegate/gpu_check.h>

int main(int argc, char **argv)
{
	ng_gpu_check_request req;
	ng_gpu_check_request_init(&req, NG_CHECK_EPILOG);
	req.gpus = argc > 1 && strcmp(argv[1], "-") != 0 ? argv[1] : NULL;
	if (argc > 2)
		req.deadline_s = atof(argv[2]);
	if (argc > 3)
		req.kmsg_path = argv[3];
	else
		req.no_kmsg = true;
	req.no_store = true; /* keep nothing: this example only decides */

	ng_gpu_check_result *r;
	/* No context: the built-in policy, the system clock, no hook. */
	int rc = ng_gpu_check_run(NULL, &req, &r);
	if (rc == NG_GPU_CHECK_NOMEM) {
		fprintf(stderr, "epilog: out of memory: nothing checked\n");
		return 0; /* never drain on ignorance */
	}
	char *json = ng_gpu_check_json(r);
	printf("%s\n", json ? json : "null");
	free(json);
	printf("%s: %s: %zu GPU%s checked: %s%s%s\n", ng_gpu_check_mode_name(req.mode),
	       ng_gpu_check_severity(r), ng_gpu_check_count(r), ng_gpu_check_count(r) == 1 ? "" : "s",
	       ng_gpu_check_drains(r) ? "drain" : "no drain", *ng_gpu_check_reason(r) ? ": " : "",
	       ng_gpu_check_reason(r));
	int status = ng_gpu_check_exit_status(r);
	ng_gpu_check_result_release(r);
	return status;
}
