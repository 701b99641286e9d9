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
#include "flow/npd.h"

#define NPD_MESSAGE_MAX 79 /* NPD cuts the message; keep it whole */
#define NPD_REPORT_MAX (16u << 20)

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
	{"state", NPD_O_STATE, "FILE", "keep the last problem in FILE (default " NG_NPD_STATE_DEFAULT ";\n"
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

static int exec_npd(struct ng_cli *cli, int argc, char **argv)
{
	const char *state = NULL, *library = NULL;
	bool no_state = false;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	if (!rest)
		return answer(NG_NPD_UNKNOWN, "nodegate: GPU health unknown: out of memory");
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
			ng_config_guard_for_check(cli->store_spec, "npd", true, NULL, false, &g);
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
	const char *path = ng_npd_state_path(state, no_state, library);
	char kept[256];
	ng_npd_state_read(path, kept, sizeof kept);
	int rc = 0;
	char *text = run_health(cli, n_rest, rest, &rc);
	free(rest);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;
	free(text);
	char msg[512];
	int status = ng_npd_decide(doc, rc, path, kept, msg, sizeof msg);
	cJSON_Delete(doc);
	return answer(status, "%s", msg);
}
