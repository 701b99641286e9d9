/* Contestant 1: a fixed floor at 0.75 x a reference value, DCGM style.
 *
 * The published rule (../shared/reference/prior-art.md, section 1): NVIDIA
 * DCGM's diagnostic thresholds are fixed per SKU in nvvs/diag-skus.yaml.in
 * (spec dcgm-diag-v1, keyed by PCI device id), and the file's comments show
 * each threshold is 0.75 x a dcgmproftester measurement of that SKU (H100
 * 80GB HBM3: sm_stress.target_stress 29250, memory_bandwidth.minimum_bandwidth
 * 1905000). A plugin whose measurement is under its threshold fails, and
 * "Fail" also covers a plugin that "could not complete because of a setup or
 * execution error" (DCGM docs, diagnostics/plugins), so a run that measured
 * nothing fails too. The memory and bandwidth plugins verify the data they
 * move, so wrong results fail. DCGM lands nothing itself; its consumers
 * (NHC-style drains, HyperPod, CHS --drain-bad-nodes) drain on a Fail, which
 * is what this contestant does, after one re-run of the failed plugins: DCGM
 * pairs a detected violation with a validating diagnostic (its policy's
 * SV_SHORT..SV_XLONG validation, a built-in two-stage path), and the
 * consumers that drain on it retry a failed check before acting (GCM's
 * node-problem-detector chart: maxRetries 2), so one Fail that does not
 * recur is not what drains a node (prior-art.md, sections 1 and 7a).
 *
 * Here: only what DCGM measures is judged: the GPU's compute and memory
 * plugins and the GPU fabric (gpu.*, gpumem.*, nccl.*); storage, the CPU and
 * host memory are not DCGM's. The reference is the SKU's (class's) healthy
 * median; the value is the mean of the run's samples, as the plugins report
 * an average rate. A run whose correctness check was off (wrong null) is
 * invisible to the rule. Where the scenario sets a workload floor, a value
 * under it fails too. */
#include <math.h>

#include "sim.h"

#define DCGM_FRACTION 0.75

bool ng_sim_dcgm_fails(const ng_fleet_result *r, double reference)
{
	if (r->n_samples == 0)
		return true; /* could not complete: Fail */
	if (r->wrong > 0)
		return true;
	double v = ng_sim_value_mean(r);
	return !(v >= DCGM_FRACTION * reference);
}

static void *create(const ng_sim_fleet *f)
{
	(void)f;
	static int none;
	return &none;
}

static bool fails(const ng_sim_fleet *f, size_t cls, size_t m, const ng_fleet_result *r)
{
	return ng_sim_dcgm_fails(r, f->reference[cls * NG_FLEET_METRICS_MAX + m]) ||
	       ng_sim_below_floor(f, cls, m, ng_sim_value_mean(r));
}

static int run(void *state, const ng_sim_fleet *f, size_t r, const bool *in_service,
               ng_sim_decision *out)
{
	(void)state;
	const ng_fleet_spec *s = f->spec;
	ng_fleet_probe p, again;
	for (size_t node = 0; node < s->n_nodes; node++) {
		if (!in_service[node])
			continue;
		const ng_fleet_truth *t = &f->truth[node];
		ng_fleet_draw_truth(s, t, r, 0, &p);
		out[node] = (ng_sim_decision){.action = NG_SIM_ADMIT, .attempts = 1};
		bool failed[NG_FLEET_METRICS_MAX] = {0}, any = false;
		for (size_t m = 0; m < s->n_metrics; m++) {
			failed[m] = ng_sim_dcgm_measures(s->metrics[m].name) && fails(f, t->cls, m, &p.m[m]);
			any = any || failed[m];
		}
		if (!any)
			continue;
		/* The failed plugins once more. */
		ng_fleet_draw_truth(s, t, r, 1, &again);
		out[node].attempts = 2;
		for (size_t m = 0; m < s->n_metrics; m++) {
			if (!failed[m])
				continue;
			out[node].last[m] = 1;
			if (fails(f, t->cls, m, &again.m[m]))
				out[node].action = NG_SIM_DRAIN;
		}
	}
	return 0;
}

static void destroy(void *state) { (void)state; }

const ng_sim_contestant ng_sim_dcgm = {
	.name = "dcgm-0.75x",
	.rule = "0.75 x the SKU reference on GPU metrics; a Fail (incl. could not run) re-run once, drains",
	.create = create,
	.run = run,
	.destroy = destroy,
};
