/* The public API's decisions (include/nodegate/nodegate.h): the gate over one
 * record, the parsers, and an admission run from records. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/json.h"
#include "core/verdict.h"
#include "flow/admit.h"
#include "flow/gate_batch.h"
#include "judge/record.h"
#include "parse/parse.h"

/* ---- the gate ----------------------------------------------------------------------- */

int nodegate_gate(const nodegate_ctx *c, const char *record_json, const char *baseline_json,
                  const double *cohort_drops, size_t n_cohort, nodegate_verdict *out,
                  nodegate_error *eout)
{
	if (!c || !record_json || !out || (n_cohort && !cohort_drops))
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE, "no context, record or verdict to fill");
	ng_err err = {0}, perr = {0};
	size_t rlen = strlen(record_json);
	cJSON *rec = ng_json_parse(record_json, rlen, &perr);
	cJSON *base = NULL;
	if (!rec || !cJSON_IsObject(rec)) {
		ng_fail_as(&err, NG_ERR_INPUT, "record: %s", rec ? "not a JSON object" : perr.msg);
		cJSON_Delete(rec);
		return ng_api_fail(eout, &err);
	}
	if (baseline_json && !(base = ng_json_parse(baseline_json, strlen(baseline_json), &perr))) {
		ng_fail_as(&err, NG_ERR_INPUT, "baseline: %s", perr.msg);
		cJSON_Delete(rec);
		return ng_api_fail(eout, &err);
	}
	/* The source text, so a count written as a huge integer literal reads as
	 * the reference reads it (judge/record.h). */
	ng_json_source src = {record_json, rlen, rec};
	ng_gate_input in = {0};
	int rc = ng_gate_input_record(&in, rec, &src, &err);
	if (rc == 0)
		rc = ng_gate_input_baseline(&in, base, &err);
	if (rc == 0 && n_cohort)
		rc = ng_gate_input_cohort(&in, cohort_drops, n_cohort, &err);
	if (rc == 0) {
		ng_verdict v = ng_gate_input_judge(&in, &c->ctx.policy, NULL);
		const struct ng_verdict_info *info = ng_verdict_info(v);
		*out = (nodegate_verdict){.verdict = ng_verdict_name(v),
		                          .admissible = ng_verdict_admissible(v),
		                          .lands = info ? info->lands : ""};
	} else if (err.code == NG_ERR_UNCLASSIFIED) {
		err.code = NG_ERR_INTERNAL; /* the readers fail only when out of memory */
	}
	ng_gate_input_free(&in);
	cJSON_Delete(rec);
	cJSON_Delete(base);
	return rc < 0 ? ng_api_fail(eout, &err) : 0;
}

/* The flow's note, kept as the error's message. */
static void keep_note(void *arg, const char *verb, const char *fmt, va_list ap)
{
	nodegate_error *err = arg;
	(void)verb;
	vsnprintf(err->message, sizeof err->message, fmt, ap);
}

int nodegate_gate_batch(const nodegate_ctx *c, FILE *in, FILE *out, nodegate_error *err)
{
	if (!c || !in || !out)
		return ng_api_fail_as(err, NODEGATE_ERR_USAGE, "no context, input or output");
	nodegate_error local = {0};
	ng_ctx ctx = c->ctx;
	ctx.note = keep_note;
	ctx.note_arg = &local;
	int rc = ng_flow_gate_batch(&ctx, in, out);
	if (rc < 0) {
		bool oom = strstr(local.message, "out of memory") != NULL;
		local.code = oom ? NODEGATE_ERR_INTERNAL : NODEGATE_ERR_INPUT;
		if (err)
			*err = local;
	}
	return rc;
}

/* ---- the parsers -------------------------------------------------------------------- */

const char *nodegate_parser_name(size_t i)
{
	size_t n;
	const struct ng_parser *t = ng_parser_table(&n);
	return i < n ? t[i].tool : NULL;
}

/* doc as text the caller frees with nodegate_free (free), or NULL. */
static char *print_doc(const cJSON *doc)
{
	char *text = cJSON_PrintUnformatted(doc);
	if (!text)
		return NULL;
	char *copy = strdup(text);
	cJSON_free(text);
	return copy;
}

int nodegate_parse(const char *tool, const char *text, size_t len, int exit_status,
                   char **records_json, nodegate_error *eout)
{
	const struct ng_parser *p = tool ? ng_parser_find(tool) : NULL;
	if (!p || !text || !records_json)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE,
		                      p ? "no text or nowhere to put the records" : "no parser for that tool");
	*records_json = NULL;
	/* The parsers read text NUL-terminated at text[len]. */
	char *copy = malloc(len + 1);
	if (!copy)
		return ng_api_fail_as(eout, NODEGATE_ERR_INTERNAL, "out of memory");
	memcpy(copy, text, len);
	copy[len] = '\0';
	ng_err err = {0};
	ng_run_status st = {.exit_status = exit_status < 0 ? -1 : exit_status, .signal = 0};
	cJSON *recs = p->parse(copy, len, st, &err);
	free(copy);
	if (!recs) {
		if (err.code == NG_ERR_UNCLASSIFIED)
			err.code = NG_ERR_INPUT;
		return ng_api_fail(eout, &err);
	}
	*records_json = print_doc(recs);
	cJSON_Delete(recs);
	return *records_json ? 0 : ng_api_fail_as(eout, NODEGATE_ERR_INTERNAL, "out of memory");
}

/* ---- admission ---------------------------------------------------------------------- */

struct nodegate_admission {
	struct ng_admit_run run;
};

/* text as a JSON document, or NULL with err (an input error naming what). */
static cJSON *parse_doc(const char *text, const char *what, ng_err *err)
{
	ng_err perr = {0};
	cJSON *doc = ng_json_parse(text, strlen(text), &perr);
	if (!doc)
		ng_fail_as(err, NG_ERR_INPUT, "%s: %s", what, perr.msg);
	return doc;
}

int nodegate_admit_records(nodegate_ctx *c, const char *records_json, const char *confirm_json,
                           nodegate_admission **out, nodegate_error *eout)
{
	if (!c || !records_json || !out)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE, "no context, records or result to fill");
	*out = NULL;
	ng_err err = {0};
	cJSON *first = parse_doc(records_json, "records", &err), *confirm = NULL;
	if (first && confirm_json)
		confirm = parse_doc(confirm_json, "confirmation records", &err);
	struct nodegate_admission *a = first && (confirm || !confirm_json) ? calloc(1, sizeof *a) : NULL;
	if (first && (confirm || !confirm_json) && !a)
		ng_fail_as(&err, NG_ERR_INTERNAL, "out of memory");
	int rc = -1;
	if (a) {
		struct ng_admit_request q = {.records = first, .confirm_records = confirm};
		rc = ng_admit_run_flow(&c->ctx, &q, &a->run, &err);
	}
	cJSON_Delete(first);
	cJSON_Delete(confirm);
	if (rc < 0) {
		nodegate_admission_release(a);
		return ng_api_fail(eout, &err);
	}
	*out = a;
	return 0;
}

const char *nodegate_admission_outcome(const nodegate_admission *a)
{
	return a && a->run.outcome ? a->run.outcome : "";
}

int nodegate_admission_exit_status(const nodegate_admission *a)
{
	return a ? ng_admit_exit_status(&a->run) : 1;
}

int64_t nodegate_admission_case(const nodegate_admission *a)
{
	return a ? a->run.case_id : 0;
}

int nodegate_admission_json(const nodegate_admission *a, char **json, nodegate_error *eout)
{
	if (!a || !json)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE, "no admission or nowhere to put it");
	cJSON *doc = ng_admit_json(&a->run);
	*json = doc ? print_doc(doc) : NULL;
	cJSON_Delete(doc);
	return *json ? 0 : ng_api_fail_as(eout, NODEGATE_ERR_INTERNAL, "out of memory");
}

void nodegate_admission_release(nodegate_admission *a)
{
	if (!a)
		return;
	ng_admit_run_release(&a->run);
	free(a);
}
