/* The admission queue's landing on Slurm node features (land/slurm_features.h). */
#include "land/slurm_features.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMMENT_PREFIX "ng:"

static bool empty_list(const char *list)
{
	return !list || !*list || strcmp(list, "(null)") == 0;
}

bool ng_slurm_feature_has(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = empty_list(list) ? "" : list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

int ng_slurm_feature_edit(const char *list, const char *add, const char *drop, char *out,
                          size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	for (const char *p = empty_list(list) ? "" : list; *p;) {
		size_t n = strcspn(p, ",");
		bool dropped = drop && n == strlen(drop) && strncmp(p, drop, n) == 0;
		if (n && !dropped) {
			if (used + (used ? 1 : 0) + n + 1 > len)
				return -1;
			if (used)
				out[used++] = ',';
			memcpy(out + used, p, n);
			used += n;
			out[used] = '\0';
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (add && !ng_slurm_feature_has(out, add)) {
		size_t n = strlen(add);
		if (used + (used ? 1 : 0) + n + 1 > len)
			return -1;
		if (used)
			out[used++] = ',';
		memcpy(out + used, add, n + 1);
	}
	return 0;
}

/* The value of " KEY=" (or KEY= at the start) up to the next blank. */
static bool value_of(const char *text, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);
	for (const char *p = text; (p = strstr(p, key)) != NULL; p += k) {
		if (p != text && p[-1] != ' ' && p[-1] != '\n')
			continue;
		const char *v = p + k;
		size_t n = strcspn(v, " \n");
		if (n >= len)
			n = len - 1;
		memcpy(out, v, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

int ng_slurm_parse_features(const char *text, ng_slurm_features *out)
{
	memset(out, 0, sizeof *out);
	if (!text || !value_of(text, "AvailableFeatures=", out->available, sizeof out->available))
		return -1;
	if (!value_of(text, "ActiveFeatures=", out->active, sizeof out->active))
		snprintf(out->active, sizeof out->active, "%s", out->available);
	if (strcmp(out->available, "(null)") == 0)
		out->available[0] = '\0';
	if (strcmp(out->active, "(null)") == 0)
		out->active[0] = '\0';
	/* Only the comment's start matters: it may hold blanks, and nodegate
	 * writes over it only when it is empty or its own. */
	char head[16];
	out->comment_ours = !value_of(text, "Comment=", head, sizeof head) || !head[0] ||
	                    strcmp(head, "(null)") == 0 ||
	                    strncmp(head, COMMENT_PREFIX, sizeof COMMENT_PREFIX - 1) == 0;
	return 0;
}

static int read_features(const ng_slurm_opts *o, ng_slurm_queue_result *out,
                         ng_slurm_features *f, ng_err *err)
{
	ng_slurm_result r;
	char *text = NULL, why[400] = "";
	const char *node = out->r.node[0] ? out->r.node : NULL;
	ng_slurm_opts oo = *o;
	if (node)
		oo.node = node;
	const char *args[] = {"show", "node", NULL, "-o"};
	char name[NG_SLURM_NODE_MAX + 1];
	if (ng_slurm_node_name(&oo, name, err) < 0)
		return -1;
	args[2] = name;
	int rc = ng_slurm_scontrol(&oo, args, 4, &r, &text, why, sizeof why, err);
	snprintf(out->r.node, sizeof out->r.node, "%s", r.node);
	out->r.calls += r.calls;
	if (rc == 0 && ng_slurm_parse_features(text, f) < 0) {
		snprintf(why, sizeof why, "scontrol show node %s: no AvailableFeatures= in its answer",
		         name);
		rc = 1;
	}
	free(text);
	if (rc > 0)
		return ng_fail(err, "cannot read node %s: %s", name, why);
	return rc;
}

/* The comment sent: "ng:OUTCOME: WHY", printable ASCII, at most
 * NG_SLURM_COMMENT_MAX bytes. */
static void comment_of(const char *outcome, const char *why, char out[NG_SLURM_COMMENT_MAX + 1])
{
	char raw[NG_SLURM_COMMENT_MAX * 2];
	snprintf(raw, sizeof raw, COMMENT_PREFIX "%s: %s", outcome, why && *why ? why : "not admitted");
	size_t n = 0;
	bool blank = false;
	for (const unsigned char *p = (const unsigned char *)raw; *p && n < NG_SLURM_COMMENT_MAX; p++) {
		bool sp = *p <= ' ' || *p == 0x7f;
		if (sp) {
			blank = n > 0;
			continue;
		}
		if (blank && n < NG_SLURM_COMMENT_MAX - 1)
			out[n++] = ' ';
		blank = false;
		out[n++] = *p < 0x7f ? (char)*p : '?';
	}
	out[n] = '\0';
}

int ng_slurm_land_queue(const ng_slurm_opts *o, bool admitted, const char *outcome,
                        const char *why, ng_slurm_queue_result *out, ng_err *err)
{
	static const ng_slurm_opts none;
	memset(out, 0, sizeof *out);
	if (!o)
		o = &none;
	if (read_features(o, out, &out->before, err) < 0) {
		snprintf(out->r.message, sizeof out->r.message, "%s", err->msg);
		return -1;
	}
	const char *add = admitted ? NG_SLURM_ADMITTED_FEATURE : NG_SLURM_UNSCREENED_FEATURE;
	const char *drop = admitted ? NG_SLURM_UNSCREENED_FEATURE : NG_SLURM_ADMITTED_FEATURE;
	ng_slurm_features want;
	if (ng_slurm_feature_edit(out->before.available, add, drop, want.available,
	                          sizeof want.available) < 0 ||
	    ng_slurm_feature_edit(out->before.active, add, drop, want.active, sizeof want.active) < 0) {
		snprintf(out->r.message, sizeof out->r.message, "node %s: features too long", out->r.node);
		return ng_fail(err, "%s", out->r.message);
	}
	char a1[NG_SLURM_FEATURES_MAX + 32], a2[NG_SLURM_FEATURES_MAX + 32];
	char a0[NG_SLURM_NODE_MAX + 16], a3[NG_SLURM_COMMENT_MAX + 16];
	snprintf(a0, sizeof a0, "NodeName=%s", out->r.node);
	snprintf(a1, sizeof a1, "AvailableFeatures=%s", want.available);
	snprintf(a2, sizeof a2, "ActiveFeatures=%s", want.active);
	const char *args[6] = {"update", a0, a1, a2, NULL, NULL};
	size_t n = 4;
	if (!out->before.comment_ours) {
		out->comment_left_alone = true;
	} else {
		if (!admitted)
			comment_of(outcome, why, out->comment);
		snprintf(a3, sizeof a3, "Comment=%s", out->comment);
		args[n++] = a3;
	}
	ng_slurm_opts oo = *o;
	oo.node = out->r.node;
	ng_slurm_result r;
	char *text = NULL, whybuf[400] = "";
	int rc = ng_slurm_scontrol(&oo, args, n, &r, &text, whybuf, sizeof whybuf, err);
	free(text);
	out->r.calls += r.calls;
	out->r.acted = rc == 0;
	if (rc != 0) {
		snprintf(out->r.message, sizeof out->r.message, "features of %s not set: %.400s",
		         out->r.node, rc > 0 ? whybuf : err->msg);
		return rc > 0 ? ng_fail(err, "%s", out->r.message) : -1;
	}
	if (read_features(&oo, out, &out->after, err) < 0) {
		snprintf(out->r.message, sizeof out->r.message, "%s", err->msg);
		return -1;
	}
	out->admitted_after = ng_slurm_feature_has(out->after.active, NG_SLURM_ADMITTED_FEATURE);
	out->r.changed = strcmp(out->before.active, out->after.active) != 0 ||
	                 strcmp(out->before.available, out->after.available) != 0;
	if (out->admitted_after != admitted) {
		snprintf(out->r.message, sizeof out->r.message,
		         "node %s: scontrol accepted the features but the node reads ActiveFeatures=%.300s",
		         out->r.node, out->after.active[0] ? out->after.active : "(none)");
		return ng_fail(err, "%s", out->r.message);
	}
	snprintf(out->r.message, sizeof out->r.message, "node %s %s " NG_SLURM_ADMITTED_FEATURE
	         " (ActiveFeatures=%.300s)%s",
	         out->r.node, admitted ? (out->r.changed ? "gained" : "keeps") : "is without",
	         out->after.active[0] ? out->after.active : "(none)",
	         out->comment_left_alone ? "; an operator's comment left alone" : "");
	return 0;
}

char *ng_slurm_queue_json(const ng_slurm_queue_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "node", r->r.node);
	cJSON_AddStringToObject(o, "action", "features");
	cJSON_AddStringToObject(o, "available_before", r->before.available);
	cJSON_AddStringToObject(o, "active_before", r->before.active);
	cJSON_AddStringToObject(o, "available_after", r->after.available);
	cJSON_AddStringToObject(o, "active_after", r->after.active);
	cJSON_AddStringToObject(o, "comment", r->comment);
	cJSON_AddBoolToObject(o, "comment_left_alone", r->comment_left_alone);
	cJSON_AddBoolToObject(o, "admitted", r->admitted_after);
	cJSON_AddBoolToObject(o, "changed", r->r.changed);
	cJSON_AddNumberToObject(o, "calls", r->r.calls);
	cJSON_AddStringToObject(o, "message", r->r.message);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}
