#include "core/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when text holds the escape \u0000 (not an escaped backslash followed by
 * "u0000"): an odd run of backslashes right before "u0000". */
static bool has_nul_escape(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while ((p = memmem(p, (size_t)(end - p), "u0000", 5)) != NULL) {
		size_t slashes = 0;
		for (const char *q = p; q > text && q[-1] == '\\'; q--)
			slashes++;
		if (slashes % 2 == 1)
			return true;
		p += 5;
	}
	return false;
}

cJSON *ng_json_parse(const char *text, size_t len, ng_err *err)
{
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		ng_fail(err, "a NUL byte at offset %zu is not JSON", (size_t)(nul - text));
		return NULL;
	}
	if (has_nul_escape(text, len)) {
		ng_fail(err, "strings containing \\u0000 are not accepted "
		             "(they would compare equal to their prefix)");
		return NULL;
	}
	const char *stop = NULL;
	/* text[len] is the terminating NUL, which cJSON wants inside the length
	 * when it is asked to reject trailing garbage. */
	cJSON *v = cJSON_ParseWithLengthOpts(text, len + 1, &stop, 1);
	if (!v) {
		size_t at = stop && stop >= text && stop <= text + len ? (size_t)(stop - text) : 0;
		if (len == 0 || strspn(text, " \t\r\n") == len)
			ng_fail(err, "empty input where a JSON value was expected");
		else
			ng_fail(err, "not valid JSON (error near byte %zu: \"%.20s\")", at + 1, text + at);
	}
	return v;
}

const cJSON *ng_json_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	const cJSON *found = NULL;
	for (const cJSON *c = obj->child; c; c = c->next)
		if (c->string && strcmp(c->string, key) == 0)
			found = c;
	return found;
}

bool ng_json_truthy(const cJSON *v)
{
	if (!v)
		return false;
	switch (v->type & 0xFF) {
	case cJSON_True: return true;
	case cJSON_Number: return v->valuedouble != 0.0;
	case cJSON_String: return v->valuestring && v->valuestring[0] != '\0';
	case cJSON_Array:
	case cJSON_Object: return v->child != NULL;
	default: return false;
	}
}

/* Small objects are checked pairwise; large ones are sorted so an object with
 * a hundred thousand keys costs n log n, not n squared. */
struct member_ref {
	const cJSON *item;
	size_t index;
};

static int cmp_member(const void *pa, const void *pb)
{
	const struct member_ref *a = pa, *b = pb;
	int c = strcmp(a->item->string, b->item->string);
	if (c)
		return c;
	return (a->index > b->index) - (a->index < b->index);
}

static void each_member_sorted(const cJSON *obj, size_t n,
                               void (*fn)(const cJSON *, void *), void *ctx)
{
	struct member_ref *refs = malloc(n * sizeof *refs);
	if (!refs) {
		/* Out of memory: fall back to the quadratic walk rather than fail. */
		for (const cJSON *c = obj->child; c; c = c->next)
			if (ng_json_get(obj, c->string) == c)
				fn(c, ctx);
		return;
	}
	size_t i = 0;
	for (const cJSON *c = obj->child; c; c = c->next, i++)
		refs[i] = (struct member_ref){c, i};
	qsort(refs, n, sizeof *refs, cmp_member);
	for (i = 0; i < n; i++)
		if (i + 1 == n || strcmp(refs[i].item->string, refs[i + 1].item->string) != 0)
			fn(refs[i].item, ctx);
	free(refs);
}

void ng_json_each_member(const cJSON *obj, void (*fn)(const cJSON *, void *), void *ctx)
{
	if (!cJSON_IsObject(obj))
		return;
	size_t n = 0;
	for (const cJSON *c = obj->child; c; c = c->next)
		n++;
	if (n > 32) {
		each_member_sorted(obj, n, fn, ctx);
		return;
	}
	for (const cJSON *c = obj->child; c; c = c->next) {
		bool later = false;
		for (const cJSON *d = c->next; d && !later; d = d->next)
			later = strcmp(c->string, d->string) == 0;
		if (!later)
			fn(c, ctx);
	}
}

static bool numeric_like(const cJSON *v, double *out)
{
	switch (v->type & 0xFF) {
	case cJSON_Number: *out = v->valuedouble; return true;
	case cJSON_True: *out = 1.0; return true;
	case cJSON_False: *out = 0.0; return true;
	default: return false;
	}
}

struct eq_ctx {
	const cJSON *other;
	size_t count;
	bool equal;
};

static void count_member(const cJSON *m, void *ctx)
{
	(void)m;
	((struct eq_ctx *)ctx)->count++;
}

static void match_member(const cJSON *m, void *vctx)
{
	struct eq_ctx *ctx = vctx;
	ctx->count++;
	if (!ctx->equal)
		return;
	const cJSON *o = ng_json_get(ctx->other, m->string);
	ctx->equal = o != NULL && ng_json_equal(m, o);
}

bool ng_json_equal(const cJSON *a, const cJSON *b)
{
	bool a_null = !a || cJSON_IsNull(a), b_null = !b || cJSON_IsNull(b);
	if (a_null || b_null)
		return a_null && b_null;
	double x, y;
	if (numeric_like(a, &x))
		return numeric_like(b, &y) && x == y;
	if ((a->type & 0xFF) != (b->type & 0xFF))
		return false;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsArray(a)) {
		const cJSON *p = a->child, *q = b->child;
		for (; p && q; p = p->next, q = q->next)
			if (!ng_json_equal(p, q))
				return false;
		return !p && !q;
	}
	if (cJSON_IsObject(a)) {
		struct eq_ctx ca = {.other = b, .equal = true}, cb = {0};
		ng_json_each_member(a, match_member, &ca);
		ng_json_each_member(b, count_member, &cb);
		return ca.equal && ca.count == cb.count;
	}
	return false;
}

struct canon_ctx {
	const cJSON **members;
	size_t n;
};

static void collect_member(const cJSON *m, void *vctx)
{
	struct canon_ctx *ctx = vctx;
	ctx->members[ctx->n++] = m;
}

static int cmp_key(const void *pa, const void *pb)
{
	const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
	return strcmp(a->string, b->string);
}

void ng_json_canonical(const cJSON *v, ng_strbuf *out)
{
	double x;
	if (!v || cJSON_IsNull(v)) {
		ng_strbuf_adds(out, "null");
	} else if (numeric_like(v, &x)) {
		if (x == 0.0)
			ng_strbuf_adds(out, "0"); /* -0.0 == 0.0 */
		else
			ng_strbuf_printf(out, "%.17g", x);
	} else if (cJSON_IsString(v)) {
		ng_strbuf_add_json_string(out, v->valuestring);
	} else if (cJSON_IsArray(v)) {
		ng_strbuf_addc(out, '[');
		for (const cJSON *c = v->child; c; c = c->next) {
			ng_json_canonical(c, out);
			if (c->next)
				ng_strbuf_addc(out, ',');
		}
		ng_strbuf_addc(out, ']');
	} else if (cJSON_IsObject(v)) {
		size_t n = 0;
		for (const cJSON *c = v->child; c; c = c->next)
			n++;
		struct canon_ctx ctx = {.members = malloc((n ? n : 1) * sizeof(cJSON *))};
		if (!ctx.members) {
			out->oom = true;
			return;
		}
		ng_json_each_member(v, collect_member, &ctx);
		qsort(ctx.members, ctx.n, sizeof *ctx.members, cmp_key);
		ng_strbuf_addc(out, '{');
		for (size_t i = 0; i < ctx.n; i++) {
			ng_strbuf_add_json_string(out, ctx.members[i]->string);
			ng_strbuf_addc(out, ':');
			ng_json_canonical(ctx.members[i], out);
			if (i + 1 < ctx.n)
				ng_strbuf_addc(out, ',');
		}
		ng_strbuf_addc(out, '}');
		free(ctx.members);
	} else {
		ng_strbuf_adds(out, "?");
	}
}

/* Numbers are leaves, so a pre-order walk meets them in the order their
 * literals appear in the text. */
static bool number_index(const cJSON *node, const cJSON *item, size_t *k)
{
	if (node == item)
		return true;
	if (cJSON_IsNumber(node))
		(*k)++;
	for (const cJSON *c = node->child; c; c = c->next)
		if (number_index(c, item, k))
			return true;
	return false;
}

bool ng_json_is_integer_literal(const char *text, size_t len, const cJSON *root,
                                const cJSON *item)
{
	size_t k = 0;
	if (!cJSON_IsNumber(item) || !number_index(root, item, &k))
		return false;
	size_t seen = 0;
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"') {
			in_string = true;
			continue;
		}
		if (c != '-' && (c < '0' || c > '9'))
			continue;
		bool integer = true;
		size_t j = i;
		for (; j < len && strchr("0123456789+-.eE", text[j]) && text[j]; j++)
			if (text[j] == '.' || text[j] == 'e' || text[j] == 'E')
				integer = false;
		if (seen++ == k)
			return integer;
		i = j - 1;
	}
	return false;
}
