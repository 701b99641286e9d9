/* Repeat offenders (judge/lemon.h). */
#include "judge/lemon.h"

#include <stdio.h>
#include <string.h>

static bool in_window(const ng_lemon_case *c, int64_t now, long days)
{
	return c->opened_at >= now - (int64_t)days * 86400 && c->opened_at <= now;
}

/* Quarantines in the window that blame uuid, on any node. */
static size_t gpu_count(const ng_lemon_case *cases, size_t n, const char *uuid, int64_t now,
                        long days)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t u = 0; in_window(&cases[i], now, days) && u < cases[i].n_uuids; u++)
			if (strcmp(cases[i].uuid[u], uuid) == 0) {
				k++;
				break;
			}
	return k;
}

/* The domain most of the window's quarantines of the node failed in. */
static const char *common_domain(const ng_lemon_case *cases, size_t n, int64_t now, long days,
                                 size_t *count)
{
	const char *best = NULL;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		if (!cases[i].this_node || cases[i].part_gone || !in_window(&cases[i], now, days) ||
		    !cases[i].domain || !cases[i].domain[0])
			continue;
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			k += cases[j].this_node && !cases[j].part_gone && in_window(&cases[j], now, days) &&
			     cases[j].domain && strcmp(cases[j].domain, cases[i].domain) == 0;
		if (k > *count) {
			*count = k;
			best = cases[i].domain;
		}
	}
	return best;
}

/* What a domain's repeated failure points at, for the operator. */
static const char *parts_of(const char *domain)
{
	static const char *const map[][2] = {
		{"compute", "the GPUs' board, power and cooling"},
		{"memory", "the memory (GPU HBM or host DIMMs)"},
		{"storage", "the local disk and its controller"},
		{"fabric", "the NIC, its cable and switch port"},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(map[i][0], domain) == 0)
			return map[i][1];
	return "the parts of that domain";
}

void ng_lemon_judge(const ng_lemon_case *cases, size_t n, int64_t now, long count, long days,
                    ng_lemon_verdict *out)
{
	memset(out, 0, sizeof *out);
	out->mtbi_s = -1;
	int64_t first = 0, last = 0;
	size_t all = 0;
	for (size_t i = 0; i < n; i++) {
		const ng_lemon_case *c = &cases[i];
		if (!c->this_node)
			continue;
		if (!all || c->opened_at < first)
			first = c->opened_at;
		if (!all || c->opened_at > last)
			last = c->opened_at;
		all++;
		if (!c->part_gone && in_window(c, now, days))
			out->node_count++;
		for (size_t u = 0; u < c->n_uuids; u++) {
			size_t k = c->part_gone ? 0 : gpu_count(cases, n, c->uuid[u], now, days);
			if (k > out->gpu_count) {
				out->gpu_count = k;
				snprintf(out->gpu, sizeof out->gpu, "%s", c->uuid[u]);
			}
		}
	}
	if (all >= 2)
		out->mtbi_s = (double)(last - first) / (double)(all - 1);
	bool node_lemon = count > 0 && out->node_count >= (size_t)count;
	bool gpu_lemon = count > 0 && out->gpu_count >= (size_t)count;
	out->lemon = node_lemon || gpu_lemon;
	if (!out->lemon)
		return;
	if (gpu_lemon)
		snprintf(out->why, sizeof out->why,
		         "GPU %s was quarantined %zu times in %ld days (limit %ld)", out->gpu,
		         out->gpu_count, days, count);
	else
		snprintf(out->why, sizeof out->why, "%zu quarantines in %ld days (limit %ld)",
		         out->node_count, days, count);
	size_t same = 0;
	const char *domain = common_domain(cases, n, now, days, &same);
	if (out->gpu_count >= 2)
		snprintf(out->replace, sizeof out->replace,
		         "replace GPU %s: %zu of the quarantines in the window blame it%s%s", out->gpu,
		         out->gpu_count, domain ? ", in the " : "", domain ? domain : "");
	else if (domain && same >= 2)
		snprintf(out->replace, sizeof out->replace,
		         "%zu of the %zu quarantines failed the %s domain and blame no one GPU: "
		         "replace or repair %s before releasing it",
		         same, out->node_count, domain, parts_of(domain));
	else
		snprintf(out->replace, sizeof out->replace,
		         "the quarantines failed different domains: the node itself (board, power, "
		         "cooling) is the common part");
}
