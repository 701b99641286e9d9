/* Admission's capture of the failing domain's evidence (flow/evidence.c):
 * each collector runs in a child under a deadline, so an NVML that never
 * returns costs the run that deadline and no more, and the evidence kept
 * says the collector did not finish. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
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

static void plant(const char *rel, const char *text)
{
	char path[PATH_MAX + 256], p[PATH_MAX + 256];
	snprintf(path, sizeof path, "%s/root%s", dir, rel);
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	write_file(path, text);
}

/* Captures this machine's fabric evidence for run into the store at db. */
static void capture_fabric(ng_store *st, const char *run, int64_t now)
{
	char id[256], name[128];
	ng_node_names(id, sizeof id, name, sizeof name);
	const char *domains[] = {"fabric"};
	ng_err err;
	assert_int_equal(ng_evidence_capture(st, &(ng_evidence_capture_in){.node = id, .run_id = run,
	                                                                   .domains = domains,
	                                                                   .n_domains = 1,
	                                                                   .now = now},
	                                     &err),
	                 1);
}

static bool said(char (*lines)[NG_SUMMARY_LINE], size_t n, const char *want)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(lines[i], want) == 0)
			return true;
	for (size_t i = 0; i < n; i++)
		print_message("  said: %s\n", lines[i]);
	return false;
}

/* A port's error counters count since the HCA was reset: the case says
 * how far each moved since the node's earlier read. */
static void test_fabric_counts_since_the_earlier_read(void **state)
{
	(void)state;
	char rootdir[PATH_MAX + 8], db[PATH_MAX + 16];
	snprintf(rootdir, sizeof rootdir, "%s/root", dir);
	snprintf(db, sizeof db, "%s/f.db", dir);
	setenv("NODEGATE_ROOT", rootdir, 1);
	const char *port = "/sys/class/infiniband/mlx5_0/ports/1";
	char p[256];
	snprintf(p, sizeof p, "%s/state", port);
	plant(p, "4: ACTIVE\n");
	snprintf(p, sizeof p, "%s/counters/symbol_error", port);
	plant(p, "5\n");
	snprintf(p, sizeof p, "%s/counters/link_downed", port);
	plant(p, "2\n");
	snprintf(p, sizeof p, "%s/counters/port_rcv_errors", port);
	plant(p, "9\n");
	plant("/sys/class/infiniband/mlx5_1/ports/1/state", "4: ACTIVE\n");
	plant("/sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error", "40\n");
	ng_store *st;
	ng_err err;
	assert_int_equal(ng_store_open(db, &st, &err), 0);
	capture_fabric(st, "run-1", 1764633600); /* 2025-12-02 00:00 UTC */
	/* the first read has nothing to compare with */
	cJSON *first = NULL;
	char id[256], name[128];
	ng_node_names(id, sizeof id, name, sizeof name);
	assert_int_equal(ng_store_evidence_of_run(st, id, "run-1", &first, &err), 0);
	char lines[16][NG_SUMMARY_LINE];
	size_t n = ng_evidence_summary(first, lines, 16);
	assert_true(said(lines, n, "mlx5_0 port 1: symbol_error counter 5 (no earlier read to compare)"));
	cJSON_Delete(first);
	/* three more symbol errors, the link unchanged, the other HCA reset */
	snprintf(p, sizeof p, "%s/counters/symbol_error", port);
	plant(p, "8\n");
	plant("/sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error", "1\n");
	plant("/sys/class/infiniband/mlx5_2/ports/1/state", "4: ACTIVE\n");
	plant("/sys/class/infiniband/mlx5_2/ports/1/counters/symbol_error", "4\n");
	capture_fabric(st, "run-2", 1764637200);
	cJSON *all = NULL;
	assert_int_equal(ng_store_evidence_of_run(st, id, "run-2", &all, &err), 0);
	const cJSON *ev = evidence_of(all, "fabric");
	assert_non_null(ev);
	const cJSON *pr = cJSON_GetObjectItem(ev, "previous_read");
	assert_string_equal(cJSON_GetObjectItem(pr, "run_id")->valuestring, "run-1");
	const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "ib"), "ports"), 0);
	const cJSON *since = cJSON_GetObjectItem(p0, "counters_since_previous");
	assert_int_equal(cJSON_GetObjectItem(since, "symbol_error")->valueint, 3);
	assert_int_equal(cJSON_GetObjectItem(since, "link_downed")->valueint, 0);
	n = ng_evidence_summary(all, lines, 16);
	assert_true(said(lines, n, "mlx5_0 port 1: symbol_error +3 since the read of 2025-12-02 00:00 UTC "
	                           "(run run-1) (now 8)"));
	assert_true(said(lines, n, "mlx5_0 port 1: link_downed counter 2, unchanged since the read of "
	                           "2025-12-02 00:00 UTC (run run-1)"));
	assert_true(said(lines, n, "mlx5_1 port 1: symbol_error counter 1, reset since the read of "
	                           "2025-12-02 00:00 UTC (run run-1)"));
	assert_true(said(lines, n, "mlx5_2 port 1: symbol_error counter 4 (no earlier read to compare)"));
	cJSON_Delete(all);
	/* a capture whose collector did not finish is not what the next one
	 * is measured against */
	assert_int_equal(ng_store_put_evidence(st, id, "run-3", "fabric", 1764640800,
	                                       "{\"domain\":\"fabric\",\"incomplete\":\"x\"}", &err),
	                 0);
	cJSON *prev = NULL;
	assert_int_equal(ng_store_previous_evidence(st, id, "fabric", "run-4", &prev, &err), 0);
	assert_string_equal(cJSON_GetObjectItem(prev, "run_id")->valuestring, "run-2");
	cJSON_Delete(prev);
	ng_store_close(st);
	unsetenv("NODEGATE_ROOT");
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
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
	(void)p;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hung_nvml_costs_the_deadline_only),
		cmocka_unit_test(test_answering_nvml_is_kept_whole),
		cmocka_unit_test(test_fabric_counts_since_the_earlier_read),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
