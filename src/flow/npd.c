/* node-problem-detector's answer and the problem kept between invocations
 * (flow/npd.h). */
#include "flow/npd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "land/slurm.h"

const char *ng_npd_state_path(const char *given, bool none, const char *library)
{
	if (none)
		return NULL;
	if (given)
		return given;
	const char *env = getenv("NODEGATE_NVML_LIBRARY");
	return library || (env && *env) ? NULL : NG_NPD_STATE_DEFAULT;
}

void ng_npd_state_read(const char *path, char *out, size_t cap)
{
	out[0] = '\0';
	FILE *f = path ? fopen(path, "re") : NULL;
	if (!f)
		return;
	if (!fgets(out, (int)cap, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* Keeps or forgets the problem. Failing to is not the node's fault: the
 * answer stands, only its memory is lost. */
static void state_write(const char *path, const char *line)
{
	if (!path)
		return;
	if (!line) {
		unlink(path);
		return;
	}
	char dir[512];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0700);
	}
	char text[256];
	int n = snprintf(text, sizeof text, "%.200s\n", line);
	ng_err err;
	(void)ng_write_file_atomic(path, text, (size_t)n, &err);
}

int ng_npd_decide(const cJSON *doc, int check_rc, const char *path, const char *kept, char *msg,
                  size_t cap)
{
	const cJSON *sev = cJSON_GetObjectItemCaseSensitive(doc, "severity");
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(doc, "reason");
	const cJSON *checked = cJSON_GetObjectItemCaseSensitive(doc, "checked");
	const char *s = cJSON_IsString(sev) ? sev->valuestring : "unknown";
	const char *w = cJSON_IsString(why) && why->valuestring[0] ? why->valuestring : "";
	int n = cJSON_IsNumber(checked) ? checked->valueint : 0;
	/* The plugin's message is the reason without nodegate's marks. */
	char plain[NG_SLURM_REASON_MAX + 1];
	if (strncmp(w, NG_SLURM_REASON_PREFIX, sizeof NG_SLURM_REASON_PREFIX - 1) == 0) {
		snprintf(plain, sizeof plain, "%s", w + sizeof NG_SLURM_REASON_PREFIX - 1);
		size_t len = strlen(plain), mark = sizeof NG_SLURM_REASON_MARK - 1;
		if (len >= mark && strcmp(plain + len - mark, NG_SLURM_REASON_MARK) == 0)
			plain[len - mark] = '\0';
		w = plain;
	}
	if (doc && (strcmp(s, "ok") == 0 || strcmp(s, "transient") == 0)) {
		state_write(path, NULL);
		snprintf(msg, cap, "GPUs healthy: %d checked%s", n,
		         strcmp(s, "transient") == 0 ? " (transient events only)" : "");
		return NG_NPD_OK;
	}
	if (doc && (strcmp(s, "degraded") == 0 || strcmp(s, "fatal") == 0)) {
		state_write(path, w[0] ? w : s);
		snprintf(msg, cap, "%s", w[0] ? w : s);
		return NG_NPD_PROBLEM;
	}
	if (kept[0]) {
		/* A monitoring failure says nothing about a problem already
		 * found: the condition stays True until a measured check clears it. */
		snprintf(msg, cap, "last known: %s", kept);
		return NG_NPD_PROBLEM;
	}
	if (!doc) {
		/* A configuration error was told on standard error (and kept) by
		 * the check; the plugin's answer is unknown, never a problem. */
		snprintf(msg, cap, "GPU health unknown: %s",
		         check_rc == NG_NPD_UNKNOWN ? "nodegate configuration error"
		                                    : "the check gave no result");
		return NG_NPD_UNKNOWN;
	}
	snprintf(msg, cap, "GPU health unknown: %s", w[0] ? w : s);
	return NG_NPD_UNKNOWN;
}
