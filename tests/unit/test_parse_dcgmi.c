/* The dcgmi diag parser against inputs written to fool a naive reader, and
 * against every published capture in the fixtures folder.
 *
 * Each trap test states the exact record fields it expects: diag (which
 * tests, which status, nothing else), outcome, what the reason must say, and
 * the evidence kept in detail. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture_file.h"
#include "launcher_property.h"
#include "parse/parse.h"

/* ------------------------------------------------------------ helpers */

static cJSON *g_arr;

static void release(void)
{
	cJSON_Delete(g_arr);
	g_arr = NULL;
}

/* v at a dotted path: "detail.tests.1.entities.0.status"; numbers index
 * arrays. NULL when absent. */
static const cJSON *at(const cJSON *v, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save)) {
		char *end;
		long i = strtol(tok, &end, 10);
		if (*end == '\0' && cJSON_IsArray(v))
			v = cJSON_GetArrayItem(v, (int)i);
		else
			v = cJSON_GetObjectItemCaseSensitive(v, tok);
	}
	return v;
}

static const char *str_at(const cJSON *r, const char *path)
{
	const cJSON *v = at(r, path);
	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", path);
	return v->valuestring;
}

#define expect_str(r, path, want) assert_string_equal(str_at((r), (path)), (want))
#define expect_num(r, path, want)                                                                  \
	do {                                                                                       \
		const cJSON *n_ = at((r), (path));                                                 \
		if (!cJSON_IsNumber(n_))                                                           \
			fail_msg("%s is not a number", (path));                                   \
		assert_true(n_->valuedouble == (double)(want));                                    \
	} while (0)

static void expect_contains(const cJSON *r, const char *path, const char *needle)
{
	const char *s = str_at(r, path);
	if (!strstr(s, needle))
		fail_msg("%s = \"%s\" does not contain \"%s\"", path, s, needle);
}

static void expect_lacks(const cJSON *r, const char *path, const char *needle)
{
	const char *s = str_at(r, path);
	if (strstr(s, needle))
		fail_msg("%s = \"%s\" contains \"%s\"", path, s, needle);
}

/* diag is exactly "a=pass,b=fail" (any order), or absent when want is NULL. */
static void expect_diag(const cJSON *r, const char *want)
{
	const cJSON *diag = at(r, "diag");
	if (!want) {
		if (diag)
			fail_msg("a diag map where none may be: %s", cJSON_PrintUnformatted(diag));
		return;
	}
	assert_true(cJSON_IsObject(diag));
	char buf[512];
	snprintf(buf, sizeof buf, "%s", want);
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
		char *eq = strchr(tok, '=');
		assert_non_null(eq);
		*eq = '\0';
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(diag, tok);
		if (!cJSON_IsString(v))
			fail_msg("diag.%s is missing", tok);
		if (strcmp(v->valuestring, eq + 1) != 0)
			fail_msg("diag.%s = %s, expected %s", tok, v->valuestring, eq + 1);
	}
	assert_int_equal(cJSON_GetArraySize(diag), n);
}

/* What every record must hold, whatever the input. */
static void expect_shape(const cJSON *r)
{
	expect_str(r, "schema", "nodegate/record/1");
	expect_str(r, "metric", "dcgm.diag");
	expect_str(r, "domain", "health");
	expect_str(r, "tool.name", "dcgmi");
	assert_true(cJSON_IsArray(at(r, "samples")));
	assert_int_equal(cJSON_GetArraySize(at(r, "samples")), 0);
	assert_true(cJSON_IsNull(at(r, "wrong")));
	assert_true(strlen(str_at(r, "reason")) > 20);
	const char *o = str_at(r, "outcome");
	assert_true(!strcmp(o, "node") || !strcmp(o, "harness") || !strcmp(o, "clean"));
	expect_str(r, "detail.outcome", o);
	const cJSON *diag = at(r, "diag");
	if (diag)
		assert_true(cJSON_GetArraySize(diag) > 0);
}

static const cJSON *parse_st(const char *text, ng_run_status st)
{
	release();
	ng_err err = {0};
	g_arr = ng_parse_dcgmi(text, strlen(text), st, &err);
	if (!g_arr)
		fail_msg("parser failed: %s", err.msg);
	assert_launcher_transparent(ng_parse_dcgmi, text, strlen(text), st, "a test input");
	assert_int_equal(cJSON_GetArraySize(g_arr), 1);
	const cJSON *r = cJSON_GetArrayItem(g_arr, 0);
	expect_shape(r);
	return r;
}

static const cJSON *parse_exit(const char *text, int exit_status)
{
	return parse_st(text, (ng_run_status){exit_status, 0});
}

static const cJSON *parse_unknown(const char *text) { return parse_st(text, NG_RUN_STATUS_UNKNOWN); }

/* --------------------------------------------------------------- inputs */

/* DCGM 4.x -j, raw JsonCpp layout (tabs, " : "), two GPUs, all passing. */
static const char JSON4_PASS[] =
	"{\n"
	"\t\"DCGM Diagnostic\" : \n"
	"\t{\n"
	"\t\t\"test_categories\" : \n"
	"\t\t[\n"
	"\t\t\t{\n"
	"\t\t\t\t\"category\" : \"Deployment\",\n"
	"\t\t\t\t\"tests\" : [ { \"name\" : \"software\", \"results\" : [\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_group_id\" : 1, \"entity_id\" : 0, \"status\" : \"Pass\" },\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_group_id\" : 1, \"entity_id\" : 1, \"status\" : \"Pass\" } ],\n"
	"\t\t\t\t\t\"test_summary\" : { \"status\" : \"Pass\" } } ]\n"
	"\t\t\t},\n"
	"\t\t\t{\n"
	"\t\t\t\t\"category\" : \"Integration\",\n"
	"\t\t\t\t\"tests\" : [ { \"name\" : \"pcie\", \"results\" : [\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_id\" : 0, \"status\" : \"Pass\",\n"
	"\t\t\t\t\t  \"info\" : [ \"GPU to Host bandwidth:\\t\\t24.10 GB/s\" ] },\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_id\" : 1, \"status\" : \"Pass\" } ] } ]\n"
	"\t\t\t},\n"
	"\t\t\t{\n"
	"\t\t\t\t\"category\" : \"Hardware\",\n"
	"\t\t\t\t\"tests\" : [ { \"name\" : \"memory\", \"results\" : [\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_id\" : 0, \"status\" : \"Pass\" },\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_id\" : 1, \"status\" : \"Pass\" } ] } ]\n"
	"\t\t\t},\n"
	"\t\t\t{\n"
	"\t\t\t\t\"category\" : \"Stress\",\n"
	"\t\t\t\t\"tests\" : [ { \"name\" : \"nccl_tests\", \"results\" : [\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_id\" : 0, \"status\" : \"Pass\" },\n"
	"\t\t\t\t\t{ \"entity_group\" : \"GPU\", \"entity_id\" : 1, \"status\" : \"Pass\" } ] } ]\n"
	"\t\t\t}\n"
	"\t\t]\n"
	"\t},\n"
	"\t\"entity_groups\" : [ { \"entity_group\" : \"GPU\", \"entity_group_id\" : 1, \"entities\" : [\n"
	"\t\t{ \"entity_id\" : 0, \"device_id\" : \"2330\", \"serial_num\" : \"1654923000001\" },\n"
	"\t\t{ \"entity_id\" : 1, \"device_id\" : \"2330\", \"serial_num\" : \"1654923000002\" } ] } ],\n"
	"\t\"metadata\" : { \"Driver Version Detected\" : \"570.124.06\", \"version\" : \"4.1.1\" }\n"
	"}\n";

/* 4.x: the summary says Pass, one GPU failed memory; pcie ran on one GPU and
 * skipped on the other. */
static const char JSON4_GPU_FAIL[] =
	"{\"DCGM Diagnostic\": {\"test_categories\": [\n"
	" {\"category\": \"Hardware\", \"tests\": [{\"name\": \"memory\", \"results\": [\n"
	"   {\"entity_group\": \"GPU\", \"entity_id\": 0, \"status\": \"Pass\"},\n"
	"   {\"entity_group\": \"GPU\", \"entity_id\": 1, \"status\": \"Fail\", \"warnings\": [\n"
	"     {\"error_category\": 10, \"error_id\": 84, \"error_severity\": 4,\n"
	"      \"warning\": \"Found 2 faulty memory elements on GPU 1\"}]}],\n"
	"   \"test_summary\": {\"status\": \"Pass\"}}]},\n"
	" {\"category\": \"Integration\", \"tests\": [{\"name\": \"pcie\", \"results\": [\n"
	"   {\"entity_group\": \"GPU\", \"entity_id\": 0, \"status\": \"Pass\"},\n"
	"   {\"entity_group\": \"GPU\", \"entity_id\": 1, \"status\": \"Skip\"}]}]}]},\n"
	" \"metadata\": {\"version\": \"4.2.3\"}}\n";

static const char JSON4_WARN[] =
	"{\"DCGM Diagnostic\": {\"test_categories\": [\n"
	" {\"category\": \"Stress\", \"tests\": [{\"name\": \"targeted_power\", \"results\": [\n"
	"   {\"entity_group\": \"GPU\", \"entity_id\": 0, \"status\": \"Warn\", \"warnings\": [\n"
	"     {\"error_category\": 2, \"error_id\": 58, \"error_severity\": 1,\n"
	"      \"warning\": \"Max power of 512.0 did not reach desired power minimum of 630.0 for GPU 0\"}]}]}]}]},\n"
	" \"metadata\": {\"version\": \"4.2.3\"}}\n";

/* 3.x -j: its own top key, Title Case names, string GPU ids, the version
 * at the top, and software checks as separate tests (the warning text of a
 * software check under "warnings", as 3.x prints it). */
static const char JSON3[] =
	"{\n"
	"\t\"DCGM GPU Diagnostic\" : \n"
	"\t{\n"
	"\t\t\"test_categories\" : \n"
	"\t\t[\n"
	"\t\t\t{ \"category\" : \"Deployment\", \"tests\" : [\n"
	"\t\t\t\t{ \"name\" : \"Denylist\", \"results\" : [ { \"status\" : \"Pass\" } ] },\n"
	"\t\t\t\t{ \"name\" : \"Persistence Mode\", \"results\" : [ { \"gpu_id\" : 1, \"status\" : \"Fail\",\n"
	"\t\t\t\t  \"warnings\" : [ { \"warnings\" : \"Persistence mode for GPU 1 is disabled.\",\n"
	"\t\t\t\t    \"error_id\" : 29, \"error_category\" : 8, \"error_severity\" : 5 } ] } ] } ] },\n"
	"\t\t\t{ \"category\" : \"Integration\", \"tests\" : [\n"
	"\t\t\t\t{ \"name\" : \"PCIe\", \"results\" : [ { \"gpu_id\" : \"0\", \"status\" : \"Pass\" },\n"
	"\t\t\t\t  { \"gpu_id\" : \"1\", \"status\" : \"Pass\", \"info\" : \"GPU to Host bandwidth:\\t\\t12.1 GB/s\" } ] } ] },\n"
	"\t\t\t{ \"category\" : \"Hardware\", \"tests\" : [\n"
	"\t\t\t\t{ \"name\" : \"GPU Memory\", \"results\" : [ { \"gpu_id\" : \"0\", \"status\" : \"Pass\" },\n"
	"\t\t\t\t  { \"gpu_id\" : \"1\", \"status\" : \"Pass\" } ] },\n"
	"\t\t\t\t{ \"name\" : \"EUD Test\", \"results\" : [ { \"gpu_id\" : \"0\", \"status\" : \"Skip\" } ] } ] },\n"
	"\t\t\t{ \"category\" : \"Stress\", \"tests\" : [\n"
	"\t\t\t\t{ \"name\" : \"Targeted Stress\", \"results\" : [ { \"gpu_id\" : \"0\", \"status\" : \"Pass\" } ] },\n"
	"\t\t\t\t{ \"name\" : \"Memory Bandwidth\", \"results\" : [ { \"gpu_id\" : \"0\", \"status\" : \"Pass\" } ] },\n"
	"\t\t\t\t{ \"name\" : \"NCCL Tests\", \"results\" : [ { \"gpu_id\" : \"0\", \"status\" : \"Skip\" } ] } ] }\n"
	"\t\t]\n"
	"\t},\n"
	"\t\"version\" : \"3.3.6\",\n"
	"\t\"Driver Version Detected\" : \"550.90.07\",\n"
	"\t\"GPU Device IDs\" : [ \"20b5\", \"20b5\" ]\n"
	"}\n";

/* The three shapes of nccl_tests the runbook keeps apart. */
#define MINI(tests) "{\"DCGM Diagnostic\": {\"test_categories\": [{\"category\": \"Stress\", \"tests\": [" tests "]}]}}"
#define T(name, st) "{\"name\": \"" name "\", \"results\": [{\"entity_group\": \"GPU\", \"entity_id\": 0, \"status\": \"" st "\"}]}"

/* 3.x text: per-GPU lists, a warning whose 45-character row boundary falls
 * on a space (lost to the padding), a mid-word wrap, and a Code row. */
static const char TEXT3[] =
	"Successfully ran diagnostic for group.\n"
	"+---------------------------+------------------------------------------------+\n"
	"| Diagnostic                | Result                                         |\n"
	"+===========================+================================================+\n"
	"|-----  Metadata  ----------+------------------------------------------------|\n"
	"| DCGM Version              | 3.3.5                                          |\n"
	"| Driver Version Detected   | 535.129.03                                     |\n"
	"| GPU Device IDs Detected   | 2330,2330,2330,2330                            |\n"
	"|-----  Deployment  --------+------------------------------------------------|\n"
	"| Denylist                  | Pass                                           |\n"
	"| Persistence Mode          | Pass                                           |\n"
	"+-----  Integration  -------+------------------------------------------------+\n"
	"| PCIe                      | Skip - All                                     |\n"
	"+-----  Hardware  ----------+------------------------------------------------+\n"
	"| GPU Memory                | Pass - GPUs: 0, 1, 2                           |\n"
	"|                           | Fail - GPU: 3                                  |\n"
	"| Warning                   | A memory mismatch was detected on GPU 3, but   |\n"
	"|                           | no error was reported by CUDA or NVML.         |\n"
	"+-----  Stress  ------------+------------------------------------------------+\n"
	"| Targeted Stress           | Warn - All                                     |\n"
	"| Warning                   | Max stress level of 12.5 did not reach desire  |\n"
	"|                           | d stress level of 5000.0 for GPU 0             |\n"
	"|                           |   Code: (000000000012)                         |\n"
	"+---------------------------+------------------------------------------------+\n";

/* 4.x text: entity rows, a warning continued by a row that starts with a
 * space, a message exactly 45 characters long followed by entity rows, and
 * an entity that did not run ("GPU1: "). */
static const char TEXT4[] =
	"Successfully ran diagnostic for group.\n"
	"+---------------------------+------------------------------------------------+\n"
	"| Diagnostic                | Result                                         |\n"
	"+===========================+================================================+\n"
	"|-----  Metadata  ----------+------------------------------------------------|\n"
	"| DCGM Version              | 4.1.1                                          |\n"
	"| Driver Version Detected   | 570.124.06                                     |\n"
	"| GPU Device IDs Detected   | 2330, 2330                                     |\n"
	"|-----  Deployment  --------+------------------------------------------------|\n"
	"| software                  | Pass                                           |\n"
	"|                           | GPU0: Pass                                     |\n"
	"|                           | GPU1: Pass                                     |\n"
	"+-----  Hardware  ----------+------------------------------------------------+\n"
	"| memory                    | Fail                                           |\n"
	"|                           | GPU0: Pass                                     |\n"
	"|                           | GPU1: Fail                                     |\n"
	"| Warning: GPU1             | GPU 1 had uncorrectable memory errors and row  |\n"
	"|                           |  remapping failed.                             |\n"
	"| Info: GPU1                | Allocated 76312379392 bytes (89.0%)            |\n"
	"+-----  Integration  -------+------------------------------------------------+\n"
	"| pcie                      | Warn                                           |\n"
	"| Warning                   | Only 16 NvLinks are up out of the expected 18  |\n"
	"|                           | GPU0: Pass                                     |\n"
	"|                           | GPU1: Fail                                     |\n"
	"+-----  Stress  ------------+------------------------------------------------+\n"
	"| targeted_power            | Skip                                           |\n"
	"|                           | GPU0: Skip                                     |\n"
	"|                           | GPU1:                                          |\n"
	"+---------------------------+------------------------------------------------+\n";

#define HEAD                                                                                       \
	"+---------------------------+------------------------------------------------+\n"          \
	"| Diagnostic                | Result                                         |\n"          \
	"+===========================+================================================+\n"          \
	"|-----  Metadata  ----------+------------------------------------------------|\n"          \
	"| DCGM Version              | 4.4.2                                          |\n"
#define FOOT "+---------------------------+------------------------------------------------+\n"
#define ROW(name, cell) "| " name " | " cell " |\n"

/* -------------------------------------------------------------- JSON */

static void json4_all_pass_with_exit_0_is_clean(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(JSON4_PASS, 0);
	expect_diag(r, "software=pass,pcie=pass,memory=pass,nccl_tests=pass");
	expect_str(r, "outcome", "clean");
	expect_str(r, "tool.version", "4.1.1");
	expect_str(r, "detail.dcgm_version", "4.1.1");
	expect_str(r, "detail.driver_version", "570.124.06");
	expect_str(r, "detail.format", "json");
	expect_str(r, "detail.json_key", "DCGM Diagnostic");
	expect_num(r, "detail.gpus.0", 0);
	expect_num(r, "detail.gpus.1", 1);
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.gpus")), 2);
	expect_str(r, "detail.device_ids.1", "2330");
	expect_str(r, "detail.entity_groups.0.entities.1.serial_num", "1654923000002");
	/* a TAB inside a JSON string is kept as a TAB */
	expect_str(r, "detail.tests.1.entities.0.info.0", "GPU to Host bandwidth:\t\t24.10 GB/s");
	expect_num(r, "detail.exit_status", 0);
	expect_str(r, "detail.outcome_basis", "results");
	expect_contains(r, "reason", "no DCGM test failed");
	expect_lacks(r, "reason", "exit status unknown");
	release();
}

static void json_test_takes_the_worst_gpu(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(JSON4_GPU_FAIL, 226);
	/* the summary's Pass does not hide GPU1's Fail; pcie skipped on GPU1 is
	 * not a pass */
	expect_diag(r, "memory=fail,pcie=skip");
	expect_str(r, "outcome", "node");
	expect_str(r, "detail.tests.0.entities.0.status", "pass");
	expect_str(r, "detail.tests.0.entities.1.entity", "GPU1");
	expect_str(r, "detail.tests.0.entities.1.status", "fail");
	expect_str(r, "detail.tests.0.entities.1.warnings.0.text", "Found 2 faulty memory elements on GPU 1");
	expect_num(r, "detail.tests.0.entities.1.warnings.0.error_id", 84);
	expect_str(r, "detail.tests.0.entities.1.warnings.0.category_name", "HARDWARE_MEMORY");
	expect_str(r, "detail.tests.0.entities.1.warnings.0.severity_name", "TRIAGE");
	expect_str(r, "detail.tests.1.entities.1.dcgm_status", "Skip");
	expect_contains(r, "reason", "dcgmi exited 226");
	expect_contains(r, "reason", "memory (Found 2 faulty memory elements on GPU 1)");
	expect_lacks(r, "reason", "CONFIG");
	release();
}

static void json_warn_is_a_failure_with_its_text(void **state)
{
	(void)state;
	const cJSON *r = parse_unknown(JSON4_WARN);
	expect_diag(r, "targeted_power=fail");
	expect_str(r, "outcome", "node");
	expect_str(r, "detail.tests.0.entities.0.dcgm_status", "Warn");
	expect_str(r, "detail.tests.0.entities.0.warnings.0.text",
	           "Max power of 512.0 did not reach desired power minimum of 630.0 for GPU 0");
	expect_contains(r, "reason", "Max power of 512.0");
	expect_contains(r, "reason", "exit status unknown");
	expect_str(r, "detail.outcome_basis", "results");
	assert_null(at(r, "detail.exit_status"));
	release();
}

static void json3_title_case_names_map_to_policy_names(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(JSON3, 226);
	expect_diag(r, "software=fail,pcie=pass,memory=pass,eud=skip,targeted_stress=pass,"
	               "memory_bandwidth=pass,nccl_tests=skip");
	expect_str(r, "outcome", "node");
	expect_str(r, "detail.json_key", "DCGM GPU Diagnostic");
	expect_str(r, "tool.version", "3.3.6");
	expect_str(r, "detail.driver_version", "550.90.07");
	expect_str(r, "detail.device_ids.0", "20b5");
	expect_str(r, "detail.tests.1.display_name", "Persistence Mode");
	expect_str(r, "detail.tests.1.name", "software");
	expect_str(r, "detail.tests.1.category", "Deployment");
	expect_str(r, "detail.tests.1.entities.0.entity", "GPU1");
	expect_str(r, "detail.tests.1.entities.0.warnings.0.text", "Persistence mode for GPU 1 is disabled.");
	expect_str(r, "detail.tests.1.entities.0.warnings.0.severity_name", "CONFIG");
	expect_str(r, "detail.tests.2.entities.1.info.0", "GPU to Host bandwidth:\t\t12.1 GB/s");
	expect_str(r, "detail.tests.3.display_name", "GPU Memory");
	expect_str(r, "detail.tests.3.name", "memory");
	expect_contains(r, "reason", "software (Persistence Mode: Persistence mode for GPU 1 is disabled.)");
	expect_contains(r, "reason", "severity CONFIG");
	expect_num(r, "detail.gpus.0", 0);
	expect_num(r, "detail.gpus.1", 1);
	release();
}

/* Absent, skipped and failed are three different things. */
static void absent_skipped_and_failed_stay_apart(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(MINI(T("pcie", "Pass") "," T("memory", "Pass")), 0);
	expect_diag(r, "pcie=pass,memory=pass");
	assert_null(at(r, "diag.nccl_tests"));
	expect_str(r, "outcome", "clean");

	r = parse_exit(MINI(T("pcie", "Pass") "," T("memory", "Pass") "," T("nccl_tests", "Skip")), 0);
	expect_diag(r, "pcie=pass,memory=pass,nccl_tests=skip");
	expect_str(r, "outcome", "clean");
	expect_contains(r, "reason", "skipped: nccl_tests");

	r = parse_exit(MINI(T("pcie", "Pass") "," T("memory", "Pass") "," T("nccl_tests", "Fail")), 226);
	expect_diag(r, "pcie=pass,memory=pass,nccl_tests=fail");
	expect_str(r, "outcome", "node");
	release();
}

/* Two statuses for one test: the later Pass does not erase the Fail. */
static void a_later_pass_does_not_erase_a_failure(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(MINI("{\"name\": \"memory\", \"status\": \"Fail\", \"results\": ["
	                                 "{\"entity_id\": 0, \"status\": \"Pass\"}], "
	                                 "\"test_summary\": {\"status\": \"Pass\"}}"),
	                            226);
	expect_diag(r, "memory=fail");
	expect_str(r, "detail.tests.0.dcgm_status", "Fail");
	release();
}

static void json_is_found_among_noise(void **state)
{
	(void)state;
	const char *in = "WARNING: nv-hostengine {pid 4242} is old\n"
	                 "{\"log\": \"starting diag\"}\n"
	                 "   " MINI(T("pcie", "Pass")) "   \n"
	                 "WARNING: done\n";
	const cJSON *r = parse_exit(in, 0);
	expect_diag(r, "pcie=pass");
	expect_str(r, "outcome", "clean");
	expect_str(r, "detail.messages.0", "WARNING: nv-hostengine {pid 4242} is old");
	expect_str(r, "detail.messages.1", "{\"log\": \"starting diag\"}");
	expect_str(r, "detail.messages.2", "WARNING: done");
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.messages")), 3);
	release();
}

static void truncated_json_is_harness_without_diag(void **state)
{
	(void)state;
	char cut[sizeof JSON4_PASS];
	memcpy(cut, JSON4_PASS, sizeof JSON4_PASS);
	cut[strlen(cut) * 2 / 3] = '\0'; /* every test that was printed passed */
	const cJSON *r = parse_exit(cut, 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_str(r, "detail.format", "json");
	assert_true(cJSON_IsFalse(at(r, "detail.complete")));
	expect_contains(r, "reason", "truncated");
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.tests")), 0);

	r = parse_unknown(cut);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "exit status unknown");

	/* DCGM's isolate request stands even when its output is cut */
	r = parse_exit(cut, 205);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "node");
	expect_contains(r, "reason", "205");
	expect_contains(r, "reason", "truncated");
	release();
}

/* --iterations output cut during the second run: the first run's object is
 * complete on its own lines, but the capture is not. */
static void truncated_iterations_are_harness(void **state)
{
	(void)state;
	const char *in = "{\n\t\"iterations\" : \n\t[\n\t\t"
	                 MINI(T("pcie", "Pass") "," T("memory", "Pass")) ",\n\t\t"
	                 "{\"DCGM Diagnostic\": {\"test_categories\": [{\"category\": \"Hardware\", \"tests\": [";
	const cJSON *r = parse_exit(in, 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "truncated");
	release();
}

/* A stray brace line before a text table does not hide the table. */
static void stray_brace_before_a_table(void **state)
{
	(void)state;
	const cJSON *r = parse_exit("{ starting dcgmi\n" HEAD
	                            "+-----  Hardware  ----------+------------------------------------------------+\n"
	                            ROW("memory                   ", "Pass                                          ") FOOT,
	                            0);
	expect_diag(r, "memory=pass");
	expect_str(r, "detail.format", "text");
	expect_str(r, "detail.messages.0", "{ starting dcgmi");
	release();
}

static void invalid_json_is_harness(void **state)
{
	(void)state;
	const cJSON *r = parse_exit("{\"DCGM Diagnostic\": {\"test_categories\": [{\"category\": \"Stress\" "
	                            "\"tests\": []}]}}\n",
	                            0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "the dcgmi diag JSON is invalid");
	release();
}

static void runtime_error_is_harness(void **state)
{
	(void)state;
	const char *in = "{\n\t\"DCGM Diagnostic\" : \n\t{\n\t\t\"runtime_error\" : \"Error: Unable to complete "
	                 "diagnostic for group 0. Return: (-29) : The NVVS binary was not found\",\n"
	                 "\t\t\"version\" : \"4.2.3\"\n\t}\n}\n";
	const cJSON *r = parse_exit(in, 204);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_str(r, "tool.version", "4.2.3");
	expect_contains(r, "detail.runtime_errors.0", "The NVVS binary was not found");
	expect_contains(r, "reason", "204");

	r = parse_unknown(in);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "runtime error");
	release();
}

/* ---------------------------------------------------------- exit status */

static void exit_status_and_results_combine(void **state)
{
	(void)state;
	const char *pass = MINI(T("pcie", "Pass") "," T("memory", "Pass"));
	const char *fail = MINI(T("pcie", "Pass") "," T("memory", "Fail"));
	static const struct {
		const char *which;
		int exit_status, signal;
		const char *outcome, *reason, *diag;
	} cases[] = {
		{"pass", 0, 0, "clean", "no DCGM test failed", "pcie=pass,memory=pass"},
		{"pass", -1, 0, "clean", "exit status unknown", "pcie=pass,memory=pass"},
		{"fail", -1, 0, "node", "exit status unknown", "pcie=pass,memory=fail"},
		{"fail", 0, 0, "node", "although dcgmi exited 0", "pcie=pass,memory=fail"},
		{"fail", 226, 0, "node", "dcgmi exited 226 and DCGM reported failing tests: memory", "pcie=pass,memory=fail"},
		{"fail", 205, 0, "node", "requires isolating", "pcie=pass,memory=fail"},
		/* 226 with nothing failing is DCGM's harness fault, and 205 with
		 * nothing failing must not hand the gate a diag of passes */
		{"pass", 226, 0, "harness", "no test failed", NULL},
		{"pass", 205, 0, "node", "requires isolating", NULL},
		{"pass", 217, 0, "harness", "already running", NULL},
		{"pass", 204, 0, "harness", "NVVS binary was not found", NULL},
		{"pass", 203, 0, "harness", "NVVS process was killed", NULL},
		{"pass", 143, 0, "harness", "128+15", NULL},
		{"pass", -1, 9, "harness", "killed by signal 9", NULL},
		{"fail", 255, 0, "harness", "dcgmi exited 255", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const cJSON *r = parse_st(strcmp(cases[i].which, "pass") ? fail : pass,
		                          (ng_run_status){cases[i].exit_status, cases[i].signal});
		print_message("case %zu: exit %d signal %d\n", i, cases[i].exit_status, cases[i].signal);
		expect_str(r, "outcome", cases[i].outcome);
		expect_contains(r, "reason", cases[i].reason);
		expect_diag(r, cases[i].diag);
		if (!cases[i].diag)
			assert_non_null(at(r, "detail.diag_withheld"));
		/* the parsed results are kept for people either way */
		assert_int_equal(cJSON_GetArraySize(at(r, "detail.tests")), 2);
	}
	release();
}

static void unreadable_output_is_harness_without_diag(void **state)
{
	(void)state;
	const cJSON *r = parse_exit("Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n", 255);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_str(r, "detail.format", "none");
	expect_contains(r, "reason", "Unable to connect to host engine");

	r = parse_exit("", 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "dcgmi printed nothing");

	r = parse_unknown("\n  \n\t\n");
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");

	/* a well-formed JSON document that is not dcgmi's */
	r = parse_exit("{\"result\": \"Pass\"}\n", 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "neither");

	/* a DCGM JSON with no tests at all */
	r = parse_exit("{\"DCGM Diagnostic\": {\"test_categories\": []}}", 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "lists no test results");
	release();
}

static void isolate_severity_without_exit_status_is_node(void **state)
{
	(void)state;
	const char *in = MINI("{\"name\": \"memory\", \"results\": [{\"entity_group\": \"GPU\", \"entity_id\": 2, "
	                      "\"status\": \"Fail\", \"warnings\": [{\"warning\": \"GPU 2 had uncorrectable "
	                      "memory errors and row remapping failed.\", \"error_id\": 75, "
	                      "\"error_category\": 10, \"error_severity\": 2}]}]}");
	const cJSON *r = parse_unknown(in);
	expect_diag(r, "memory=fail");
	expect_str(r, "outcome", "node");
	expect_contains(r, "reason", "drain it (DCGM rates a failure ISOLATE)");
	expect_str(r, "detail.tests.0.entities.0.warnings.0.severity_name", "ISOLATE");
	expect_num(r, "detail.gpus.0", 2);
	release();
}

static void json_iterations_take_the_worst_run(void **state)
{
	(void)state;
	const char *in = "{\"iterations\": [" MINI(T("pcie", "Pass") "," T("memory", "Pass")) ", "
	                 MINI(T("pcie", "Pass") "," T("memory", "Fail")) "], \"Overall Result\": \"Fail\", "
	                 "\"warning\": \"The diagnostic ran but reported an error\"}";
	const cJSON *r = parse_exit(in, 226);
	expect_diag(r, "pcie=pass,memory=fail");
	expect_str(r, "outcome", "node");
	expect_num(r, "detail.iterations", 2);
	expect_str(r, "detail.overall_result", "Fail");
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.tests")), 4);
	release();
}

/* ----------------------------------------------------------------- text */

static void text3_lists_and_wrapped_warnings(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(TEXT3, 226);
	expect_diag(r, "software=pass,pcie=skip,memory=fail,targeted_stress=fail");
	expect_str(r, "outcome", "node");
	expect_str(r, "detail.format", "text");
	expect_str(r, "tool.version", "3.3.5");
	expect_str(r, "detail.driver_version", "535.129.03");
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.device_ids")), 4);
	expect_str(r, "detail.device_ids.3", "2330");
	expect_str(r, "detail.messages.0", "Successfully ran diagnostic for group.");
	/* GPU Memory: "Pass - GPUs: 0, 1, 2" then "Fail - GPU: 3" */
	const cJSON *mem = at(r, "detail.tests.3");
	expect_str(mem, "display_name", "GPU Memory");
	expect_str(mem, "name", "memory");
	expect_str(mem, "category", "Hardware");
	expect_str(mem, "entities.0.entity", "GPU0");
	expect_str(mem, "entities.2.status", "pass");
	expect_str(mem, "entities.3.entity", "GPU3");
	expect_str(mem, "entities.3.status", "fail");
	/* the row boundary fell on a space: a naive join reads "butno" */
	expect_str(mem, "warnings.0.text",
	           "A memory mismatch was detected on GPU 3, but no error was reported by CUDA or NVML.");
	expect_num(r, "detail.gpus.3", 3);
	/* Warn - All, a mid-word wrap, and the Code row kept apart */
	const cJSON *ts = at(r, "detail.tests.4");
	expect_str(ts, "dcgm_status", "Warn - All");
	expect_str(ts, "warnings.0.text",
	           "Max stress level of 12.5 did not reach desired stress level of 5000.0 for GPU 0");
	expect_str(ts, "info.0", "Code: (000000000012)");
	expect_contains(r, "reason", "memory (GPU Memory: A memory mismatch");
	release();
}

static void text4_entities_and_wrapped_warnings(void **state)
{
	(void)state;
	const cJSON *r = parse_exit(TEXT4, 226);
	expect_diag(r, "software=pass,memory=fail,pcie=fail,targeted_power=skip");
	expect_str(r, "outcome", "node");
	expect_str(r, "tool.version", "4.1.1");
	expect_str(r, "detail.device_ids.1", "2330");
	const cJSON *mem = at(r, "detail.tests.1");
	expect_str(mem, "entities.1.entity", "GPU1");
	expect_str(mem, "entities.1.status", "fail");
	/* the second row starts with the space that separates the words */
	expect_str(mem, "entities.1.warnings.0.text", "GPU 1 had uncorrectable memory errors and row remapping failed.");
	expect_str(mem, "entities.1.info.0", "Allocated 76312379392 bytes (89.0%)");
	assert_null(at(mem, "warnings"));
	/* a 45-character warning followed by entity rows: the rows are results */
	const cJSON *pcie = at(r, "detail.tests.2");
	expect_str(pcie, "dcgm_status", "Warn");
	expect_str(pcie, "warnings.0.text", "Only 16 NvLinks are up out of the expected 18");
	expect_str(pcie, "entities.0.status", "pass");
	expect_str(pcie, "entities.1.status", "fail");
	/* "GPU1: " is a result that did not run */
	const cJSON *tp = at(r, "detail.tests.3");
	expect_str(tp, "entities.1.status", "skip");
	expect_str(tp, "entities.1.dcgm_status", "");
	expect_num(r, "detail.gpus.1", 1);
	assert_int_equal(cJSON_GetArraySize(at(r, "detail.gpus")), 2);
	release();
}

static void text_not_run_is_skip_and_a_failed_check_fails_software(void **state)
{
	(void)state;
	const char *in = HEAD
		"|-----  Deployment  --------+------------------------------------------------|\n"
		ROW("Denylist                 ", "Pass                                          ")
		ROW("Fabric Manager           ", "Pass                                          ")
		ROW("Persistence Mode         ", "Fail                                          ")
		ROW("Error                    ", "Persistence mode for GPU 0 is disabled.       ")
		"+-----  Stress  ------------+------------------------------------------------+\n"
		ROW("targeted_stress          ", "Not Run                                       ")
		ROW("memtest                  ", "Pass                                          ")
		FOOT;
	const cJSON *r = parse_unknown(in);
	expect_diag(r, "software=fail,targeted_stress=skip,memtest=pass");
	expect_str(r, "outcome", "node");
	/* a software check no table lists is still a software check */
	expect_str(r, "detail.tests.1.display_name", "Fabric Manager");
	expect_str(r, "detail.tests.1.name", "software");
	expect_str(r, "detail.tests.2.warnings.0.text", "Persistence mode for GPU 0 is disabled.");
	expect_str(r, "detail.tests.3.dcgm_status", "Not Run");
	release();
}

static void truncated_table_is_harness_without_diag(void **state)
{
	(void)state;
	const char *in = HEAD
		"+-----  Hardware  ----------+------------------------------------------------+\n"
		ROW("memory                   ", "Pass                                          ")
		ROW("                         ", "GPU0: Pass                                    ");
	const cJSON *r = parse_exit(in, 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "closing border");
	/* what was read is kept for people */
	expect_str(r, "detail.tests.0.status", "pass");
	release();
}

static void unknown_status_is_skip_and_harness(void **state)
{
	(void)state;
	const char *in = HEAD
		"+-----  Hardware  ----------+------------------------------------------------+\n"
		ROW("memory                   ", "Pass                                          ")
		ROW("pcie                     ", "Passed?                                       ")
		FOOT;
	const cJSON *r = parse_exit(in, 0);
	expect_diag(r, "memory=pass,pcie=skip");
	expect_str(r, "outcome", "harness");
	expect_contains(r, "detail.problems.0", "\"Passed?\" is not one DCGM prints");
	expect_contains(r, "reason", "could not be read");
	release();
}

static void table_without_tests_is_harness(void **state)
{
	(void)state;
	const cJSON *r = parse_exit("Successfully ran diagnostic for group.\n" HEAD FOOT, 0);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "lists no test results");
	expect_str(r, "tool.version", "4.4.2");
	release();
}

static void run_level_from_an_echoed_command(void **state)
{
	(void)state;
	const char *in = "ubuntu@gpu-17:~$ sudo dcgmi diag -r long -j\n" MINI(T("pcie", "Pass"));
	const cJSON *r = parse_exit(in, 0);
	expect_str(r, "detail.run", "long");
	expect_num(r, "detail.run_level", 3);
	r = parse_exit("$ dcgmi diag --run=2\n" HEAD
	               "+-----  Hardware  ----------+------------------------------------------------+\n"
	               ROW("memory                   ", "Pass                                          ") FOOT,
	               0);
	expect_str(r, "detail.run", "2");
	expect_num(r, "detail.run_level", 2);
	expect_diag(r, "memory=pass");
	release();
}

static void nul_bytes_and_bad_utf8_stay_valid_json(void **state)
{
	(void)state;
	static const char in[] = "noise \xff\xfe line\n"
	                         "{\"DCGM Diagnostic\": {\"test_categories\": [{\"category\": \"Hardware\", \"tests\": "
	                         "[{\"name\": \"memory\", \"results\": [{\"entity_id\": 0, \"status\": \"Fail\", "
	                         "\"warnings\": [{\"warning\": \"bad \xc3\x28 byte\"}]}]}]}]}}\n"
	                         "tail\0with a NUL\n";
	release();
	ng_err err;
	g_arr = ng_parse_dcgmi(in, sizeof in - 1, (ng_run_status){226, 0}, &err);
	assert_non_null(g_arr);
	const cJSON *r = cJSON_GetArrayItem(g_arr, 0);
	expect_shape(r);
	expect_diag(r, "memory=fail");
	expect_str(r, "detail.messages.0", "noise ?? line");
	expect_str(r, "detail.tests.0.entities.0.warnings.0.text", "bad ?( byte");
	expect_str(r, "detail.messages.1", "tail?with a NUL");
	release();
}

/* ------------------------------------------------------------- fixtures */

#ifndef NODEGATE_FIXTURES
#define NODEGATE_FIXTURES "/nonexistent"
#endif


/* Figures read off each file by hand. */
static void check_fixture(const char *name, const cJSON *r)
{
	if (!strcmp(name, "dcgm3.3.3_diag_r2_text_a100x8_p4de_passall.txt")) {
		expect_str(r, "detail.format", "text");
		expect_str(r, "tool.version", "3.3.3");
		expect_str(r, "detail.driver_version", "535.104.12");
		assert_int_equal(cJSON_GetArraySize(at(r, "detail.device_ids")), 8);
		expect_str(r, "detail.device_ids.7", "20b2");
		expect_diag(r, "software=pass,pcie=pass,memory=pass");
		assert_int_equal(cJSON_GetArraySize(at(r, "detail.tests")), 11);
		expect_str(r, "detail.tests.6.display_name", "Page Retirement/Row Remap");
		expect_str(r, "detail.tests.9.dcgm_status", "Pass - All");
		expect_str(r, "outcome", "clean");
	} else if (!strcmp(name, "dcgm3.3_diag_r3_json_t400_skips_TRUNCATED.json.txt")) {
		expect_str(r, "detail.format", "json");
		expect_diag(r, NULL);
		expect_str(r, "outcome", "harness");
		expect_contains(r, "reason", "truncated");
	} else if (!strcmp(name, "dcgm4.2.3_diag_r1_json_gb10_reformatted.json")) {
		expect_str(r, "tool.version", "4.2.3");
		expect_str(r, "detail.driver_version", "580.82.09");
		expect_diag(r, "software=fail");
		expect_num(r, "detail.tests.0.entities.0.warnings.0.error_id", 29);
		expect_str(r, "detail.tests.0.entities.0.warnings.0.severity_name", "CONFIG");
		expect_contains(r, "detail.tests.0.info.0", "SRAM Threshold checking was skipped.");
		expect_str(r, "detail.entity_groups.0.entities.0.serial_num", "<<<NOT_SUPPORTED>>>");
		expect_str(r, "outcome", "node");
		expect_contains(r, "reason", "severity CONFIG");
	} else if (!strcmp(name, "dcgm4.2.3_diag_r2_json_gb10_reformatted_partial_skip.json")) {
		expect_str(r, "tool.version", "4.2.3");
		expect_diag(r, "software=fail,memory=skip,pcie=skip");
		expect_str(r, "detail.tests.1.category", "Hardware");
		expect_str(r, "outcome", "node");
	} else if (!strcmp(name, "dcgm4.4.2_diag_r2_text_single_gpu_pass.txt")) {
		expect_str(r, "detail.format", "text");
		expect_str(r, "tool.version", "4.4.2");
		expect_str(r, "detail.driver_version", "580.105.08");
		expect_str(r, "detail.device_ids.0", "2237");
		expect_diag(r, "software=pass,memory=pass,pcie=pass");
		expect_num(r, "detail.gpus.0", 0);
		expect_str(r, "outcome", "clean");
	} else if (!strcmp(name, "dcgm4.4.2_diag_r3_text_gb10_all_skip.txt")) {
		expect_str(r, "tool.version", "4.4.2");
		expect_str(r, "detail.driver_version", "580.95.05");
		expect_diag(r, "software=pass,memory=skip,diagnostic=skip,nvbandwidth=skip,pcie=skip,"
		               "memory_bandwidth=skip,targeted_stress=skip,targeted_power=skip");
		expect_str(r, "outcome", "clean");
		expect_contains(r, "reason", "a skip is not a pass");
	} else if (!strcmp(name, "dcgm4.5.2_diag_r2_json_gb10_raw_tabs.json")) {
		expect_str(r, "tool.version", "4.5.2");
		expect_str(r, "detail.driver_version", "580.82.09");
		expect_diag(r, "software=fail,memory=pass,pcie=pass");
		expect_str(r, "detail.tests.1.entities.0.info.0", "Allocated 112427837082 bytes (87.5%)");
		expect_str(r, "detail.tests.2.entities.0.info.0", "GPU to Host bandwidth:\t\t58.62 GB/s");
		/* test_summary repeats the entity's warning: kept once */
		assert_int_equal(cJSON_GetArraySize(at(r, "detail.tests.0.entities.0.warnings")), 1);
		assert_null(at(r, "detail.tests.0.warnings"));
		expect_str(r, "outcome", "node");
	} else {
		print_message("no hand-read figures for fixture %s: checked for shape only\n", name);
	}
}

static void published_fixtures(void **state)
{
	(void)state;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/dcgmi", NODEGATE_FIXTURES);
	DIR *d = opendir(dir);
	if (!d) {
		print_message("the fixtures folder %s is absent: skipping the published captures\n", dir);
		skip();
	}
	int checked = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		const char *n = e->d_name;
		if (n[0] == '.' || strstr(n, ".source.txt"))
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, n);
		size_t len = 0;
		char *buf = slurp(path, &len);
		assert_non_null(buf);
		release();
		ng_err err;
		g_arr = ng_parse_dcgmi(buf, len, NG_RUN_STATUS_UNKNOWN, &err);
		assert_launcher_transparent(ng_parse_dcgmi, buf, len, NG_RUN_STATUS_UNKNOWN, n);
		free(buf);
		assert_non_null(g_arr);
		const cJSON *r = cJSON_GetArrayItem(g_arr, 0);
		print_message("fixture %s: outcome %s\n", n, str_at(r, "outcome"));
		expect_shape(r);
		check_fixture(n, r);
		checked++;
	}
	closedir(d);
	release();
	assert_true(checked >= 7);
}

/* ------------------------------------------------ DCGM's own faults */

/* A 4.x table from {name, cell} rows, padded as dcgmi pads them; closed
 * unless cut. */
static char *table4(const char *const rows[][2], size_t n, bool cut)
{
	size_t cap = 4096 + n * 96, len = 0;
	char *b = malloc(cap);
	assert_non_null(b);
	len += (size_t)snprintf(b + len, cap - len, "%s", HEAD);
	for (size_t i = 0; i < n; i++) {
		if (strlen(rows[i][0]) > 40) /* a border or section rule */
			len += (size_t)snprintf(b + len, cap - len, "%s\n", rows[i][0]);
		else
			len += (size_t)snprintf(b + len, cap - len, "| %-25s | %-46s |\n", rows[i][0], rows[i][1]);
	}
	if (!cut)
		snprintf(b + len, cap - len, "%s", FOOT);
	return b;
}

#define SECTION_HW "+-----  Hardware  ----------+------------------------------------------------+"
#define SECTION_INT "+-----  Integration  -------+------------------------------------------------+"
#define SECTION_DEP "|-----  Deployment  --------+------------------------------------------------|"

static const char *const internal_error_rows[][2] = {
    {SECTION_HW, ""},
    {"memory", "Fail"},
    {"", "GPU0: Fail"},
    {"Warning: GPU0", "There was an internal error during the test:"},
    {"", " 'A child process (pid 8812) exited with non-ze"},
    {"", "ro status 1'"},
    {SECTION_INT, ""},
    {"pcie", "Pass"},
    {"", "GPU0: Pass"},
};

/* DCGM's internal error is no verdict on the GPU: not completed, kept with
 * its words, and the harness is told. */
static void internal_error_is_not_completed(void **state)
{
	(void)state;
	char *in = table4(internal_error_rows, sizeof internal_error_rows / sizeof internal_error_rows[0], false);
	const cJSON *r = parse_unknown(in);
	expect_diag(r, "memory=skip,pcie=pass");
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "DCGM's own harness failed in memory");
	expect_contains(r, "reason", "There was an internal error during the test");
	expect_contains(r, "reason", "not completed");
	expect_lacks(r, "reason", "route the node to its owner");
	expect_str(r, "detail.tests.0.name", "memory");
	expect_str(r, "detail.tests.0.dcgm_status", "Fail");
	expect_str(r, "detail.tests.0.entities.0.dcgm_status", "Fail");
	expect_str(r, "detail.tests.0.entities.0.status", "skip");
	expect_str(r, "detail.tests.0.entities.0.cause", "harness");
	expect_contains(r, "detail.tests.0.entities.0.harness_fault", "exited with non-zero status 1");

	/* dcgmi's 226 for it: the results explain the status, so the diag stands. */
	r = parse_exit(in, 226);
	expect_diag(r, "memory=skip,pcie=pass");
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "dcgmi exited 226: DCGM's own harness failed in memory");
	free(in);
}

/* The same in 4.x JSON: a child process that exited, DCGM's words kept. */
static void json_internal_error_is_not_completed(void **state)
{
	(void)state;
	static const char in[] =
	    "{\"DCGM Diagnostic\": {\"test_categories\": [\n"
	    " {\"category\": \"Stress\", \"tests\": [{\"name\": \"targeted_stress\", \"results\": [\n"
	    "   {\"entity_group\": \"GPU\", \"entity_id\": 0, \"status\": \"Fail\", \"warnings\": [\n"
	    "     {\"error_category\": 16, \"error_id\": 95, \"error_severity\": 1,\n"
	    "      \"warning\": \"A child process (pid 4242) exited with non-zero status 134.\"}]},\n"
	    "   {\"entity_group\": \"GPU\", \"entity_id\": 1, \"status\": \"Pass\"}],\n"
	    "   \"test_summary\": {\"status\": \"Fail\"}}]}]},\n"
	    " \"metadata\": {\"version\": \"4.2.3\"}}\n";
	const cJSON *r = parse_exit(in, 226);
	expect_diag(r, "targeted_stress=skip");
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "DCGM's own harness failed in targeted_stress");
	expect_contains(r, "reason", "exited with non-zero status 134");
	expect_str(r, "detail.tests.0.entities.0.dcgm_status", "Fail");
	expect_str(r, "detail.tests.0.entities.0.cause", "harness");
}

/* The GPU's own failure beside DCGM's: the node's failure decides. */
static void internal_error_beside_a_real_failure(void **state)
{
	(void)state;
	static const char *const rows[][2] = {
	    {SECTION_HW, ""},
	    {"memory", "Fail"},
	    {"", "GPU0: Fail"},
	    {"Warning: GPU0", "The results of the test couldn't be parsed."},
	    {SECTION_INT, ""},
	    {"pcie", "Fail"},
	    {"", "GPU0: Fail"},
	    {"Warning: GPU0", "GPU 0 PCIe link width is x8, expected x16."},
	};
	char *in = table4(rows, sizeof rows / sizeof rows[0], false);
	const cJSON *r = parse_exit(in, 226);
	expect_diag(r, "memory=skip,pcie=fail");
	expect_str(r, "outcome", "node");
	expect_contains(r, "reason", "failing tests: pcie");
	expect_contains(r, "reason", "DCGM's own harness failed in memory");
	free(in);
}

/* Persistence mode off: a failure of the node, of its configuration. */
static void persistence_mode_is_configuration(void **state)
{
	(void)state;
	static const char *const rows[][2] = {
	    {SECTION_DEP, ""},
	    {"software", "Fail"},
	    {"", "GPU0: Fail"},
	    {"Warning: GPU0", "Persistence mode for GPU 0 is disabled. Enabl"},
	    {"", "e it with nvidia-smi -pm 1."},
	    {SECTION_HW, ""},
	    {"memory", "Pass"},
	    {"", "GPU0: Pass"},
	};
	char *in = table4(rows, sizeof rows / sizeof rows[0], false);
	const cJSON *r = parse_exit(in, 226);
	expect_diag(r, "software=fail,memory=pass");
	expect_str(r, "outcome", "node");
	expect_str(r, "detail.cause", "configuration");
	expect_str(r, "detail.tests.0.entities.0.cause", "configuration");
	expect_contains(r, "reason", "configuration, not its hardware (persistence mode is off)");
	free(in);
}

/* cuInit failing on an NVSwitch system: the fabric manager is down. */
static void cuinit_failure_is_configuration(void **state)
{
	(void)state;
	static const char *const rows[][2] = {
	    {SECTION_HW, ""},
	    {"memory", "Fail"},
	    {"", "GPU0: Fail"},
	    {"Warning: GPU0", "cuInit failed: system not yet initialized (802"},
	    {"", ")"},
	};
	char *in = table4(rows, sizeof rows / sizeof rows[0], false);
	const cJSON *r = parse_unknown(in);
	expect_str(r, "outcome", "node");
	expect_str(r, "detail.cause", "configuration");
	expect_contains(r, "reason", "fabric manager is not running");
	free(in);

	/* A hardware failure beside it: not only configuration. */
	static const char *const mixed[][2] = {
	    {SECTION_HW, ""},
	    {"memory", "Fail"},
	    {"", "GPU0: Fail"},
	    {"Warning: GPU0", "cuInit failed: system not yet initialized (802"},
	    {"", ")"},
	    {SECTION_INT, ""},
	    {"pcie", "Fail"},
	    {"", "GPU0: Fail"},
	    {"Warning: GPU0", "GPU 0 PCIe link width is x8, expected x16."},
	};
	in = table4(mixed, sizeof mixed / sizeof mixed[0], false);
	r = parse_unknown(in);
	assert_null(at(r, "detail.cause"));
	expect_lacks(r, "reason", "not its hardware");
	free(in);
}

/* A table cut short gives the gate nothing, but says what it read. */
static void cut_table_lists_what_it_read(void **state)
{
	(void)state;
	static const char *const rows[][2] = {
	    {SECTION_INT, ""},
	    {"pcie", "Fail"},
	    {"", "GPU0: Fail"},
	    {SECTION_HW, ""},
	    {"memory", "Pass"},
	};
	char *in = table4(rows, sizeof rows / sizeof rows[0], true);
	const cJSON *r = parse_unknown(in);
	expect_diag(r, NULL);
	expect_str(r, "outcome", "harness");
	expect_contains(r, "reason", "cut short (read before that: pcie: Fail, memory: Pass)");
	expect_contains(r, "detail.unreadable", "pcie: Fail");
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json4_all_pass_with_exit_0_is_clean),
		cmocka_unit_test(json_test_takes_the_worst_gpu),
		cmocka_unit_test(json_warn_is_a_failure_with_its_text),
		cmocka_unit_test(json3_title_case_names_map_to_policy_names),
		cmocka_unit_test(absent_skipped_and_failed_stay_apart),
		cmocka_unit_test(a_later_pass_does_not_erase_a_failure),
		cmocka_unit_test(json_is_found_among_noise),
		cmocka_unit_test(truncated_json_is_harness_without_diag),
		cmocka_unit_test(truncated_iterations_are_harness),
		cmocka_unit_test(stray_brace_before_a_table),
		cmocka_unit_test(invalid_json_is_harness),
		cmocka_unit_test(runtime_error_is_harness),
		cmocka_unit_test(exit_status_and_results_combine),
		cmocka_unit_test(unreadable_output_is_harness_without_diag),
		cmocka_unit_test(isolate_severity_without_exit_status_is_node),
		cmocka_unit_test(json_iterations_take_the_worst_run),
		cmocka_unit_test(text3_lists_and_wrapped_warnings),
		cmocka_unit_test(text4_entities_and_wrapped_warnings),
		cmocka_unit_test(text_not_run_is_skip_and_a_failed_check_fails_software),
		cmocka_unit_test(truncated_table_is_harness_without_diag),
		cmocka_unit_test(unknown_status_is_skip_and_harness),
		cmocka_unit_test(table_without_tests_is_harness),
		cmocka_unit_test(run_level_from_an_echoed_command),
		cmocka_unit_test(nul_bytes_and_bad_utf8_stay_valid_json),
		cmocka_unit_test(internal_error_is_not_completed),
		cmocka_unit_test(json_internal_error_is_not_completed),
		cmocka_unit_test(internal_error_beside_a_real_failure),
		cmocka_unit_test(persistence_mode_is_configuration),
		cmocka_unit_test(cuinit_failure_is_configuration),
		cmocka_unit_test(cut_table_lists_what_it_read),
		cmocka_unit_test(published_fixtures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
