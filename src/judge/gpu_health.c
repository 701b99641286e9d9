/* GPU health rules (judge/gpu_health.h, docs/gpu.md). Pure: the snapshot,
 * the history and the policy in; verdicts out. No I/O, no clock, no
 * allocation. */
#include "judge/gpu_health.h"

#include "core/gpu_fields.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const health_names[NG_HEALTH_COUNT] = {
	[NG_HEALTH_OK] = "ok",
	[NG_HEALTH_TRANSIENT] = "transient",
	[NG_HEALTH_DEGRADED] = "degraded",
	[NG_HEALTH_FATAL] = "fatal",
	[NG_HEALTH_UNKNOWN] = "unknown",
	[NG_HEALTH_UNRESPONSIVE] = "unresponsive",
};

const char *ng_health_name(ng_health h)
{
	return (unsigned)h < NG_HEALTH_COUNT ? health_names[h] : "invalid";
}

/* Which of two findings wins: fatal > degraded > transient > unknown > ok.
 * Unknown beats only ok: a definite finding is never hidden by a field that
 * could not be read, and nothing unread is ever ok. */
static int rank(ng_health h)
{
	switch (h) {
	case NG_HEALTH_OK: return 0;
	case NG_HEALTH_UNKNOWN: return 1;
	case NG_HEALTH_UNRESPONSIVE: return 2; /* more said than unknown: this GPU, not NVML */
	case NG_HEALTH_TRANSIENT: return 3;
	case NG_HEALTH_DEGRADED: return 4;
	case NG_HEALTH_FATAL: return 5;
	default: return 1; /* an out-of-range value is not a finding */
	}
}

static ng_health worse(ng_health a, ng_health b) { return rank(b) > rank(a) ? b : a; }

/* ---- the Xid catalogue (nvml.md section 11; Ampere and newer) ------------------------ */

struct xid_entry {
	int code;
	ng_xid_class cls;
	const char *mnemonic;
	const char *signal;
};

#define XID(c, k, m) {c, NG_XID_##k, m, "xid." #c}
static const struct xid_entry xid_catalogue[] = {
	XID(8, APPLICATION, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT"),
	XID(13, APPLICATION, "ROBUST_CHANNEL_GR_EXCEPTION"),
	XID(31, APPLICATION, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT"),
	/* PCIe quality, but the catalogue's action is to restart the
	 * application and DCGM only warns: the replay counters judge the link. */
	XID(32, INFORMATIONAL, "ROBUST_CHANNEL_PBDMA_ERROR"),
	XID(43, APPLICATION, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR"),
	XID(45, APPLICATION, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL"),
	XID(46, HARDWARE, "GPU_TIMEOUT_ERROR"),
	XID(48, HARDWARE, "ROBUST_CHANNEL_GPU_ECC_DBE"),
	XID(62, HARDWARE, "PMU_HALT_ERROR"),
	XID(63, INFORMATIONAL, "INFOROM_DRAM_RETIREMENT_EVENT"),
	XID(64, HARDWARE, "INFOROM_DRAM_RETIREMENT_FAILURE"),
	XID(68, APPLICATION, "ROBUST_CHANNEL_NVDEC0_ERROR"),
	XID(69, APPLICATION, "ROBUST_CHANNEL_GR_CLASS_ERROR"),
	XID(74, LINK, "NVLINK_ERROR"),
	XID(79, HARDWARE, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"),
	XID(92, INFORMATIONAL, "EXCESSIVE_SBE_INTERRUPTS"),
	/* contained to one application, which must restart; the GPU serves others */
	XID(94, APPLICATION, "ROBUST_CHANNEL_CONTAINED_ERROR"),
	XID(95, HARDWARE, "ROBUST_CHANNEL_UNCONTAINED_ERROR"),
	XID(109, HARDWARE, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR"),
	XID(110, HARDWARE, "SEC_FAULT_ERROR"),
	XID(119, HARDWARE, "GSP_RPC_TIMEOUT"),
	XID(120, HARDWARE, "GSP_ERROR"),
	XID(121, INFORMATIONAL, "C2C_ERROR"),
	XID(136, LINK, "ALI_TRAINING_FAIL"),
	XID(137, APPLICATION, "NVLINK_PRIV_ERR"),
	XID(140, HARDWARE, "UNRECOVERABLE_ECC_ERROR_ESCAPE"),
	XID(143, HARDWARE, "GPU_INIT_ERROR"),
	XID(144, LINK, "NVLINK_SAW_ERROR"),
	XID(145, LINK, "NVLINK_RLW_ERROR"),
	XID(146, LINK, "NVLINK_TLW_ERROR"),
	XID(147, LINK, "NVLINK_TREX_ERROR"),
	XID(148, LINK, "NVLINK_NVLPW_CTRL_ERROR"),
	XID(149, LINK, "NVLINK_NETIR_ERROR"),
	XID(150, LINK, "NVLINK_MSE_ERROR"),
	XID(154, INFORMATIONAL, "GPU_RECOVERY_ACTION_CHANGED"),
	XID(155, LINK, "NVLINK_SW_DEFINED_ERROR"),
	XID(156, INFORMATIONAL, "RESOURCE_RETIREMENT_EVENT"),
	XID(157, INFORMATIONAL, "RESOURCE_RETIREMENT_FAILURE"),
	XID(158, HARDWARE, "GPU_FATAL_TIMEOUT"),
	XID(160, INFORMATIONAL, "CHANNEL_RETIREMENT_EVENT"),
	XID(161, INFORMATIONAL, "CHANNEL_RETIREMENT_FAILURE"),
	XID(167, HARDWARE, "PCIE_FATAL_TIMEOUT"),
	XID(168, HARDWARE, "REDUCED_GPU_MEMORY_CAPACITY"),
	XID(169, HARDWARE, "SEC2_HALT_ERROR"),
	XID(171, HARDWARE, "UNCORRECTABLE_DRAM_ERROR"),
	XID(172, HARDWARE, "UNCORRECTABLE_SRAM_ERROR"),
};
#undef XID

static const struct xid_entry *xid_lookup(int code)
{
	for (size_t i = 0; i < sizeof xid_catalogue / sizeof *xid_catalogue; i++)
		if (xid_catalogue[i].code == code)
			return &xid_catalogue[i];
	return NULL;
}

ng_xid_class ng_xid_classify(int code)
{
	const struct xid_entry *e = xid_lookup(code);
	return e ? e->cls : NG_XID_UNLISTED;
}

const char *ng_xid_mnemonic(int code)
{
	const struct xid_entry *e = xid_lookup(code);
	return e ? e->mnemonic : NULL;
}

static const struct {
	ng_health severity;
	const char *meaning;
} xid_classes[] = {
	[NG_XID_UNLISTED] = {NG_HEALTH_TRANSIENT, "not in the catalogue"},
	[NG_XID_APPLICATION] = {NG_HEALTH_TRANSIENT, "usually the application's fault"},
	[NG_XID_INFORMATIONAL] = {NG_HEALTH_TRANSIENT, "informational"},
	[NG_XID_HARDWARE] = {NG_HEALTH_FATAL, "hardware: the GPU, its memory or its bus"},
	[NG_XID_LINK] = {NG_HEALTH_DEGRADED, "NVLink trouble: the link or its peer"},
};

/* ---- collecting reasons ----------------------------------------------------------- */

typedef struct {
	ng_gpu_verdict *v;
	ng_health worst; /* over every reason, kept or not */
	const ng_policy *pol;
	const ng_gpu_history *h; /* this GPU's, or NULL */
	bool after_job;
} judging;

/* ---- idle --------------------------------------------------------------------------- */

typedef enum { IDLE_NO, IDLE_YES, IDLE_UNKNOWN } idleness;

/* At rest: 0% utilization (where read) and a resting power state: P8 or
 * deeper, the SM clock at its idle floor with no slowdown holding it
 * there, or NVML's GPU_IDLE event reason. The event reason is one sign
 * among these, not the rule: idle A40s (P8, 0%, SM clock at its floor)
 * report SW power cap and not GPU_IDLE. A GPU's PCIe link downtrains with
 * its power state, so this is what the link rules ask. */
static idleness at_rest(const judging *j, const ng_gpu_state *g)
{
	if (g->utilization_gpu.state == NG_FIELD_OK && g->utilization_gpu.value > 0)
		return IDLE_NO;
	bool reasons = g->clock_reasons.state == NG_FIELD_OK;
	uint64_t b = reasons ? g->clock_reasons.value : 0;
	if (b & NG_CLK_GPU_IDLE)
		return IDLE_YES;
	if (g->pstate.state == NG_FIELD_OK && g->pstate.value >= 8)
		return IDLE_YES;
	const uint64_t held = NG_CLK_HW_SLOWDOWN | NG_CLK_SW_THERMAL | NG_CLK_HW_THERMAL | NG_CLK_HW_POWER_BRAKE;
	bool clocks = g->sm_clock_mhz.state == NG_FIELD_OK && g->sm_clock_max_mhz.state == NG_FIELD_OK &&
	              g->sm_clock_max_mhz.value > 0;
	if (clocks && reasons && !(b & held) &&
	    (double)g->sm_clock_mhz.value <= j->pol->health_idle_clock_ratio * (double)g->sm_clock_max_mhz.value)
		return IDLE_YES;
	if (!reasons && g->pstate.state != NG_FIELD_OK && g->utilization_gpu.state != NG_FIELD_OK)
		return IDLE_UNKNOWN;
	return IDLE_NO;
}

/* Idle: at rest and nothing running on it (no compute process). A limit
 * hit by an idle GPU was hit with no work to explain it. */
static idleness idle_of(const judging *j, const ng_gpu_state *g)
{
	if (g->processes.state == NG_FIELD_OK && g->processes.value > 0)
		return IDLE_NO;
	return at_rest(j, g);
}

static void add(judging *j, ng_health sev, const char *signal, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(judging *j, ng_health sev, const char *signal, const char *fmt, ...)
{
	ng_gpu_verdict *v = j->v;
	j->worst = worse(j->worst, sev);
	size_t slot = v->n_reasons;
	if (slot == NG_HEALTH_REASONS_MAX) {
		/* Full: the least severe reason makes room for a more severe one,
		 * so what decided the severity is always among the reasons shown. */
		v->reasons_truncated = true;
		slot = 0;
		for (size_t i = 1; i < v->n_reasons; i++)
			if (rank(v->reason[i].severity) < rank(v->reason[slot].severity))
				slot = i;
		if (rank(v->reason[slot].severity) >= rank(sev))
			return;
	} else {
		v->n_reasons++;
	}
	ng_health_reason *r = &v->reason[slot];
	r->severity = sev;
	r->signal = signal;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof r->text, fmt, ap);
	va_end(ap);
}

/* " (NVML return 15)", or "" when the source gave no code. */
static const char *nvml_code(const ng_gpu_field *f, char buf[32])
{
	if (f->nvml_return)
		snprintf(buf, 32, " (NVML return %d)", f->nvml_return);
	else
		buf[0] = '\0';
	return buf;
}

/* Whether f holds a value a rule can use. A field that failed or was never
 * read makes the rule's finding unknown; one the GPU does not have makes the
 * rule not apply. */
static bool readable(judging *j, const ng_gpu_field *f, const char *signal, const char *what)
{
	char code[32];
	switch (f->state) {
	case NG_FIELD_OK: return true;
	case NG_FIELD_NOT_SUPPORTED: return false;
	case NG_FIELD_FAILED:
		add(j, NG_HEALTH_UNKNOWN, signal, "%s could not be read%s", what, nvml_code(f, code));
		return false;
	case NG_FIELD_UNREAD:
	default:
		add(j, NG_HEALTH_UNKNOWN, signal, "%s was not read", what);
		return false;
	}
}

/* ---- rules on single fields --------------------------------------------------------- */

#define GOFF(f) offsetof(ng_gpu_state, f)

enum { G_NONE, G_REMAP, G_RETIRE };

/* A counter or flag that is a finding whenever it is not zero. */
static const struct field_rule {
	size_t off;
	ng_health severity;
	const char *signal, *what;
	bool flag; /* yes/no rather than a count */
	int group;
	const char *meaning;
} field_rules[] = {
	{GOFF(ecc_volatile_uncorrected), NG_HEALTH_FATAL, "ecc.volatile_uncorrected",
	 "uncorrectable ECC errors since the last reset", false, G_NONE,
	 "the memory is failing now, and the last job's results may be wrong"},
	{GOFF(remap_failed), NG_HEALTH_FATAL, "remap.failed", "row remapping failure", true, G_REMAP,
	 "a row could not be remapped: the memory has run out of spare rows where it needed one"},
	{GOFF(remap_pending), NG_HEALTH_TRANSIENT, "remap.pending", "pending row remap", true, G_REMAP,
	 "a row remap waits for the next GPU reset to take effect"},
	{GOFF(retired_pending), NG_HEALTH_TRANSIENT, "retired_pages.pending", "pending page retirement", true,
	 G_RETIRE, "a page retirement waits for the next GPU reset to take effect"},
};

static const ng_gpu_field *field_at(const ng_gpu_state *g, size_t off)
{
	return (const ng_gpu_field *)((const char *)g + off);
}

static void judge_fields(judging *j, const ng_gpu_state *g)
{
	/* Row remapping (Ampere and newer) and page retirement (older GPUs) are
	 * the same protection: a source that shows one of them and lacks the
	 * other (nvidia-smi before Ampere has no "Remapped Rows") is not
	 * unknown. Both missing is. */
	bool remap_unread = g->remap_failed.state == NG_FIELD_UNREAD && g->remap_pending.state == NG_FIELD_UNREAD;
	bool retire_unread = g->retired_pending.state == NG_FIELD_UNREAD;
	bool remap_read = g->remap_failed.state == NG_FIELD_OK || g->remap_pending.state == NG_FIELD_OK;
	bool retire_read = g->retired_pending.state == NG_FIELD_OK;
	if (remap_unread && retire_unread)
		add(j, NG_HEALTH_UNKNOWN, "memory.repair",
		    "neither row remapping nor page retirement was read, so pending or failed memory repairs are unknown");

	for (size_t i = 0; i < sizeof field_rules / sizeof *field_rules; i++) {
		const struct field_rule *r = &field_rules[i];
		const ng_gpu_field *f = field_at(g, r->off);
		if (f->state == NG_FIELD_UNREAD && r->group != G_NONE &&
		    ((remap_unread && retire_unread) || (r->group == G_REMAP ? retire_read : remap_read)))
			continue; /* said once above, or the other mechanism was read */
		if (!readable(j, f, r->signal, r->what) || f->value == 0)
			continue;
		if (r->flag)
			add(j, r->severity, r->signal, "%s: %s", r->what, r->meaning);
		else
			add(j, r->severity, r->signal, "%llu %s: %s", (unsigned long long)f->value, r->what,
			    r->meaning);
	}
	/* Aggregate (lifetime) uncorrectable ECC alone is not a finding: errors
	 * on a card that has been clean since its last reset justify nothing. */

	/* The seed validator's rows: a spike of correctable errors is the
	 * leading indicator of an uncorrectable one; rows remapped for
	 * uncorrectable errors mean the memory has failed where it was read. */
	const ng_gpu_field *ce = &g->ecc_volatile_corrected;
	if (ce->state == NG_FIELD_OK && ce->value > (uint64_t)j->pol->health_ecc_corrected_volatile)
		add(j, NG_HEALTH_DEGRADED, "ecc.volatile_corrected",
		    "%llu correctable ECC errors since the last reset, above %ld: a spike, the leading "
		    "indicator of an uncorrectable one",
		    (unsigned long long)ce->value, j->pol->health_ecc_corrected_volatile);
	if (g->remap_uncorrected.state == NG_FIELD_OK && g->remap_uncorrected.value > 0)
		add(j, NG_HEALTH_DEGRADED, "remap.uncorrectable",
		    "%llu row%s remapped for uncorrectable errors: the memory has failed where it was used",
		    (unsigned long long)g->remap_uncorrected.value, g->remap_uncorrected.value == 1 ? "" : "s");
}

/* After a job (epilog): what it left behind. A process that survived
 * teardown, or memory still allocated, gives the next job less than it
 * asked for. The check re-reads once before this, to let teardown finish. */
static void judge_leftovers(judging *j, const ng_gpu_state *g)
{
	if (!j->after_job)
		return;
	if (g->processes.state == NG_FIELD_OK && g->processes.value > 0) {
		char pids[80] = "";
		size_t used = 0;
		for (size_t i = 0; i < g->n_pids && i < 8 && used < sizeof pids; i++) {
			int w = snprintf(pids + used, sizeof pids - used, "%s%u", i ? ", " : "", g->pid[i]);
			if (w < 0)
				break;
			used += (size_t)w;
		}
		add(j, NG_HEALTH_DEGRADED, "gpu.processes",
		    "%llu compute process%s still running after the job%s%s%s: it survived teardown",
		    (unsigned long long)g->processes.value, g->processes.value == 1 ? "" : "es",
		    pids[0] ? " (pid " : "", pids, pids[0] ? ")" : "");
		return;
	}
	const ng_gpu_field *u = &g->memory_used_mib, *t = &g->memory_total_mib;
	if (u->state == NG_FIELD_OK && t->state == NG_FIELD_OK && t->value > 0 &&
	    (double)u->value > j->pol->health_memory_used_share * (double)t->value)
		add(j, NG_HEALTH_DEGRADED, "gpu.memory_used",
		    "%llu of %llu MiB still allocated after the job (above %.0f%%): a process survived "
		    "teardown; the next job gets less memory than it asked for",
		    (unsigned long long)u->value, (unsigned long long)t->value,
		    100 * j->pol->health_memory_used_share);
}

/* A GPU whose correctable errors stand far above its siblings' in the
 * same check: one GPU rising by thousands while its siblings read 0 is a
 * published failure that a fixed threshold alone misses. */
static bool ecc_outlier(const ng_gpu_snapshot *s, size_t i, const ng_policy *pol, uint64_t *median)
{
	const ng_gpu_field *f = &s->gpu[i].ecc_volatile_corrected;
	if (f->state != NG_FIELD_OK)
		return false;
	uint64_t v[NG_GPU_MAX];
	size_t n = 0;
	for (size_t k = 0; k < s->n_gpus && k < NG_GPU_MAX; k++)
		if (k != i && s->gpu[k].presence == NG_GPU_LISTED &&
		    s->gpu[k].ecc_volatile_corrected.state == NG_FIELD_OK)
			v[n++] = s->gpu[k].ecc_volatile_corrected.value;
	if (n < 2)
		return false;
	for (size_t a = 1; a < n; a++) /* insertion sort: at most 63 */
		for (size_t b = a; b > 0 && v[b - 1] > v[b]; b--) {
			uint64_t t = v[b];
			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	*median = v[n / 2];
	uint64_t floor = (uint64_t)(pol->health_ecc_corrected_volatile / 10);
	return f->value >= (floor > 10 ? floor : 10) && f->value / 100 > *median;
}

static void judge_pcie(judging *j, const ng_gpu_state *g)
{
	bool w = readable(j, &g->pcie_width, "pcie.width", "PCIe link width");
	bool wm = readable(j, &g->pcie_width_max, "pcie.width", "PCIe maximum link width");
	if (w && wm && g->pcie_width.value < g->pcie_width_max.value)
		add(j, NG_HEALTH_DEGRADED, "pcie.width",
		    "PCIe link x%llu of x%llu: host transfers run at a fraction of their speed and every "
		    "collective this GPU joins waits for it",
		    (unsigned long long)g->pcie_width.value, (unsigned long long)g->pcie_width_max.value);

	bool c = readable(j, &g->pcie_gen, "pcie.gen", "PCIe link generation");
	bool cm = readable(j, &g->pcie_gen_max, "pcie.gen", "PCIe maximum link generation");
	if (!(c && cm && g->pcie_gen.value < g->pcie_gen_max.value))
		return;
	/* An idle GPU lowers its link generation by design, so only a busy one
	 * running below its maximum is a finding. */
	idleness idle = at_rest(j, g);
	if (idle == IDLE_YES)
		return;
	if (idle == IDLE_UNKNOWN)
		add(j, NG_HEALTH_UNKNOWN, "pcie.gen",
		    "PCIe gen %llu of %llu, and whether the GPU was idle (an idle link drops its generation "
		    "by design) could not be read",
		    (unsigned long long)g->pcie_gen.value, (unsigned long long)g->pcie_gen_max.value);
	else
		add(j, NG_HEALTH_DEGRADED, "pcie.gen",
		    "PCIe gen %llu of %llu while the GPU is not idle: host transfers run at a fraction of "
		    "their speed",
		    (unsigned long long)g->pcie_gen.value, (unsigned long long)g->pcie_gen_max.value);
}

static void judge_replays(judging *j, const ng_gpu_state *g)
{
	if (readable(j, &g->pcie_replays, "pcie.replays", "PCIe replay counter") &&
	    g->pcie_replays.value > (uint64_t)j->pol->health_replays_absolute)
		add(j, NG_HEALTH_DEGRADED, "pcie.replays",
		    "%llu PCIe replays since the last reset, above %ld: the link keeps retrying",
		    (unsigned long long)g->pcie_replays.value, j->pol->health_replays_absolute);
}

/* Clock event reasons: what a bit means, how severe, and the bits that,
 * when also set, explain it instead. */
static const struct clock_rule {
	uint64_t bit, unless;
	ng_health severity;
	const char *signal, *text;
} clock_rules[] = {
	{NG_CLK_HW_POWER_BRAKE, 0, NG_HEALTH_DEGRADED, "clock.hw_power_brake",
	 "hardware power brake engaged (an external power-brake signal): clocks cut by half or more"},
	/* HW slowdown together with HW thermal slowdown is the heat, not the
	 * card; with the power brake it is said once, above. */
	{NG_CLK_HW_SLOWDOWN, NG_CLK_HW_THERMAL | NG_CLK_HW_POWER_BRAKE, NG_HEALTH_DEGRADED, "clock.hw_slowdown",
	 "hardware slowdown engaged with no thermal cause: clocks cut by half or more (power delivery "
	 "or its fast-trigger protection)"},
	{NG_CLK_HW_THERMAL, 0, NG_HEALTH_TRANSIENT, "clock.hw_thermal",
	 "hardware thermal slowdown: the GPU is protecting itself from heat; check cooling and rack position"},
	{NG_CLK_SW_THERMAL, 0, NG_HEALTH_TRANSIENT, "clock.sw_thermal",
	 "software thermal slowdown: the GPU is at its maximum operating temperature; check cooling"},
};

static void judge_clocks(judging *j, const ng_gpu_state *g)
{
	if (!readable(j, &g->clock_reasons, "clock.reasons", "clock event reasons"))
		return;
	uint64_t b = g->clock_reasons.value;
	bool idle = idle_of(j, g) == IDLE_YES;
	for (size_t i = 0; i < sizeof clock_rules / sizeof *clock_rules; i++) {
		const struct clock_rule *r = &clock_rules[i];
		if (!(b & r->bit) || (b & r->unless))
			continue;
		if (r->bit != NG_CLK_HW_THERMAL) {
			add(j, r->severity, r->signal, "%s", r->text);
			continue;
		}
		/* Once under load, the GPU protecting itself from heat. With
		 * nothing running, or in two checks running (seed 002: a signal
		 * must persist across two checks), a hard limit keeps being
		 * exceeded: the cooling or the card, not the weather. */
		j->v->hw_thermal_run = (j->h ? j->h->hw_thermal_before : 0) + 1;
		if (idle)
			add(j, NG_HEALTH_DEGRADED, r->signal,
			    "hardware thermal slowdown on an idle GPU: a hard limit exceeded with nothing running "
			    "(cooling, airflow or the card)");
		else if (j->v->hw_thermal_run >= 2)
			add(j, NG_HEALTH_DEGRADED, r->signal,
			    "hardware thermal slowdown in %u checks running: a hard limit keeps being exceeded "
			    "(cooling, airflow or the card)",
			    j->v->hw_thermal_run);
		else
			add(j, r->severity, r->signal, "%s", r->text);
	}

	/* A busy GPU held well below its maximum clock by a limit: reported
	 * only (severity ok); the bits above already judge the limits. */
	const uint64_t limits = NG_CLK_SW_POWER_CAP | NG_CLK_HW_SLOWDOWN | NG_CLK_SW_THERMAL |
	                        NG_CLK_HW_THERMAL | NG_CLK_HW_POWER_BRAKE;
	if (at_rest(j, g) == IDLE_YES || !(b & limits) || g->sm_clock_mhz.state != NG_FIELD_OK ||
	    g->sm_clock_max_mhz.state != NG_FIELD_OK || g->sm_clock_max_mhz.value == 0)
		return;
	double ratio = (double)g->sm_clock_mhz.value / (double)g->sm_clock_max_mhz.value;
	if (ratio < j->pol->health_clock_ratio_under_load)
		add(j, NG_HEALTH_OK, "clock.under_load",
		    "SM clock %llu of %llu MHz (%.0f%%) while busy, below %.0f%%, held by %s%s%s%s%s",
		    (unsigned long long)g->sm_clock_mhz.value, (unsigned long long)g->sm_clock_max_mhz.value,
		    100 * ratio, 100 * j->pol->health_clock_ratio_under_load,
		    (b & NG_CLK_SW_POWER_CAP) ? "[power cap]" : "", (b & NG_CLK_HW_SLOWDOWN) ? "[hw slowdown]" : "",
		    (b & NG_CLK_SW_THERMAL) ? "[sw thermal]" : "", (b & NG_CLK_HW_THERMAL) ? "[hw thermal]" : "",
		    (b & NG_CLK_HW_POWER_BRAKE) ? "[power brake]" : "");
}

/* "3, 7, 12" into buf, from the links whose bit is set. */
static void link_list(const bool *set, size_t n, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < n && used < cap; k++) {
		if (!set[k])
			continue;
		int w = snprintf(buf + used, cap - used, "%s%zu", used ? ", " : "", k);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static void judge_nvlink(judging *j, const ng_gpu_state *g)
{
	size_t n = g->n_links < NG_NVLINK_MAX ? g->n_links : NG_NVLINK_MAX;
	bool down[NG_NVLINK_MAX] = {0}, unread[NG_NVLINK_MAX] = {0};
	size_t n_down = 0, n_unread = 0;
	for (size_t k = 0; k < n; k++) {
		const ng_gpu_field *a = &g->link[k].active;
		if (a->state == NG_FIELD_OK && a->value == 0)
			down[k] = true, n_down++;
		else if (a->state == NG_FIELD_FAILED || a->state == NG_FIELD_UNREAD)
			unread[k] = true, n_unread++;
	}
	char list[80];
	if (n_down) {
		link_list(down, n, list, sizeof list);
		add(j, NG_HEALTH_DEGRADED, "nvlink.down",
		    "NVLink %s %s down (%zu of %zu): traffic between GPUs squeezes onto the links left",
		    n_down == 1 ? "link" : "links", list, n_down, n);
	}
	if (n_unread) {
		link_list(unread, n, list, sizeof list);
		add(j, NG_HEALTH_UNKNOWN, "nvlink.active", "whether NVLink %s %s %s up could not be read",
		    n_unread == 1 ? "link" : "links", list, n_unread == 1 ? "is" : "are");
	}
}

/* ---- rates against the history ---------------------------------------------------- */

/* The sum of the fields that were read. false when one failed (the rate is
 * unknown) or when none holds a value (the rate does not apply). */
static bool counter_sum(const ng_gpu_field *const *f, size_t n, uint64_t *sum, bool *failed)
{
	bool any = false;
	*sum = 0;
	*failed = false;
	for (size_t i = 0; i < n; i++) {
		if (f[i]->state == NG_FIELD_FAILED)
			*failed = true;
		else if (f[i]->state == NG_FIELD_OK) {
			*sum += f[i]->value;
			any = true;
		}
	}
	return any && !*failed;
}

static const ng_gpu_history *history_for(const ng_gpu_state *g, const ng_gpu_history *h, size_t n)
{
	if (!h || !g->uuid[0])
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (h[i].uuid && strcmp(h[i].uuid, g->uuid) == 0)
			return &h[i];
	return NULL;
}

static void judge_rate(judging *j, const ng_gpu_field *const *f, size_t n, uint64_t past, double hours,
                       double limit, bool per_day, const char *signal, const char *what)
{
	uint64_t now;
	bool failed;
	if (!counter_sum(f, n, &now, &failed)) {
		if (failed)
			add(j, NG_HEALTH_UNKNOWN, signal, "the rate of %s is unknown: the counter could not be read",
			    what);
		return;
	}
	/* A counter below its history was reset since (a GPU reset or a
	 * reboot): everything it holds is new. */
	uint64_t delta = now >= past ? now - past : now;
	double window = hours > j->pol->health_rate_min_hours ? hours : j->pol->health_rate_min_hours;
	double rate = (double)delta / window * (per_day ? 24.0 : 1.0);
	if (rate > limit)
		add(j, NG_HEALTH_DEGRADED, signal,
		    "%s rose by %llu in %.1f h: %.4g %s (counted over at least %g h), above %g", what,
		    (unsigned long long)delta, hours, rate, per_day ? "a day" : "an hour",
		    j->pol->health_rate_min_hours, limit);
}

static void judge_rates(judging *j, const ng_gpu_state *g, const ng_gpu_history *h)
{
	if (!h || !isfinite(h->hours_ago) || !(h->hours_ago > 0))
		return; /* no interval, no rate */
	const ng_policy *p = j->pol;
	double hours = h->hours_ago;

	const ng_gpu_field *pages[] = {&g->retired_pages_sbe, &g->retired_pages_dbe};
	if (!(h->unread & NG_HIST_UNREAD_RETIRED_PAGES))
		judge_rate(j, pages, 2, h->retired_pages, hours, p->health_retired_pages_per_day, true,
		           "rate.retired_pages", "retired pages");
	const ng_gpu_field *rows[] = {&g->remap_corrected, &g->remap_uncorrected};
	if (!(h->unread & NG_HIST_UNREAD_REMAPPED_ROWS))
		judge_rate(j, rows, 2, h->remapped_rows, hours, p->health_remapped_rows_per_day, true,
		           "rate.remapped_rows", "remapped rows");
	const ng_gpu_field *replays[] = {&g->pcie_replays};
	if (!(h->unread & NG_HIST_UNREAD_PCIE_REPLAYS))
		judge_rate(j, replays, 1, h->pcie_replays, hours, p->health_pcie_replays_per_hour, false,
		           "rate.pcie_replays", "PCIe replays");

	const ng_gpu_field *links[NG_NVLINK_MAX * 3];
	size_t n = 0, nl = g->n_links < NG_NVLINK_MAX ? g->n_links : NG_NVLINK_MAX;
	for (size_t k = 0; k < nl; k++) {
		links[n++] = &g->link[k].replay_errors;
		links[n++] = &g->link[k].recovery_errors;
		links[n++] = &g->link[k].crc_errors;
	}
	if (n && !(h->unread & NG_HIST_UNREAD_NVLINK_ERRORS))
		judge_rate(j, links, n, h->nvlink_errors, hours, p->health_nvlink_errors_per_hour, false,
		           "rate.nvlink_errors", "NVLink errors");
}

/* ---- Xids --------------------------------------------------------------------------- */

/* One reason per code and cause. A line that names the Xid that caused it
 * ("45 ... caused by previous Xid 149") takes the worse class of the two
 * and names the cause, even when the cause's own line fell outside the
 * window: a 45 after an NVLink fault is the link's doing, not the job's. */
static void judge_xids(judging *j, const ng_gpu_state *g)
{
	size_t n = g->n_xid < NG_GPU_XID_MAX ? g->n_xid : NG_GPU_XID_MAX;
	for (size_t i = 0; i < n; i++) {
		int code = g->xid[i].code, cause = g->xid[i].cause;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = g->xid[k].code == code && g->xid[k].cause == cause;
		if (seen)
			continue;
		size_t count = 0, last = i;
		for (size_t k = i; k < n; k++)
			if (g->xid[k].code == code && g->xid[k].cause == cause)
				count++, last = k;
		const struct xid_entry *e = xid_lookup(code);
		ng_xid_class cls = e ? e->cls : NG_XID_UNLISTED;
		ng_health sev = xid_classes[cls].severity;
		const char *meaning = xid_classes[cls].meaning;
		char by[96] = "";
		if (cause > 0 && cause != code) {
			const struct xid_entry *ce = xid_lookup(cause);
			ng_xid_class ccls = ce ? ce->cls : NG_XID_UNLISTED;
			snprintf(by, sizeof by, " caused by Xid %d%s%s", cause, ce ? " " : "",
			         ce ? ce->mnemonic : "");
			if (rank(xid_classes[ccls].severity) > rank(sev)) {
				sev = xid_classes[ccls].severity;
				meaning = xid_classes[ccls].meaning;
			}
		}
		char times[32] = "";
		if (count > 1)
			snprintf(times, sizeof times, " (%zu times)", count);
		const char *msg = g->xid[last].message;
		add(j, sev, e ? e->signal : "xid.unlisted", "Xid %d%s%s%s%s, %s%s%.80s", code, e ? " " : "",
		    e ? e->mnemonic : "", by, times, meaning, msg[0] ? ": " : "", msg);
	}
}

/* ---- one GPU, the node -------------------------------------------------------------- */

/* Whether any field a rule reads holds a value. A GPU that answered
 * nothing the rules need (every field failed, unread or "not supported") is
 * unknown, never ok. */
static bool anything_read(const ng_gpu_state *g)
{
	static const size_t inputs[] = {
		GOFF(ecc_volatile_uncorrected), GOFF(remap_failed), GOFF(remap_pending), GOFF(retired_pending),
		GOFF(pcie_gen), GOFF(pcie_gen_max), GOFF(pcie_width), GOFF(pcie_width_max),
		GOFF(pcie_replays), GOFF(clock_reasons),
	};
	for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
		if (field_at(g, inputs[i])->state == NG_FIELD_OK)
			return true;
	size_t n = g->n_links < NG_NVLINK_MAX ? g->n_links : NG_NVLINK_MAX;
	for (size_t k = 0; k < n; k++)
		if (g->link[k].active.state == NG_FIELD_OK)
			return true;
	return false;
}

/* Whether a field failed outright (not merely unsupported or never asked). */
static bool any_failed(const ng_gpu_state *g)
{
#define FAILED_FIELD(m) if (g->m.state == NG_FIELD_FAILED) return true;
	NG_GPU_FIELDS(FAILED_FIELD)
#undef FAILED_FIELD
	return false;
}

/* A GPU that answered nothing the rules read, while NVML answered for a
 * sibling in the same check: this GPU, not NVML, is not answering. */
static bool unresponsive(const ng_gpu_state *g, bool siblings_answer)
{
	return siblings_answer && g->presence == NG_GPU_LISTED && !g->lost && !anything_read(g) &&
	       any_failed(g);
}

static void judge_gpu(const ng_gpu_state *g, const ng_gpu_history *history, size_t n_history,
                      const ng_policy *pol, bool siblings_answer, bool after_job, ng_gpu_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->index = g->index;
	snprintf(v->uuid, sizeof v->uuid, "%.*s", (int)sizeof v->uuid - 1, g->uuid);
	snprintf(v->bus, sizeof v->bus, "%.*s", (int)sizeof v->bus - 1, g->bus);
	judging j = {.v = v, .worst = NG_HEALTH_OK, .pol = pol, .h = history_for(g, history, n_history),
	             .after_job = after_job};

	if (g->presence == NG_GPU_MISSING) {
		/* Present evidence: a GPU its own node knows, gone from NVML's list
		 * while NVML answers for its siblings. Its Xids still count. */
		add(&j, NG_HEALTH_FATAL, "gpu.missing",
		    "NVML does not list this GPU (%.40s knows it at %.16s%s%.60s): it has fallen off the bus "
		    "or its driver gave it up",
		    g->seen_by[0] ? g->seen_by : "the node", g->bus[0] ? g->bus : "an unknown bus",
		    g->uuid[0] ? ", " : "", g->uuid);
	} else if (g->presence == NG_GPU_UNANSWERED) {
		add(&j, NG_HEALTH_UNKNOWN, "gpu.read",
		    "NVML gave no answer for this GPU (%.40s knows it): only its kernel Xids were judged",
		    g->seen_by[0] ? g->seen_by : "the kernel");
	} else if (unresponsive(g, siblings_answer)) {
		/* Kept, and counted: once is a hiccup (a query racing a reset),
		 * health.unresponsive_checks in a row is a GPU that has stopped
		 * answering. A node-wide hang never gets here. */
		const ng_gpu_history *h = history_for(g, history, n_history);
		v->unresponsive_run = (h ? h->unresponsive_before : 0) + 1;
		long need = pol->health_unresponsive_checks > 0 ? pol->health_unresponsive_checks : 3;
		bool lasting = (long)v->unresponsive_run >= need;
		add(&j, lasting ? NG_HEALTH_DEGRADED : NG_HEALTH_UNRESPONSIVE, "gpu.unresponsive",
		    "NVML answers for its siblings but not for this GPU (%u check%s in a row%s)%s%.90s",
		    v->unresponsive_run, v->unresponsive_run == 1 ? "" : "s",
		    lasting ? ", at or above health.unresponsive_checks" : "", g->error[0] ? ": " : "", g->error);
	} else if (g->lost) {
		/* Nothing else can be read from a lost GPU; its Xids still count. */
		add(&j, NG_HEALTH_FATAL, "gpu.lost",
		    "NVML reports the GPU lost: it has fallen off the bus or stopped answering");
	} else {
		if (g->error[0])
			add(&j, NG_HEALTH_UNKNOWN, "gpu.read", "%.150s", g->error);
		else if (!anything_read(g))
			add(&j, NG_HEALTH_UNKNOWN, "gpu.read",
			    "none of the counters the health rules read could be read for this GPU");
		judge_fields(&j, g);
		judge_pcie(&j, g);
		judge_replays(&j, g);
		judge_clocks(&j, g);
		judge_nvlink(&j, g);
		judge_rates(&j, g, history_for(g, history, n_history));
		judge_leftovers(&j, g);
	}
	judge_xids(&j, g);
	v->severity = j.worst;
}

void ng_health_judge(const ng_gpu_snapshot *s, const ng_gpu_history *history, size_t n_history,
                     const ng_policy *pol, ng_node_health *out)
{
	/* The verdicts are zeroed one by one as each GPU is judged: only
	 * gpu[0 .. n_gpus) is read, and all NG_GPU_MAX of them are 185 KiB of
	 * pages no check of a few GPUs needs to touch. */
	memset(out, 0, offsetof(ng_node_health, gpu));
	memset(out->unknown_why, 0, sizeof out->unknown_why);
	out->severity = NG_HEALTH_OK;
	size_t n = s->n_gpus < NG_GPU_MAX ? s->n_gpus : NG_GPU_MAX, listed = 0;
	for (size_t i = 0; i < n; i++)
		listed += s->gpu[i].presence == NG_GPU_LISTED;
	if (s->nvml != NG_FIELD_OK || listed == 0) {
		/* A monitoring failure is never a drain by itself. */
		if (s->nvml != NG_FIELD_OK && s->nvml_error[0])
			snprintf(out->unknown_why, sizeof out->unknown_why, "NVML failed: %.240s", s->nvml_error);
		else if (s->nvml != NG_FIELD_OK)
			snprintf(out->unknown_why, sizeof out->unknown_why, "NVML %s",
			         s->nvml == NG_FIELD_FAILED ? "failed" : "was not read");
		else
			/* After an upgrade NVML can briefly see no GPUs on a healthy
			 * node: that is not evidence against the node. */
			snprintf(out->unknown_why, sizeof out->unknown_why,
			         "NVML reported no GPUs (a monitoring fault until shown otherwise, never a drain)");
	}
	/* The GPUs the kernel or the store vouch for are judged whatever NVML
	 * did: their Xids are evidence of their own. */
	ng_health worst = NG_HEALTH_OK;
	bool answered = false;
	for (size_t i = 0; i < n; i++)
		answered = answered || (s->gpu[i].presence == NG_GPU_LISTED && anything_read(&s->gpu[i]));
	for (size_t i = 0; i < n; i++) {
		if (s->nvml != NG_FIELD_OK && s->gpu[i].presence == NG_GPU_LISTED)
			continue; /* what a failed NVML listed is not to be trusted */
		ng_gpu_verdict *v = &out->gpu[out->n_gpus++];
		judge_gpu(&s->gpu[i], history, n_history, pol, s->nvml == NG_FIELD_OK && answered, s->after_job, v);
		uint64_t median;
		if (s->gpu[i].presence == NG_GPU_LISTED && ecc_outlier(s, i, pol, &median)) {
			judging j = {.v = v, .worst = v->severity, .pol = pol};
			add(&j, NG_HEALTH_DEGRADED, "ecc.corrected_outlier",
			    "%llu correctable ECC errors since the last reset while its siblings read %llu (the "
			    "median): this GPU's memory, not the workload",
			    (unsigned long long)s->gpu[i].ecc_volatile_corrected.value, (unsigned long long)median);
			v->severity = j.worst;
		}
		worst = worse(worst, v->severity);
	}
	if (out->unknown_why[0] && worst != NG_HEALTH_DEGRADED && worst != NG_HEALTH_FATAL)
		worst = NG_HEALTH_UNKNOWN;
	out->severity = worst;
	out->drain = out->severity == NG_HEALTH_DEGRADED || out->severity == NG_HEALTH_FATAL;
}
