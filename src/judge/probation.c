/* Probation's rule (judge/probation.h). */
#include "judge/probation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

const char *ng_probation_verdict_name(ng_probation_verdict v)
{
	switch (v) {
	case NG_PROBATION_PASS: return "pass";
	case NG_PROBATION_FAIL: return "fail";
	case NG_PROBATION_WAIT: return "wait";
	}
	return "invalid";
}

static bool is(const char *a, const char *b) { return a && strcmp(a, b) == 0; }

ng_probation_verdict ng_probation_judge(const ng_probation_job *j, char *why, size_t cap)
{
	if (j->drained || is(j->outcome, "fatal") || is(j->outcome, "degraded")) {
		snprintf(why, cap, "the job's epilog found a fault of this node (%s%s)",
		         j->outcome ? j->outcome : "?", j->drained ? ", drained" : "");
		return NG_PROBATION_FAIL;
	}
	if (j->new_xids) {
		snprintf(why, cap, "the kernel reported %zu Xid%s for the node's GPUs during the job",
		         j->new_xids, j->new_xids == 1 ? "" : "s");
		return NG_PROBATION_FAIL;
	}
	if (!is(j->outcome, "ok") && !is(j->outcome, "transient")) {
		snprintf(why, cap, "the epilog could not judge the GPUs (%s): the next job decides",
		         j->outcome ? j->outcome : "no outcome");
		return NG_PROBATION_WAIT;
	}
	if (j->gang_peers > 0 && j->gang_ratio > j->straggler_ratio) {
		snprintf(why, cap, "a straggler in its gang: step %.60s took %.0f s here, %.2f times the "
		                   "median %.0f s of its %zu peers in the same job (limit %.2f)",
		         j->gang_step ? j->gang_step : "?", j->gang_own_s, j->gang_ratio, j->gang_median_s,
		         j->gang_peers, j->straggler_ratio);
		return NG_PROBATION_FAIL;
	}
	char gang[200] = "";
	if (j->gang_peers > 0)
		snprintf(gang, sizeof gang, "; step %.60s %.2f times its %zu gang peers' median",
		         j->gang_step ? j->gang_step : "?", j->gang_ratio, j->gang_peers);
	if (!(j->runtime_s >= 0)) {
		snprintf(why, cap, "clean epilog, no new Xid; the job's runtime is not known, so it "
		                   "was not compared with its history%s", gang);
		return NG_PROBATION_PASS;
	}
	if (j->n_history == 0 || (long)j->n_history < j->history_min) {
		snprintf(why, cap, "clean epilog, no new Xid; runtime %.0f s (%zu earlier run%s of the "
		                   "job, fewer than %ld: not compared)%s",
		         j->runtime_s, j->n_history, j->n_history == 1 ? "" : "s", j->history_min, gang);
		return NG_PROBATION_PASS;
	}
	double *work = malloc(j->n_history * sizeof *work);
	if (!work) {
		snprintf(why, cap, "out of memory comparing the runtime: the next job decides");
		return NG_PROBATION_WAIT;
	}
	double median = ng_np_median(j->history, j->n_history, work);
	free(work);
	if (!(median > 0)) {
		snprintf(why, cap, "clean epilog, no new Xid; the job's earlier runs took no time: "
		                   "runtime not compared%s", gang);
		return NG_PROBATION_PASS;
	}
	double ratio = j->runtime_s / median;
	if (ratio > j->straggler_ratio) {
		snprintf(why, cap, "a straggler: the job ran %.0f s, %.2f times the median %.0f s of its "
		                   "%zu earlier runs elsewhere (limit %.2f)",
		         j->runtime_s, ratio, median, j->n_history, j->straggler_ratio);
		return NG_PROBATION_FAIL;
	}
	snprintf(why, cap, "clean epilog, no new Xid, runtime %.0f s is %.2f times the median of "
	                   "%zu earlier runs of the job elsewhere%s",
	         j->runtime_s, ratio, j->n_history, gang);
	return NG_PROBATION_PASS;
}
