/* nvbandwidth: from invocations to records, with the verification that
 * decides wrong and every reason a record holds no sample. */
#include "parse/nvbandwidth_int.h"

/* ---- records out ---------------------------------------------------------- */

static void add_tool(struct ctx *c, cJSON *rec, const struct inv *v)
{
	cJSON *tool = ng_record_tool(rec);
	nvb_add_item(c, tool, "name", cJSON_CreateString("nvbandwidth"));
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v->info, "nvbandwidth_version");
	const cJSON *git = cJSON_GetObjectItemCaseSensitive(v->info, "git_version");
	if (cJSON_IsString(ver) && ver->valuestring[0])
		nvb_add_item(c, tool, "version", cJSON_CreateString(ver->valuestring));
	if (cJSON_IsString(git) && git->valuestring[0])
		nvb_add_item(c, tool, "git_version", cJSON_CreateString(git->valuestring));
	if (c->st.exit_status >= 0)
		nvb_add_num(c, tool, "exit_status", c->st.exit_status);
	if (c->st.signal)
		nvb_add_num(c, tool, "signal", c->st.signal);
}

static void add_invocation(struct ctx *c, cJSON *rec, const struct inv *v, int index)
{
	cJSON *d = ng_record_detail(rec);
	cJSON *info = nvb_track(c, cJSON_Duplicate(v->info, 1));
	nvb_add_item(c, d, "invocation", info);
	if (!info)
		return;
	nvb_add_num(c, info, "index", index);
	nvb_add_item(c, info, "devices",
	         cJSON_GetArraySize(v->devices) ? cJSON_Duplicate(v->devices, 1) : cJSON_CreateNull());
	if (cJSON_GetArraySize(v->warnings))
		nvb_add_item(c, info, "warnings", cJSON_Duplicate(v->warnings, 1));
	add_tool(c, rec, v);
}

static const char *exit_words(const struct ctx *c, char *buf, size_t n)
{
	if (c->st.signal)
		snprintf(buf, n, "nvbandwidth was killed by signal %d", c->st.signal);
	else if (c->st.exit_status > 0)
		snprintf(buf, n, "nvbandwidth exited with status %d", c->st.exit_status);
	else
		buf[0] = '\0';
	return buf;
}

/* Samples, wrong and reason from the record's runs. Every run must have
 * given its sum for any to count: a testcase that failed once inside an
 * invocation did not measure cleanly, and its other sums stay in detail. */
/* Whether the invocation printed a version of v0.5 or later: the releases
 * whose sources verify every copy unless -s/--skipVerification is given. */
static bool verifying_version(const struct inv *v)
{
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v->info, "nvbandwidth_version");
	if (!cJSON_IsString(ver))
		return false;
	const char *p = ver->valuestring;
	if (*p == 'v')
		p++;
	char *end;
	long major = strtol(p, &end, 10);
	if (end == p || *end != '.')
		return false;
	const char *q = end + 1;
	long minor = strtol(q, &end, 10);
	return end != q && (major > 0 || minor >= 5);
}

static void rec_finish(struct ctx *c, cJSON *rec, const struct inv *inv, const char *how)
{
	cJSON *d = ng_record_detail(rec);
	cJSON *runs = cJSON_GetObjectItemCaseSensitive(d, "runs"), *run;
	const cJSON *metric = cJSON_GetObjectItemCaseSensitive(rec, "metric");
	const struct ng_metric *reg = ng_metric_lookup(metric->valuestring);
	const char *unit = reg ? reg->unit : "";
	int bad = 0, nruns = 0;
	double wrong = 0;
	const char *first = NULL;
	cJSON_ArrayForEach(run, runs)
	{
		nruns++;
		/* the unit a matrix title prints must be the metric's */
		cJSON *ms = cJSON_GetObjectItemCaseSensitive(run, "matrices");
		cJSON *m = ms ? cJSON_GetArrayItem(ms, cJSON_GetArraySize(ms) - 1) : NULL;
		const cJSON *u = m ? cJSON_GetObjectItemCaseSensitive(m, "unit") : NULL;
		if (cJSON_IsString(u) && strcmp(u->valuestring, unit) != 0)
			nvb_run_problem(c, run, "the matrix is in %s but %s is recorded in %s", u->valuestring,
			            metric->valuestring, unit);
		wrong += nvb_run_wrong(run);
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(run, "problem");
		if (cJSON_IsString(p)) {
			bad++;
			if (!first)
				first = p->valuestring;
		}
	}
	bool latency = reg && !reg->higher_is_better;
	if (nruns && !bad && latency) {
		/* the gate reads every figure as higher-is-better: a latency
		 * sample would fail the fastest node */
		ng_record_set_reason(rec,
		                     "%s is a latency (lower is better) and the gate judges figures as "
		                     "higher-is-better: its SUM is kept in detail.runs, not in samples",
		                     metric->valuestring);
		if (!cJSON_GetObjectItemCaseSensitive(rec, "reason"))
			c->oom = true;
	} else if (nruns && !bad) {
		cJSON_ArrayForEach(run, runs)
		{
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(run, "sum");
			ng_record_add_sample(rec, s->valuedouble);
		}
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "samples")) != nruns)
			c->oom = true;
	} else if (nruns) {
		char tail[112] = "";
		if (how[0])
			snprintf(tail, sizeof tail, " (%s)", how);
		if (nruns == 1)
			ng_record_set_reason(rec, "%s%s", first, tail);
		else
			ng_record_set_reason(rec, "%d of %d runs of this testcase gave no usable SUM; first: %s%s",
			                     bad, nruns, first, tail);
		if (!cJSON_GetObjectItemCaseSensitive(rec, "reason"))
			c->oom = true;
	}
	if (wrong > 0) {
		ng_record_set_wrong(rec, wrong);
		nvb_add_str(c, d, "verification", ng_span_cstr("failed: the output reports wrong data after a copy"));
	} else if (inv->cmd_verify < 0) {
		nvb_add_str(c, d, "verification", ng_span_cstr("skipped: the echoed command line has -s/--skipVerification"));
	} else if (inv->cmd_verify > 0 && verifying_version(inv) && nruns && !bad && !latency) {
		ng_record_set_wrong(rec, 0);
		nvb_add_str(c, d, "verification",
		        ng_span_cstr("on: the echoed command line has no -s/--skipVerification and no copy was "
		                "reported wrong"));
	} else {
		nvb_add_str(c, d, "verification",
		        ng_span_cstr("not shown: nvbandwidth does not print whether it verified the copies "
		                "(-s/--skipVerification skips it), so wrong stays null"));
	}
}

/* The record for the invocation as a whole, when it needs one. */
static cJSON *run_record(struct ctx *c, const struct inv *v, const char *how)
{
	char why[NVB_STR_MAX + 200];
	int ntc = cJSON_GetArraySize(v->recs), nerr = cJSON_GetArraySize(v->errors);
	bool incomplete = false;
	const cJSON *rec;
	cJSON_ArrayForEach(rec, v->recs)
	{
		if (cJSON_GetObjectItemCaseSensitive(rec, "reason"))
			incomplete = true;
	}
	if (v->unparsed && !ntc)
		snprintf(why, sizeof why,
		         "a JSON document starting with \"nvbandwidth\" could not be parsed (cut short?)");
	else if (v->list)
		snprintf(why, sizeof why, "nvbandwidth --list output: it names %d testcases and measures nothing",
		         v->listed);
	else if (v->usage)
		snprintf(why, sizeof why, "nvbandwidth printed its usage text and measured nothing%s%s",
		         nerr ? ": " : "", nerr ? cJSON_GetArrayItem(v->errors, 0)->valuestring : "");
	else if (v->orphan_verify)
		snprintf(why, sizeof why, "data verification failed outside any named testcase");
	else if (v->unnamed_waived)
		snprintf(why, sizeof why,
		         "%d testcase(s) waived; nvbandwidth's text output does not say which", v->unnamed_waived);
	else if (nerr)
		snprintf(why, sizeof why, "nvbandwidth reported an error outside any testcase: %s",
		         cJSON_GetArrayItem(v->errors, 0)->valuestring);
	else if (!ntc)
		snprintf(why, sizeof why, "this nvbandwidth output holds no testcase");
	else if (how[0] && !incomplete)
		snprintf(why, sizeof why,
		         "%s after its last complete testcase: a later one may have failed before naming itself",
		         how);
	else
		return NULL;
	cJSON *r = ng_record_new(NVB_RUN_METRIC, NULL, NULL);
	if (!r) {
		c->oom = true;
		return NULL;
	}
	if (how[0] && strstr(why, how) == NULL)
		ng_record_set_reason(r, "%s (%s)", why, how);
	else
		ng_record_set_reason(r, "%s", why);
	if (!cJSON_GetObjectItemCaseSensitive(r, "reason"))
		c->oom = true;
	if (v->orphan_verify)
		ng_record_set_wrong(r, v->orphan_verify);
	cJSON *d = ng_record_detail(r);
	if (nerr)
		nvb_add_item(c, d, "errors", cJSON_Duplicate(v->errors, 1));
	if (v->unnamed_waived)
		nvb_add_num(c, d, "unnamed_waived", v->unnamed_waived);
	if (cJSON_GetArraySize(v->list_names))
		nvb_add_item(c, d, "testcases", cJSON_Duplicate(v->list_names, 1));
	return r;
}

static int inv_order(const void *a, const void *b)
{
	const struct inv *x = *(struct inv *const *)a, *y = *(struct inv *const *)b;
	return x->start < y->start ? -1 : x->start > y->start;
}

cJSON *nvb_emit(struct ctx *c)
{
	cJSON *out = nvb_track(c, cJSON_CreateArray());
	char ex[96];
	qsort(c->invs, c->ninv, sizeof *c->invs, inv_order);
	for (size_t i = 0; i < c->ninv && !c->oom; i++) {
		struct inv *v = c->invs[i];
		bool last = i + 1 == c->ninv;
		/* how the process ended speaks for its last invocation only */
		const char *how = last ? exit_words(c, ex, sizeof ex) : "";
		cJSON *rec;
		cJSON_ArrayForEach(rec, v->recs)
		{
			rec_finish(c, rec, v, how);
			add_invocation(c, rec, v, (int)i + 1);
		}
		cJSON *r = run_record(c, v, how);
		while ((rec = cJSON_DetachItemFromArray(v->recs, 0)) != NULL)
			nvb_push(c, out, rec);
		if (r) {
			add_invocation(c, r, v, (int)i + 1);
			nvb_push(c, out, r);
		}
	}
	return out;
}
