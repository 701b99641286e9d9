/* Probation under a real job (flow/probation.h). */
#include "flow/probation.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/job_steps.h"
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

struct gang {
	double ratio, own_s, median_s;
	size_t peers;
	char step[128], note[320];
};

/* This node's steps against its gang peers' in the same job: g->peers 0
 * when there is no gang (one node, no steps, sacct unreadable: g->note
 * says which). */
static void read_gang(const ng_probation_check *chk, const char *job, size_t min_peers,
                      struct gang *g)
{
	memset(g, 0, sizeof *g);
	char host[256] = "";
	const char *node = chk->slurm_node && *chk->slurm_node ? chk->slurm_node
	                                                      : getenv("SLURMD_NODENAME");
	if (!node || !*node) {
		if (gethostname(host, sizeof host - 1) == 0)
			host[strcspn(host, ".")] = '\0';
		node = host;
	}
	ng_sacct_step *steps = calloc(NG_JOB_STEPS_MAX, sizeof *steps);
	size_t n = 0;
	if (!steps) {
		snprintf(g->note, sizeof g->note, "out of memory reading the job's steps");
		return;
	}
	if (ng_job_steps_read(job, steps, NG_JOB_STEPS_MAX, &n, g->note, sizeof g->note) == 0) {
		g->ratio = ng_sacct_gang_ratio(steps, n, node, min_peers, &g->peers, &g->own_s,
		                               &g->median_s, g->step, sizeof g->step);
		if (g->ratio < 0)
			g->peers = 0;
	}
	free(steps);
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
	struct gang gang;
	read_gang(chk, job, pol->probation_history_min > 0 ? (size_t)pol->probation_history_min : 1,
	          &gang);
	ng_probation_job in = {
		.gang_ratio = gang.ratio,
		.gang_own_s = gang.own_s,
		.gang_median_s = gang.median_s,
		.gang_peers = gang.peers,
		.gang_step = gang.step,
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
	if (gang.note[0] && v == NG_PROBATION_PASS) {
		size_t used = strlen(sentence);
		snprintf(sentence + used, sizeof sentence - used, " (gang not compared: %.200s)",
		         gang.note);
	}
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
