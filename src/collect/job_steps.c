/* A Slurm job's steps through sacct (collect/job_steps.h). */
#include "collect/job_steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/spawn.h"

int ng_job_steps_read(const char *job, ng_sacct_step *out, size_t cap, size_t *n, char *why,
                      size_t len)
{
	*n = 0;
	const char *sacct = getenv("NODEGATE_SACCT");
	if (!sacct || !*sacct)
		sacct = "sacct";
	char *argv[] = {(char *)sacct,      "--jobs",
	                (char *)job,        "--parsable2",
	                "--noheader",       "--format=JobID,JobName,NodeList,ElapsedRaw,State",
	                NULL};
	ng_spawn_result r;
	char ebuf[256];
	if (ng_spawn_capture(argv, NG_JOB_STEPS_TIMEOUT_S, 1 << 22, &r, ebuf, sizeof ebuf) < 0) {
		snprintf(why, len, "cannot run %s: %s", sacct, ebuf);
		return -1;
	}
	if (!r.spawned || r.timed_out || r.signal || r.exit_status != 0) {
		char d[200];
		ng_spawn_describe(&r, d, sizeof d);
		snprintf(why, len, "%s --jobs %s: %s", sacct, job, d);
		ng_spawn_result_free(&r);
		return -1;
	}
	size_t bad = 0;
	*n = ng_sacct_steps_parse(r.out, r.out_len, out, cap, &bad);
	ng_spawn_result_free(&r);
	return 0;
}
