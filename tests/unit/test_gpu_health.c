/* GPU health rules: every rule, the epilog seed's scenarios, and the node
 * verdict (never a drain on what could not be read). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/policy.h"
#include "judge/gpu_health.h"

/* Large: kept off the stack. */
static ng_gpu_snapshot snap, snap_copy;
static ng_node_health out, out_again;
static ng_policy pol;

static ng_gpu_field ok(uint64_t v) { return (ng_gpu_field){NG_FIELD_OK, v, 0}; }
static ng_gpu_field na(void) { return (ng_gpu_field){NG_FIELD_NOT_SUPPORTED, 0, 3}; }
static ng_gpu_field failed(int code) { return (ng_gpu_field){NG_FIELD_FAILED, 0, code}; }

/* An H100 after a clean job: idle, link at its max, no errors. */
static void healthy_gpu(ng_gpu_state *g, int i)
{
	memset(g, 0, sizeof *g);
	g->index = i;
	snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-0000-0000-%012d", i);
	snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
	snprintf(g->bus, sizeof g->bus, "0000:%02x:00", 0x18 + i);
	g->ecc_volatile_uncorrected = ok(0);
	g->ecc_aggregate_uncorrected = ok(0);
	g->ecc_volatile_corrected = ok(0);
	g->ecc_aggregate_corrected = ok(0);
	g->retired_pages_sbe = na();
	g->retired_pages_dbe = na();
	g->retired_pending = na();
	g->remap_corrected = ok(0);
	g->remap_uncorrected = ok(0);
	g->remap_pending = ok(0);
	g->remap_failed = ok(0);
	g->pcie_gen = ok(5);
	g->pcie_gen_max = ok(5);
	g->pcie_width = ok(16);
	g->pcie_width_max = ok(16);
	g->pcie_replays = ok(9);
	g->clock_reasons = ok(NG_CLK_GPU_IDLE);
	g->temperature_c = ok(35);
	g->sm_clock_mhz = ok(345);
	g->sm_clock_max_mhz = ok(1980);
	g->power_mw = ok(69850);
	g->n_links = 18;
	for (size_t k = 0; k < g->n_links; k++) {
		g->link[k].active = ok(1);
		g->link[k].replay_errors = ok(0);
		g->link[k].recovery_errors = ok(0);
		g->link[k].crc_errors = ok(0);
	}
}

static ng_gpu_state *healthy_node(size_t n)
{
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_OK;
	snprintf(snap.driver, sizeof snap.driver, "590.48.01");
	snprintf(snap.source, sizeof snap.source, "synthetic");
	snap.n_gpus = n;
	for (size_t i = 0; i < n; i++)
		healthy_gpu(&snap.gpu[i], (int)i);
	return &snap.gpu[0];
}

static void add_xid(ng_gpu_state *g, int code, const char *msg)
{
	assert_true(g->n_xid < NG_GPU_XID_MAX);
	ng_gpu_xid *x = &g->xid[g->n_xid++];
	x->code = code;
	x->at_usec = -1;
	snprintf(x->message, sizeof x->message, "%s", msg);
}

static void judge(const ng_gpu_history *h, size_t n)
{
	memset(&out, 0xA5, sizeof out); /* nothing is left from before */
	ng_health_judge(&snap, h, n, &pol, &out);
}

static const ng_health_reason *reason(const ng_gpu_verdict *v, const char *signal)
{
	for (size_t i = 0; i < v->n_reasons; i++)
		if (strcmp(v->reason[i].signal, signal) == 0)
			return &v->reason[i];
	return NULL;
}

static void dump(const ng_gpu_verdict *v)
{
	printf("gpu %d %s: %s\n", v->index, v->bus, ng_health_name(v->severity));
	for (size_t i = 0; i < v->n_reasons; i++)
		printf("  %-10s %-28s %s\n", ng_health_name(v->reason[i].severity), v->reason[i].signal,
		       v->reason[i].text);
}

/* GPU 0 has exactly this severity, and a reason with this signal (and that
 * severity) when signal is given. */
static void expect_gpu(ng_health sev, const char *signal, ng_health reason_sev)
{
	const ng_gpu_verdict *v = &out.gpu[0];
	if (v->severity != sev) {
		dump(v);
		fail_msg("severity %s, want %s", ng_health_name(v->severity), ng_health_name(sev));
	}
	if (signal) {
		const ng_health_reason *r = reason(v, signal);
		if (!r) {
			dump(v);
			fail_msg("no reason %s", signal);
		}
		assert_int_equal(r->severity, reason_sev);
		assert_true(strlen(r->text) > 10);
	}
}

static void expect_node(ng_health sev, bool drain)
{
	if (out.severity != sev || out.drain != drain) {
		for (size_t i = 0; i < out.n_gpus; i++)
			dump(&out.gpu[i]);
		fail_msg("node %s drain %d, want %s drain %d", ng_health_name(out.severity), out.drain,
		         ng_health_name(sev), drain);
	}
}

static int setup(void **state)
{
	(void)state;
	ng_policy_default(&pol);
	return 0;
}

/* ---- names and the catalogue ---------------------------------------------------------- */

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ng_health_name(NG_HEALTH_OK), "ok");
	assert_string_equal(ng_health_name(NG_HEALTH_TRANSIENT), "transient");
	assert_string_equal(ng_health_name(NG_HEALTH_DEGRADED), "degraded");
	assert_string_equal(ng_health_name(NG_HEALTH_FATAL), "fatal");
	assert_string_equal(ng_health_name(NG_HEALTH_UNKNOWN), "unknown");
	assert_string_equal(ng_health_name(NG_HEALTH_COUNT), "invalid");
	assert_string_equal(ng_health_name((ng_health)-1), "invalid");
}

static void test_xid_catalogue(void **state)
{
	(void)state;
	const int hardware[] = {48, 64, 79, 95, 140, 119, 120, 62, 109, 110, 143, 46, 158, 167, 171, 172};
	for (size_t i = 0; i < sizeof hardware / sizeof *hardware; i++) {
		if (ng_xid_classify(hardware[i]) != NG_XID_HARDWARE)
			fail_msg("Xid %d is not hardware", hardware[i]);
		assert_non_null(ng_xid_mnemonic(hardware[i]));
	}
	const int link[] = {74, 136, 144, 145, 146, 147, 148, 149, 150, 155};
	for (size_t i = 0; i < sizeof link / sizeof *link; i++)
		if (ng_xid_classify(link[i]) != NG_XID_LINK)
			fail_msg("Xid %d is not a link Xid", link[i]);
	const int app[] = {8, 13, 31, 43, 45, 68, 69, 94, 137};
	for (size_t i = 0; i < sizeof app / sizeof *app; i++)
		if (ng_xid_classify(app[i]) != NG_XID_APPLICATION)
			fail_msg("Xid %d is not an application Xid", app[i]);
	const int info[] = {63, 92, 121, 154, 156, 160};
	for (size_t i = 0; i < sizeof info / sizeof *info; i++)
		if (ng_xid_classify(info[i]) != NG_XID_INFORMATIONAL)
			fail_msg("Xid %d is not informational", info[i]);
	const int unlisted[] = {0, -1, 1, 61, 200, 999, 100000};
	for (size_t i = 0; i < sizeof unlisted / sizeof *unlisted; i++) {
		assert_int_equal(ng_xid_classify(unlisted[i]), NG_XID_UNLISTED);
		assert_null(ng_xid_mnemonic(unlisted[i]));
	}
	assert_string_equal(ng_xid_mnemonic(79), "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
	assert_string_equal(ng_xid_mnemonic(48), "ROBUST_CHANNEL_GPU_ECC_DBE");
	assert_string_equal(ng_xid_mnemonic(94), "ROBUST_CHANNEL_CONTAINED_ERROR");
}

/* ---- the epilog seed's scenarios, and every rule's own case --------------------------- */

static void sc_healthy(ng_gpu_state *g) { (void)g; }
static void sc_remap_pending(ng_gpu_state *g) { g->remap_pending = ok(1); }
static void sc_thermal(ng_gpu_state *g) { g->clock_reasons = ok(NG_CLK_SW_THERMAL); }
static void sc_hw_thermal(ng_gpu_state *g) { g->clock_reasons = ok(NG_CLK_HW_THERMAL | NG_CLK_HW_SLOWDOWN); }
static void sc_pcie_degraded(ng_gpu_state *g) { g->pcie_width = ok(8); }
static void sc_hw_slowdown(ng_gpu_state *g) { g->clock_reasons = ok(NG_CLK_HW_SLOWDOWN); }
static void sc_power_brake(ng_gpu_state *g) { g->clock_reasons = ok(NG_CLK_HW_SLOWDOWN | NG_CLK_HW_POWER_BRAKE); }
static void sc_ecc(ng_gpu_state *g) { g->ecc_volatile_uncorrected = ok(2); }
static void sc_remap_failure(ng_gpu_state *g) { g->remap_failed = ok(1); }
static void sc_aggregate_only(ng_gpu_state *g)
{
	g->ecc_aggregate_uncorrected = ok(7);
	g->ecc_aggregate_corrected = ok(1234);
	g->ecc_volatile_corrected = ok(3);
}
static void sc_idle_gen_drop(ng_gpu_state *g)
{
	g->pcie_gen = ok(1);
	g->clock_reasons = ok(NG_CLK_GPU_IDLE);
}
static void sc_busy_gen_drop(ng_gpu_state *g)
{
	g->pcie_gen = ok(3);
	g->clock_reasons = ok(NG_CLK_SW_POWER_CAP);
	g->sm_clock_mhz = ok(1755); /* busy: the power cap holds a fast clock */
}
static void sc_xid79(ng_gpu_state *g) { add_xid(g, 79, "GPU has fallen off the bus."); }
static void sc_xid48(ng_gpu_state *g) { add_xid(g, 48, "An uncorrectable double bit error (DBE) has been detected"); }
static void sc_xid13(ng_gpu_state *g) { add_xid(g, 13, "pid=1234, name=python, Graphics Exception"); }
static void sc_xid94(ng_gpu_state *g) { add_xid(g, 94, "Contained: SM (0x1). RST: No, D-RST: No"); }
static void sc_xid63(ng_gpu_state *g) { add_xid(g, 63, "Row Remapper: New row marked for remapping"); }
static void sc_xid74(ng_gpu_state *g) { add_xid(g, 74, "NVLink: fatal error detected on link 14"); }
static void sc_xid145(ng_gpu_state *g) { add_xid(g, 145, "RLW error"); }
static void sc_xid_unlisted(ng_gpu_state *g) { add_xid(g, 201, "something new"); }
static void sc_nvlink_down(ng_gpu_state *g) { g->link[3].active = ok(0); }
static void sc_lost(ng_gpu_state *g)
{
	g->lost = true;
	g->ecc_volatile_uncorrected = failed(15);
	g->pcie_width = failed(15);
	g->clock_reasons = failed(15);
}
static void sc_replays_absolute(ng_gpu_state *g) { g->pcie_replays = ok(1000001); }
static void sc_replays_at_limit(ng_gpu_state *g) { g->pcie_replays = ok(1000000); }
static void sc_retired_pending(ng_gpu_state *g)
{
	g->retired_pages_sbe = ok(2);
	g->retired_pages_dbe = ok(0);
	g->retired_pending = ok(1);
	g->remap_pending = na();
	g->remap_failed = na();
	g->remap_corrected = na();
	g->remap_uncorrected = na();
}
static void sc_consumer(ng_gpu_state *g)
{
	/* a GPU without ECC, retirement, remapping or NVLink */
	g->ecc_volatile_uncorrected = na();
	g->ecc_aggregate_uncorrected = na();
	g->ecc_volatile_corrected = na();
	g->ecc_aggregate_corrected = na();
	g->remap_corrected = g->remap_uncorrected = g->remap_pending = g->remap_failed = na();
	g->n_links = 0;
}

static void test_scenarios(void **state)
{
	(void)state;
	const struct {
		const char *name;
		void (*mutate)(ng_gpu_state *);
		ng_health severity;
		bool drain;
		const char *signal;
		ng_health reason_severity;
	} cases[] = {
		{"healthy", sc_healthy, NG_HEALTH_OK, false, NULL, 0},
		{"remap-pending", sc_remap_pending, NG_HEALTH_TRANSIENT, false, "remap.pending", NG_HEALTH_TRANSIENT},
		{"thermal", sc_thermal, NG_HEALTH_TRANSIENT, false, "clock.sw_thermal", NG_HEALTH_TRANSIENT},
		{"hw thermal slowdown", sc_hw_thermal, NG_HEALTH_TRANSIENT, false, "clock.hw_thermal", NG_HEALTH_TRANSIENT},
		{"pcie-degraded", sc_pcie_degraded, NG_HEALTH_DEGRADED, true, "pcie.width", NG_HEALTH_DEGRADED},
		{"hw-slowdown", sc_hw_slowdown, NG_HEALTH_DEGRADED, true, "clock.hw_slowdown", NG_HEALTH_DEGRADED},
		{"power brake", sc_power_brake, NG_HEALTH_DEGRADED, true, "clock.hw_power_brake", NG_HEALTH_DEGRADED},
		{"ecc", sc_ecc, NG_HEALTH_FATAL, true, "ecc.volatile_uncorrected", NG_HEALTH_FATAL},
		{"remap-failure", sc_remap_failure, NG_HEALTH_FATAL, true, "remap.failed", NG_HEALTH_FATAL},
		{"aggregate-only", sc_aggregate_only, NG_HEALTH_OK, false, NULL, 0},
		{"idle gen drop", sc_idle_gen_drop, NG_HEALTH_OK, false, NULL, 0},
		{"gen drop under load", sc_busy_gen_drop, NG_HEALTH_DEGRADED, true, "pcie.gen", NG_HEALTH_DEGRADED},
		{"xid 79", sc_xid79, NG_HEALTH_FATAL, true, "xid.79", NG_HEALTH_FATAL},
		{"xid 48", sc_xid48, NG_HEALTH_FATAL, true, "xid.48", NG_HEALTH_FATAL},
		{"xid 13", sc_xid13, NG_HEALTH_TRANSIENT, false, "xid.13", NG_HEALTH_TRANSIENT},
		{"xid 94 contained", sc_xid94, NG_HEALTH_TRANSIENT, false, "xid.94", NG_HEALTH_TRANSIENT},
		{"xid 63 informational", sc_xid63, NG_HEALTH_TRANSIENT, false, "xid.63", NG_HEALTH_TRANSIENT},
		{"xid 74 nvlink", sc_xid74, NG_HEALTH_DEGRADED, true, "xid.74", NG_HEALTH_DEGRADED},
		{"xid 145 nvlink5", sc_xid145, NG_HEALTH_DEGRADED, true, "xid.145", NG_HEALTH_DEGRADED},
		{"xid unlisted", sc_xid_unlisted, NG_HEALTH_TRANSIENT, false, "xid.unlisted", NG_HEALTH_TRANSIENT},
		{"nvlink down", sc_nvlink_down, NG_HEALTH_DEGRADED, true, "nvlink.down", NG_HEALTH_DEGRADED},
		{"lost", sc_lost, NG_HEALTH_FATAL, true, "gpu.lost", NG_HEALTH_FATAL},
		{"replays above the absolute", sc_replays_absolute, NG_HEALTH_DEGRADED, true, "pcie.replays",
		 NG_HEALTH_DEGRADED},
		{"replays at the absolute", sc_replays_at_limit, NG_HEALTH_OK, false, NULL, 0},
		{"retired page pending", sc_retired_pending, NG_HEALTH_TRANSIENT, false, "retired_pages.pending",
		 NG_HEALTH_TRANSIENT},
		{"consumer GPU", sc_consumer, NG_HEALTH_OK, false, NULL, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		printf("-- %s\n", cases[i].name);
		ng_gpu_state *g = healthy_node(2);
		cases[i].mutate(g);
		judge(NULL, 0);
		assert_int_equal(out.n_gpus, 2);
		expect_gpu(cases[i].severity, cases[i].signal, cases[i].reason_severity);
		if (!cases[i].signal && out.gpu[0].n_reasons) {
			dump(&out.gpu[0]);
			fail_msg("%s: reasons where none were wanted", cases[i].name);
		}
		assert_int_equal(out.gpu[1].severity, NG_HEALTH_OK);
		assert_int_equal(out.gpu[1].n_reasons, 0);
		expect_node(cases[i].severity, cases[i].drain);
		assert_string_equal(out.unknown_why, "");
		assert_false(out.gpu[0].reasons_truncated);
		assert_string_equal(out.gpu[0].uuid, g->uuid);
		assert_string_equal(out.gpu[0].bus, "0000:18:00");
		assert_int_equal(out.gpu[1].index, 1);
	}
}

static void test_power_brake_said_once(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->sm_clock_mhz = ok(1980);
	g->clock_reasons = ok(NG_CLK_HW_SLOWDOWN | NG_CLK_HW_POWER_BRAKE);
	judge(NULL, 0);
	assert_int_equal(out.gpu[0].n_reasons, 1);
	assert_null(reason(&out.gpu[0], "clock.hw_slowdown"));
	/* a child bit set while its parent reads Not Active (535's layout) */
	g->clock_reasons = ok(NG_CLK_HW_POWER_BRAKE);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "clock.hw_power_brake", NG_HEALTH_DEGRADED);
	/* power brake and heat: degraded, with both reasons */
	g->clock_reasons = ok(NG_CLK_HW_SLOWDOWN | NG_CLK_HW_POWER_BRAKE | NG_CLK_HW_THERMAL);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "clock.hw_thermal", NG_HEALTH_TRANSIENT);
	assert_non_null(reason(&out.gpu[0], "clock.hw_power_brake"));
	/* the power cap and sync boost are how a busy GPU runs */
	g->clock_reasons = ok(NG_CLK_SW_POWER_CAP | 0x10);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

/* ---- what could not be read ----------------------------------------------------------- */

static void test_failed_fields_are_unknown(void **state)
{
	(void)state;
	static const struct {
		size_t off;
		const char *signal;
	} fields[] = {
		{offsetof(ng_gpu_state, ecc_volatile_uncorrected), "ecc.volatile_uncorrected"},
		{offsetof(ng_gpu_state, remap_failed), "remap.failed"},
		{offsetof(ng_gpu_state, remap_pending), "remap.pending"},
		{offsetof(ng_gpu_state, pcie_width), "pcie.width"},
		{offsetof(ng_gpu_state, pcie_width_max), "pcie.width"},
		{offsetof(ng_gpu_state, pcie_gen), "pcie.gen"},
		{offsetof(ng_gpu_state, pcie_gen_max), "pcie.gen"},
		{offsetof(ng_gpu_state, pcie_replays), "pcie.replays"},
		{offsetof(ng_gpu_state, clock_reasons), "clock.reasons"},
	};
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
		for (int how = 0; how < 2; how++) {
			ng_gpu_state *g = healthy_node(2);
			ng_gpu_field *f = (ng_gpu_field *)((char *)g + fields[i].off);
			*f = how == 0 ? failed(999) : (ng_gpu_field){NG_FIELD_UNREAD, 0, 0};
			judge(NULL, 0);
			expect_gpu(NG_HEALTH_UNKNOWN, fields[i].signal, NG_HEALTH_UNKNOWN);
			/* all ok but one unknown: unknown, and no drain */
			expect_node(NG_HEALTH_UNKNOWN, false);
			if (how == 0)
				assert_non_null(strstr(reason(&out.gpu[0], fields[i].signal)->text, "NVML return 999"));
		}
	}
	/* not supported: the rule does not apply */
	ng_gpu_state *g = healthy_node(1);
	g->pcie_replays = na();
	g->ecc_volatile_uncorrected = na();
	g->clock_reasons = na();
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	assert_int_equal(out.gpu[0].n_reasons, 0);

	/* ... but a GPU that supports none of them is not ok: nothing was read */
	sc_consumer(g);
	g->pcie_gen = g->pcie_gen_max = g->pcie_width = g->pcie_width_max = na();
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_UNKNOWN, "gpu.read", NG_HEALTH_UNKNOWN);
	assert_int_equal(out.gpu[0].n_reasons, 1);
	expect_node(NG_HEALTH_UNKNOWN, false);
	g->n_links = 2; /* one link read is something */
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

static void test_definite_beats_unknown(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->ecc_volatile_uncorrected = failed(999);
	g->clock_reasons = ok(NG_CLK_SW_THERMAL);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_TRANSIENT, "ecc.volatile_uncorrected", NG_HEALTH_UNKNOWN);
	expect_node(NG_HEALTH_TRANSIENT, false);

	g->pcie_width = ok(4);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "pcie.width", NG_HEALTH_DEGRADED);
	expect_node(NG_HEALTH_DEGRADED, true);
}

static void test_memory_repair_sources(void **state)
{
	(void)state;
	/* nvidia-smi before Ampere: retired pages shown, no "Remapped Rows" */
	ng_gpu_state *g = healthy_node(1);
	g->remap_corrected = g->remap_uncorrected = g->remap_pending = g->remap_failed =
	    (ng_gpu_field){NG_FIELD_UNREAD, 0, 0};
	g->retired_pages_sbe = ok(0);
	g->retired_pages_dbe = ok(0);
	g->retired_pending = ok(0);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	/* neither shown: unknown */
	g->retired_pending = (ng_gpu_field){NG_FIELD_UNREAD, 0, 0};
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_UNKNOWN, "memory.repair", NG_HEALTH_UNKNOWN);
	assert_int_equal(out.gpu[0].n_reasons, 1);
	/* remap shown, retirement not: fine */
	healthy_node(1);
	snap.gpu[0].retired_pending = (ng_gpu_field){NG_FIELD_UNREAD, 0, 0};
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

static void test_gen_drop_needs_idle_state(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->pcie_gen = ok(2);
	g->clock_reasons = failed(999);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_UNKNOWN, "pcie.gen", NG_HEALTH_UNKNOWN);
	expect_node(NG_HEALTH_UNKNOWN, false);
	g->clock_reasons = na();
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_UNKNOWN, "pcie.gen", NG_HEALTH_UNKNOWN);
	/* gen above max (a host that reports less than the GPU) is not a drop */
	g->pcie_gen = ok(5);
	g->pcie_gen_max = ok(4);
	g->clock_reasons = ok(0);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

static void test_gpu_read_error(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(2);
	snprintf(g->error, sizeof g->error, "nvmlDeviceGetHandleByIndex: Unknown Error");
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_UNKNOWN, "gpu.read", NG_HEALTH_UNKNOWN);
	assert_non_null(strstr(reason(&out.gpu[0], "gpu.read")->text, "Unknown Error"));
	expect_node(NG_HEALTH_UNKNOWN, false);
}

static void test_lost_gpu_skips_fields_keeps_xids(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	sc_lost(g);
	add_xid(g, 79, "GPU has fallen off the bus.");
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_FATAL, "gpu.lost", NG_HEALTH_FATAL);
	assert_non_null(reason(&out.gpu[0], "xid.79"));
	assert_int_equal(out.gpu[0].n_reasons, 2); /* no unknowns for the fields */
}

/* ---- the node ----------------------------------------------------------------------- */

static void test_node_nvml_failed(void **state)
{
	(void)state;
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_FAILED;
	snprintf(snap.nvml_error, sizeof snap.nvml_error, "dlopen libnvidia-ml.so.1: cannot open shared object file");
	judge(NULL, 0);
	expect_node(NG_HEALTH_UNKNOWN, false);
	assert_int_equal(out.n_gpus, 0);
	assert_non_null(strstr(out.unknown_why, "libnvidia-ml.so.1"));

	/* failed without words, and never read */
	snap.nvml_error[0] = '\0';
	judge(NULL, 0);
	expect_node(NG_HEALTH_UNKNOWN, false);
	assert_string_equal(out.unknown_why, "NVML failed");
	snap.nvml = NG_FIELD_UNREAD;
	judge(NULL, 0);
	expect_node(NG_HEALTH_UNKNOWN, false);
	assert_string_equal(out.unknown_why, "NVML was not read");

	/* GPUs in a failed snapshot are not judged */
	healthy_node(2);
	snap.gpu[0].ecc_volatile_uncorrected = ok(5);
	snap.nvml = NG_FIELD_FAILED;
	judge(NULL, 0);
	expect_node(NG_HEALTH_UNKNOWN, false);
	assert_int_equal(out.n_gpus, 0);
}

static void test_node_zero_gpus(void **state)
{
	(void)state;
	healthy_node(0);
	judge(NULL, 0);
	expect_node(NG_HEALTH_UNKNOWN, false);
	assert_int_equal(out.n_gpus, 0);
	assert_non_null(strstr(out.unknown_why, "NVML reported no GPUs"));
}

static void test_node_mixes(void **state)
{
	(void)state;
	/* one fatal and one unreadable GPU: fatal, drain */
	healthy_node(3);
	snap.gpu[0].ecc_volatile_uncorrected = ok(1);
	snap.gpu[1].ecc_volatile_uncorrected = failed(15);
	snap.gpu[1].clock_reasons = failed(15);
	judge(NULL, 0);
	expect_node(NG_HEALTH_FATAL, true);
	assert_int_equal(out.gpu[0].severity, NG_HEALTH_FATAL);
	assert_int_equal(out.gpu[1].severity, NG_HEALTH_UNKNOWN);
	assert_int_equal(out.gpu[2].severity, NG_HEALTH_OK);

	/* all ok but one unknown: unknown, no drain */
	healthy_node(8);
	snap.gpu[5].remap_failed = failed(999);
	judge(NULL, 0);
	expect_node(NG_HEALTH_UNKNOWN, false);
	assert_int_equal(out.gpu[5].severity, NG_HEALTH_UNKNOWN);
	assert_int_equal(out.n_gpus, 8);

	/* transient and unknown: transient, no drain */
	snap.gpu[2].remap_pending = ok(1);
	judge(NULL, 0);
	expect_node(NG_HEALTH_TRANSIENT, false);

	/* degraded on the last GPU drains */
	snap.gpu[7].pcie_width = ok(8);
	judge(NULL, 0);
	expect_node(NG_HEALTH_DEGRADED, true);
	assert_int_equal(out.gpu[7].index, 7);

	/* more GPUs claimed than the snapshot holds: judged up to its size */
	healthy_node(NG_GPU_MAX);
	snap.n_gpus = 1000;
	judge(NULL, 0);
	assert_int_equal(out.n_gpus, NG_GPU_MAX);
	expect_node(NG_HEALTH_OK, false);
}

/* ---- rates against the history -------------------------------------------------------- */

static void test_replay_storm_history(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(2);
	g->pcie_replays = ok(100 + 50000);
	ng_gpu_history h[] = {
		{"GPU-elsewhere", 2, 0, 0, 0, 0, 0, 0, 0},
		{g->uuid, 2.0, 0, 0, 100, 0, 0, 0, 0},
	};
	judge(h, 2);
	/* 50000 in 2 h, taken over at least 24 h: 2083 an hour, above 1000 */
	expect_gpu(NG_HEALTH_DEGRADED, "rate.pcie_replays", NG_HEALTH_DEGRADED);
	expect_node(NG_HEALTH_DEGRADED, true);
	assert_non_null(strstr(reason(&out.gpu[0], "rate.pcie_replays")->text, "50000"));

	/* the same rise over 72 h is 694 an hour */
	h[1].hours_ago = 72;
	judge(h, 2);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	/* no history for this GPU: no rate */
	judge(h, 1);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	judge(NULL, 5);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	/* an interval that is no interval */
	const double bad_hours[] = {0, -3, NAN, INFINITY};
	for (size_t i = 0; i < 4; i++) {
		h[1].hours_ago = bad_hours[i];
		judge(h, 2);
		expect_gpu(NG_HEALTH_OK, NULL, 0);
	}
	/* a counter that was not read back then gives no rate, whatever it holds */
	h[1].hours_ago = 2.0;
	h[1].unread = NG_HIST_UNREAD_PCIE_REPLAYS;
	judge(h, 2);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	h[1].unread = 0;
	/* a counter below its history was reset: what it holds is new */
	h[1].hours_ago = 1;
	h[1].pcie_replays = 1u << 30;
	g->pcie_replays = ok(30000);
	judge(h, 2);
	expect_gpu(NG_HEALTH_DEGRADED, "rate.pcie_replays", NG_HEALTH_DEGRADED);
	/* a history without a uuid matches nothing */
	ng_gpu_history anon = {NULL, 1, 0, 0, 0, 0, 0, 0, 0};
	judge(&anon, 1);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

static void test_rates_pages_rows_links(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	ng_gpu_history h = {g->uuid, 2.0, 10, 4, 9, 100, 0, 0, 0};

	/* one remapped row soon after: one event is not a rate */
	g->remap_corrected = ok(5);
	judge(&h, 1);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	/* two within a day is */
	g->remap_corrected = ok(6);
	judge(&h, 1);
	expect_gpu(NG_HEALTH_DEGRADED, "rate.remapped_rows", NG_HEALTH_DEGRADED);
	/* a row remapped for an uncorrectable error is degraded by itself */
	g->remap_corrected = ok(4);
	g->remap_uncorrected = ok(1);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "remap.uncorrectable", NG_HEALTH_DEGRADED);
	g->remap_uncorrected = ok(0);

	/* retired pages (older GPUs) */
	healthy_node(1);
	g->retired_pages_sbe = ok(11);
	g->retired_pages_dbe = ok(1);
	judge(&h, 1);
	expect_gpu(NG_HEALTH_DEGRADED, "rate.retired_pages", NG_HEALTH_DEGRADED);
	g->retired_pages_dbe = failed(999);
	judge(&h, 1);
	expect_gpu(NG_HEALTH_UNKNOWN, "rate.retired_pages", NG_HEALTH_UNKNOWN);
	/* not supported: no rate (the history's count is ignored) */
	g->retired_pages_sbe = na();
	g->retired_pages_dbe = na();
	judge(&h, 1);
	expect_gpu(NG_HEALTH_OK, NULL, 0);

	/* NVLink errors, summed over every link */
	healthy_node(1);
	g->link[0].crc_errors = ok(100);
	g->link[17].replay_errors = ok(30000);
	judge(&h, 1);
	expect_gpu(NG_HEALTH_DEGRADED, "rate.nvlink_errors", NG_HEALTH_DEGRADED);
	pol.health_nvlink_errors_per_hour = 2000;
	judge(&h, 1);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	g->link[4].recovery_errors = failed(999);
	judge(&h, 1);
	expect_gpu(NG_HEALTH_UNKNOWN, "rate.nvlink_errors", NG_HEALTH_UNKNOWN);

	/* the policy's window */
	ng_policy_default(&pol);
	healthy_node(1);
	g->remap_corrected = ok(6);
	pol.health_rate_min_hours = 1;
	judge(&h, 1); /* 2 rows in 2 h: 24 a day */
	expect_gpu(NG_HEALTH_DEGRADED, "rate.remapped_rows", NG_HEALTH_DEGRADED);
	pol.health_remapped_rows_per_day = 24;
	judge(&h, 1);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

/* ---- Xids --------------------------------------------------------------------------- */

static void test_xid_bursts_and_truncation(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	for (int i = 0; i < 16; i++)
		add_xid(g, 13, "Graphics SM Warp Exception on (GPC 9, TPC 1, SM 1): Out Of Range Address");
	add_xid(g, 43, "pid=2924364, name=pt_main_thread: Ch 00000008");
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_TRANSIENT, "xid.13", NG_HEALTH_TRANSIENT);
	assert_int_equal(out.gpu[0].n_reasons, 2);
	assert_non_null(strstr(reason(&out.gpu[0], "xid.13")->text, "16 times"));
	assert_non_null(strstr(reason(&out.gpu[0], "xid.43")->text, "pt_main_thread"));

	/* more findings than reasons: the worst is kept, and it says so */
	healthy_node(1);
	for (int i = 0; i < 20; i++)
		add_xid(g, 200 + i, "unlisted");
	g->pcie_width = failed(999);
	add_xid(g, 95, "Uncontained: LTC TAG (0x2,0x1). RST: Yes, D-RST: No");
	judge(NULL, 0);
	assert_int_equal(out.gpu[0].n_reasons, NG_HEALTH_REASONS_MAX);
	assert_true(out.gpu[0].reasons_truncated);
	expect_gpu(NG_HEALTH_FATAL, "xid.95", NG_HEALTH_FATAL);
	expect_node(NG_HEALTH_FATAL, true);
	assert_non_null(strstr(reason(&out.gpu[0], "xid.unlisted")->text, "Xid 2"));

	/* a count beyond the array is read as the array */
	healthy_node(1);
	for (int i = 0; i < NG_GPU_XID_MAX; i++)
		add_xid(g, 13, "");
	g->n_xid = 1000;
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_TRANSIENT, "xid.13", NG_HEALTH_TRANSIENT);
	assert_non_null(strstr(reason(&out.gpu[0], "xid.13")->text, "32 times"));
}

/* ---- reported, not judged ------------------------------------------------------------- */

static void test_clock_ratio_reported(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->clock_reasons = ok(NG_CLK_SW_POWER_CAP);
	g->sm_clock_mhz = ok(990);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, "clock.under_load", NG_HEALTH_OK);
	expect_node(NG_HEALTH_OK, false);
	assert_non_null(strstr(reason(&out.gpu[0], "clock.under_load")->text, "990 of 1980 MHz"));
	/* idle, above the ratio, or no limit: nothing */
	g->clock_reasons = ok(NG_CLK_SW_POWER_CAP | NG_CLK_GPU_IDLE);
	judge(NULL, 0);
	assert_int_equal(out.gpu[0].n_reasons, 0);
	g->clock_reasons = ok(0);
	judge(NULL, 0);
	assert_int_equal(out.gpu[0].n_reasons, 0);
	g->clock_reasons = ok(NG_CLK_SW_POWER_CAP);
	g->sm_clock_mhz = ok(1500);
	judge(NULL, 0);
	assert_int_equal(out.gpu[0].n_reasons, 0);
	pol.health_clock_ratio_under_load = 0.8;
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, "clock.under_load", NG_HEALTH_OK);
	/* with thermal slowdown: the thermal finding decides */
	g->clock_reasons = ok(NG_CLK_SW_THERMAL);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_TRANSIENT, "clock.under_load", NG_HEALTH_OK);
	/* a max clock of 0 or unread: nothing */
	g->sm_clock_max_mhz = ok(0);
	judge(NULL, 0);
	assert_null(reason(&out.gpu[0], "clock.under_load"));
	g->sm_clock_max_mhz = failed(999);
	judge(NULL, 0);
	assert_null(reason(&out.gpu[0], "clock.under_load"));
	ng_policy_default(&pol);
}

static void test_policy_thresholds(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->pcie_replays = ok(5001);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	pol.health_replays_absolute = 5000;
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "pcie.replays", NG_HEALTH_DEGRADED);
	ng_policy_default(&pol);
}

static void test_pure(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(4);
	g->pcie_width = ok(8);
	add_xid(&snap.gpu[2], 79, "GPU has fallen off the bus.");
	snap.gpu[3].clock_reasons = failed(999);
	memcpy(&snap_copy, &snap, sizeof snap);
	ng_health_judge(&snap, NULL, 0, &pol, &out);
	ng_health_judge(&snap, NULL, 0, &pol, &out_again);
	assert_memory_equal(&snap, &snap_copy, sizeof snap);
	/* What a judgement holds: its header, its verdicts, why it is unknown
	 * (the verdicts past n_gpus are left as they were, never read). */
	assert_int_equal(out.n_gpus, 4);
	assert_memory_equal(&out, &out_again, offsetof(ng_node_health, gpu));
	assert_memory_equal(out.gpu, out_again.gpu, out.n_gpus * sizeof out.gpu[0]);
	assert_memory_equal(out.unknown_why, out_again.unknown_why, sizeof out.unknown_why);
}

/* A judgement leaves nothing of an earlier one: the same snapshot judged
 * into an output that held a larger node's verdicts reads the same. */
static void test_no_leftovers(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(8);
	for (int i = 0; i < 8; i++)
		snap.gpu[i].pcie_width = ok(8);
	(void)g;
	ng_health_judge(&snap, NULL, 0, &pol, &out);
	assert_int_equal(out.n_gpus, 8);
	assert_int_not_equal(out.severity, NG_HEALTH_OK);
	healthy_node(2);
	ng_health_judge(&snap, NULL, 0, &pol, &out);
	assert_int_equal(out.n_gpus, 2);
	assert_int_equal(out.severity, NG_HEALTH_OK);
	for (size_t i = 0; i < out.n_gpus; i++)
		assert_int_equal(out.gpu[i].n_reasons, 0);
	assert_false(out.drain);
}

/* Idle is nothing running and the GPU at rest, whatever the event reasons
 * say: an idle A40 reports SW power cap and not GPU_IDLE. */
static void test_idle_really_idle(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->pcie_gen = ok(1);
	g->pcie_gen_max = ok(4);
	g->clock_reasons = ok(NG_CLK_SW_POWER_CAP);
	g->pstate = ok(8);
	g->utilization_gpu = ok(0);
	g->processes = ok(0);
	g->sm_clock_mhz = ok(210);
	g->sm_clock_max_mhz = ok(1740);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	/* P0 and a fast clock: the clock floor and the P-state both say busy */
	g->pstate = ok(0);
	g->sm_clock_mhz = ok(1740);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "pcie.gen", NG_HEALTH_DEGRADED);
	/* P8 and a resident process doing nothing (0%): the link rests with the
	 * power state, not with the process list */
	g->pstate = ok(8);
	g->processes = ok(1);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	/* utilization above 0: busy, whatever GPU_IDLE says */
	g->processes = ok(0);
	g->utilization_gpu = ok(40);
	g->clock_reasons = ok(NG_CLK_GPU_IDLE);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "pcie.gen", NG_HEALTH_DEGRADED);
	/* nothing that tells: unknown, never degraded */
	g->utilization_gpu = failed(999);
	g->pstate = failed(999);
	g->clock_reasons = failed(999);
	judge(NULL, 0);
	assert_non_null(reason(&out.gpu[0], "pcie.gen"));
	assert_int_equal(reason(&out.gpu[0], "pcie.gen")->severity, NG_HEALTH_UNKNOWN);
}

/* HW thermal slowdown: transient once under load; degraded when idle or
 * when the last check saw it too. */
static void test_hw_thermal_persistence(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(1);
	g->clock_reasons = ok(NG_CLK_HW_THERMAL);
	g->utilization_gpu = ok(90);
	g->pstate = ok(0);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_TRANSIENT, "clock.hw_thermal", NG_HEALTH_TRANSIENT);
	assert_int_equal(out.gpu[0].hw_thermal_run, 1);
	ng_gpu_history h = {g->uuid, NAN, 0, 0, 0, 0, 0xf, 0, 1};
	judge(&h, 1);
	expect_gpu(NG_HEALTH_DEGRADED, "clock.hw_thermal", NG_HEALTH_DEGRADED);
	assert_int_equal(out.gpu[0].hw_thermal_run, 2);
	g->utilization_gpu = ok(0);
	g->pstate = ok(8);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "clock.hw_thermal", NG_HEALTH_DEGRADED);
	/* at rest, but a process is there: not idle, transient once */
	g->processes = ok(1);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_TRANSIENT, "clock.hw_thermal", NG_HEALTH_TRANSIENT);
	g->processes = ok(0);
	g->clock_reasons = ok(0);
	judge(&h, 1);
	assert_int_equal(out.gpu[0].hw_thermal_run, 0);
}

/* The seed validator's rows: correctable ECC spikes, a sibling outlier,
 * and what a job left behind (epilog only). */
static void test_validator_rows(void **state)
{
	(void)state;
	ng_gpu_state *g = healthy_node(4);
	g->ecc_volatile_corrected = ok(1001);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "ecc.volatile_corrected", NG_HEALTH_DEGRADED);
	g->ecc_volatile_corrected = ok(1000);
	judge(NULL, 0);
	assert_null(reason(&out.gpu[0], "ecc.volatile_corrected"));
	/* far above its siblings (which read 0): degraded below the count */
	g->ecc_volatile_corrected = ok(400);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "ecc.corrected_outlier", NG_HEALTH_DEGRADED);
	/* siblings that read about as much: no outlier */
	for (int i = 1; i < 4; i++)
		snap.gpu[i].ecc_volatile_corrected = ok(300);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
	healthy_node(2);
	g->processes = ok(2);
	g->pid[0] = 4242;
	g->pid[1] = 4243;
	g->n_pids = 2;
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0); /* a health check: a running job is no fault */
	snap.after_job = true;
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "gpu.processes", NG_HEALTH_DEGRADED);
	assert_non_null(strstr(reason(&out.gpu[0], "gpu.processes")->text, "4242, 4243"));
	g->processes = ok(0);
	g->n_pids = 0;
	g->memory_used_mib = ok(5000);
	g->memory_total_mib = ok(81559);
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_DEGRADED, "gpu.memory_used", NG_HEALTH_DEGRADED);
	g->memory_used_mib = ok(4000); /* under 5% */
	judge(NULL, 0);
	expect_gpu(NG_HEALTH_OK, NULL, 0);
}

/* One GPU answers nothing while its sibling answers: unresponsive, then
 * degraded at health.unresponsive_checks; a node where nothing answers is
 * not. */
static void test_unresponsive(void **state)
{
	(void)state;
	healthy_node(2);
	ng_gpu_state *g = &snap.gpu[1];
	ng_gpu_state keep = *g;
	memset(g, 0, sizeof *g);
	g->index = 1;
	snprintf(g->uuid, sizeof g->uuid, "%s", keep.uuid);
	g->ecc_volatile_uncorrected = failed(999);
	g->pcie_gen = failed(999);
	judge(NULL, 0);
	assert_int_equal(out.gpu[1].severity, NG_HEALTH_UNRESPONSIVE);
	assert_int_equal(out.severity, NG_HEALTH_UNRESPONSIVE);
	assert_false(out.drain);
	assert_int_equal(out.gpu[1].unresponsive_run, 1);
	ng_gpu_history h = {g->uuid, NAN, 0, 0, 0, 0, 0xf, 2, 0};
	judge(&h, 1);
	assert_int_equal(out.gpu[1].severity, NG_HEALTH_DEGRADED);
	assert_true(out.drain);
	/* the sibling answers nothing either: unknown, whatever the history */
	snap.gpu[0] = *g;
	snprintf(snap.gpu[0].uuid, sizeof snap.gpu[0].uuid, "GPU-other");
	judge(&h, 1);
	assert_int_equal(out.gpu[1].severity, NG_HEALTH_UNKNOWN);
	assert_false(out.drain);
}

/* Ghosts: a GPU NVML does not list is fatal when missing; with NVML down
 * only its Xids count; a caused-by Xid takes its cause's class. */
static void test_missing_and_unanswered(void **state)
{
	(void)state;
	healthy_node(2);
	ng_gpu_state *g = &snap.gpu[1];
	memset(g, 0, sizeof *g);
	g->presence = NG_GPU_MISSING;
	snprintf(g->bus, sizeof g->bus, "0000:5d:00");
	snprintf(g->seen_by, sizeof g->seen_by, "the kernel");
	judge(NULL, 0);
	assert_int_equal(out.gpu[1].severity, NG_HEALTH_FATAL);
	assert_string_equal(out.gpu[1].reason[0].signal, "gpu.missing");
	assert_true(out.drain);
	/* NVML failed: its listed GPUs are not judged, the unanswered ones on Xids alone */
	snap.nvml = NG_FIELD_FAILED;
	g->presence = NG_GPU_UNANSWERED;
	judge(NULL, 0);
	assert_int_equal(out.n_gpus, 1);
	expect_node(NG_HEALTH_UNKNOWN, false);
	add_xid(g, 79, "GPU has fallen off the bus.");
	judge(NULL, 0);
	expect_node(NG_HEALTH_FATAL, true);
	g->n_xid = 0;
	add_xid(g, 45, "Ch 00000010");
	g->xid[0].cause = 149;
	judge(NULL, 0);
	expect_node(NG_HEALTH_DEGRADED, true);
	assert_non_null(strstr(out.gpu[0].reason[1].text, "caused by Xid 149 NVLINK_NETIR_ERROR"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_names, setup),
		cmocka_unit_test_setup(test_xid_catalogue, setup),
		cmocka_unit_test_setup(test_scenarios, setup),
		cmocka_unit_test_setup(test_power_brake_said_once, setup),
		cmocka_unit_test_setup(test_failed_fields_are_unknown, setup),
		cmocka_unit_test_setup(test_definite_beats_unknown, setup),
		cmocka_unit_test_setup(test_memory_repair_sources, setup),
		cmocka_unit_test_setup(test_gen_drop_needs_idle_state, setup),
		cmocka_unit_test_setup(test_gpu_read_error, setup),
		cmocka_unit_test_setup(test_lost_gpu_skips_fields_keeps_xids, setup),
		cmocka_unit_test_setup(test_node_nvml_failed, setup),
		cmocka_unit_test_setup(test_node_zero_gpus, setup),
		cmocka_unit_test_setup(test_node_mixes, setup),
		cmocka_unit_test_setup(test_replay_storm_history, setup),
		cmocka_unit_test_setup(test_rates_pages_rows_links, setup),
		cmocka_unit_test_setup(test_idle_really_idle, setup),
		cmocka_unit_test_setup(test_hw_thermal_persistence, setup),
		cmocka_unit_test_setup(test_validator_rows, setup),
		cmocka_unit_test_setup(test_unresponsive, setup),
		cmocka_unit_test_setup(test_missing_and_unanswered, setup),
		cmocka_unit_test_setup(test_xid_bursts_and_truncation, setup),
		cmocka_unit_test_setup(test_clock_ratio_reported, setup),
		cmocka_unit_test_setup(test_policy_thresholds, setup),
		cmocka_unit_test_setup(test_pure, setup),
		cmocka_unit_test_setup(test_no_leftovers, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
