/* How an admission run reads for people: one table (the JSON for machines
 * is the flow's, flow/admit_json.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/admit_report.h"
#include "cli/store_cli.h"

static void num(char *out, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(out, cap, "%.4g", v);
	else
		snprintf(out, cap, "-");
}


void ng_admit_print_table(FILE *out, const struct ng_admit_run *r)
{
	char at[32];
	ng_format_time(r->now, at);
	fprintf(out, "node %s%s%s%s  class %s  software %s\nrun %s at %s\n\n",
	        r->node_name[0] ? r->node_name : r->node, r->node_name[0] ? " (id " : "",
	        r->node_name[0] ? r->node : "", r->node_name[0] ? ")" : "", r->class_key,
	        r->software[0] ? r->software : "-", r->run_id, at);
	fprintf(out, "%-8s %-8s %-28s %10s %10s %10s %10s %7s %-10s %s\n", "stage", "domain", "metric",
	        "value", "median", "floor", "bar", "%med", "gate", "status");
	for (size_t i = 0; i < r->n; i++) {
		const struct ng_admit_judged *j = &r->j[i];
		char v[24], m[24], f[24], b[24], p[24];
		num(v, sizeof v, j->res.value);
		num(m, sizeof m, j->res.baseline_median);
		num(f, sizeof f, j->res.floor);
		num(b, sizeof b, j->line.flag.bar);
		if (isfinite(j->line.flag.percent))
			snprintf(p, sizeof p, "%.1f%%", j->line.flag.percent);
		else
			snprintf(p, sizeof p, "-");
		fprintf(out, "%-8s %-8s %-28s %10s %10s %10s %10s %7s %-10s %s\n", j->stage,
		        j->res.domain, j->metric, v, m, f, b, p, ng_verdict_name(j->raw), ng_admit_status_of(j));
	}
	size_t establishing = 0, have = 0, need = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct ng_admit_judged *j = &r->j[i];
		if (!j->have_base && j->judged && strcmp(j->stage, "first") == 0) {
			establishing++;
			have = (size_t)j->base.n_nodes;
			need = (size_t)j->base.min_nodes;
		}
	}
	if (establishing)
		fprintf(out, "\n%zu metric%s without a class baseline yet (%zu of %zu nodes): the class is "
		        "establishing one; until then only floors can fail a node\n",
		        establishing, establishing == 1 ? "" : "s", have, need);
	fprintf(out, "\noutcome: %s", r->outcome);
	if (strcmp(r->outcome, ng_admit_outcome_name(r->d.outcome)) != 0)
		fprintf(out, " (judged %s)", ng_admit_outcome_name(r->d.outcome));
	if (r->recheck_at) {
		char when[32];
		ng_format_time(r->recheck_at, when);
		fprintf(out, "; recheck by %s", when);
	}
	fputc('\n', out);
	if (r->d.outcome == NG_ADMIT_SUSPECT && r->d.n_confirm) {
		fprintf(out, "confirm: re-run");
		for (size_t i = 0; i < r->d.n_confirm; i++)
			fprintf(out, " %s", r->d.confirm[i]);
		fprintf(out, " once under the same conditions\n");
	}
	for (size_t i = 0; i < r->d.n_named; i++) {
		const struct ng_admit_judged *j = ng_admit_judged_of(r, r->d.named[i]);
		if (!j)
			continue;
		fprintf(out, "  because: %s %s %s = %.4g %s (%s", j->stage, j->res.domain, j->metric,
		        j->res.value, j->unit, ng_admit_status_of(j));
		if (isfinite(j->line.flag.bar))
			fprintf(out, ", bar %.4g", j->line.flag.bar);
		fprintf(out, ")\n");
	}
	const cJSON *n;
	cJSON_ArrayForEach(n, r->notes) ng_cli_print_line(out, "note: ", n->valuestring);
}
