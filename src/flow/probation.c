/* Probation under a real job (flow/probation.h). */
#include "flow/probation.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/probation.h"
#include "store/probation.h"

#define HISTORY_MAX 64

static const char *env_or(const char *given, const char *name)
{
	if (given)
		return given;
	const char *v = getenv(name);
	return v ? v : "";
}

/* SLURM_JOB_START_TIME, unix seconds; 0 when unset or not a number. */
static int64_t env_start(void)
{
	const char *v = getenv("SLURM_JOB_START_TIME");
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long long t = strtoll(v, &end, 10);
	return *end || errno || t <= 0 ? 0 : (int64_t)t;
}

int ng_probation_after_check(ng_store *st, const ng_policy *pol, const ng_probation_check *chk,
                             const char **decided, char *why, size_t cap, ng_err *err)
{
	char sentence[512] = "";
	if (decided)
		*decided = "";
	if (why && cap)
		why[0] = '\0';
	const char *job = env_or(chk->job, "SLURM_JOB_ID");
	const char *name = env_or(chk->job_name, "SLURM_JOB_NAME");
	if (!chk->mode || strcmp(chk->mode, "epilog") != 0 || !job[0] || strlen(job) >= 64)
		return 0;
	int64_t start = chk->job_start > 0 ? chk->job_start : env_start();
	int64_t runtime = start > 0 && chk->now >= start ? chk->now - start : -1;
	bool clean = !chk->drained && chk->new_xids == 0 && chk->outcome &&
	             (strcmp(chk->outcome, "ok") == 0 || strcmp(chk->outcome, "transient") == 0);

	/* The history it is judged against is read before this run joins it. */
	double history[HISTORY_MAX];
	size_t n_history = 0;
	ng_store_probation p;
	int on = ng_store_probation_of(st, chk->node, &p, err);
	if (on < 0 || (on == 1 && name[0] &&
	               ng_store_job_runtimes(st, name, chk->node, history, HISTORY_MAX, &n_history,
	                                     err) < 0))
		return -1;
	if (ng_store_put_job_run(st, chk->node, job, name, runtime, clean, chk->now, err) < 0)
		return -1;
	if (on == 0)
		return 0;
	/* A canary job, where the policy names one, is the only job that
	 * decides; any job's fault still does. */
	bool canary = !pol->canary_job[0] || strcmp(pol->canary_job, name) == 0;
	ng_store_case open;
	int has_open = ng_store_open_case_of(st, chk->node, &open, err);
	if (has_open < 0)
		return -1;
	if (has_open == 1) {
		snprintf(sentence, sizeof sentence,
		         "case %lld opened while the node was on probation: it decides now",
		         (long long)open.id);
		ng_store_case_free(&open);
		if (ng_store_end_probation(st, p.id, NG_PROBATION_SUPERSEDED, chk->now, job, sentence,
		                           err) < 0)
			return -1;
		if (decided)
			*decided = "superseded";
		goto done;
	}
	ng_probation_job in = {
		.drained = chk->drained,
		.outcome = chk->outcome,
		.new_xids = chk->new_xids,
		.runtime_s = (double)runtime,
		.history = history,
		.n_history = n_history,
		.history_min = pol->probation_history_min,
		.straggler_ratio = pol->straggler_ratio,
	};
	ng_probation_verdict v = ng_probation_judge(&in, sentence, sizeof sentence);
	if (v == NG_PROBATION_PASS && !canary) {
		snprintf(sentence, sizeof sentence,
		         "job %s (%s) ran clean, but only the canary job \"%s\" ends the probation", job,
		         name[0] ? name : "no name", pol->canary_job);
		v = NG_PROBATION_WAIT;
	}
	if (v != NG_PROBATION_WAIT &&
	    ng_store_end_probation(st, p.id,
	                           v == NG_PROBATION_PASS ? NG_PROBATION_PASSED : NG_PROBATION_FAILED,
	                           chk->now, job, sentence, err) < 0)
		return -1;
	if (decided)
		*decided = v == NG_PROBATION_WAIT ? "" : ng_probation_verdict_name(v);
done:
	if (why && cap)
		snprintf(why, cap, "probation (case %lld): %s", (long long)p.case_id, sentence);
	return 0;
}
