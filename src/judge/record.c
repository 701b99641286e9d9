#include "judge/record.h"
#include "core/json.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **buf, size_t *cap, size_t need, size_t elem, ng_err *err)
{
	if (need <= *cap)
		return 0;
	size_t cap2 = *cap ? *cap : 16;
	while (cap2 < need)
		cap2 *= 2;
	void *p = realloc(*buf, cap2 * elem);
	if (!p)
		return ng_fail(err, "out of memory for %zu values", need);
	*buf = p;
	*cap = cap2;
	return 0;
}

/* A JSON number as the reference sees it; everything else (booleans too) is
 * NaN, which the rule treats as it treats any non-finite number. */
static double number_or_nan(const cJSON *v)
{
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A positive integer literal too large for a double. The reference reads it
 * as a finite Python int, so it passes every check as one, and raises only
 * where its arithmetic converts it to a float (see samples_overflow). */
static bool overflowing_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && isinf(v->valuedouble) && v->valuedouble > 0 &&
	       ng_json_big_integer(v) != NULL;
}

static void read_class(const cJSON *v, ng_strbuf *buf, ng_class *out)
{
	if (!v || cJSON_IsNull(v)) {
		*out = (ng_class){NG_CLASS_NONE, ""};
	} else if (cJSON_IsString(v)) {
		*out = (ng_class){NG_CLASS_STRING, v->valuestring};
	} else {
		ng_strbuf_reset(buf);
		ng_json_canonical(v, buf);
		*out = (ng_class){NG_CLASS_OTHER, buf->s ? buf->s : ""};
	}
}

static void read_wrong(const cJSON *v, const ng_json_source *src, ng_gate_record *r)
{
	r->wrong = 0;
	if (!v) {
		r->wrong_kind = NG_WRONG_ABSENT;
	} else if (cJSON_IsNull(v)) {
		r->wrong_kind = NG_WRONG_NULL;
	} else if (!cJSON_IsNumber(v)) {
		r->wrong_kind = NG_WRONG_INVALID;
	} else {
		r->wrong_kind = NG_WRONG_VALUE;
		r->wrong = v->valuedouble;
		/* An integer literal too large for a double is still a finite count. */
		if (isinf(r->wrong) && src && src->text &&
		    ng_json_is_integer_literal(src->text, src->len, src->root, v))
			r->wrong = r->wrong > 0 ? DBL_MAX : -DBL_MAX;
	}
}

static int read_samples(ng_gate_input *in, const cJSON *v, ng_err *err)
{
	ng_gate_record *r = &in->rec;
	r->n_samples = 0;
	r->samples = in->samples_buf;
	r->samples_overflow = false;
	if (!ng_json_truthy(v))
		return 0;
	if (!cJSON_IsArray(v)) {
		/* A non-empty string or object iterates as non-numbers; a number or
		 * true cannot be iterated. Either way it is not a measurement. */
		if (grow((void **)&in->samples_buf, &in->samples_cap, 1, sizeof(double), err) < 0)
			return -1;
		in->samples_buf[0] = NAN;
		r->samples = in->samples_buf;
		r->n_samples = 1;
		return 0;
	}
	size_t n = (size_t)cJSON_GetArraySize(v);
	if (grow((void **)&in->samples_buf, &in->samples_cap, n, sizeof(double), err) < 0)
		return -1;
	size_t i = 0;
	for (const cJSON *c = v->child; c; c = c->next) {
		if (overflowing_integer(c)) {
			in->samples_buf[i++] = DBL_MAX;
			r->samples_overflow = true;
		} else {
			in->samples_buf[i++] = number_or_nan(c);
		}
	}
	r->samples = in->samples_buf;
	r->n_samples = i;
	return 0;
}

static ng_diag_status diag_status(const cJSON *v)
{
	if (!cJSON_IsString(v))
		return NG_DIAG_OTHER;
	if (strcmp(v->valuestring, "pass") == 0)
		return NG_DIAG_PASS;
	if (strcmp(v->valuestring, "skip") == 0)
		return NG_DIAG_SKIP;
	if (strcmp(v->valuestring, "fail") == 0)
		return NG_DIAG_FAIL;
	return NG_DIAG_OTHER;
}

static void add_diag(const cJSON *member, void *ctx)
{
	ng_gate_input *in = ctx;
	in->diag_buf[in->rec.n_diag++] = (ng_diag_entry){member->string, diag_status(member)};
}

static int read_diag(ng_gate_input *in, const cJSON *v, ng_err *err)
{
	ng_gate_record *r = &in->rec;
	r->n_diag = 0;
	r->diag_malformed = false;
	r->diag = in->diag_buf;
	if (!ng_json_truthy(v))
		return 0; /* `record.get("diag") or {}` */
	if (!cJSON_IsObject(v)) {
		r->diag_malformed = true;
		return 0;
	}
	size_t n = (size_t)cJSON_GetArraySize(v);
	if (grow((void **)&in->diag_buf, &in->diag_cap, n, sizeof(ng_diag_entry), err) < 0)
		return -1;
	ng_json_each_member(v, add_diag, in);
	r->diag = in->diag_buf;
	return 0;
}

int ng_gate_input_record(ng_gate_input *in, const cJSON *record, const ng_json_source *src,
                         ng_err *err)
{
	if (!cJSON_IsObject(record))
		return ng_fail(err, "a record must be a JSON object");
	read_wrong(ng_json_get(record, "wrong"), src, &in->rec);
	if (read_samples(in, ng_json_get(record, "samples"), err) < 0 ||
	    read_diag(in, ng_json_get(record, "diag"), err) < 0)
		return -1;
	read_class(ng_json_get(record, "class"), &in->rec_class, &in->rec.cls);
	const cJSON *domain = ng_json_get(record, "domain");
	in->rec.domain = cJSON_IsString(domain) ? domain->valuestring : NULL;
	const cJSON *metric = ng_json_get(record, "metric");
	in->rec.metric = cJSON_IsString(metric) ? metric->valuestring : NULL;
	const cJSON *unit = ng_json_get(record, "unit");
	in->rec.unit = cJSON_IsString(unit) ? unit->valuestring : NULL;
	if (in->rec_class.oom)
		return ng_fail(err, "out of memory reading the class");
	return 0;
}

int ng_gate_input_baseline(ng_gate_input *in, const cJSON *b, ng_err *err)
{
	if (b && !cJSON_IsNull(b) && !cJSON_IsObject(b))
		return ng_fail(err, "a baseline must be a JSON object");
	const cJSON *median = ng_json_get(b, "median"), *cv = ng_json_get(b, "cv");
	in->base.median_overflow = overflowing_integer(median);
	in->base.cv_overflow = overflowing_integer(cv);
	in->base.median = in->base.median_overflow ? DBL_MAX : number_or_nan(median);
	in->base.cv = in->base.cv_overflow ? DBL_MAX : number_or_nan(cv);
	read_class(ng_json_get(b, "class"), &in->base_class, &in->base.cls);
	const cJSON *metric = ng_json_get(b, "metric"), *unit = ng_json_get(b, "unit");
	in->base.metric = cJSON_IsString(metric) ? metric->valuestring : NULL;
	in->base.unit = cJSON_IsString(unit) ? unit->valuestring : NULL;
	if (in->base_class.oom)
		return ng_fail(err, "out of memory reading the baseline class");
	return 0;
}

int ng_gate_input_cohort(ng_gate_input *in, const double *drops, size_t n, ng_err *err)
{
	if (grow((void **)&in->cohort_buf, &in->cohort_cap, n, sizeof(double), err) < 0)
		return -1;
	if (n)
		memcpy(in->cohort_buf, drops, n * sizeof *drops);
	in->cohort = in->cohort_buf;
	in->n_cohort = n;
	return 0;
}

int ng_gate_input_cohort_json(ng_gate_input *in, const cJSON *v, ng_err *err)
{
	in->n_cohort = 0;
	in->cohort = in->cohort_buf;
	if (!v || cJSON_IsNull(v))
		return 0;
	size_t n = cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) : 1;
	if (grow((void **)&in->cohort_buf, &in->cohort_cap, n, sizeof(double), err) < 0)
		return -1;
	if (cJSON_IsArray(v)) {
		size_t i = 0;
		for (const cJSON *c = v->child; c; c = c->next)
			in->cohort_buf[i++] = number_or_nan(c);
	} else if (cJSON_IsString(v) && !v->valuestring[0]) {
		n = 0; /* an empty string iterates as an empty cohort */
	} else {
		in->cohort_buf[0] = NAN;
	}
	in->cohort = in->cohort_buf;
	in->n_cohort = n;
	return 0;
}

ng_verdict ng_gate_input_judge(ng_gate_input *in, const ng_policy *pol, ng_gate_trace *trace)
{
	size_t need = in->rec.n_samples > in->n_cohort ? in->rec.n_samples : in->n_cohort;
	ng_work work = {NULL, 0};
	/* Out of memory leaves no scratch, which the gate refuses: fail closed. */
	if (grow((void **)&in->work_buf, &in->work_cap, need ? need : 1, sizeof(double), NULL) == 0)
		work = (ng_work){in->work_buf, in->work_cap};
	return ng_gate(&in->rec, &in->base, in->cohort, in->n_cohort, pol, work, trace);
}

void ng_gate_input_free(ng_gate_input *in)
{
	free(in->samples_buf);
	free(in->cohort_buf);
	free(in->work_buf);
	free(in->diag_buf);
	ng_strbuf_free(&in->rec_class);
	ng_strbuf_free(&in->base_class);
	*in = (ng_gate_input){0};
}

static void describe(const cJSON *v, char *out, size_t cap)
{
	if (cJSON_IsString(v))
		snprintf(out, cap, "the string \"%.40s\"", v->valuestring);
	else if (cJSON_IsNull(v))
		snprintf(out, cap, "null");
	else if (cJSON_IsBool(v))
		snprintf(out, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsArray(v))
		snprintf(out, cap, "an array");
	else if (cJSON_IsObject(v))
		snprintf(out, cap, "an object");
	else if (ng_json_big_integer(v))
		snprintf(out, cap, "%.30s... (too large for a number)", ng_json_big_integer(v));
	else if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
		snprintf(out, cap, "too large to be a number (1e400 and the like)");
	else
		snprintf(out, cap, "%g", cJSON_IsNumber(v) ? v->valuedouble : NAN);
}

int ng_record_check_strict(const cJSON *rec, bool zero_ok, ng_err *err)
{
	if (!cJSON_IsObject(rec))
		return ng_fail(err, "not a JSON object");
	ng_strbuf dup = {0};
	if (ng_json_find_duplicate(rec, &dup)) {
		int rc = ng_fail(err, "key \"%.100s\" is given twice: which value was meant?",
		                 dup.s ? dup.s : "");
		ng_strbuf_free(&dup);
		return rc;
	}
	ng_strbuf_free(&dup);
	char what[96];
	const cJSON *schema = ng_json_get(rec, "schema");
	if (schema && (!cJSON_IsString(schema) || strcmp(schema->valuestring, NG_RECORD_SCHEMA) != 0)) {
		describe(schema, what, sizeof what);
		return ng_fail(err, "schema is %s: this nodegate reads \"%s\" (a record of a newer "
		               "version cannot be read as this one)", what, NG_RECORD_SCHEMA);
	}
	const cJSON *node = ng_json_get(rec, "node");
	if (node && (!cJSON_IsString(node) || !node->valuestring[0])) {
		describe(node, what, sizeof what);
		return ng_fail(err, "node is %s: it must name the node", cJSON_IsString(node) ? "empty" : what);
	}
	const cJSON *samples = ng_json_get(rec, "samples");
	if (samples && !cJSON_IsArray(samples)) {
		describe(samples, what, sizeof what);
		return ng_fail(err, "samples is %s, not an array of numbers", what);
	}
	size_t i = 0;
	for (const cJSON *c = samples ? samples->child : NULL; c; c = c->next, i++) {
		if (cJSON_IsNumber(c) && !ng_json_big_integer(c) && isfinite(c->valuedouble) &&
		    (c->valuedouble > 0 || (zero_ok && c->valuedouble == 0)))
			continue;
		describe(c, what, sizeof what);
		return ng_fail(err, "samples[%zu] is %s: every sample must be a finite number %s", i,
		               what, zero_ok ? "of 0 or more" : "greater than 0");
	}
	const cJSON *wrong = ng_json_get(rec, "wrong");
	if (wrong && !cJSON_IsNull(wrong) &&
	    !(cJSON_IsNumber(wrong) && !ng_json_big_integer(wrong) && isfinite(wrong->valuedouble) &&
	      wrong->valuedouble >= 0 && wrong->valuedouble == floor(wrong->valuedouble))) {
		describe(wrong, what, sizeof what);
		return ng_fail(err, "wrong is %s: it counts wrong elements, a whole number of 0 or more "
		               "(null: not checked)", what);
	}
	return 0;
}
