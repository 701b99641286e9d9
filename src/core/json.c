#include "core/json.h"

#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integer literals of this many digits or more may not fit a double exactly
 * (2^53 has 16 digits), so their text is kept (see ng_json_big_integer). */
#define BIG_INTEGER_DIGITS 16

struct big_int {
	size_t ordinal; /* among the document's numbers, in text order */
	const char *text;
	size_t len;
};

struct big_ints {
	struct big_int *v;
	size_t n, cap;
};

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Checks what cJSON lets through and Python's json module (the reference's
 * reader) refuses, so that a line the reference cannot read is not judged
 * here either: white space other than space, tab, CR and LF (cJSON skips every
 * byte up to 0x20, and a leading byte order mark); a raw control character in
 * a string; a number not spelt the way RFC 8259 spells it (01, 1., 1.e5, -.5,
 * which strtod reads happily). Also refuses the escape \u0000, which C strings
 * would end at, so "a\u0000b" would compare equal to "a". On the way, notes
 * the integer literals that may not fit a double. */
static int check_text(const char *text, size_t len, struct big_ints *big, ng_err *err)
{
	size_t numbers = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		return ng_fail_as(err, NG_ERR_INPUT, "not valid JSON (a byte order mark at byte 1; write UTF-8 without one)");
	for (size_t i = 0; i < len;) {
		char c = text[i];
		if (c == '"') {
			for (i++; i < len && text[i] != '"'; i++) {
				if ((unsigned char)text[i] < 0x20)
					return ng_fail_as(err, NG_ERR_INPUT, "not valid JSON (control character 0x%02x inside a string "
					               "at byte %zu; it must be escaped)", (unsigned char)text[i], i + 1);
				if (text[i] == '\\') {
					if (len - i > 5 && memcmp(text + i + 1, "u0000", 5) == 0)
						return ng_fail_as(err, NG_ERR_INPUT, "strings containing \\u0000 are not accepted "
						               "(they would compare equal to their prefix)");
					i++; /* the escaped character; cJSON checks the escape */
				}
			}
			i++; /* the closing quote; cJSON reports a string left open */
			continue;
		}
		if (c == '-' || is_digit(c)) {
			size_t start = i, digits = 0;
			bool integer = true, ok = true;
			if (text[i] == '-')
				i++;
			if (i < len && text[i] == '0') {
				i++;
				digits = 1;
			} else {
				for (; i < len && is_digit(text[i]); i++)
					digits++;
				ok = digits > 0;
			}
			if (ok && i < len && text[i] == '.') {
				integer = false;
				size_t d = ++i;
				while (i < len && is_digit(text[i]))
					i++;
				ok = i > d;
			}
			if (ok && i < len && (text[i] == 'e' || text[i] == 'E')) {
				integer = false;
				if (++i < len && (text[i] == '+' || text[i] == '-'))
					i++;
				size_t d = i;
				while (i < len && is_digit(text[i]))
					i++;
				ok = i > d;
			}
			/* What follows a number is white space or punctuation, never more
			 * of something that looks like a number (01, 1.e5, 1e). */
			if (!ok || (i < len && (is_digit(text[i]) || text[i] == '+' || text[i] == '-' ||
			                        text[i] == '.' || text[i] == 'e' || text[i] == 'E')))
				return ng_fail_as(err, NG_ERR_INPUT, "not valid JSON (a number at byte %zu is not written the "
				               "way JSON writes numbers: \"%.20s\")", start + 1, text + start);
			if (integer && digits >= BIG_INTEGER_DIGITS) {
				if (big->n == big->cap) {
					size_t cap2 = big->cap ? big->cap * 2 : 8;
					struct big_int *v = realloc(big->v, cap2 * sizeof *v);
					if (!v)
						return ng_fail_as(err, NG_ERR_INPUT, "out of memory reading %zu-digit integers", digits);
					big->v = v;
					big->cap = cap2;
				}
				big->v[big->n++] = (struct big_int){numbers, text + start, i - start};
			}
			numbers++;
			continue;
		}
		if ((unsigned char)c <= 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return ng_fail_as(err, NG_ERR_INPUT, "not valid JSON (byte 0x%02x at byte %zu is not white space "
			               "JSON allows)", (unsigned char)c, i + 1);
		i++;
	}
	return 0;
}

/* Hangs each noted integer literal's text on its number item, as valuestring
 * (which cJSON leaves NULL for numbers and frees with the item). Numbers are
 * leaves, so a pre-order walk meets them in the order of their literals. */
static int attach_big(cJSON *node, const struct big_ints *big, size_t *k, size_t *next)
{
	if (*next == big->n)
		return 0;
	if (cJSON_IsNumber(node)) {
		if (big->v[*next].ordinal == *k) {
			const struct big_int *b = &big->v[*next];
			char *s = cJSON_malloc(b->len + 1);
			if (!s)
				return -1;
			memcpy(s, b->text, b->len);
			s[b->len] = '\0';
			node->valuestring = s;
			(*next)++;
		}
		(*k)++;
	}
	for (cJSON *c = node->child; c; c = c->next)
		if (attach_big(c, big, k, next) < 0)
			return -1;
	return 0;
}

/* ---- a fast path for cJSON_Parse ----
 *
 * Parsing is most of what `gate --batch` spends per line, and most of the
 * parse is strtod, which cJSON calls for every number and which is slow on
 * the 16- and 17-digit literals a measured double prints as. parse_fast()
 * builds the tree cJSON would build, node for node, for the plain JSON such
 * lines are made of, and converts a number without strtod when an exact
 * method settles it (strtod decides the rest). Anything else (an escape in a
 * string, deep nesting, a long literal, a syntax error) makes it give up and
 * leave the text to cJSON, so what is accepted, refused and reported stays
 * cJSON's. check_text() has already run either way. */

#define FAST_MAX_DEPTH 64
#define FAST_MAX_NUMBER 40 /* cJSON reads at most 63 characters of a number */

struct fast {
	const char *p, *end;
	unsigned depth;
	bool x87_ok; /* the x87 rounds to nearest with its full 64-bit significand */
};

static inline void fast_ws(struct fast *f)
{
	while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r'))
		f->p++;
}

static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if (defined(__x86_64__) || defined(__i386__)) && LDBL_MANT_DIG == 64
#define FAST_X87 1
static const long double pow10_exact_ld[28] = {
	1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
	1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
	1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
#endif

/* w * 10^q correctly rounded, as strtod would give it, or false when the
 * exact paths cannot say. */
static bool fast_scale(const struct fast *f, uint64_t w, int q, bool neg, double *out)
{
	double d;
	if (w == 0) {
		d = 0.0;
	}
#if FLT_EVAL_METHOD == 0
	/* Clinger: both operands exact, so the one operation rounds once. */
	else if (w <= (UINT64_C(1) << 53) && q >= -22 && q <= 22) {
		d = q < 0 ? (double)w / pow10_exact[-q] : (double)w * pow10_exact[q];
	}
#endif
#ifdef FAST_X87
	/* The same in the x87's 64-bit significand (w and 10^27 fit it exactly),
	 * then rounded to double. Rounding twice can differ from rounding once
	 * only when the first result lies exactly halfway between two doubles;
	 * that case, and results outside the normal range, go to strtod. */
	else if (f->x87_ok && q >= -27 && q <= 27) {
		long double r = q < 0 ? (long double)w / pow10_exact_ld[-q]
		                      : (long double)w * pow10_exact_ld[q];
		uint64_t mant;
		memcpy(&mant, &r, sizeof mant); /* the significand, explicit integer bit */
		if ((mant & 0x7FF) == 0x400)
			return false;
		d = (double)r;
		if (!(d >= DBL_MIN && d <= DBL_MAX))
			return false;
	}
#endif
	else {
		(void)f;
		(void)pow10_exact;
		return false;
	}
	*out = neg ? -d : d;
	return true;
}

/* A number as cJSON reads it: the literal through strtod (with the decimal
 * point of the current locale, as cJSON writes it). */
static double strtod_like_cjson(const char *s, size_t n)
{
	char buf[FAST_MAX_NUMBER + 1];
	char point = '.';
	const struct lconv *lc = localeconv();
	if (lc && lc->decimal_point && lc->decimal_point[0])
		point = lc->decimal_point[0];
	for (size_t i = 0; i < n; i++)
		buf[i] = s[i] == '.' ? point : s[i];
	buf[n] = '\0';
	return strtod(buf, NULL);
}

static bool fast_number(struct fast *f, cJSON *item)
{
	const char *s = f->p, *p = s, *end = f->end;
	bool neg = false;
	uint64_t w = 0;
	int sig = 0, frac = 0; /* digits in w; of those, after the point */
	bool exact = true;     /* w holds every digit */
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p < end && *p == '0') {
		p++;
	} else if (p < end && *p >= '1' && *p <= '9') {
		for (; p < end && (unsigned)(*p - '0') < 10; p++) {
			if (sig < 19) {
				w = w * 10 + (uint64_t)(*p - '0');
				sig++;
			} else {
				exact = false;
			}
		}
		if (!exact)
			return false; /* an integer this long is the slow path's */
	} else {
		return false;
	}
	if (p < end && *p == '.') {
		const char *d = ++p;
		if (w == 0) /* leading zeros only scale */
			for (; p < end && *p == '0'; p++)
				frac++;
		for (; p < end && (unsigned)(*p - '0') < 10; p++) {
			if (sig < 19) {
				w = w * 10 + (uint64_t)(*p - '0');
				sig++;
				frac++;
			} else {
				exact = false; /* more digits than fit: strtod decides */
			}
		}
		if (p == d)
			return false;
	}
	int e = 0;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		bool eneg = false;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		const char *d = p;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			if (e < 10000)
				e = e * 10 + (*p - '0');
		if (p == d)
			return false;
		if (eneg)
			e = -e;
	}
	/* What follows must end the number for cJSON as well: it reads on over
	 * these characters and then lets strtod stop where it likes. */
	if (p < end && ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.' ||
	                *p == 'e' || *p == 'E'))
		return false;
	size_t n = (size_t)(p - s);
	if (n > FAST_MAX_NUMBER)
		return false;
	double v;
	if (!exact || !fast_scale(f, w, e - frac, neg, &v))
		v = strtod_like_cjson(s, n);
	item->valuedouble = v;
	/* cJSON's saturating conversion */
	if (v >= INT_MAX)
		item->valueint = INT_MAX;
	else if (v <= (double)INT_MIN)
		item->valueint = INT_MIN;
	else
		item->valueint = (int)v;
	item->type = cJSON_Number;
	f->p = p;
	return true;
}

/* A string without escapes, copied as cJSON copies it. */
static char *fast_string(struct fast *f)
{
	const char *s = ++f->p, *p = s;
	while (p < f->end && *p != '"') {
		if (*p == '\\' || (unsigned char)*p < 0x20)
			return NULL;
		p++;
	}
	if (p == f->end)
		return NULL;
	size_t n = (size_t)(p - s);
	char *out = cJSON_malloc(n + 1);
	if (!out)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	f->p = p + 1;
	return out;
}

static cJSON *fast_item(void)
{
	cJSON *item = cJSON_malloc(sizeof *item);
	if (item)
		memset(item, 0, sizeof *item);
	return item;
}

static bool fast_value(struct fast *f, cJSON *item);

/* An array or object ('[' or '{' at f->p): children linked as cJSON links
 * them, the first child's prev pointing at the last. */
static bool fast_container(struct fast *f, cJSON *item, bool object)
{
	char close = object ? '}' : ']';
	if (++f->depth > FAST_MAX_DEPTH)
		return false;
	item->type = object ? cJSON_Object : cJSON_Array;
	f->p++;
	fast_ws(f);
	if (f->p < f->end && *f->p == close) {
		f->p++;
		f->depth--;
		return true;
	}
	cJSON *last = NULL;
	for (;;) {
		cJSON *child = fast_item();
		if (!child)
			return false;
		if (last) {
			last->next = child;
			child->prev = last;
		} else {
			item->child = child;
		}
		last = child;
		item->child->prev = last;
		if (object) {
			if (f->p >= f->end || *f->p != '"')
				return false;
			if (!(child->string = fast_string(f)))
				return false;
			fast_ws(f);
			if (f->p >= f->end || *f->p != ':')
				return false;
			f->p++;
			fast_ws(f);
		}
		if (!fast_value(f, child))
			return false;
		fast_ws(f);
		if (f->p < f->end && *f->p == ',') {
			f->p++;
			fast_ws(f);
			continue;
		}
		if (f->p < f->end && *f->p == close) {
			f->p++;
			f->depth--;
			return true;
		}
		return false;
	}
}

static bool fast_literal(struct fast *f, const char *word, size_t n)
{
	if ((size_t)(f->end - f->p) < n || memcmp(f->p, word, n) != 0)
		return false;
	f->p += n;
	return true;
}

static bool fast_value(struct fast *f, cJSON *item)
{
	if (f->p >= f->end)
		return false;
	switch (*f->p) {
	case '{': return fast_container(f, item, true);
	case '[': return fast_container(f, item, false);
	case '"':
		item->type = cJSON_String;
		return (item->valuestring = fast_string(f)) != NULL;
	case 't':
		item->type = cJSON_True;
		item->valueint = 1;
		return fast_literal(f, "true", 4);
	case 'f':
		item->type = cJSON_False;
		return fast_literal(f, "false", 5);
	case 'n':
		item->type = cJSON_NULL;
		return fast_literal(f, "null", 4);
	default: return fast_number(f, item);
	}
}

/* The tree cJSON_ParseWithLengthOpts(text, len + 1, _, 1) builds, or NULL to
 * leave the text to cJSON. */
static cJSON *parse_fast(const char *text, size_t len)
{
	struct fast f = {text, text + len, 0, false};
#ifdef FAST_X87
	/* Something may have narrowed the x87's precision or changed its
	 * rounding; then only the paths that do not depend on it are used. */
	volatile long double one = 1.0L, tiny = LDBL_EPSILON;
	f.x87_ok = one + tiny != one && FLT_ROUNDS == 1;
#endif
	fast_ws(&f);
	cJSON *root = fast_item();
	if (!root)
		return NULL;
	if (!fast_value(&f, root)) {
		cJSON_Delete(root);
		return NULL;
	}
	fast_ws(&f);
	if (f.p != f.end) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

cJSON *ng_json_parse(const char *text, size_t len, ng_err *err)
{
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		ng_fail_as(err, NG_ERR_INPUT, "a NUL byte at offset %zu is not JSON", (size_t)(nul - text));
		return NULL;
	}
	struct big_ints big = {0};
	if (check_text(text, len, &big, err) < 0) {
		free(big.v);
		return NULL;
	}
	const char *stop = NULL;
	cJSON *v = parse_fast(text, len);
	/* text[len] is the terminating NUL, which cJSON wants inside the length
	 * when it is asked to reject trailing garbage. */
	if (!v)
		v = cJSON_ParseWithLengthOpts(text, len + 1, &stop, 1);
	if (!v) {
		size_t at = stop && stop >= text && stop <= text + len ? (size_t)(stop - text) : 0;
		if (len == 0 || strspn(text, " \t\r\n") == len)
			ng_fail_as(err, NG_ERR_INPUT, "empty input where a JSON value was expected");
		else
			ng_fail_as(err, NG_ERR_INPUT, "not valid JSON (error near byte %zu: \"%.20s\")", at + 1, text + at);
	} else if (big.n) {
		size_t k = 0, next = 0;
		if (attach_big(v, &big, &k, &next) < 0) {
			ng_fail_as(err, NG_ERR_INPUT, "out of memory keeping %zu large integers", big.n);
			cJSON_Delete(v);
			v = NULL;
		}
	}
	free(big.v);
	return v;
}

const char *ng_json_big_integer(const cJSON *item)
{
	return cJSON_IsNumber(item) ? item->valuestring : NULL;
}

const cJSON *ng_json_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	const cJSON *found = NULL;
	for (const cJSON *c = obj->child; c; c = c->next)
		if (c->string && c->string[0] == key[0] && strcmp(c->string, key) == 0)
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

/* Python compares an int and a float by exact value, and keeps an integer
 * literal exactly, so two numbers are equal when their exact values are: an
 * integer literal too long for a double compares as its digits, and a double
 * with an integral value as all of its digits ("%.0f" prints it exactly). So
 * 10**22 equals 1e22, while 2**53 + 1 does not equal 2**53 or 2**53 + 0.0. */
static bool number_equal(const cJSON *a, double x, const cJSON *b, double y)
{
	const char *da = ng_json_big_integer(a), *db = ng_json_big_integer(b);
	if (!da && !db)
		return x == y;
	char tmp[400]; /* the digits of any finite double */
	if (!da || !db) {
		double z = da ? y : x;
		if (!isfinite(z) || z != trunc(z))
			return false;
		snprintf(tmp, sizeof tmp, "%.0f", z);
		if (da)
			db = tmp;
		else
			da = tmp;
	}
	return strcmp(da, db) == 0;
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

bool ng_json_has_string(const cJSON *a, const char *s)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, a)
		if (cJSON_IsString(x) && strcmp(x->valuestring, s) == 0)
			return true;
	return false;
}

bool ng_json_equal(const cJSON *a, const cJSON *b)
{
	bool a_null = !a || cJSON_IsNull(a), b_null = !b || cJSON_IsNull(b);
	if (a_null || b_null)
		return a_null && b_null;
	double x, y;
	if (numeric_like(a, &x))
		return numeric_like(b, &y) && number_equal(a, x, b, y);
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
		/* Exact values, as number_equal compares them. */
		if (ng_json_big_integer(v))
			ng_strbuf_adds(out, ng_json_big_integer(v));
		else if (x == 0.0)
			ng_strbuf_adds(out, "0"); /* -0.0 == 0.0 */
		else if (isfinite(x) && x == trunc(x))
			ng_strbuf_printf(out, "%.0f", x);
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

void ng_json_add_number(cJSON *obj, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

void ng_json_add_time(cJSON *obj, const char *key, int64_t t)
{
	if (t)
		cJSON_AddNumberToObject(obj, key, (double)t);
	else
		cJSON_AddNullToObject(obj, key);
}
