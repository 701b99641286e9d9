/* libFuzzer target for the nvidia-smi -q parser. For any bytes: either a
 * snapshot whose every field is in a known state (a value only when read),
 * with normalized buses and printable text, or a refusal that leaves an
 * empty snapshot nothing can drain on. Judged, a GPU is degraded or fatal
 * only with a reason of that severity, and never when nothing was read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/policy.h"
#include "judge/gpu_health.h"
#include "parse/nvidia_smi.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static void printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	require(n < cap);
	for (size_t i = 0; i < n; i++)
		require((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f);
}

#define F(x) offsetof(ng_gpu_state, x)
static const size_t fields[] = {
	F(ecc_volatile_uncorrected), F(ecc_aggregate_uncorrected), F(ecc_volatile_corrected), F(ecc_aggregate_corrected),
	F(retired_pages_sbe), F(retired_pages_dbe), F(retired_pending), F(remap_corrected), F(remap_uncorrected),
	F(remap_pending), F(remap_failed), F(pcie_gen), F(pcie_gen_max), F(pcie_width), F(pcie_width_max),
	F(pcie_replays), F(clock_reasons), F(temperature_c), F(sm_clock_mhz), F(sm_clock_max_mhz), F(power_mw),
};

static ng_gpu_snapshot snap;
static ng_node_health health;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ng_err err;
	err.msg[0] = '\0';
	int rc = ng_nvidia_smi_parse((const char *)data, size, &snap, &err);
	require(rc == 0 || rc == -1);
	require(strcmp(snap.source, "nvidia-smi") == 0);
	require(snap.n_gpus <= NG_GPU_MAX);
	printable(snap.driver, sizeof snap.driver);
	printable(snap.nvml_error, sizeof snap.nvml_error);
	if (rc == -1) {
		require(err.msg[0] != '\0');
		require(snap.nvml == NG_FIELD_FAILED && snap.n_gpus == 0);
	} else {
		require(snap.nvml == NG_FIELD_OK || snap.nvml == NG_FIELD_FAILED);
		if (snap.nvml == NG_FIELD_FAILED)
			require(snap.n_gpus == 0 && snap.nvml_error[0]);
	}
	bool nothing_read[NG_GPU_MAX];
	for (size_t g = 0; g < snap.n_gpus; g++) {
		const ng_gpu_state *s = &snap.gpu[g];
		require(s->index == (int)g);
		printable(s->bus, sizeof s->bus);
		char again[16];
		require(ng_gpu_bus_normalize(s->bus, again) == 0 && strcmp(again, s->bus) == 0);
		for (size_t k = 0; k < g; k++)
			require(strcmp(snap.gpu[k].bus, s->bus) != 0);
		printable(s->uuid, sizeof s->uuid);
		printable(s->name, sizeof s->name);
		printable(s->error, sizeof s->error);
		require(s->n_links == 0 && s->n_xid == 0);
		nothing_read[g] = !s->lost;
		for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
			const ng_gpu_field *v = (const ng_gpu_field *)((const char *)s + fields[f]);
			require(v->state <= NG_FIELD_FAILED);
			if (v->state != NG_FIELD_OK)
				require(v->value == 0);
			if (v->state == NG_FIELD_OK) {
				require(v->nvml_return == 0);
				nothing_read[g] = false;
			}
			if (v->state == NG_FIELD_UNREAD)
				require(v->nvml_return == 0);
		}
		if (s->clock_reasons.state == NG_FIELD_OK)
			require((s->clock_reasons.value & ~(uint64_t)0x1FF) == 0);
	}

	ng_policy pol;
	ng_policy_default(&pol);
	ng_health_judge(&snap, NULL, 0, &pol, &health);
	require(health.severity < NG_HEALTH_COUNT);
	require(health.drain == (health.severity == NG_HEALTH_DEGRADED || health.severity == NG_HEALTH_FATAL));
	if (snap.nvml != NG_FIELD_OK || snap.n_gpus == 0)
		require(health.severity == NG_HEALTH_UNKNOWN && !health.drain && health.unknown_why[0]);
	for (size_t g = 0; g < health.n_gpus; g++) {
		const ng_gpu_verdict *v = &health.gpu[g];
		require(v->n_reasons <= NG_HEALTH_REASONS_MAX);
		/* a monitoring failure is never a fault: unknown, or unresponsive when
		 * its siblings answered (degraded only after checks running, and
		 * this one has no history) */
		if (nothing_read[g])
			require(v->severity == NG_HEALTH_UNKNOWN || v->severity == NG_HEALTH_UNRESPONSIVE);
		if (v->severity == NG_HEALTH_FATAL || v->severity == NG_HEALTH_DEGRADED) {
			int found = 0;
			for (size_t k = 0; k < v->n_reasons; k++)
				found |= v->reason[k].severity == v->severity;
			require(found);
		}
		if (v->severity == NG_HEALTH_OK)
			for (size_t k = 0; k < v->n_reasons; k++)
				require(v->reason[k].severity == NG_HEALTH_OK);
		for (size_t k = 0; k < v->n_reasons; k++)
			printable(v->reason[k].text, sizeof v->reason[k].text);
	}
	return 0;
}
