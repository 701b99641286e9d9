/* sacct --parsable2 job accounting as JSON (parse/sacct.h), as `nodegate
 * parse sacct` prints it. */
#include "parse/sacct.h"

int ng_sacct_json(const char *text, size_t len, cJSON **out, ng_err *err)
{
	ng_sacct s = {0};
	if (ng_sacct_parse(text, len, &s, err) < 0) {
		ng_sacct_free(&s);
		return -1;
	}
	cJSON *o = cJSON_CreateObject(), *jobs = cJSON_AddArrayToObject(o, "jobs");
	for (size_t i = 0; jobs && i < s.n; i++) {
		const ng_sacct_job *j = &s.jobs[i];
		cJSON *jo = cJSON_CreateObject();
		cJSON_AddItemToArray(jobs, jo);
		cJSON_AddStringToObject(jo, "id", j->id);
		cJSON *nodes = cJSON_AddArrayToObject(jo, "nodes");
		for (size_t k = 0; nodes && k < j->n_nodes; k++)
			cJSON_AddItemToArray(nodes, cJSON_CreateString(ng_sacct_node(&s, j, k)));
		cJSON_AddNumberToObject(jo, "gpus", (double)j->gpus);
		if (j->start)
			cJSON_AddNumberToObject(jo, "start", (double)j->start);
		else
			cJSON_AddNullToObject(jo, "start");
		if (j->end)
			cJSON_AddNumberToObject(jo, "end", (double)j->end);
		else
			cJSON_AddNullToObject(jo, "end");
		cJSON_AddStringToObject(jo, "state", j->state);
		if (j->exit_code >= 0)
			cJSON_AddNumberToObject(jo, "exit_code", j->exit_code);
		if (j->exit_signal >= 0)
			cJSON_AddNumberToObject(jo, "exit_signal", j->exit_signal);
	}
	cJSON_AddNumberToObject(o, "lines", (double)s.lines);
	cJSON_AddNumberToObject(o, "steps_skipped", (double)s.steps);
	cJSON_AddNumberToObject(o, "lines_refused", (double)s.bad);
	if (s.bad) {
		cJSON_AddNumberToObject(o, "first_refused_line", (double)s.first_bad);
		cJSON_AddStringToObject(o, "refused_why", s.bad_why);
	}
	size_t bad = s.bad;
	ng_sacct_free(&s);
	if (!jobs) {
		cJSON_Delete(o);
		return ng_fail(err, "out of memory");
	}
	*out = o;
	return bad ? 1 : 0;
}
