/* Admission's capture of the failing domain's evidence (flow/evidence.c):
 * each collector runs in a child under a deadline, so an NVML that never
 * returns costs the run that deadline and no more, and the evidence kept
 * says the collector did not finish. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/bounded.h"
#include "collect/identity.h"
#include "flow/evidence.h"
#include "judge/evidence_summary.h"
#include "store/probation.h"

static char dir[PATH_MAX];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Captures compute and storage evidence for this machine's run against
 * the synthetic GPUs in scenario, and returns the run's kept evidence. */
static cJSON *capture(const char *scenario, double deadline_s, double *took)
{
	char gpus[PATH_MAX + 16], db[PATH_MAX + 16];
	snprintf(gpus, sizeof gpus, "%s/gpus.json", dir);
	snprintf(db, sizeof db, "%s/s.db", dir);
	write_file(gpus, scenario);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	setenv("NODEGATE_NVML_LIBRARY", NG_SYNTH_LIB, 1);
	char id[256], name[128];
	ng_node_names(id, sizeof id, name, sizeof name);
	ng_store *st;
	ng_err err;
	assert_int_equal(ng_store_open(db, &st, &err), 0);
	const char *domains[] = {"compute", "storage"};
	double t0 = ng_monotonic_now();
	int kept = ng_evidence_capture(st, &(ng_evidence_capture_in){.node = id, .run_id = "run-1",
	                                                             .domains = domains,
	                                                             .n_domains = 2, .now = 1,
	                                                             .deadline_s = deadline_s},
	                               &err);
	*took = ng_monotonic_now() - t0;
	assert_int_equal(kept, 2);
	cJSON *out = NULL;
	assert_int_equal(ng_store_evidence_of_run(st, id, "run-1", &out, &err), 0);
	ng_store_close(st);
	unlink(db);
	return out;
}

static const cJSON *evidence_of(const cJSON *all, const char *domain)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, all)
	{
		const cJSON *d = cJSON_GetObjectItem(c, "domain");
		if (cJSON_IsString(d) && strcmp(d->valuestring, domain) == 0)
			return cJSON_GetObjectItem(c, "evidence");
	}
	return NULL;
}

static void test_hung_nvml_costs_the_deadline_only(void **state)
{
	(void)state;
	double took;
	cJSON *all = capture("{\"schema\":\"nodegate/synthetic-gpus/1\","
	                     "\"fail\":{\"hang\":\"nvmlDeviceGetPowerUsage\"},\"gpus\":[{},{}]}",
	                     3.0, &took);
	assert_true(took < 6.0); /* storage settles 1 s; compute hangs until its 3 s deadline */
	const cJSON *compute = evidence_of(all, "compute");
	assert_non_null(compute);
	const cJSON *why = cJSON_GetObjectItem(compute, "incomplete");
	assert_true(cJSON_IsString(why));
	assert_non_null(strstr(why->valuestring, "did not finish within 3 s"));
	char lines[8][NG_SUMMARY_LINE];
	size_t n = ng_evidence_summary(all, lines, 8);
	bool said = false;
	for (size_t i = 0; i < n; i++)
		said |= strncmp(lines[i], "compute: no evidence: the collector did not finish", 50) == 0;
	assert_true(said);
	/* the other domain's collector is not held by it */
	const cJSON *storage = evidence_of(all, "storage");
	assert_non_null(storage);
	assert_null(cJSON_GetObjectItem(storage, "incomplete"));
	cJSON_Delete(all);
}

static void test_answering_nvml_is_kept_whole(void **state)
{
	(void)state;
	double took;
	cJSON *all = capture("{\"schema\":\"nodegate/synthetic-gpus/1\",\"gpus\":["
	                     "{\"power_limit_mw\":300000},{}]}",
	                     10.0, &took);
	const cJSON *compute = evidence_of(all, "compute");
	assert_non_null(compute);
	assert_null(cJSON_GetObjectItem(compute, "incomplete"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(compute, "gpus")), 2);
	cJSON_Delete(all);
}

static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/ng-capture-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char p[PATH_MAX + 16];
	snprintf(p, sizeof p, "%s/gpus.json", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hung_nvml_costs_the_deadline_only),
		cmocka_unit_test(test_answering_nvml_is_kept_whole),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
