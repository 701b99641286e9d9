/* nodegate npd: the node health check as a node-problem-detector custom
 * plugin. It runs `nodegate health` in this process (cli/gpu_check.h) with
 * its report captured, keeps nothing and lands nothing, and answers in the
 * plugin protocol: exit 0 OK, 1 a problem, 2 unknown; one short line on
 * standard output (docs/kubernetes.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/config_error.h"
#include "cli/gpu_check.h"
#include "land/slurm.h"
#include "core/atomic_file.h"

enum { NPD_OK = 0, NPD_PROBLEM = 1, NPD_UNKNOWN = 2 };
#define NPD_MESSAGE_MAX 79 /* NPD cuts the message; keep it whole */
#define NPD_REPORT_MAX (16u << 20)
/* Where the last problem is kept between invocations: /run is emptied at a
 * reboot, and a reboot is when a problem may really have gone. */
#define NPD_STATE_DEFAULT "/run/nodegate/npd-problem"

static int exec_npd(struct ng_cli *cli, int argc, char **argv);

enum { NPD_O_STATE = NG_CHECK_O_ROOT + 1, NPD_O_NO_STATE };

/* health's options that make sense for a plugin, and its own. */
static const struct ng_opt npd_opts[] = {
	{"deadline", NG_CHECK_O_DEADLINE, "S", "the whole check ends within S seconds (default 10)"},
	{"kmsg", NG_CHECK_O_KMSG, "FILE", "read kernel Xids from FILE instead of /dev/kmsg"},
	{"no-kmsg", NG_CHECK_O_NO_KMSG, NULL, "do not read kernel Xids"},
	{"since", NG_CHECK_O_SINCE, "S", "only Xids from the last S seconds"},
	{"library", NG_CHECK_O_LIBRARY, "PATH", "the NVML library (also NODEGATE_NVML_LIBRARY)"},
	{"root", NG_CHECK_O_ROOT, "DIR", "the kernel's view of the GPUs under DIR (also NODEGATE_ROOT)"},
	{"state", NPD_O_STATE, "FILE", "keep the last problem in FILE (default " NPD_STATE_DEFAULT ";\n"
	                               "with a stand-in NVML library, none unless given)"},
	{"no-state", NPD_O_NO_STATE, NULL, "keep nothing between invocations"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_npd_entry = {
	.name = "npd",
	.usage = "[--deadline S] [--kmsg FILE | --no-kmsg] [--since S] [--library PATH] [--state FILE | --no-state]",
	.summary = "The GPU health check as a node-problem-detector custom plugin.",
	.help =
	"Runs the whole-node GPU check of `nodegate health` (the same rules, deadline\n"
	"and Xids) and answers as a node-problem-detector custom plugin: exit 0 OK\n"
	"(ok or transient), 1 a problem (degraded or fatal: a missing GPU, a fatal\n"
	"Xid even with NVML down), 2 unknown (NVML missing, failing or hung, no GPUs\n"
	"listed, or no result) only when no problem is known: a problem found earlier\n"
	"stays a problem (exit 1, \"last known: ...\") through a monitoring failure\n"
	"until a check that measured says otherwise. Standard output is one line\n"
	"under 80 characters. It keeps no record, drains nothing and runs no\n"
	"--on-verdict program: NPD reports the condition, Kubernetes acts on it.\n"
	"A configuration error (a broken policy, an unknown option) is 2, unknown,\n"
	"never 1, with one \"CONFIGURATION ERROR\" line on standard error.\n",
	.opts = npd_opts,
	.exec = exec_npd,
};

static int answer(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int answer(int status, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	if (strlen(line) > NPD_MESSAGE_MAX) {
		line[NPD_MESSAGE_MAX - 3] = '\0';
		strcat(line, "...");
	}
	printf("%s\n", line);
	fflush(stdout);
	return status;
}

/* Runs the health check with its standard output in an anonymous file;
 * returns that output (NUL-terminated) or NULL. */
static char *run_health(struct ng_cli *cli, int argc, char **argv, int *rc)
{
	char **args = calloc((size_t)argc + 3, sizeof *args);
	int fd = memfd_create("nodegate-npd", MFD_CLOEXEC);
	int saved = dup(STDOUT_FILENO);
	if (!args || fd < 0 || saved < 0) {
		free(args);
		if (fd >= 0)
			close(fd);
		if (saved >= 0)
			close(saved);
		return NULL;
	}
	int n = 0;
	for (int i = 0; i < argc; i++)
		args[n++] = argv[i];
	args[n++] = "--json";
	args[n++] = "--no-store";
	struct ng_cli quiet = *cli;
	quiet.no_land = true;
	quiet.on_verdict = NULL;
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	optind = 0;
	*rc = ng_gpu_check_main(&quiet, &ng_cmd_npd_entry, NG_CHECK_HEALTH, n, args);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	free(args);
	off_t len = lseek(fd, 0, SEEK_END);
	char *text = NULL;
	if (len >= 0 && (size_t)len < NPD_REPORT_MAX && lseek(fd, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)len + 1))) {
		size_t got = 0;
		while (got < (size_t)len) {
			ssize_t k = read(fd, text + got, (size_t)len - got);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			got += (size_t)k;
		}
		text[got] = '\0';
	}
	close(fd);
	return text;
}

/* The problem kept from an earlier invocation, or "" when none. */
static void state_read(const char *path, char *out, size_t cap)
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

/* The state file: --state, else the default on a node reading the real
 * NVML; a stand-in library (tests, scenarios) keeps none unless told. */
static const char *state_path(const char *given, bool none, const char *library)
{
	if (none)
		return NULL;
	if (given)
		return given;
	const char *env = getenv("NODEGATE_NVML_LIBRARY");
	return library || (env && *env) ? NULL : NPD_STATE_DEFAULT;
}

static int exec_npd(struct ng_cli *cli, int argc, char **argv)
{
	const char *state = NULL, *library = NULL;
	bool no_state = false;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	if (!rest)
		return answer(NPD_UNKNOWN, "nodegate: GPU health unknown: out of memory");
	int n_rest = 0;
	rest[n_rest++] = argv[0];
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_npd_entry, argc, argv);
	op.keep_errors = true;
	int c;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT) {
			free(rest);
			return op.status;
		}
		if (c == NG_OPT_ERROR) {
			free(rest);
			ng_config_guard g;
			ng_config_guard_for_check(cli, "npd", true, NULL, false, &g);
			return ng_config_error(&g, NG_CONFIG_OPTION, "%s", op.why);
		}
		if (c == NPD_O_STATE) {
			state = op.arg;
		} else if (c == NPD_O_NO_STATE) {
			no_state = true;
		} else {
			/* the health check's own: handed on to it as given */
			if (c == NG_CHECK_O_LIBRARY)
				library = op.arg;
			rest[n_rest++] = argv[op.next - (op.arg && argv[op.next - 1] == op.arg ? 2 : 1)];
			if (op.arg && argv[op.next - 1] == op.arg)
				rest[n_rest++] = argv[op.next - 1];
		}
	}
	for (int i = op.next; i < argc; i++)
		rest[n_rest++] = argv[i];
	const char *path = state_path(state, no_state, library);
	char kept[256];
	state_read(path, kept, sizeof kept);
	int rc = 0;
	char *text = run_health(cli, n_rest, rest, &rc);
	free(rest);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;
	free(text);
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
	int status;
	if (doc && (strcmp(s, "ok") == 0 || strcmp(s, "transient") == 0)) {
		state_write(path, NULL);
		status = answer(NPD_OK, "GPUs healthy: %d checked%s", n,
		                strcmp(s, "transient") == 0 ? " (transient events only)" : "");
	} else if (doc && (strcmp(s, "degraded") == 0 || strcmp(s, "fatal") == 0)) {
		state_write(path, w[0] ? w : s);
		status = answer(NPD_PROBLEM, "%s", w[0] ? w : s);
	} else if (kept[0]) {
		/* A monitoring failure says nothing about a problem already
		 * found: the condition stays True until a measured check clears it. */
		status = answer(NPD_PROBLEM, "last known: %s", kept);
	} else if (!doc) {
		/* A configuration error was told on standard error (and kept) by
		 * the check; the plugin's answer is unknown, never a problem. */
		status = answer(NPD_UNKNOWN, "GPU health unknown: %s",
		                rc == NPD_UNKNOWN ? "nodegate configuration error"
		                                  : "the check gave no result");
	} else {
		status = answer(NPD_UNKNOWN, "GPU health unknown: %s", w[0] ? w : s);
	}
	cJSON_Delete(doc);
	return status;
}
