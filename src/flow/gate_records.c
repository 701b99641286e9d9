/* The gate over records a verb holds (flow/gate_records.h). */
#include "flow/gate_records.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/json_file.h"

/* "0.1,0.2,-0.05" -> numbers. Every item must be a number. */
static int number_list(const char *s, double **out, size_t *n, ng_err *err)
{
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	double *v = malloc(cap * sizeof *v);
	if (!v)
		return ng_fail(err, "out of memory");
	size_t k = 0;
	const char *p = s;
	while (*s) {
		char *end;
		errno = 0;
		double d = strtod(p, &end);
		if (end == p || (*end && *end != ',') || errno == ERANGE || !isfinite(d)) {
			free(v);
			return ng_fail(err, "\"%s\" is not a list of finite numbers separated by commas "
			                    "(item %zu)", s, k + 1);
		}
		v[k++] = d;
		if (!*end)
			break;
		p = end + 1;
	}
	*out = v;
	*n = k;
	return 0;
}

int ng_baseline_file_load(ng_baseline_file *b, const char *path, const char *cohort, ng_err *err)
{
	*b = (ng_baseline_file){.path = path};
	size_t len;
	b->doc = ng_load_json_file(path, &b->text, &len, err);
	if (!b->doc)
		return NG_GATE_BASELINE_UNREAD;
	if (ng_gate_input_baseline(&b->in, b->doc, err) < 0)
		return NG_GATE_BASELINE_INVALID;
	if (!cohort)
		return 0;
	double *drops = NULL;
	size_t n = 0;
	if (number_list(cohort, &drops, &n, err) < 0)
		return NG_GATE_COHORT_LIST;
	int rc = ng_gate_input_cohort(&b->in, drops, n, err);
	free(drops);
	return rc < 0 ? NG_GATE_COHORT_NOMEM : 0;
}

void ng_baseline_file_release(ng_baseline_file *b)
{
	ng_gate_input_free(&b->in);
	cJSON_Delete(b->doc);
	free(b->text);
	b->doc = NULL;
	b->text = NULL;
}

bool ng_record_measured(const cJSON *r)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "samples");
	if (cJSON_IsArray(s) && s->child)
		return true;
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(r, "outcome");
	return cJSON_IsString(o) && strcmp(o->valuestring, "clean") == 0;
}

int ng_gate_records_judge(ng_baseline_file *b, const ng_policy *pol, const cJSON *records,
                          ng_gate_judged_fn fn, void *arg, ng_err *err)
{
	int all = 1;
	const cJSON *bmetric = ng_json_get(b->doc, "metric");
	for (const cJSON *r = records->child; r; r = r->next) {
		const cJSON *m = ng_json_get(r, "metric");
		const char *metric = cJSON_IsString(m) ? m->valuestring : "(no metric)";
		if (cJSON_IsString(bmetric) && strcmp(metric, bmetric->valuestring) != 0 &&
		    ng_record_measured(r))
			continue;
		if (ng_gate_input_record(&b->in, r, NULL, err) < 0)
			return -1;
		ng_gate_trace t;
		ng_verdict v = ng_gate_input_judge(&b->in, pol, &t);
		fn(arg, metric, &b->in, &t, v);
		if (!ng_verdict_admissible(v))
			all = 0;
	}
	return all;
}

static void judge_one(ng_gate_input *in, const ng_policy *pol, const cJSON *record,
                      const ng_json_source *src, const char *label, bool element,
                      ng_gate_file_fn fn, void *arg)
{
	ng_err err;
	if (ng_gate_input_record(in, record, src, &err) < 0) {
		fn(arg, label, element, NULL, NULL, NG_V_INVALID_INPUT, &err);
		return;
	}
	ng_gate_trace t;
	ng_verdict v = ng_gate_input_judge(in, pol, &t);
	fn(arg, label, element, in, &t, v, NULL);
}

int ng_gate_file_judge(ng_gate_input *in, const ng_policy *pol, const char *path,
                       ng_gate_file_fn fn, void *arg, ng_err *err)
{
	char *text;
	size_t len;
	cJSON *doc = ng_load_json_file(path, &text, &len, err);
	if (!doc)
		return NG_GATE_FILE_UNREAD;
	ng_json_source src = {text, len, doc};
	int rc = 0;
	if (cJSON_IsArray(doc)) {
		if (!doc->child)
			rc = NG_GATE_FILE_EMPTY;
		int i = 0;
		for (const cJSON *r = doc->child; r; r = r->next, i++) {
			char label[4096];
			snprintf(label, sizeof label, "%s[%d]", path, i);
			judge_one(in, pol, r, &src, label, true, fn, arg);
		}
	} else {
		judge_one(in, pol, doc, &src, path, false, fn, arg);
	}
	cJSON_Delete(doc);
	free(text);
	return rc;
}
