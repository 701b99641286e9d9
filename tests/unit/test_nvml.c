/* The NVML loader against the synthetic GPUs (src/synth/nvml_synth.c): a
 * healthy node read field by field, and each way NVML fails (no library, no
 * driver, no GPUs, a GPU fallen off the bus, a counter the GPU lacks, a call
 * that errs, an old driver, a library missing a required function or
 * every optional one, a
 * scenario it cannot read, a call that never returns). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/nvml.h"
#include "core/gpu_fields.h"
#include "core/json.h"
#include "gpu_compare.h"

#ifndef NG_SYNTH_LIB
#error "NG_SYNTH_LIB (the synthetic library's path) must be defined by the build"
#endif

static char scenario_dir[] = "/tmp/nodegate-test-nvml-XXXXXX";
static char scenario_path[sizeof scenario_dir + 32];
static ng_gpu_snapshot snap; /* large: kept off the stack */

static const char *const uuids[8] = {
	"GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a50", "GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a51",
	"GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a52", "GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a53",
	"GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a54", "GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a55",
	"GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a56", "GPU-0f6c1a5e-1d2b-4e5f-8a9b-0c1d2e3f4a57",
};
static const char *const bus_ids[8] = {
	"00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
	"00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0",
};
static const char *const buses[8] = {
	"0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00", "0000:9a:00", "0000:ab:00", "0000:ba:00", "0000:db:00",
};

/* GPU 3 of the healthy node differs in every counter, so a value read into
 * the wrong field shows. */
#define GPU3_SPECIAL                                                                                  \
	"\"ecc\": {\"volatile\": {\"corrected\": 1, \"uncorrected\": 2},"                              \
	"         \"aggregate\": {\"corrected\": 3, \"uncorrected\": 4}},"                             \
	"\"retired_pages\": {\"sbe\": 5, \"dbe\": 6, \"pending\": true},"                              \
	"\"remapped_rows\": {\"corrected\": 7, \"uncorrected\": 8, \"pending\": true, \"failed\": true}," \
	"\"pcie\": {\"gen\": 4, \"gen_max\": 5, \"width\": 8, \"width_max\": 16, \"replays\": 9},"       \
	"\"clock_reasons\": [\"hw_slowdown\", \"sw_thermal\"],"                                        \
	"\"temperature_c\": 81, \"sm_clock_mhz\": 990, \"sm_clock_max_mhz\": 1980, \"power_mw\": 700000," \
	"\"nvlink\": [{\"active\": true, \"replay\": 11, \"recovery\": 12, \"crc\": 13},"              \
	"            {\"active\": false}, {}],"

static void write_file(const char *text)
{
	FILE *f = fopen(scenario_path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(setenv("NODEGATE_SYNTH_GPUS", scenario_path, 1), 0);
}

/* The healthy node, with extra JSON members spliced in: before the gpus
 * (top) and into GPU 3's object and GPU 5's object. */
static void write_healthy(const char *top, const char *gpu5)
{
	static char text[8192];
	size_t n = (size_t)snprintf(text, sizeof text,
	                            "{\"schema\": \"nodegate/synthetic-gpus/1\", \"driver\": \"550.54.15\","
	                            " \"nvml_version\": \"12.550.54.15\", %s \"gpus\": [",
	                            top ? top : "");
	for (int i = 0; i < 8; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s{%s%s\"uuid\": \"%s\", \"pci_bus_id\": \"%s\"}",
		                      i ? ", " : "", i == 3 ? GPU3_SPECIAL : "",
		                      i == 5 && gpu5 ? gpu5 : "", uuids[i], bus_ids[i]);
	snprintf(text + n, sizeof text - n, "]}");
	write_file(text);
}

static void take(const char *library)
{
	ng_nvml_opts o = {.lib_path = library};
	ng_err err = {0};
	memset(&snap, 0xa5, sizeof snap);
	if (ng_nvml_snapshot(&o, &snap, &err) != 0)
		fail_msg("ng_nvml_snapshot: %s", err.msg);
}

static void assert_contains(const char *s, const char *part)
{
	if (!strstr(s, part))
		fail_msg("\"%s\" does not say \"%s\"", s, part);
}

static void assert_field(const ng_gpu_field *f, ng_field_state st, uint64_t value, int rc, const char *what)
{
	if (f->state != st || f->value != value || f->nvml_return != rc)
		fail_msg("%s: state %d value %llu rc %d; expected state %d value %llu rc %d", what, (int)f->state,
		         (unsigned long long)f->value, f->nvml_return, (int)st, (unsigned long long)value, rc);
}

#define OK(f, v) assert_field(&(f), NG_FIELD_OK, (v), 0, #f)

/* A default healthy H100 as the synthetic library describes one. */
static void assert_healthy_gpu(const ng_gpu_state *g, int i)
{
	assert_int_equal(g->index, i);
	assert_string_equal(g->uuid, uuids[i]);
	assert_string_equal(g->bus, buses[i]);
	assert_string_equal(g->name, "NVIDIA H100 80GB HBM3");
	assert_false(g->lost);
	assert_string_equal(g->error, "");
	OK(g->ecc_volatile_uncorrected, 0);
	OK(g->ecc_aggregate_uncorrected, 0);
	OK(g->ecc_volatile_corrected, 0);
	OK(g->ecc_aggregate_corrected, 0);
	OK(g->retired_pages_sbe, 0);
	OK(g->retired_pages_dbe, 0);
	OK(g->retired_pending, 0);
	OK(g->remap_corrected, 0);
	OK(g->remap_uncorrected, 0);
	OK(g->remap_pending, 0);
	OK(g->remap_failed, 0);
	OK(g->pcie_gen, 5);
	OK(g->pcie_gen_max, 5);
	OK(g->pcie_width, 16);
	OK(g->pcie_width_max, 16);
	OK(g->pcie_replays, 0);
	OK(g->clock_reasons, 0x1);
	OK(g->temperature_c, 34);
	OK(g->sm_clock_mhz, 345);
	OK(g->sm_clock_max_mhz, 1980);
	OK(g->power_mw, 71000);
	assert_int_equal(g->n_links, 18);
	for (size_t l = 0; l < g->n_links; l++) {
		OK(g->link[l].active, 1);
		OK(g->link[l].replay_errors, 0);
		OK(g->link[l].recovery_errors, 0);
		OK(g->link[l].crc_errors, 0);
	}
	assert_int_equal(g->n_xid, 0);
}

static void assert_gpu3(const ng_gpu_state *g)
{
	assert_string_equal(g->uuid, uuids[3]);
	assert_string_equal(g->bus, buses[3]);
	OK(g->ecc_volatile_corrected, 1);
	OK(g->ecc_volatile_uncorrected, 2);
	OK(g->ecc_aggregate_corrected, 3);
	OK(g->ecc_aggregate_uncorrected, 4);
	OK(g->retired_pages_sbe, 5);
	OK(g->retired_pages_dbe, 6);
	OK(g->retired_pending, 1);
	OK(g->remap_corrected, 7);
	OK(g->remap_uncorrected, 8);
	OK(g->remap_pending, 1);
	OK(g->remap_failed, 1);
	OK(g->pcie_gen, 4);
	OK(g->pcie_gen_max, 5);
	OK(g->pcie_width, 8);
	OK(g->pcie_width_max, 16);
	OK(g->pcie_replays, 9);
	OK(g->clock_reasons, NG_CLK_HW_SLOWDOWN | NG_CLK_SW_THERMAL);
	OK(g->temperature_c, 81);
	OK(g->sm_clock_mhz, 990);
	OK(g->sm_clock_max_mhz, 1980);
	OK(g->power_mw, 700000);
	assert_int_equal(g->n_links, 3);
	OK(g->link[0].active, 1);
	OK(g->link[0].replay_errors, 11);
	OK(g->link[0].recovery_errors, 12);
	OK(g->link[0].crc_errors, 13);
	OK(g->link[1].active, 0);
	OK(g->link[1].crc_errors, 0);
	OK(g->link[2].active, 1);
	assert_string_equal(g->error, "");
}

static void assert_healthy_node(const char *source)
{
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_string_equal(snap.nvml_error, "");
	assert_string_equal(snap.source, source);
	assert_string_equal(snap.driver, "550.54.15");
	assert_string_equal(snap.nvml_version, "12.550.54.15");
	assert_int_equal(snap.n_gpus, 8);
	for (int i = 0; i < 8; i++)
		if (i == 3)
			assert_gpu3(&snap.gpu[i]);
		else
			assert_healthy_gpu(&snap.gpu[i], i);
}

static void assert_nvml_failed(const char *why)
{
	assert_int_equal(snap.nvml, NG_FIELD_FAILED);
	assert_int_equal(snap.n_gpus, 0);
	assert_contains(snap.nvml_error, why);
}

/* ---- the healthy node ---------------------------------------------------------- */

static void test_healthy(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	take(NG_SYNTH_LIB);
	assert_healthy_node("synthetic");
	/* twice in one process: the library is opened and closed each time */
	take(NG_SYNTH_LIB);
	assert_healthy_node("synthetic");
}

static void test_library_from_environment(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	assert_int_equal(setenv("NODEGATE_NVML_LIBRARY", NG_SYNTH_LIB, 1), 0);
	ng_err err = {0};
	assert_int_equal(ng_nvml_snapshot(NULL, &snap, &err), 0);
	assert_healthy_node("synthetic");
	/* an explicit library wins over the environment */
	take("/nonexistent/libnvidia-ml.so.1");
	assert_nvml_failed("/nonexistent/libnvidia-ml.so.1");
	assert_int_equal(unsetenv("NODEGATE_NVML_LIBRARY"), 0);
}

static void test_defaults(void **state)
{
	(void)state;
	write_file("{}"); /* eight default H100s */
	take(NG_SYNTH_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 8);
	assert_string_equal(snap.gpu[0].uuid, "GPU-00000000-0000-4000-8000-000000000000");
	assert_string_equal(snap.gpu[7].bus, "0000:db:00");
	OK(snap.gpu[7].pcie_width, 16);
	assert_int_equal(snap.gpu[7].n_links, 18);
}

/* ---- NVML failing as a whole --------------------------------------------------- */

static void test_no_library(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	take("/nonexistent/dir/libnvidia-ml.so.1");
	assert_nvml_failed("/nonexistent/dir/libnvidia-ml.so.1");
	assert_string_equal(snap.source, "nvml");
	take("libnodegate-no-such-nvml.so.1"); /* searched for, not found */
	assert_nvml_failed("libnodegate-no-such-nvml.so.1");
}

static void test_init_fails(void **state)
{
	(void)state;
	write_file("{\"fail\": {\"init\": \"DRIVER_NOT_LOADED\"}}");
	take(NG_SYNTH_LIB);
	assert_nvml_failed("DRIVER_NOT_LOADED");
	assert_contains(snap.nvml_error, "nvmlInit_v2");
	write_file("{\"fail\": {\"init\": \"NVML_ERROR_NO_PERMISSION\"}}");
	take(NG_SYNTH_LIB);
	assert_nvml_failed("NO_PERMISSION");
	write_file("{\"fail\": {\"init\": 4242}}"); /* a code no header knows yet */
	take(NG_SYNTH_LIB);
	assert_nvml_failed("return code 4242");
	assert_contains(snap.nvml_error, "unknown error"); /* the library's own nvmlErrorString */
}

static void test_count_fails(void **state)
{
	(void)state;
	write_healthy("\"fail\": {\"errors\": {\"nvmlDeviceGetCount\": \"UNKNOWN\"}},", NULL);
	take(NG_SYNTH_LIB);
	assert_nvml_failed("nvmlDeviceGetCount_v2 failed: UNKNOWN");
}

static void test_zero_devices(void **state)
{
	(void)state;
	write_healthy("\"fail\": {\"zero_devices\": true},", NULL);
	take(NG_SYNTH_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 0);
	assert_string_equal(snap.nvml_error, "");
	assert_string_equal(snap.driver, "550.54.15");
	write_file("{\"gpus\": []}");
	take(NG_SYNTH_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 0);
}

static void test_bad_scenario(void **state)
{
	(void)state;
	/* the library says what is wrong in one line on stderr; catch it */
	char err_path[sizeof scenario_dir + 32];
	snprintf(err_path, sizeof err_path, "%s/stderr", scenario_dir);
	static const struct {
		const char *text, *says;
	} cases[] = {
		{"{\"gpus\": [{\"uuid\": \"GPU-1\", \"ecc\": {\"volatile\": {\"uncorrectd\": 1}}}]}",
		 "gpus[0].ecc.volatile: unknown key \"uncorrectd\""},
		{"{\"gpus\": [{}, {\"pcie\": {\"width\": \"16\"}}]}", "gpus[1].pcie.width: expected a whole number"},
		{"{\"gpus\": [{\"not_supported\": [\"nvmlDeviceGetRemapedRows\"]}]}", "gpus[0].not_supported[0]"},
		{"{\"fail\": {\"init\": \"NO_SUCH_CODE\"}}", "fail.init: \"NO_SUCH_CODE\""},
		{"{\"gpus\": [{\"clock_reasons\": [\"too_hot\"]}]}", "gpus[0].clock_reasons[0]"},
		{"{\"gpus\": [{\"uuid\": \"GPU-1\"}, {\"uuid\": \"GPU-1\"}]}", "gpus[1].uuid"},
		{"{\"gpus\": [{\"pci_bus_id\": \"3b\"}]}", "gpus[0].pci_bus_id"},
		{"{\"schema\": \"nodegate/synthetic-gpus/9\"}", "schema"},
		{"{\"gpus\": [}", "not valid JSON"},
		{"{\"gpus\": [], \"gpus\": []}", "\"gpus\" given twice"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		write_file(cases[i].text);
		fflush(stderr);
		int saved = dup(2);
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(saved >= 0 && fd >= 0);
		dup2(fd, 2);
		close(fd);
		take(NG_SYNTH_LIB);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		assert_nvml_failed("nvmlInit_v2 failed: UNKNOWN");
		char said[1024] = "";
		FILE *f = fopen(err_path, "r");
		assert_non_null(f);
		size_t n = fread(said, 1, sizeof said - 1, f);
		fclose(f);
		said[n] = '\0';
		assert_contains(said, "nodegate-nvml-synth: ");
		assert_contains(said, scenario_path);
		assert_contains(said, cases[i].says);
		assert_non_null(strchr(said, '\n'));
		assert_string_equal(strchr(said, '\n'), "\n"); /* one line */
	}
	/* no file at all */
	assert_int_equal(setenv("NODEGATE_SYNTH_GPUS", "/nonexistent/scenario.json", 1), 0);
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	close(null);
	take(NG_SYNTH_LIB);
	dup2(saved, 2);
	close(saved);
	assert_nvml_failed("UNKNOWN");
}

static void test_broken_library(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	take(NG_SYNTH_BROKEN_LIB);
	assert_nvml_failed("libnvidia-ml lacks nvmlDeviceGetUUID");
	assert_contains(snap.nvml_error, NG_SYNTH_BROKEN_LIB);
}

/* A library with only the required functions: the node is read, every
 * other field is FAILED (FUNCTION_NOT_FOUND), and nvml_error names them. */
static void test_minimal_library(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	take(NG_SYNTH_MINIMAL_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_contains(snap.nvml_error, "libnvidia-ml lacks 28 optional functions (their fields read as failed): "
	                                 "nvmlErrorString, nvmlSystemGetDriverVersion, ");
	assert_contains(snap.nvml_error, " more");
	assert_string_equal(snap.driver, "");
	assert_int_equal(snap.n_gpus, 8);
	for (int i = 0; i < 8; i++) {
		const ng_gpu_state *g = &snap.gpu[i];
		assert_string_equal(g->uuid, uuids[i]);
		assert_string_equal(g->bus, buses[i]);
		assert_string_equal(g->name, "");
		assert_false(g->lost);
#define MISSING_FIELD(m) assert_field(&g->m, NG_FIELD_FAILED, 0, 13, #m);
		NG_GPU_FIELDS(MISSING_FIELD)
		assert_int_equal(g->n_links, 1); /* NVLink unknown, not absent */
		const ng_nvlink_state *ls = &g->link[0];
		(void)ls;
#define MISSING_LINK_FIELD(m) assert_field(&ls->m, NG_FIELD_FAILED, 0, 13, #m);
		NG_NVLINK_FIELDS(MISSING_LINK_FIELD)
#undef MISSING_LINK_FIELD
#undef MISSING_FIELD
	}
	/* an unknown code is still named without nvmlErrorString */
	write_file("{\"fail\": {\"init\": 4242}}");
	take(NG_SYNTH_MINIMAL_LIB);
	assert_nvml_failed("return code 4242");
}

/* ---- one GPU or one field failing ---------------------------------------------- */

static void test_gpu_lost(void **state)
{
	(void)state;
	write_healthy(NULL, "\"lost\": true,");
	take(NG_SYNTH_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 8);
	for (int i = 0; i < 8; i++) {
		if (i == 3) {
			assert_gpu3(&snap.gpu[i]);
			continue;
		}
		if (i != 5) {
			assert_healthy_gpu(&snap.gpu[i], i);
			continue;
		}
		const ng_gpu_state *g = &snap.gpu[5];
		assert_int_equal(g->index, 5);
		assert_true(g->lost);
		assert_contains(g->error, "GPU_IS_LOST");
		assert_string_equal(g->uuid, ""); /* asked first, and lost */
#define LOST_FIELD(m) assert_field(&g->m, NG_FIELD_FAILED, 0, 15, #m);
		NG_GPU_FIELDS(LOST_FIELD)
#undef LOST_FIELD
		assert_int_equal(g->n_links, 0);
	}
	/* lost when its handle is asked for */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetHandleByIndex\": \"GPU_IS_LOST\"},");
	take(NG_SYNTH_LIB);
	assert_true(snap.gpu[5].lost);
	assert_contains(snap.gpu[5].error, "nvmlDeviceGetHandleByIndex_v2");
	assert_field(&snap.gpu[5].power_mw, NG_FIELD_FAILED, 0, 15, "power_mw");
	assert_healthy_gpu(&snap.gpu[6], 6);
	/* lost half way: what was read stays read */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetCurrPcieLinkWidth\": \"GPU_IS_LOST\"},");
	take(NG_SYNTH_LIB);
	const ng_gpu_state *g = &snap.gpu[5];
	assert_true(g->lost);
	assert_string_equal(g->uuid, uuids[5]);
	assert_string_equal(g->bus, buses[5]);
	OK(g->ecc_volatile_uncorrected, 0);
	OK(g->pcie_gen_max, 5);
	assert_field(&g->pcie_width, NG_FIELD_FAILED, 0, 15, "pcie_width");
	assert_field(&g->pcie_replays, NG_FIELD_FAILED, 0, 15, "pcie_replays");
	assert_field(&g->power_mw, NG_FIELD_FAILED, 0, 15, "power_mw");
	assert_contains(g->error, "nvmlDeviceGetCurrPcieLinkWidth returned GPU_IS_LOST");
	/* lost while its links are walked */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetNvLinkErrorCounter\": \"GPU_IS_LOST\"},");
	take(NG_SYNTH_LIB);
	assert_true(g->lost);
	OK(g->power_mw, 71000);
	assert_int_equal(g->n_links, 1);
	OK(g->link[0].active, 1);
	assert_field(&g->link[0].replay_errors, NG_FIELD_FAILED, 0, 15, "replay");
	assert_field(&g->link[0].crc_errors, NG_FIELD_FAILED, 0, 15, "crc");
}

static void test_not_supported(void **state)
{
	(void)state;
	write_healthy(NULL, "\"not_supported\": [\"remapped_rows\", \"nvmlDeviceGetPcieReplayCounter\"], "
	                    "\"nvlink\": [],");
	take(NG_SYNTH_LIB);
	const ng_gpu_state *g = &snap.gpu[5];
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_false(g->lost);
	assert_string_equal(g->error, "");
	assert_field(&g->remap_corrected, NG_FIELD_NOT_SUPPORTED, 0, 3, "remap_corrected");
	assert_field(&g->remap_uncorrected, NG_FIELD_NOT_SUPPORTED, 0, 3, "remap_uncorrected");
	assert_field(&g->remap_pending, NG_FIELD_NOT_SUPPORTED, 0, 3, "remap_pending");
	assert_field(&g->remap_failed, NG_FIELD_NOT_SUPPORTED, 0, 3, "remap_failed");
	assert_field(&g->pcie_replays, NG_FIELD_NOT_SUPPORTED, 0, 3, "pcie_replays");
	assert_int_equal(g->n_links, 0);
	OK(g->ecc_volatile_uncorrected, 0);
	OK(g->pcie_width, 16);
	OK(g->power_mw, 71000);
	assert_healthy_gpu(&snap.gpu[4], 4);
}

static void test_call_errors(void **state)
{
	(void)state;
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetPcieReplayCounter\": \"UNKNOWN\","
	                    " \"nvmlDeviceGetTemperature\": 31, \"nvmlDeviceGetTotalEccErrors\": \"NO_PERMISSION\","
	                    " \"nvmlDeviceGetRetiredPages\": \"CORRUPTED_INFOROM\"},");
	take(NG_SYNTH_LIB);
	const ng_gpu_state *g = &snap.gpu[5];
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_false(g->lost);
	assert_string_equal(g->uuid, uuids[5]);
	assert_field(&g->pcie_replays, NG_FIELD_FAILED, 0, 999, "pcie_replays");
	assert_field(&g->temperature_c, NG_FIELD_FAILED, 0, 31, "temperature_c");
	assert_field(&g->ecc_volatile_uncorrected, NG_FIELD_FAILED, 0, 4, "ecc");
	assert_field(&g->ecc_aggregate_corrected, NG_FIELD_FAILED, 0, 4, "ecc");
	assert_field(&g->retired_pages_sbe, NG_FIELD_FAILED, 0, 14, "retired_pages_sbe");
	assert_field(&g->retired_pages_dbe, NG_FIELD_FAILED, 0, 14, "retired_pages_dbe");
	OK(g->retired_pending, 0);
	OK(g->pcie_width, 16);
	OK(g->power_mw, 71000);
	assert_int_equal(g->n_links, 18);
	assert_healthy_gpu(&snap.gpu[6], 6);

	/* a link whose state cannot be read: one FAILED link, the walk ends */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetNvLinkState\": \"UNKNOWN\"},");
	take(NG_SYNTH_LIB);
	assert_int_equal(g->n_links, 1);
	assert_field(&g->link[0].active, NG_FIELD_FAILED, 0, 999, "active");
	assert_field(&g->link[0].crc_errors, NG_FIELD_FAILED, 0, 999, "crc");
	OK(g->power_mw, 71000);

	/* no UUID, no PCI address: said in error, the counters still read */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetUUID\": \"NO_PERMISSION\","
	                    " \"nvmlDeviceGetPciInfo\": \"UNKNOWN\"},");
	take(NG_SYNTH_LIB);
	assert_string_equal(g->uuid, "");
	assert_string_equal(g->bus, "");
	assert_contains(g->error, "no UUID: nvmlDeviceGetUUID: NO_PERMISSION");
	assert_contains(g->error, "no PCI address");
	OK(g->pcie_width, 16);

	/* a handle refused: the GPU is there but unread */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetHandleByIndex\": \"INSUFFICIENT_POWER\"},");
	take(NG_SYNTH_LIB);
	assert_false(g->lost);
	assert_contains(g->error, "nvmlDeviceGetHandleByIndex_v2(5) failed: INSUFFICIENT_POWER");
	assert_field(&g->ecc_volatile_uncorrected, NG_FIELD_FAILED, 0, 8, "ecc");
	assert_healthy_gpu(&snap.gpu[6], 6);

	/* a versioned name fails only that symbol: the loader asks for _v2 */
	write_healthy("\"fail\": {\"errors\": {\"nvmlDeviceGetCount_v2\": \"UNKNOWN\"}},", NULL);
	take(NG_SYNTH_LIB);
	assert_nvml_failed("nvmlDeviceGetCount_v2");
	take(NG_SYNTH_OLD_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 8);
}

static void test_old_driver(void **state)
{
	(void)state;
	write_healthy(NULL, "\"clock_reasons\": [\"sw_power_cap\", \"hw_power_brake\"],");
	take(NG_SYNTH_OLD_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_string_equal(snap.nvml_error, ""); /* every field has a function */
	for (int i = 0; i < 8; i++)
		if (i == 3)
			assert_gpu3(&snap.gpu[i]);
		else if (i != 5)
			assert_healthy_gpu(&snap.gpu[i], i);
	OK(snap.gpu[5].clock_reasons, NG_CLK_SW_POWER_CAP | NG_CLK_HW_POWER_BRAKE);
	OK(snap.gpu[5].power_mw, 71000);
	/* the old library really lacks the new names: the Event call failing
	 * does not matter to it, and does to the new one */
	write_healthy(NULL, "\"errors\": {\"nvmlDeviceGetCurrentClocksEventReasons\": \"UNKNOWN\"},");
	take(NG_SYNTH_OLD_LIB);
	OK(snap.gpu[5].clock_reasons, 0x1);
	take(NG_SYNTH_LIB);
	assert_field(&snap.gpu[5].clock_reasons, NG_FIELD_FAILED, 0, 999, "clock_reasons");
	/* and nvmlInit (not _v2) is what it initialises with */
	write_file("{\"fail\": {\"errors\": {\"nvmlInit\": \"DRIVER_NOT_LOADED\"}}}");
	take(NG_SYNTH_OLD_LIB);
	assert_nvml_failed("nvmlInit failed: DRIVER_NOT_LOADED");
}

/* ---- only some GPUs ------------------------------------------------------------ */

static void test_indexes(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	int idx[] = {5, 1, 9};
	ng_nvml_opts o = {.lib_path = NG_SYNTH_LIB, .indexes = idx, .n_indexes = 3};
	ng_err err = {0};
	assert_int_equal(ng_nvml_snapshot(&o, &snap, &err), 0);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 3);
	assert_healthy_gpu(&snap.gpu[0], 5);
	assert_healthy_gpu(&snap.gpu[1], 1);
	const ng_gpu_state *g = &snap.gpu[2];
	assert_int_equal(g->index, 9);
	assert_string_equal(g->error, "no GPU at NVML index 9 (NVML counts 8)");
	assert_string_equal(g->uuid, "");
#define ABSENT_FIELD(m) assert_field(&g->m, NG_FIELD_FAILED, 0, 2, #m);
	NG_GPU_FIELDS(ABSENT_FIELD)
#undef ABSENT_FIELD

	/* usage errors: -1, and the snapshot still says nothing was read */
	static const struct {
		int idx[3];
		size_t n;
		const char *says;
	} bad[] = {
		{{1, -1, 0}, 2, "negative"},
		{{2, 3, 2}, 3, "twice"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		o.indexes = bad[i].idx;
		o.n_indexes = bad[i].n;
		assert_int_equal(ng_nvml_snapshot(&o, &snap, &err), -1);
		assert_contains(err.msg, bad[i].says);
		assert_nvml_failed(bad[i].says);
	}
	o.indexes = NULL;
	o.n_indexes = 2;
	assert_int_equal(ng_nvml_snapshot(&o, &snap, &err), -1);
	o.indexes = idx;
	o.n_indexes = NG_GPU_MAX + 1;
	assert_int_equal(ng_nvml_snapshot(&o, &snap, &err), -1);
	assert_int_equal(ng_nvml_snapshot(&o, NULL, &err), -1);
	assert_int_equal(ng_nvml_snapshot(&o, &snap, NULL), -1);
}

static void test_more_gpus_than_a_snapshot_holds(void **state)
{
	(void)state;
	static char text[1024];
	size_t n = (size_t)snprintf(text, sizeof text, "{\"gpus\": [");
	for (int i = 0; i < 70; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s{}", i ? "," : "");
	snprintf(text + n, sizeof text - n, "]}");
	write_file(text);
	take(NG_SYNTH_LIB);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, NG_GPU_MAX);
	assert_contains(snap.nvml_error, "NVML counts 70 GPUs");
	assert_string_equal(snap.gpu[63].bus, "0007:db:00");
}

/* ---- a call that never returns ------------------------------------------------- */

/* The snapshot in a child with alarm(2): still blocked after 1 s, then
 * ended by the alarm. */
static void assert_blocks(void)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(2); /* the deadline is the caller's job; this one only ends the test */
		ng_nvml_opts o = {.lib_path = NG_SYNTH_LIB};
		ng_err err;
		ng_nvml_snapshot(&o, &snap, &err);
		_exit(0); /* returned: the hang did not hang */
	}
	struct timespec one_second = {1, 0};
	nanosleep(&one_second, NULL);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0); /* still blocked after 1 s */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGALRM);
}

static void test_hang(void **state)
{
	(void)state;
	write_healthy("\"fail\": {\"hang\": \"nvmlDeviceGetTotalEccErrors\"},", NULL);
	assert_blocks();
	write_healthy(NULL, "\"hang\": \"power\",");
	assert_blocks();
}

/* ---- the snapshot as JSON ------------------------------------------------------ */

static void round_trip(void)
{
	static ng_gpu_snapshot back;
	cJSON *doc = ng_gpu_snapshot_to_json(&snap);
	assert_non_null(doc);
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	ng_err err = {0};
	cJSON *again = ng_json_parse(text, strlen(text), &err);
	free(text);
	assert_non_null(again);
	memset(&back, 0xa5, sizeof back);
	if (ng_gpu_snapshot_from_json(again, &back, &err) != 0)
		fail_msg("%s", err.msg);
	cJSON_Delete(again);
	assert_same_snapshot(&snap, &back, "round trip");
}

static void test_json_round_trip(void **state)
{
	(void)state;
	write_healthy(NULL, NULL);
	take(NG_SYNTH_LIB);
	round_trip();
	write_healthy(NULL, "\"lost\": true,");
	take(NG_SYNTH_LIB);
	round_trip();
	write_healthy(NULL, "\"not_supported\": [\"remapped_rows\"], \"nvlink\": [], "
	                    "\"errors\": {\"nvmlDeviceGetPcieReplayCounter\": \"UNKNOWN\"},");
	take(NG_SYNTH_LIB);
	round_trip();
	write_file("{\"fail\": {\"init\": \"DRIVER_NOT_LOADED\"}}");
	take(NG_SYNTH_LIB);
	round_trip();
}

static void test_return_names(void **state)
{
	(void)state;
	assert_contains(ng_nvml_return_name(15), "GPU_IS_LOST");
	assert_contains(ng_nvml_return_name(9), "DRIVER_NOT_LOADED");
	assert_contains(ng_nvml_return_name(3), "NOT_SUPPORTED");
	assert_contains(ng_nvml_return_name(999), "UNKNOWN");
	assert_contains(ng_nvml_return_name(30), "RESET_TYPE_NOT_SUPPORTED");
	assert_non_null(ng_nvml_return_name(31));
	assert_non_null(ng_nvml_return_name(-1));
	for (int rc = 0; rc <= 30; rc++)
		assert_string_not_equal(ng_nvml_return_name(rc), ng_nvml_return_name(31));
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(scenario_dir))
		return -1;
	snprintf(scenario_path, sizeof scenario_path, "%s/scenario.json", scenario_dir);
	unsetenv("NODEGATE_NVML_LIBRARY");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char err_path[sizeof scenario_dir + 32];
	snprintf(err_path, sizeof err_path, "%s/stderr", scenario_dir);
	unlink(scenario_path);
	unlink(err_path);
	rmdir(scenario_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_library_from_environment),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_no_library),
		cmocka_unit_test(test_init_fails),
		cmocka_unit_test(test_count_fails),
		cmocka_unit_test(test_zero_devices),
		cmocka_unit_test(test_bad_scenario),
		cmocka_unit_test(test_broken_library),
		cmocka_unit_test(test_minimal_library),
		cmocka_unit_test(test_gpu_lost),
		cmocka_unit_test(test_not_supported),
		cmocka_unit_test(test_call_errors),
		cmocka_unit_test(test_old_driver),
		cmocka_unit_test(test_indexes),
		cmocka_unit_test(test_more_gpus_than_a_snapshot_holds),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_return_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
