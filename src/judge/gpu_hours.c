/* GPU-hours attribution (docs/report.md, "GPU-hours"). */
#include <stdlib.h>
#include <string.h>

#include "judge/gpu_hours.h"

static const struct {
	const char *state;
	ng_job_end end;
} ends[] = {
	{"COMPLETED", NG_JOB_COMPLETED},   {"FAILED", NG_JOB_FAILED},
	{"TIMEOUT", NG_JOB_FAILED},        {"OUT_OF_MEMORY", NG_JOB_FAILED},
	{"DEADLINE", NG_JOB_FAILED},       {"REQUEUED", NG_JOB_FAILED},
	{"NODE_FAIL", NG_JOB_NODE_FAIL},   {"BOOT_FAIL", NG_JOB_NODE_FAIL},
	{"CANCELLED", NG_JOB_CANCELLED},
};

ng_job_end ng_job_end_of(const char *state)
{
	for (size_t i = 0; state && i < sizeof ends / sizeof ends[0]; i++)
		if (strcmp(ends[i].state, state) == 0)
			return ends[i].end;
	return NG_JOB_OTHER;
}

const char *ng_job_end_name(ng_job_end e)
{
	static const char *const names[] = {"completed", "failed", "node-fail", "cancelled", "other"};
	return (unsigned)e < sizeof names / sizeof names[0] ? names[e] : "other";
}

static int by_node_time(const void *a, const void *b)
{
	const ng_gh_finding *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

void ng_gh_sort_findings(ng_gh_finding *f, size_t n)
{
	if (n > 1)
		qsort(f, n, sizeof *f, by_node_time);
}

/* first[k] .. first[k+1]: the findings of node k. */
static size_t *index_findings(const ng_gh_finding *f, size_t n, size_t n_nodes)
{
	size_t *first = calloc(n_nodes + 1, sizeof *first);
	if (!first)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (f[i].node < n_nodes)
			first[f[i].node + 1]++;
	for (size_t k = 0; k < n_nodes; k++)
		first[k + 1] += first[k];
	return first;
}

static bool same_job(const ng_gh_finding *f, const char *id)
{
	return f->job && f->job[0] && id && strcmp(f->job, id) == 0;
}

/* Whether node k has a finding that explains the job's end: with own, one
 * the job's own epilog made on it; otherwise any finding from the job's
 * start to grace after its end. */
static bool explained(const ng_gh_job *j, size_t k, const ng_gh_finding *f, const size_t *first,
                      const ng_gh_params *p, bool own)
{
	size_t lo = first[k], hi = first[k + 1];
	for (size_t i = lo; i < hi; i++) {
		if (own ? same_job(&f[i], j->id) && f[i].kind == NG_FINDING_EPILOG
		        : f[i].at >= j->start && f[i].at <= j->end + p->grace)
			return true;
	}
	return false;
}

/* Marks the job's nodes to blame: those its own epilog found faulty when
 * there are any (the strongest evidence: the job's own GPUs, at its end),
 * else, unless only that counts, those with any finding in the window. */
static size_t blame(const ng_gh_job *j, const ng_gh_finding *f, const size_t *first,
                    size_t n_nodes, const ng_gh_params *p, bool own_only, bool *hit)
{
	size_t n_hit = 0;
	for (int pass = 0; pass < 2 && n_hit == 0; pass++) {
		if (pass == 1 && own_only)
			break;
		for (size_t k = 0; k < j->n_nodes; k++) {
			hit[k] = j->nodes[k] < n_nodes && explained(j, j->nodes[k], f, first, p, pass == 0);
			n_hit += hit[k];
		}
	}
	return n_hit;
}

int ng_gpu_hours(const ng_gh_job *jobs, size_t n_jobs, const ng_gh_finding *findings,
                 size_t n_findings, size_t n_nodes, const ng_gh_params *p, ng_gh_tally *per_node,
                 ng_gh_tally *total, ng_gh_counts *counts)
{
	memset(per_node, 0, n_nodes * sizeof *per_node);
	memset(total, 0, sizeof *total);
	memset(counts, 0, sizeof *counts);
	size_t *first = index_findings(findings, n_findings, n_nodes);
	bool *hit = NULL;
	size_t hit_cap = 0;
	if (!first)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n_jobs && rc == 0; i++) {
		const ng_gh_job *j = &jobs[i];
		if (j->end < p->window_start || j->end >= p->window_end || j->end == 0)
			continue;
		counts->jobs_in_window++;
		if (j->how == NG_JOB_OTHER)
			continue;
		if (!(j->gpus > 0) || j->start <= 0 || j->end <= j->start || j->n_nodes == 0) {
			counts->jobs_no_hours++;
			continue;
		}
		if (j->n_nodes > hit_cap) {
			bool *h = realloc(hit, j->n_nodes * sizeof *h);
			if (!h) {
				rc = -1;
				break;
			}
			hit = h;
			hit_cap = j->n_nodes;
		}
		double hours = j->gpus * (double)(j->end - j->start) / 3600.0;
		bool completed = j->how == NG_JOB_COMPLETED;
		size_t n_hit = blame(j, findings, first, n_nodes, p, completed, hit);
		if (completed) {
			/* Finished, but on a GPU its own epilog found faulty: the hours
			 * were not lost, the results may be wrong. */
			if (n_hit == 0)
				continue;
			counts->jobs_suspect++;
			for (size_t k = 0; k < j->n_nodes; k++) {
				if (!hit[k])
					continue;
				per_node[j->nodes[k]].suspect_hours += hours / (double)n_hit;
				per_node[j->nodes[k]].suspect_jobs += 1.0 / (double)n_hit;
			}
			total->suspect_hours += hours;
			total->suspect_jobs += 1;
			continue;
		}
		if (n_hit == 0 && j->how == NG_JOB_NODE_FAIL) {
			/* Slurm says a node failed and nothing says which: every node
			 * of the job carries an equal share. */
			counts->jobs_node_fault_unlocated++;
			for (size_t k = 0; k < j->n_nodes; k++)
				hit[k] = j->nodes[k] < n_nodes;
			n_hit = j->n_nodes;
		}
		if (n_hit > 0) {
			/* One sick node costs the whole gang: every GPU-hour of the job
			 * goes to the faulty nodes. */
			counts->jobs_node_fault++;
			for (size_t k = 0; k < j->n_nodes; k++) {
				if (!hit[k])
					continue;
				per_node[j->nodes[k]].node_fault_hours += hours / (double)n_hit;
				per_node[j->nodes[k]].node_fault_jobs += 1.0 / (double)n_hit;
			}
			total->node_fault_hours += hours;
			total->node_fault_jobs += 1;
			continue;
		}
		if (j->how == NG_JOB_CANCELLED)
			continue; /* a person's choice, on healthy nodes: not a loss to count */
		counts->jobs_job_failure++;
		for (size_t k = 0; k < j->n_nodes; k++) {
			if (j->nodes[k] >= n_nodes)
				continue;
			per_node[j->nodes[k]].job_failure_hours += hours / (double)j->n_nodes;
			per_node[j->nodes[k]].job_failure_jobs += 1.0 / (double)j->n_nodes;
		}
		total->job_failure_hours += hours;
		total->job_failure_jobs += 1;
	}
	free(first);
	free(hit);
	return rc;
}
