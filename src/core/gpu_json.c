/* A GPU snapshot as JSON (schema "nodegate/gpus/1") and back, exactly.
 *
 *   {"schema": "nodegate/gpus/1", "source": "nvml", "nvml": "ok",
 *    "nvml_error": "...", "driver": "550.54.15", "nvml_version": "12.550.54.15",
 *    "gpus": [{"index": 0, "uuid": "GPU-...", "name": "...", "bus": "0000:18:00",
 *              "lost": false, "error": "...",
 *              "ecc_volatile_uncorrected": 0,              an OK field: its value
 *              "remap_pending": {"not_supported": 3},      not applicable, NVML's code
 *              "pcie_replays": {"failed": 999},            could not be read, NVML's code
 *              ...                                         absent (or null): unread
 *              "nvlink": [{"active": 1, "replay_errors": 0, "recovery_errors": 0, "crc_errors": 0}],
 *              "xid": [{"code": 79, "at_usec": 1234, "message": "..."}]}]}
 *
 * A field the compact forms cannot hold exactly (a value beside a failure,
 * say) is written {"state": "failed", "value": N, "nvml_return": R}; either
 * form is read. Counters of 16 digits or more are written as raw integer
 * literals; read the text with ng_json_parse, which keeps such literals
 * exactly (cJSON_Parse would round them to a double). "nvml_error", "driver", "nvml_version" and a
 * GPU's "error" are left out when empty; "nvml", "gpus" and each GPU's
 * "index" are required. Reading is strict: an unknown key, a key given
 * twice, a value of the wrong type or out of range, and a string too long
 * for its field are refused with the key's path in the message. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/gpu.h"
#include "core/gpu_fields.h"
#include "core/json.h"
#include "core/json_path.h"

#define SCHEMA "nodegate/gpus/1"
/* cJSON prints a number with 15 significant digits when that reads back
 * within its tolerance, which loses the last digits of larger integers: such
 * counters are written as raw integer literals instead. */
#define PRINT_EXACT_MAX 999999999999999LL

/* ---- PCI addresses ------------------------------------------------------------- */

static int hex_run(const char **p, unsigned long *v)
{
	int n = 0;
	*v = 0;
	while (isxdigit((unsigned char)**p) && n < 9) {
		char c = **p;
		*v = *v << 4 | (unsigned long)(isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10);
		(*p)++;
		n++;
	}
	return n;
}

int ng_gpu_bus_normalize(const char *in, char out[16])
{
	if (!in || !out)
		return -1;
	const char *p = in;
	bool prefixed = strncasecmp(p, "PCI:", 4) == 0;
	if (prefixed)
		p += 4;
	unsigned long part[3];
	int digits[3], n = 0;
	for (;;) {
		digits[n] = hex_run(&p, &part[n]);
		n++;
		if (*p != ':' || n == 3)
			break;
		p++;
	}
	bool function = false;
	if (*p == '.') {
		if (!(p[1] >= '0' && p[1] <= '7'))
			return -1;
		function = true;
		p += 2;
	}
	if (*p != '\0')
		return -1;
	unsigned long domain, bus, device;
	if (n == 3) {
		if (digits[0] < 4 || digits[0] > 8)
			return -1;
		domain = part[0];
		bus = part[1];
		device = part[2];
		if (digits[1] != 2 || digits[2] != 2)
			return -1;
	} else if (n == 2 && function && !prefixed) {
		domain = 0;
		bus = part[0];
		device = part[1];
		if (digits[0] != 2 || digits[1] != 2)
			return -1;
	} else {
		return -1;
	}
	if (device > 0x1f)
		return -1;
	ng_gpu_bus_format(domain, bus, device, out);
	return 0;
}

/* ---- writing ------------------------------------------------------------------- */

static const char *const state_names[] = {
	[NG_FIELD_UNREAD] = "unread",
	[NG_FIELD_OK] = "ok",
	[NG_FIELD_NOT_SUPPORTED] = "not_supported",
	[NG_FIELD_FAILED] = "failed",
};

static bool state_valid(ng_field_state s) { return (unsigned)s <= NG_FIELD_FAILED; }

static cJSON *u64_json(uint64_t v)
{
	if (v <= (uint64_t)PRINT_EXACT_MAX)
		return cJSON_CreateNumber((double)v);
	char text[24];
	snprintf(text, sizeof text, "%" PRIu64, v);
	return cJSON_CreateRaw(text);
}

static cJSON *i64_json(int64_t v)
{
	if (v >= -PRINT_EXACT_MAX && v <= PRINT_EXACT_MAX)
		return cJSON_CreateNumber((double)v);
	char text[24];
	snprintf(text, sizeof text, "%" PRId64, v);
	return cJSON_CreateRaw(text);
}

static bool add(cJSON *obj, const char *key, cJSON *v)
{
	if (!v)
		return false;
	if (!cJSON_AddItemToObject(obj, key, v)) {
		cJSON_Delete(v);
		return false;
	}
	return true;
}

static bool add_string(cJSON *obj, const char *key, const char *s, size_t size, bool omit_empty)
{
	if (memchr(s, '\0', size) == NULL)
		return false; /* not terminated: not a snapshot this code made */
	if (omit_empty && !s[0])
		return true;
	return add(obj, key, cJSON_CreateString(s));
}

/* Adds the field under key, or nothing when it is plainly unread. */
static bool add_field(cJSON *obj, const char *key, const ng_gpu_field *f)
{
	if (!state_valid(f->state))
		return false;
	if (f->state == NG_FIELD_UNREAD && f->value == 0 && f->nvml_return == 0)
		return true;
	if (f->state == NG_FIELD_OK && f->nvml_return == 0)
		return add(obj, key, u64_json(f->value));
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return false;
	bool ok;
	if ((f->state == NG_FIELD_NOT_SUPPORTED || f->state == NG_FIELD_FAILED) && f->value == 0)
		ok = add(o, state_names[f->state], cJSON_CreateNumber(f->nvml_return));
	else
		ok = add(o, "state", cJSON_CreateString(state_names[f->state])) && add(o, "value", u64_json(f->value)) &&
		     add(o, "nvml_return", cJSON_CreateNumber(f->nvml_return));
	if (!ok) {
		cJSON_Delete(o);
		return false;
	}
	return add(obj, key, o);
}

static cJSON *gpu_json(const ng_gpu_state *g)
{
	if (g->n_links > NG_NVLINK_MAX || g->n_xid > NG_GPU_XID_MAX)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool ok = add(o, "index", cJSON_CreateNumber(g->index)) &&
	          add_string(o, "uuid", g->uuid, sizeof g->uuid, false) &&
	          add_string(o, "name", g->name, sizeof g->name, false) &&
	          add_string(o, "bus", g->bus, sizeof g->bus, false) && add(o, "lost", cJSON_CreateBool(g->lost)) &&
	          add_string(o, "error", g->error, sizeof g->error, true);
	/* A GPU another witness vouches for (the check adds them, after NVML):
	 * written only then, so the NVML child's snapshot reads as it did. */
	if (ok && g->presence != NG_GPU_LISTED)
		ok = add(o, "presence", cJSON_CreateString(g->presence == NG_GPU_MISSING ? "missing"
		                                                                       : "unanswered")) &&
		     add_string(o, "seen_by", g->seen_by, sizeof g->seen_by, true);
#define ADD_GPU_FIELD(m) ok = ok && add_field(o, #m, &g->m);
	NG_GPU_FIELDS(ADD_GPU_FIELD)
#undef ADD_GPU_FIELD
	if (ok && g->n_pids) {
		cJSON *pids = cJSON_CreateArray();
		ok = add(o, "pids", pids);
		for (size_t i = 0; ok && i < g->n_pids && i < 8; i++)
			ok = cJSON_AddItemToArray(pids, cJSON_CreateNumber(g->pid[i]));
	}
	cJSON *links = ok ? cJSON_CreateArray() : NULL;
	ok = ok && add(o, "nvlink", links);
	for (size_t l = 0; ok && l < g->n_links; l++) {
		cJSON *lo = cJSON_CreateObject();
		ok = lo && cJSON_AddItemToArray(links, lo);
		if (!ok)
			cJSON_Delete(lo);
#define ADD_LINK_FIELD(m) ok = ok && add_field(lo, #m, &g->link[l].m);
		NG_NVLINK_FIELDS(ADD_LINK_FIELD)
#undef ADD_LINK_FIELD
	}
	cJSON *xids = ok ? cJSON_CreateArray() : NULL;
	ok = ok && add(o, "xid", xids);
	for (size_t i = 0; ok && i < g->n_xid; i++) {
		const ng_gpu_xid *x = &g->xid[i];
		cJSON *xo = cJSON_CreateObject();
		ok = xo && cJSON_AddItemToArray(xids, xo);
		if (!ok)
			cJSON_Delete(xo);
		ok = ok && add(xo, "code", cJSON_CreateNumber(x->code)) && add(xo, "at_usec", i64_json(x->at_usec)) &&
		     add_string(xo, "message", x->message, sizeof x->message, false);
		if (ok && x->cause)
			ok = add(xo, "cause", cJSON_CreateNumber(x->cause));
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *ng_gpu_snapshot_to_json(const ng_gpu_snapshot *s)
{
	if (!s || s->n_gpus > NG_GPU_MAX || !state_valid(s->nvml))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool ok = add(o, "schema", cJSON_CreateString(SCHEMA)) &&
	          add_string(o, "source", s->source, sizeof s->source, false) &&
	          add(o, "nvml", cJSON_CreateString(state_names[s->nvml])) &&
	          add_string(o, "nvml_error", s->nvml_error, sizeof s->nvml_error, true) &&
	          add_string(o, "driver", s->driver, sizeof s->driver, true) &&
	          add_string(o, "nvml_version", s->nvml_version, sizeof s->nvml_version, true);
	if (ok && s->n_listed != s->n_gpus)
		ok = add(o, "listed", cJSON_CreateNumber((double)s->n_listed));
	cJSON *gpus = ok ? cJSON_CreateArray() : NULL;
	ok = ok && add(o, "gpus", gpus);
	for (size_t i = 0; ok && i < s->n_gpus; i++) {
		cJSON *g = gpu_json(&s->gpu[i]);
		ok = g && cJSON_AddItemToArray(gpus, g);
		if (!ok)
			cJSON_Delete(g);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---- reading ------------------------------------------------------------------- */

struct reader {
	ng_err *err;
	struct ng_json_path jp; /* "gpus[3].nvlink[2].active" */
};

static int refuse(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ng_json_path_vrefuse(&r->jp, fmt, ap);
	va_end(ap);
	return ng_fail_as(r->err, NG_ERR_INPUT, "GPU snapshot: %s", r->jp.msg);
}

static size_t push_key(struct reader *r, const char *key) { return ng_json_path_key(&r->jp, key); }
static size_t push_index(struct reader *r, size_t i) { return ng_json_path_index(&r->jp, i); }
static void pop(struct reader *r, size_t old) { ng_json_path_pop(&r->jp, old); }

/* Refuses a member not in keys[], and a member given twice. */
static int check_members(struct reader *r, const cJSON *obj, const char *const *keys, size_t n_keys)
{
	if (ng_json_path_check_members(&r->jp, obj, keys, n_keys, false) < 0)
		return ng_fail_as(r->err, NG_ERR_INPUT, "GPU snapshot: %s", r->jp.msg);
	return 0;
}

static const cJSON *member(const cJSON *obj, const char *key)
{
	for (const cJSON *m = obj->child; m; m = m->next)
		if (strcmp(m->string, key) == 0)
			return m;
	return NULL;
}

/* member(), searched from *at on and then from the start: the fields of a
 * GPU are read in the order they are written, so each is found at once
 * (a replay reads every GPU check of a month through here). */
static const cJSON *member_from(const cJSON *obj, const char *key, const cJSON **at)
{
	for (const cJSON *m = *at; m; m = m->next)
		if (strcmp(m->string, key) == 0) {
			*at = m->next;
			return m;
		}
	for (const cJSON *m = obj->child; m && m != *at; m = m->next)
		if (strcmp(m->string, key) == 0) {
			*at = m->next;
			return m;
		}
	return NULL;
}

static bool digits_only(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A whole number, exactly: a big literal's text (ng_json_parse keeps it),
 * a raw item (what the writer makes of one), or a double that is whole. */
static int read_integer(struct reader *r, const cJSON *v, bool is_signed, uint64_t *mag, bool *neg)
{
	const char *text = cJSON_IsRaw(v) ? v->valuestring : ng_json_big_integer(v);
	*neg = false;
	if (text) {
		if (*text == '-') {
			*neg = true;
			text++;
		}
		errno = 0;
		char *end;
		unsigned long long x = digits_only(text) ? strtoull(text, &end, 10) : 0;
		if (!digits_only(text) || errno == ERANGE)
			return refuse(r, "expected a whole number that fits 64 bits");
		*mag = x;
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (!isfinite(d) || d != floor(d) || fabs(d) >= 18446744073709551616.0)
			return refuse(r, "expected a whole number");
		*neg = d < 0;
		*mag = (uint64_t)fabs(d);
	} else {
		return refuse(r, "expected a number");
	}
	if (*neg && !is_signed && *mag != 0)
		return refuse(r, "expected a number from 0 up");
	return 0;
}

static int read_u64(struct reader *r, const cJSON *v, uint64_t *out)
{
	bool neg;
	return read_integer(r, v, false, out, &neg);
}

static int read_i64(struct reader *r, const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
	uint64_t mag;
	bool neg;
	if (read_integer(r, v, true, &mag, &neg) < 0)
		return -1;
	if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
		return refuse(r, "out of range");
	int64_t x = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	if (x < lo || x > hi)
		return refuse(r, "expected a whole number from %" PRId64 " to %" PRId64, lo, hi);
	*out = x;
	return 0;
}

static int read_int(struct reader *r, const cJSON *v, int lo, int *out)
{
	int64_t x;
	if (read_i64(r, v, lo, INT_MAX, &x) < 0)
		return -1;
	*out = (int)x;
	return 0;
}

static int read_string(struct reader *r, const cJSON *obj, const char *key, char *out, size_t size)
{
	const cJSON *v = member(obj, key);
	if (!v)
		return 0;
	size_t old = push_key(r, key);
	if (!cJSON_IsString(v))
		return refuse(r, "expected a string");
	if (strlen(v->valuestring) >= size)
		return refuse(r, "longer than %zu bytes", size - 1);
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	pop(r, old);
	return 0;
}

static int read_state(struct reader *r, const cJSON *v, ng_field_state *out)
{
	if (cJSON_IsString(v))
		for (int s = NG_FIELD_UNREAD; s <= NG_FIELD_FAILED; s++)
			if (strcmp(v->valuestring, state_names[s]) == 0) {
				*out = (ng_field_state)s;
				return 0;
			}
	return refuse(r, "expected \"ok\", \"not_supported\", \"failed\" or \"unread\"");
}

#define FIELD_FORMS "a number, {\"not_supported\": code}, {\"failed\": code}, null, or " \
	            "{\"state\": ..., \"value\": ..., \"nvml_return\": ...}"

/* The field under key, found as v (NULL: absent; member_from finds it). */
static int read_field_of(struct reader *r, const cJSON *v, const char *key, ng_gpu_field *f)
{
	memset(f, 0, sizeof *f);
	if (!v)
		return 0;
	size_t old = push_key(r, key);
	if (cJSON_IsNull(v)) {
		/* unread */
	} else if (cJSON_IsNumber(v) || cJSON_IsRaw(v)) {
		if (read_u64(r, v, &f->value) < 0)
			return -1;
		f->state = NG_FIELD_OK;
	} else if (cJSON_IsObject(v) && member(v, "state")) {
		static const char *const keys[] = {"state", "value", "nvml_return"};
		if (check_members(r, v, keys, 3) < 0)
			return -1;
		const cJSON *value = member(v, "value"), *rc = member(v, "nvml_return");
		size_t o2 = push_key(r, "state");
		if (read_state(r, member(v, "state"), &f->state) < 0)
			return -1;
		pop(r, o2);
		push_key(r, "value");
		if (value && read_u64(r, value, &f->value) < 0)
			return -1;
		pop(r, o2);
		push_key(r, "nvml_return");
		if (rc && read_int(r, rc, INT_MIN, &f->nvml_return) < 0)
			return -1;
		pop(r, o2);
	} else if (cJSON_IsObject(v) && v->child && !v->child->next &&
	           (strcmp(v->child->string, "not_supported") == 0 || strcmp(v->child->string, "failed") == 0)) {
		f->state = v->child->string[0] == 'n' ? NG_FIELD_NOT_SUPPORTED : NG_FIELD_FAILED;
		push_key(r, v->child->string);
		if (read_int(r, v->child, INT_MIN, &f->nvml_return) < 0)
			return -1;
	} else {
		return refuse(r, "expected " FIELD_FORMS);
	}
	pop(r, old);
	return 0;
}

static const cJSON *read_array(struct reader *r, const cJSON *obj, const char *key, size_t max, bool required,
                               size_t *n)
{
	const cJSON *v = member(obj, key);
	*n = 0;
	if (!v) {
		if (required)
			refuse(r, "\"%s\" is missing", key);
		return NULL;
	}
	size_t old = push_key(r, key);
	if (!cJSON_IsArray(v)) {
		refuse(r, "expected a list");
		return NULL;
	}
	for (const cJSON *e = v->child; e; e = e->next)
		(*n)++;
	if (*n > max) {
		refuse(r, "%zu entries; at most %zu", *n, max);
		return NULL;
	}
	pop(r, old);
	return v;
}

static int read_links(struct reader *r, const cJSON *o, ng_gpu_state *g)
{
	if (!member(o, "nvlink"))
		return 0;
	const cJSON *links = read_array(r, o, "nvlink", NG_NVLINK_MAX, false, &g->n_links);
	if (!links)
		return -1;
	size_t old = push_key(r, "nvlink"), l = 0;
	static const char *const keys[] = {
#define LINK_KEY(m) #m,
		NG_NVLINK_FIELDS(LINK_KEY)
#undef LINK_KEY
	};
	for (const cJSON *e = links->child; e; e = e->next, l++) {
		size_t o2 = push_index(r, l);
		if (check_members(r, e, keys, sizeof keys / sizeof *keys) < 0)
			return -1;
		const cJSON *next = e->child;
#define READ_LINK_FIELD(m)                                                    \
	if (read_field_of(r, member_from(e, #m, &next), #m, &g->link[l].m) < 0) \
		return -1;
		NG_NVLINK_FIELDS(READ_LINK_FIELD)
#undef READ_LINK_FIELD
		pop(r, o2);
	}
	pop(r, old);
	return 0;
}

static int read_xids(struct reader *r, const cJSON *o, ng_gpu_state *g)
{
	if (!member(o, "xid"))
		return 0;
	const cJSON *xids = read_array(r, o, "xid", NG_GPU_XID_MAX, false, &g->n_xid);
	if (!xids)
		return -1;
	size_t old = push_key(r, "xid"), i = 0;
	static const char *const keys[] = {"code", "at_usec", "message", "cause"};
	for (const cJSON *e = xids->child; e; e = e->next, i++) {
		ng_gpu_xid *x = &g->xid[i];
		x->at_usec = -1;
		size_t list = push_index(r, i), at = strlen(r->jp.path);
		if (check_members(r, e, keys, 4) < 0)
			return -1;
		const cJSON *code = member(e, "code"), *at_usec = member(e, "at_usec"),
		            *cause = member(e, "cause");
		push_key(r, "cause");
		if (cause && read_int(r, cause, 0, &x->cause) < 0)
			return -1;
		pop(r, at);
		if (!code)
			return refuse(r, "\"code\" is missing");
		push_key(r, "code");
		if (read_int(r, code, 0, &x->code) < 0)
			return -1;
		pop(r, at);
		push_key(r, "at_usec");
		if (at_usec && read_i64(r, at_usec, INT64_MIN, INT64_MAX, &x->at_usec) < 0)
			return -1;
		pop(r, at);
		if (read_string(r, e, "message", x->message, sizeof x->message) < 0)
			return -1;
		pop(r, list);
	}
	pop(r, old);
	return 0;
}

static int read_gpu(struct reader *r, const cJSON *o, ng_gpu_state *g)
{
	static const char *const keys[] = {
		"index", "uuid", "name", "bus", "lost", "error", "nvlink", "xid", "pids", "presence",
		"seen_by",
#define GPU_KEY(m) #m,
		NG_GPU_FIELDS(GPU_KEY)
#undef GPU_KEY
	};
	memset(g, 0, sizeof *g);
	enum { N_KEYS = sizeof keys / sizeof *keys, FIRST_FIELD = 11 };
#define ONE_FIELD(m) +1
	_Static_assert(FIRST_FIELD + (0 NG_GPU_FIELDS(ONE_FIELD)) == N_KEYS,
	               "the fields are the last of keys[]");
#undef ONE_FIELD
	const cJSON *found[N_KEYS];
	if (ng_json_path_find_members(&r->jp, o, keys, N_KEYS, false, found) < 0)
		return ng_fail_as(r->err, NG_ERR_INPUT, "GPU snapshot: %s", r->jp.msg);
	const cJSON *idx = member(o, "index");
	if (!idx)
		return refuse(r, "\"index\" is missing");
	size_t old = push_key(r, "index");
	if (read_int(r, idx, 0, &g->index) < 0)
		return -1;
	pop(r, old);
	char bus[64] = "";
	if (read_string(r, o, "uuid", g->uuid, sizeof g->uuid) < 0 ||
	    read_string(r, o, "name", g->name, sizeof g->name) < 0 || read_string(r, o, "bus", bus, sizeof bus) < 0 ||
	    read_string(r, o, "error", g->error, sizeof g->error) < 0)
		return -1;
	if (bus[0] && ng_gpu_bus_normalize(bus, g->bus) < 0) {
		push_key(r, "bus");
		return refuse(r, "\"%s\" is not a PCI address (\"0000:3b:00\")", bus);
	}
	const cJSON *lost = member(o, "lost");
	if (lost) {
		if (!cJSON_IsBool(lost)) {
			push_key(r, "lost");
			return refuse(r, "expected true or false");
		}
		g->lost = cJSON_IsTrue(lost);
	}
	const cJSON *presence = member(o, "presence");
	if (presence) {
		const char *p = cJSON_GetStringValue(presence);
		if (p && strcmp(p, "missing") == 0)
			g->presence = NG_GPU_MISSING;
		else if (p && strcmp(p, "unanswered") == 0)
			g->presence = NG_GPU_UNANSWERED;
		else {
			push_key(r, "presence");
			return refuse(r, "expected \"missing\" or \"unanswered\"");
		}
	}
	if (read_string(r, o, "seen_by", g->seen_by, sizeof g->seen_by) < 0)
		return -1;
	/* the fields follow the other keys in keys[], in NG_GPU_FIELDS order */
	size_t k = FIRST_FIELD;
#define READ_GPU_FIELD(m)                                    \
	if (read_field_of(r, found[k++], #m, &g->m) < 0)     \
		return -1;
	NG_GPU_FIELDS(READ_GPU_FIELD)
#undef READ_GPU_FIELD
	const cJSON *pids = member(o, "pids");
	if (pids) {
		if (!cJSON_IsArray(pids) || cJSON_GetArraySize(pids) > 8) {
			push_key(r, "pids");
			return refuse(r, "expected a list of at most 8 process ids");
		}
		for (const cJSON *e = pids->child; e; e = e->next) {
			int v;
			size_t at = push_key(r, "pids");
			if (read_int(r, e, 0, &v) < 0)
				return -1;
			pop(r, at);
			g->pid[g->n_pids++] = (uint32_t)v;
		}
	}
	return read_links(r, o, g) < 0 || read_xids(r, o, g) < 0 ? -1 : 0;
}

int ng_gpu_snapshot_from_json(const cJSON *doc, ng_gpu_snapshot *out, ng_err *err)
{
	struct reader r = {.err = err};
	if (!out)
		return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: nowhere to put it");
	ng_gpu_snapshot_clear(out);
	if (!doc)
		return refuse(&r, "no document");
	static const char *const keys[] = {"schema", "source", "nvml", "nvml_error", "driver", "nvml_version", "gpus",
	                                   "listed"};
	if (check_members(&r, doc, keys, sizeof keys / sizeof *keys) < 0)
		goto fail;
	const cJSON *schema = member(doc, "schema");
	if (!schema || !cJSON_IsString(schema) || strcmp(schema->valuestring, SCHEMA) != 0) {
		push_key(&r, "schema");
		refuse(&r, "expected \"" SCHEMA "\"");
		goto fail;
	}
	const cJSON *nvml = member(doc, "nvml");
	if (!nvml) {
		refuse(&r, "\"nvml\" is missing");
		goto fail;
	}
	push_key(&r, "nvml");
	if (read_state(&r, nvml, &out->nvml) < 0)
		goto fail;
	pop(&r, 0);
	if (read_string(&r, doc, "source", out->source, sizeof out->source) < 0 ||
	    read_string(&r, doc, "nvml_error", out->nvml_error, sizeof out->nvml_error) < 0 ||
	    read_string(&r, doc, "driver", out->driver, sizeof out->driver) < 0 ||
	    read_string(&r, doc, "nvml_version", out->nvml_version, sizeof out->nvml_version) < 0)
		goto fail;
	const cJSON *gpus = read_array(&r, doc, "gpus", NG_GPU_MAX, true, &out->n_gpus);
	if (!gpus)
		goto fail;
	if (out->nvml == NG_FIELD_FAILED && out->n_gpus) {
		refuse(&r, "nvml is \"failed\" but gpus lists %zu; a failed snapshot holds none", out->n_gpus);
		goto fail;
	}
	/* "listed": how many GPUs NVML counts, when fewer were read (absent: all were). */
	out->n_listed = out->n_gpus;
	const cJSON *listed = member(doc, "listed");
	if (listed) {
		int v;
		push_key(&r, "listed");
		if (read_int(&r, listed, 0, &v) < 0)
			goto fail;
		pop(&r, 0);
		out->n_listed = (size_t)v;
	}
	size_t i = 0;
	for (const cJSON *e = gpus->child; e; e = e->next, i++) {
		push_key(&r, "gpus");
		push_index(&r, i);
		if (read_gpu(&r, e, &out->gpu[i]) < 0)
			goto fail;
		pop(&r, 0);
	}
	return 0;
fail:
	ng_gpu_snapshot_clear(out);
	return -1;
}
