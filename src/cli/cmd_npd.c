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
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/config_error.h"
#include "cli/gpu_check.h"
#include "land/slurm.h"

enum { NPD_OK = 0, NPD_PROBLEM = 1, NPD_UNKNOWN = 2 };
#define NPD_MESSAGE_MAX 79 /* NPD cuts the message; keep it whole */
#define NPD_REPORT_MAX (16u << 20)

static int exec_npd(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_npd_entry = {
	.name = "npd",
	.usage = "[--deadline S] [--kmsg FILE | --no-kmsg] [--since S] [--library PATH]",
	.summary = "The GPU health check as a node-problem-detector custom plugin.",
	.help =
	"Runs the whole-node GPU check of `nodegate health` (the same rules, deadline\n"
	"and Xids) and answers as a node-problem-detector custom plugin: exit 0 OK\n"
	"(ok or transient), 1 a problem (degraded or fatal), 2 unknown (NVML missing,\n"
	"failing or hung, no GPUs listed, or no result); standard output is one line\n"
	"under 80 characters. It keeps no record, drains nothing and runs no\n"
	"--on-verdict program: NPD reports the condition, Kubernetes acts on it.\n"
	"A configuration error (a broken policy, an unknown option) is 2, unknown,\n"
	"never 1, with one \"CONFIGURATION ERROR\" line on standard error.\n"
	"\n"
	"Options (as for health):\n"
	"      --deadline S        the whole check ends within S seconds (default 10)\n"
	"      --kmsg FILE         read kernel Xids from FILE instead of /dev/kmsg\n"
	"      --no-kmsg           do not read kernel Xids\n"
	"      --since S           only Xids from the last S seconds\n"
	"      --library PATH      the NVML library (also NODEGATE_NVML_LIBRARY)\n"
	"  -h, --help              this text\n",
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

static int exec_npd(struct ng_cli *cli, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			ng_cmd_print_help(&ng_cmd_npd_entry, stdout);
			return NG_EXIT_OK;
		}
		/* health's own options that make no sense for a plugin */
		if (strncmp(argv[i], "--store", 7) == 0 || strcmp(argv[i], "--from-nvidia-smi") == 0 ||
		    strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0) {
			ng_config_guard g;
			ng_config_guard_for_check(cli, "npd", true, NULL, false, &g);
			return ng_config_error(&g, NG_CONFIG_OPTION, "%s is not an npd option", argv[i]);
		}
	}
	int rc = 0;
	char *text = run_health(cli, argc, argv, &rc);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;
	free(text);
	/* A configuration error was told on standard error (and kept) by the
	 * check; the plugin's answer is unknown, never a problem. */
	if (!doc)
		return answer(NPD_UNKNOWN, "GPU health unknown: %s",
		              rc == NPD_UNKNOWN ? "nodegate configuration error"
		                                : "the check gave no result");
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
	if (strcmp(s, "ok") == 0 || strcmp(s, "transient") == 0)
		status = answer(NPD_OK, "GPUs healthy: %d checked%s", n,
		                strcmp(s, "transient") == 0 ? " (transient events only)" : "");
	else if (strcmp(s, "degraded") == 0 || strcmp(s, "fatal") == 0)
		status = answer(NPD_PROBLEM, "%s", w[0] ? w : s);
	else
		status = answer(NPD_UNKNOWN, "GPU health unknown: %s", w[0] ? w : s);
	cJSON_Delete(doc);
	return status;
}
