/* Contestant 2: a per-SKU constant with best-of-3 repeats, AzNHC style.
 *
 * The published rule (../shared/reference/prior-art.md, section 3):
 * Azure/azurehpc-health-checks keeps one NHC conf per VM SKU with fixed
 * thresholds (conf/nd96isr_h100_v5.conf: check_nccl_allreduce 460.0,
 * check_ib_bw_gdr 380; conf/nd96isr_h200_v5.conf: NCCL 431.0 against the
 * README's 480 GB/s). The NCCL check's REPEATS pass on the first iteration
 * that meets the threshold (best-of-N, introduced because healthy nodes
 * varied: Azure/azurehpc PR#690, #628); the issue fixes N at 3. A setup
 * failure gets FaultCode NHCNA but still `die 1`, so the node drains;
 * check_gpu_ecc fails on uncorrectable errors (wrong results) without a
 * repeat. A run whose correctness check was off is invisible to it.
 *
 * Here: the constant is 0.90 x the SKU's reference (431 / 480 = 0.898, the
 * H200 conf against its README); each iteration's value is the mean of its
 * samples; only the metrics that failed are repeated (each repeat is one
 * more probe run); an iteration that measured nothing fails that iteration,
 * and a metric that passes no iteration of three drains the node. */
#include <math.h>

#include "sim.h"

#define AZNHC_FRACTION 0.90
#define AZNHC_REPEATS 3

bool ng_sim_aznhc_iteration_passes(const ng_fleet_result *r, double reference)
{
	if (r->n_samples == 0)
		return false;
	double v = ng_sim_value_mean(r);
	return v >= AZNHC_FRACTION * reference;
}

unsigned ng_sim_aznhc_repeats(const ng_fleet_result *const *iter, size_t n, double reference,
                              bool *pass, bool *wrong)
{
	*pass = false;
	*wrong = false;
	unsigned used = 0;
	for (size_t i = 0; i < n && i < AZNHC_REPEATS; i++) {
		used++;
		if (iter[i]->wrong > 0) {
			*wrong = true; /* the ECC check fails; no repeat */
			return used;
		}
		if (ng_sim_aznhc_iteration_passes(iter[i], reference)) {
			*pass = true; /* the first iteration that meets the threshold */
			return used;
		}
	}
	return used;
}

static void *create(const ng_sim_fleet *f)
{
	(void)f;
	static int none;
	return &none;
}

static int run(void *state, const ng_sim_fleet *f, size_t r, const bool *in_service,
               ng_sim_decision *out)
{
	(void)state;
	const ng_fleet_spec *s = f->spec;
	ng_fleet_probe p[AZNHC_REPEATS];
	for (size_t node = 0; node < s->n_nodes; node++) {
		if (!in_service[node])
			continue;
		const ng_fleet_truth *t = &f->truth[node];
		const double *ref = &f->reference[t->cls * NG_FLEET_METRICS_MAX];
		/* Every iteration's draw is taken; only those the checks ran count. */
		for (unsigned a = 0; a < AZNHC_REPEATS; a++)
			ng_fleet_draw_truth(s, t, r, a, &p[a]);
		ng_sim_decision d = {.attempts = 1};
		bool drain = false;
		for (size_t m = 0; m < s->n_metrics; m++) {
			const ng_fleet_result *iter[AZNHC_REPEATS] = {&p[0].m[m], &p[1].m[m], &p[2].m[m]};
			bool pass, wrong;
			unsigned used = ng_sim_aznhc_repeats(iter, AZNHC_REPEATS, ref[m], &pass, &wrong);
			if (used > d.attempts)
				d.attempts = used;
			d.last[m] = (unsigned char)(used - 1);
			drain = drain || wrong || !pass;
		}
		d.action = drain ? NG_SIM_DRAIN : NG_SIM_ADMIT;
		out[node] = d;
	}
	return 0;
}

static void destroy(void *state) { (void)state; }

const ng_sim_contestant ng_sim_aznhc = {
	.name = "aznhc-best3",
	.rule = "per-SKU constant 0.90 x reference, pass on the first of 3 iterations; NHCNA drains",
	.create = create,
	.run = run,
	.destroy = destroy,
};
