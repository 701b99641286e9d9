/* A broken configuration never drains a node (flow/config_guard.h): which
 * invocations are guarded, and the error kept in the store. */
#include "flow/config_guard.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/identity.h"
#include "core/clock.h"
#include "store/store.h"

/* The store write may take this long; the hook has its own deadline to keep
 * and a configuration error must not make it miss that. */
#define STORE_BUDGET_MS 2000

static const char *const check_verbs[] = {"epilog", "prolog", "health", "npd"};

/* Slurm's Epilog or Prolog: SLURM_SCRIPT_CONTEXT says so (Slurm 21.08 and
 * later); older ones set SLURM_JOB_ID and SLURMD_NODENAME for it. */
static const char *slurm_hook(void)
{
	const char *ctx = getenv("SLURM_SCRIPT_CONTEXT");
	if (ctx && strcmp(ctx, "epilog_slurmd") == 0)
		return "epilog";
	if (ctx && strcmp(ctx, "prolog_slurmd") == 0)
		return "prolog";
	const char *job = getenv("SLURM_JOB_ID"), *node = getenv("SLURMD_NODENAME");
	if (job && *job && node && *node)
		return "slurm-hook";
	return NULL;
}

/* The store the check would have used: its own --store (or --no-store), the
 * global --store, else $NODEGATE_STORE. Never the default path: a check that
 * names no store keeps nothing, and neither does its error. */
static const char *guard_store(int argc, char **argv)
{
	const char *spec = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-store") == 0)
			return NULL;
		if (strcmp(argv[i], "--store") == 0 && i + 1 < argc)
			spec = argv[++i];
		else if (strncmp(argv[i], "--store=", 8) == 0)
			spec = argv[i] + 8;
	}
	if (spec && *spec)
		return spec;
	const char *env = getenv("NODEGATE_STORE");
	return env && *env ? env : NULL;
}

bool ng_config_guard_of(int argc, char **argv, const char *const *verbs, int n_verbs, int verb_at,
                        ng_config_guard *g)
{
	memset(g, 0, sizeof *g);
	const char *verb = NULL;
	int from = verb_at > 0 ? verb_at : 1, to = verb_at > 0 && verb_at < argc ? verb_at + 1 : argc;
	for (int i = from; i < to && !verb; i++)
		for (int k = 0; k < n_verbs; k++)
			if (strcmp(argv[i], verbs[k]) == 0) {
				verb = verbs[k];
				break;
			}
	for (size_t k = 0; verb && k < sizeof check_verbs / sizeof check_verbs[0]; k++)
		if (strcmp(verb, check_verbs[k]) == 0)
			g->verb = check_verbs[k];
	if (!g->verb) {
		/* Under Slurm's hook: a known verb that is not a check runs as
		 * asked; an unknown one, or any one under SLURM_SCRIPT_CONTEXT,
		 * is guarded (it is what the Epilog or Prolog line runs). */
		const char *hook = slurm_hook();
		if (!hook || (verb && strcmp(hook, "slurm-hook") == 0))
			return false;
		g->verb = hook;
	}
	g->npd = strcmp(g->verb, "npd") == 0;
	g->store = guard_store(argc, argv);
	return true;
}

void ng_config_guard_for_check(const char *global_store, const char *verb, bool npd,
                               const char *store, bool no_store, ng_config_guard *g)
{
	const char *env = getenv("NODEGATE_STORE");
	*g = (ng_config_guard){.verb = verb, .npd = npd};
	if (!no_store)
		g->store = store ? store : global_store ? global_store : env && *env ? env : NULL;
}

/* The node as people and the scheduler name it (docs/naming.md): what an
 * operator greps the report and the metrics for across the fleet. */
static void node_name(char out[256])
{
	ng_node_scheduler_name(NULL, out, 256);
	if (!out[0])
		snprintf(out, 256, "localhost");
}

void ng_config_error_keep(const ng_config_guard *g, const char *kind, const char *msg, char *said,
                          size_t cap)
{
	if (!g->store) {
		snprintf(said, cap, "not recorded: no store named");
		return;
	}
	int fds[2];
	if (pipe(fds) < 0) {
		snprintf(said, cap, "not recorded: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(said, cap, "not recorded: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		alarm((STORE_BUDGET_MS + 999) / 1000 + 1); /* a backstop; the parent kills first */
		ng_store_config_error e = {.at = ng_now()};
		node_name(e.node);
		snprintf(e.verb, sizeof e.verb, "%s", g->verb);
		snprintf(e.kind, sizeof e.kind, "%s", kind);
		snprintf(e.message, sizeof e.message, "%.511s", msg);
		ng_err err;
		ng_store *st;
		char out[600];
		if (ng_store_open(g->store, &st, &err) < 0) {
			snprintf(out, sizeof out, "not recorded: store: %.500s", err.msg);
		} else if (ng_store_put_config_error(st, &e, &err) < 0) {
			snprintf(out, sizeof out, "not recorded: store %.200s: %.300s", ng_store_where(st),
			         err.msg);
			ng_store_close(st);
		} else {
			snprintf(out, sizeof out, "recorded in the store %.500s", ng_store_where(st));
			ng_store_close(st);
		}
		ssize_t w = write(fds[1], out, strlen(out));
		(void)w;
		_exit(0);
	}
	close(fds[1]);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t got = 0;
	said[0] = '\0';
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= STORE_BUDGET_MS) {
			snprintf(said, cap, "not recorded: the store did not answer within %d s",
			         STORE_BUDGET_MS / 1000);
			kill(pid, SIGKILL);
			break;
		}
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int r = poll(&p, 1, (int)(STORE_BUDGET_MS - spent));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue; /* the clock check above ends it */
		ssize_t k = read(fds[0], said + got, cap - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		said[got] = '\0';
		if (got == cap - 1)
			break;
	}
	close(fds[0]);
	waitpid(pid, NULL, 0); /* killed or finished: reaping is immediate */
	if (!said[0])
		snprintf(said, cap, "not recorded: the store write ended without an answer");
}
