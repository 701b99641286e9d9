/* What the end-to-end runners share (flow/testing/test_env.h). */
#include "flow/testing/test_env.h"

#include "collect/spawn.h"
#include "core/json.h"

#include <errno.h>
#include <stdio.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

void ng_env_unset_prefix(const char *prefix)
{
	size_t pl = strlen(prefix);
	for (;;) {
		char name[256] = "";
		for (char **e = environ; e && *e; e++)
			if (strncmp(*e, prefix, pl) == 0) {
				const char *eq = strchr(*e, '=');
				size_t l = eq ? (size_t)(eq - *e) : strlen(*e);
				if (l < sizeof name) {
					memcpy(name, *e, l);
					name[l] = '\0';
					break;
				}
			}
		if (!name[0])
			return;
		unsetenv(name); /* environ changes under it: scan again from the start */
	}
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int ng_remove_tree(const char *dir)
{
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int ng_test_run_self(const char *self, const char *policy, int64_t now, const char *const *args,
                     cJSON **doc, char *err_line, size_t cap, char *out_text, size_t out_cap)
{
	const char *argv[32];
	size_t a = 0;
	argv[a++] = self;
	argv[a++] = "--policy";
	argv[a++] = policy;
	for (size_t i = 0; args[i] && a < 31; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	char tbuf[32];
	snprintf(tbuf, sizeof tbuf, "%lld", (long long)now);
	setenv("NODEGATE_NOW", tbuf, 1);
	ng_spawn_result r;
	char ebuf[256];
	if (doc)
		*doc = NULL;
	if (err_line && cap)
		err_line[0] = '\0';
	if (ng_spawn_capture((char *const *)argv, 60, 1 << 22, &r, ebuf, sizeof ebuf) < 0) {
		if (err_line && cap)
			snprintf(err_line, cap, "could not run nodegate: %s", ebuf);
		return -1;
	}
	if (!r.spawned || r.timed_out || r.signal) {
		if (err_line && cap)
			ng_spawn_describe(&r, err_line, cap);
		ng_spawn_result_free(&r);
		return -1;
	}
	ng_err perr;
	if (doc && r.out && r.out_len && r.out[0] == '{')
		*doc = ng_json_parse(r.out, r.out_len, &perr);
	if (out_text && out_cap)
		snprintf(out_text, out_cap, "%.*s", (int)r.out_len, r.out ? r.out : "");
	if (err_line && cap && r.err && r.err_len) {
		size_t end = r.err_len;
		while (end > 0 && r.err[end - 1] == '\n')
			end--;
		size_t start = end;
		while (start > 0 && r.err[start - 1] != '\n')
			start--;
		snprintf(err_line, cap, "%.*s", (int)(end - start > 300 ? 300 : end - start),
		         r.err + start);
	}
	int st = r.exit_status;
	ng_spawn_result_free(&r);
	return st;
}

cJSON *ng_test_record(const char *node, const char *class_key, double median, const char *domain,
                      const char *metric, const char *unit)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "schema", "nodegate/record/1");
	cJSON_AddStringToObject(r, "node", node);
	cJSON_AddStringToObject(r, "class", class_key);
	cJSON_AddStringToObject(r, "software", "sw-selftest");
	cJSON_AddStringToObject(r, "domain", domain);
	cJSON_AddStringToObject(r, "metric", metric);
	cJSON_AddStringToObject(r, "unit", unit);
	cJSON *s = cJSON_AddArrayToObject(r, "samples");
	for (int k = 0; k < 9; k++)
		cJSON_AddItemToArray(s, cJSON_CreateNumber(median * (1 + 0.001 * (k - 4))));
	cJSON_AddNumberToObject(r, "wrong", 0);
	cJSON *d = cJSON_AddObjectToObject(r, "diag");
	cJSON_AddStringToObject(d, "pcie", "pass");
	cJSON_AddStringToObject(d, "memory", "pass");
	cJSON_AddStringToObject(d, "nccl_tests", "pass");
	return r;
}
