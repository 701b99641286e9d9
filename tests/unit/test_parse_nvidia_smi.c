/* nvidia-smi -q text into a GPU snapshot: every layout from 410 to 590,
 * N/A is never 0, an unreadable value is never a fault, and whatever is not
 * a dump is refused with a reason. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/policy.h"
#include "judge/gpu_health.h"
#include "parse/nvidia_smi.h"

static ng_gpu_snapshot snap;
static ng_node_health health;

static int parse(const char *text, ng_err *err)
{
	memset(&snap, 0x5A, sizeof snap);
	return ng_nvidia_smi_parse(text, strlen(text), &snap, err);
}

static void parse_ok(const char *text)
{
	ng_err err = {0};
	if (parse(text, &err) != 0)
		fail_msg("refused: %s", err.msg);
	assert_string_equal(snap.source, "nvidia-smi");
}

static void expect_field(const ng_gpu_field *f, ng_field_state st, uint64_t value)
{
	if (f->state != st || f->value != value)
		fail_msg("field state %d value %llu, want state %d value %llu", f->state, (unsigned long long)f->value,
		         st, (unsigned long long)value);
}

#define OK_(f, v) expect_field(&(f), NG_FIELD_OK, (v))
#define NA_(f) expect_field(&(f), NG_FIELD_NOT_SUPPORTED, 0)
#define FAILED_(f) expect_field(&(f), NG_FIELD_FAILED, 0)
#define UNREAD_(f) expect_field(&(f), NG_FIELD_UNREAD, 0)

static void judge(void)
{
	ng_policy pol;
	ng_policy_default(&pol);
	ng_health_judge(&snap, NULL, 0, &pol, &health);
}

/* ---- layouts ------------------------------------------------------------------------ */

/* 535 and later: Clocks Event Reasons, SRAM/DRAM ECC, remapped rows. */
static const char DUMP_535[] =
	"\n==============NVSMI LOG==============\n\n"
	"Timestamp                                 : Wed Jul 31 11:22:39 2024\n"
	"Driver Version                            : 535.161.08\n"
	"CUDA Version                              : 12.2\n\n"
	"Attached GPUs                             : 2\n"
	"GPU 00000000:19:00.0\n"
	"    Product Name                          : NVIDIA H100 80GB HBM3\n"
	"    GPU UUID                              : GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa\n"
	"    PCI\n"
	"        Bus Id                            : 00000000:19:00.0\n"
	"        GPU Link Info\n"
	"            PCIe Generation\n"
	"                Max                       : 5\n"
	"                Current                   : 4\n"
	"                Device Current            : 4\n"
	"                Device Max                : 5\n"
	"                Host Max                  : 5\n"
	"            Link Width\n"
	"                Max                       : 16x\n"
	"                Current                   : 8x\n"
	"        Replays Since Reset               : 67\n"
	"        Replay Number Rollovers           : 3\n"
	"    Clocks Event Reasons\n"
	"        Idle                              : Not Active\n"
	"        Applications Clocks Setting       : Not Active\n"
	"        SW Power Cap                      : Active\n"
	"        HW Slowdown                       : Not Active\n"
	"            HW Thermal Slowdown           : Active\n"
	"            HW Power Brake Slowdown       : Not Active\n"
	"        Sync Boost                        : Not Active\n"
	"        SW Thermal Slowdown               : Active\n"
	"        Display Clock Setting             : Not Active\n"
	"    Clocks Event Reasons Counters\n"
	"        HW Slowdown                       : 100 us\n"
	"        HW Power Braking                  : 5 us\n"
	"    ECC Errors\n"
	"        Volatile\n"
	"            SRAM Correctable              : 1\n"
	"            SRAM Uncorrectable Parity     : 0\n"
	"            SRAM Uncorrectable SEC-DED    : 2\n"
	"            DRAM Correctable              : 10\n"
	"            DRAM Uncorrectable            : 3\n"
	"        Aggregate\n"
	"            SRAM Correctable              : 4\n"
	"            SRAM Uncorrectable Parity     : 1\n"
	"            SRAM Uncorrectable SEC-DED    : 0\n"
	"            DRAM Correctable              : 100\n"
	"            DRAM Uncorrectable            : 7\n"
	"            SRAM Threshold Exceeded       : No\n"
	"        Aggregate Uncorrectable SRAM Sources\n"
	"            SRAM L2                       : 99\n"
	"    Retired Pages\n"
	"        Single Bit ECC                    : N/A\n"
	"        Double Bit ECC                    : N/A\n"
	"        Pending Page Blacklist            : N/A\n"
	"    Remapped Rows\n"
	"        Correctable Error                 : 2\n"
	"        Uncorrectable Error               : 1\n"
	"        Pending                           : Yes\n"
	"        Remapping Failure Occurred        : No\n"
	"        Bank Remap Availability Histogram\n"
	"            Max                           : 2560 bank(s)\n"
	"            Pending                       : 7\n"
	"    Temperature\n"
	"        GPU Current Temp                  : 29 C\n"
	"        GPU Shutdown T.Limit Temp         : -8 C\n"
	"    GPU Power Readings\n"
	"        Power Draw                        : 67.74 W\n"
	"    Module Power Readings\n"
	"        Power Draw                        : 900.00 W\n"
	"    Clocks\n"
	"        Graphics                          : 86 MHz\n"
	"        SM                                : 1410 MHz\n"
	"    Applications Clocks\n"
	"        SM                                : 1 MHz\n"
	"    Max Clocks\n"
	"        Graphics                          : 1980 MHz\n"
	"        SM                                : 1980 MHz\n"
	"    Processes\n"
	"        GPU instance ID                   : N/A\n"
	"        Process ID                        : 11345\n"
	"            Name                          : ./gpu_burn\n"
	"\n"
	"GPU 00000000:3B:00.0\n"
	"    Product Name                          : NVIDIA H100 80GB HBM3\n"
	"    GPU UUID                              : GPU-47daa2ad-a218-6286-252b-af45f0dfaf00\n"
	"    PCI\n"
	"        GPU Link Info\n"
	"            PCIe Generation\n"
	"                Max                       : [Unknown Error]\n"
	"                Current                   : ERR!\n"
	"            Link Width\n"
	"                Max                       : N/A\n"
	"                Current                   : [GPU requires reset]\n"
	"        Replays Since Reset               : lots\n"
	"    Clocks Event Reasons                  : N/A\n"
	"    ECC Errors\n"
	"        Volatile\n"
	"            SRAM Correctable              : N/A\n"
	"            SRAM Uncorrectable            : N/A\n"
	"            DRAM Correctable              : 5\n"
	"            DRAM Uncorrectable            : [Unknown Error]\n"
	"        Aggregate\n"
	"            SRAM Correctable              : N/A\n"
	"            SRAM Uncorrectable            : N/A\n"
	"            DRAM Correctable              : N/A\n"
	"            DRAM Uncorrectable            : N/A\n"
	"    Retired Pages\n"
	"        Single Bit ECC                    : N/A\n"
	"        Double Bit ECC                    : N/A\n"
	"        Pending Page Blacklist            : N/A\n"
	"    Remapped Rows                         : N/A\n"
	"    Temperature\n"
	"        GPU Current Temp                  : 0x2C\n"
	"    GPU Power Readings\n"
	"        Average Power Draw                : 629.45 W\n"
	"        Instantaneous Power Draw          : 588.39 W\n";

static void test_layout_535(void **state)
{
	(void)state;
	parse_ok(DUMP_535);
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_string_equal(snap.driver, "535.161.08");
	assert_int_equal(snap.n_gpus, 2);

	const ng_gpu_state *g = &snap.gpu[0];
	assert_int_equal(g->index, 0);
	assert_string_equal(g->bus, "0000:19:00");
	assert_string_equal(g->uuid, "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa");
	assert_string_equal(g->name, "NVIDIA H100 80GB HBM3");
	assert_false(g->lost);
	assert_string_equal(g->error, "");
	OK_(g->pcie_gen_max, 5);
	OK_(g->pcie_gen, 4);
	OK_(g->pcie_width_max, 16);
	OK_(g->pcie_width, 8);
	OK_(g->pcie_replays, 67);
	/* the child is read although its parent reads Not Active; Counters are not reasons */
	OK_(g->clock_reasons, NG_CLK_SW_POWER_CAP | NG_CLK_HW_THERMAL | NG_CLK_SW_THERMAL);
	OK_(g->ecc_volatile_corrected, 11);
	OK_(g->ecc_volatile_uncorrected, 5);
	OK_(g->ecc_aggregate_corrected, 104);
	OK_(g->ecc_aggregate_uncorrected, 8);
	NA_(g->retired_pages_sbe);
	NA_(g->retired_pages_dbe);
	NA_(g->retired_pending);
	assert_int_equal(g->retired_pending.nvml_return, 3);
	OK_(g->remap_corrected, 2);
	OK_(g->remap_uncorrected, 1);
	OK_(g->remap_pending, 1); /* the histogram's lines are not the block's */
	OK_(g->remap_failed, 0);
	OK_(g->temperature_c, 29);
	OK_(g->sm_clock_mhz, 1410);
	OK_(g->sm_clock_max_mhz, 1980);
	OK_(g->power_mw, 67740); /* the GPU's, not the module's */
	assert_int_equal(g->n_links, 0);
	assert_int_equal(g->n_xid, 0);

	g = &snap.gpu[1];
	assert_int_equal(g->index, 1);
	assert_string_equal(g->bus, "0000:3b:00");
	FAILED_(g->pcie_gen_max);
	assert_int_equal(g->pcie_gen_max.nvml_return, 999);
	FAILED_(g->pcie_gen);
	NA_(g->pcie_width_max);
	FAILED_(g->pcie_width);
	assert_int_equal(g->pcie_width.nvml_return, 16);
	FAILED_(g->pcie_replays);
	NA_(g->clock_reasons);
	/* 5 corrected read, the uncorrected failed: failed, not 5 or 0 */
	OK_(g->ecc_volatile_corrected, 5);
	FAILED_(g->ecc_volatile_uncorrected);
	NA_(g->ecc_aggregate_corrected);
	NA_(g->ecc_aggregate_uncorrected);
	NA_(g->remap_corrected);
	NA_(g->remap_uncorrected);
	NA_(g->remap_pending);
	NA_(g->remap_failed);
	FAILED_(g->temperature_c);
	OK_(g->power_mw, 588390); /* instantaneous before average */
	UNREAD_(g->sm_clock_mhz);
	UNREAD_(g->sm_clock_max_mhz);

	/* judged: GPU 0 volatile uncorrectable ECC is fatal; GPU 1, which
	 * answered nothing while GPU 0 did, is unresponsive */
	judge();
	assert_int_equal(health.gpu[0].severity, NG_HEALTH_FATAL);
	assert_int_equal(health.gpu[1].severity, NG_HEALTH_UNRESPONSIVE);
	assert_int_equal(health.severity, NG_HEALTH_FATAL);
	assert_true(health.drain);
}

/* 410: Clocks Throttle Reasons, "Single Bit"/"Double Bit" totals with
 * trailing spaces, retired pages with counts, no remapped rows. */
static const char DUMP_410[] =
	"==============NVSMI LOG==============\n"
	"Timestamp                           : Mon Nov  5 14:50:59 2018\n"
	"Driver Version                      : 410.48\n"
	"\n"
	"Attached GPUs                       : 1\n"
	"GPU 00000000:18:00.0\n"
	"    Product Name                    : Tesla V100-PCIE-32GB\n"
	"    GPU UUID                        : GPU-4965xxxx-79e3-7941-12cb-1dfe9c53xxxx\n"
	"    PCI\n"
	"        GPU Link Info\n"
	"            PCIe Generation\n"
	"                Max                 : 3\n"
	"                Current             : 3\n"
	"            Link Width\n"
	"                Max                 : 16x\n"
	"                Current             : 16x\n"
	"        Replays since reset         : 0\n"
	"    Clocks Throttle Reasons\n"
	"        Idle                        : Active\n"
	"        HW Slowdown                 : Not Active\n"
	"            HW Thermal Slowdown     : Not Active\n"
	"            HW Power Brake Slowdown : Not Active\n"
	"    Ecc Mode\n"
	"        Current                     : Enabled\n"
	"    ECC Errors\n"
	"        Volatile\n"
	"            Single Bit            \n"
	"                Device Memory       : 4\n"
	"                Texture Memory      : N/A\n"
	"                Total               : 6\n"
	"            Double Bit            \n"
	"                Device Memory       : 0\n"
	"                CBU                 : 0\n"
	"                Total               : 0\n"
	"        Aggregate\n"
	"            Single Bit            \n"
	"                Total               : 60\n"
	"            Double Bit            \n"
	"                Total               : 2\n"
	"    Retired Pages\n"
	"        Single Bit ECC              : 3\n"
	"        Double Bit ECC              : 1\n"
	"        Pending                     : No\n"
	"    Temperature\n"
	"        GPU Current Temp            : 40 C\n"
	"    Power Readings\n"
	"        Power Management            : Supported\n"
	"        Power Draw                  : 58.81 W\n"
	"    Clocks\n"
	"        SM                          : 1380 MHz\n";

static void test_layout_410(void **state)
{
	(void)state;
	parse_ok(DUMP_410);
	assert_string_equal(snap.driver, "410.48");
	assert_int_equal(snap.n_gpus, 1);
	const ng_gpu_state *g = &snap.gpu[0];
	assert_string_equal(g->bus, "0000:18:00");
	OK_(g->pcie_replays, 0);
	OK_(g->clock_reasons, NG_CLK_GPU_IDLE);
	OK_(g->ecc_volatile_corrected, 6); /* the total, not the sum of the parts */
	OK_(g->ecc_volatile_uncorrected, 0);
	OK_(g->ecc_aggregate_corrected, 60);
	OK_(g->ecc_aggregate_uncorrected, 2);
	OK_(g->retired_pages_sbe, 3);
	OK_(g->retired_pages_dbe, 1);
	OK_(g->retired_pending, 0);
	UNREAD_(g->remap_pending);
	UNREAD_(g->remap_failed);
	OK_(g->power_mw, 58810);
	OK_(g->sm_clock_mhz, 1380);
	UNREAD_(g->sm_clock_max_mhz);

	/* aggregate ECC alone, no remapping on a V100: ok */
	judge();
	if (health.severity != NG_HEALTH_OK)
		fail_msg("%s: %s", ng_health_name(health.severity), health.gpu[0].reason[0].text);
}

static void test_values(void **state)
{
	(void)state;
	struct {
		const char *value;
		ng_field_state st;
		uint64_t v;
		int code;
	} cases[] = {
		{"5", NG_FIELD_OK, 5, 0},
		{"0", NG_FIELD_OK, 0, 0},
		{"18446744073709551615", NG_FIELD_OK, UINT64_MAX, 0},
		{"18446744073709551616", NG_FIELD_FAILED, 0, 999},
		{"N/A", NG_FIELD_NOT_SUPPORTED, 0, 3},
		{"[N/A]", NG_FIELD_NOT_SUPPORTED, 0, 3},
		{"[Not Supported]", NG_FIELD_NOT_SUPPORTED, 0, 3},
		{"Requested functionality has been deprecated", NG_FIELD_NOT_SUPPORTED, 0, 26},
		{"[Unknown Error]", NG_FIELD_FAILED, 0, 999},
		{"Unknown Error", NG_FIELD_FAILED, 0, 999},
		{"[GPU requires reset]", NG_FIELD_FAILED, 0, 16},
		{"ERR!", NG_FIELD_FAILED, 0, 999},
		{"[Insufficient Permissions]", NG_FIELD_FAILED, 0, 4},
		{"-1", NG_FIELD_FAILED, 0, 999},
		{"1.5", NG_FIELD_FAILED, 0, 999},
		{"5 x", NG_FIELD_FAILED, 0, 999},
		{"", NG_FIELD_FAILED, 0, 999},
		{"nan", NG_FIELD_FAILED, 0, 999},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[512];
		snprintf(text, sizeof text,
		         "GPU 00000000:18:00.0\n    PCI\n        Replays Since Reset : %s\n", cases[i].value);
		parse_ok(text);
		const ng_gpu_field *f = &snap.gpu[0].pcie_replays;
		if (f->state != cases[i].st || f->value != cases[i].v || f->nvml_return != cases[i].code)
			fail_msg("\"%s\": state %d value %llu code %d", cases[i].value, f->state,
			         (unsigned long long)f->value, f->nvml_return);
	}
	/* booleans and flags take their words only */
	parse_ok("GPU 00000000:18:00.0\n    Remapped Rows\n        Pending : maybe\n"
	         "        Remapping Failure Occurred : Yes\n");
	FAILED_(snap.gpu[0].remap_pending);
	OK_(snap.gpu[0].remap_failed, 1);
	parse_ok("GPU 00000000:18:00.0\n    Clocks Event Reasons\n        Idle : Active\n"
	         "        HW Slowdown : [Unknown Error]\n");
	FAILED_(snap.gpu[0].clock_reasons);
	parse_ok("GPU 00000000:18:00.0\n    Clocks Event Reasons\n        Idle : N/A\n        HW Slowdown : N/A\n");
	NA_(snap.gpu[0].clock_reasons);
	parse_ok("GPU 00000000:18:00.0\n    Clocks Event Reasons\n        Idle : N/A\n        HW Slowdown : Active\n");
	OK_(snap.gpu[0].clock_reasons, NG_CLK_HW_SLOWDOWN);
	/* units are the field's own */
	parse_ok("GPU 00000000:18:00.0\n    PCI\n        GPU Link Info\n            Link Width\n"
	         "                Max : 16\n                Current : 16 MHz\n"
	         "    Temperature\n        GPU Current Temp : 40 F\n"
	         "    GPU Power Readings\n        Power Draw : 70 kW\n"
	         "    Max Clocks\n        SM : 1980 MHz\n");
	FAILED_(snap.gpu[0].pcie_width_max);
	FAILED_(snap.gpu[0].pcie_width);
	FAILED_(snap.gpu[0].temperature_c);
	FAILED_(snap.gpu[0].power_mw);
	OK_(snap.gpu[0].sm_clock_max_mhz, 1980);
	/* whole sections as N/A or failed */
	parse_ok("GPU 00000000:18:00.0\n    ECC Errors : N/A\n    Retired Pages : [Unknown Error]\n"
	         "    PCI\n        GPU Link Info : N/A\n");
	NA_(snap.gpu[0].ecc_volatile_uncorrected);
	NA_(snap.gpu[0].ecc_aggregate_corrected);
	FAILED_(snap.gpu[0].retired_pages_sbe);
	FAILED_(snap.gpu[0].retired_pending);
	NA_(snap.gpu[0].pcie_gen);
	NA_(snap.gpu[0].pcie_width_max);
	/* "GPU is lost" anywhere marks the GPU lost */
	parse_ok("GPU 00000000:18:00.0\n    Temperature\n        GPU Current Temp : GPU is lost\n");
	assert_true(snap.gpu[0].lost);
	assert_int_equal(snap.gpu[0].temperature_c.nvml_return, 15);
}

static void test_unreadable_gpu_and_nvml_failures(void **state)
{
	(void)state;
	parse_ok("Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to "
	         "recover this GPU\n"
	         "==============NVSMI LOG==============\n"
	         "Driver Version : 550.54.15\n"
	         "Attached GPUs : 2\n"
	         "GPU 00000000:5C:00.0\n"
	         "    GPU UUID : GPU-aaaa\n");
	assert_int_equal(snap.n_gpus, 2);
	assert_string_equal(snap.gpu[0].bus, "0000:3b:00");
	assert_true(snap.gpu[0].lost);
	assert_non_null(strstr(snap.gpu[0].error, "GPU is lost"));
	FAILED_(snap.gpu[0].ecc_volatile_uncorrected);
	assert_int_equal(snap.gpu[0].ecc_volatile_uncorrected.nvml_return, 15);
	FAILED_(snap.gpu[0].power_mw);
	assert_string_equal(snap.gpu[1].bus, "0000:5c:00");
	assert_int_equal(snap.gpu[1].index, 1);
	judge();
	assert_int_equal(health.gpu[0].severity, NG_HEALTH_FATAL);
	assert_true(health.drain);

	parse_ok("Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error\n");
	assert_false(snap.gpu[0].lost);
	judge();
	assert_int_equal(health.severity, NG_HEALTH_UNKNOWN);
	assert_false(health.drain);

	/* nvidia-smi could not reach NVML: unknown, never a drain */
	const char *failures[] = {
		("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
		 "latest NVIDIA driver is installed and running.\n"),
		"Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n",
		"Failed to initialize NVML: Unknown Error\n",
	};
	for (size_t i = 0; i < 3; i++) {
		parse_ok(failures[i]);
		assert_int_equal(snap.nvml, NG_FIELD_FAILED);
		assert_int_equal(snap.n_gpus, 0);
		assert_true(strncmp(snap.nvml_error, "nvidia-smi: ", 12) == 0);
		judge();
		assert_int_equal(health.severity, NG_HEALTH_UNKNOWN);
		assert_false(health.drain);
		assert_non_null(strstr(health.unknown_why, "nvidia-smi"));
	}

	/* NVML answered and saw no GPU */
	parse_ok("No devices were found\n");
	assert_int_equal(snap.nvml, NG_FIELD_OK);
	assert_int_equal(snap.n_gpus, 0);
	parse_ok("==============NVSMI LOG==============\nDriver Version : 550.54.15\nAttached GPUs : 0\n");
	assert_int_equal(snap.n_gpus, 0);
	judge();
	assert_int_equal(health.severity, NG_HEALTH_UNKNOWN);
	assert_false(health.drain);
}

static void test_refused(void **state)
{
	(void)state;
	struct {
		const char *text, *words;
	} cases[] = {
		{"", "not the output of nvidia-smi -q"},
		{"hello\nworld\n", "not the output of nvidia-smi -q"},
		{"GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0000)\n", "not the output"},
		{"==============NVSMI LOG==============\nAttached GPUs : 8\n", "lists 8 GPUs but holds no GPU section"},
		{"==============NVSMI LOG==============\n", "holds no GPU section"},
		{"<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<driver_version>575.51.02</driver_version>\n", "XML"},
		{"GPU 00000000:18:00.0\n    Product Name : A\nGPU 00000000:18:00.0\n", "appears twice"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ng_err err = {0};
		if (parse(cases[i].text, &err) != -1)
			fail_msg("accepted: %s", cases[i].text);
		if (!strstr(err.msg, cases[i].words))
			fail_msg("\"%s\" does not say \"%s\"", err.msg, cases[i].words);
		/* what is left is a snapshot nothing can drain on */
		assert_int_equal(snap.nvml, NG_FIELD_FAILED);
		assert_int_equal(snap.n_gpus, 0);
		assert_string_equal(snap.source, "nvidia-smi");
		assert_non_null(strstr(snap.nvml_error, cases[i].words));
	}
	/* more GPUs than a snapshot holds */
	size_t cap = (NG_GPU_MAX + 1) * 32 + 1;
	char *many = malloc(cap);
	assert_non_null(many);
	size_t n = 0;
	for (int i = 0; i <= NG_GPU_MAX; i++)
		n += (size_t)snprintf(many + n, cap - n, "GPU 00000000:%02X:00.0\n", i + 1);
	ng_err err = {0};
	assert_int_equal(ng_nvidia_smi_parse(many, n, &snap, &err), -1);
	assert_non_null(strstr(err.msg, "more than 64"));
	/* exactly NG_GPU_MAX is fine */
	n = 0;
	for (int i = 0; i < NG_GPU_MAX; i++)
		n += (size_t)snprintf(many + n, cap - n, "GPU 00000000:%02X:00.0\n", i + 1);
	assert_int_equal(ng_nvidia_smi_parse(many, n, &snap, &err), 0);
	assert_int_equal(snap.n_gpus, NG_GPU_MAX);
	free(many);
	/* a NULL text is empty */
	assert_int_equal(ng_nvidia_smi_parse(NULL, 5, &snap, &err), -1);
}

static void test_hostile_text(void **state)
{
	(void)state;
	/* CRLF, tabs, NUL bytes, non-ASCII, very long lines */
	const char crlf[] = "==============NVSMI LOG==============\r\n"
	                    "Driver Version : 535.1\r\n"
	                    "GPU 00000000:18:00.0\r\n"
	                    "\tProduct Name : NVIDIA\x01 H\xc3\xa9\r\n"
	                    "\tPCI\r\n"
	                    "\t\tReplays Since Reset : 12\r\n"
	                    "\tGPU UUID : GPU-\0abc\r\n";
	ng_err err = {0};
	assert_int_equal(ng_nvidia_smi_parse(crlf, sizeof crlf - 1, &snap, &err), 0);
	assert_string_equal(snap.driver, "535.1");
	assert_string_equal(snap.gpu[0].name, "NVIDIA? H??");
	OK_(snap.gpu[0].pcie_replays, 12);
	assert_string_equal(snap.gpu[0].uuid, "GPU-?abc");

	size_t n = 200000;
	char *big = malloc(n + 200);
	assert_non_null(big);
	size_t k = (size_t)sprintf(big, "GPU 00000000:18:00.0\n    Product Name : ");
	memset(big + k, 'n', n);
	k += n;
	k += (size_t)sprintf(big + k, "\n    GPU UUID : GPU-1\n%*s\n", 100, "deep");
	assert_int_equal(ng_nvidia_smi_parse(big, k, &snap, &err), 0);
	assert_int_equal(strlen(snap.gpu[0].name), sizeof snap.gpu[0].name - 1);
	assert_string_equal(snap.gpu[0].uuid, "GPU-1");
	/* indentation deeper than any dump */
	k = (size_t)sprintf(big, "GPU 00000000:18:00.0\n");
	for (int d = 1; d < 20; d++)
		k += (size_t)sprintf(big + k, "%*sLevel%d\n", 4 * d, "", d);
	k += (size_t)sprintf(big + k, "    PCI\n        Replays Since Reset : 4\n");
	assert_int_equal(ng_nvidia_smi_parse(big, k, &snap, &err), 0);
	OK_(snap.gpu[0].pcie_replays, 4);
	free(big);
}

/* ---- the published fixtures --------------------------------------------------------- */

#ifndef NODEGATE_FIXTURES
#define NODEGATE_FIXTURES "fixtures-not-configured"
#endif
#define FIXDIR NODEGATE_FIXTURES "/nvidia-smi"

static int parse_file(const char *name, ng_err *err)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", FIXDIR, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	int rc = ng_nvidia_smi_parse(buf, (size_t)n, &snap, err);
	free(buf);
	return rc;
}

static void file_ok(const char *name)
{
	ng_err err = {0};
	if (parse_file(name, &err) != 0)
		fail_msg("%s: %s", name, err.msg);
}

static bool fixtures_present(void)
{
	DIR *d = opendir(FIXDIR);
	if (!d) {
		printf("fixtures folder %s is absent: skipping the fixture files\n", FIXDIR);
		return false;
	}
	closedir(d);
	return true;
}

static void test_fixture_h100x8_power_brake(void **state)
{
	(void)state;
	if (!fixtures_present())
		skip();
	file_ok("nvidia-smi-q_535.161.08_h100x8_hw_power_brake_active.txt");
	assert_string_equal(snap.driver, "535.161.08");
	assert_int_equal(snap.n_gpus, 8);
	const char *buses[] = {"0000:19:00", "0000:3b:00", "0000:4c:00", "0000:5d:00",
	                       "0000:9b:00", "0000:bb:00", "0000:cb:00", "0000:db:00"};
	const uint64_t replays[] = {67, 63, 52, 43, 49, 53, 82, 67};
	for (size_t i = 0; i < 8; i++) {
		const ng_gpu_state *g = &snap.gpu[i];
		assert_string_equal(g->bus, buses[i]);
		assert_true(strncmp(g->uuid, "GPU-", 4) == 0);
		OK_(g->pcie_replays, replays[i]);
		OK_(g->clock_reasons, NG_CLK_HW_SLOWDOWN | NG_CLK_HW_POWER_BRAKE);
		OK_(g->pcie_gen, 5);
		OK_(g->pcie_gen_max, 5);
		OK_(g->pcie_width, 16);
		OK_(g->pcie_width_max, 16);
		OK_(g->ecc_volatile_uncorrected, 0);
		OK_(g->ecc_aggregate_uncorrected, 0);
		NA_(g->retired_pages_sbe);
		NA_(g->retired_pending);
		OK_(g->remap_pending, 0);
		OK_(g->remap_failed, 0);
		OK_(g->sm_clock_max_mhz, 1980);
		assert_int_equal(g->power_mw.state, NG_FIELD_OK);
	}
	assert_string_equal(snap.gpu[0].uuid, "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa");
	assert_string_equal(snap.gpu[0].name, "NVIDIA H100 80GB HBM3");
	OK_(snap.gpu[0].temperature_c, 29);
	OK_(snap.gpu[0].sm_clock_mhz, 86);
	OK_(snap.gpu[0].power_mw, 67740);
	judge();
	assert_int_equal(health.severity, NG_HEALTH_DEGRADED);
	assert_true(health.drain);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(health.gpu[i].reason[0].signal, "clock.hw_power_brake");
}

static void test_fixture_590_idle_and_load(void **state)
{
	(void)state;
	if (!fixtures_present())
		skip();
	const char *files[] = {"smi590_h100-80gb-hbm3_q_idle.txt", "smi590_h100-80gb-hbm3_q_load.txt",
	                       "smi590_h200_q_idle.txt", "smi590_h200_q_load.txt"};
	for (size_t i = 0; i < 4; i++) {
		file_ok(files[i]);
		assert_string_equal(snap.driver, "590.48.01");
		assert_int_equal(snap.n_gpus, 1);
		const ng_gpu_state *g = &snap.gpu[0];
		bool idle = strstr(files[i], "idle") != NULL;
		OK_(g->clock_reasons, idle ? NG_CLK_GPU_IDLE : 0);
		OK_(g->ecc_volatile_uncorrected, 0);
		OK_(g->remap_failed, 0);
		OK_(g->pcie_gen, 5);
		assert_int_equal(g->power_mw.state, NG_FIELD_OK);
		assert_int_equal(g->sm_clock_max_mhz.state, NG_FIELD_OK);
		judge();
		if (health.severity != NG_HEALTH_OK)
			fail_msg("%s: %s %s", files[i], ng_health_name(health.severity), health.gpu[0].reason[0].text);
	}
	file_ok("smi590_h100-80gb-hbm3_q_load.txt");
	OK_(snap.gpu[0].power_mw, 588390);
	OK_(snap.gpu[0].sm_clock_mhz, 1980);
	OK_(snap.gpu[0].pcie_replays, 9);
}

static void test_fixture_older_and_consumer(void **state)
{
	(void)state;
	if (!fixtures_present())
		skip();
	/* TITAN V: Remapped Rows N/A on one line, ECC N/A, gen 1 of 3 while idle */
	file_ok("nvidia-smi-q_560.35.03_titanv_remapped_rows_NA.txt");
	const ng_gpu_state *g = &snap.gpu[0];
	NA_(g->remap_pending);
	NA_(g->remap_failed);
	NA_(g->ecc_volatile_uncorrected);
	NA_(g->retired_pending);
	OK_(g->pcie_gen, 1);
	OK_(g->pcie_gen_max, 3);
	OK_(g->clock_reasons, NG_CLK_GPU_IDLE);
	/* P8, 0%, and three graphics contexts (Xorg, a shell): no compute process */
	OK_(g->pstate, 8);
	OK_(g->utilization_gpu, 0);
	OK_(g->processes, 0);
	judge();
	assert_int_equal(health.severity, NG_HEALTH_OK);

	/* 8 RTX 4090s, ECC N/A; each holds an idle compute process at P8 */
	file_ok("nvidia-smi-q_535.154.05_rtx4090x8_ecc_NA.txt");
	assert_int_equal(snap.n_gpus, 8);
	OK_(snap.gpu[0].processes, 1);
	assert_int_equal(snap.gpu[0].n_pids, 1);
	assert_int_equal(snap.gpu[0].pid[0], 2010222);
	OK_(snap.gpu[0].pstate, 8);
	for (size_t i = 0; i < 8; i++) {
		NA_(snap.gpu[i].ecc_volatile_uncorrected);
		NA_(snap.gpu[i].ecc_aggregate_uncorrected);
		OK_(snap.gpu[i].remap_failed, 0);
	}
	judge();
	assert_false(health.drain);

	/* 410: old ECC layout, throttle reasons, retired pages, no remapped rows */
	file_ok("q_410.48_v100pcie_old_ecc_layout_EXCERPT.txt");
	g = &snap.gpu[0];
	assert_string_equal(snap.driver, "410.48");
	OK_(g->ecc_volatile_uncorrected, 0);
	OK_(g->ecc_aggregate_corrected, 0);
	OK_(g->retired_pages_sbe, 0);
	OK_(g->retired_pending, 0);
	UNREAD_(g->remap_failed);
	OK_(g->clock_reasons, 0);
	OK_(g->pcie_replays, 0);
	judge();
	assert_int_equal(health.severity, NG_HEALTH_OK);

	/* -d PERFORMANCE alone: clock reasons, and nothing that could clear the GPU */
	file_ok("q-d_PERFORMANCE_410era_v100_clocks_throttle_reasons_EXCERPT.txt");
	assert_int_equal(snap.n_gpus, 1);
	OK_(snap.gpu[0].clock_reasons, 0);
	UNREAD_(snap.gpu[0].ecc_volatile_uncorrected);
	judge();
	assert_int_equal(health.severity, NG_HEALTH_UNKNOWN);
	assert_false(health.drain);
}

static void test_fixture_refused(void **state)
{
	(void)state;
	if (!fixtures_present())
		skip();
	ng_err err = {0};
	assert_int_equal(parse_file("q-x_575.51.02_rtx4070laptop_EXCERPT_head_to_remapped_rows.xml.txt", &err), -1);
	assert_non_null(strstr(err.msg, "XML"));
	/* a capture of many commands holds two -q runs of the same GPU */
	assert_int_equal(parse_file("capture_590.48.01_h100-80gb-hbm3_multi_command.txt", &err), -1);
	assert_non_null(strstr(err.msg, "appears twice"));
	assert_int_equal(parse_file("smi590_h100-80gb-hbm3_help-query-gpu.txt", &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_535),
		cmocka_unit_test(test_layout_410),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_unreadable_gpu_and_nvml_failures),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_fixture_h100x8_power_brake),
		cmocka_unit_test(test_fixture_590_idle_and_load),
		cmocka_unit_test(test_fixture_older_and_consumer),
		cmocka_unit_test(test_fixture_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
