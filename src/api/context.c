/* The public API's context, errors and version (include/nodegate/nodegate.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/json.h"
#include "core/json_file.h"
#include "core/policy.h"
#include "core/strbuf.h"

_Static_assert((int)NODEGATE_ERR_USAGE == (int)NG_ERR_USAGE &&
                   (int)NODEGATE_ERR_INPUT == (int)NG_ERR_INPUT &&
                   (int)NODEGATE_ERR_STORE == (int)NG_ERR_STORE &&
                   (int)NODEGATE_ERR_LANDING == (int)NG_ERR_LANDING &&
                   (int)NODEGATE_ERR_INTERNAL == (int)NG_ERR_INTERNAL,
               "the public error classes are core/error.h's");

const char *nodegate_version(void)
{
	return NODEGATE_VERSION_STRING;
}

const char *nodegate_error_class_name(nodegate_error_class code)
{
	return code == NODEGATE_ERR_NONE ? "none" : ng_err_class_name((ng_err_class)code);
}

void nodegate_free(void *p)
{
	free(p);
}

int ng_api_fail(nodegate_error *out, const ng_err *err)
{
	if (out) {
		out->code = (nodegate_error_class)err->code;
		snprintf(out->message, sizeof out->message, "%s", err->msg);
	}
	return -1;
}

int ng_api_fail_as(nodegate_error *out, nodegate_error_class code, const char *msg)
{
	ng_err e = {.code = (ng_err_class)code};
	ng_fail(&e, "%s", msg);
	return ng_api_fail(out, &e);
}

/* The flow's notes, formatted for the caller's note function. */
static void note_to_caller(void *arg, const char *verb, const char *fmt, va_list ap)
{
	const struct nodegate_ctx *c = arg;
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	c->note(c->note_arg, verb, msg);
}

nodegate_ctx *nodegate_ctx_new(void)
{
	struct nodegate_ctx *c = calloc(1, sizeof *c);
	if (c)
		ng_policy_default(&c->ctx.policy);
	return c;
}

void nodegate_ctx_free(nodegate_ctx *c)
{
	if (!c)
		return;
	ng_store_close(c->ctx.store);
	free(c->actor);
	free(c->on_verdict);
	free(c->store_spec);
	free(c);
}

static int apply_policy(nodegate_ctx *c, const char *text, size_t len, const char *source,
                        nodegate_error *out)
{
	ng_err err = {0}, lerr = {0};
	cJSON *doc = ng_json_parse(text, len, &lerr);
	if (!doc) {
		ng_fail_as(&err, NG_ERR_INPUT, "%s: %s", source, lerr.msg);
		return ng_api_fail(out, &err);
	}
	/* Applied to a copy: a policy refused leaves the context's as it was. */
	ng_policy p = c->ctx.policy;
	int rc = ng_policy_apply_json(&p, doc, source, &lerr);
	cJSON_Delete(doc);
	if (rc < 0) {
		ng_fail_as(&err, NG_ERR_INPUT, "%s: %s", source, lerr.msg);
		return ng_api_fail(out, &err);
	}
	c->ctx.policy = p;
	return 0;
}

int nodegate_ctx_policy_json(nodegate_ctx *c, const char *json, nodegate_error *err)
{
	if (!c || !json)
		return ng_api_fail_as(err, NODEGATE_ERR_USAGE, "no context or no policy document");
	return apply_policy(c, json, strlen(json), "policy", err);
}

int nodegate_ctx_policy_file(nodegate_ctx *c, const char *path, nodegate_error *out)
{
	if (!c || !path)
		return ng_api_fail_as(out, NODEGATE_ERR_USAGE, "no context or no policy file");
	ng_err err = {0};
	size_t len;
	char *text = ng_read_file(path, &len, &err);
	if (!text) {
		err.code = NG_ERR_INPUT;
		return ng_api_fail(out, &err);
	}
	int rc = apply_policy(c, text, len, path, out);
	free(text);
	return rc;
}

/* *out = what ng_store_open(spec) opens: spec, else $NODEGATE_STORE, else
 * the default path; a copy the context keeps. */
static int resolve_spec(const char *spec, char **out, ng_err *err)
{
	const char *env = getenv("NODEGATE_STORE");
	ng_strbuf path = {0};
	if (!(spec && *spec) && !(env && *env) && ng_store_default_path(&path, err) < 0) {
		ng_strbuf_free(&path);
		return -1;
	}
	const char *name = spec && *spec ? spec : env && *env ? env : path.s;
	*out = name && !path.oom ? strdup(name) : NULL;
	ng_strbuf_free(&path);
	if (!*out)
		ng_fail_as(err, NG_ERR_INTERNAL, "out of memory");
	return *out ? 0 : -1;
}

int nodegate_ctx_open_store(nodegate_ctx *c, const char *spec, nodegate_error *out)
{
	if (!c)
		return ng_api_fail_as(out, NODEGATE_ERR_USAGE, "no context");
	ng_store_close(c->ctx.store);
	c->ctx.store = NULL;
	free(c->store_spec);
	c->store_spec = NULL;
	c->ctx.store_spec = NULL;
	ng_err err = {0};
	if (ng_ctx_open_store(&c->ctx, spec && *spec ? spec : NULL, &err) < 0)
		return ng_api_fail(out, &err);
	/* The GPU check opens the store again by name, in a child under its
	 * deadline (flow/gpu_check.h): keep the name it was opened by. */
	if (resolve_spec(spec, &c->store_spec, &err) < 0) {
		ng_store_close(c->ctx.store);
		c->ctx.store = NULL;
		return ng_api_fail(out, &err);
	}
	c->ctx.store_spec = c->store_spec;
	return 0;
}

/* *slot = a copy of s (NULL for none); -1 when out of memory. */
static int keep_copy(char **slot, const char *s)
{
	char *copy = s ? strdup(s) : NULL;
	if (s && !copy)
		return -1;
	free(*slot);
	*slot = copy;
	return 0;
}

int nodegate_ctx_set_actor(nodegate_ctx *c, const char *actor)
{
	if (keep_copy(&c->actor, actor) < 0)
		return -1;
	c->ctx.actor = c->actor;
	return 0;
}

void nodegate_ctx_set_no_land(nodegate_ctx *c, int no_land)
{
	c->ctx.no_land = no_land != 0;
}

int nodegate_ctx_set_on_verdict(nodegate_ctx *c, const char *command)
{
	if (keep_copy(&c->on_verdict, command) < 0)
		return -1;
	c->ctx.on_verdict = c->on_verdict;
	return 0;
}

void nodegate_ctx_set_clock(nodegate_ctx *c, int64_t (*now)(void *arg), void *arg)
{
	c->ctx.clock = now;
	c->ctx.clock_arg = arg;
}

void nodegate_ctx_set_note(nodegate_ctx *c,
                           void (*note)(void *arg, const char *verb, const char *message),
                           void *arg)
{
	c->note = note;
	c->note_arg = arg;
	c->ctx.note = note ? note_to_caller : NULL;
	c->ctx.note_arg = c;
}
