/* What a GPU check keeps of what it judged (flow/gpu_readings.h): read back,
 * the same rules give the same verdict, reason for reason, under any
 * policy; the text stays within its bound; what is not readings is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "core/gpu_fields.h"
#include "flow/gpu_readings.h"

/* Large: kept off the stack. */
static ng_gpu_snapshot snap, back;
static ng_node_health live, again;
static ng_gpu_readings readings;
static ng_gpu_history history[4];

static ng_gpu_field ok(uint64_t v) { return (ng_gpu_field){NG_FIELD_OK, v, 0}; }
static ng_gpu_field failed(int code) { return (ng_gpu_field){NG_FIELD_FAILED, 0, code}; }

static void healthy_gpu(ng_gpu_state *g, int i)
{
	memset(g, 0, sizeof *g);
	g->index = i;
	snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-0000-0000-%012d", i);
	snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
	snprintf(g->bus, sizeof g->bus, "0000:%02x:00", 0x18 + i);
#define ZERO(m) g->m = ok(0);
	ZERO(ecc_volatile_uncorrected) ZERO(ecc_aggregate_uncorrected) ZERO(ecc_volatile_corrected)
	ZERO(ecc_aggregate_corrected) ZERO(remap_corrected) ZERO(remap_uncorrected)
	ZERO(remap_pending) ZERO(remap_failed) ZERO(processes) ZERO(utilization_gpu)
#undef ZERO
	g->pcie_gen = g->pcie_gen_max = ok(5);
	g->pcie_width = g->pcie_width_max = ok(16);
	g->pcie_replays = ok(9);
	g->clock_reasons = ok(NG_CLK_GPU_IDLE);
	g->temperature_c = ok(35);
	g->sm_clock_mhz = ok(345);
	g->sm_clock_max_mhz = ok(1980);
	g->pstate = ok(8);
	g->memory_used_mib = ok(0);
	g->memory_total_mib = ok(81559);
	g->n_links = 18;
	for (size_t k = 0; k < g->n_links; k++)
		g->link[k] = (ng_nvlink_state){ok(1), ok(0), ok(0), ok(0)};
}

/* Eight GPUs, each with something else for the rules to find. */
static void troubled_node(void)
{
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_OK;
	snprintf(snap.source, sizeof snap.source, "nvml");
	snap.after_job = true;
	snap.n_gpus = snap.n_listed = 8;
	for (int i = 0; i < 8; i++)
		healthy_gpu(&snap.gpu[i], i);
	ng_gpu_state *g = snap.gpu;
	g[1].presence = NG_GPU_MISSING;
	snprintf(g[1].seen_by, sizeof g[1].seen_by, "the kernel");
	g[2].n_xid = 2;
	g[2].xid[0] = (ng_gpu_xid){.code = 45, .cause = 149, .at_usec = 12};
	memset(g[2].xid[0].message, 'x', sizeof g[2].xid[0].message - 1);
	g[2].xid[1] = (ng_gpu_xid){.code = 13, .at_usec = 13};
	snprintf(g[2].xid[1].message, sizeof g[2].xid[1].message, "Graphics SM Warp Exception");
	/* every read failed while its siblings answered: unresponsive */
#define FAIL(m) g[3].m = failed(15);
	NG_GPU_FIELDS(FAIL)
#undef FAIL
	g[3].n_links = 0;
	g[4].link[5].active = ok(0);
	g[4].link[7].crc_errors = ok(4000);
	g[5].ecc_volatile_corrected = ok(600);
	g[6].processes = ok(2);
	g[6].n_pids = 2;
	g[6].pid[0] = 4242;
	g[6].pid[1] = 4343;
	g[7].clock_reasons = ok(NG_CLK_HW_THERMAL);
	g[7].utilization_gpu = ok(90);
	g[7].pstate = ok(0);
	history[0] = (ng_gpu_history){.uuid = g[4].uuid, .hours_ago = 2, .nvlink_errors = 100};
	history[1] = (ng_gpu_history){.uuid = g[3].uuid, .hours_ago = NAN, .unread = 0xf,
	                              .unresponsive_before = 2};
	history[2] = (ng_gpu_history){.uuid = g[7].uuid, .hours_ago = 30, .hw_thermal_before = 1,
	                              .unread = NG_HIST_UNREAD_PCIE_REPLAYS};
}

/* The verdicts, reason for reason. */
static void assert_same(const ng_node_health *a, const ng_node_health *b)
{
	assert_int_equal(a->severity, b->severity);
	assert_int_equal(a->drain, b->drain);
	assert_int_equal(a->n_gpus, b->n_gpus);
	assert_string_equal(a->unknown_why, b->unknown_why);
	for (size_t i = 0; i < a->n_gpus; i++) {
		const ng_gpu_verdict *x = &a->gpu[i], *y = &b->gpu[i];
		assert_int_equal(x->severity, y->severity);
		assert_string_equal(x->uuid, y->uuid);
		assert_int_equal(x->n_reasons, y->n_reasons);
		assert_int_equal(x->unresponsive_run, y->unresponsive_run);
		assert_int_equal(x->hw_thermal_run, y->hw_thermal_run);
		for (size_t k = 0; k < x->n_reasons; k++) {
			assert_string_equal(x->reason[k].signal, y->reason[k].signal);
			assert_string_equal(x->reason[k].text, y->reason[k].text);
		}
	}
}

static void round_trip(const ng_policy *pol, ng_gpu_readings_run run, size_t n_history)
{
	ng_health_judge(&snap, history, n_history, pol, &live);
	const char *outcome = ng_gpu_check_outcome(&live, run);
	char *text = ng_gpu_readings_text(&snap, history, n_history, run);
	assert_non_null(text);
	assert_true(strlen(text) <= NG_GPU_READINGS_MAX_BYTES);
	ng_err err;
	memset(&readings, 0, sizeof readings);
	readings.snap = &back;
	assert_int_equal(ng_gpu_readings_read(text, &readings, &err), 0);
	free(text);
	assert_int_equal(readings.n_history, n_history);
	assert_string_equal(ng_gpu_readings_judge(&readings, pol, &again), outcome);
	assert_same(&live, &again);
}

static void test_the_same_verdict_read_back(void **state)
{
	(void)state;
	troubled_node();
	ng_policy pol;
	ng_policy_default(&pol);
	ng_gpu_readings_run run = {.judged = true, .nvml_answered = true};
	round_trip(&pol, run, 3);
	assert_string_equal(ng_health_name(live.severity), "fatal"); /* the missing GPU */
	assert_int_equal(live.gpu[3].severity, NG_HEALTH_DEGRADED);  /* unresponsive, third time */
	/* A tighter and a looser policy judge the read-back readings as they
	 * judge the snapshot itself. */
	pol.health_ecc_corrected_volatile = 400;
	pol.health_nvlink_errors_per_hour = 10;
	pol.health_unresponsive_checks = 5;
	round_trip(&pol, run, 3);
	assert_int_equal(live.gpu[5].severity, NG_HEALTH_DEGRADED);
	assert_int_equal(live.gpu[3].severity, NG_HEALTH_UNRESPONSIVE);
	pol.health_ecc_corrected_volatile = 5000;
	round_trip(&pol, run, 0);
}

static void test_a_failed_nvml_with_the_kernels_gpus(void **state)
{
	(void)state;
	/* NVML hung; the kernel vouches for two GPUs, one with a fatal Xid. */
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_FAILED;
	snprintf(snap.nvml_error, sizeof snap.nvml_error, "NVML did not answer within 10 s");
	snap.n_gpus = 2;
	for (int i = 0; i < 2; i++) {
		ng_gpu_state *g = &snap.gpu[i];
		g->index = i;
		g->presence = NG_GPU_UNANSWERED;
		snprintf(g->bus, sizeof g->bus, "0000:%02x:00", 0x18 + i);
		snprintf(g->seen_by, sizeof g->seen_by, "the kernel");
	}
	snap.gpu[1].n_xid = 1;
	snap.gpu[1].xid[0] = (ng_gpu_xid){.code = 79, .at_usec = 5};
	ng_policy pol;
	ng_policy_default(&pol);
	ng_gpu_readings_run run = {.judged = true, .timed_out = true};
	round_trip(&pol, run, 0);
	assert_string_equal(ng_gpu_check_outcome(&again, run), "fatal");
	assert_true(back.nvml == NG_FIELD_FAILED);
	assert_string_equal(back.nvml_error, snap.nvml_error);
	/* Without the Xid: NVML's silence is unknown, never a drain. */
	snap.gpu[1].n_xid = 0;
	round_trip(&pol, run, 0);
	assert_string_equal(ng_gpu_check_outcome(&again, run), "unknown");
	ng_gpu_readings_run none = {.judged = false, .timed_out = false};
	assert_string_equal(ng_gpu_check_outcome(&again, none), "n/a");
}

static void test_bounded(void **state)
{
	(void)state;
	/* The most a snapshot holds: 64 GPUs of 32 Xid lines of 159 bytes each. */
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_OK;
	snap.n_gpus = snap.n_listed = NG_GPU_MAX;
	for (int i = 0; i < NG_GPU_MAX; i++) {
		healthy_gpu(&snap.gpu[i], i);
		snprintf(snap.gpu[i].bus, sizeof snap.gpu[i].bus, "0000:%02x:00", i);
		snap.gpu[i].n_xid = NG_GPU_XID_MAX;
		for (int k = 0; k < NG_GPU_XID_MAX; k++) {
			snap.gpu[i].xid[k] = (ng_gpu_xid){.code = 13 + k, .at_usec = k};
			memset(snap.gpu[i].xid[k].message, 'm', sizeof snap.gpu[i].xid[k].message - 1);
		}
		for (size_t l = 0; l < 18; l++) /* no two links alike */
			snap.gpu[i].link[l].crc_errors = ok(l);
	}
	ng_gpu_readings_run run = {.judged = true, .nvml_answered = true};
	char *text = ng_gpu_readings_text(&snap, NULL, 0, run);
	assert_non_null(text);
	assert_true(strlen(text) <= NG_GPU_READINGS_MAX_BYTES);
	/* The lines' text was the part left out; their codes were not. */
	assert_null(strstr(text, "mmmmmmmm"));
	assert_non_null(strstr(text, "\"code\":44"));
	free(text);
	/* An ordinary node: a few KiB, with the lines' text cut where the rules cut it. */
	troubled_node();
	text = ng_gpu_readings_text(&snap, history, 3, run);
	assert_non_null(text);
	assert_true(strlen(text) < 8192);
	assert_non_null(strstr(text, "Graphics SM Warp Exception"));
	assert_null(strstr(text, "NVIDIA H100")); /* the name: no rule reads it */
	free(text);
}

static void test_not_readings_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "[]", "{\"schema\": \"nodegate/gpus/1\"}",
		"{\"schema\": \"nodegate/gpu-readings/1\", \"snapshot\": {}, \"history\": []}",
		("{\"schema\": \"nodegate/gpu-readings/1\", \"snapshot\": {\"schema\": \"nodegate/gpus/1\","
		 " \"nvml\": \"ok\", \"gpus\": [{\"index\": 0, \"nvlink_runs\": [{\"n\": 40, \"link\": {}}]}]},"
		 " \"history\": []}"),
		("{\"schema\": \"nodegate/gpu-readings/1\", \"snapshot\": {\"schema\": \"nodegate/gpus/1\","
		 " \"nvml\": \"ok\", \"gpus\": []}, \"history\": [{\"uuid\": \"GPU-1\"}]}"),
	};
	memset(&readings, 0, sizeof readings);
	readings.snap = &back;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ng_err err;
		assert_int_equal(ng_gpu_readings_read(bad[i], &readings, &err), -1);
		assert_true(err.msg[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_same_verdict_read_back),
		cmocka_unit_test(test_a_failed_nvml_with_the_kernels_gpus),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_not_readings_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
